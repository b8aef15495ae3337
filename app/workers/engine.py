"""The open's child process: a save read, replayed, prepared and checked beside the
window, never inside it (issue 37).

``OpenProcess`` starts one child process for one open. The child runs
``Playthrough.open`` and each registry ``prepare``, and hands the result to the window
through a file of columns (``models/columns/transfer.py``): the window maps it and
reads what a view asks for, a chunk at a time, so no work that grows with the save
holds the window's interpreter. The child then runs the checks and hands over the
findings and what reads them. Cancelling ends the process; freeing the playthrough
unmaps its file.

The process comes from the ``forkserver`` start method where there is one (Linux,
macOS: a fork of a server that imported this module once, ~10 ms) and ``spawn``
elsewhere (Windows). The window's process is never forked, so none of its threads
or Qt state is copied.

Messages, child to window (one ``Connection``, pickled tuples):

- ``("progress", fraction 0..1, what is being done)``
- ``("replayed", file name)``: the ``(Playthrough, Prepared)`` of the replayed save,
  its checks still to run (``checks_pending``), or whole when there are none;
- ``("checked", file name)``: ``(findings, Prepared of the entries that read them,
  the index's memo tables)``;
- ``("failed", message)``: an unexpected error (a bug; the traceback is on stderr);
- ``("done",)``.
"""

from __future__ import annotations

import gc
import multiprocessing
import os
import shutil
import sys
import tempfile
import time
import traceback
from dataclasses import dataclass
from pathlib import Path

from narrative_debugger.models.columns import transfer
from narrative_debugger.models.playthrough import Playthrough
from narrative_debugger.widgets.kit.prepared import Prepared
from narrative_debugger.widgets.registry import preparer_modules, preparers

#: How often the window's side looks at its cancel flag while it waits (s).
POLL_S = 0.05


def _context():
    methods = multiprocessing.get_all_start_methods()
    if "forkserver" in methods:
        context = multiprocessing.get_context("forkserver")
        context.set_forkserver_preload([__name__, *preparer_modules()])
        return context
    return multiprocessing.get_context("spawn")


_CONTEXT = None


def context():
    """The multiprocessing context the open's process starts from (made once)."""
    global _CONTEXT
    if _CONTEXT is None:
        _CONTEXT = _context()
    return _CONTEXT


@dataclass(frozen=True)
class Hold:
    """A point where the child process waits: it sets ``entered``, then waits until
    ``release`` is set (both ``Event``s of ``context()``)."""

    entered: object
    release: object


#: Where the child waits, for a test that must see a load at a given point: stage
#: (``"open"``: before the save is read; ``"checks"``: before its checks) -> a
#: callable(save path) giving the ``Hold`` for that open, or None. Empty in the product.
HOLDS: dict = {}


def bug_message(exc: BaseException) -> str:
    """An unexpected error (a bug, not bad input) as one line for the window, with where
    it happened; its whole traceback goes to stderr, for the bug report."""
    last = traceback.extract_tb(exc.__traceback__)[-1]
    traceback.print_exception(exc, file=sys.stderr)
    return f"{type(exc).__name__}: {exc} (at {Path(last.filename).name}:{last.lineno} in {last.name})"


class ProcessEnded(Exception):
    """The open's process ended without saying why (killed, out of memory, a crash)."""


class OpenProcess:
    """One open in a child process, read from the window's side (a worker thread).

    Args:
        path: the save.
        content: its content folder (None: the default, as ``Playthrough.open``).

    Use ``messages(stop)`` to follow it; ``close()`` (or the ``with`` block's end)
    ends the process if it still runs and removes its folder.
    """

    def __init__(self, path: Path, content: Path | None) -> None:
        self.folder = Path(tempfile.mkdtemp(prefix="narrative-debugger-"))
        receiver, sender = context().Pipe(duplex=False)
        self._receiver = receiver
        holds = {stage: hold for stage, make in HOLDS.items() if (hold := make(Path(path))) is not None}
        self.process = context().Process(target=child_main, args=(sender, str(path), None if content is None else str(content), str(self.folder), holds),
                                         name="narrative-debugger open", daemon=True)
        self.process.start()
        sender.close()

    def __enter__(self) -> "OpenProcess":
        return self

    def __exit__(self, *exc) -> None:
        self.close()

    def messages(self, stop):
        """The child's messages as they come (see the module doc), with ``"replayed"``
        and ``"checked"`` carrying what ``transfer.read`` made of their file. Stops
        without a word once ``stop.is_set()`` (the caller then closes).

        Raises:
            ProcessEnded: the process ended before ``("done",)``.
        """
        receiver = self._receiver
        while not stop.is_set():
            if not receiver.poll(POLL_S):
                if not self.process.is_alive() and not receiver.poll(0):
                    raise ProcessEnded(f"the open's process ended unexpectedly (exit code {self.process.exitcode})")
                continue
            try:
                message = receiver.recv()
            except (EOFError, OSError):
                self.process.join(1.0)
                raise ProcessEnded(f"the open's process ended unexpectedly (exit code {self.process.exitcode})") from None
            if message[0] in ("replayed", "checked"):
                yield message[0], transfer.read(self.folder / message[1])
            else:
                yield message
                if message[0] in ("done", "failed"):
                    return

    def close(self) -> None:
        """End the process (at once if it still runs) and remove its folder."""
        if self.process.is_alive():
            self.process.kill()
        self.process.join(5.0)
        self._receiver.close()
        shutil.rmtree(self.folder, ignore_errors=True)


def child_main(sender, path: str, content: str | None, folder: str, holds: dict | None = None) -> None:
    """The child process: open, prepare, hand over, check, hand over (module doc);
    ``holds``: stage -> ``Hold`` (see ``HOLDS``)."""
    out = Path(folder)
    # A process for one open, which ends with os._exit: what it makes is never freed
    # piece by piece, and it makes no cycles worth a collector's full passes over
    # millions of objects (1.5 s of a 7.0 s open of a 1 000 000-event save).
    gc.disable()

    def send(*message) -> None:
        sender.send(message)

    def wait_at(stage: str) -> None:
        hold = (holds or {}).get(stage)
        if hold is not None:
            hold.entered.set()
            # Looked at, never waited on: a process killed while it waits on an Event
            # would leave the Event's next ``set`` waiting for it for ever.
            while not hold.release.is_set():
                time.sleep(0.005)

    try:
        wait_at("open")
        play = Playthrough.open(Path(path), None if content is None else Path(content),
                                progress=lambda fraction, what: send("progress", fraction, what), defer_checks=True)
        prepared = Prepared()
        pending = play.checks_pending
        if play.readable:
            send("progress", 1.0, "preparing the views")
            for prepare in preparers(checked=False if pending else None):
                _keep(prepared, prepare(play, prepared))
        # The raw JSON the key-order checks read stays here, where they run.
        document, play.save.document = play.save.document, None
        transfer.write(out / "replayed", (play, prepared))
        play.save.document = document
        sent = _memo_keys(play)
        send("replayed", "replayed")
        if pending:
            wait_at("checks")
            play.finish_checks()
            checked = Prepared()
            for prepare in preparers(checked=True):
                made = prepare(play, prepared)
                _keep(prepared, made)
                _keep(checked, made)
            transfer.write(out / "checked", (play.findings, checked, _memos_since(play, sent)))
            send("checked", "checked")
        send("done")
    except Exception as exc:  # noqa: BLE001 - a bug, not bad input: said to the window, which keeps working
        send("failed", bug_message(exc))
    finally:
        sender.close()
        sys.stderr.flush()
        os._exit(0)  # nothing the open made is freed object by object: the process goes


def _memo_keys(play: Playthrough) -> dict:
    """Memo -> the keys its table holds now (what a hand-over has carried)."""
    return {memo: set(table) for memo, table in play.index.memos.tables.items()} if play.index is not None else {}


def _memos_since(play: Playthrough, sent: dict) -> dict:
    """The index's memo tables without the entries of ``sent`` (``_memo_keys`` at the
    first hand-over, whose file carried them already)."""
    if play.index is None:
        return {}
    tables = {memo: {key: value for key, value in table.items() if key not in sent.get(memo, ())}
              for memo, table in play.index.memos.tables.items()}
    return {memo: table for memo, table in tables.items() if table}


def _keep(prepared: Prepared, made) -> None:
    for entry in made if isinstance(made, tuple) else (made,):
        prepared.add(entry)

"""The window's child processes: a save read, replayed, prepared and checked, and a
what-if replayed and compared, beside the window, never inside it (issues 37, 38).

``OpenProcess`` starts one child process for one open. The child runs
``Playthrough.open`` and each registry ``prepare``, and hands the result to the window
through a file of columns (``models/columns/transfer.py``): the window maps it and
reads what a view asks for, a chunk at a time, so no work that grows with the save
holds the window's interpreter. The child then runs the checks and hands over the
findings and what reads them. Cancelling ends the process; freeing the playthrough
unmaps its file.

``WhatIfProcess`` starts one child process for one what-if (the What if panel). Its
side A is the window's playthrough, which the child reads from the files the open's
child wrote (a few ms: they stay mapped in the window, and open, while the
playthrough lives; see ``keep_source``). It runs ``models.whatif.run.what_if`` and
builds B's timeline tracks, and hands the ``WhatIf`` to the window the same way, with
side A and the parts of it B shares (the content, the save's fields) named, not
written: the window puts its own objects there, so ``comparison.a`` is the window's
playthrough; B's journal is A's with the edited entries replaced (``transfer.Patched``). A playthrough that no open's child made (a test's) is opened again by
the what-if's child.

The processes come from the ``forkserver`` start method where there is one (Linux,
macOS: a fork of a server that imported this module once, ~10 ms) and ``spawn``
elsewhere (Windows). The window's process is never forked, so none of its threads
or Qt state is copied.

Messages, child to window (one ``Connection``, pickled tuples):

- ``("progress", fraction 0..1, what is being done)``;
- the open's: ``("replayed", file name)``: the ``(Playthrough, Prepared)`` of the
  replayed save, its checks still to run (``checks_pending``), or whole when there
  are none; ``("checked", file name)``: ``(findings, Prepared of the entries that read
  them, the index's memo tables)``;
- the what-if's: ``("whatif", file name)``: ``(WhatIf, (B's last tick, plot origin,
  B's tracks), the Prepared of B and of the comparison (``_prepare_comparison``))``;
  ``("refused", message)``: a ``PatchError`` (a bad edit, said in the panel);
- ``("failed", message)``: an unexpected error (a bug; the traceback is on stderr);
- ``("done",)``.
"""

from __future__ import annotations

import dataclasses
import enum
import gc
import multiprocessing
import os
import shutil
import sys
import tempfile
import threading
import time
import traceback
import weakref
from dataclasses import dataclass
from multiprocessing import reduction
from pathlib import Path

from narrative_debugger.models.columns import transfer
from narrative_debugger.models.columns.mapped import MappedFile
from narrative_debugger.models.domain.tuning import Tuning
from narrative_debugger.models.playthrough import Playthrough
from narrative_debugger.models.whatif.patch import PatchError
from narrative_debugger.models.whatif.run import what_if
from narrative_debugger.widgets.kit.prepared import Prepared
from narrative_debugger.widgets.registry import comparison_preparers, preparer_modules, preparers
from narrative_debugger.widgets.timelines.compare import b_tracks

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


#: Where a child waits, for a test that must see it at a given point: stage
#: (``"open"``: before the save is read; ``"checks"``: before its checks; ``"whatif"``:
#: before a what-if reads side A) -> a callable(save path) giving the ``Hold`` for that
#: process, or None. Empty in the product.
HOLDS: dict = {}


def bug_message(exc: BaseException) -> str:
    """An unexpected error (a bug, not bad input) as one line for the window, with where
    it happened; its whole traceback goes to stderr, for the bug report."""
    last = traceback.extract_tb(exc.__traceback__)[-1]
    traceback.print_exception(exc, file=sys.stderr)
    return f"{type(exc).__name__}: {exc} (at {Path(last.filename).name}:{last.lineno} in {last.name})"


class ProcessEnded(Exception):
    """A child process ended without saying why (killed, out of memory, a crash)."""


class ChildFailed(Exception):
    """A child process stopped on an unexpected error (a bug): the message says which,
    and where (``bug_message``)."""


# The window's playthroughs made by an open's child: id -> (a weak reference to it,
# {"replayed": MappedFile, "checked": MappedFile}): the files a what-if's child reads
# side A from. Weak: a playthrough let go of takes its files with it (no file refers
# back to it). Re-entrant: the reference's callback may run in a thread holding it.
_SOURCES: dict[int, tuple] = {}
_SOURCES_LOCK = threading.RLock()


def keep_source(play: Playthrough, kind: str, file: MappedFile) -> None:
    """Note that ``play`` was read from ``file`` (``kind``: ``"replayed"`` or ``"checked"``,
    the open's hand-overs), which must be loaded with ``keep_open``: the file stays
    mapped (and open) as long as ``play`` lives, for a what-if's child."""
    key = id(play)
    with _SOURCES_LOCK:
        entry = _SOURCES.get(key)
        if entry is None or entry[0]() is not play:
            entry = _SOURCES[key] = (weakref.ref(play, lambda ref: _forget(key, ref)), {})
        entry[1][kind] = file


def _forget(key: int, ref) -> None:
    with _SOURCES_LOCK:
        entry = _SOURCES.get(key)
        if entry is not None and entry[0] is ref:
            del _SOURCES[key]


def sources_of(play: Playthrough) -> dict:
    """``kind -> MappedFile`` that ``keep_source`` noted for ``play`` (empty: none)."""
    with _SOURCES_LOCK:
        entry = _SOURCES.get(id(play))
        return dict(entry[1]) if entry is not None and entry[0]() is play else {}


def recorded_parts(play: Playthrough) -> dict:
    """Side A's parts that a what-if's B may share with it, by the key the result file
    names them with: ``"play"``, ``"content"``, ``("save", field)`` for each field of
    its ``Save``, ``("journal", field)`` for each list of its journal. The child and the
    window each call it on their own side A."""
    parts = {"play": play, "content": play.content}
    save = play.save
    for f in dataclasses.fields(save):
        parts[("save", f.name)] = getattr(save, f.name)
    journal = save.journal
    if journal is not None:
        for f in dataclasses.fields(journal):
            parts[("journal", f.name)] = getattr(journal, f.name)
    return parts


#: Values written as they are even when side A holds them: equal copies are the same
#: value (a ``None`` field of A's save must not stand for every ``None`` of B's).
_BY_VALUE = (type(None), bool, int, float, complex, str, bytes, tuple, frozenset, enum.Enum)


def _shared_ids(a: Playthrough, b: Playthrough | None = None) -> dict:
    """``transfer.write``'s ``shared`` for a what-if's result: side A's parts, and B's
    journal lists that are A's but for a few entries (``_journal_patches``)."""
    shared = {id(obj): key for key, obj in recorded_parts(a).items() if not isinstance(obj, _BY_VALUE)}
    if b is not None:
        shared.update(_journal_patches(a, b))
    return shared


#: A journal list of B with more entries than this differing from A's is written whole.
PATCH_LIMIT = 4096
_SPAN = 4096


def _journal_patches(a: Playthrough, b: Playthrough) -> dict:
    """``id(B's journal list) -> transfer.Patched`` for each list (ticks, kinds, data) of
    B's journal that is A's but at up to ``PATCH_LIMIT`` entries: an edit of one entry
    copies A's lists whole (``whatif.refusals.patched_entries``), and writing them again was
    ~0.95 s of a 1 000 000-entry what-if's hand-over."""
    ja, jb = a.save.journal, b.save.journal
    if ja is None or jb is None or jb is ja or len(jb) != len(ja):
        return {}
    out = {}
    for f in dataclasses.fields(jb):
        la, lb = getattr(ja, f.name), getattr(jb, f.name)
        if lb is la or not isinstance(lb, list):
            continue
        at = _differing(la, lb)
        if at is not None:
            out[id(lb)] = transfer.Patched(("journal", f.name), {i: lb[i] for i in at})
    return out


def _differing(la, lb) -> list[int] | None:
    """The indices where two lists of one length differ (None: more than ``PATCH_LIMIT``);
    spans are compared as slices, in C, and only a differing span item by item."""
    out: list[int] = []
    for lo in range(0, len(la), _SPAN):
        hi = min(len(la), lo + _SPAN)
        if la[lo:hi] == lb[lo:hi]:
            continue
        out += [i for i in range(lo, hi) if not (la[i] is lb[i] or la[i] == lb[i])]
        if len(out) > PATCH_LIMIT:
            return None
    return out


class _Descriptor:
    """A file descriptor handed to a child process (POSIX), which gets its own copy."""

    def __init__(self, fd: int) -> None:
        self.fd = fd

    def __reduce__(self):
        return _detached, (reduction.DupFd(self.fd),)


def _detached(dup) -> int:
    return dup.detach()


class ChildProcess:
    """One child process of the window, followed from the window's side (a worker
    thread); ``OpenProcess`` and ``WhatIfProcess`` say what it does.

    Use ``messages(stop)`` to follow it; ``close()`` (or the ``with`` block's end) ends
    the process if it still runs and removes its folder (a file the window still maps
    there: see ``MappedFile``).
    """

    #: The message kinds that name a file of the child's folder -> keep it open once
    #: mapped (``transfer.load``'s ``keep_open``).
    FILES: dict = {}
    #: What the process is called (in messages and the process list).
    what = "child"

    def __init__(self, target, path: Path, args: tuple, shared: dict | None = None) -> None:
        self.folder = Path(tempfile.mkdtemp(prefix="narrative-debugger-"))
        self.shared = shared
        receiver, sender = context().Pipe(duplex=False)
        self._receiver = receiver
        holds = {stage: hold for stage, make in HOLDS.items() if (hold := make(Path(path))) is not None}
        self.process = context().Process(target=target, args=(sender, str(self.folder), holds, *args),
                                         name=f"narrative-debugger {self.what}", daemon=True)
        self.process.start()
        sender.close()

    def __enter__(self) -> "ChildProcess":
        return self

    def __exit__(self, *exc) -> None:
        self.close()

    def messages(self, stop):
        """The child's messages as they come (see the module doc), those that name a file
        as ``(kind, what transfer.load made of it, its MappedFile)``. Stops without a
        word once ``stop.is_set()`` (the caller then closes).

        Raises:
            ProcessEnded: the process ended before ``("done",)``, ``("failed", …)`` or
                ``("refused", …)``.
        """
        receiver = self._receiver
        while not stop.is_set():
            if not receiver.poll(POLL_S):
                if not self.process.is_alive() and not receiver.poll(0):
                    raise ProcessEnded(f"the {self.what}'s process ended unexpectedly (exit code {self.process.exitcode})")
                continue
            try:
                message = receiver.recv()
            except (EOFError, OSError):
                self.process.join(1.0)
                raise ProcessEnded(f"the {self.what}'s process ended unexpectedly (exit code {self.process.exitcode})") from None
            if message[0] in self.FILES:
                yield (message[0], *transfer.load(self.folder / message[1], self.shared, keep_open=self.FILES[message[0]]))
            else:
                yield message
                if message[0] in ("done", "failed", "refused"):
                    return

    def close(self) -> None:
        """End the process (at once if it still runs) and remove its folder."""
        if self.process.is_alive():
            self.process.kill()
        self.process.join(5.0)
        self._receiver.close()
        shutil.rmtree(self.folder, ignore_errors=True)


class OpenProcess(ChildProcess):
    """One open in a child process (``child_main``).

    Args:
        path: the save.
        content: its content folder (None: the default, as ``Playthrough.open``).

    Its ``"replayed"`` and ``"checked"`` files stay open once mapped, for ``keep_source``.
    """

    FILES = {"replayed": True, "checked": True}
    what = "open"

    def __init__(self, path: Path, content: Path | None) -> None:
        super().__init__(child_main, path, (str(path), None if content is None else str(content)))


class WhatIfProcess(ChildProcess):
    """One what-if in a child process (``whatif_main``): ``what_if(path, content,
    operations, tuning, sets, recorded=A)`` with A read from ``play``'s files
    (``keep_source``), or opened again from ``path`` and ``content`` when it has none.

    Args:
        play: side A, the window's playthrough: the ``"whatif"`` hand-over's
            ``comparison.a`` is this object.
        path, content: the save and its content folder (None: the default).
        operations, tuning, sets: as ``what_if`` takes them (``split_edits``).
        tick: the tick the window shows (u64), for which the child prepares what the
            views read at the hand-over; None: A's saved tick.
    """

    FILES = {"whatif": False}
    what = "what-if"

    def __init__(self, play: Playthrough, path: Path, content: Path | None, operations: list, tuning: Tuning, sets: list,
                 tick: int | None = None) -> None:
        handles = {}
        for kind, file in sources_of(play).items():
            handle = file.handle()
            handles[kind] = _Descriptor(handle) if isinstance(handle, int) else handle
        super().__init__(whatif_main, path, (handles, str(path), None if content is None else str(content), operations, tuning, sets, tick),
                         shared=recorded_parts(play))


class _WindowGone(BaseException):
    """The window's end of the pipe is closed (the window closed or was killed): a
    ``BaseException``, so that no ``except Exception`` of the work takes it for an error."""


def _in_child(sender, folder: str, holds: dict | None, work) -> None:
    """Run ``work(send, wait_at)`` as a child process's whole life (``"failed"`` on an
    unexpected error), then end the process without freeing anything. A window gone
    (a message that cannot be sent) ends the work, and the folder is removed: no file is
    left for a window that will never map it."""
    # A process for one task, which ends with os._exit: what it makes is never freed
    # piece by piece, and it makes no cycles worth a collector's full passes over
    # millions of objects (1.5 s of a 7.0 s open of a 1 000 000-event save).
    gc.disable()
    gone = False

    def send(*message) -> None:
        nonlocal gone
        try:
            sender.send(message)
        except OSError:  # BrokenPipeError, ConnectionResetError
            gone = True
            raise _WindowGone from None

    def wait_at(stage: str) -> None:
        hold = (holds or {}).get(stage)
        if hold is not None:
            hold.entered.set()
            # Looked at, never waited on: a process killed while it waits on an Event
            # would leave the Event's next ``set`` waiting for it for ever.
            while not hold.release.is_set():
                time.sleep(0.005)

    try:
        work(send, wait_at)
    except _WindowGone:
        pass
    except Exception as exc:  # noqa: BLE001 - a bug, not bad input: said to the window, which keeps working
        try:
            send("failed", bug_message(exc))
        except _WindowGone:
            pass
    finally:
        if gone:
            shutil.rmtree(folder, ignore_errors=True)
        sender.close()
        sys.stderr.flush()
        os._exit(0)  # nothing the child made is freed object by object: the process goes


def child_main(sender, folder: str, holds: dict | None, path: str, content: str | None) -> None:
    """The open's child process: open, prepare, hand over, check, hand over (module doc);
    ``holds``: stage -> ``Hold`` (see ``HOLDS``)."""
    out = Path(folder)

    def work(send, wait_at) -> None:
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

    _in_child(sender, folder, holds, work)


#: The share of a what-if's progress that ``what_if`` reports; B's tracks take the rest.
WHATIF_SHARE = 0.95


def whatif_main(sender, folder: str, holds: dict | None, handles: dict, path: str, content: str | None,
                operations: list, tuning: Tuning, sets: list, tick: int | None = None) -> None:
    """The what-if's child process (module doc): side A read from ``handles`` (``kind ->``
    a descriptor or path of the open's files, see ``WhatIfProcess``), or opened from
    ``path`` when there are none; ``what_if``; B's tracks and what the views read of
    the comparison at ``tick`` (None: A's saved tick); the hand-over. A ``PatchError``
    is ``("refused", its message)``."""
    out = Path(folder)

    def work(send, wait_at) -> None:
        wait_at("whatif")
        a = _recorded(handles, Path(path), None if content is None else Path(content))
        try:
            result = what_if(Path(path), None, operations, tuning, sets, recorded=a,
                             progress=lambda fraction, stage: send("progress", WHATIF_SHARE * fraction, stage))
        except PatchError as exc:
            send("refused", str(exc))
            return
        send("progress", WHATIF_SHARE, "drawing the what-if")
        comparison = result.comparison
        prepared = _prepare_comparison(comparison, a.save.saved_at_tick if tick is None else tick)
        transfer.write(out / "whatif", (result, b_tracks(comparison), prepared), shared=_shared_ids(a, comparison.b))
        send("whatif", "whatif")
        send("done")

    _in_child(sender, folder, holds, work)


def _prepare_comparison(comparison, tick: int) -> Prepared:
    """What the window's views read of a what-if at its hand-over (``Session.prepared_b``):
    the registry's ``comparison_preparers``, side B's then the comparison's at ``tick``."""
    prepared = Prepared()
    side_b, compared = comparison_preparers()
    for prepare in side_b:
        _keep(prepared, prepare(comparison.b, prepared))
    for prepare in compared:
        _keep(prepared, prepare(comparison, tick, prepared))
    return prepared


def _recorded(handles: dict, path: Path, content: Path | None) -> Playthrough:
    """Side A in the what-if's child: the window's playthrough as the open's child handed
    it over (with the memos of its checks, when the window has them), or the save opened
    again; its findings those of reading and replaying it, as the ``whatif`` command's A
    has (B's checks are left too: its snapshot is A's record, not B's). With the window's
    checks taken, every finding of the snapshot and of the replay against it was "only in
    A" beside a B without them (trial 49: 8 differences where the command said nothing
    changes, on qa-faults.json)."""
    if "replayed" not in handles:
        return Playthrough.open(path, content, defer_checks=True)
    # Plain lists and dicts, every item decoded once (2.0 s at 1 000 000 events): the
    # what-if reads most of A, several times over, which through columns' chunks took
    # 16.4 s instead of 6.1 s.
    play, _prepared = transfer.read(handles["replayed"], plain=True)
    if "checked" in handles:
        _findings, _checked, memos = transfer.read(handles["checked"], plain=True)
        if play.index is not None:
            play.index.memos.merge(memos)
    return play


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

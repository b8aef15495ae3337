"""Opening saves off the GUI thread (style.md rules 5 and 12).

``SaveLoader`` has each open run by a child process (``engine.OpenProcess``: read,
replay, prepare, check) and follows it from a worker thread, which maps what the
child hands over and reports progress, the result or the cancellation back by
signal; the GUI thread only ever touches widgets.

Lifetimes: each load is a job of ``widgets/kit/jobs.py``, whose threads that module
holds, not the window: a window deleted while a load runs destroys no running thread,
and the load's answer is dropped. ``SaveLoader.shutdown`` (called by the window's
close) cancels and waits for every load it started; at interpreter exit the jobs
module does the same for any left over.
"""

from __future__ import annotations

import itertools
from dataclasses import dataclass
from pathlib import Path

from narrative_debugger.app.workers.engine import OpenProcess, ProcessEnded, bug_message, keep_source
from narrative_debugger.models.playthrough import Cancelled, Playthrough
from narrative_debugger.widgets.kit.prepared import Prepared
from narrative_debugger.widgets.kit.jobs import Job, Jobs
from PySide6.QtCore import QObject, Signal


#: The kinds of request the window makes: the user opens a save, or the shown one is read again.
OPEN = "open"
RELOAD = "reload"

_request_ids = itertools.count(1)


@dataclass(frozen=True)
class LoadRequest:
    """One call of ``SaveLoader.start``.

    Attributes:
        kind: ``OPEN`` (the user chose a save) or ``RELOAD`` (the shown save read again,
            by F5 or a change on disk); any other string a caller likes.
        path: the save being read.
        id: unique in the process, increasing with each request.
    """

    kind: str
    path: Path
    id: int


class _Load:
    """One load: ``run`` is the job (``kit.jobs``) that follows it.

    A save opened the default way is opened by a child process (``engine.OpenProcess``)
    and handed over twice: ``("replayed", play)`` is reported once it is read,
    replayed and prepared for the views, so the window shows it; the job's answer
    comes once the child has checked it too and prepared the views' data that reads
    the findings. What the ``prepare`` functions made goes to ``prepared``, which the
    SaveLoader's signals carry beside the playthrough. A ``job`` given instead runs
    here, in the worker thread, and its answer is what ``loaded`` carries.

    Reports (queued to the GUI thread): ``("progress", fraction 0..1, what is being
    done)`` and ``("replayed", the Playthrough, whose checks still run)``.

    Attributes:
        outcome: the job's answer: a ``Playthrough``, ``Cancelled`` (the class) when
            cancelled, or a ``str`` with the message of an unexpected error.
        shown: set by the SaveLoader once it has handed the replayed save on.
        handle: the ``Job`` once started (``handle.stop`` is the load's cancel flag).
        prepared: what the registry's ``preparers`` made for the playthrough.
    """

    def __init__(self, request: LoadRequest, content: Path | None, context, job=None) -> None:
        self.request = request
        self.path = request.path
        self.content = content
        self.context = context
        self.job = job  # None: in the child process, in two hand-overs (see the class)
        self.outcome = None
        self.shown = False
        self.handle: Job | None = None
        self.prepared = Prepared()
        self.checks: tuple | None = None  # (findings, Prepared, memo tables) from the child
        self.checks_file = None  # the MappedFile they were read from

    def take_checks(self, play: Playthrough) -> None:
        """Give ``play`` what the child's checks made (GUI thread; once)."""
        if self.checks is None:
            return
        findings, checked, memos = self.checks
        self.checks = None
        keep_source(play, "checked", self.checks_file)  # a what-if's child reads them there
        for entry in checked.entries():
            self.prepared.add(entry)
        if play.index is not None:
            play.index.memos.merge(memos)
        play.take_checks(findings)

    def stop(self) -> None:
        """Cancel the load: it reports nothing more; a child process is ended."""
        if self.handle is not None:
            self.handle.cancel()

    def run(self, handle: Job):
        try:
            if self.job is not None:
                return self.job(self.path, self.content, progress=lambda f, m: handle.report("progress", f, m), cancelled=handle.stop.is_set)
            return self._run_in_child(handle)
        except Cancelled:
            return Cancelled
        except ProcessEnded as exc:
            return str(exc)
        except Exception as exc:  # noqa: BLE001 - a bug, not bad input: report it instead of losing the window
            return bug_message(exc)

    def _run_in_child(self, handle: Job):
        stop = handle.stop
        play = None
        with OpenProcess(self.path, self.content) as child:
            for message in child.messages(stop):
                kind = message[0]
                if kind == "progress":
                    handle.report("progress", *message[1:])
                elif kind == "replayed":
                    play, self.prepared = message[1]
                    keep_source(play, "replayed", message[2])  # a what-if's child reads side A there
                    if play.checks_pending:
                        handle.report("replayed", play)
                elif kind == "checked":
                    # Taken on the GUI thread (``take_checks``), after it has had ``loaded``:
                    # a playthrough handed over with its checks pending stays so until then.
                    self.checks, self.checks_file = message[1], message[2]
                elif kind == "failed":
                    return message[1]
                elif kind == "done":
                    return play
        return Cancelled


class SaveLoader(QObject):
    """Loads one save at a time (a child process, followed by a worker thread); only the
    latest request reports.

    Signals:
        progress(float, str): fraction 0..1 and what is being done.
        loaded(object, object, object): the Playthrough, the request's context (any
            value) and what the views' ``prepare`` functions made for it (a
            ``kit.prepared.Prepared``, empty when the job's answer is no readable
            Playthrough). A save opened with ``Playthrough.open`` comes replayed, with
            its checks still running (``checks_pending``); ``checked`` follows.
        checked(object, object, object): the Playthrough ``loaded`` carried is checked:
            its ``findings`` are whole, and the same ``Prepared`` holds the entries
            that read them too.
        cancelled(): the load was cancelled.
        failed(str): an unexpected error (a bug) with its message.
    """

    progress = Signal(float, str)
    loaded = Signal(object, object, object)
    checked = Signal(object, object, object)
    cancelled = Signal()
    failed = Signal(str)

    def __init__(self, parent: QObject | None = None) -> None:
        super().__init__(parent)
        self._jobs = Jobs(self)
        self._current: _Load | None = None
        # Shown saves whose checks still run while a newer request is ``_current``: they
        # report ``checked`` all the same (the newer request may fail or be cancelled,
        # and the window then still shows that save, which must not keep its partial
        # findings for good).
        self._checking: set[_Load] = set()
        self._closed = False

    @property
    def busy(self) -> bool:
        """True from ``start`` until the latest load has reported, and while a shown
        save's checks run."""
        return self._current is not None or bool(self._checking)

    @property
    def running(self) -> int:
        """How many of this loader's worker threads still run (cancelled loads included)."""
        return self._jobs.running

    @property
    def pending(self) -> LoadRequest | None:
        """The latest request while its save is not handed over yet (None: no load
        runs, or its save is shown and only its checks run)."""
        load = self._current
        return load.request if load is not None and not load.shown else None

    def start(self, path: Path, content: Path | None, context=None, job=None, kind: str = OPEN) -> LoadRequest:
        """Start loading ``path``; returns the request (``kind`` is the caller's word for
        it, see ``LoadRequest``). A load already running is cancelled and never reports.

        ``job`` replaces ``Playthrough.open`` (same arguments, including ``progress``
        and ``cancelled``): its return value is what ``loaded`` carries.
        Does nothing after ``shutdown``. Never blocks the GUI thread. A save already
        shown is not cancelled: its checks run on and ``checked`` follows.
        """
        request = LoadRequest(kind, Path(path), next(_request_ids))
        if self._closed:
            return request
        if self._current is not None and self._current.shown:
            self._checking.add(self._current)
            self._current = None
        self._drop_current()
        load = _Load(request, content, context, job)
        self._current = load
        load.handle = self._jobs.run(
            load.run,
            takes_job=True,
            on_progress=lambda *report: self._on_reported(load, *report),
            on_done=lambda outcome: self._on_ended(load, outcome),
        )
        return request

    def cancel(self) -> None:
        """Ask the running load to stop at its next progress report; ``cancelled`` follows at once.
        A save already shown is not cancelled: its checks run to their end."""
        if self._current is not None and self._current.shown:
            return
        if self._drop_current():
            self.cancelled.emit()

    def _drop_current(self) -> bool:
        """Stop the latest load and forget it (it never reports); True if there was one."""
        load, self._current = self._current, None
        if load is not None:
            load.stop()
        return load is not None

    def wait(self, msecs: int | None = None) -> bool:
        """Block until every thread this loader started has ended (close, tests).

        Args:
            msecs: give up after this many milliseconds (None: no limit).

        Returns:
            True when none is running any more.
        """
        return self._jobs.wait(None if msecs is None else msecs / 1000)

    def shutdown(self) -> None:
        """Cancel every load and wait for its thread to end; later ``start`` calls do nothing."""
        self._closed = True
        for load in [self._current, *self._checking]:
            if load is not None:
                load.stop()
        self._current = None
        self._checking.clear()
        self._jobs.shutdown()

    def _on_reported(self, load: _Load, kind: str, *values) -> None:
        if load is not self._current:
            return  # put aside (its checks run on) or dropped
        if kind == "progress":
            self.progress.emit(*values)
        else:  # "replayed"
            load.shown = True
            self.loaded.emit(values[0], load.context, load.prepared)

    def _on_ended(self, load: _Load, outcome) -> None:
        put_aside = load in self._checking  # shown, then a newer request came
        if put_aside:
            self._checking.discard(load)
        elif load is self._current:
            self._current = None
        else:
            return  # replaced by a newer request
        if isinstance(outcome, Playthrough):
            load.take_checks(outcome)
        if load.shown:
            if isinstance(outcome, Playthrough):
                self.checked.emit(outcome, load.context, load.prepared)
            elif isinstance(outcome, str) and not put_aside:
                self.failed.emit(outcome)
            return
        if outcome is Cancelled:
            self.cancelled.emit()
        elif isinstance(outcome, str):
            self.failed.emit(outcome)
        else:
            self.loaded.emit(outcome, load.context, load.prepared)

"""Opening saves off the GUI thread (style.md rules 5 and 12).

``SaveLoader`` runs ``Playthrough.open`` in a worker thread and reports progress, the
result or the cancellation back by signal; the GUI thread only ever touches widgets.

Lifetimes: a running thread is held by this module (``_RUNNING``), not by the window,
so a window that is deleted while a load runs never destroys a running ``QThread``
(Qt aborts the process when that happens). A thread is dropped only once it has
ended; ``SaveLoader.shutdown`` (called by the window's close) cancels and waits for
every thread it started, and an ``atexit`` hook does the same for any left over.
"""

from __future__ import annotations

import atexit
import sys
import threading
import traceback
from pathlib import Path

from narrative_debugger.models.playthrough import Cancelled, Playthrough, collector_paused
from narrative_debugger.widgets.registry import preparers
from PySide6.QtCore import QObject, QThread, Signal, Slot


class _LoadThread(QThread):
    """One load: runs ``Playthrough.open`` in ``run`` and keeps the outcome.

    Signals (emitted from the worker thread, received queued on the GUI thread):
        reported(object, float, str): this thread, fraction 0..1, what is being done.
        ended(object): this thread; ``outcome`` is then set.

    Attributes:
        outcome: after ``ended``: a ``Playthrough``, ``Cancelled`` (the class) when
            cancelled, or a ``str`` with the message of an unexpected error.
    """

    reported = Signal(object, float, str)
    ended = Signal(object)

    def __init__(self, path: Path, content: Path | None, context, job=None) -> None:
        super().__init__()
        self.path = path
        self.content = content
        self.context = context
        self.job = job or Playthrough.open
        self.stop = threading.Event()
        self.outcome = None

    def run(self) -> None:
        try:
            play = self.job(
                self.path, self.content, progress=lambda f, m: self.reported.emit(self, f, m), cancelled=self.stop.is_set
            )
            if isinstance(play, Playthrough) and play.readable:
                # What the views would compute on ``loaded`` and that grows with the
                # save (event ticks, timeline curves) is computed here, off the GUI thread.
                self.reported.emit(self, 1.0, "preparing the views")
                with collector_paused():
                    for prepare in preparers():
                        if self.stop.is_set():
                            raise Cancelled()
                        prepare(play)
            self.outcome = play
        except Cancelled:
            self.outcome = Cancelled
        except Exception as exc:  # noqa: BLE001 - a bug, not bad input: report it instead of losing the window
            # Where it happened, for the bug report (the whole traceback goes to stderr).
            last = traceback.extract_tb(exc.__traceback__)[-1]
            self.outcome = f"{type(exc).__name__}: {exc} (at {Path(last.filename).name}:{last.lineno} in {last.name})"
            traceback.print_exception(exc, file=sys.stderr)
        finally:
            self.ended.emit(self)


class _Reaper(QObject):
    """Lives on the GUI thread; drops a thread once it has ended (never while it runs)."""

    @Slot(object)
    def reap(self, thread: _LoadThread) -> None:
        thread.wait()  # ``ended`` is the last thing ``run`` does: this returns at once
        _RUNNING.discard(thread)


_RUNNING: set[_LoadThread] = set()
_reaper: _Reaper | None = None


def _wait_all() -> None:
    """Cancel and wait for every load thread still alive (at interpreter exit)."""
    for thread in list(_RUNNING):
        thread.stop.set()
    for thread in list(_RUNNING):
        thread.wait()
    _RUNNING.clear()


atexit.register(_wait_all)


class SaveLoader(QObject):
    """Loads one save at a time in a worker thread; only the latest request reports.

    Signals:
        progress(float, str): fraction 0..1 and what is being done.
        loaded(object, object): the Playthrough and the request's context (any value).
        cancelled(): the load was cancelled.
        failed(str): an unexpected error (a bug) with its message.
    """

    progress = Signal(float, str)
    loaded = Signal(object, object)
    cancelled = Signal()
    failed = Signal(str)

    def __init__(self, parent: QObject | None = None) -> None:
        super().__init__(parent)
        self._current: _LoadThread | None = None
        self._mine: set[_LoadThread] = set()
        self._closed = False

    @property
    def busy(self) -> bool:
        """True from ``start`` until the latest load has reported."""
        return self._current is not None

    def start(self, path: Path, content: Path | None, context=None, job=None) -> None:
        """Start loading ``path``. A load already running is cancelled and never reports.

        ``job`` replaces ``Playthrough.open`` (same arguments, including ``progress``
        and ``cancelled``): its return value is what ``loaded`` carries.
        Does nothing after ``shutdown``. Never blocks the GUI thread.
        """
        global _reaper
        if self._closed:
            return
        self._drop_current()
        if _reaper is None:
            _reaper = _Reaper()
        thread = _LoadThread(Path(path), content, context, job)
        thread.reported.connect(self._on_reported)
        thread.ended.connect(self._on_ended)
        thread.ended.connect(_reaper.reap)
        _RUNNING.add(thread)
        self._mine.add(thread)
        self._current = thread
        thread.start()

    def cancel(self) -> None:
        """Ask the running load to stop at its next progress report; ``cancelled`` follows at once."""
        if self._drop_current():
            self.cancelled.emit()

    def _drop_current(self) -> bool:
        """Stop the latest load and forget it (it never reports); True if there was one."""
        thread, self._current = self._current, None
        if thread is not None:
            thread.stop.set()
        return thread is not None

    def wait(self, msecs: int | None = None) -> bool:
        """Block until every thread this loader started has ended (close, tests).

        Args:
            msecs: give up after this many milliseconds (None: no limit).

        Returns:
            True when none is running any more.
        """
        done = True
        for thread in list(self._mine):
            done = (thread.wait() if msecs is None else thread.wait(msecs)) and done
        self._mine = {t for t in self._mine if t.isRunning()}
        return done

    def shutdown(self) -> None:
        """Cancel every load and wait for its thread to end; later ``start`` calls do nothing."""
        self._closed = True
        for thread in self._mine:
            thread.stop.set()
        self._current = None
        self.wait()

    def _on_reported(self, thread: _LoadThread, fraction: float, message: str) -> None:
        if thread is self._current:
            self.progress.emit(fraction, message)

    def _on_ended(self, thread: _LoadThread) -> None:
        self._mine.discard(thread)
        if thread is not self._current:
            return  # cancelled, replaced by a newer request, or shut down
        self._current = None
        outcome = thread.outcome
        if outcome is Cancelled:
            self.cancelled.emit()
        elif isinstance(outcome, str):
            self.failed.emit(outcome)
        else:
            self.loaded.emit(outcome, thread.context)

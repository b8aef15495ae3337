"""GUI work that is cut into slices, so the event loop runs between them.

Some work must happen on the GUI thread (it builds Qt and pyqtgraph items) and grows
with the save: a view's set-up after a load, the tick bar's markers. ``SlicedWork``
runs such a job, a generator, a few steps at a time from a zero-interval timer, so
no slice blocks the event loop for long (``SLICE_MS``); a step that yields
``END_SLICE`` ends its slice at once. A job that a newer one
replaces is dropped unfinished: each job starts from the state it finds.

A widget whose window is not shown (built alone, as tests and headless tools do)
runs its job to the end at once; so does
``finish`` (screenshots and reports need the finished picture).
"""

from __future__ import annotations

import time
from collections.abc import Iterator

from PySide6.QtCore import QObject, QTimer
from PySide6.QtWidgets import QWidget

#: Steps run in one timer slot until this many milliseconds have passed.
SLICE_MS = 8.0
#: A slot that comes less than this many milliseconds after another job's slice ended
#: is the same pass of the event loop over its timers: it waits for the next pass, so
#: the jobs of several widgets (a load starts five) do not run back to back.
PASS_GAP_MS = 1.0
#: A job yields this to end its slice there, whatever time is left: the step after
#: it runs ``END_SLICE_GAP_MS`` later, after the paint the step asked for.
END_SLICE = object()
#: After an ``END_SLICE`` the next slice waits this long. A zero-interval timer restarted
#: before a paint is due again before the event loop's other timers once the paint ends,
#: so the next slice would run right after it, and a paint and the slice after it would
#: make one stall.
END_SLICE_GAP_MS = 10

_last_slice_end = 0.0


class SlicedWork(QObject):
    """Runs one job (a generator; each ``next`` is a short step) at a time for ``owner``.

    The timer is a child of this object, which is a child of ``owner``: both go with
    the widget, and a destroyed widget's job never runs again.

    Args:
        owner: the widget the job draws into.
    """

    def __init__(self, owner: QWidget) -> None:
        super().__init__(owner)
        self.setObjectName("slicedWork")
        self._owner = owner
        self._job: Iterator | None = None
        self._timer = QTimer(self)
        self._timer.setInterval(0)
        self._timer.timeout.connect(self._run_slice)

    @property
    def busy(self) -> bool:
        """True while a job has steps left."""
        return self._job is not None

    def start(self, job: Iterator) -> None:
        """Run ``job`` in slices from now on, replacing (dropping) a job in progress.

        While the owner's window is not shown, the job runs to its end before this returns.
        """
        self._job = job
        if not self._owner.window().isVisible():
            self.finish()
            return
        self._timer.start(0)

    def finish(self) -> None:
        """Run what is left of the job now, to its end."""
        self._timer.stop()
        while self._job is not None:
            job = self._job
            for _ in job:
                if self._job is not job:
                    break  # a step started another job: run that one instead
            else:
                if self._job is job:
                    self._job = None

    def cancel(self) -> None:
        """Drop the job in progress unfinished."""
        self._job = None
        self._timer.stop()

    def _run_slice(self) -> None:
        global _last_slice_end
        job = self._job
        if job is None:
            self._timer.stop()
            return
        started = time.perf_counter()
        if started - _last_slice_end < PASS_GAP_MS / 1000:
            return  # another job's slice just ran in this pass: the next pass is ours
        deadline = started + SLICE_MS / 1000
        try:
            while True:  # at least one step a slot
                step = next(job)
                if self._job is not job:
                    return  # a step started another job
                if step is END_SLICE:
                    self._timer.start(END_SLICE_GAP_MS)
                    return
                if time.perf_counter() >= deadline:
                    if self._timer.interval():
                        self._timer.start(0)
                    return
        except StopIteration:
            if self._job is job:
                self._job = None
                self._timer.stop()
        finally:
            _last_slice_end = time.perf_counter()


def finish_all(root: QObject) -> None:
    """Run every sliced job under ``root`` (a window) to its end."""
    for _ in range(4):  # a finished job may start another (the tick bar's markers after a load)
        works = [work for work in root.findChildren(SlicedWork) if work.busy]
        if not works:
            return
        for work in works:
            work.finish()


def any_busy(root: QObject) -> bool:
    """True while a sliced job under ``root`` has steps left."""
    return any(work.busy for work in root.findChildren(SlicedWork))

"""The one way to run work off the GUI thread (style.md rules 5 and 12).

``Jobs(owner)`` runs each job on a worker thread of its own and brings what the job
says back to the GUI thread through queued signals: ``on_progress(*values)`` for each
``job.report(*values)``, then ``on_done(result)`` or ``on_error(exception)``. A job
whose answer is no longer wanted delivers nothing: one cancelled (``Job.cancel``),
one superseded by a newer job of the same ``latest`` key, one whose owner was shut
down or destroyed. Its worker runs to its end (or to its next look at
``job.cancelled``) and its result is dropped.

Starting: ``run`` hands the job's thread to this module's one launcher thread, which
starts it. ``threading.Thread.start`` waits until the new thread runs; on a busy
machine that wait (the OS scheduling the thread) took up to 20 ms, and 124 ms once, of
the GUI thread at a tick step, which asks for a prompt preview at every step.

Lifetimes: a worker is a Python thread this module holds until it ends, never the
owner, so an owner destroyed while a job runs destroys no running thread: its jobs
are cancelled and nothing reaches its callbacks. ``Jobs.shutdown`` (the owner's
close) cancels its jobs and, by default, waits for their threads; at interpreter
exit every job still running is cancelled and waited for.

Workers share the window's interpreter, and so its GIL, with the GUI thread: a job
is short (a prompt preview, a why-chain) or follows a child process. The window's
long work, an open and a what-if, runs in child processes (``app/workers/engine.py``);
their jobs wait on the child's pipe and map the file it hands over. Work that grows
with a save belongs in such a child (a ``prepare`` of ``widgets/registry.py``), not
in a job.

Not jobs: the child processes themselves (the open's and the what-if's; in them the
content folder's, ``models/content/background.py``, while a large save is decoded),
and ``check --jobs``'s process pool on the command line, where there is no GUI thread.

Example::

    self._jobs = Jobs(self)
    self._jobs.run(build, request, latest="preview", on_done=self._show, on_error=self._fail)
"""

from __future__ import annotations

import atexit
import queue
import sys
import threading
import traceback
from collections.abc import Callable
from typing import Any

from PySide6.QtCore import QCoreApplication, QObject, Qt, Signal, Slot

# Every job whose worker thread runs, in any Jobs of the process (under _LOCK).
_LOCK = threading.Lock()
_RUNNING: set[Job] = set()
# The jobs whose thread the launcher is to start, and the launcher (made on first use).
_TO_START: queue.SimpleQueue = queue.SimpleQueue()
_launcher: threading.Thread | None = None


class Job:
    """One call of ``Jobs.run``: the handle the caller keeps and the worker reads.

    Attributes:
        stop: a ``threading.Event`` set when the job is cancelled; pass
            ``job.stop.is_set`` to code that polls a ``cancelled`` callable.
    """

    def __init__(self, jobs: Jobs, fn: Callable, args: tuple, takes_job: bool, on_done, on_error, on_progress, latest) -> None:
        self.stop = threading.Event()
        self._jobs = jobs
        self._fn, self._args, self._takes_job = fn, args, takes_job
        self._on_done, self._on_error, self._on_progress = on_done, on_error, on_progress
        self._latest = latest
        self._thread: threading.Thread | None = None
        self._finished = threading.Event()  # set by the worker's last line
        self._result: Any = None
        self._error: BaseException | None = None

    # ----- either thread -----
    @property
    def cancelled(self) -> bool:
        """True once the job is cancelled, superseded or its owner gone: nothing more is delivered."""
        return self.stop.is_set()

    def cancel(self) -> None:
        """Drop the job's answer; a job not started yet never starts. The worker sees
        ``cancelled`` at its next look and may stop early. Idempotent."""
        self.stop.set()

    @property
    def running(self) -> bool:
        """True from the start asked for until the job's worker has ended (a cancelled
        job included)."""
        return self._thread is not None and not self._finished.is_set()

    def wait(self, timeout_s: float | None = None) -> bool:
        """Block until the job's worker has ended (a job never started counts as ended).

        Returns:
            True when it has ended, False when ``timeout_s`` seconds passed first.
        """
        if self._thread is None:
            return True
        return self._finished.wait(timeout_s)

    # ----- worker thread -----
    def report(self, *values) -> None:
        """From the worker: hand ``values`` to ``on_progress(*values)`` on the GUI thread
        (dropped once the job is cancelled)."""
        if not self.stop.is_set() and self._on_progress is not None:
            _relay().reported.emit(self, values)

    def _work(self) -> None:
        try:
            args = (self, *self._args) if self._takes_job else self._args
            self._result = self._fn(*args)
        except Exception as exc:  # noqa: BLE001 - handed to on_error on the GUI thread
            self._error = exc
        finally:
            self._end()

    def _end(self) -> None:
        """The worker's end (or the launcher's, when the thread could not start)."""
        try:
            self._fn = self._args = None
            with _LOCK:
                _RUNNING.discard(self)
            self._jobs._ended(self)  # starts the next job of its key, if any
            _relay().ended.emit(self)
        finally:
            self._finished.set()

    # ----- GUI thread -----
    def _deliver_progress(self, values: tuple) -> None:
        if not self.stop.is_set() and not self._jobs.closed:
            self._on_progress(*values)

    def _deliver_end(self) -> None:
        result, error = self._result, self._error
        self._result = self._error = None
        try:
            if self.stop.is_set() or self._jobs.closed:
                return
            if error is not None:
                if self._on_error is not None:
                    self._on_error(error)
                else:
                    traceback.print_exception(error, file=sys.stderr)
            elif self._on_done is not None:
                self._on_done(result)
        finally:
            self._jobs._delivered(self)


class _Relay(QObject):
    """Lives on the GUI thread for the whole process: what workers emit is queued to it."""

    reported = Signal(object, object)
    ended = Signal(object)

    def __init__(self) -> None:
        super().__init__()
        self.reported.connect(self._on_reported, Qt.QueuedConnection)
        self.ended.connect(self._on_ended, Qt.QueuedConnection)

    @Slot(object, object)
    def _on_reported(self, job: Job, values: tuple) -> None:
        job._deliver_progress(values)

    @Slot(object)
    def _on_ended(self, job: Job) -> None:
        job._deliver_end()


_the_relay: _Relay | None = None


def _relay() -> _Relay:
    return _the_relay  # made by the first Jobs, on the GUI thread


class Jobs:
    """The background jobs of one owner (a window, a view, a loader).

    Args:
        owner: the QObject the jobs belong to; when it is destroyed, its jobs are
            cancelled and deliver nothing.

    Callbacks run on the GUI thread. Must be made on the GUI thread.
    """

    def __init__(self, owner: QObject) -> None:
        global _the_relay
        if _the_relay is None:
            _the_relay = _Relay()
            app = QCoreApplication.instance()
            if app is not None:
                _the_relay.moveToThread(app.thread())
        self.closed = False
        self._cond = threading.Condition()
        self._live: set[Job] = set()  # started, worker not ended
        # Ended on their thread, their answer not yet handed to on_done/on_error on the GUI thread.
        self._undelivered: set[Job] = set()
        self._threads: list[threading.Thread] = []  # of ended jobs, joined by ``wait``
        self._queued: dict[Any, Job] = {}  # latest key -> the job waiting for its turn
        owner.destroyed.connect(self._owner_gone)

    def run(
        self,
        fn: Callable,
        *args,
        on_done: Callable[[Any], None] | None = None,
        on_error: Callable[[Exception], None] | None = None,
        on_progress: Callable[..., None] | None = None,
        latest: Any = None,
        takes_job: bool = False,
    ) -> Job:
        """Run ``fn(*args)`` (``fn(job, *args)`` with ``takes_job``) on a worker thread.

        Args:
            on_done: called on the GUI thread with ``fn``'s return value.
            on_error: called on the GUI thread with the exception ``fn`` raised
                (without one, its traceback goes to stderr).
            on_progress: called on the GUI thread with what ``job.report`` was given.
            latest: a key: the job supersedes every earlier job of that key (they are
                cancelled) and starts once the one still running has ended, so jobs of
                one key run one at a time and only the newest waits its turn.
            takes_job: pass the ``Job`` as first argument (to report, or to look at
                ``job.cancelled``).

        Returns:
            The job's handle. After ``shutdown`` the job is cancelled and never runs.
        """
        job = Job(self, fn, args, takes_job, on_done, on_error, on_progress, latest)
        if self.closed:
            job.cancel()
            return job
        with self._cond:
            if latest is not None:
                earlier = self._queued.pop(latest, None)
                if earlier is not None:
                    earlier.cancel()
                busy = False
                for other in self._live:
                    if other._latest == latest:
                        other.cancel()
                        busy = True
                if busy:
                    self._queued[latest] = job
                    return job
            self._start(job)
        return job

    def _start(self, job: Job) -> None:
        """Have ``job``'s thread started by the launcher (caller holds the lock); returns
        without waiting for the thread to run."""
        self._live.add(job)
        job._thread = threading.Thread(target=job._work, name=f"job-{getattr(job._fn, '__name__', 'work')}", daemon=True)
        with _LOCK:
            _RUNNING.add(job)
        _launch(job)

    def _ended(self, job: Job) -> None:
        """Worker thread: ``job`` has ended; start the one of its key that waits, if any."""
        with self._cond:
            self._live.discard(job)
            self._undelivered.add(job)
            self._threads = [t for t in self._threads if t.is_alive()]
            self._threads.append(job._thread)
            nxt = self._queued.pop(job._latest, None) if job._latest is not None else None
            if nxt is not None and not nxt.cancelled and not self.closed:
                self._start(nxt)
            self._cond.notify_all()

    def _idle(self) -> bool:
        """No job runs and none that is wanted waits its turn (caller holds the lock)."""
        return not self._live and all(j.cancelled for j in self._queued.values())

    def _delivered(self, job: Job) -> None:
        """GUI thread: ``job``'s end went to its callback (or was dropped)."""
        with self._cond:
            self._undelivered.discard(job)

    @property
    def busy(self) -> bool:
        """True while a job that is still wanted runs, waits its turn, or has ended but
        its answer has not yet reached ``on_done``/``on_error`` (it goes through the event
        loop): a caller that sees False finds the last answer already handed over."""
        with self._cond:
            return any(not j.cancelled for j in (*self._live, *self._undelivered, *self._queued.values()))

    @property
    def running(self) -> int:
        """How many of these jobs are at work on their thread (cancelled ones included)."""
        with self._cond:
            return len(self._live)

    def cancel(self, latest: Any = None) -> None:
        """Cancel every job (or only those of the ``latest`` key): nothing more is delivered."""
        with self._cond:
            for job in [*self._live, *self._undelivered, *self._queued.values()]:
                if latest is None or job._latest == latest:
                    job.cancel()
            self._queued = {k: j for k, j in self._queued.items() if not j.cancelled}
            self._cond.notify_all()

    def wait(self, timeout_s: float | None = None) -> bool:
        """Block until no job runs or waits its turn (tests, screenshots, close); what
        they deliver then comes with the next pass of the event loop.

        Returns:
            True when all have ended, False when ``timeout_s`` seconds passed first.
        """
        with self._cond:
            if not self._cond.wait_for(self._idle, timeout_s):
                return False
            threads, self._threads = self._threads, []
        for thread in threads:
            if thread.ident is not None:  # None: the launcher could not start it
                thread.join()  # past its last line: returns at once
        return True

    def shutdown(self, wait: bool = True) -> None:
        """The owner closes: cancel every job, start none again, and (``wait``) block
        until their worker threads have ended. Idempotent."""
        self.closed = True
        self.cancel()
        if wait:
            self.wait()

    def _owner_gone(self, *_args) -> None:
        self.closed = True
        self.cancel()


def _launch(job: Job) -> None:
    """Queue ``job`` for the launcher, made on first use."""
    global _launcher
    with _LOCK:
        if _launcher is None:
            _launcher = threading.Thread(target=_launch_loop, name="jobs-launcher", daemon=True)
            _launcher.start()
    _TO_START.put(job)


def _launch_loop() -> None:
    """The launcher thread: start each queued job's thread, in the order asked."""
    while True:
        job = _TO_START.get()
        try:
            job._thread.start()
        except Exception as exc:  # noqa: BLE001 - no thread to be had: the job ends with the error
            job._error = exc
            job._end()


def running_anywhere() -> int:
    """How many jobs' worker threads run in the whole process (all owners)."""
    with _LOCK:
        return len(_RUNNING)


def _wait_all() -> None:
    """At interpreter exit: cancel every job still running and wait for its thread."""
    with _LOCK:
        jobs = list(_RUNNING)
    for job in jobs:
        job.cancel()
    for job in jobs:
        job.wait()


atexit.register(_wait_all)

"""The one background-work helper (widgets/kit/jobs.py, issue 36): answers on the GUI
thread, cancel, stale answers dropped, errors delivered, an owner gone mid-job."""

from __future__ import annotations

import threading

from narrative_debugger.widgets.kit.jobs import Jobs
from PySide6.QtCore import QObject, QThread
from PySide6.QtWidgets import QApplication


def _gate():
    """A job that blocks until the test opens its gate, then returns ``value``."""
    gate = threading.Event()

    def work(value):
        gate.wait(10)
        return value

    return gate, work


def test_the_answer_and_the_progress_arrive_on_the_gui_thread(qtbot):
    owner = QObject()
    jobs = Jobs(owner)
    seen = []

    def work(job, n):
        job.report(1, "half")
        return (n * 2, QThread.currentThread() is QApplication.instance().thread())

    progress = lambda *values: seen.append(("progress", values, QThread.currentThread() is QApplication.instance().thread()))
    done = lambda result: seen.append(("done", result, QThread.currentThread() is QApplication.instance().thread()))
    jobs.run(work, 21, takes_job=True, on_done=done, on_progress=progress)
    qtbot.waitUntil(lambda: len(seen) == 2, timeout=5000)
    assert seen == [("progress", (1, "half"), True), ("done", (42, False), True)]  # worked off it, answered on it
    assert not jobs.busy and jobs.running == 0


def test_an_error_reaches_on_error_with_the_exception(qtbot):
    owner = QObject()
    jobs = Jobs(owner)
    errors, done = [], []

    def broken():
        raise ValueError("no such tick")

    jobs.run(broken, on_done=done.append, on_error=errors.append)
    qtbot.waitUntil(lambda: bool(errors), timeout=5000)
    assert [type(e) for e in errors] == [ValueError] and str(errors[0]) == "no such tick"
    assert done == []


def test_a_cancelled_job_delivers_nothing_and_its_worker_sees_it(qtbot):
    owner = QObject()
    jobs = Jobs(owner)
    gate, _ = _gate()
    seen, saw_cancel = [], []

    def work(job):
        gate.wait(10)
        saw_cancel.append(job.cancelled)
        job.report("late")
        return "late"

    job = jobs.run(work, takes_job=True, on_done=seen.append, on_progress=seen.append, on_error=seen.append)
    assert jobs.busy and job.running
    job.cancel()
    assert not jobs.busy  # nothing wanted any more, though the worker still runs
    assert jobs.running == 1
    gate.set()
    assert jobs.wait(10)
    # A marker job queued after it: once its answer is in, the cancelled one's would be too.
    marker = []
    jobs.run(lambda: "marker", on_done=marker.append)
    qtbot.waitUntil(lambda: marker == ["marker"], timeout=5000)
    assert seen == [] and saw_cancel == [True]


def test_a_newer_job_of_the_same_key_supersedes_the_older_ones(qtbot):
    """The one running is cancelled and runs to its end; the one waiting its turn is
    dropped without running; only the newest answers, after the running one ended."""
    owner = QObject()
    jobs = Jobs(owner)
    gate, work = _gate()
    ran, done = [], []

    def record(value):
        ran.append(value)
        return value

    first = jobs.run(work, "first", latest="q", on_done=done.append)
    second = jobs.run(record, "second", latest="q", on_done=done.append)
    third = jobs.run(record, "third", latest="q", on_done=done.append)
    assert first.cancelled and second.cancelled and not third.cancelled
    assert jobs.running == 1 and jobs.busy  # the third waits for the first to end
    gate.set()
    qtbot.waitUntil(lambda: done == ["third"], timeout=5000)
    assert ran == ["third"]
    assert jobs.wait(10) and not jobs.busy


def test_jobs_of_other_keys_run_side_by_side(qtbot):
    owner = QObject()
    jobs = Jobs(owner)
    gate, work = _gate()
    done = []
    jobs.run(work, "a", latest="a", on_done=done.append)
    jobs.run(lambda: "b", latest="b", on_done=done.append)
    qtbot.waitUntil(lambda: done == ["b"], timeout=5000)  # "a" still blocks
    gate.set()
    qtbot.waitUntil(lambda: done == ["b", "a"], timeout=5000)


def test_the_owner_destroyed_mid_job_gets_no_late_callback(qtbot):
    owner = QObject()
    jobs = Jobs(owner)
    gate, work = _gate()
    seen = []
    job = jobs.run(work, "late", on_done=seen.append, on_error=seen.append)
    with qtbot.waitSignal(owner.destroyed, timeout=5000):
        owner.deleteLater()
    assert job.cancelled and job.running  # the worker thread was not destroyed
    gate.set()
    assert jobs.wait(10)
    marker = []  # an unrelated owner's answer, queued after any delivery of the job
    keep = QObject()
    other = Jobs(keep)
    other.run(lambda: 1, on_done=marker.append)
    qtbot.waitUntil(lambda: marker == [1], timeout=5000)
    assert seen == []
    assert jobs.run(lambda: 2, on_done=seen.append).cancelled  # nothing starts after


def test_shutdown_cancels_and_waits_for_every_worker(qtbot):
    owner = QObject()
    jobs = Jobs(owner)
    started = threading.Event()
    seen = []

    def work(job):
        started.set()
        job.stop.wait(10)  # a long job that stops once cancelled
        return "stopped"

    jobs.run(work, takes_job=True, on_done=seen.append)
    assert started.wait(10)
    jobs.shutdown()
    assert jobs.running == 0 and not jobs.busy
    assert jobs.run(lambda: 1, on_done=seen.append).cancelled
    marker = []
    Jobs(owner).run(lambda: 0, on_done=marker.append)
    qtbot.waitUntil(lambda: marker == [0], timeout=5000)
    assert seen == []


def test_run_leaves_starting_the_thread_to_the_launcher(qtbot, monkeypatch):
    # Thread.start waits until the new thread runs: on a busy machine the GUI thread
    # waited up to 20 ms at a tick step (each step asks for a prompt preview). The
    # caller only queues the job; its own thread is still the one that works it.
    real_start = threading.Thread.start
    starters = []

    def start(thread):
        if thread.name.startswith("job-"):
            starters.append(threading.current_thread())
        real_start(thread)

    monkeypatch.setattr(threading.Thread, "start", start)
    owner = QObject()
    jobs = Jobs(owner)
    gate, work = _gate()
    workers, done = [], []

    def job_body(value):
        workers.append(threading.current_thread())
        return work(value)

    job = jobs.run(job_body, 5, on_done=done.append)
    assert job.running and jobs.busy  # from the run on, before the thread may have run
    gate.set()
    qtbot.waitUntil(lambda: done == [5], timeout=5000)
    assert job.wait(5) and not job.running and jobs.wait(5)
    assert starters and threading.main_thread() not in starters
    assert workers[0].name.startswith("job-") and workers[0] is not starters[0]


def test_busy_until_the_answer_reaches_on_done(qtbot):
    # The worker ends on its thread; its answer reaches on_done with the next pass of the
    # event loop. busy went False in between, so a caller polling "not busy" (the prompt
    # view's busy, tests' waitUntil) read the previous answer as the current one: under
    # the load of two pytest-xdist workers, test_window_layout's prompt test saw 6 cards.
    owner = QObject()
    jobs = Jobs(owner)
    done = []
    job = jobs.run(lambda: "answer", on_done=done.append)
    assert job.wait(10) and done == []  # ended, not yet delivered: no event loop pass yet
    assert jobs.busy
    qtbot.waitUntil(lambda: not jobs.busy, timeout=5000)
    assert done == ["answer"]


def test_cancel_drops_an_answer_already_on_its_way(qtbot):
    # "cancel: nothing more is delivered" held only for jobs still at work: one whose
    # worker had ended still handed its answer to on_done at the next event loop pass.
    owner = QObject()
    jobs = Jobs(owner)
    done = []
    job = jobs.run(lambda: "stale", on_done=done.append)
    assert job.wait(10)
    jobs.cancel()
    assert not jobs.busy
    marker = []
    Jobs(owner).run(lambda: 0, on_done=marker.append)  # answers are delivered in order
    qtbot.waitUntil(lambda: marker == [0], timeout=5000)
    assert done == []

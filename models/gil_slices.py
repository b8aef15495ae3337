"""C-level passes cut short, so a worker thread lets go of the GIL between them,
and checks between them whether its load was cancelled.

A save opens in a worker thread while the GUI thread paints. CPython switches threads
only between bytecodes: one C call over a million items (a sort, a set, a conversion,
a free) holds the GIL from start to end, and the window cannot paint meanwhile (the
app allows itself 50 ms, issue 10). Loader code therefore works over long sequences a slice of
``C_PASS_ITEMS`` at a time, a few milliseconds each.

Letting go between slices is not enough while the GUI thread is busy: each Qt call
it makes releases the GIL and takes it back, and a worker that wants the GIL takes
it in between. Laying out or painting a window makes thousands of such calls, and
each one waits for the worker: GUI work then takes several times as long, one
context switch per call. A worker that
runs inside ``giving_way(clock)`` therefore pauses in ``give_way()``, called between
its slices, while the thread whose CPU-time clock that is (the GUI thread's) is
busy: while it used more than ``BUSY_SHARE`` of a core since the last look. Qt's
event dispatcher says when its loop goes to sleep but not, with glib, when it wakes
before its work (its ``awake`` comes after the work); the GUI thread's CPU time
tells, at any moment, from any thread, cheaply.
"""

from __future__ import annotations

import heapq
import sys
import threading
import time
from contextlib import contextmanager

#: Items per C-level pass over a long sequence (entries, ticks, keys): a few
#: milliseconds each. The modules that cut passes (``save.fastjson``,
#: ``save.saveshape``, ``timeline.event_kinds``, ``rules.checks``) derive their slices from it.
C_PASS_ITEMS = 1 << 15

#: Items per sort of one run in ``sorted_in_slices``: sorting compares (a dozen times
#: an item for a random order), so runs are shorter than ``C_PASS_ITEMS``.
SORT_RUN_ITEMS = 1 << 13


def sorted_in_slices(items: list) -> list:
    """``sorted(items)``, with no single C call sorting more than ``SORT_RUN_ITEMS``
    items: runs of that size are sorted one at a time, then merged by ``heapq.merge``,
    whose steps are Python code, between which the GIL can go to another thread.
    One sort of a large save's FactIds holds the GIL past the window's budget, and so
    does a C merge of the sorted runs (one last ``sort``); the Python merge costs more
    in all but lets go between its steps.

    Args:
        items: a list of mutually comparable values (not changed).

    Returns:
        A new list, equal to ``sorted(items)``. Raises what ``sorted`` raises.
    """
    if len(items) <= SORT_RUN_ITEMS:
        return sorted(items)
    runs = []
    for start in range(0, len(items), SORT_RUN_ITEMS):
        give_way()
        runs.append(sorted(items[start : start + SORT_RUN_ITEMS]))
    return list(heapq.merge(*runs))


_THREAD = threading.local()

#: The longest a worker pauses in one ``give_way()`` for a busy GUI thread (seconds):
#: a GUI thread busy for good (a drag, a stream of timer slots) still leaves the
#: worker a slice between two pauses.
GIVE_WAY_MAX_S = 0.05
#: A thread that used more than this share of one core since the last look is busy.
BUSY_SHARE = 0.15
#: While the GUI thread is busy, the worker looks again after this long (seconds).
LOOK_AGAIN_S = 0.001


class _Way:
    """Whom this thread gives way to: a thread's CPU-time clock, and its CPU time at
    the last look (seconds) with the wall time of that look."""

    __slots__ = ("clock", "cpu", "wall")

    def __init__(self, clock: int) -> None:
        self.clock = clock
        self.cpu = time.clock_gettime(clock)
        self.wall = time.perf_counter()


def thread_clock() -> int | None:
    """The CPU-time clock of the calling thread (for ``giving_way``), None where the
    platform has none (the worker then never pauses)."""
    try:
        clock = time.pthread_getcpuclockid(threading.get_ident())
        time.clock_gettime(clock)
    except (AttributeError, OSError):
        return None
    return clock


@contextmanager
def giving_way(clock: int | None):
    """While inside, ``give_way()`` in this thread pauses (at most ``GIVE_WAY_MAX_S``)
    while the thread of ``clock`` (``thread_clock()`` of the GUI thread) is busy;
    None: it never pauses. Other threads are not affected."""
    previous = getattr(_THREAD, "way", None)
    _THREAD.way = _Way(clock) if clock is not None else None
    try:
        yield
    finally:
        _THREAD.way = previous


def give_way() -> None:
    """Called by long work between two short slices (a few milliseconds each): in a
    worker inside ``giving_way``, pauses while the GUI thread is busy; elsewhere (the
    GUI thread, the command line, tests) returns at once. Costs ~1 us when it does
    not pause."""
    way = getattr(_THREAD, "way", None)
    if way is None:
        return
    clock = way.clock
    wall, cpu = time.perf_counter(), time.clock_gettime(clock)
    if cpu - way.cpu > BUSY_SHARE * (wall - way.wall):
        until = wall + GIVE_WAY_MAX_S
        while wall < until:
            time.sleep(LOOK_AGAIN_S)
            now, used = time.perf_counter(), time.clock_gettime(clock)
            idle = used - cpu <= BUSY_SHARE * (now - wall)
            wall, cpu = now, used
            if idle:
                break
    way.wall, way.cpu = wall, cpu


#: Items of a Python loop between two ``give_way`` calls in ``with_give_way``: a few
#: milliseconds of a check's or an index's work.
LOOP_ITEMS = 1 << 10


def with_give_way(items, every: int = LOOP_ITEMS):
    """``items`` (any iterable), one by one, calling ``give_way()`` before every
    ``every``-th: for a long Python loop run by a worker (a check over 70 000 facts)."""
    for k, item in enumerate(items):
        if not k % every:
            give_way()
        yield item


#: Items freed between two ``give_way`` calls by ``release_in_steps`` (entries of a
#: decoded journal: a few milliseconds).
RELEASE_ITEMS = C_PASS_ITEMS
#: A list or dict inside another with more items than this is freed in steps of its own.
NESTED_ITEMS = 64


def release_in_steps(value) -> None:
    """Empty ``value`` (a list or dict) in place, and the large lists and dicts inside
    it that nothing else holds, ``RELEASE_ITEMS`` items at a time, giving way between
    (``give_way``). Anything else is left alone. For decoded JSON that nothing reads
    any more: freeing it at once is one C-level cascade that holds the GIL for as long
    as it takes (a million journal entries: past the window's budget). A list or dict inside that something else still holds
    (a parsed value kept as decoded) is only let go of, never emptied."""
    stack = [value] if type(value) in (list, dict) else []
    freed = 0
    while stack:
        container = stack[-1]
        if not container:
            stack.pop()
            continue
        is_dict = type(container) is dict
        last = container.popitem()[1] if is_dict else container[-1]
        if type(last) in (list, dict) and len(last) > NESTED_ITEMS:
            if not is_dict:
                container.pop()
            if sys.getrefcount(last) == 2:  # this name and the call's argument: ours alone
                stack.append(last)  # emptied in steps too, before the rest of its container
            freed += 1
        elif is_dict:
            freed += 1 + (len(last) if type(last) in (list, dict) else 0)
        else:
            n = min(len(container), max(1, RELEASE_ITEMS - freed))
            del container[-n:]
            freed += n
        del last
        if freed >= RELEASE_ITEMS:
            freed = 0
            give_way()


class Cancelled(Exception):
    """Raised by ``Playthrough.open`` (and by ``checkpoint`` inside it) when its
    ``cancelled`` callback says so."""


@contextmanager
def cancellable(cancelled, progress=None):
    """While inside, ``checkpoint()`` in this thread raises ``Cancelled`` once
    ``cancelled()`` returns True (None: never), and passes how far a named pass has got
    to ``progress(stage, fraction 0..1)`` (None: nobody asks). Nests; other threads are
    not affected."""
    previous = getattr(_THREAD, "load", None)
    _THREAD.load = (cancelled, progress)
    try:
        yield
    finally:
        _THREAD.load = previous


def checkpoint(stage: str | None = None, done: int = 0, total: int = 0) -> None:
    """Called between two slices of a long pass (reading, scanning, decoding a save):
    raises ``Cancelled`` when this thread's load was cancelled, and reports ``done`` of
    ``total`` (bytes) of the pass ``stage`` (``"read"``, ``"scan"``, ``"journal"``).

    Checked only at progress reports, seconds apart, a load cancelled or replaced
    while the file is read would run on, holding its memory while a newer load
    starts (several cancelled opens alive at once), and the progress bar would not
    move for a large part of an open."""
    give_way()
    load = getattr(_THREAD, "load", None)
    if load is None:
        return
    cancelled, progress = load
    if cancelled is not None and cancelled():
        raise Cancelled()
    if progress is not None and stage is not None and total > 0:
        progress(stage, min(1.0, done / total))

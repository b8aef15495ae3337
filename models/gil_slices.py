"""C-level passes cut short, so a worker thread lets go of the GIL between them (issue 10),
and checks between them whether its load was cancelled.

A save opens in a worker thread while the GUI thread paints. CPython switches threads
only between bytecodes: one C call over a million items (a sort, a set, a conversion,
a free) holds the GIL from start to end, and the window cannot paint meanwhile (the
app allows itself 50 ms). Loader code therefore works over long sequences a slice of
``C_PASS_ITEMS`` at a time; each slice is a few milliseconds.
"""

from __future__ import annotations

import heapq
import threading
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
    Sorting 66 000 FactIds at once held the GIL 35-45 ms; a C merge of the sorted runs
    (one last ``sort``) still held it 31-37 ms for the 73 000 FactIds of a 3 000-NPC
    save. The Python merge costs more in all (58 ms against 31 ms there).

    Args:
        items: a list of mutually comparable values (not changed).

    Returns:
        A new list, equal to ``sorted(items)``. Raises what ``sorted`` raises.
    """
    if len(items) <= SORT_RUN_ITEMS:
        return sorted(items)
    runs = [sorted(items[start : start + SORT_RUN_ITEMS]) for start in range(0, len(items), SORT_RUN_ITEMS)]
    return list(heapq.merge(*runs))


class Cancelled(Exception):
    """Raised by ``Playthrough.open`` (and by ``checkpoint`` inside it) when its
    ``cancelled`` callback says so."""


_THREAD = threading.local()


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

    Before, a load cancelled or replaced while the file was read ran on to the next
    progress report, seconds later, each holding its ~1 GB while a newer load started
    (a new-user trial: six cancelled opens alive at once, 2.3 GB, the last open 27 s
    instead of 7), and the progress bar sat at 0 % for the first 40 % of an open."""
    load = getattr(_THREAD, "load", None)
    if load is None:
        return
    cancelled, progress = load
    if cancelled is not None and cancelled():
        raise Cancelled()
    if progress is not None and stage is not None and total > 0:
        progress(stage, min(1.0, done / total))

"""How far a load has got, and whether it was cancelled, asked from deep inside it.

``Playthrough.open`` reads a save in passes (read, scan, decode the journal) that take
seconds on a large save. Between two pieces of a pass the reader calls
``checkpoint(stage, done, total)``: inside ``reporting(cancelled, progress)`` that
raises ``Cancelled`` once ``cancelled()`` says so and passes how far the pass has got
to ``progress``; elsewhere (the command line, tests) it does nothing. The state is per
thread, so two loads in two threads never see each other's.
"""

from __future__ import annotations

import threading
from contextlib import contextmanager

_THREAD = threading.local()


class Cancelled(Exception):
    """Raised by ``Playthrough.open`` (and by ``checkpoint`` inside it) when its
    ``cancelled`` callback says so."""


@contextmanager
def reporting(cancelled, progress=None):
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
    """Called between two pieces of a long pass (reading, scanning, decoding a save):
    raises ``Cancelled`` when this thread's load was cancelled, and reports ``done`` of
    ``total`` (bytes) of the pass ``stage`` (``"read"``, ``"scan"``, ``"journal"``)."""
    load = getattr(_THREAD, "load", None)
    if load is None:
        return
    cancelled, progress = load
    if cancelled is not None and cancelled():
        raise Cancelled()
    if progress is not None and stage is not None and total > 0:
        progress(stage, min(1.0, done / total))

"""Letting go of a playthrough the window no longer shows, without stalling it.

Dropping the last reference to a large playthrough frees millions of objects in one
C-level cascade that holds the GIL for about a second (1 000 000 events), and the
GUI thread pays it wherever that reference goes: on every reopen, and on every
reload when the game saves again. ``Graveyard.bury`` takes the playthrough instead,
with what the views prepared for it (a ``kit.prepared.Prepared``); once nothing else
holds the playthrough (no view, job or comparison), a worker (a ``kit.jobs`` job of
the graveyard) empties both with ``models.playthrough.release_steps``, yielding the
GIL between steps.
"""

from __future__ import annotations

import sys
import time

from narrative_debugger.models.playthrough import Playthrough, release_steps
from narrative_debugger.widgets.kit.prepared import Prepared
from narrative_debugger.widgets.kit.jobs import Job, Jobs
from PySide6.QtCore import QObject, QTimer

#: How often buried playthroughs are looked at, ms.
POLL_MS = 250


class Graveyard(QObject):
    """Playthroughs waiting to be freed off the GUI thread (see the module doc)."""

    def __init__(self, parent: QObject | None = None) -> None:
        super().__init__(parent)
        self._buried: list[tuple[Playthrough, Prepared | None]] = []
        self._jobs = Jobs(self)
        self._timer = QTimer(self)
        self._timer.setInterval(POLL_MS)
        self._timer.timeout.connect(self._look)

    def bury(self, play: Playthrough | None, prepared: Prepared | None = None) -> None:
        """Take a playthrough the window has let go of, and what the views prepared for
        it (None and repeats are ignored)."""
        if play is None or any(p is play for p, _ in self._buried):
            return
        self._buried.append((play, prepared))
        self._timer.start()

    @property
    def waiting(self) -> int:
        """Playthroughs buried and not yet handed to a worker."""
        return len(self._buried)

    @property
    def busy(self) -> bool:
        """True while a worker is still freeing one."""
        return self._jobs.running > 0

    def _look(self) -> None:
        k = 0
        while k < len(self._buried):
            if not self._alone(k):
                k += 1
                continue
            self._jobs.run(_free, [self._buried.pop(k)], takes_job=True)
        if not self._buried:
            self._timer.stop()

    def _alone(self, k: int) -> bool:
        """Nothing but the graveyard holds buried playthrough ``k``, its save or its index."""
        play = self._buried[k][0]
        # The pair's slot, the name ``play`` and the argument of getrefcount.
        if sys.getrefcount(play) > 3:
            return False
        # Each part: the playthrough's attribute and the argument.
        return sys.getrefcount(play.save) <= 2 and (play.index is None or sys.getrefcount(play.index) <= 2)

    def shutdown(self) -> None:
        """Stop looking; a worker still freeing one finishes without pausing between
        steps (the window is closing), and the close does not wait for it."""
        self._timer.stop()
        self._jobs.shutdown(wait=False)


def _free(job: Job, holder: list) -> None:
    """Worker thread: empty the playthrough a step at a time, then drop it."""
    play, prepared = holder.pop()
    for _ in release_steps(play, also=prepared.containers() if prepared is not None else []):
        if not job.cancelled:
            time.sleep(0.001)  # let the GUI thread take the GIL between steps
    del play, prepared

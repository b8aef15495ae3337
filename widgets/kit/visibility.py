"""When a view may put off its refresh: it is hidden behind another tab or dock, or
the tick is being dragged.

A view whose window is on screen but which is not itself visible (a tab behind the
one in front, a closed dock) need not refresh on every tick step: it refreshes in
its ``showEvent``. A view not yet shown in any window (built alone, as tests and
headless tools do) refreshes at once, as before.

While the tick is dragged, a pane that is costly to redraw follows the drag once it
pauses (:func:`after_pause`, superqt's ``qdebounced``) instead of on every frame; the
committed tick refreshes it as usual.
"""

from __future__ import annotations

from collections.abc import Callable

from PySide6.QtCore import QObject
from PySide6.QtWidgets import QWidget
from superqt.utils import qdebounced

#: How long a drag must pause before an ``after_pause`` action runs (ms).
PAUSE_MS = 120


def obscured(widget: QWidget) -> bool:
    """True when ``widget``'s window is visible but ``widget`` is not."""
    return not widget.isVisible() and widget.window().isVisible()


def held(widget: QWidget) -> bool:
    """True while the window holds ``widget``'s paint after a load (``MainWindow._hold_paint``).

    Its dock paints in a later pass of its own; a costly dock puts its refresh off until
    then and catches up in ``catch_up()``, which the window calls just before the dock
    paints (issue 10: the pass that hands a save to the views stays under 50 ms)."""
    return not widget.updatesEnabled() and widget.isVisible()


def after_pause(action: Callable[[object], None], parent: QObject):
    """``action`` debounced: calling the result with a value calls ``action`` with the last
    value once no other has come for ``PAUSE_MS``; its ``cancel()`` forgets a waiting value
    (the tick was committed meanwhile). superqt's ``qdebounced`` (trailing edge, precise
    timer), owned by ``parent``, whose deletion stops it."""
    return qdebounced(action, timeout=PAUSE_MS, parent=parent)

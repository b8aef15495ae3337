"""When a view may put off its refresh: it is hidden behind another tab or dock, or
the tick is being dragged.

A view whose window is on screen but which is not itself visible (a tab behind the
one in front, a closed dock) need not refresh on every tick step: it refreshes in
its ``showEvent``. A view not yet shown in any window (built alone, as tests and
headless tools do) refreshes at once, as before.

While the tick is dragged, a pane that is costly to redraw follows the drag once it
pauses (``AfterPause``) instead of on every frame; the committed tick refreshes it as
usual.
"""

from __future__ import annotations

from collections.abc import Callable

from PySide6.QtCore import QObject, QTimer
from PySide6.QtWidgets import QWidget

#: How long a drag must pause before ``AfterPause`` calls (ms).
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


class AfterPause(QObject):
    """Calls ``action(value)`` with the last value given to ``__call__`` once no other has
    come for ``PAUSE_MS``; ``cancel`` forgets it (the tick was committed meanwhile).

    Owned by its parent, whose deletion stops the timer.
    """

    def __init__(self, action: Callable[[object], None], parent: QObject) -> None:
        super().__init__(parent)
        self._action = action
        self._value = None
        self._timer = QTimer(self)
        self._timer.setSingleShot(True)
        self._timer.setInterval(PAUSE_MS)
        self._timer.timeout.connect(self._fire)

    def __call__(self, value) -> None:
        self._value = value
        self._timer.start()

    @property
    def pending(self) -> bool:
        """True while a value waits for the pause."""
        return self._timer.isActive()

    def cancel(self) -> None:
        self._timer.stop()

    def _fire(self) -> None:
        self._action(self._value)

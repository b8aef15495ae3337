"""When a view may put off its refresh: it is hidden behind another tab or dock.

A view whose window is on screen but which is not itself visible (a tab behind the
one in front, a closed dock) need not refresh on every tick step: it refreshes in
its ``showEvent``. A view not yet shown in any window (built alone, as tests and
headless tools do) refreshes at once, as before.
"""

from __future__ import annotations

from PySide6.QtWidgets import QWidget


def obscured(widget: QWidget) -> bool:
    """True when ``widget``'s window is visible but ``widget`` is not."""
    return not widget.isVisible() and widget.window().isVisible()

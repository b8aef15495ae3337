"""Accessible names for the window's controls, so a screen reader can name each one.

``name_controls`` gives the tick bar, every view (from ``widgets.registry.VIEWS``),
every dock (``DOCKS``) and the controls inside them an accessible name when they have
none: a view or dock by its title; a table or drawing by its owner's title; a button,
combo box, spin box or text box by its text, tooltip or placeholder. Names a widget
sets for itself are kept.
"""

from __future__ import annotations

from narrative_debugger.widgets.registry import DOCKS, VIEWS
from PySide6.QtWidgets import (
    QAbstractButton,
    QAbstractItemView,
    QAbstractSpinBox,
    QComboBox,
    QGraphicsView,
    QHeaderView,
    QLineEdit,
    QWidget,
)

#: The kinds of control that get a name (the views and docks themselves are named by title).
CONTROLS = (QAbstractItemView, QGraphicsView, QAbstractButton, QComboBox, QAbstractSpinBox, QLineEdit)


def _first_sentence(text: str) -> str:
    return text.split("\n")[0].split(" (")[0].split("; ")[0].strip()


def control_name(widget: QWidget, owner: str) -> str:
    """A name for a control inside the view or dock titled ``owner``."""
    if isinstance(widget, QAbstractButton) and widget.text().strip("&. …"):
        return widget.text().replace("&", "")
    tip = _first_sentence(widget.toolTip()) if widget.toolTip() else ""
    if isinstance(widget, QLineEdit) and not tip and widget.placeholderText():
        tip = widget.placeholderText().rstrip("…. ")
    if tip:
        return f"{owner}: {tip}"
    if isinstance(widget, QHeaderView):
        return f"{owner} table header"
    if isinstance(widget, QAbstractItemView):
        return f"{owner} table"
    if isinstance(widget, QGraphicsView):
        return f"{owner} drawing"
    return f"{owner}: {widget.objectName() or type(widget).__name__}"


def _name_inside(root: QWidget, owner: str) -> None:
    if not root.accessibleName():
        root.setAccessibleName(owner)
    for widget in root.findChildren(QWidget):
        if isinstance(widget, CONTROLS) and not widget.accessibleName():
            widget.setAccessibleName(control_name(widget, owner))


def name_controls(window) -> None:
    """Name the main window's tick bar, views, docks and their controls (see the module doc).

    Args:
        window: the ``MainWindow`` (its ``tickbar``, ``views``, ``frames``, ``docks``, ``tabs``).
    """
    window.tabs.setAccessibleName("Views")
    _name_inside(window.tickbar, "Tick bar")
    window.tickbar.track.setAccessibleName("Tick bar: ticks and event markers (drag to scrub)")
    for spec in VIEWS:
        window.frames[spec.name].setAccessibleName(f"{spec.title} view")
        _name_inside(window.views[spec.name], spec.title)
    for spec in DOCKS:
        dock = window.docks.get(spec.name)
        if dock is None:
            continue
        dock.setAccessibleName(f"{spec.title} panel")
        _name_inside(dock.widget(), spec.title)

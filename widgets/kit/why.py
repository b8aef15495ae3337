"""The "Why?" action every view puts on what it shows (issue 11).

A view calls ``add_why_action(widget, session, target_for)``: the widget gains a
"Why?" entry in its context menu and the shortcut ``WHY_SHORTCUT`` while it (or a
child) has the focus. ``target_for()`` names the target of the selected item in
``models.explain`` form (``npc:kael-davan.score``, ``fact:...``, ``line:...``,
``card:SLUG/ID``, ``history:SLUG``), or None when nothing explainable is selected;
the action then asks the session (``Session.explain``), and the Explain dock answers.
"""

from __future__ import annotations

from typing import Callable

from PySide6.QtCore import Qt
from PySide6.QtGui import QAction, QKeySequence
from PySide6.QtWidgets import QWidget

#: The one shortcut for "Why?" on the selected item, in every view.
WHY_SHORTCUT = "F1"


def add_why_action(widget: QWidget, session, target_for: Callable[[], str | None], text: str = "Why?") -> QAction:
    """Give ``widget`` a "Why?" context-menu entry and the F1 shortcut (focus inside it).

    The widget's context menu becomes its actions (``Qt.ActionsContextMenu``); a
    right click on a table row selects that row first, so the menu concerns it.
    """
    action = QAction(text, widget)
    action.setObjectName("action-why")
    action.setShortcut(QKeySequence(WHY_SHORTCUT))
    action.setShortcutContext(Qt.WidgetWithChildrenShortcut)
    action.setToolTip(f"Explain the selected value from the journal entries that made it ({WHY_SHORTCUT})")

    def trigger() -> None:
        target = target_for()
        if target:
            session.explain(target)

    action.triggered.connect(trigger)
    widget.addAction(action)
    widget.setContextMenuPolicy(Qt.ActionsContextMenu)
    return action

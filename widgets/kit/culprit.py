"""What the views share to show a finding's culprit: its colour, a small field/value
table with marked rows, and selecting rows so they are in view.

A culprit is selected (the view's selection), scrolled into view (centred) and
highlighted (``CULPRIT_BG``, kept when the selection moves on).
"""

from __future__ import annotations

from collections.abc import Iterable

from narrative_debugger.widgets.kit.state_colors import brush_of, row_tint
from narrative_debugger.widgets.kit.plain_text import plain_tip
from narrative_debugger.widgets.kit.tables import HeaderedTableModel
from narrative_debugger.widgets.kit.roles import BACKGROUND as _BACKGROUND, DISPLAY as _DISPLAY, FONT as _FONT, TOOLTIP as _TOOLTIP
from PySide6.QtCore import QItemSelection, QItemSelectionModel, QModelIndex, Qt
from PySide6.QtGui import QColor, QFont
from PySide6.QtWidgets import QAbstractItemView, QTableView

#: The background of a culprit row in every view.
CULPRIT_BG = QColor("#ffd0c8")


class PairsModel(HeaderedTableModel):
    """Rows of text cells, some marked as the culprit (bold on ``CULPRIT_BG``).

    ``rows`` are tuples of cell texts (plain text, never markup) with one bool at the
    end: True for a culprit row.
    """

    def __init__(self, headers: tuple[str, ...], parent=None) -> None:
        super().__init__(parent)
        self.HEADERS = headers
        self.rows: list[tuple] = []
        self._bold = QFont()
        self._bold.setBold(True)

    def set_rows(self, rows: Iterable[tuple]) -> None:
        self.beginResetModel()
        self.rows = list(rows)
        self.endResetModel()

    def marked(self) -> list[int]:
        """The rows marked as the culprit."""
        return [k for k, row in enumerate(self.rows) if row[-1]]

    def rowCount(self, parent=QModelIndex()) -> int:  # noqa: N802 (Qt override)
        return 0 if parent.isValid() else len(self.rows)

    def data(self, index: QModelIndex, role=Qt.DisplayRole):
        if not index.isValid():
            return None
        row = self.rows[index.row()]
        role = int(role)
        if role == _DISPLAY:
            return str(row[index.column()])
        if role == _TOOLTIP:
            return plain_tip(str(row[index.column()]))
        if row[-1] and role == _BACKGROUND:
            return brush_of(row_tint(CULPRIT_BG))
        if row[-1] and role == _FONT:
            return self._bold
        return None


def select_rows(view: QTableView, rows: list[int], scroll_to: int | None = None) -> None:
    """Select whole ``rows`` of ``view`` (replacing the selection) and centre ``scroll_to``
    (default: the first of them) in the viewport."""
    model = view.model()
    selection = QItemSelection()
    last_col = max(0, model.columnCount() - 1)
    for row in rows:
        if 0 <= row < model.rowCount():
            selection.select(model.index(row, 0), model.index(row, last_col))
    sm = view.selectionModel()
    sm.select(selection, QItemSelectionModel.ClearAndSelect | QItemSelectionModel.Rows)
    target = scroll_to if scroll_to is not None else (rows[0] if rows else None)
    if target is not None and 0 <= target < model.rowCount():
        index = model.index(target, 0)
        sm.setCurrentIndex(index, QItemSelectionModel.NoUpdate)
        view.scrollTo(index, QAbstractItemView.PositionAtCenter)


def row_visible(view: QTableView, row: int, whole: bool = False) -> bool:
    """True when ``row`` is shown in the viewport (at least partly, or ``whole``)."""
    if row < 0 or view.isRowHidden(row):
        return False
    rect = view.visualRect(view.model().index(row, 0))
    if not rect.isValid():
        return False
    viewport = view.viewport().rect()
    return rect.top() >= viewport.top() and rect.bottom() <= viewport.bottom() if whole else rect.intersects(viewport)

"""Pieces every table view here shares: a model base with fixed column headers, and a
read-only, row-selecting QTableView."""

from __future__ import annotations

from PySide6.QtCore import QAbstractTableModel, QModelIndex, Qt
from PySide6.QtWidgets import QAbstractItemView, QTableView, QWidget

_DISPLAY = int(Qt.DisplayRole.value)


class HeaderedTableModel(QAbstractTableModel):
    """A table model whose columns are the class attribute ``HEADERS`` (a tuple of titles).

    Subclasses provide ``rowCount`` and ``data``.
    """

    HEADERS: tuple[str, ...] = ()

    def columnCount(self, parent=QModelIndex()) -> int:  # noqa: N802 (Qt override)
        return 0 if parent.isValid() else len(self.HEADERS)

    def headerData(self, section, orientation, role=Qt.DisplayRole):  # noqa: N802 (Qt override)
        if orientation == Qt.Horizontal and int(role) == _DISPLAY:
            return self.HEADERS[section]
        return None


def read_only_table(model, name: str, parent: QWidget | None = None) -> QTableView:
    """A QTableView over ``model`` that selects whole rows and never edits."""
    view = QTableView(parent)
    view.setObjectName(name)
    view.setModel(model)
    view.setSelectionBehavior(QAbstractItemView.SelectRows)
    view.setEditTriggers(QAbstractItemView.NoEditTriggers)
    return view

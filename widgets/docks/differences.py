"""The Differences dock: every difference between A and B while comparing (issue 13).

Rows are ``Comparison.differences()``: kind, tick, NPC and one line of plain text.
Activating a row (double-click or Enter) moves the session there: the NPC, the
fact, the tick (ticks are aligned by value), then the view that shows it.
"""

from __future__ import annotations

from narrative_debugger.models.compare.comparison import Difference
from narrative_debugger.widgets.kit.plain_text import plain_tip
from narrative_debugger.widgets.kit.tables import RowsTableModel, column_width, filtered_table, widest_digits
from narrative_debugger.widgets.kit.roles import BACKGROUND as _BACKGROUND, DISPLAY as _DISPLAY, TOOLTIP as _TOOLTIP, USER as _USER
from PySide6.QtCore import QModelIndex, Qt
from PySide6.QtGui import QColor
from PySide6.QtWidgets import QWidget

#: The Tick column, and its width (pixels) while its ticks are short (``DifferencesView._fit_ticks``).
TICK, TICK_WIDTH = 1, 80

#: Row tint per kind of difference.
KIND_COLORS = {
    "journal": "#f6d5f7",
    "npc": "#fde9c8",
    "fact": "#e2eefb",
    "interaction": "#e4f4e1",
    "monologue": "#eee4f7",
    "finding": "#fbf1c7",
    "prompt": "#f1efe9",
}


class DifferencesModel(RowsTableModel):
    """``Difference`` rows: kind, tick, NPC, text."""

    HEADERS = ("Kind", "Tick", "NPC", "Difference")
    DIFFERENCE_ROLE = _USER + 1

    def __init__(self, parent=None) -> None:
        super().__init__(parent)
        self._brushes = {kind: QColor(colour) for kind, colour in KIND_COLORS.items()}

    def data(self, index: QModelIndex, role=Qt.DisplayRole):
        if not index.isValid():
            return None
        d = self.rows[index.row()]
        role = int(role)
        if role == _DISPLAY:
            col = index.column()
            if col == 0:
                return d.kind
            if col == 1:
                return "" if d.tick is None else f"{d.tick:,}"
            if col == 2:
                return d.npc or ""
            return d.text
        if role == _BACKGROUND:
            return self._brushes.get(d.kind)
        if role == _TOOLTIP and index.column() == 3:
            return plain_tip(d.text)
        if role == self.DIFFERENCE_ROLE:
            return d
        return None


class DifferencesView(QWidget):
    """The list of differences with a filter; empty (with a hint) when not comparing.

    Attributes:
        model, proxy, view: the table, its text filter and its view.
        heading: what is compared, and how many differences.
    """

    def __init__(self, session, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.setObjectName("differencesView")
        self.session = session
        self.model = DifferencesModel(self)
        self.proxy, self.view, self.heading, self.search = filtered_table(
            self, self.model, "differences", {0: 82, TICK: TICK_WIDTH, 2: 100}, "Filter differences (e.g. kael-davan, M001, world_lore)")
        self.view.activated.connect(self._on_activated)
        session.comparisonChanged.connect(self._on_comparison)
        self._on_comparison()

    def _on_comparison(self) -> None:
        c = self.session.comparison
        if c is None:
            self.model.set_rows([])
            self.heading.setText("Not comparing. File › Compare with… opens another save, or the same save under another content folder.")
            return
        rows = c.differences()
        self.model.set_rows(rows)
        self._fit_ticks(rows)
        what = f"content {c.a.content.root} vs {c.b.content.root}" if c.same_save else f"{c.a.save.label} vs {c.b.save.label}"
        if rows:
            self.heading.setText(f"A vs B ({what}): {len(rows):,} difference{'s' * (len(rows) != 1)}. Double-click one to go to it.")
        else:
            self.heading.setText(f"A vs B ({what}): they agree on everything compared.")

    def _fit_ticks(self, rows) -> None:
        """The Tick column as wide as the largest tick of ``rows`` with its separators
        (at least ``TICK_WIDTH``): near 2^64 a tick is 26 characters,
        "18,446,744,073,709,551,615", and the 80 px column cut it to "18,446,7…"."""
        top = max((d.tick for d in rows if d.tick is not None), default=0)
        sample = widest_digits(f"{top:,}", self.view.font())
        self.view.setColumnWidth(TICK, max(TICK_WIDTH, column_width(self.view, TICK, [sample])))

    def _on_activated(self, index: QModelIndex) -> None:
        self.activate_row(index.row())

    def activate_row(self, row: int) -> Difference | None:
        """Go to the difference shown at ``row`` (as a double-click would); returns it."""
        d = self.proxy.index(row, 0).data(DifferencesModel.DIFFERENCE_ROLE)
        if d is None or not self.session.ready:
            return None
        if d.line_id:
            self.session.select_line(d.line_id)
        self.session.go_to(d.tick, d.npc, d.view, d.fact_id)
        return d

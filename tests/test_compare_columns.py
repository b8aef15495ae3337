"""Compare mode's B columns sit beside their A column (issue 35): at 1440 px the
Interactions B column was the last one, reached only by scrolling past Location,
Initiated by and Confrontation, and scrolling there cut the FactId at the left."""

from __future__ import annotations

import pytest
from PySide6.QtGui import QFont, QFontMetrics
from narrative_debugger.widgets.interactions.view import COL_B as INTERACTION_COL_B, INTERACTION_COLUMNS
from narrative_debugger.widgets.kit.fact_model import COL_B, COL_FACT, COL_STATE

from tests.conftest import SAMPLES
from tests.test_app_compare import _spiral_vs_evening


@pytest.mark.parametrize("size", [(1440, 900), (1040, 700)])
def test_each_b_column_follows_its_a_column_in_view(qtbot, open_window, size):
    w = _spiral_vs_evening(open_window, size)
    s = w.session
    s.set_npc(s.npc_by_slug("kael-davan"))
    cases = (("interactions", INTERACTION_COL_B, INTERACTION_COLUMNS.index("State"), 0),
             ("knowledge", COL_B, COL_STATE, COL_FACT))
    for view_name, b, a, fact in cases:
        s.set_view(view_name)
        w.finish_background()
        table = w.views[view_name].table
        header = table.horizontalHeader()
        assert not table.isColumnHidden(b)
        assert header.visualIndex(b) == header.visualIndex(a) + 1, view_name
        assert table.horizontalScrollBar().value() == 0
        assert table.columnViewportPosition(fact) == 0  # the FactId starts at the left edge, whole
        model = table.model()
        texts = {model.index(r, b).data() for r in range(model.rowCount())} - {None}
        if size == (1440, 900) and view_name == "interactions":
            # every B state of the table in view beside A's, without a horizontal scroll
            bold = QFont(table.font())
            bold.setBold(True)
            widest = max(QFontMetrics(bold).horizontalAdvance(t) for t in texts)
            assert table.columnViewportPosition(b) + widest + 6 <= table.viewport().width(), sorted(texts)
        elif size == (1440, 900):  # at least B's start is in view (at 1040 px a scroll brings B next to State)
            assert table.columnViewportPosition(b) + table.fontMetrics().horizontalAdvance("not in B") <= table.viewport().width()
    w.compare.stop()
    for view_name, b in (("interactions", INTERACTION_COL_B), ("knowledge", COL_B)):
        assert w.views[view_name].table.isColumnHidden(b)


def _in_front(w) -> list[str]:
    """The names of the bottom docks tabbed with the Journal that show (the tab in front)."""
    group = [w.docks["journal"], *w.tabifiedDockWidgets(w.docks["journal"])]
    names = {dock: name for name, dock in w.docks.items()}
    return [names[d] for d in group if d.isVisible() and not d.visibleRegion().isEmpty()]


@pytest.mark.parametrize("before", ["journal", "snapshot"])
def test_stop_comparing_brings_back_the_tab_in_front_before(qtbot, open_window, before):
    """After "Stop comparing" the bottom dock showed an empty Content tab, not the Journal."""
    w = open_window(SAMPLES / "walkaway-spiral.json", size=(1440, 900))
    w.docks[before].raise_()
    qtbot.waitUntil(lambda: _in_front(w) == [before])
    w.compare.compare_with(SAMPLES / "evening.json", wait=True)
    qtbot.waitUntil(lambda: _in_front(w) == ["differences"])
    w.compare.stop()
    qtbot.waitUntil(lambda: w.docks["differences"].isHidden())
    qtbot.waitUntil(lambda: _in_front(w) == [before])

"""The Prompt preview at the smallest window, and the dropped card's waterfall (issue 35):
at 1040x700 the story-card table showed no row (its box got 84 px of the 136 it needs),
and the Explain dock's waterfall of a dropped card drew no lore budget line, so the bar
that would cross it could not be seen crossing anything."""

from __future__ import annotations

import shutil
from pathlib import Path

import pyqtgraph as pg
import pytest
from narrative_debugger.app.window.main_window import MainWindow
from narrative_debugger.models.explain import explain
from narrative_debugger.models.playthrough import Playthrough
from narrative_debugger.widgets.docks.explain import Waterfall
from narrative_debugger.widgets.prompt.parts import CardTableModel
from narrative_debugger.widgets.prompt.view import CARD_ROWS_SHOWN
from PySide6.QtCore import QRectF, Qt
from PySide6.QtWidgets import QApplication

ROOT = Path(__file__).resolve().parent.parent
EVENING = ROOT / "sample_saves" / "evening.json"
TICK, NPC, CARD = 33548, "kael-davan", "night-boats"  # README "How to find a dropped story card"


@pytest.fixture()
def tight(tmp_path) -> Path:
    """The sample content with the README's lower budget: night-boats is dropped at TICK."""
    content = tmp_path / "tight"
    shutil.copytree(ROOT / "sample_saves" / "content", content)
    prompt = content / "prompt.yaml"
    prompt.write_text(prompt.read_text(encoding="utf-8").replace("context_token_budget: 8192", "context_token_budget: 1200"), encoding="utf-8")
    return content


def _prompt_window(qtbot, open_window, content: Path, size: tuple[int, int]) -> MainWindow:
    w = open_window(EVENING, size, content, persist=False)
    s = w.session
    s.set_npc(s.playthrough.save.npc_by_slug(NPC).stable_id)
    s.set_tick(TICK)
    s.set_view("prompt")
    view = w.views["prompt"]
    qtbot.waitUntil(lambda: view.current_preview is not None and view.card_model.rowCount() >= 4, timeout=30_000)
    for _ in range(5):
        QApplication.processEvents()
    return w


def _rows_in_view(table) -> int:
    """Rows wholly inside the table's viewport."""
    height = table.viewport().height()
    return sum(1 for row in range(table.model().rowCount())
               if table.rowViewportPosition(row) >= 0 and table.rowViewportPosition(row) + table.rowHeight(row) <= height)


def test_the_card_table_shows_three_rows_at_the_smallest_window(qtbot, open_window, tight, isolated_settings):
    w = _prompt_window(qtbot, open_window, tight, (1040, 700))
    view = w.views["prompt"]
    assert (w.width(), w.height()) == (1040, 700)
    assert _rows_in_view(view.card_table) >= CARD_ROWS_SHOWN == 3
    assert view.sections_folded  # the sections gave their height: the budget bar shows them
    w.resize(1440, 900)
    qtbot.waitUntil(lambda: not view.sections_folded)
    for _ in range(5):
        QApplication.processEvents()
    assert _rows_in_view(view.card_table) >= 4 and _rows_in_view(view.section_table) >= 2


def test_the_card_table_keeps_three_readable_rows_after_shrinking_the_window(qtbot, open_window, tight, isolated_settings):
    """The trial's sequence: the window opens at its default size, is shrunk to 1040x700,
    then Ctrl+4. The bottom docks kept their height, the views got 260 px of their 300
    and scrolled, and one half row of cards showed, its Card, Name and Key cut to 1-3
    letters. Now no scrolling, three whole rows, and the Card, Key and Status columns
    show at least four letters each (the Name, the id in words, is in the tooltip)."""
    w = open_window(None, (1440, 900), persist=False)
    w.open_save(EVENING, tight, wait=True)
    s = w.session
    s.set_npc(s.playthrough.save.npc_by_slug(NPC).stable_id)
    s.set_tick(TICK)
    for _ in range(5):
        QApplication.processEvents()
    w.resize(1040, 700)
    for _ in range(5):
        QApplication.processEvents()
    s.set_view("prompt")
    view = w.views["prompt"]
    qtbot.waitUntil(lambda: view.current_preview is not None and view.card_model.rowCount() >= 4, timeout=30_000)
    for _ in range(5):
        QApplication.processEvents()
    frame = view.parentWidget().parentWidget()  # the view's scroll area
    assert frame.verticalScrollBar().maximum() == 0  # the whole view in sight, nothing scrolled away
    table = view.card_table
    bottom = table.mapTo(frame, table.rect().bottomLeft()).y()
    assert bottom <= frame.height()
    assert _rows_in_view(table) >= CARD_ROWS_SHOWN == 3
    metrics = table.fontMetrics()
    for column in ("Card", "Key", "Status"):
        col = CardTableModel.COLUMNS.index(column)
        for row in range(table.model().rowCount()):
            text = str(table.model().index(row, col).data())
            shown = metrics.elidedText(text, Qt.ElideRight, table.columnWidth(col) - 8).rstrip("…")
            assert len(shown) >= min(4, len(text)), (column, text, shown)
    assert table.model().index(0, 0).data(Qt.ToolTipRole)  # the whole id, name and key


def test_the_dropped_cards_waterfall_draws_the_lore_budget(qtbot, tight):
    play = Playthrough.open(EVENING, tight)
    exp = explain(play, f"card:{NPC}/{CARD}", TICK)
    # 190 with the README's budget and today's sections; a counted section added to the
    # registry lowers it, so the chart is held to the figure the explanation gives.
    budget = exp.extra["lore_budget"]
    assert exp.value == "dropped" and 0 < budget < 1200
    chart = Waterfall()
    qtbot.addWidget(chart)
    chart.resize(240, 200)  # as narrow as the dock at 1040x700
    chart.show()
    chart.set_explanation(exp)
    for _ in range(4):
        QApplication.processEvents()
    assert chart.budget_line is not None and chart.budget_line.value() == budget
    labels = [i.label.toPlainText() for i in chart.getPlotItem().items if isinstance(i, pg.InfiniteLine) and getattr(i, "label", None)]
    assert labels == [f"lore budget {budget}"]
    low, high = chart.getPlotItem().getViewBox().viewRange()[1]
    assert low <= 0 and high >= budget  # above every bar, yet on the plot
    label = chart.budget_line.label
    vb = chart.getPlotItem().getViewBox()
    box = vb.sceneBoundingRect()
    text = label.mapRectToScene(label.boundingRect())
    assert box.left() <= text.left() and text.right() <= box.right() and box.top() <= text.top() and text.bottom() <= box.bottom()


def test_the_dropped_card_crosses_the_one_budget_line_under_a_clear_label(qtbot, tight):
    """The trial's chart: the dropped card (step 3) had no bar, and a dashed line at the
    160 tokens used ran through the "lore budget 190" label under the dotted budget line."""
    play = Playthrough.open(EVENING, tight)
    exp = explain(play, f"card:{NPC}/{CARD}", TICK)
    budget, before, tokens = exp.extra["lore_budget"], exp.extra["used_before"], exp.extra["tokens"]
    assert (before, tokens, budget) == (160, 40, 190)  # README: 160 + 40 = 200 > lore budget 190
    chart = Waterfall()
    qtbot.addWidget(chart)
    chart.resize(240, 200)
    chart.show()
    chart.set_explanation(exp)
    for _ in range(4):
        QApplication.processEvents()
    bars = chart.bars.opts
    last = len(exp.steps) - 1
    assert chart.refused_bars == [last]
    assert (bars["y0"][last], bars["y0"][last] + bars["height"][last]) == (160, 200)  # crosses 190
    assert [bars["y0"][k] + bars["height"][k] for k in range(last)] == [52, 105, 160]
    lines = [i for i in chart.getPlotItem().items if isinstance(i, pg.InfiniteLine)]
    assert lines == [chart.budget_line]  # one horizontal line: the budget
    vb = chart.getPlotItem().getViewBox()
    text = chart.budget_line.label.mapRectToScene(chart.budget_line.label.boundingRect())
    line_y = vb.mapViewToScene(pg.Point(0, budget)).y()
    assert text.bottom() <= line_y + 1  # above its line, not struck through
    for k in range(last + 1):  # and over no bar
        corner_a = vb.mapViewToScene(pg.Point(bars["x"][k] - 0.4, bars["y0"][k]))
        corner_b = vb.mapViewToScene(pg.Point(bars["x"][k] + 0.4, bars["y0"][k] + bars["height"][k]))
        bar = QRectF(corner_a, corner_b).normalized()
        assert not bar.intersects(text), k
    assert vb.sceneBoundingRect().contains(text)


def test_a_value_without_a_budget_draws_no_budget_line(qtbot):
    play = Playthrough.open(ROOT / "sample_saves" / "walkaway-spiral.json")
    chart = Waterfall()
    qtbot.addWidget(chart)
    chart.set_explanation(explain(play, "npc:kael-davan.stress", play.last_tick))
    assert chart.budget_line is None and chart.threshold_line is not None

"""The Explain dock (issue 11): "Why?" on a value opens it with the chain from the
models, selecting a step moves the tick and selects the journal row, and it follows the tick."""

from __future__ import annotations

import pytest
from narrative_debugger.models.explain import explain
from PySide6.QtCore import Qt

from tests.conftest import SAMPLES


pytestmark = [pytest.mark.usefixtures("message_boxes"), pytest.mark.window(save=SAMPLES / "walkaway-spiral.json", size=(1500, 950))]


def _answer(qtbot, view, target, tick):
    qtbot.waitUntil(lambda: view.explanation is not None and view.explanation.target == target and view.explanation.tick == tick, timeout=20000)
    return view.explanation


def test_why_on_a_score_cell_opens_the_dock_with_the_chain_and_a_step_moves_the_tick(qtbot, window):
    s = window.session
    dock = window.docks["explain"]
    assert dock.objectName() == "dock-explain" and not dock.isVisible()
    npcs = window.panels["npcs"][0]
    kael = s.npc_by_slug("kael-davan")
    row = npcs.proxy.mapFromSource(npcs.model.index(npcs.model.row_of(kael), npcs.model.SCORE)).row()
    npcs.view.setCurrentIndex(npcs.proxy.index(row, npcs.model.SCORE))
    npcs.view.setFocus()
    assert npcs.why_target() == "npc:kael-davan.score"
    npcs.why_action.trigger()
    view = window.panels["explain"][0]
    exp = _answer(qtbot, view, "npc:kael-davan.score", s.tick)
    assert dock.isVisible()
    expected = explain(s.playthrough, "npc:kael-davan.score", s.tick)
    assert [st.journal_index for st in exp.steps] == [st.journal_index for st in expected.steps]
    assert view.summary.text() == expected.summary
    assert view.chart.bars is not None and view.chart.isVisible()
    # the rows are the steps (a folded row first)
    offset = 1 if exp.folded else 0
    assert view.model.rowCount() == len(exp.steps) + offset
    # selecting a step moves the tick there and selects its journal row
    step = exp.steps[2]
    view.table.selectRow(2 + offset)
    assert s.tick == step.tick and s.journal_index == step.journal_index and s.npc == kael
    journal = window.panels["journal"][0]
    rows = journal.view.selectionModel().selectedRows()
    assert rows and journal.model.journal_index(rows[0].row()) == step.journal_index
    # the dock follows the tick: the same target explained again at the new tick
    again = _answer(qtbot, view, "npc:kael-davan.score", step.tick)
    assert again.steps[-1].journal_index == step.journal_index
    assert view.model.row_of(step.journal_index) >= 0


def test_f1_on_the_stress_cell_and_an_unknown_target(qtbot, window):
    s = window.session
    npcs = window.panels["npcs"][0]
    kael = s.npc_by_slug("kael-davan")
    row = npcs.proxy.mapFromSource(npcs.model.index(npcs.model.row_of(kael), 0)).row()
    npcs.view.setCurrentIndex(npcs.proxy.index(row, npcs.model.STRESS))
    npcs.view.setFocus()
    qtbot.keyClick(npcs.view, Qt.Key_F1)
    view = window.panels["explain"][0]
    exp = _answer(qtbot, view, "npc:kael-davan.stress", s.tick)
    assert exp.value == 78 and "over its threshold 30" in view.summary.text()
    # The latest step names the walk-away that raised the stress (schema §8.1), not just its cause.
    assert view.detail.text().startswith("#492 at tick 36,630 · stress walk_away")
    assert "walk-away #13, InteractionWalkedAway #491 at tick 36630: interaction.kael-davan_016 Active → WalkedAway" in view.detail.text()
    s.explain("line:nope")
    qtbot.waitUntil(lambda: view.explanation is None and "cannot explain" in view.title.text(), timeout=20000)
    assert "no monologue line 'nope'" in view.summary.text()


def test_why_from_each_view_names_its_target(qtbot, window):
    s = window.session
    s.set_npc(s.npc_by_slug("kael-davan"))
    mono = window.panels["monologues"][0]
    row = next(k for k, r in enumerate(mono.model.rows) if r.line_id == "the-last-shift_m_s_050")
    mono.view.setCurrentIndex(mono.model.index(row, 1))
    assert mono.why_target() == "line:the-last-shift_m_s_050"
    heading = next(k for k, r in enumerate(mono.model.rows) if r.kind == "heading")
    mono.view.setCurrentIndex(mono.model.index(heading, 0))
    assert mono.why_target() is None
    knowledge = window.views["knowledge"]
    knowledge.table.setCurrentIndex(knowledge.table.model().index(0, 0))
    assert knowledge.why_target() == f"fact:{s.fact}"
    inter = window.views["interactions"]
    inter.refresh()
    if inter.model.rowCount():
        inter.table.setCurrentIndex(inter.model.index(0, 0))
        assert inter.why_target() == f"fact:{inter.model.fact_id(0)}"
    timelines = window.views["timelines"]
    assert timelines.why_target() == "npc:kael-davan.score" and timelines.why_target("stress") == "npc:kael-davan.stress"
    prompt = window.views["prompt"]
    qtbot.waitUntil(lambda: prompt.current_preview is not None and prompt.current_preview.npc == "kael-davan", timeout=30000)
    assert prompt.history_why_target() == "history:kael-davan"
    if prompt.card_model.rowCount():
        prompt.card_table.setCurrentIndex(prompt.card_model.index(0, 0))
        card = prompt.card_model.card_at(0)
        assert prompt.card_why_target() == f"card:kael-davan/{card.id}"
    # the monologue answer carries the clauses and the nearest miss
    mono.view.setCurrentIndex(mono.model.index(row, 1))
    mono.why_action.trigger()
    view = window.panels["explain"][0]
    exp = _answer(qtbot, view, "line:the-last-shift_m_s_050", s.tick)
    assert exp.extra["eligible"] and len(exp.extra["clauses"]) == 2 and not view.chart.isVisible()


def test_derived_kinds_and_stepping_selects_the_event_npc_and_its_row(qtbot, window):
    from narrative_debugger.models.timeline.event_kinds import event_indices

    s = window.session
    play = s.playthrough
    index = play.index
    kael = s.npc_by_slug("kael-davan")
    crossings = event_indices(index, "threshold")
    # independently: Kael's stress crosses 30 upward exactly where the explanation says
    exp = explain(play, "npc:kael-davan.stress", play.save.saved_at_tick, 100)
    kael_crossings = [i for i in crossings if play.save.journal.data[i].get("target") == kael]
    assert kael_crossings == [c["journal_index"] for c in exp.extra["crossings"]]
    assert all(play.save.journal.kinds[i] == "StressChanged" for i in crossings)
    firsts = event_indices(index, "first-meeting")
    assert len(firsts) == len({play.save.journal.data[i]["target"] for i in firsts})
    assert all(play.save.journal.kinds[i] == "InteractionStarted" for i in firsts)
    levels = event_indices(index, "level")
    assert all(play.save.journal.kinds[i] in ("RelationshipInteraction", "WalkAwayPenalty") for i in levels)
    # stepping to the next threshold crossing selects its NPC and its own journal row
    s.set_npc(s.npc_by_slug("lera-sessik"))
    s.set_tick(0)
    bar = window.tickbar
    bar.kind_combo.setCurrentIndex(bar.kind_combo.findData("threshold"))
    bar.next_event()
    first = crossings[0]
    assert s.tick == index.ticks[first] and s.journal_index == first
    assert s.npc == play.save.journal.data[first]["target"]
    journal = window.panels["journal"][0]
    rows = journal.view.selectionModel().selectedRows()
    assert rows and journal.model.journal_index(rows[0].row()) == first
    # a walk-away step marks the walk-away itself, not the last entry at that tick
    s.set_tick(0)
    bar.kind_combo.setCurrentIndex(bar.kind_combo.findData("walk-away"))
    bar.next_event()
    assert play.save.journal.kinds[s.journal_index] in ("InteractionWalkedAway", "InteractionConflictAbandoned")
    assert index.ticks[s.journal_index] == s.tick


def test_timelines_click_seeks_double_click_restores_range_follows_and_markers_named(qtbot, window):
    s = window.session
    s.set_view("timelines")
    tl = window.views["timelines"]
    s.set_npc(s.npc_by_slug("kael-davan"))
    tl.show_full_range()
    lo, hi = full = tl.score_plot.vb.viewRange()[0]
    # zoom into the first tenth, then move the tick past it: the range follows
    tl.score_plot.setXRange(lo, lo + (hi - lo) / 10, padding=0)
    far = s.last_tick - 5
    s.set_tick(far)
    vlo, vhi = tl.score_plot.vb.viewRange()[0]
    assert vlo <= tl.x_of(far) <= vhi and (vhi - vlo) < (hi - lo) / 5
    tl.show_full_range()
    assert tl.score_plot.vb.viewRange()[0] == pytest.approx(full)
    # a marker is named when hovered: the first walk-away of Kael
    track = tl.tracks[s.npc]
    x = float(track.markers["walk-away"][0])
    label, tick = tl.marker_near(x + 0.1)
    assert label == "Walk-away" and tick == tl.origin + int(round(x))
    assert s.playthrough.index.ticks[explain(s.playthrough, "npc:kael-davan.walk_aways", tick).steps[-1].journal_index] == tick


def test_timelines_click_on_the_plot_seeks(qtbot, window):
    from PySide6.QtCore import QPointF

    s = window.session
    s.set_view("timelines")
    tl = window.views["timelines"]
    qtbot.waitExposed(tl)
    target = s.last_tick // 3
    scene = tl.score_plot.vb.mapViewToScene(QPointF(tl.x_of(target), 1.0))
    pos = tl.graphics.mapFromScene(scene)
    qtbot.mouseClick(tl.graphics.viewport(), Qt.LeftButton, pos=pos)
    per_px = tl.score_plot.vb.viewPixelSize()[0]
    assert abs(s.tick - target) <= 2 * per_px + 1


def test_screenshot_with_the_explain_dock(tmp_path):
    import subprocess
    import sys

    env = {"QT_QPA_PLATFORM": "offscreen", "PATH": "/usr/bin:/bin", "HOME": str(tmp_path)}
    out = tmp_path / "why.png"
    args = [sys.executable, "-m", "narrative_debugger.app", "screenshot", str(SAMPLES / "walkaway-spiral.json"), "--out", str(out), "--view", "timelines"]
    done = subprocess.run([*args, "--why", "npc:kael-davan.stress"], capture_output=True, text=True, env=env, timeout=300)
    assert done.returncode == 0, done.stderr
    assert out.exists() and out.stat().st_size > 50_000
    bad = subprocess.run([*args, "--why", "npc:kael.stress"], capture_output=True, text=True, env=env, timeout=300)
    assert bad.returncode == 2 and "kael-davan" in bad.stderr


def test_why_on_knowledge_graph_nodes(qtbot, window):
    s = window.session
    knowledge = window.views["knowledge"]
    knowledge.tabs.setCurrentIndex(knowledge.GRAPH_TAB)
    graph = knowledge.graph
    qtbot.waitExposed(graph.view)
    assert graph.why_target() is None

    def click(kind, payload) -> None:
        node = next(item for item in graph.scene.items() if item.data(0) == kind and item.data(1) == payload)
        point = graph.view.mapFromScene(node.sceneBoundingRect().center())
        qtbot.mouseClick(graph.view.viewport(), Qt.LeftButton, pos=point)

    fact = graph.node_ids("fact")[0]
    click("fact", fact)
    assert s.fact == fact and graph.why_target() == f"fact:{fact}"
    kael = s.npc_by_slug("kael-davan")
    click("npc", kael)
    assert s.npc == kael
    expected = f"entity:{kael}" if kael in s.playthrough.index.entities else "npc:kael-davan.score"
    assert graph.why_target() == expected
    graph.why_action.trigger()
    view = window.panels["explain"][0]
    exp = _answer(qtbot, view, expected, s.tick)
    assert exp.summary


def test_the_waterfall_x_axis_shows_whole_step_numbers_only(qtbot, window):
    from narrative_debugger.widgets.docks.explain import Waterfall

    s = window.session
    chart = Waterfall()
    qtbot.addWidget(chart)
    full = explain(s.playthrough, "npc:kael-davan.score", s.playthrough.index.ticks[-1])
    small = explain(s.playthrough, "npc:kael-davan.score", full.steps[4].tick)  # a short chain
    count = len(small.steps) + (1 if small.folded else 0)
    assert 2 <= count <= 12
    chart.set_explanation(small)
    ticks = chart.getPlotItem().getAxis("bottom")._tickLevels
    assert chart.step_ticks == list(range(count))
    assert [v for v, _ in ticks[0]] == list(range(count)) and all(label == str(int(v)) for v, label in ticks[0])
    chart.set_explanation(full)  # a long chain: whole numbers, at most ~12 labels
    assert len(chart.step_ticks) <= 12 and all(isinstance(v, int) for v in chart.step_ticks)
    chart.set_explanation(None)
    assert chart.step_ticks == [] and chart.getPlotItem().getAxis("bottom")._tickLevels is None


def test_the_threshold_label_lies_inside_the_waterfall(qtbot, window):
    # New-user trial: F1 on Kael Davan's Stress cell drew the dotted threshold line's label
    # as "eshold 30": pyqtgraph centred it at 10 % of the width, its left part past the edge.
    import pyqtgraph as pg
    from narrative_debugger.widgets.docks.explain import Waterfall
    from PySide6.QtWidgets import QApplication

    s = window.session
    s.explain("npc:kael-davan.stress")
    view = window.panels["explain"][0]
    exp = _answer(qtbot, view, "npc:kael-davan.stress", s.tick)
    alone = Waterfall()
    qtbot.addWidget(alone)
    alone.set_explanation(exp)
    alone.show()
    for chart, width in ((view.chart, None), (alone, 900), (alone, 240)):  # in the dock; wide; narrow
        if width is not None:
            chart.resize(width, 200)
        for _ in range(4):
            QApplication.processEvents()
        lines = [i for i in chart.getPlotItem().items if isinstance(i, pg.InfiniteLine) and getattr(i, "label", None)]
        assert len(lines) == 1
        label = lines[0].label
        assert label.toPlainText() == "threshold 30"
        box = chart.getPlotItem().getViewBox().sceneBoundingRect()
        text = label.mapRectToScene(label.boundingRect())
        assert box.left() <= text.left() and text.right() <= box.right(), (width, box, text)
        assert box.top() <= text.top() and text.bottom() <= box.bottom(), (width, box, text)


def test_the_before_after_column_stays_in_view(qtbot, open_window, message_boxes):
    """Smoke trial: in a narrow Explain dock the steps' long Rule column pushed 'Before → after' behind
    a horizontal scroll bar; Rule now gives way (elided, whole in the detail pane)."""
    from PySide6.QtWidgets import QApplication

    window = open_window(SAMPLES / "walkaway-spiral.json", (1440, 900))
    s = window.session
    s.explain("npc:kael-davan.score")  # rules such as 'relationship delta formula (relationship seed)' are long
    view = window.panels["explain"][0]
    _answer(qtbot, view, "npc:kael-davan.score", s.tick)
    window.resizeDocks([window.docks["explain"]], [560], Qt.Horizontal)  # a narrow dock beside the Findings
    for _ in range(4):
        QApplication.processEvents()
    table = view.table
    assert view.model.rowCount() > 0 and table.viewport().width() < 560
    col = view.model.HEADERS.index("Before → after")
    header = table.horizontalHeader()
    assert header.sectionSize(col) >= header.sectionSizeHint(col)
    assert 0 <= header.sectionViewportPosition(col)
    assert header.sectionViewportPosition(col) + header.sectionSize(col) <= table.viewport().width()
    assert not table.horizontalScrollBar().isVisible()

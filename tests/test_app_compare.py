"""File › Compare with… end to end (pytest-qt, offscreen; issue 13): opening a comparison,
the Differences dock, a double-click jump, side B in the views, and leaving comparison."""

from __future__ import annotations

import shutil

import numpy as np
import pytest
from narrative_debugger.widgets.timelines import compare as timelines_compare
from narrative_debugger.widgets.kit.fact_model import COL_B
from narrative_debugger.widgets.interactions.view import COL_B as INTERACTION_COL_B
from narrative_debugger.widgets.kit.state_colors import confidence_label, state_label
from narrative_debugger.widgets.kit.culprit import CULPRIT_BG, row_visible
from PySide6.QtCore import Qt
from PySide6.QtGui import QFont, QFontMetrics

from tests.conftest import CONTENT, SAMPLES

pytestmark = pytest.mark.usefixtures("message_boxes")  # modal boxes recorded, never shown


def test_compare_with_a_save_fills_dock_views_and_tickbar(qtbot, window, monkeypatch):
    import threading

    built_on = []  # for each build of B's tracks: on the GUI thread?
    real_build = timelines_compare.build_tracks
    monkeypatch.setattr(timelines_compare, "build_tracks",
                        lambda *a, **k: built_on.append(threading.current_thread() is threading.main_thread()) or real_build(*a, **k))
    s = window.session
    assert not window.compare.stop_action.isEnabled()
    window.compare.compare_with(SAMPLES / "walkaway-spiral.json", wait=True)
    c = s.comparison
    assert c is not None and c.a is s.playthrough and c.b.save.label == "walkaway-spiral.json"
    assert window.compare.stop_action.isEnabled()
    # The dock lists every difference of the model, in order.
    dock = window.panels["differences"][0]
    rows = [dock.model.rows[r].text for r in range(dock.model.rowCount())]
    assert rows == [d.text for d in c.differences()] and len(rows) > 100
    assert "differences" in dock.heading.text()
    # The tick range covers both sides; the tick bar marks where the journals part.
    assert s.last_tick == max(c.a.last_tick, c.b.last_tick)
    assert window.tickbar.track.mark == c.divergence.tick
    # Timelines: one dashed B curve per NPC, in the colour of its A curve (A's curves are
    # drawn once the view is in front: it was behind the Knowledge tab since the load).
    timelines = window.views["timelines"]
    assert not timelines.curves
    s.set_view("timelines")
    window.finish_background()
    assert set(timelines.overlay.curves) == set(timelines.curves)
    for sid, curve in timelines.overlay.curves.items():
        assert curve.opts["pen"].style() == Qt.DashLine
        assert curve.opts["pen"].color().rgb() in (timelines.tracks[sid].colour.rgb(), timelines.curves[sid].opts["pen"].color().rgb())
    assert all(line.isVisible() for line in timelines.overlay.divergence_lines)
    # B's tracks were built by the worker, once, not on the GUI thread.
    assert built_on == [False] and timelines.overlay.tracks


def test_double_click_jumps_to_the_difference(qtbot, window):
    s = window.session
    window.compare.compare_with(SAMPLES / "walkaway-spiral.json", wait=True)
    dock = window.panels["differences"][0]
    row = next(r for r in range(dock.proxy.rowCount()) if dock.model.rows[r].kind == "interaction" and dock.model.rows[r].npc == "kael-davan"
               and "absent" not in dock.model.rows[r].text)
    d = dock.model.rows[row]
    assert dock.isVisible()
    dock.view.scrollTo(dock.proxy.index(row, 3))
    rect = dock.view.visualRect(dock.proxy.index(row, 3))
    qtbot.mouseClick(dock.view.viewport(), Qt.LeftButton, pos=rect.center())
    qtbot.mouseDClick(dock.view.viewport(), Qt.LeftButton, pos=rect.center())
    assert s.tick == d.tick and s.view == "interactions" and s.fact == d.fact_id
    assert s.playthrough.save.npcs[s.npc].slug == "kael-davan"
    # The interactions table shows B's state of the same interaction, highlighted when it differs.
    view = window.views["interactions"]
    assert not view.table.isColumnHidden(INTERACTION_COL_B)
    r = view.model.row_of(d.fact_id)
    cell = view.model.index(r, INTERACTION_COL_B)
    a_state = view.model.meta(r).interaction_state
    b_state = view.model.b_state(d.fact_id)
    assert (b_state is not a_state) == (cell.data(Qt.BackgroundRole) is not None)
    # A fact difference: the knowledge table's B column says B's value and highlights it.
    fact_row = next(r for r in range(dock.proxy.rowCount()) if dock.model.rows[r].kind == "fact" and " only in B" not in dock.model.rows[r].text)
    target = dock.activate_row(fact_row)
    assert s.view == "knowledge" and s.fact == target.fact_id
    knowledge = window.views["knowledge"]
    assert not knowledge.table.isColumnHidden(COL_B)
    krow = knowledge.model.row_of(target.fact_id)
    assert krow is not None
    assert knowledge.model.differs_b(target.fact_id) == (knowledge.model.index(krow, COL_B).data(Qt.BackgroundRole) is not None)


def test_compare_with_another_content_folder(qtbot, window, tmp_path):
    folder = tmp_path / "content"
    shutil.copytree(CONTENT, folder)
    pool = folder / "monologues" / "harbor-nights.yaml"
    pool.write_text(pool.read_text(encoding="utf-8").replace("min_count: 2", "min_count: 9", 1), encoding="utf-8")
    window.compare.compare_with(window.save_path, folder, wait=True)
    c = window.session.comparison
    assert c.same_save and c.divergence is None
    dock = window.panels["differences"][0]
    kinds = [dock.model.rows[r].kind for r in range(dock.model.rowCount())]
    assert kinds == ["monologue", "finding"]
    assert window.tickbar.track.mark is None
    assert not any(line.isVisible() for line in window.views["timelines"].overlay.divergence_lines)
    d = dock.activate_row(0)
    assert window.session.tick == d.tick == c.monologues.eligibility_changed[0].spans[0][0]


@pytest.mark.parametrize("row, tick", [(0, 16515), (1, 22075)])
def test_a_monologue_or_finding_difference_selects_its_line(qtbot, window, tmp_path, row, tick):
    """Trial defect: a double-click on the line difference (or on "M001 only in B") moved
    the tick but left the Monologues dock where it was, the line neither selected nor
    highlighted."""
    folder = tmp_path / "content"
    shutil.copytree(CONTENT, folder)
    pool = folder / "monologues" / "harbor-nights.yaml"
    pool.write_text(pool.read_text(encoding="utf-8").replace("min_count: 2", "min_count: 9", 1), encoding="utf-8")
    window.compare.compare_with(window.save_path, folder, wait=True)
    dock = window.panels["differences"][0]
    d = dock.activate_row(row)
    assert (d.line_id, window.session.tick) == ("harbor-nights_m_s_020", tick)
    monologues = window.panels["monologues"][0]
    selected = {i.row() for i in monologues.view.selectionModel().selectedRows()}
    assert selected and all(monologues.model.rows[r].line_id == "harbor-nights_m_s_020" for r in selected)
    (first,) = selected
    assert row_visible(monologues.view, first)
    background = monologues.model.data(monologues.model.index(first, 0), Qt.BackgroundRole)
    assert background.color() == CULPRIT_BG  # the pink culprit row, kept when the selection moves


def test_stop_comparing_restores_single_save_views(qtbot, window):
    s = window.session
    single_last = s.last_tick
    window.compare.compare_with(SAMPLES / "walkaway-spiral.json", wait=True)
    assert s.comparison is not None
    window.compare.stop_action.trigger()
    assert s.comparison is None and s.state_b is None and s.last_tick == single_last
    assert window.panels["differences"][0].model.rowCount() == 0
    assert window.tickbar.track.mark is None
    assert window.views["timelines"].overlay.curves == {}
    assert window.views["knowledge"].table.isColumnHidden(COL_B)
    assert window.views["interactions"].table.isColumnHidden(INTERACTION_COL_B)
    assert not window.compare.stop_action.isEnabled()


def test_unreadable_b_keeps_single_save_views(qtbot, window, tmp_path, message_boxes):
    broken = tmp_path / "broken.json"
    broken.write_text("{nope", encoding="utf-8")
    window.compare.compare_with(broken, wait=True)
    assert window.session.comparison is None
    assert message_boxes and message_boxes[-1][0] == "warning" and "broken.json" in message_boxes[-1][2]


def test_opening_another_save_leaves_comparison(qtbot, window):
    window.compare.compare_with(SAMPLES / "walkaway-spiral.json", wait=True)
    window.open_save(SAMPLES / "abandoned-confrontation.json", wait=True)
    assert window.session.comparison is None
    assert window.panels["differences"][0].model.rowCount() == 0


def test_knowledge_table_lists_facts_only_b_knows(qtbot, window):
    s = window.session
    window.open_save(SAMPLES / "walkaway-spiral.json", wait=True)
    window.compare.compare_with(SAMPLES / "evening.json", wait=True)
    c = s.comparison
    only_b = [fact_id for fact_id, _ in c.facts.only_b]
    assert only_b
    s.set_tick(s.last_tick)  # B's end (evening runs longer); A stays at its own end
    knowledge = window.views["knowledge"]
    model = knowledge.model
    for fact_id in only_b:
        row = model.row_of(fact_id)
        assert row is not None, fact_id
        assert model.fact(row) is None and model.index(row, 2).data() == "—"
        b = c.b.state_at(s.tick).knowledge.fact(fact_id)
        assert model.index(row, COL_B).data().startswith(confidence_label(b.confidence) + " · " + state_label(b.state))
        assert model.index(row, COL_B).data(Qt.BackgroundRole) is not None
    every_only_b = set(c.b.state_at(s.tick).knowledge.facts) - set(c.a.state_at(s.tick).knowledge.facts)  # interactions too
    assert every_only_b >= set(only_b)
    assert f"{len(every_only_b)} only in B" in knowledge.heading.text()
    assert all(model.row_of(f) is not None for f in every_only_b)
    for column in range(model.columnCount()):  # every sort reads B's value for B-only rows
        model.sort(column, Qt.DescendingOrder)
    model.sort(-1)
    knowledge.confidence.setCurrentIndex(knowledge.confidence.count() - 1)  # a filter reads them too
    assert knowledge.shown_count() > 0
    knowledge.confidence.setCurrentIndex(0)
    window.compare.stop()
    assert model.row_of(only_b[0]) is None


def test_differences_dock_exists_only_while_comparing(qtbot, window):
    # README: the Differences panel lists them "while comparing"; before, the tab was
    # there with nothing to say, and it stayed after Stop comparing.
    dock = window.docks["differences"]
    assert not dock.isVisible()
    window.compare.compare_with(SAMPLES / "walkaway-spiral.json", wait=True)
    assert dock.isVisible() and not dock.visibleRegion().isEmpty()  # shown and in front
    window.reset_layout()
    assert dock.isVisible()  # Reset layout keeps it while comparing
    window.compare.stop_action.trigger()
    assert not dock.isVisible()
    window.reset_layout()
    assert not dock.isVisible()


def test_b_curves_stop_at_b_own_last_tick(qtbot, window):
    """A (evening) ends at 302,029, B (walkaway-spiral) at its saved_at_tick 37,113: B's
    dashed curves stop there instead of running on to A's end."""
    s = window.session
    window.compare.compare_with(SAMPLES / "walkaway-spiral.json", wait=True)
    c = s.comparison
    timelines = window.views["timelines"]
    b_end = c.b.save.saved_at_tick
    assert b_end == c.b.last_tick == 37113 and s.last_tick == c.a.last_tick == 302029
    b_x = timelines.x_of(b_end)
    assert timelines.overlay.curves
    for key, curve in timelines.overlay.curves.items():
        xs = curve.xData[~np.isnan(curve.yData)] if curve.yData is not None else curve.xData
        assert float(curve.xData[-1]) == b_x, key
        assert float(xs.max()) == b_x
    stress = timelines.overlay.stress_curve
    assert stress.xData is not None and float(stress.xData[-1]) == b_x
    # A's own curves still run to A's end.
    assert all(float(curve.xData[-1]) == timelines.x_of(s.last_tick) for curve in timelines.curves.values())
    # Past B's end the readout says B has ended instead of repeating its last values.
    s.set_tick(200000)
    assert "B</b>&nbsp;ended at tick&nbsp;37,113" in timelines.readout.text()
    s.set_tick(30000)
    assert "B</b>&nbsp;ended" not in timelines.readout.text() and "<b>B</b>" in timelines.readout.text()


def test_b_stress_fits_the_stress_plot_whatever_is_drawn_after(qtbot, window):
    """A (evening) keeps Kael's stress under his threshold of 30, B (walkaway-spiral) takes
    it to 78: the stress plot's axis reaches past B's highest value, also once the view
    has drawn the NPC after the comparison began (trial: B's curve ran off the top)."""
    s = window.session
    kael = s.npc_by_slug("kael-davan")
    s.set_npc(kael)
    s.set_tick(30000)
    window.compare.compare_with(SAMPLES / "walkaway-spiral.json", wait=True)
    timelines = window.views["timelines"]
    s.set_view("timelines")  # drawn now, after the comparison began
    qtbot.waitUntil(lambda: timelines.drawn, timeout=10_000)
    b_highest = float(np.nanmax(timelines.overlay.tracks[kael].stress.y))
    assert b_highest == 78

    def top() -> float:
        return timelines.stress_plot.viewRange()[1][1] * timelines.stress_plot.getAxis("left").scale

    assert top() >= b_highest
    for npc in (kael, s.npc_by_slug("lera-sessik"), kael):
        s.set_npc(npc)
        s.set_tick(30000)
        assert top() >= (b_highest if npc == kael else 0)
    a_top = timelines.layer.frame[1]
    assert a_top < b_highest <= top() <= b_highest * 1.2
    window.compare.stop_action.trigger()
    qtbot.waitUntil(lambda: timelines.drawn, timeout=10_000)
    s.set_npc(kael)
    assert top() == pytest.approx(timelines.layer.frame[1] * 1.02)  # A's frame alone again


# ----- issue 35: stop comparing past A's end; the Interactions heading; the B columns -----

def _spiral_vs_evening(open_window, size=(1440, 900)):
    """walkaway-spiral (last tick 37 113) compared with the longer evening (302 029)."""
    w = open_window(SAMPLES / "walkaway-spiral.json", size=size)
    w.compare.compare_with(SAMPLES / "evening.json", wait=True)
    assert w.session.comparison is not None and w.session.last_tick == 302_029
    return w


def test_stop_comparing_past_a_end_brings_the_tick_back_into_a(qtbot, open_window):
    """"Stop comparing" at a tick on B's part of the range left the session, the headers
    and the status bar at B's tick, past A's end: every one now says A's last tick."""
    w = _spiral_vs_evening(open_window)
    s = w.session
    s.set_view("interactions")
    s.set_tick(200_000)
    w.finish_background()
    assert "tick 200,000 / 302,029" in w.status_tick.text()
    moved = []
    s.tickChanged.connect(moved.append)
    w.compare.stop_action.trigger()
    w.finish_background()
    assert s.comparison is None and s.tick == 37_113 and moved == [37_113]
    assert w.status_tick.text().startswith("tick 37,113 / 37,113")
    assert w.tickbar.tick_field.value() == 37_113
    assert "at tick 37,113" in w.views["interactions"].heading.text()
    s.set_view("knowledge")
    w.finish_background()
    assert "Knowledge at tick 37,113" in w.views["knowledge"].heading.text()
    assert "200,000" not in w.views["knowledge"].heading.text()  # no "changed since" B's tick
    w.compare.compare_with(SAMPLES / "evening.json", wait=True)
    s.set_tick(30_000)
    w.compare.stop()  # a tick inside A stays where it is
    assert s.tick == 30_000 and w.status_tick.text().startswith("tick 30,000 / 37,113")


@pytest.mark.parametrize("size", [(1440, 900), (1040, 700)])
def test_the_interactions_heading_keeps_its_two_lines_while_comparing(qtbot, open_window, size):
    """The heading was cut to one line high (a sliver of its second line) when the
    comparison set it while the Interactions tab was behind another: it is as high as
    its text once shown."""
    w = _spiral_vs_evening(open_window, size)
    heading = w.views["interactions"].heading
    holder = heading.parentWidget()
    w.session.set_view("interactions")
    w.finish_background()
    assert "<br>" in heading.text() and heading.sizeHint().height() >= 2 * heading.fontMetrics().height()
    # The layout pass the shown holder asks for (never sooner than the next event loop pass).
    qtbot.waitUntil(lambda: holder.height() >= heading.sizeHint().height(), timeout=2000)
    assert heading.height() == holder.height()


@pytest.mark.parametrize("size", [(1440, 900), (1040, 700)])
def test_the_b_columns_fit_their_text(qtbot, open_window, size):
    """At 1440 px the Interactions B column was 34 px wide and showed one letter; the
    Knowledge B column cut its text. Each B column is as wide as the widest text it shows
    (bold, as a changed row is) and its header."""
    w = _spiral_vs_evening(open_window, size)
    s = w.session
    checked = 0
    for view_name, col in (("knowledge", COL_B), ("interactions", INTERACTION_COL_B)):
        s.set_view(view_name)
        w.finish_background()
        table = w.views[view_name].table
        model = table.model()
        bold = QFont(table.font())
        bold.setBold(True)
        texts = {model.index(r, col).data(Qt.DisplayRole) for r in range(model.rowCount())}
        texts.discard(None)
        assert texts, view_name
        widest = max(QFontMetrics(bold).horizontalAdvance(t) for t in texts)
        assert not table.isColumnHidden(col)
        assert table.columnWidth(col) >= widest + 8, (view_name, sorted(texts, key=len)[-1])
        assert table.columnWidth(col) >= table.horizontalHeader().sectionSizeHint(col)
        checked += 1
    assert checked == 2


# ----- trial 49: the timelines' full range while comparing -----

def test_full_range_while_comparing_covers_both_sides(qtbot, open_window):
    """walkaway-spiral (A, last tick 37 113) compared with evening (B, 302 029): Full range
    (the button, or a double-click) went back to A's range, cutting B's curves off at
    37 113, and a zoomed range stopped following the tick at A's end. Full range covers
    both sides' ticks while comparing, and A's alone once the comparison is left."""
    w = _spiral_vs_evening(open_window)
    s = w.session
    s.set_view("timelines")
    w.finish_background()
    view = w.views["timelines"]
    assert max(float(np.nanmax(curve.xData)) for curve in view.overlay.curves.values()) == view.x_of(302_029)

    def shown() -> tuple[float, float]:
        return tuple(view.score_plot.vb.viewRange()[0])

    lo, hi = shown()
    assert lo <= view.x_of(0) and hi >= view.x_of(302_029)
    view.score_plot.setXRange(view.x_of(1_000), view.x_of(3_000), padding=0)  # zoomed in
    view.full_button.click()
    assert shown() == (lo, hi)
    # Zoomed, the range follows the tick onto B's part of the axis.
    view.score_plot.setXRange(view.x_of(1_000), view.x_of(3_000), padding=0)
    s.set_tick(250_000)
    lo_z, hi_z = shown()
    assert lo_z <= view.x_of(250_000) <= hi_z and hi_z - lo_z == pytest.approx(view.x_of(3_000) - view.x_of(1_000))
    w.compare.stop_action.trigger()
    w.finish_background()
    view.full_button.click()
    lo, hi = shown()
    assert lo <= view.x_of(0) and view.x_of(37_113) <= hi < view.x_of(40_000)


def test_b_events_before_a_first_event_are_on_the_axes(qtbot, open_window, tmp_path):
    """A's events start at tick 1 000 201, B's at 900 201 (both far from 0, so the axes
    start at the first event). They started at A's: B's curves and the tick where the
    journals part (900 201) fell in the lead-in that stands for tick 0, left of the axis,
    and the timelines showed none of B. While comparing, the axes start at B's first event."""
    from tests.test_widgets_u64_ticks import shifted_save

    w = open_window(shifted_save(tmp_path, "walkaway-spiral.json", 1_000_000)[0])
    s = w.session
    s.set_view("timelines")
    s.set_tick(0)
    w.compare.compare_with(shifted_save(tmp_path, "walkaway-spiral.json", 900_000)[0], wait=True)
    c = s.comparison
    assert (c.b.first_tick, c.divergence.tick, s.last_tick) == (900_201, 900_201, 1_037_113)
    w.finish_background()
    view, track = w.views["timelines"], w.tickbar.track
    # At tick 0 the cursors stay left of the (new) first event, where tick 0 is drawn.
    assert s.tick == 0 and all(view.tick_of(line.value()) == 0 < view.x_of(900_201) - line.value() for line in view.cursors)
    view.full_button.click()
    lo, hi = view.score_plot.vb.viewRange()[0]
    assert lo < view.x_of(900_201) and hi > view.x_of(1_037_113)
    steps = [float(x) for curve in view.overlay.curves.values() for x in curve.xData if x >= view.x_of(900_201)]
    assert steps and all(lo < x < hi for x in steps)  # every step of B's curves from its first event on is shown
    s.set_tick(900_201)
    assert [view.tick_of(line.value()) for line in view.cursors] == [900_201, 900_201]
    assert all(line.value() == view.x_of(900_201) for line in view.cursors)
    # The tick bar: B's first event at the start of the range, right of the lead-in, and the mark there too.
    assert track.first_tick == 900_201 and track.mark == 900_201
    assert track.x_for(900_201) == track.MARGIN + track.LEAD_PX and track.tick_at(track.x_for(900_201)) == 900_201
    s.set_tick(0)  # tick 0 is still drawn in the lead-in
    assert track.x_for(0) == track.MARGIN and view.tick_of(view.cursors[0].value()) == 0
    w.compare.stop_action.trigger()
    w.finish_background()
    assert track.first_tick == 1_000_201 == s.view_start
    view.full_button.click()
    assert view.score_plot.vb.viewRange()[0][0] > view.x_of(990_000)


@pytest.mark.parametrize("size", [(1440, 900), (1040, 700)])
def test_the_cursor_label_and_the_parting_label_do_not_overlap(qtbot, open_window, size):
    """At 1040x700 the cursor's label ("5,000") covered half of "A/B part" when the cursor
    stood near the tick where the journals part: the score plot is ~100 px high there and
    both labels sat near its top, beside their lines. "A/B part" has a row of its own."""
    w = _spiral_vs_evening(open_window, size)
    s = w.session
    s.set_view("timelines")
    timelines = w.views["timelines"]
    cursor_label = timelines.cursors[0].label
    parting_label = timelines.overlay.divergence_lines[0].label
    parted = s.comparison.divergence.tick
    for tick in (parted, parted + 5_000, parted + 20_000):
        s.set_tick(tick)
        w.finish_background()
        timelines.graphics.grab()  # painted: a label's scene rect follows the view once painted
        assert cursor_label.textItem.toPlainText() == f"{tick:,}" and parting_label.isVisible()
        cursor_rect, parting_rect = cursor_label.sceneBoundingRect(), parting_label.sceneBoundingRect()
        assert cursor_rect.height() > 0 and parting_rect.height() > 0
        assert not cursor_rect.intersects(parting_rect), (tick, cursor_rect, parting_rect)
        # Both whole inside the plot, which clips them (the cursor label's top was cut off).
        plot = timelines.score_plot.vb.sceneBoundingRect()
        assert plot.contains(cursor_rect) and plot.contains(parting_rect), (plot, cursor_rect, parting_rect)


@pytest.mark.parametrize("size", [(1440, 900), (1040, 700)])
def test_the_differences_tick_column_holds_a_u64_tick_whole(qtbot, open_window, tmp_path, size):
    """Trial defect: comparing two saves near 2^64, the Differences dock's Tick column
    (80 px) cut "18,446,744,073,709,551,615" to "18,446,7…". The column is as wide as the
    largest tick of its rows with its separators, and the 80 px while ticks are short."""
    import json

    from PySide6.QtWidgets import QStyle

    from tests.test_widgets_u64_ticks import U64_MAX, shifted

    evening = json.loads((SAMPLES / "evening.json").read_text(encoding="utf-8"))
    offset = U64_MAX - evening["saved_at_tick"]
    paths = []
    for name in ("evening.json", "walkaway-spiral.json"):
        doc = json.loads((SAMPLES / name).read_text(encoding="utf-8"))
        paths.append(tmp_path / f"u64-{name}")
        paths[-1].write_text(json.dumps(shifted(doc, offset)), encoding="utf-8")
    shutil.copytree(CONTENT, tmp_path / "content")
    w = open_window(paths[0], size=size)
    w.compare.compare_with(paths[1], wait=True)
    dock = w.panels["differences"][0]
    ticks = [d.tick for d in dock.model.rows if d.tick is not None]
    assert ticks and len(f"{max(ticks):,}") == len(f"{U64_MAX:,}")  # 26 characters
    view = dock.view
    metrics = QFontMetrics(view.font())
    margins = 2 * (view.style().pixelMetric(QStyle.PM_FocusFrameHMargin, None, view) + 1)  # the cell's text margins
    widest = max(metrics.horizontalAdvance(f"{tick:,}") for tick in ticks)
    assert view.columnWidth(1) >= widest + margins >= metrics.horizontalAdvance(f"{U64_MAX:,}") + margins
    w.compare.stop_action.trigger()
    w.open_save(SAMPLES / "evening.json", wait=True)
    w.compare.compare_with(SAMPLES / "walkaway-spiral.json", wait=True)  # short ticks: the column as it was
    assert max(d.tick for d in dock.model.rows if d.tick is not None) < 10**6 and view.columnWidth(1) == 80

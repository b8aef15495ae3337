"""Tick bar and timelines: drive one side, assert on the other (pytest-qt, offscreen)."""

from __future__ import annotations

import math

import numpy as np
import pytest
from sortedcontainers import SortedDict

from tests.conftest import CONTENT, DATA

pytest.importorskip("pyqtgraph")

from narrative_debugger.models.domain.types import InteractionTolerance, NpcState, Relationship, ToleranceThreshold  # noqa: E402
from narrative_debugger.models.playthrough import Playthrough  # noqa: E402
from narrative_debugger.models.save.savefile import Journal, Save  # noqa: E402
from narrative_debugger.models.timeline.index import TimelineIndex, Versions  # noqa: E402
from narrative_debugger.widgets.session import Session  # noqa: E402
from narrative_debugger.widgets.tickbar.bar import TickBar, bin_ticks  # noqa: E402
from narrative_debugger.widgets.timelines.tracks import OTHER_WIDTH, SELECTED_WIDTH, Step, step_xy  # noqa: E402
from narrative_debugger.widgets.timelines.view import TimelinesView  # noqa: E402
from narrative_debugger.widgets.timelines import view as timelines  # noqa: E402
import pyqtgraph as pg  # noqa: E402
from PySide6.QtCore import QPointF, Qt  # noqa: E402
from PySide6.QtGui import QColor, QImage  # noqa: E402
from narrative_debugger.widgets.tickbar import bar as tickbar_module  # noqa: E402
from PySide6.QtWidgets import QApplication  # noqa: E402


class _Names:
    """Stands in for Content: an NPC's display name is its slug, title-cased."""

    findings: list = []

    def npc_name(self, slug: str) -> str:
        return slug.replace("-", " ").title()


def synthetic_playthrough(series: dict[int, list[tuple[int, float, int]]], last_tick: int = 1000,
                          events: list[tuple[int, str, int]] = ()) -> Playthrough:
    """A playthrough whose NPCs take the given (tick, score, stress) values.

    Args:
        series: StableId -> (tick, score, stress) in tick order; tick 0 is the initial state.
        last_tick: saved_at_tick.
        events: extra (tick, variant, target) journal entries (walk-aways and such).
    """
    entries = sorted({t for values in series.values() for t, _, _ in values if t > 0}
                     | {t for t, _, _ in events})
    rows = [(t, "RelationshipInteraction", {}) for t in entries]
    rows += [(t, kind, {"target": target}) for t, kind, target in events]
    rows.sort(key=lambda r: r[0])
    index = TimelineIndex()
    index.ticks = [t for t, _, _ in rows]
    index.kinds = [k for _, k, _ in rows]
    journal = Journal(list(index.ticks), list(index.kinds), [d for _, _, d in rows])
    npcs = SortedDict()
    for sid, values in series.items():
        for tick, score, stress in values:
            state = NpcState(sid, f"npc-{sid}", ToleranceThreshold(stress, 40),
                             InteractionTolerance(2, 0.3, 6, True), Relationship(score=score))
            position = index.position_for_tick(tick) if tick > 0 else 0
            if sid in index.npcs:
                index.npcs[sid].set(position, state)
            else:
                index.npcs[sid] = Versions(position, state)
            npcs[sid] = state
    save = Save(label="synthetic", saved_at_tick=last_tick, npcs=npcs, journal=journal)
    return Playthrough(save, _Names(), index, [])


@pytest.fixture()
def minimal():
    return Playthrough.open(DATA / "minimal.json", CONTENT)


@pytest.fixture()
def stepping():
    """Walk-aways at 100 and 400, a confrontation at 250, interactions at 50 and 300."""
    return synthetic_playthrough(
        {7: [(0, 10.0, 0), (50, 12.0, 0), (100, 11.0, 6), (300, 30.0, 50)], 8: [(0, 50.0, 0), (200, 55.0, 0)]},
        last_tick=1000,
        events=[(50, "InteractionStarted", 7), (100, "InteractionWalkedAway", 7), (100, "WalkAwayPenalty", 7),
                (250, "InteractionConfrontation", 8), (300, "InteractionStarted", 7), (400, "InteractionWalkedAway", 7)],
    )


def _session(qtbot, playthrough, tick=0, npc=None) -> Session:
    session = Session()
    if playthrough is not None:
        session.load(playthrough, tick=tick, npc=npc)
    return session


def _distinct_colours(widget) -> int:
    widget.resize(1000, 600)
    widget.show()
    image = widget.grab().toImage()
    colours = {image.pixel(x, y) for x in range(0, image.width(), 3) for y in range(0, image.height(), 3)}
    return len(colours)


def _action(bar: TickBar, name: str):
    return next(a for a in bar.actions() if a.objectName() == name)


# ----- pure helpers -----
def test_step_xy_edge_cases():
    x, y = step_xy([], [], 10)
    assert len(x) == len(y) == 0
    x, y = step_xy([5], [3.0], 10)
    assert list(x) == [5, 10] and list(y) == [3, 3]
    x, y = step_xy([0, 4, 4, 8], [1.0, 2.0, 3.0, float("nan")], 10)
    assert list(x) == [0, 4, 4, 8, 8, 10]
    step = Step(x, y)
    assert step.at(5) == 3.0 and math.isnan(step.at(9)) and step.at(0) == 1.0
    assert math.isnan(step.at(-1))
    x, y = step_xy([0, 3, 6, 9], [7.0, 7.0, 7.0, 8.0], 12)  # unchanged runs collapse
    assert list(x) == [0, 9, 9, 12] and list(y) == [7, 7, 8, 8]
    assert list(Step(x, y).at_many(np.array([-1.0, 0, 8.9, 9, 20]))[1:]) == [7, 7, 8, 8]


def test_bin_ticks_counts_per_column():
    cols, counts = bin_ticks(np.array([0, 0, 50, 100], dtype=np.int64), 100, 11)
    assert list(cols) == [0, 5, 10] and list(counts) == [2, 1, 1]
    cols, _ = bin_ticks(np.array([3], dtype=np.int64), 0, 10)
    assert list(cols) == [0]


# ----- tick bar -----
def test_tickbar_keys_step_through_events(qtbot, stepping):
    session = _session(qtbot, stepping)
    bar = TickBar(session)
    qtbot.addWidget(bar)
    qtbot.keyClick(bar, Qt.Key_Right)
    assert session.tick == 50
    qtbot.keyClick(bar, Qt.Key_Right)
    assert session.tick == 100
    qtbot.keyClick(bar, Qt.Key_Left)
    assert session.tick == 50
    qtbot.keyClick(bar, Qt.Key_Right, Qt.ShiftModifier)
    assert session.tick == 150
    qtbot.keyClick(bar, Qt.Key_End)
    assert session.tick == 1000
    qtbot.keyClick(bar, Qt.Key_Left, Qt.ShiftModifier)
    assert session.tick == 900
    qtbot.keyClick(bar, Qt.Key_Home)
    assert session.tick == 0


def test_tickbar_kind_combo_and_actions(qtbot, stepping):
    session = _session(qtbot, stepping)
    bar = TickBar(session)
    qtbot.addWidget(bar)
    names = {a.objectName() for a in bar.actions()}
    assert {"actionPreviousEvent", "actionNextEvent", "actionBack100", "actionForward100", "actionFirstTick",
            "actionLastTick", "actionGoToTick", "actionPlayPause"} <= names
    bar.kind_combo.setCurrentIndex(bar.kind_combo.findData("walk-away"))
    _action(bar, "actionNextEvent").trigger()
    assert session.tick == 100
    _action(bar, "actionNextEvent").trigger()
    assert session.tick == 400
    assert not _action(bar, "actionNextEvent").isEnabled()  # no walk-away after 400
    bar.kind_combo.setCurrentIndex(bar.kind_combo.findData("confrontation"))
    _action(bar, "actionPreviousEvent").trigger()
    assert session.tick == 250


def test_tickbar_go_to_tick(qtbot, stepping, monkeypatch):
    session = _session(qtbot, stepping)
    bar = TickBar(session)
    qtbot.addWidget(bar)
    monkeypatch.setattr(tickbar_module, "ask_tick", lambda parent, current, last, notify=None: 321)
    _action(bar, "actionGoToTick").trigger()
    assert session.tick == 321
    assert bar.tick_field.value() == 321
    monkeypatch.setattr(tickbar_module, "ask_tick", lambda parent, current, last, notify=None: None)  # cancelled
    _action(bar, "actionGoToTick").trigger()
    assert session.tick == 321


def test_tickbar_drag_previews_then_commits(qtbot, stepping):
    session = _session(qtbot, stepping)
    bar = TickBar(session)
    qtbot.addWidget(bar)
    with qtbot.waitSignal(session.tickPreview) as preview:
        bar.track.dragged.emit(600)
    assert preview.args == [600] and session.tick == 0
    with qtbot.waitSignal(session.tickChanged):
        bar.track.released.emit(610)
    assert session.tick == 610 and bar.track.tick == 610


def test_tickbar_mouse_drag_on_track(qtbot, stepping):
    from PySide6.QtCore import QPoint

    session = _session(qtbot, stepping)
    bar = TickBar(session)
    qtbot.addWidget(bar)
    bar.resize(600, 80)
    bar.show()
    track = bar.track
    y = track.height() // 2
    previews = []
    session.tickPreview.connect(previews.append)
    qtbot.mousePress(track, Qt.LeftButton, pos=QPoint(100, y))
    qtbot.mouseMove(track, QPoint(300, y))
    qtbot.mouseRelease(track, Qt.LeftButton, pos=QPoint(300, y))
    assert previews and previews[0] == track.tick_at(100)
    assert session.tick == track.tick_at(300) > 0


def test_tickbar_follows_session_and_spin_sets_tick(qtbot, stepping):
    session = _session(qtbot, stepping)
    bar = TickBar(session)
    qtbot.addWidget(bar)
    session.set_tick(777)
    assert bar.tick_field.value() == 777 and bar.track.tick == 777
    assert bar.time_label.text() == "0:01:17.7 / 0:01:40.0"
    # Plain text, italic while a drag previews (a rich-text label re-laid a document per step).
    assert bar.time_label.textFormat() == Qt.PlainText and not bar.time_label.font().italic()
    session.set_tick(500, live=True)
    assert bar.time_label.text() == "0:00:50.0 / 0:01:40.0" and bar.time_label.font().italic()
    session.set_tick(500)
    assert not bar.time_label.font().italic()
    bar.tick_field.setText("12")
    bar.tick_field.editingFinished.emit()
    assert session.tick == 12


def test_a_narrow_tickbar_shows_the_tick_time_alone_and_squeezes_the_kind_combo_instead_of_cutting_the_row(qtbot, stepping):
    """At 1040 x 700 the bar's row needed 638 px of a 488 px centre: the game times were
    cut at the edge. The pair gives way to the tick's time, the kind combo elides."""
    session = _session(qtbot, stepping)
    bar = TickBar(session)
    qtbot.addWidget(bar)
    session.set_tick(777)
    bar.resize(bar.sizeHint().width(), 80)
    bar.show()
    qtbot.waitExposed(bar)
    assert bar.time_label.text() == "0:01:17.7 / 0:01:40.0"
    index = bar.kind_combo.findText("Confrontation")
    assert index > 0
    bar.kind_combo.setCurrentIndex(index)
    narrow = bar.minimumSizeHint().width()
    assert narrow < bar.sizeHint().width() - 100
    bar.resize(narrow, 80)
    qtbot.waitUntil(lambda: bar.time_label.text() == "0:01:17.7")
    assert bar.time_label.toolTip() == "Game time at tick 777 / at the last tick 1,000"
    combo = bar.kind_combo
    assert combo.minimumSizeHint().width() <= combo.width() < combo.sizeHint().width()
    assert combo.currentText() == "Confrontation"  # whole in the model; elided on screen only
    for child in (bar.tick_field, bar.time_label.parentWidget(), combo):
        right = child.mapTo(bar, child.rect().topRight()).x()
        assert right < bar.width(), child.objectName()
    session.set_tick(500)
    assert bar.time_label.text() == "0:00:50.0"
    bar.resize(bar.sizeHint().width(), 80)
    qtbot.waitUntil(lambda: bar.time_label.text() == "0:00:50.0 / 0:01:40.0")


def test_tickbar_play_steps_and_stops(qtbot, stepping):
    session = _session(qtbot, stepping, tick=990)
    bar = TickBar(session)
    qtbot.addWidget(bar)
    bar.speed_combo.setCurrentIndex(bar.speed_combo.findData(4))
    assert bar.ticks_per_frame() == 4
    qtbot.keyClick(bar, Qt.Key_Space)
    assert bar.playing
    qtbot.waitUntil(lambda: not bar.playing, timeout=3000)
    assert session.tick == 1000
    bar.speed_combo.setCurrentIndex(0)  # event by event, restarts from the first tick at the end
    bar.set_playing(True)
    qtbot.waitUntil(lambda: session.tick == 50, timeout=3000)
    bar.set_playing(False)


def test_tickbar_keys_leave_tables_and_text_alone(qtbot, stepping):
    from PySide6.QtWidgets import QLineEdit, QTableWidget, QVBoxLayout, QWidget

    session = _session(qtbot, stepping)
    window = QWidget()
    qtbot.addWidget(window)
    table, edit, plain, bar = QTableWidget(3, 3), QLineEdit("text"), QWidget(), TickBar(session)
    plain.setFocusPolicy(Qt.StrongFocus)
    layout = QVBoxLayout(window)
    for widget in (table, edit, plain, bar):
        layout.addWidget(widget)
    window.show()
    window.activateWindow()
    qtbot.waitUntil(lambda: QApplication.activeWindow() is window)
    table.setFocus()
    table.setCurrentCell(0, 0)
    qtbot.keyClick(table, Qt.Key_Right)
    assert table.currentColumn() == 1 and session.tick == 0
    edit.setFocus()
    edit.setCursorPosition(0)
    qtbot.keyClick(edit, Qt.Key_Right)
    assert edit.cursorPosition() == 1 and session.tick == 0
    plain.setFocus()
    qtbot.keyClick(plain, Qt.Key_Right)  # not a key user: the window-wide shortcut steps
    assert session.tick == 50


def test_tickbar_without_save_and_minimal(qtbot, minimal):
    session = Session()
    bar = TickBar(session)
    qtbot.addWidget(bar)
    assert not bar.isEnabled()
    session.load(minimal)
    assert bar.isEnabled() and bar.track.last_tick == 170
    qtbot.keyClick(bar, Qt.Key_Home)
    qtbot.keyClick(bar, Qt.Key_Right)
    assert session.tick == 120


# ----- timelines -----
def test_cursor_drag_sets_session_tick(qtbot, stepping):
    session = _session(qtbot, stepping, npc=7)
    view = TimelinesView(session)
    qtbot.addWidget(view)
    line = view.cursors[0]
    line.setValue(432.4)
    with qtbot.waitSignal(session.tickChanged):
        line.sigPositionChangeFinished.emit(line)
    assert session.tick == 432
    assert view.cursors[1].value() == 432


def _title_boxes(view) -> list:
    """Each plot's left axis: (title shown, the title's text box in scene pixels or None
    when none is shown, the axis's own box in scene pixels, the title font's metrics)."""
    from PySide6.QtGui import QFontMetrics

    out = []
    for plot in (view.score_plot, view.stress_plot):
        axis = plot.getAxis("left")
        own = axis.mapRectToScene(axis.rect())
        box = None
        if axis.label.isVisible() and axis.labelText:
            m = axis.label.document().documentMargin()  # padding around the text itself
            box = axis.mapRectToScene(axis.label.mapRectToParent(axis.label.boundingRect().adjusted(m, m, -m, -m)))
        out.append((axis.labelText, box, own, QFontMetrics(axis.label.font())))
    return out


@pytest.mark.parametrize("point_size", [None, 11, 14])
@pytest.mark.parametrize("height", [200, 220, 240, 300, 420, 700])
def test_axis_titles_never_run_into_each_other(qtbot, stepping, height, point_size):
    """Trial defects: at 1040x700 with the docks keeping their width, the score plot was
    about 80 px tall and its vertical title "Relationship score" ran down into "Stress";
    then, at an 11 pt desktop font while comparing (plots of ~40 px), "Score" and
    "Stress" met and read "StressScore". A title shows only inside its own plot, half a
    line of the title's font from the other's; one that does not fit is left out (the
    axis's tooltip names it)."""
    from PySide6.QtWidgets import QApplication

    before = QApplication.font()
    if point_size is not None:
        bigger = QApplication.font()
        bigger.setPointSize(point_size)
        QApplication.setFont(bigger)
    try:
        session = _session(qtbot, stepping, npc=7)
        view = TimelinesView(session)
        qtbot.addWidget(view)
        view.resize(480, height)
        view.show()
        qtbot.waitExposed(view)
        for _ in range(4):
            QApplication.processEvents()
        titles = _title_boxes(view)
    finally:
        QApplication.setFont(before)
    for (text, box, own, metrics), full in zip(titles, ("Relationship score", "Stress")):
        assert text in (full, "Score" if full != "Stress" else full, "")
        if box is not None:
            assert box.top() >= own.top() - 1 and box.bottom() <= own.bottom() + 1, (text, box, own)
            assert box.height() >= metrics.horizontalAdvance(text) - 1  # the box holds the whole title (and a space)
    (_, score_box, _, metrics), (_, stress_box, _, _) = titles
    if score_box is not None and stress_box is not None:
        assert stress_box.top() - score_box.bottom() >= metrics.height() / 2 - 1, (score_box, stress_box)
    assert [view.score_plot.getAxis("left").toolTip(), view.stress_plot.getAxis("left").toolTip()] == ["Relationship score", "Stress"]
    if height == 700 and point_size is None:  # room enough: the whole title
        assert view.score_plot.getAxis("left").labelText == "Relationship score"
    if height >= 300 and point_size is None:  # at the app's font, a plot of a 1040x700 window shows both
        assert all(box is not None for _, box, _, _ in titles)


def test_step_extent_holds_the_values_of_every_step_across_a_span():
    step = Step.build([0, 100, 200, 300], [5.0, float("nan"), 40.0, 10.0], end=400)
    assert step.end == 400
    assert step.extent(0, 50) == (5.0, 5.0)
    assert step.extent(50, 250) == (5.0, 40.0)  # the NaN gap left out
    assert step.extent(101, 199) is None and step.extent(500, 600) is None  # (100, 5.0) ends the first step
    assert step.extent(250, 400) == (10.0, 40.0) and step.extent(400, 400) == (10.0, 10.0)
    assert Step.build([], [], end=0).extent(0, 10) is None and Step.build([], [], end=0).end is None


def _covered_curve_points(view, rect, last_px: float | None = None) -> list:
    """The points of the score curves drawn (every NPC's shown, side B's) inside the
    scene rect ``rect``, each curve's polyline walked across the rect's x span (only its
    last ``last_px`` pixels when given: the curve's end)."""
    vb = view.score_plot.vb
    curves = [view.tracks[sid].score for sid, curve in view.curves.items() if curve.isVisible()]
    curves += [track.score for track in view.overlay.tracks.values()]
    left, right = vb.mapSceneToView(rect.topLeft()).x(), vb.mapSceneToView(rect.topRight()).x()
    covered = []
    for step in curves:
        start = step.x[0] if last_px is None else step.x[-1] - last_px * vb.viewPixelSize()[0]
        for x in [x for x in np.linspace(left, right, 80) if start <= x <= step.x[-1]] + [float(step.x[-1])]:
            y = step.at(x)
            if rect.contains(vb.mapViewToScene(QPointF(x, y))):
                covered.append((x, y))
    return covered


def _label_at_last_tick(qtbot, play, size, last: int):
    session = _session(qtbot, play, npc=7)
    view = TimelinesView(session)
    qtbot.addWidget(view)
    view.resize(*size)
    view.show()
    qtbot.waitExposed(view)
    session.set_tick(last)
    for _ in range(2):  # painted: the label's scene rect follows the view once painted
        QApplication.processEvents()
        view.graphics.grab()
    label = view.cursors[0].label
    rect = label.sceneBoundingRect()
    assert label.textItem.toPlainText() == f"{last:,}" and rect.height() > 0
    assert view.score_plot.vb.sceneBoundingRect().contains(rect)
    return session, view, rect


@pytest.mark.parametrize("size", [(480, 300), (1000, 600)])
def test_the_cursor_label_never_covers_a_curve_end(qtbot, size):
    """Trial defect: with the cursor at the last tick, its label ("302,029"), left of the
    cursor near the top, covered the end of the selected NPC's curve at a score near 100.
    Where a curve ends beside the label, the label goes down to where no curve passes;
    elsewhere it stays near the top of the plot."""
    play = synthetic_playthrough({7: [(0, 0.0, 0), (300, 60.0, 0), (900, 100.0, 0)],
                                  8: [(0, 10.0, 0), (700, 20.0, 0)]}, last_tick=1000)
    session, view, rect = _label_at_last_tick(qtbot, play, size, 1000)
    # Ends at the cursor: 100 (top), 20; the label beside them covers neither nor their lead-in.
    assert _covered_curve_points(view, rect) == [], rect
    session.set_tick(500)  # in the middle: no curve ends beside it; near the top as before
    view.graphics.grab()
    rect, plot = view.cursors[0].label.sceneBoundingRect(), view.score_plot.vb.sceneBoundingRect()
    assert rect.top() - plot.top() <= rect.height(), (plot, rect)


def test_a_long_cursor_label_in_a_short_plot_leaves_the_curve_ends_whole(qtbot):
    """A long tick label (a u64 tick's is ~170 px) in a short plot, beside a curve climbing
    from 40 to 100 across the plot and three flat ones at 10, 30 and 50 (at 1040x700 a
    u64 save had no place clear of every curve, and the label stayed over the ends): the
    label leaves each curve's end (its last pixels, as many as the label is tall) uncovered."""
    base = 10**12  # a label of 17 characters (past ~10^15 the offscreen cursor is drawn off its tick)
    climb = [(base + 600 + 10 * k, 40.0 + 1.5 * k, 0) for k in range(41)]
    flat = {sid: [(0, score, 0)] for sid, score in ((8, 10.0), (9, 30.0), (10, 50.0))}
    play = synthetic_playthrough({7: [(0, 0.0, 0), *climb], **flat}, last_tick=base + 1000)
    _, view, rect = _label_at_last_tick(qtbot, play, (480, 300), base + 1000)
    assert _covered_curve_points(view, rect, last_px=rect.height()) == [], rect


@pytest.mark.parametrize("nudge", [0.01, 0.001])
def test_the_readout_writes_a_and_b_scores_apart(qtbot, nudge):
    """Trial defect: comparing (a what-if), the readout wrote "score 0.6 … B score 0.6"
    for two different scores (0.641 and 0.645): one decimal. Both now take the app's
    score format (2 decimals), and more where two different scores would read the same."""
    import json
    import re

    from narrative_debugger.models.whatif.run import what_if

    from tests.conftest import SAMPLES

    doc = json.loads((SAMPLES / "evening.json").read_text(encoding="utf-8"))
    entry = next(i for i, e in enumerate(doc["journal"]) if "RelationshipInteraction" in e["event"])
    event, tick = doc["journal"][entry]["event"]["RelationshipInteraction"], doc["journal"][entry]["tick"]
    a = Playthrough.open(SAMPLES / "evening.json", CONTENT)
    result = what_if(SAMPLES / "evening.json", CONTENT, [{"op": "replace", "value": event["sentiment"] + nudge,
                                                          "path": f"/journal/{entry}/event/RelationshipInteraction/sentiment"}], recorded=a)
    slug = a.save.npcs[event["target"]].slug
    score_a, score_b = result.comparison.scores_at(slug, tick)
    assert score_a != score_b and round(score_a, 1) == round(score_b, 1)
    session = _session(qtbot, a, tick=tick, npc=event["target"])
    view = TimelinesView(session)
    qtbot.addWidget(view)
    session.set_comparison(result.comparison)
    session.set_tick(tick)
    shown = re.findall(r"score&nbsp;<b>([0-9.]+)</b>", view.readout.text())
    assert len(shown) == 2 and shown[0] != shown[1], view.readout.text()
    places = len(shown[0].split(".")[1])
    assert places >= 2 and len(shown[1].split(".")[1]) == places
    assert [float(text) for text in shown] == [pytest.approx(score_a, abs=0.5 * 10**-places), pytest.approx(score_b, abs=0.5 * 10**-places)]
    if round(score_a, 2) == round(score_b, 2):
        assert places > 2


def test_cursor_live_drag_previews(qtbot, stepping):
    session = _session(qtbot, stepping, npc=7)
    view = TimelinesView(session)
    qtbot.addWidget(view)
    line = view.cursors[1]
    line.moving = True  # as during a mouse drag
    with qtbot.waitSignal(session.tickPreview, timeout=2000) as preview:
        line.setValue(222)
    line.moving = False
    assert preview.args == [222] and session.tick == 0
    assert view.cursors[0].value() == 222


def test_session_tick_moves_cursor(qtbot, stepping):
    session = _session(qtbot, stepping, npc=7)
    view = TimelinesView(session)
    qtbot.addWidget(view)
    session.set_tick(640)
    assert [line.value() for line in view.cursors] == [640, 640]
    session.set_tick(650, live=True)
    assert view.cursors[0].value() == 650
    assert "650" in view.readout.text()  # the readout follows the preview too


def test_selected_npc_is_emphasised(qtbot, stepping):
    session = _session(qtbot, stepping, npc=7)
    view = TimelinesView(session)
    qtbot.addWidget(view)
    # Every NPC's curve is drawn faded; the selected one's layer draws it again, wide, above them.
    width = {sid: curve.opts["pen"].widthF() for sid, curve in view.curves.items()}
    assert width == {7: OTHER_WIDTH, 8: OTHER_WIDTH}
    for npc in (7, 8, 7):
        session.set_npc(npc)
        emphasised = view.layer.score
        assert view.layer.shown and emphasised.opts["pen"].widthF() == SELECTED_WIDTH
        assert emphasised.opts["pen"].color() == view.tracks[npc].colour
        assert list(emphasised.getOriginalDataset()[1]) == list(view.tracks[npc].score.y)
        assert emphasised.zValue() > max(curve.zValue() for curve in view.curves.values())
        assert [sid for sid, layer in view.layers.items() if layer.shown] == [npc]
    x, y = view.stress_curve.getOriginalDataset()
    track = view.tracks[7]
    assert list(x) == list(track.stress.x)
    # Stress in the NPC's own frame (0 .. 1.1 x its highest stress or threshold), the
    # axis labelled in stress units: the plot's y range is the same for every NPC.
    bottom, span = view.layer.frame
    highest = max(track.stress.y.max(), track.threshold.y.max())
    assert bottom == 0 and span == pytest.approx(1.1 * highest)
    assert list(y) == pytest.approx(list(track.stress.y / span))
    assert view.stress_plot.getAxis("left").scale == span
    assert view.stress_plot.viewRange()[1] == pytest.approx([-0.02, 1.02])


def test_clicking_curve_or_legend_selects_npc(qtbot, stepping):
    session = _session(qtbot, stepping, npc=7)
    view = TimelinesView(session)
    qtbot.addWidget(view)
    view.curves[8].sigClicked.emit(view.curves[8], None)
    assert session.npc == 8
    assert "<b>Npc 8</b>" in view.legend.text()
    view.legend.linkActivated.emit("npc:7")  # the legend names are links
    assert session.npc == 7


def test_markers_of_selected_npc(qtbot, stepping):
    session = _session(qtbot, stepping, npc=7)
    view = TimelinesView(session)
    qtbot.addWidget(view)
    walk = view.markers["walk-away"][1].getData()
    assert list(walk[0]) == [100, 400] and list(walk[1]) == [11.0, 30.0]
    assert list(view.markers["penalty"][1].getData()[0]) == [100]
    assert len(view.markers["confrontation"][1].getData()[0]) == 0
    session.set_npc(8)
    assert list(view.markers["confrontation"][1].getData()[0]) == [250]


def _shown_markers(view) -> dict:
    """kind -> x of the marker items that are visible in the score plot."""
    shown = {}
    for item in view.score_plot.items:
        if isinstance(item, pg.ScatterPlotItem) and item.isVisible() and item.opacity() > 0 and item is not view.hover_dot:
            for kind, (_, mine) in view.markers.items():
                if mine is item:
                    shown[kind] = list(item.getData()[0])
    return shown


def _hover(qtbot, view, scene_pos: QPointF, shown) -> None:
    """The mouse moved to ``scene_pos`` (scene coordinates), as the plots' scene reports
    it; waits until the view's rate-limited hover handling makes ``shown()`` true."""
    view.graphics.scene().sigMouseMoved.emit(scene_pos)
    qtbot.waitUntil(shown, timeout=2_000)


def _shown_timelines(qtbot, session, size=(900, 500)) -> TimelinesView:
    """A TimelinesView of ``session``, shown and exposed at ``size``."""
    view = TimelinesView(session)
    qtbot.addWidget(view)
    view.resize(*size)
    view.show()
    qtbot.waitExposed(view)
    return view


def test_a_kept_layer_is_shown_again_from_its_pixmaps(qtbot, stepping):
    """Selecting an NPC again shows its kept layer without drawing any of its items
    anew (issue 10: a step that selected another NPC redrew both plots, 10-15 ms)."""
    session = _session(qtbot, stepping, npc=7)
    view = _shown_timelines(qtbot, session)
    view.graphics.viewport().repaint()  # 7's layer is drawn (into its pixmaps)
    session.set_npc(8)
    view.graphics.viewport().repaint()
    seven = view.layers[7]
    painted = _paints_of(seven)
    session.set_npc(7)
    view.graphics.viewport().repaint()
    assert view.layer is seven and seven.shown and not view.layers[8].shown
    assert painted == []
    session.set_npc(8)
    view.score_plot.setXRange(100, 300, padding=0)  # a zoom draws them again, once shown
    QApplication.processEvents()
    session.set_npc(7)
    QApplication.processEvents()
    view.graphics.viewport().repaint()
    assert seven.score.curve in painted and seven.stress.curve in painted


def _paints_of(layer) -> list:
    """A list that each paint of one of ``layer``'s items adds that item to."""
    painted = []
    parts = [item.curve for item in (layer.score, layer.stress, layer.threshold)]
    parts += [layer.fill, *(item for _, item in layer.markers.values())]
    for part in parts:
        draw = part.paint
        part.paint = lambda *args, _draw=draw, _part=part: (painted.append(_part), _draw(*args))[1]
    return painted


def test_a_few_npcs_layers_are_drawn_and_painted_before_any_step(qtbot, stepping):
    """A save whose NPCs all fit in the kept layers: each NPC's layer is drawn after the
    load, in slices, and painted once into its pixmaps, so that the first step that
    selects it draws nothing (issue 10: the first selection of each NPC cost 23-38 ms)."""
    from PySide6.QtWidgets import QMainWindow

    session = Session()
    window = QMainWindow()
    qtbot.addWidget(window)
    view = TimelinesView(session)
    window.setCentralWidget(view)
    window.resize(900, 500)
    window.show()
    qtbot.waitExposed(window)
    session.load(stepping, npc=7)
    assert not view.drawn  # shown: drawn from the event loop
    qtbot.waitUntil(lambda: view.drawn, timeout=10_000)
    eight = view.layers[8]
    assert not eight.shown and eight.npc == 8
    painted = _paints_of(eight)
    session.set_npc(8)
    view.graphics.viewport().repaint()
    assert view.layer is eight and eight.shown and painted == []


def test_the_next_events_npc_has_its_layer_ready_before_the_step(qtbot, open_window, isolated_settings, monkeypatch):
    """A few milliseconds after a step, the layers of the NPCs that the next and the
    previous event concern are drawn and painted, so a step that selects one of them
    draws nothing anew (issue 10: in a crowd, such steps drew a layer, ~12 ms)."""
    from tests.conftest import SAMPLES

    monkeypatch.setattr(timelines, "LAYERS_KEPT", 3)  # six NPCs: no longer all made at the load
    window = open_window(SAMPLES / "evening.json")
    s = window.session
    view = window.views["timelines"]
    s.set_view("timelines")
    qtbot.waitUntil(lambda: view.drawn, timeout=10_000)
    s.set_tick(0)  # the save opens at its last tick
    checked = 0
    for _ in range(400):
        window.tickbar.next_action.trigger()
        qtbot.waitUntil(lambda: not view.drawing_ahead, timeout=5_000)
        coming = s.step_target(None, True)  # the steps go forward: the next event's NPC is made
        npc = s.playthrough.save.npc_of_entry(coming[1]) if coming else None
        assert npc is None or npc in view.layers and npc in s.neighbour_npcs()
        assert len(view.layers) <= 3
        assert view.layer is view.layers[s.npc] and view.layer.shown
        assert [sid for sid, layer in view.layers.items() if layer.shown] == [s.npc]
        if npc is not None and npc != s.npc:
            painted = _paints_of(view.layers[npc])
            window.tickbar.next_action.trigger()
            view.graphics.viewport().repaint()
            assert s.npc == npc and view.layer.npc == npc and painted == []
            checked += 1
            if checked == 5:
                break
    assert checked == 5


def test_a_click_on_a_curve_under_the_hover_dot_selects_its_npc(qtbot, stepping):
    """The hover dot sits on the curve under the mouse, and marker items (a hidden layer's
    too) lie over curves: a click there went to them and never to the curve (trial)."""
    from PySide6.QtCore import QPoint
    from pytestqt.qt_compat import qt_api

    session = _session(qtbot, stepping, npc=7)
    view = _shown_timelines(qtbot, session)
    session.set_npc(8)
    session.set_npc(7)  # 8's layer is kept, hidden, with its confrontation marker at tick 250
    view.graphics.viewport().repaint()
    vb = view.score_plot.getViewBox()
    for tick in (600, 250):
        scene = vb.mapViewToScene(QPointF(view.x_of(tick), 55.0))  # on 8's curve (55 from tick 200)
        at = view.graphics.mapFromScene(scene)
        qtbot.mouseMove(view.graphics.viewport(), at)
        _hover(qtbot, view, scene, lambda: list(view.hover_dot.getData()[1]) == [55.0])  # the dot under the mouse
        qtbot.mouseClick(view.graphics.viewport(), qt_api.QtCore.Qt.MouseButton.LeftButton, pos=QPoint(at.x(), at.y()))
        assert session.npc == 8, tick
        session.set_npc(7)


def test_hovering_another_npcs_curve_names_none_of_the_selected_npcs_markers(qtbot, stepping):
    """7 walked away at tick 100; hovering 8's curve there said "Npc 8 … · Walk-away at
    tick 100", as if 8 had (trial). The markers are named with the selected NPC only."""
    session = _session(qtbot, stepping, npc=7)
    view = _shown_timelines(qtbot, session)
    vb = view.score_plot.getViewBox()
    _hover(qtbot, view, vb.mapViewToScene(QPointF(view.x_of(100), 50.0)), lambda: "Npc 8" in view.readout.text())  # 8's curve
    assert "Walk-away" not in view.readout.text()
    _hover(qtbot, view, vb.mapViewToScene(QPointF(view.x_of(100), 11.0)), lambda: "Npc 7" in view.readout.text())  # 7's
    assert "Walk-away</b> at tick&nbsp;100" in view.readout.text()


def test_the_legend_follows_a_dark_palette(qtbot, stepping):
    """The legend wrote names in a fixed #222 and a light pink swatch: unreadable on a
    dark palette (trial). Names and the threshold swatch take the palette's text colour,
    the over-threshold swatch the fill's colour over the plots' background."""
    from PySide6.QtGui import QPalette

    session = _session(qtbot, stepping, npc=7)
    view = TimelinesView(session)
    qtbot.addWidget(view)
    assert "color:#000000; text-decoration" in view.legend.text() and "background:#f4c4c4" in view.legend.text()
    palette = QPalette(view.palette())
    for role, colour in ((QPalette.Text, "#e0e0e0"), (QPalette.WindowText, "#e0e0e0"), (QPalette.Base, "#202020"),
                         (QPalette.Window, "#303030")):
        palette.setColor(role, QColor(colour))
    view.setPalette(palette)
    QApplication.processEvents()
    text = view.legend.text()
    assert "#222" not in text and "color:#e0e0e0; text-decoration" in text
    assert "<span style='color:#e0e0e0'>╍╍</span>" in text
    assert "background:#522222" in text  # (214, 39, 40) at 70/255 over #202020


class _Drag:
    """What ``ViewBox.mouseDragEvent`` reads of a left-button drag from ``start`` to
    ``end`` (view-box pixel positions), at its last move (finished or not)."""

    def __init__(self, start, end, finish: bool) -> None:
        self.start, self.end, self.finish = start, end, finish

    def button(self):
        return Qt.MouseButton.LeftButton

    def buttons(self):
        return Qt.MouseButton.LeftButton

    def modifiers(self):
        return Qt.KeyboardModifier.NoModifier

    def pos(self):
        return self.end

    def lastPos(self):  # noqa: N802 (pyqtgraph's event API)
        return self.start if self.finish else self.end

    def buttonDownPos(self, _button=None):  # noqa: N802
        return self.start

    def isStart(self):  # noqa: N802
        return not self.finish

    def isFinish(self):  # noqa: N802
        return self.finish

    def accept(self):
        pass

    def ignore(self):
        pass


def test_a_drag_across_a_plot_zooms_to_its_ticks(qtbot, stepping):
    """"Drag across it to zoom" (README): the plots panned instead (trial). A drag from
    tick 200 to 500 shows ticks 200..500 in both plots, and keeps each plot's y range;
    the tick does not move. (Checked with real X events under Xvfb and xdotool too.)"""
    session = _session(qtbot, stepping, npc=7)
    view = _shown_timelines(qtbot, session)
    vb = view.score_plot.getViewBox()
    assert vb.state["mouseMode"] == pg.ViewBox.RectMode
    ys = [plot.getViewBox().viewRange()[1] for plot in (view.score_plot, view.stress_plot)]
    start, end = (vb.mapViewToScene(QPointF(view.x_of(tick), y)) for tick, y in ((200, 50.0), (500, 30.0)))
    start, end = vb.mapFromScene(start), vb.mapFromScene(end)
    vb.mouseDragEvent(_Drag(start, end, finish=False))
    vb.mouseDragEvent(_Drag(start, end, finish=True))
    QApplication.processEvents()
    for plot, y in zip((view.score_plot, view.stress_plot), ys):
        x_range, y_range = plot.getViewBox().viewRange()
        assert x_range == pytest.approx([200, 500], abs=1.0) and y_range == y
    assert session.tick == 0


def test_every_layers_threshold_follows_the_palette(qtbot, stepping):
    from PySide6.QtGui import QPalette

    session = _session(qtbot, stepping, npc=7)
    view = TimelinesView(session)
    qtbot.addWidget(view)
    palette = QPalette(view.graphics.palette())
    palette.setColor(QPalette.Text, QColor("#e0e0e0"))
    palette.setColor(QPalette.Base, QColor("#202020"))
    view.graphics.setPalette(palette)
    QApplication.processEvents()
    session.set_npc(8)  # a layer made after the change
    kept = [view.layers[7], view.layers[8]]
    session.set_npc(None)  # the empty layer (no NPC selected)
    assert view.layer not in kept
    for layer in (*kept, view.layer):
        assert layer.threshold.opts["pen"].color().name() == "#e0e0e0"
        assert layer.threshold.opts["pen"].style() == Qt.DashLine


def test_markers_kept_per_npc_and_dropped_with_the_save(qtbot, stepping, monkeypatch):
    monkeypatch.setattr(timelines, "LAYERS_KEPT", 2)
    series = {sid: [(0, 10.0, 0), (100 + sid, 20.0, 5)] for sid in (7, 8, 9)}
    events = [(100 + sid, "InteractionWalkedAway", sid) for sid in (7, 8, 9)]
    play = synthetic_playthrough(series, last_tick=1000, events=events)
    session = _session(qtbot, play, npc=7)
    view = TimelinesView(session)
    qtbot.addWidget(view)
    first = view.markers["walk-away"][1]
    assert _shown_markers(view)["walk-away"] == [107]
    session.set_npc(8)
    assert _shown_markers(view) == {"walk-away": [108], "confrontation": [], "penalty": []}
    session.set_npc(7)  # kept: the same items, shown again, and only they are visible
    assert view.markers["walk-away"][1] is first
    assert _shown_markers(view)["walk-away"] == [107]
    eight = view.layers[8].markers["walk-away"][1]
    session.set_npc(9)  # a third NPC: the least recently shown (8) gives 9 its items
    assert list(view.layers) == [7, 9]
    assert view.markers["walk-away"][1] is eight and _shown_markers(view)["walk-away"] == [109]
    scatter = [i for i in view.score_plot.items if isinstance(i, pg.ScatterPlotItem) and i is not view.hover_dot]
    assert len(scatter) == 3 * 3  # the empty set and two NPCs' sets (8's items went to 9)
    session.set_npc(None)
    assert _shown_markers(view) == {"walk-away": [], "confrontation": [], "penalty": []}
    session.load(stepping, npc=8)  # a new save: no NPC's items from the old one stay
    assert _shown_markers(view) == {"walk-away": [], "confrontation": [250], "penalty": []}
    # Both NPCs fit in the kept layers: 8's is shown, 7's drawn ahead of a step, hidden.
    assert sorted(view.layers) == [7, 8] and view.layer is view.layers[8]
    assert not view.layers[7].shown and list(view.layers[7].markers["walk-away"][1].getData()[0]) == [100, 400]


@pytest.mark.parametrize("series", [
    {3: [(0, 0.0, 0)]},                                             # single point
    {3: [(0, 42.0, 5), (10, 42.0, 5), (20, 42.0, 5)]},             # flat
    {3: [(0, 10.0, 0), (10, float("nan"), 0), (20, 30.0, 60)]},    # gap
    {},                                                            # no NPC at all
], ids=["single", "flat", "nan-gap", "empty"])
def test_degenerate_series_draw(qtbot, series):
    session = _session(qtbot, synthetic_playthrough(series, last_tick=30), npc=3 if series else None)
    view = TimelinesView(session)
    qtbot.addWidget(view)
    view.resize(800, 500)
    view.show()
    view.grab()
    session.set_tick(15)
    session.set_npc(None)
    view.grab()


def test_views_without_save(qtbot):
    session = Session()
    view = TimelinesView(session)
    bar = TickBar(session)
    qtbot.addWidget(view)
    qtbot.addWidget(bar)
    view.grab()
    assert "No save" in view.readout.text()


def test_hover_shows_values(qtbot, stepping):
    session = _session(qtbot, stepping, npc=7)
    view = TimelinesView(session)
    qtbot.addWidget(view)
    view.resize(1000, 600)
    view.show()
    view.grab()
    scene_pos = view.score_plot.vb.mapViewToScene(QPointF(350, 30.0))
    _hover(qtbot, view, scene_pos, lambda: "Mouse" in view.readout.text())
    text = view.readout.text()
    for part in ("Mouse", "350", "Npc 7", "30.0", "Acquaintance", "<b>50</b>&nbsp;/&nbsp;40", "over threshold"):
        assert part in text
    # Outside the plots: back to the cursor values.
    _hover(qtbot, view, QPointF(-50, -50), lambda: view.readout.text().startswith("<b>Cursor</b>"))


def test_grabs_are_not_blank(qtbot, stepping):
    session = _session(qtbot, stepping, tick=300, npc=7)
    view = TimelinesView(session)
    bar = TickBar(session)
    qtbot.addWidget(view)
    qtbot.addWidget(bar)
    assert _distinct_colours(view) > 20
    assert _distinct_colours(bar) > 10


def test_rising_curve_never_drawn_with_false_drops(qtbot):
    """Regression: peak downsampling drew a rising score as a sawtooth (max then min per bin)."""
    import numpy as np
    import pyqtgraph as pg
    from narrative_debugger.widgets.timelines.tracks import DOWNSAMPLE_ABOVE, StepCurve, step_xy, tune_curve

    plot = pg.PlotWidget()
    qtbot.addWidget(plot)
    plot.resize(400, 300)
    plot.show()
    for n in (300, DOWNSAMPLE_ABOVE + 5000):
        ticks = np.arange(n) * 10
        x, y = step_xy(ticks, np.linspace(0, 100, n), ticks[-1] + 10)
        curve = StepCurve(x, y, connect="finite")
        plot.addItem(curve)
        tune_curve(curve)
        qtbot.waitUntil(lambda: plot.getViewBox().viewRange()[0][1] >= x[-1], timeout=5000)  # ranged to the whole curve
        shown_x, shown_y = curve.getData()  # what is drawn (after downsampling), not the data given
        assert np.all(np.diff(shown_y) >= 0), n
        assert shown_x[-1] == x[-1] and shown_y[-1] == y[-1]  # drawn to the end
        if len(x) <= DOWNSAMPLE_ABOVE:
            assert len(shown_x) == len(x)  # small curves are drawn exactly
        plot.removeItem(curve)


def test_grid_lines_follow_the_bottom_axes_ticks(qtbot, stepping):
    """The x grid (timeline_grid.GridLines) draws pyqtgraph's grid: a line at each tick
    of the bottom axis, alpha 255/(k+1) * 38/255 * clip(0.05 * width/(ticks+1), 0, 1) for
    tick level k, over the whole view; an x-range change moves the lines, a y-range change
    (another NPC's stress) leaves them, and the axes draw no grid of their own."""
    session = _session(qtbot, stepping, npc=7)
    view = _shown_timelines(qtbot, session)
    QApplication.processEvents()
    for plot, grid in zip((view.score_plot, view.stress_plot), view.grids):
        assert plot.getAxis("bottom").grid is False
        axis = view.tick_axis  # the labelled ticks, for both plots
        vb = plot.getViewBox()
        width = vb.boundingRect().width()
        lo, hi = vb.viewRange()[0]
        levels = axis.tickValues(lo, hi, width)
        want = [(int(255 / (k + 1) * 38 / 255 * min(1.0, 0.05 * width / (len(values) + 1))),
                 [(v - lo) * width / (hi - lo) for v in values if lo <= v <= hi]) for k, (_, values) in enumerate(levels)]
        got = grid.lines()
        assert [alpha for alpha, _ in got] == [alpha for alpha, _ in want]
        assert [xs for _, xs in got] == [pytest.approx(xs) for _, xs in want]
        assert want[0][1] and want[0][0] == 38  # major lines at 15 % opacity, as showGrid(alpha=0.15)
        assert grid.boundingRect() == vb.boundingRect()
    before = view.grids[0].lines()
    view.stress_plot.setYRange(0, 500)
    assert view.grids[0].lines() == before
    view.score_plot.setXRange(100, 300, padding=0)
    QApplication.processEvents()
    moved = view.grids[0].lines()
    assert moved != before
    width = view.score_plot.getViewBox().boundingRect().width()
    assert all(0 <= x <= width for _, xs in moved for x in xs)
    image = view.graphics.grab().toImage()  # the lines are drawn: a major one is darker than the band beside it
    vb = view.stress_plot.getViewBox()
    x = moved[0][1][0]
    at = vb.mapToScene(QPointF(x, vb.boundingRect().height() / 2))
    point = view.graphics.mapFromScene(at)
    beside = view.graphics.mapFromScene(vb.mapToScene(QPointF(x + 4, vb.boundingRect().height() / 2)))
    assert QColor(image.pixel(point)).lightness() < QColor(image.pixel(beside)).lightness()


# ----- a zoomed view after steps and drags draws what a fresh zoom draws (issue 35) -----

def _long_walk() -> Playthrough:
    """Two NPCs over 100 000 ticks: 7's stress and score change every 1 000 ticks up to
    tick 60 000 and then hold to the end; 8 rises in steps of 5 000."""
    seven = [(t, float(t % 97), int(t // 1000 % 50)) for t in range(0, 60_001, 1000)]
    eight = [(t, 20.0 + t / 2500, int(t // 5000 % 30)) for t in range(0, 100_001, 5000)]
    return synthetic_playthrough({7: seven, 8: eight}, last_tick=100_000)


def _drawn(view) -> dict:
    """The data every plot-data item of both plots draws (``getData``), by plot and
    z-order, with the cursor's position."""
    out = {}
    for name, plot in (("score", view.score_plot), ("stress", view.stress_plot)):
        items = [item for item in plot.listDataItems() if item.opacity() > 0]
        out[name] = sorted((item.zValue(), tuple(np.round(item.getData()[0], 6)), tuple(np.round(item.getData()[1], 6)))
                           for item in items if item.getData()[0] is not None)
    out["cursor"] = view.cursors[0].value()
    return out


def _image(view) -> np.ndarray:
    view.graphics.viewport().repaint()
    image = view.graphics.grab().toImage().convertToFormat(QImage.Format.Format_RGB32)
    bits = np.frombuffer(image.constBits(), np.uint8).reshape(image.height(), image.bytesPerLine())
    return bits[:, : image.width() * 4].copy()


def _fresh_zoom(qtbot, playthrough, session, x_range, preview=None) -> TimelinesView:
    """A new view of ``session``'s tick and NPC (and the tick ``preview`` of a drag),
    zoomed straight to ``x_range``."""
    other = _session(qtbot, playthrough, tick=session.tick, npc=session.npc)
    fresh = _shown_timelines(qtbot, other, size=(900, 500))
    qtbot.waitUntil(lambda: fresh.drawn)
    fresh.score_plot.setXRange(*x_range, padding=0)
    if preview is not None:
        other.set_tick(preview, live=True)
    QApplication.processEvents()
    return fresh


def test_a_zoomed_step_curve_reads_the_same_data_every_time(qtbot):
    """A zoom where the last step begins in view and ends more than a view width past it:
    the stress drawn grew by two points at each read (the last step was put back into
    pyqtgraph's cached display data again and again)."""
    walk = _long_walk()
    session = _session(qtbot, walk, tick=58_000, npc=7)
    view = _shown_timelines(qtbot, session)
    qtbot.waitUntil(lambda: view.drawn)
    view.score_plot.setXRange(55_000, 65_000, padding=0)
    QApplication.processEvents()
    first = [np.array(a) for a in view.stress_curve.getData()]
    for _ in range(3):
        x, y = view.stress_curve.getData()
        assert np.array_equal(x, first[0]) and np.array_equal(y, first[1])
    assert x[-1] == pytest.approx(75_000)  # held one view width past the view
    assert np.isclose(y[-1] * view.layer.frame[1], 10)  # 60 000 // 1000 % 50: the last stress, to the end


@pytest.mark.parametrize("how", ["step", "drag", "bar"])
def test_after_a_drag_zoom_steps_and_drags_draw_what_a_fresh_zoom_draws(qtbot, how):
    """Issue 35: after a drag-zoom, stepping or dragging the tick cursor drew the stress
    as a flat line across the range, or with a gap: the zoomed plots kept the pixmaps of
    curves drawn for the range before the cursor moved it. After each move, the data of
    every curve and the pixels of both plots equal those of a new view zoomed straight
    to the same range."""
    walk = _long_walk()
    session = _session(qtbot, walk, tick=10_000, npc=7)
    view = _shown_timelines(qtbot, session)
    qtbot.waitUntil(lambda: view.drawn)
    vb = view.score_plot.getViewBox()
    start, end = (vb.mapFromScene(vb.mapViewToScene(QPointF(view.x_of(tick), 50.0))) for tick in (5_000, 25_000))
    vb.mouseDragEvent(_Drag(start, end, finish=False))
    vb.mouseDragEvent(_Drag(start, end, finish=True))
    QApplication.processEvents()
    _image(view)  # drawn (and cached) at the zoomed range
    bar = TickBar(session)
    qtbot.addWidget(bar)
    moves = {"step": [("event", None), ("ticks", 9_000)] * 4, "drag": [("live", t) for t in range(12_000, 90_001, 6_000)] + [("commit", 90_000)],
             "bar": [("commit", 70_000), ("commit", 3_000), ("commit", 99_000), ("npc", 8), ("commit", 40_000)]}[how]
    checked = 0
    for action, value in moves:
        if action == "event":
            bar.next_event()
        elif action == "ticks":
            bar.step_ticks(value)
        elif action == "live":
            session.set_tick(value, live=True)
        elif action == "npc":
            session.set_npc(value)
        else:
            session.set_tick(value)
        QApplication.processEvents()
        qtbot.waitUntil(lambda: view.drawn)
        if action == "live" and value % 18_000:
            _image(view)  # painted mid-drag, as a user sees it
            continue
        x_range = vb.viewRange()[0]
        fresh = _fresh_zoom(qtbot, walk, session, x_range, value if action == "live" else None)
        assert _drawn(view) == _drawn(fresh), (action, value, x_range)
        assert np.array_equal(_image(view), _image(fresh)), (action, value, x_range)
        fresh.close()
        checked += 1
    assert checked >= 3
    assert vb.viewRange()[0][1] - vb.viewRange()[0][0] == pytest.approx(20_000, abs=1)  # still zoomed

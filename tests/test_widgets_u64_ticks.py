"""Ticks are u64 everywhere in the GUI (issue 8 item 1): saves whose ticks sit near
1e15, past 2^62 and at 2^64 - 1 display, step, seek and plot exactly.

The saves are the bundled samples with every tick shifted by a constant, so the
expected ticks are the sample's own plus the shift, computed with Python ints.
"""

from __future__ import annotations

import json

import pytest
from narrative_debugger.models.playthrough import Playthrough
from narrative_debugger.widgets.tickbar import bar as tickbar_module
from narrative_debugger.widgets.docks.findings import FindingsModel
from narrative_debugger.widgets.tickbar.field import TICK_MAX, GoToTickDialog, TickField, judge_tick, parse_tick
from PySide6.QtCore import QPoint, Qt

from tests.conftest import CONTENT, SAMPLES

U64_MAX = 2**64 - 1


def shifted(doc, offset: int):
    """``doc`` with ``offset`` added to every tick (journal ``tick`` and every ``*_tick``)."""
    if isinstance(doc, dict):
        return {
            k: v + offset if (k == "tick" or k.endswith("_tick")) and type(v) is int else shifted(v, offset)
            for k, v in doc.items()
        }
    if isinstance(doc, list):
        return [shifted(v, offset) for v in doc]
    return doc


def shifted_save(tmp_path, name: str, offset: int | None, *, to_max: bool = False):
    doc = json.loads((SAMPLES / name).read_text(encoding="utf-8"))
    if to_max:
        offset = U64_MAX - doc["saved_at_tick"]
    path = tmp_path / f"{offset}-{name}"
    path.write_text(json.dumps(shifted(doc, offset)), encoding="utf-8")
    return path, offset


OFFSETS = [pytest.param((10**15 + 3, False), id="1e15"), pytest.param((2**62 + 7, False), id="2^62"),
           pytest.param((None, True), id="u64-max")]


pytestmark = pytest.mark.usefixtures("message_boxes")  # modal boxes recorded, never shown


@pytest.fixture(params=OFFSETS)
def big_window(request, open_window, tmp_path):
    offset, to_max = request.param
    path, offset = shifted_save(tmp_path, "evening.json", offset, to_max=to_max)
    window = open_window(None, (1400, 900), persist=False)
    window.open_save(path, wait=True)
    assert window.session.ready
    base = Playthrough.open(SAMPLES / "evening.json", CONTENT)
    return window, base, offset


def test_tick_field_parses_and_holds_any_u64(qtbot):
    assert parse_tick("18446744073709551615") == U64_MAX == TICK_MAX
    assert parse_tick("18,446,744,073,709,551,615") == U64_MAX
    assert parse_tick("18446744073709551616") is None  # past u64
    assert parse_tick("-1") is None and parse_tick("") is None and parse_tick("١٢") is None
    assert parse_tick("9" * 5000) is None and parse_tick("１２") is None  # bounded before int() (issue 35)
    field = TickField()
    field.setRange(0, U64_MAX)
    field.setValue(U64_MAX - 1)
    assert field.value() == U64_MAX - 1 and field.text() == f"{U64_MAX - 1:,}"
    got = []
    field.valueChanged.connect(got.append)
    field.stepBy(5)  # clamped at the top
    assert got == [U64_MAX] and field.value() == U64_MAX
    field.setText("4611686018427387911")
    field.editingFinished.emit()
    assert got[-1] == 2**62 + 7 and type(got[-1]) is int


def test_go_to_dialog_takes_ticks_past_32_bits(qtbot):
    dialog = GoToTickDialog(5, U64_MAX)
    qtbot.addWidget(dialog)
    dialog.field.setText("18446744073709551615")
    assert dialog.tick() == U64_MAX and dialog.buttons.button(dialog.buttons.StandardButton.Ok).isEnabled()
    dialog.last = 2**62
    dialog.field.setText(str(2**62 + 1))  # past the end: clamped to it, and the dialog says so
    assert dialog.tick() == 2**62 and dialog.buttons.button(dialog.buttons.StandardButton.Ok).isEnabled()
    assert dialog.message.text() == f"Tick {2**62 + 1:,} is outside 0 – {2**62:,} (past the save's end): going to the end, tick {2**62:,}."


def test_go_to_dialog_says_where_an_out_of_range_tick_goes_or_why_it_is_refused(qtbot):
    dialog = GoToTickDialog(5, 37113)
    qtbot.addWidget(dialog)
    ok = dialog.buttons.button(dialog.buttons.StandardButton.Ok)
    dialog.field.setText("12,000")
    assert dialog.tick() == 12000 and ok.isEnabled() and dialog.message.text() == "" and dialog.message.isHidden()
    dialog.field.setText("37114")
    assert dialog.tick() == 37113 and ok.isEnabled() and not dialog.message.isHidden()
    assert dialog.message.text() == "Tick 37,114 is outside 0 – 37,113 (past the save's end): going to the end, tick 37,113."
    dialog.field.setText("18446744073709551615")  # the largest u64: in u64, past the end
    assert dialog.tick() == 37113 and "outside 0 – 37,113" in dialog.message.text()
    dialog.field.setText("99999999999999999999")  # past u64: refused
    assert dialog.field.text() == "99999999999999999999"  # the validator lets it be typed, to say why
    assert dialog.tick() is None and not ok.isEnabled()
    assert dialog.message.text() == ("99,999,999,999,999,999,999 is refused: past the largest tick, "
                                     "2^64 − 1 = 18,446,744,073,709,551,615 (ticks are u64).")
    dialog.field.setText("-5")
    assert dialog.field.text() == "-5"
    assert dialog.tick() is None and not ok.isEnabled()
    assert dialog.message.text() == "-5 is refused: ticks are never negative (u64, 0 – 18,446,744,073,709,551,615)."
    dialog.field.setText("")
    assert dialog.tick() is None and not ok.isEnabled() and dialog.message.text() == "Type a tick in 0 – 37,113."


@pytest.mark.parametrize("typed", ["99999999999", "18446744073709551616", "18446744073709551615", "-5", ""])
def test_go_to_dialog_shows_its_message_whole(qtbot, typed):
    """Trial defect: under a real window the wrapped message was squeezed into about one
    line ("Tick 99,999,999,999 is / outside 0 – 302,029 (past the"), cut top and bottom."""
    from PySide6.QtWidgets import QApplication

    dialog = GoToTickDialog(302029, 302029)
    qtbot.addWidget(dialog)
    dialog.show()
    qtbot.waitExposed(dialog)
    dialog.field.setText(typed)
    for _ in range(3):
        QApplication.processEvents()
    label = dialog.message
    assert label.text()
    assert label.height() >= label.heightForWidth(label.width()), (label.height(), label.heightForWidth(label.width()))
    assert label.geometry().bottom() < dialog.buttons.geometry().top()
    assert dialog.rect().contains(dialog.buttons.geometry())


def test_ctrl_g_past_the_end_goes_to_the_end_and_says_so_in_the_status_bar(qtbot, open_window, monkeypatch, isolated_settings):
    from PySide6.QtCore import QTimer
    from PySide6.QtWidgets import QApplication

    from tests.conftest import SAMPLES

    window = open_window(size=None)
    window.open_save(SAMPLES / "walkaway-spiral.json", wait=True)
    s = window.session
    s.set_tick(100)
    typed = []

    def answer(text):
        def fill(tries=[0]):
            dialog = QApplication.activeModalWidget()
            if not isinstance(dialog, GoToTickDialog):  # not shown yet: look again on a later turn
                tries[0] += 1
                assert tries[0] < 500, "the go-to dialog never opened"
                QTimer.singleShot(10, fill)
                return
            dialog.field.setText(text)
            typed.append(dialog.message.text())
            dialog.buttons.button(dialog.buttons.StandardButton.Ok).click()
        QTimer.singleShot(0, fill)

    answer("99999999999999999")
    window.tickbar.goto_action.trigger()
    assert s.tick == 37113 == s.last_tick
    assert typed == ["Tick 99,999,999,999,999,999 is outside 0 – 37,113 (past the save's end): going to the end, tick 37,113."]
    assert window.statusBar().currentMessage() == (
        "Tick 99,999,999,999,999,999 is outside 0 – 37,113 (past the save's end): went to the end, tick 37,113.")
    answer("2,000")
    window.tickbar.goto_action.trigger()
    assert s.tick == 2000


def test_ticks_display_step_and_seek_exactly(qtbot, big_window, monkeypatch):
    window, base, offset = big_window
    s, bar = window.session, window.tickbar
    assert s.last_tick == base.last_tick + offset
    assert s.tick == base.save.saved_at_tick + offset
    assert bar.tick_field.value() == s.tick and bar.tick_field.text() == f"{s.tick:,}"
    assert f"tick {s.tick:,}" in window.status_tick.text()
    events = sorted(set(base.index.ticks))
    # Step through the first events exactly, from the first tick.
    bar.go_first()
    assert s.tick == 0
    seen = []
    with qtbot.waitSignal(s.tickChanged) as changed:
        bar.next_event()
    assert changed.args == [events[0] + offset] and type(changed.args[0]) is int
    for _ in range(4):
        seen.append(s.tick)
        bar.next_event()
    assert seen == [t + offset for t in events[:4]]
    bar.previous_event()
    assert s.tick == events[3] + offset
    bar.forward_big_step()
    assert s.tick == events[3] + offset + 100
    bar.back_big_step()
    assert s.tick == events[3] + offset
    # Seek: Ctrl+G, the tick field, a drag of the track.
    target = events[len(events) // 2] + offset + 1
    monkeypatch.setattr(tickbar_module, "ask_tick", lambda parent, current, last, notify=None: target)
    bar.goto_action.trigger()
    assert s.tick == target and bar.tick_field.value() == target
    bar.tick_field.setText(f"{s.last_tick - 1:,}")
    bar.tick_field.editingFinished.emit()
    assert s.tick == s.last_tick - 1
    with qtbot.waitSignal(s.tickPreview) as preview:
        bar.track.dragged.emit(target + 2)
    assert preview.args == [target + 2]
    bar.track.released.emit(target + 2)
    assert s.tick == target + 2
    bar.go_last()
    assert s.tick == s.last_tick
    # The track maps pixels to ticks within the save's events, and back.
    track = bar.track
    assert track.first_tick == events[0] + offset
    assert track.tick_at(track.x_for(track.first_tick)) == track.first_tick
    assert track.tick_at(track.MARGIN) == 0  # the lead-in before the first event: tick 0
    assert track.tick_at(track.width() - track.MARGIN) == s.last_tick


def squeezed_save(tmp_path, name: str, first: int, last: int):
    """The sample ``name`` with its journal's ticks spread over ``first`` .. ``last`` in
    their order (the snapshot's ticks mapped alike) and saved at ``last``."""
    doc = json.loads((SAMPLES / name).read_text(encoding="utf-8"))
    low, high = doc["journal"][0]["tick"], doc["journal"][-1]["tick"]

    def squeeze(node):
        if isinstance(node, dict):
            return {k: first + max(0, min(v, high) - low) * (last - first) // (high - low)
                    if (k == "tick" or k.endswith("_tick")) and type(v) is int else squeeze(v) for k, v in node.items()}
        return [squeeze(v) for v in node] if isinstance(node, list) else node

    path = tmp_path / f"squeezed-{name}"
    path.write_text(json.dumps(squeeze(doc)), encoding="utf-8")
    return path


def _handle_x(track) -> float:
    """Where the handle's line is in the track's picture (the only thing drawn above the
    marker lanes but the divergence mark, which no single save has): the middle of its
    dark pixels (a 1.5 px antialiased line covers two)."""
    image = track.grab().toImage()
    dark = [x for x in range(image.width()) if image.pixelColor(x, 2).lightness() < 100]
    assert dark, "no handle drawn"
    return (min(dark) + max(dark) + 1) / 2


def test_tick_bar_draws_tick_0_apart_from_the_first_event_when_every_tick_is_near_u64_max(qtbot, open_window, tmp_path):
    """A journal at ticks 18446744073709551000 .. 2^64 - 1: the bar's range starts at the
    first event, and tick 0 (Home: the state before any event) was drawn on the first
    event's marker, where a click gave the first event's tick (carried bug)."""
    first = 18446744073709551000
    path = squeezed_save(tmp_path, "walkaway-spiral.json", first, U64_MAX)
    window = open_window(path, (1400, 900), persist=False)
    s, bar, track = window.session, window.tickbar, window.tickbar.track
    assert (s.view_start, s.last_tick) == (first, U64_MAX) == (track.first_tick, track.last_tick)
    bar.go_first()
    assert s.tick == 0 == track.tick
    at_zero, at_first = track.x_for(0), track.x_for(first)
    assert at_zero == track.MARGIN and at_first == track.MARGIN + track.LEAD_PX
    assert track.x_for(U64_MAX) == track.width() - track.MARGIN
    # One way and back: tick 0, the first event, the middle of the range, the last tick.
    middle = first + (U64_MAX - first) // 2
    assert [track.tick_at(track.x_for(t)) for t in (0, first, middle, U64_MAX)] == [0, first, middle, U64_MAX]
    assert abs(_handle_x(track) - at_zero) <= 1
    bar.next_event()
    assert s.tick == first and abs(_handle_x(track) - at_first) <= 1
    qtbot.mouseClick(track, Qt.LeftButton, pos=QPoint(track.MARGIN, track.height() // 2))
    assert s.tick == 0


def test_timelines_draw_tick_0_left_of_the_first_event_when_every_tick_is_near_u64_max(qtbot, open_window, tmp_path):
    """The axis starts at the first event (18446744073709551000): at tick 0 the cursors
    stood at x_of(0), ~1.8e19 left of the axis, so none was drawn, and the range moved
    off the full range's margin, where the curves show the state before any event."""
    first = 18446744073709551000
    path = squeezed_save(tmp_path, "walkaway-spiral.json", first, U64_MAX)
    window = open_window(path, (1400, 900), persist=False)
    s, view = window.session, window.views["timelines"]
    s.set_view("timelines")
    full = view.score_plot.vb.viewRange()[0]
    window.tickbar.go_first()
    assert s.tick == 0
    assert view.score_plot.vb.viewRange()[0] == full  # the axis keeps the whole save in view
    lo, hi = full
    for line in view.cursors:
        assert lo < line.value() < view.x_of(first)  # in view, left of the first event
        assert view.tick_of(line.value()) == 0
    assert view.cursors[0].label.textItem.toPlainText() == "0"
    assert "tick&nbsp;0 " in view.readout.text()
    window.tickbar.next_event()
    assert [view.tick_of(line.value()) for line in view.cursors] == [first, first]
    assert view.cursors[0].value() == view.x_of(first) and view.tick_of(view.x_of(first) - 1) == 0
    # Compared with itself: zooming out still stops at the first event, not at tick 0.
    window.compare.compare_with(path, wait=True)
    for plot in (view.score_plot, view.stress_plot):
        plot.vb.scaleBy(x=1000.0)
        lo, hi = plot.vb.viewRange()[0]
        assert lo >= view.x_of(first) - 0.03 * (view.x_of(U64_MAX) - view.x_of(first)), lo


def test_timelines_plot_exactly(qtbot, big_window):
    window, base, offset = big_window
    s = window.session
    view = window.views["timelines"]
    s.set_view("timelines")
    tick = sorted(set(base.index.ticks))[10] + offset
    s.set_tick(tick)
    for line in view.cursors:
        assert view.tick_of(line.value()) == tick
    assert view.cursors[0].label.textItem.toPlainText() == f"{tick:,}"
    assert f"tick&nbsp;{tick:,}" in view.readout.text()
    # Every step of a curve from the origin on starts at a journal tick, exactly (the
    # initial state's step, at tick 0 far left of an origin past 2^53, is the only one before).
    journal_ticks = {t + offset for t in base.index.ticks} | {0}
    for track in view.tracks.values():
        starts = {view.origin + int(x) for x in track.score.x[0::2] if x >= 0}
        assert starts and starts <= journal_ticks
    # Step values read at exact ticks match the unshifted save's.
    npc = s.npc
    for k in (5, 50, 200):
        t = sorted(set(base.index.ticks))[k]
        want = base.state_at(t).npcs[npc].relationship.score
        assert view.tracks[npc].score.at(view.x_of(t + offset)) == pytest.approx(want, abs=1e-4)
    # The bottom axis writes the ticks themselves.
    assert view.tick_axis.tickStrings([0.0, 1.0], 1.0, 1.0) == [f"{view.origin:,}", f"{view.origin + 1:,}"]
    first = -view.origin % 1000  # ticks of a 1 000 spacing sit at multiples of 1 000 (tickSpacing's offset)
    assert view.tick_axis.tickStrings([float(first), first + 1000.0], 1.0, 1000.0) == [f"{view.origin + first:,}", f"{view.origin + first + 1000:,}"]
    if offset > 2**53:
        assert view.origin == min(base.index.ticks) + offset


def test_findings_with_u64_ticks_sort_and_show(qtbot, open_window, tmp_path):
    path, offset = shifted_save(tmp_path, "qa-faults.json", None, to_max=True)
    window = open_window(size=None, persist=False, shown=False)
    window.open_save(path, wait=True)
    play = window.session.playthrough
    assert any(f.tick is not None and f.tick >= 2**63 for f in play.findings)
    panel = window.panels["findings"][0]
    panel.view.sortByColumn(FindingsModel.TICK, Qt.AscendingOrder)
    shown = [panel.proxy.index(r, FindingsModel.TICK).data() for r in range(panel.proxy.rowCount())]
    ticks = [int(t.replace(",", "")) for t in shown if t]
    assert ticks == sorted(ticks) and max(ticks) >= 2**63
    assert max(ticks) == max(f.tick for f in play.findings if f.tick is not None)


def test_tick_axis_writes_whole_ticks_up_to_u64_max(qtbot):
    """A save spanning all of u64 (ticks 0 .. 2^64 - 1): the axis writes ticks, never
    "2 (x1e+18)" and never a tick past 2^64 - 1 where float x rounds up."""
    from narrative_debugger.widgets.timelines.axis import TickAxis

    axis = TickAxis()
    assert axis.autoSIPrefix is False
    top = float(2**64 - 1)  # rounds to 2^64 in float64
    assert axis.tickStrings([0.0, 5e18, top], 1.0, 5e18) == ["0", "5,000,000,000,000,000,000", "18,446,744,073,709,551,615"]
    axis.origin = 2**63
    assert axis.tickStrings([-1.0, 0.5, 2.0**63], 1.0, 1.0) == ["9,223,372,036,854,775,807", "", "18,446,744,073,709,551,615"]


@pytest.mark.parametrize(("origin", "span", "at_least"), [
    (2**64 - 1 - 10**6, 10**6, 2),  # the last million ticks of u64: 26-character labels
    (2**64 - 1 - 3 * 10**9, 3 * 10**9, 2),
    (0, 300_000, 4),  # short labels keep pyqtgraph's own spacing
])
def test_tick_axis_labels_never_overlap_near_u64_max(qtbot, origin, span, at_least):
    """Near 2^64 a tick label is ~170 px wide and pyqtgraph, which spaces ticks by the
    axis length alone, wrote four over one another on a 700 px axis (carried bug)."""
    from PySide6.QtGui import QImage, QPainter

    axis, plot = _axis_plot(qtbot)
    axis.origin = origin
    plot.setXRange(0, span, padding=0)
    image = QImage(10, 10, QImage.Format_ARGB32)
    painter = QPainter(image)
    _, _, texts = axis.generateDrawSpecs(painter)
    painter.end()
    rects = sorted((rect for rect, _, _ in texts), key=lambda rect: rect.left())
    assert len(rects) >= at_least
    assert all(a.right() <= b.left() for a, b in zip(rects, rects[1:])), [text for _, _, text in texts]
    # Round ticks, not round distances from the origin ("18,446,744,073,709,100,253").
    assert all(text.endswith(",000") for _, _, text in texts), [text for _, _, text in texts]


def test_tick_axis_labels_are_exact_multiples_past_2_53(qtbot):
    """Past 2^53 a float x is off by up to its ulp: a tick at 6e18 read ...,000,253."""
    from narrative_debugger.widgets.timelines.axis import TickAxis

    axis = TickAxis()
    axis.origin = 253
    spacing = 6e18
    assert axis.tickStrings([spacing - 253, 2 * spacing - 253], 1.0, spacing) == ["6,000,000,000,000,000,000", "12,000,000,000,000,000,000"]
    assert axis.tickSpacing(0.0, 1.8e19, 700)[0][1] == float(-253 % int(axis.tickSpacing(0.0, 1.8e19, 700)[0][0]))


def test_timeline_curves_are_drawn_when_ticks_start_far_from_zero(qtbot, big_window):
    """The initial state's point sits at tick 0: with ticks from 10^15 on it was ~10^13
    pixels left of the view, and Qt drew none of the curve that starts there: the
    plots showed markers and no score, stress or threshold line (carried bug)."""
    window, _base, _offset = big_window
    window.session.set_view("timelines")
    view = window.views["timelines"]
    qtbot.waitUntil(lambda: bool(view.curves), timeout=10_000)
    window.finish_background()
    colour = view.tracks[window.session.npc].colour
    image = view.grab().toImage()
    near = 0
    for y in range(0, image.height(), 2):
        for x in range(0, image.width(), 2):
            pixel = image.pixelColor(x, y)
            near += abs(pixel.red() - colour.red()) + abs(pixel.green() - colour.green()) + abs(pixel.blue() - colour.blue()) < 40
    assert near > 150, near  # a drawn curve climbs across the plot; the legend's swatch alone is ~10


def test_timelines_zoom_out_stops_at_the_first_event_when_ticks_start_far_from_zero(qtbot, big_window):
    """The wheel zoomed a save near 2^64 out to tick 0: the save became a 1 px sliver at
    the right edge (second trial). The limit is the axis's first tick (the first event)."""
    window, base, offset = big_window
    window.session.set_view("timelines")
    view = window.views["timelines"]
    for plot in (view.score_plot, view.stress_plot):
        plot.vb.scaleBy(x=1000.0)  # far past the full range
        lo, hi = plot.vb.viewRange()[0]
        first = view.x_of(window.session.view_start)
        assert lo >= first - 0.03 * (view.x_of(window.session.last_tick) - first), (lo, first)


def test_go_to_tick_refuses_thousands_of_digits_in_words():
    """The dialog's validator stops at 60 characters; ``judge_tick`` itself never hands
    a long numeral to ``int()`` (Python refuses past 4 300 digits: issue 35)."""
    assert judge_tick("9" * 5000, 100) == (None, "A number of 5,000 digits is refused: past the largest tick, 2^64 − 1 = 18,446,744,073,709,551,615 (ticks are u64).")
    assert judge_tick("18446744073709551616", 100)[0] is None
    assert judge_tick("1_000", 100) == (100, judge_tick("1000", 100)[1])


def test_tick_field_says_why_a_typed_tick_was_refused_or_moved_and_never_stays_blank(qtbot):
    # Trial 47: a tick past u64 went back to the old tick without a word, one past the
    # end went to the end without one, and an emptied box stayed blank (the validator
    # kept editingFinished from coming).
    field = TickField()
    qtbot.addWidget(field)
    field.setRange(0, 37_113)
    field.setValue(1_000)
    got, said = [], []
    field.valueChanged.connect(got.append)
    field.said.connect(said.append)

    def typed(text: str) -> None:
        field.selectAll()
        qtbot.keyClick(field, Qt.Key_Backspace)
        qtbot.keyClicks(field, text)
        qtbot.keyClick(field, Qt.Key_Return)

    typed("")
    assert field.text() == "1,000" and got == [] and said == []
    typed("18446744073709551616")
    assert field.text() == "1,000" and got == []
    assert said[-1] == ("18,446,744,073,709,551,616 is refused: past the largest tick, 2^64 − 1 = 18,446,744,073,709,551,615 "
                        "(ticks are u64). Still at tick 1,000.")
    typed("40000")
    assert got == [37_113] and field.text() == "37,113"
    assert said[-1] == "Tick 40,000 is outside 0 – 37,113 (past the save's end): went to the end, tick 37,113."
    typed("12")  # taken as typed: what was said of the tick before is taken back (trial 47)
    assert got == [37_113, 12] and said[2:] == [""]
    typed("13")
    assert got[-1] == 13 and len(said) == 3  # nothing more to take back


def test_a_u64_tick_shows_whole_in_the_tick_field_at_the_smallest_size(open_window, tmp_path):
    # Trial 47: at 1040 x 700 the game time (512409557603043:…) was painted over the
    # tick field, which then read "18,446,744,07" and "51240955…" on top of each other.
    path, _ = shifted_save(tmp_path, "evening.json", None, to_max=True)
    window = open_window(None, (1040, 700), persist=False)
    window.open_save(path, wait=True)
    window.session.set_view("timelines")
    bar = window.tickbar
    field, label = bar.tick_field, bar.time_label
    assert field.text() == f"{U64_MAX:,}"
    assert field.width() >= field.fontMetrics().horizontalAdvance(field.text())
    at = field.mapTo(window, field.rect().topLeft())
    field_rect = field.rect().translated(at)
    label_rect = label.rect().translated(label.mapTo(window, label.rect().topLeft()))
    assert label.width() == 0 or not field_rect.intersects(label_rect)


def test_tick_columns_keep_a_u64_ticks_last_digits(open_window, tmp_path):
    """Trial 48: ticks near 2^64 filled the Journal's Tick column (and the Interactions
    table's Started and Ended) with "18,446,744,0…" on every row: the digits that differ
    were the ones elided. Those columns now elide on the left."""
    from narrative_debugger.widgets.docks.journal import JournalModel, JournalView
    from narrative_debugger.widgets.interactions.view import INTERACTION_COLUMNS
    from narrative_debugger.widgets.kit.tables import ElideDelegate

    path = squeezed_save(tmp_path, "walkaway-spiral.json", 18446744073709551000, U64_MAX)
    window = open_window(path, (1040, 700), persist=False)
    journal = window.findChild(JournalView)
    tables = [(journal.view, JournalModel.TICK), *((window.views["interactions"].table, INTERACTION_COLUMNS.index(name)) for name in ("Started", "Ended"))]
    for view, column in tables:
        delegate = view.itemDelegateForColumn(column)
        assert isinstance(delegate, ElideDelegate) and delegate.elide == Qt.ElideLeft, column


def _drawn_labels(axis) -> list:
    """(rect, text) of each tick label the axis draws now (pyqtgraph's own draw specs)."""
    from PySide6.QtGui import QImage, QPainter

    image = QImage(10, 10, QImage.Format_ARGB32)
    painter = QPainter(image)
    _, _, texts = axis.generateDrawSpecs(painter)
    painter.end()
    return sorted(((rect, text) for rect, _, text in texts), key=lambda rt: rt[0].left())


def _assert_labelled(axis) -> None:
    """At least one label (when one of the widest fits the axis: any font), each whole
    inside the axis, none over another, each a u64 tick."""
    from PySide6.QtGui import QFontMetrics

    labels = _drawn_labels(axis)
    fits = QFontMetrics(axis.font()).horizontalAdvance(f"{U64_MAX:,}") < axis.geometry().width()
    assert labels or not fits, "no tick label drawn"
    inside = axis.boundingRect()
    assert all(inside.contains(rect) for rect, _ in labels), labels
    assert all(a.right() <= b.left() for (a, _), (b, _) in zip(labels, labels[1:])), labels
    assert all(0 <= int(text.replace(",", "")) <= U64_MAX for _, text in labels), labels


@pytest.mark.parametrize("labels_wide", [1.2, 1.6, 2.2, 4.0])
def test_tick_axis_labels_an_axis_shorter_than_two_labels_spanning_all_of_u64(qtbot, labels_wide):
    """A save spanning 0 .. 2^64 - 1 at 1040x700: the ~300 px axis is 1.6 labels of
    "18,446,744,073,709,551,615" wide. The labelled spacing was widened to 2e19, past the
    range: its one tick, 0, sat at the axis's left end where its label did not fit, the
    next level's labels were too crowded for pyqtgraph, and the axis had no label at all."""
    from PySide6.QtGui import QFontMetrics

    axis, plot = _axis_plot(qtbot)
    around = plot.width() - axis.geometry().width()  # the plot's pixels beside its bottom axis
    wanted = int(labels_wide * QFontMetrics(axis.font()).horizontalAdvance(f"{U64_MAX:,}"))
    plot.resize(wanted + int(around), 300)
    qtbot.waitUntil(lambda: abs(axis.geometry().width() - wanted) <= 1, timeout=2000)
    plot.setXRange(-0.01 * 2.0**64, 1.01 * 2.0**64, padding=0)  # the full range's margins, as the timelines draw it
    _assert_labelled(axis)


@pytest.mark.parametrize("size", [(1440, 900), (1040, 700)])
def test_timelines_label_the_axis_of_a_save_spanning_all_of_u64(qtbot, open_window, tmp_path, size):
    path = squeezed_save(tmp_path, "walkaway-spiral.json", 0, U64_MAX)
    window = open_window(path, size, persist=False)
    s, view = window.session, window.views["timelines"]
    assert (s.view_start, s.last_tick) == (0, U64_MAX)
    s.set_view("timelines")
    window.finish_background()
    _assert_labelled(view.tick_axis)


def _axis_plot(qtbot):
    """A shown 700 x 300 plot whose bottom axis is a ``TickAxis``: ``(axis, plot)``."""
    import pyqtgraph as pg
    from narrative_debugger.widgets.timelines.axis import TickAxis

    axis = TickAxis()
    plot = pg.PlotWidget(axisItems={"bottom": axis})
    qtbot.addWidget(plot)
    plot.resize(700, 300)
    plot.show()
    qtbot.waitExposed(plot)
    return axis, plot


def test_no_signal_of_the_window_carries_a_tick_as_a_32_bit_int():
    """Ticks are u64: ``Signal(int)`` is a 32-bit int in PySide6, so a tick goes through
    ``Signal(object)``. The one ``Signal(int)`` of widgets/ and app/ is the What if cell
    editor's Tab direction (+1/-1), named ``moveRequested`` since it was ``stepped`` and
    could be taken for a tick step (trial 50 note); a new one is looked at here."""
    import ast
    from pathlib import Path

    root = Path(__file__).resolve().parent.parent
    found = set()
    for folder in ("widgets", "app"):
        for path in sorted((root / folder).rglob("*.py")):
            for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
                if (isinstance(node, ast.Assign) and isinstance(node.value, ast.Call)
                        and getattr(node.value.func, "id", None) == "Signal"
                        and any(isinstance(arg, ast.Name) and arg.id == "int" for arg in node.value.args)):
                    found.add((path.relative_to(root).as_posix(), *(t.id for t in node.targets)))
    assert found == {("widgets/docks/whatif.py", "moveRequested")}

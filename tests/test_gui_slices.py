"""GUI work after a load that is sliced or put off (issue 10: the event loop is never
blocked over 50 ms): each ends with what the one-call version showed."""

from __future__ import annotations

import time

import numpy as np
import pytest

pytest.importorskip("pyqtgraph")

from narrative_debugger.widgets.tickbar import bar as tickbar_module  # noqa: E402
from narrative_debugger.widgets.session import Session  # noqa: E402
from narrative_debugger.widgets.kit import slices  # noqa: E402
from narrative_debugger.widgets.kit.slices import END_SLICE, SlicedWork, any_busy, finish_all  # noqa: E402
from narrative_debugger.widgets.tickbar.bar import TickBar, bin_ticks  # noqa: E402
from PySide6.QtWidgets import QVBoxLayout, QWidget  # noqa: E402


def _shown(qtbot, widget: QWidget, size=(900, 400)) -> QWidget:
    """``widget`` in a shown window of its own."""
    window = QWidget()
    QVBoxLayout(window).addWidget(widget)
    qtbot.addWidget(window)
    window.resize(*size)
    window.show()
    qtbot.waitExposed(window)
    return window


# ----- the slicer -----
def _job(log: list, n: int, tag: str = "a"):
    for k in range(n):
        log.append((tag, k))
        yield


def test_a_job_runs_at_once_while_its_window_is_not_shown(qtbot):
    owner = QWidget()
    qtbot.addWidget(owner)
    work, log = SlicedWork(owner), []
    work.start(_job(log, 5))
    assert log == [("a", k) for k in range(5)] and not work.busy


def test_a_job_runs_in_slices_in_a_shown_window_and_a_new_one_replaces_it(qtbot, monkeypatch):
    monkeypatch.setattr("narrative_debugger.widgets.kit.slices.SLICE_MS", 0.0)  # one step a slot
    owner = QWidget()
    window = _shown(qtbot, owner)
    work, log = SlicedWork(owner), []
    work.start(_job(log, 10**9))
    assert work.busy and log == [] and any_busy(window)
    qtbot.waitUntil(lambda: len(log) >= 3)
    work.start(_job(log, 4, "b"))  # the first job is dropped unfinished
    qtbot.waitUntil(lambda: not work.busy)
    assert 3 <= sum(tag == "a" for tag, _ in log) < 10**9
    assert [k for tag, k in log if tag == "b"] == [0, 1, 2, 3]
    work.start(_job(log, 30, "c"))
    finish_all(window)
    assert not any_busy(window) and [k for tag, k in log if tag == "c"] == list(range(30))


def _loop_passes(qtbot) -> list:
    """``[n]``: how many passes the event loop has made since (a zero timer counts them)."""
    from PySide6.QtCore import QTimer

    passes = [0]
    timer = QTimer()
    timer.setInterval(0)
    timer.timeout.connect(lambda: passes.__setitem__(0, passes[0] + 1))
    timer.start()
    passes.append(timer)  # kept alive with the list
    return passes


def test_a_step_that_yields_end_slice_ends_its_slice(qtbot, monkeypatch):
    """The held widgets after a load paint one a pass: a step yielding ``END_SLICE`` ends
    the slot however much of ``SLICE_MS`` is left, while plain steps share a slot."""
    monkeypatch.setattr(slices, "SLICE_MS", 60_000.0)  # one slot could hold every step
    owner = QWidget()
    window = _shown(qtbot, owner)
    work = SlicedWork(owner)
    passes = _loop_passes(qtbot)
    seen = []

    def job(step_end):
        for _ in range(4):
            seen.append(passes[0])  # the loop's pass this step runs in
            yield END_SLICE if step_end else None

    work.start(job(True))
    qtbot.waitUntil(lambda: not work.busy)
    assert len(seen) == 4 and seen == sorted(set(seen))  # a step a slot, each in a later pass
    seen.clear()
    work.start(job(False))
    qtbot.waitUntil(lambda: not work.busy)
    assert len(seen) == 4 and len(set(seen)) == 1  # plain steps: all in one slot
    passes[1].stop()
    assert not any_busy(window)


# ----- the tick bar -----
def test_binning_in_steps_equals_one_call():
    rng = np.random.default_rng(3)
    ticks = np.sort(rng.integers(0, 2**63, 5000, dtype=np.uint64) * np.uint64(2))
    ticks[-3:] = np.uint64(2**64 - 1)
    for columns in (1, 7, 1600):
        counts = np.zeros(columns, dtype=np.int64)
        for _ in tickbar_module.bin_into(counts, ticks, 2**64 - 1, 10**6, step=333):
            pass
        cols, expected = bin_ticks(ticks, 2**64 - 1, columns, 10**6)
        assert np.flatnonzero(counts).tolist() == cols.tolist() and counts[cols].tolist() == expected.tolist()


def test_tick_bar_markers_are_drawn_in_slices_as_at_once(qtbot, evening_playthrough, monkeypatch):
    monkeypatch.setattr(tickbar_module, "BIN_STEP", 7)
    monkeypatch.setattr("narrative_debugger.widgets.kit.slices.SLICE_MS", 0.0)
    session = Session()
    shown = TickBar(session)
    window = _shown(qtbot, shown)  # kept alive to the end (del below)
    session.load(evening_playthrough)
    shown.track.repaint()  # its paint starts the job
    assert not shown.track.markers_drawn  # drawn after the load, a step at a time
    qtbot.waitUntil(lambda: shown.track.markers_drawn, timeout=20_000)
    alone = TickBar(session)  # never shown: drawn at once when grabbed
    qtbot.addWidget(alone)
    alone.resize(shown.size())
    alone.grab()
    assert alone.track.markers_drawn and alone.track.size() == shown.track.size()
    picture = shown.track.grab().toImage()
    assert picture == alone.track.grab().toImage()
    assert len({picture.pixel(x, y) for x in range(0, picture.width(), 3) for y in range(picture.height())}) > 5  # markers drawn
    del window


# ----- the timelines -----
def _drawn(view) -> dict:
    """What a TimelinesView shows, comparable across views."""
    return {
        "curves": {sid: (c.xData.tolist(), c.yData.tolist(), c.opts["pen"].widthF(), c.zValue()) for sid, c in view.curves.items()},
        "stress": [item.yData.tolist() if item.yData is not None else [] for item in (view.stress_curve, view.threshold_curve, view.excess_curve)],
        "markers": {kind: item.data["x"].tolist() for kind, (_, item) in view.markers.items()},
        "legend": view.legend.text(),
    }


def test_timelines_behind_a_tab_are_drawn_once_shown_in_slices(qtbot, open_window, isolated_settings, message_boxes, monkeypatch):
    from narrative_debugger.widgets.timelines.view import TimelinesView
    from tests.conftest import SAMPLES

    monkeypatch.setattr("narrative_debugger.widgets.kit.slices.SLICE_MS", 0.0)
    window = open_window(SAMPLES / "walkaway-spiral.json")
    s = window.session
    view = window.views["timelines"]
    assert s.view == "knowledge" and not view.curves and not view.drawn  # put off while behind the tab
    s.set_npc(s.npc_by_slug("kael-davan"))
    s.set_view("timelines")
    assert not view.drawn  # drawn from the event loop, a curve or a marker kind a slot
    qtbot.waitUntil(lambda: view.drawn and not window.background_busy())
    alone = Session()
    reference = TimelinesView(alone)  # never shown: drawn at once
    qtbot.addWidget(reference)
    alone.load(s.playthrough, npc=s.npc)
    assert _drawn(view) == _drawn(reference)
    assert len(view.markers["walk-away"][1].data) > 0
    s.set_npc(s.npc_by_slug("lera-sessik"))  # once drawn, a new NPC is drawn at once
    alone.set_npc(s.npc)
    assert _drawn(view) == _drawn(reference)


# ----- the interactions view -----
def _choices(view) -> list:
    """The (name, StableId) items of an interactions view's NPC list."""
    return [(view.npc_choice.itemText(k), view.npc_choice.itemData(k)) for k in range(view.npc_choice.count())]


def test_interactions_behind_a_tab_are_built_once_shown(qtbot, open_window, isolated_settings, message_boxes):
    from narrative_debugger.widgets.interactions.view import InteractionView
    from narrative_debugger.widgets.session import NpcNames
    from tests.conftest import SAMPLES

    window = open_window(SAMPLES / "evening.json")
    window.open_save(SAMPLES / "walkaway-spiral.json", wait=True)
    s = window.session
    view = window.views["interactions"]
    names = [(name, sid) for sid, name in s.prepared.get(NpcNames).names.items()]
    assert s.view == "knowledge" and _choices(view) != names  # left for later while behind the tab
    s.set_npc(s.npc_by_slug("kael-davan"))
    s.set_view("interactions")
    assert _choices(view) == names
    alone = Session()
    reference = InteractionView(alone)  # never shown: built at once
    qtbot.addWidget(reference)
    alone.load(s.playthrough, npc=s.npc)
    assert _choices(view) == _choices(reference)
    assert view.npc_choice.currentData() == s.npc
    assert view.heading.text() == reference.heading.text() and "Kael" in view.heading.text()
    assert view.model.rowCount() == reference.model.rowCount()


# ----- the NPC dock -----
def test_the_npc_dock_reads_the_states_once_per_load(qtbot, evening_playthrough, monkeypatch):
    from narrative_debugger.widgets.docks.npc_list import NpcList, NpcTableModel

    session = Session()
    dock = NpcList(session)
    qtbot.addWidget(dock)
    calls = []
    real = NpcTableModel.set_state
    monkeypatch.setattr(NpcTableModel, "set_state", lambda self, state: calls.append(state.tick) or real(self, state))
    session.load(evening_playthrough)
    assert calls == [session.tick]
    state = session.state
    assert [dock.model.npc_state(r) for r in range(dock.model.rowCount())] == [state.npc(sid) for sid in evening_playthrough.save.npcs]
    assert [dock.model.sid_at(r) for r in range(dock.model.rowCount())] == list(evening_playthrough.save.npcs)


# ----- the Monologues dock -----
def test_the_monologues_dock_builds_its_rows_once_per_load_and_once_per_step(qtbot, evening_playthrough, monkeypatch):
    from narrative_debugger.widgets.docks import monologues as monologue_view
    from narrative_debugger.widgets.docks.monologues import MonologueView, monologue_rows

    calls = []
    monkeypatch.setattr(monologue_view, "monologue_rows", lambda *a: calls.append(a[1].tick) or monologue_rows(*a))
    session = Session()
    dock = MonologueView(session)
    qtbot.addWidget(dock)
    session.load(evening_playthrough)
    assert calls == [session.tick]
    expected = monologue_rows(evening_playthrough, session.state, session.npc)
    assert dock.model.rows == expected
    session.set_tick(session.last_tick // 2)
    session.set_npc(list(evening_playthrough.save.npcs)[1])
    assert len(calls) == 3 and dock.model.rows == monologue_rows(evening_playthrough, session.state, session.npc)


def test_after_an_end_slice_the_next_slice_waits_for_the_loop(qtbot):
    """A step that yields END_SLICE asked for a paint: the next slice waits
    END_SLICE_GAP_MS, so the paint and the loop's other timers come first; a zero timer
    restarted before the paint ran right after it, one stall (issue 10)."""
    owner = QWidget()
    qtbot.addWidget(owner)
    owner.show()
    qtbot.waitExposed(owner)
    done, stamps = [], []
    passes = _loop_passes(qtbot)  # the other timers of the loop run meanwhile

    def job():
        done.append("a")
        stamps.append((time.perf_counter(), passes[0]))
        yield slices.END_SLICE
        done.append("b")
        stamps.append((time.perf_counter(), passes[0]))
        yield
        done.append("c")

    work = slices.SlicedWork(owner)
    work.start(job())
    qtbot.waitUntil(lambda: not work.busy)
    assert done == ["a", "b", "c"]
    (a_time, a_pass), (b_time, b_pass) = stamps
    assert b_time - a_time >= 0.9 * slices.END_SLICE_GAP_MS / 1000  # Qt's coarse timers may fire 5 % early
    assert b_pass > a_pass  # the loop's other timers ran in between
    passes[1].stop()
    work.start(iter([None]))
    # A new job starts at once. (Private: its first slot follows within a loop pass or
    # a PASS_GAP_MS wait, which no public timing tells from a gap's 10 ms on a busy machine.)
    assert work._timer.interval() == 0


def test_timelines_paint_once_when_another_npc_is_selected(qtbot, open_window, isolated_settings, message_boxes):
    """The stress plot's new range is applied before the paint: applied in the paint
    (pyqtgraph's prepareForPaint), the moved items asked for another paint."""
    import pyqtgraph as pg
    from PySide6.QtCore import QEvent, QObject
    from PySide6.QtWidgets import QApplication
    from tests.conftest import SAMPLES

    window = open_window(SAMPLES / "walkaway-spiral.json")
    s = window.session
    s.set_view("timelines")
    view = window.views["timelines"]
    qtbot.waitUntil(lambda: view.drawn and not window.background_busy())
    viewport = view.findChildren(pg.GraphicsView)[0].viewport()
    paints = []

    class Count(QObject):
        def eventFilter(self, watched, event):  # noqa: N802 (Qt override)
            if event.type() == QEvent.Paint:
                paints.append(watched)
            return False

    def settle() -> None:
        for _ in range(10):
            QApplication.processEvents()

    counter = Count()
    viewport.installEventFilter(counter)
    others = [sid for sid in s.playthrough.save.npcs if sid != s.npc]
    for sid in [others[0], s.npc, others[0]]:
        settle()
        paints.clear()
        s.set_npc(sid)
        settle()
        assert len(paints) == 1
    viewport.removeEventFilter(counter)

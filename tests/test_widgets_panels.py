"""Panels that follow the session: NPC list, journal, findings and monologues.

Each test builds a playthrough, wraps it in a session and a widget, drives one side
and asserts on the other (style.md §8). Qt runs offscreen; pytest-qt owns the app.
"""

from __future__ import annotations

import json
from collections import Counter
from pathlib import Path

import pytest
from narrative_debugger.models.explain.chain import fmt_num
from narrative_debugger.models.playthrough import Playthrough
from narrative_debugger.models.rules.findings import Finding, Severity
from narrative_debugger.models.rules.findings import Target
from narrative_debugger.models.rules.snapshot_diff import fact_target, npc_target
from narrative_debugger.widgets.docks.findings import FindingsModel, FindingsView, activate_finding
from narrative_debugger.widgets.landing import landing
from narrative_debugger.widgets.docks.journal import WITH_FINDINGS, JournalModel, JournalView
from narrative_debugger.widgets.docks.monologues import MonologueView, line_concerns, monologue_rows
from narrative_debugger.widgets.docks.npc_list import NpcList, NpcTableModel
from narrative_debugger.widgets.session import Session
from narrative_debugger.widgets.kit.tables import ElideDelegate
from PySide6.QtCore import Qt
from PySide6.QtGui import QColor
from PySide6.QtWidgets import QAbstractItemView

from tests.conftest import CONTENT, DATA

KAEL = 17


# ----- helpers and fixtures -----
def minimal_doc() -> dict:
    """The tiny test save as a document (Kael walks away at tick 164)."""
    return json.loads((DATA / "minimal.json").read_text(encoding="utf-8"))


def open_doc(doc: dict, path: Path) -> Playthrough:
    """Write a save document and open it with the sample content."""
    path.write_text(json.dumps(doc), encoding="utf-8")
    return Playthrough.open(path, CONTENT)


def load(qtbot, playthrough: Playthrough, tick: int | None = None, npc: int | None = None) -> Session:
    """A session showing ``playthrough`` (qtbot first, so the QApplication exists)."""
    session = Session()
    session.load(playthrough, tick=tick, npc=npc)
    return session


def show(qtbot, widget, size=(900, 400)):
    qtbot.addWidget(widget)
    widget.resize(*size)
    widget.show()
    qtbot.waitExposed(widget)
    return widget


def assert_not_blank(widget) -> None:
    image = widget.grab().toImage()
    assert not image.isNull()
    colours = {image.pixel(x, y) for x in range(0, image.width(), 7) for y in range(0, image.height(), 7)}
    assert len(colours) > 5, "the grab is a blank picture"


def double_click_row(qtbot, view: QAbstractItemView, row: int, column: int = 0) -> None:
    index = view.model().index(row, column)
    view.scrollTo(index)
    rect = view.visualRect(index)
    qtbot.mouseClick(view.viewport(), Qt.LeftButton, pos=rect.center())
    qtbot.mouseDClick(view.viewport(), Qt.LeftButton, pos=rect.center())


@pytest.fixture()
def minimal() -> Playthrough:
    return Playthrough.open(DATA / "minimal.json", CONTENT)


@pytest.fixture(scope="module")
def generated(tmp_path_factory) -> Playthrough:
    """A generated evening with every sample NPC (a few hundred entries)."""
    generator = pytest.importorskip("tests.support.savegen.generator")
    path = tmp_path_factory.mktemp("gen") / "evening-600.json"
    generator.write_save(generator.generate_save(seed=5, events=600, scenario="evening"), path)
    return Playthrough.open(path, CONTENT)


@pytest.fixture()
def penalty_fault(tmp_path) -> Playthrough:
    """Minimal save plus a WalkAwayPenalty of the wrong size on a walk-away within the threshold
    (T004 errors) and an unknown topic on the snapshot's interaction (an I009 warning)."""
    doc = minimal_doc()
    fact = doc["player"]["knowledge"]["facts"]["interaction.kael-davan_001"]
    fact["metadata"]["Interaction"]["topics"] = ["sea-serpents"]
    doc["journal"].append({"tick": 164, "event": {"WalkAwayPenalty": {"target": KAEL, "penalty": 0.9, "score_after": 0.0}}})
    return open_doc(doc, tmp_path / "penalty-fault.json")


# ----- NPC list -----
def test_npc_list_selection_follows_session_both_ways(qtbot, generated):
    session = load(qtbot, generated)
    widget = show(qtbot, NpcList(session))
    sids = list(generated.save.npcs)
    assert widget.model.rowCount() == len(sids)
    assert widget.selected_npc() == session.npc == sids[0]

    with qtbot.waitSignal(session.npcChanged) as signal:
        widget.view.selectRow(widget.proxy.mapFromSource(widget.model.index(2, 0)).row())
    assert signal.args == [sids[2]] and session.npc == sids[2]

    session.set_npc(sids[4])
    assert widget.selected_npc() == sids[4]
    session.set_npc(None)
    assert widget.selected_npc() is None


def test_npc_list_cells_follow_the_tick(qtbot, generated):
    session = load(qtbot, generated)
    widget = show(qtbot, NpcList(session))
    index = generated.index
    started = generated.save.journal.kinds.index("InteractionStarted")
    tick = index.ticks[started]
    session.set_tick(tick)
    state = session.state
    active = state.knowledge.active_interaction()
    model = widget.model
    for row in range(model.rowCount()):
        sid = model.sid_at(row)
        npc = state.npc(sid)
        assert model.index(row, NpcTableModel.SCORE).data() == fmt_num(npc.relationship.score)
        assert model.index(row, NpcTableModel.STRESS).data() == f"{npc.tolerance.current_stress} / {npc.tolerance.threshold}"
        shown = model.index(row, NpcTableModel.INTERACTION).data()
        expected = active.interaction_state.name if active is not None and active.target_entity == sid else ""
        assert shown == expected
    assert any(model.index(r, NpcTableModel.INTERACTION).data() for r in range(model.rowCount()))

    session.set_tick(session.last_tick)
    scores = [model.index(r, NpcTableModel.SCORE).data() for r in range(model.rowCount())]
    assert any(score != "0.00" for score in scores)
    # A dragged tick: the cells follow once the drag pauses (a crowd's table is costly).
    session.set_tick(0, live=True)
    assert [model.index(r, NpcTableModel.SCORE).data() for r in range(model.rowCount())] == scores
    qtbot.waitUntil(lambda: all(model.index(r, NpcTableModel.SCORE).data() == "0.00" for r in range(model.rowCount())))
    assert_not_blank(widget)


def test_npc_list_scores_read_as_everywhere_and_sort_as_numbers(qtbot):
    """Trial 50: the NPC list's Score column had one decimal ("0.6" for 0.641) where the
    readout, Explain and ``state`` write ``fmt_num``'s two; and it sorts as numbers, not
    text ("100.00" after "21.78", and "9.50" before "21.78")."""
    from tests.test_widgets_tickbar_timelines import synthetic_playthrough

    scores = {7: 0.641, 8: 100.0, 9: 21.78, 10: 9.5, 11: 0.0}
    play = synthetic_playthrough({sid: [(0, score, 0)] for sid, score in scores.items()})
    widget = show(qtbot, NpcList(load(qtbot, play)))
    model = widget.model
    shown = {model.sid_at(row): model.index(row, NpcTableModel.SCORE).data() for row in range(model.rowCount())}
    assert shown == {7: "0.64", 8: "100.00", 9: "21.78", 10: "9.50", 11: "0.00"}
    assert all(f"score {text} " in model.index(row, 0).data(Qt.ToolTipRole) for row, text in
               ((row, shown[model.sid_at(row)]) for row in range(model.rowCount())))
    widget.view.sortByColumn(NpcTableModel.SCORE, Qt.AscendingOrder)
    proxy = widget.proxy
    column = [proxy.index(row, NpcTableModel.SCORE).data() for row in range(proxy.rowCount())]
    assert column == ["0.00", "0.64", "9.50", "21.78", "100.00"]


def test_npc_list_stress_over_threshold_is_red(qtbot, tmp_path):
    doc = minimal_doc()
    journal = doc["journal"]
    journal[-1]["event"]["StressChanged"].update(delta=50, current_stress=50)
    doc["npcs"]["17"]["tolerance"]["current_stress"] = 50
    session = load(qtbot, open_doc(doc, tmp_path / "stressed.json"))
    widget = show(qtbot, NpcList(session))
    cell = widget.model.index(0, NpcTableModel.STRESS)
    assert cell.data() == "50 / 40"
    assert cell.data(Qt.ForegroundRole).color() == widget.model.data(cell, Qt.ForegroundRole).color()
    assert cell.data(Qt.ForegroundRole).color().red() > 150


def test_npc_list_walk_aways_read_as_walk_aways_over_tolerated(qtbot, tmp_path):
    from narrative_debugger.models.playthrough import Playthrough
    from tests.conftest import SAMPLES

    play = Playthrough.open(SAMPLES / "walkaway-spiral.json", CONTENT)
    session = load(qtbot, play, tick=play.index.ticks[-1])
    widget = show(qtbot, NpcList(session))
    model = widget.model
    header = model.headerData(NpcTableModel.WALK_AWAYS, Qt.Horizontal, Qt.DisplayRole)
    assert header == "Walk-aways /\ntolerated"
    assert "the NPC tolerates before penalties" in model.headerData(NpcTableModel.WALK_AWAYS, Qt.Horizontal, Qt.ToolTipRole)
    kael = session.npc_by_slug("kael-davan")
    npc = session.state.npc(kael)
    tolerated = npc.interaction_tolerance.walk_away_threshold
    assert npc.walk_aways > tolerated
    cell = model.index(model.row_of(kael), NpcTableModel.WALK_AWAYS)
    assert cell.data() == f"{npc.walk_aways} / {tolerated}"
    tip = cell.data(Qt.ToolTipRole)
    assert tip.startswith(f"{npc.walk_aways} walk-aways; tolerates {tolerated} before penalties")


def test_npc_list_disconnects_when_destroyed(qtbot, minimal):
    session = load(qtbot, minimal)
    widget = NpcList(session)
    with qtbot.waitSignal(widget.destroyed, timeout=5000):
        widget.deleteLater()
    session.set_tick(100)
    session.set_npc(None)


# ----- journal -----
def test_journal_double_click_moves_tick_and_npc(qtbot, minimal):
    session = load(qtbot, minimal, tick=0)
    session.set_npc(None)
    widget = show(qtbot, JournalView(session))
    assert widget.model.rowCount() == 4
    with qtbot.waitSignal(session.tickChanged) as signal:
        double_click_row(qtbot, widget.view, 1)
    assert signal.args == [131]
    assert session.tick == 131 and session.npc == KAEL


def test_journal_marks_the_current_tick_and_greys_the_future(qtbot, minimal):
    session = load(qtbot, minimal, tick=131)
    widget = show(qtbot, JournalView(session))
    model = widget.model
    assert model.current_row() == 1
    assert model.index(1, JournalModel.NUMBER).data().startswith("▶")
    assert model.index(1, 0).data(Qt.BackgroundRole) is not None
    grey = model.index(2, JournalModel.KIND).data(Qt.ForegroundRole).color()
    assert grey == QColor("#9a9a9a")
    assert model.index(0, JournalModel.SUMMARY).data() == "conversation opens: player approaches, at dock-ward"
    assert model.index(2, JournalModel.NPC).data() == "Kael Davan"

    session.set_tick(164)
    assert model.current_row() == 3
    assert model.index(2, 0).data(Qt.BackgroundRole) is not None, "entries of the same tick are marked too"
    assert "4 of 4 applied" in widget.caption.text() and "4 of 4 entries applied at tick 164" in widget.caption.toolTip()
    assert_not_blank(widget)


def test_journal_filters_by_kind_and_npc(qtbot, generated):
    session = load(qtbot, generated)
    widget = show(qtbot, JournalView(session))
    kinds = generated.save.journal.kinds
    counts = Counter(kinds)
    widget.kind_filter.setCurrentIndex(widget.kind_filter.findData("DialogueLine"))
    assert widget.model.rowCount() == counts["DialogueLine"]
    assert {widget.model.index(r, JournalModel.KIND).data() for r in range(widget.model.rowCount())} == {"DialogueLine"}

    session.set_npc(KAEL)
    widget.npc_filter.setChecked(True)
    rows = [widget.model.journal_index(r) for r in range(widget.model.rowCount())]
    assert rows and all(generated.save.journal.data[i]["speaker"] == KAEL for i in rows)
    assert "Kael Davan" in widget.npc_filter.text()

    widget.kind_filter.setCurrentIndex(0)
    widget.npc_filter.setChecked(False)
    assert widget.model.rowCount() == len(kinds)


def test_journal_npc_and_kind_filters_show_exactly_the_entries_naming_the_npc(qtbot, generated):
    # The filters read arrays made off the GUI thread (JournalKinds); they must show
    # what the rule says: an entry names an NPC by its target, speaker or entity, or by
    # a fact id of the NPC's interactions.
    session = load(qtbot, generated)
    widget = show(qtbot, JournalView(session))
    save = generated.save

    def names(d, sid) -> bool:
        return d is not None and (any(getattr(d, f, None) == sid for f in ("target", "speaker", "entity"))
                                  or getattr(d, "fact_id", "").startswith(f"interaction.{save.npcs[sid].slug}_"))

    kinds = ["", *sorted({k for k in save.journal.kinds if k is not None})]
    for sid in save.npcs:
        session.set_npc(sid)
        widget.npc_filter.setChecked(True)
        for kind in kinds:
            widget.kind_filter.setCurrentIndex(max(0, widget.kind_filter.findData(kind or None)))
            shown = [widget.model.journal_index(r) for r in range(widget.model.rowCount())]
            want = [i for i, (k, d) in enumerate(zip(save.journal.kinds, save.journal.data)) if names(d, sid) and (not kind or k == kind)]
            assert shown == want, (sid, kind)
            assert all(type(i) is int for i in shown[:3])
        widget.npc_filter.setChecked(False)


def test_journal_lists_entries_with_findings(qtbot, penalty_fault):
    session = load(qtbot, penalty_fault)
    widget = show(qtbot, JournalView(session))
    assert widget.kind_filter.findData(WITH_FINDINGS) >= 0
    widget.kind_filter.setCurrentIndex(widget.kind_filter.findData(WITH_FINDINGS))
    assert [widget.model.journal_index(r) for r in range(widget.model.rowCount())] == [4]
    assert widget.model.index(0, 0).data(Qt.DecorationRole) is not None
    assert "T004" in widget.model.index(0, 0).data(Qt.ToolTipRole)


def test_journal_model_handles_a_large_save(qtbot, tmp_path):
    generator = pytest.importorskip("tests.support.savegen.generator")
    path = tmp_path / "large.json"
    generator.write_save(generator.generate_save(seed=1, events=200_000, scenario="evening"), path)
    playthrough = Playthrough.open(path, CONTENT)
    session = load(qtbot, playthrough)
    widget = show(qtbot, JournalView(session), size=(1000, 500))
    model = widget.model
    assert model.rowCount() == 200_000
    middle = playthrough.index.ticks[100_000]
    session.set_tick(middle)
    assert model.journal_index(model.current_row()) == playthrough.index.position_for_tick(middle) - 1
    assert model.index(199_999, JournalModel.SUMMARY).data()
    counts = Counter(playthrough.save.journal.kinds)
    widget.kind_filter.setCurrentIndex(widget.kind_filter.findData("StressChanged"))
    assert model.rowCount() == counts["StressChanged"]
    session.set_npc(KAEL)
    widget.npc_filter.setChecked(True)
    assert 0 < model.rowCount() < counts["StressChanged"]
    assert_not_blank(widget)


# ----- findings -----
def test_landing_reads_the_structured_target(minimal):
    def land(code, location, target, tick=None, message="something is wrong"):
        return landing(minimal, Finding(code, Severity.ERROR, message, location, tick, target))

    save = minimal.save
    kael = save.npcs[KAEL]
    # Snapshot targets land on the Snapshot dock at saved_at_tick (170), the tick the snapshot describes.
    got = land("R001", "npcs.17.relationship.score", npc_target(kael, "relationship.score"))
    assert (got.tick, got.npc, got.fact, got.view, got.docks, got.selection) == (170, KAEL, None, "timelines", ("snapshot",), ("npc", "kael-davan"))
    got = land("I002", "…", fact_target(save, "interaction.kael-davan_001", "metadata.Interaction.ended_tick"))
    assert (got.tick, got.npc, got.fact, got.view, got.selection) == (170, KAEL, "interaction.kael-davan_001", "interactions", ("fact", "interaction.kael-davan_001"))
    assert land("K004", "…", fact_target(save, "interaction.kael-davan_001", "acquired_tick"), 999).tick == 999
    # Journal targets land on the entry, at its tick, with the NPC the target names.
    got = land("J004", "journal[1].event.DialogueLine.speaker", Target("journal", journal_index=1, field="event.DialogueLine.speaker", stable_id=KAEL))
    assert (got.tick, got.npc, got.docks, got.selection) == (131, KAEL, ("journal",), ("journal", 1))
    got = land("M001", "journal[0]…", Target("line", journal_index=0, line_id="after-kael"), 120)
    assert (got.tick, got.docks, got.selection) == (120, ("monologues", "journal"), ("line", "after-kael"))
    got = land("C004", "monologues/harbor-nights.yaml:4:3", Target.from_location("monologues/harbor-nights.yaml:4:3"))
    assert (got.tick, got.npc, got.docks, got.selection) == (None, None, ("content",), ("content", "monologues/harbor-nights.yaml:4"))
    # The location and message text are never read: a slug in the message does not select an NPC.
    assert land("R002", "journal[2]", Target("journal", journal_index=2), message="kael-davan: delta is wrong").npc is None


def test_landing_on_a_real_fault(penalty_fault):
    t004 = [f for f in penalty_fault.findings if f.code == "T004"]
    assert t004, penalty_fault.findings
    for f in t004:
        got = landing(penalty_fault, f)
        assert (got.tick, got.npc, got.fact, got.view, got.docks, got.selection) == (164, KAEL, None, "timelines", ("journal",), ("journal", 4))


def test_finding_activation_moves_the_session(qtbot, penalty_fault):
    session = load(qtbot, penalty_fault, tick=0)
    session.set_npc(None)
    widget = show(qtbot, FindingsView(session), size=(1000, 300))
    widget.search.setText("T004")
    assert widget.proxy.rowCount() >= 1
    views = []
    session.viewChanged.connect(views.append)
    with qtbot.waitSignal(session.tickChanged):
        double_click_row(qtbot, widget.view, 0)
    assert (session.tick, session.npc, views[-1]) == (164, KAEL, "timelines")

    session.set_tick(0)
    session.set_npc(None)
    widget.view.setFocus()
    widget.view.setCurrentIndex(widget.proxy.index(0, 1))
    qtbot.keyClick(widget.view, Qt.Key_Return)
    assert (session.tick, session.npc) == (164, KAEL)


def test_findings_view_filters_sorts_and_counts(qtbot, penalty_fault):
    session = load(qtbot, penalty_fault)
    widget = show(qtbot, FindingsView(session), size=(1000, 300))
    findings = penalty_fault.findings
    errors = sum(f.severity is Severity.ERROR for f in findings)
    warnings = len(findings) - errors
    assert errors and warnings
    assert f"{errors} error" in widget.counts.text() and f"{warnings} warning" in widget.counts.text()

    widget.errors.setChecked(False)
    assert widget.proxy.rowCount() == warnings
    assert f"showing {warnings}" in widget.counts.text()
    widget.errors.setChecked(True)
    widget.warnings.setChecked(False)
    assert widget.proxy.rowCount() == errors
    widget.warnings.setChecked(True)

    widget.search.setText("t004 kael-davan")
    codes = {widget.proxy.index(r, FindingsModel.CODE).data() for r in range(widget.proxy.rowCount())}
    assert codes == {"T004"}
    widget.search.clear()

    widget.view.sortByColumn(FindingsModel.TICK, Qt.DescendingOrder)
    latest = max(f.tick for f in findings if f.tick is not None)
    assert widget.proxy.index(0, FindingsModel.TICK).data() == f"{latest:,}"
    widget.view.sortByColumn(FindingsModel.SEVERITY, Qt.AscendingOrder)
    assert widget.proxy.index(0, FindingsModel.SEVERITY).data() == "error"
    assert widget.proxy.index(0, 0).data(Qt.DecorationRole) is not None
    assert_not_blank(widget)


def test_findings_location_is_elided_in_the_middle(qtbot, penalty_fault):
    # A Python initStyleOption override is handed a copy by PySide, so its elide mode was
    # ignored and long JSON paths lost their field name; the shared ElideDelegate holds it.
    session = load(qtbot, penalty_fault)
    widget = show(qtbot, FindingsView(session), size=(1000, 300))
    delegate = widget.view.itemDelegateForColumn(FindingsModel.LOCATION)
    assert isinstance(delegate, ElideDelegate) and delegate.elide == Qt.ElideMiddle


def test_activate_finding_selects_the_fact(qtbot, minimal):
    session = load(qtbot, minimal)
    finding = Finding("I008", Severity.ERROR, "confidence", "player.knowledge.facts.interaction.kael-davan_001.confidence",
                      target=fact_target(minimal.save, "interaction.kael-davan_001", "confidence"))
    session.set_npc(None)
    activate_finding(session, finding)
    assert (session.fact, session.npc, session.view) == ("interaction.kael-davan_001", KAEL, "interactions")


# ----- monologues -----
def _row(rows, line_id):
    return next(r for r in rows if r.kind == "line" and r.line_id == line_id)


def test_monologue_view_lists_eligible_and_failing_lines(qtbot, minimal):
    session = load(qtbot, minimal, tick=170, npc=KAEL)
    widget = show(qtbot, MonologueView(session), size=(1000, 500))
    rows = widget.model.rows
    assert rows[0].kind == "heading" and rows[0].title.startswith("About Kael Davan")
    first_heading_end = next(k for k, r in enumerate(rows[1:], 1) if r.kind == "heading")
    about = rows[1:first_heading_end]
    assert about and all(line_concerns(r.line, "kael-davan", "Kael Davan") for r in about)
    met = _row(rows, "the-last-shift_m_s_010")
    assert met.eligible and not met.failing
    blocked = [r for r in rows if r.kind == "line" and not r.eligible]
    assert blocked and all(r.failing for r in blocked)
    assert "eligible" in widget.caption.text()

    session.set_tick(100)
    early = _row(widget.model.rows, "the-last-shift_m_s_010")
    assert not early.eligible
    assert early.failing == ("0 interaction(s) with kael-davan, needs 1",)
    assert_not_blank(widget)


def test_monologue_view_lists_fired_lines(qtbot, tmp_path):
    doc = minimal_doc()
    doc["journal"].append({"tick": 166, "event": {"MonologueFired": {"line_id": "the-last-shift_m_s_010"}}})
    doc["saved_at_tick"] = 170
    playthrough = open_doc(doc, tmp_path / "fired.json")
    session = load(qtbot, playthrough, tick=170, npc=KAEL)
    widget = MonologueView(session)
    qtbot.addWidget(widget)
    fired = [r for r in widget.model.rows if r.kind == "fired"]
    assert [(r.line_id, r.tick) for r in fired] == [("the-last-shift_m_s_010", 166)]
    assert _row(widget.model.rows, "the-last-shift_m_s_010").fired == 1
    session.set_tick(165)
    assert not [r for r in widget.model.rows if r.kind == "fired"]


def test_monologue_counts_have_thousands_separators(qtbot, tmp_path):
    """The caption said "1234 fired so far" and the fired heading "Fired up to the tick: 1234"
    where the rest of the app writes 1,234 (``counted``, the Journal's ticks)."""
    doc = minimal_doc()
    doc["journal"] += [{"tick": 1_234_567, "event": {"MonologueFired": {"line_id": "the-last-shift_m_s_010"}}}] * 1234
    doc["saved_at_tick"] = 1_234_567
    session = load(qtbot, open_doc(doc, tmp_path / "chatty.json"), tick=1_234_567, npc=KAEL)
    widget = MonologueView(session)
    qtbot.addWidget(widget)
    assert "1,234 fired so far" in widget.caption.text()
    headings = [r.title for r in widget.model.rows if r.kind == "heading"]
    assert headings[-1] == "Fired up to the tick: 1,234, newest 200 shown"
    row = next(k for k, r in enumerate(widget.model.rows) if r.kind == "line" and r.line_id == "the-last-shift_m_s_010")
    assert widget.model.index(row, widget.model.FIRED).data() == "1,234× (last 1,234,567)"


def test_monologue_rows_without_an_npc_are_one_group(minimal):
    rows = monologue_rows(minimal, minimal.state_at(170), None)
    headings = [r.title for r in rows if r.kind == "heading"]
    assert headings[0].startswith("All lines") and headings[-1].startswith("Fired up to the tick: 0")
    assert sum(r.kind == "line" for r in rows) == len(minimal.content.monologues)


def test_panels_survive_an_unreadable_save(qtbot, tmp_path):
    path = tmp_path / "broken.json"
    path.write_text("{not json", encoding="utf-8")
    playthrough = Playthrough.open(path, CONTENT)
    assert not playthrough.readable
    session = load(qtbot, playthrough)
    widgets = [NpcList(session), JournalView(session), FindingsView(session), MonologueView(session)]
    for widget in widgets:
        qtbot.addWidget(widget)
    assert widgets[0].model.rowCount() == widgets[1].model.rowCount() == 0
    codes = {widgets[2].model.index(r, FindingsModel.CODE).data() for r in range(widgets[2].model.rowCount())}
    assert "F001" in codes
    assert widgets[2].activate_row(0) is not None

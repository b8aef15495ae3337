"""KnowledgeView and InteractionView driven through a Session (pytest-qt, offscreen).

A small save is written here so every count is known; the bundled evening sample,
when present, checks the state-machine counts against a real playthrough.
"""

from __future__ import annotations

import json
from collections import Counter
from pathlib import Path

import pytest
from narrative_debugger.models.domain.types import InteractionState, KnowledgeConfidence, KnowledgeState
from narrative_debugger.models.playthrough import Playthrough
from narrative_debugger.widgets.kit.fact_model import COL_FACT, ChangedRole
from narrative_debugger.widgets.interactions.view import NON_BREAKING_HYPHEN, InteractionView
from narrative_debugger.widgets.knowledge.view import KnowledgeView
from narrative_debugger.widgets.session import Session
from narrative_debugger.widgets.kit.state_colors import FAULT_COLOR
from PySide6.QtCore import Qt

ROOT = Path(__file__).resolve().parent.parent
CONTENT = ROOT / "sample_saves" / "content"
EVENING = ROOT / "sample_saves" / "evening.json"
KAEL, LERA, MIRA = 17, 9, 42
S = InteractionState


# ----- a save written by hand -----
def _npc(slug: str) -> dict:
    return {
        "slug": slug,
        "tolerance": {"current_stress": 0, "threshold": 40},
        "interaction_tolerance": {"walk_away_threshold": 2, "walk_away_penalty": 0.3,
                                  "walk_away_stress_delta": 6, "permanent_confrontation_memory": True},
        "relationship": {"score": 0.0, "total_interactions": 0, "positive_interactions": 0,
                         "negative_interactions": 0, "avg_message_length": 0.0, "conversation_depth_avg": 0.0,
                         "shared_references": {"jokes": [], "nicknames": [], "memories": []},
                         "first_interaction_tick": None, "last_interaction_tick": None},
        "walk_aways": 0,
    }


def _e(tick: int, variant: str, **fields) -> dict:
    return {"tick": tick, "event": {variant: fields}}


def _save(journal: list[dict]) -> dict:
    return {
        "format": "settled-reach.save", "format_version": 1, "game_version": "0.7.2", "world_seed": 1,
        "saved_at_tick": max(e["tick"] for e in journal), "ticks_per_second": 10,
        "player": {"stable_id": 1, "name": "Ilse Maren", "pronouns": "she/her", "description": "",
                   "knowledge": {"entities": {}, "facts": {}}},
        "npcs": {str(sid): _npc(slug)
                 for sid, slug in ((LERA, "lera-sessik"), (KAEL, "kael-davan"), (MIRA, "mira-holt"))},
        "journal": journal,
        "story": {"plot_essentials": "", "story_summary": "", "authors_note": ""},
    }


def _walk(tick: int, target: int) -> list[dict]:
    return [_e(tick, "InteractionWalkedAway", target=target),
            _e(tick, "StressChanged", target=target, delta=6, current_stress=6, cause="walk_away")]


STORY = [
    _e(10, "EntityObserved", entity=KAEL, confidence="Direct", source="DirectObservation", relationship="Known"),
    _e(10, "FactLearned", fact_id="harbor.dues_raised", confidence="KnowsOf", source="Heard"),
    _e(20, "InteractionStarted", target=KAEL, player_initiated=True, location="dock-ward"),
    _e(30, "InteractionCompleted", target=KAEL, topics=["cargo"]),
    _e(40, "FactLearned", fact_id="contraband.ring_exists", confidence="Suspects", source="Inferred"),
    _e(40, "FactLearned", fact_id="weather.storm_coming", confidence="KnowsDetails", source="DirectObservation"),
    _e(50, "InteractionStarted", target=MIRA, player_initiated=False, location="salt-market"),
    _e(55, "InteractionConfrontation", target=MIRA),
    _e(60, "InteractionCompleted", target=MIRA, topics=["smuggling"]),
    _e(70, "InteractionStarted", target=KAEL, player_initiated=True, location="tidewater-inn"),
    *_walk(80, KAEL),
    _e(90, "FactUpdated", fact_id="harbor.dues_raised", confidence="Direct", state=None),
    _e(90, "FactUpdated", fact_id="weather.storm_coming", confidence=None, state="Stale"),
    _e(100, "InteractionStarted", target=KAEL, player_initiated=False, location="dock-ward"),
]


def _open(tmp_path: Path, journal: list[dict]) -> Playthrough:
    path = tmp_path / "story.json"
    path.write_text(json.dumps(_save(journal)), encoding="utf-8")
    playthrough = Playthrough.open(path, CONTENT)
    assert playthrough.readable
    return playthrough


@pytest.fixture()
def session(qtbot, tmp_path):
    s = Session()
    s.load(_open(tmp_path, STORY))
    return s


@pytest.fixture()
def knowledge(qtbot, session):
    view = KnowledgeView(session)
    qtbot.addWidget(view)
    view.resize(1100, 700)
    return view


@pytest.fixture()
def interactions(qtbot, session):
    view = InteractionView(session)
    qtbot.addWidget(view)
    view.resize(1100, 700)
    return view


def _distinct_colours(widget) -> int:
    image = widget.grab().toImage()
    colours = set()
    for y in range(0, image.height(), 7):
        for x in range(0, image.width(), 7):
            colours.add(image.pixel(x, y))
    return len(colours)


# ----- the fact table -----
def test_table_rows_follow_the_tick(session, knowledge):
    assert session.tick == 100
    assert knowledge.model.rowCount() == len(session.state.knowledge.facts) == 7
    session.set_tick(45)
    assert knowledge.model.rowCount() == len(session.state.knowledge.facts) == 4
    session.set_tick(5)
    assert knowledge.model.rowCount() == 0
    assert knowledge.shown_count() == 0


def test_rows_show_the_fact_values(session, knowledge):
    model = knowledge.model
    row = model.row_of("harbor.dues_raised")
    assert model.index(row, COL_FACT).data() == "harbor.dues_raised"
    assert [model.index(row, c).data() for c in range(1, 6)] == ["harbor", "Direct", "Heard", "Active", "10"]
    walked = model.row_of("interaction.kael-davan_002")
    assert model.index(walked, 6).data() == "Walked away"


def test_filters_reduce_rows(session, knowledge):
    proxy = knowledge.proxy
    assert knowledge.shown_count() == 7 and knowledge.table.model() is knowledge.model
    knowledge.category.setCurrentIndex(knowledge.category.findData("interaction"))
    assert proxy.rowCount() == 4
    knowledge.search.setText("kael")
    assert proxy.rowCount() == 3
    knowledge.search.setText("")
    knowledge.category.setCurrentIndex(0)
    knowledge.confidence.setCurrentIndex(knowledge.confidence.findData(KnowledgeConfidence.Direct))
    direct = [fid for fid, f in session.state.knowledge.facts.items() if f.confidence >= KnowledgeConfidence.Direct]
    assert proxy.rowCount() == len(direct) == 2  # harbor.dues_raised and the talk in progress
    knowledge.confidence.setCurrentIndex(0)
    knowledge.state_filter.setCurrentIndex(knowledge.state_filter.findData(KnowledgeState.Stale))
    assert proxy.rowCount() == 1
    assert proxy.index(0, COL_FACT).data() == "weather.storm_coming"
    session.set_tick(45)  # filters hold across ticks
    assert proxy.rowCount() == 0
    session.set_tick(100)
    assert proxy.rowCount() == 1
    knowledge.state_filter.setCurrentIndex(0)
    assert knowledge.shown_count() == 7 and knowledge.table.model() is knowledge.model
    assert knowledge.count.full_text() == "7 facts"


def test_sorting_is_done_by_the_source_model(session, knowledge):
    knowledge.table.sortByColumn(5, Qt.DescendingOrder)  # acquired tick
    ticks = [int(knowledge.model.index(r, 5).data()) for r in range(knowledge.model.rowCount())]
    assert ticks == sorted(ticks, reverse=True)
    knowledge.search.setText(".")  # through the proxy too
    shown = knowledge.table.model()
    assert shown is knowledge.proxy
    assert [int(shown.index(r, 5).data()) for r in range(shown.rowCount())] == ticks
    session.set_fact("weather.storm_coming")
    current = knowledge.table.currentIndex()
    assert current.isValid() and shown.index(current.row(), COL_FACT).data() == "weather.storm_coming"


def test_changed_facts_are_flagged(session, knowledge):
    session.set_tick(85)
    session.set_tick(95)  # the two FactUpdated entries at tick 90
    model = knowledge.model
    assert model.changed == {"harbor.dues_raised", "weather.storm_coming"}
    row = model.row_of("harbor.dues_raised")
    index = model.index(row, 0)
    assert index.data(ChangedRole) is True
    assert index.data(Qt.FontRole).bold()
    assert index.data(Qt.BackgroundRole) is not None
    quiet = model.index(model.row_of("contraband.ring_exists"), 0)
    assert quiet.data(ChangedRole) is False and quiet.data(Qt.BackgroundRole) is None
    knowledge.changed_only.setChecked(True)
    assert knowledge.shown_count() == 2
    assert "2 changed since tick 85" in knowledge.heading.text()


def _shown_row(knowledge, fact_id: str) -> int:
    shown = knowledge.table.model()
    return next(r for r in range(shown.rowCount()) if shown.index(r, COL_FACT).data() == fact_id)


def test_selecting_an_interaction_fact_selects_its_npc(session, knowledge):
    session.set_npc(LERA)
    knowledge.table.selectRow(_shown_row(knowledge, "interaction.mira-holt_001"))
    assert session.fact == "interaction.mira-holt_001"
    assert session.npc == MIRA
    knowledge.table.selectRow(_shown_row(knowledge, "harbor.dues_raised"))
    assert session.fact == "harbor.dues_raised" and session.npc == MIRA
    knowledge.category.setCurrentIndex(knowledge.category.findData("interaction"))  # and through the proxy
    knowledge.table.selectRow(_shown_row(knowledge, "interaction.kael-davan_002"))
    assert session.fact == "interaction.kael-davan_002" and session.npc == KAEL


def test_session_fact_selects_the_row(session, knowledge):
    session.set_fact("interaction.kael-davan_001")
    assert knowledge.table.currentIndex().row() == _shown_row(knowledge, "interaction.kael-davan_001")
    session.set_npc(LERA)
    session.set_tick(99)  # the selection survives a refresh without sending intents
    assert session.npc == LERA and session.fact == "interaction.kael-davan_001"
    assert knowledge.table.currentIndex().row() == _shown_row(knowledge, "interaction.kael-davan_001")
    knowledge.search.setText("kael")
    assert knowledge.table.currentIndex().row() == _shown_row(knowledge, "interaction.kael-davan_001")
    assert session.npc == LERA


# ----- the knowledge graph -----
def test_graph_draws_npcs_and_facts_and_clicks_select(qtbot, session, knowledge):
    knowledge.show()
    knowledge.tabs.setCurrentIndex(knowledge.GRAPH_TAB)
    graph = knowledge.graph
    assert sorted(graph.node_ids("npc")) == sorted([LERA, KAEL, MIRA])
    assert set(graph.node_ids("fact")) == set(session.state.knowledge.facts)
    view = graph.view
    node = next(item for item in graph.scene.items() if item.data(0) == "npc" and item.data(1) == MIRA)
    point = view.mapFromScene(node.sceneBoundingRect().center())
    qtbot.mouseClick(view.viewport(), Qt.LeftButton, pos=point)
    assert session.npc == MIRA
    fact = next(item for item in graph.scene.items()
                if item.data(0) == "fact" and item.data(1) == "interaction.kael-davan_001")
    qtbot.mouseClick(view.viewport(), Qt.LeftButton, pos=view.mapFromScene(fact.sceneBoundingRect().center()))
    assert session.fact == "interaction.kael-davan_001" and session.npc == KAEL


def test_graph_limits_facts_per_category(session, knowledge):
    knowledge.tabs.setCurrentIndex(knowledge.GRAPH_TAB)
    knowledge.graph.per_category.setValue(1)
    shown = knowledge.graph.node_ids("fact")
    assert "interaction.kael-davan_003" in shown and "interaction.kael-davan_001" not in shown
    assert len([f for f in shown if f.startswith("interaction.kael-davan")]) == 1


def test_crowded_graph_draws_the_selected_and_recent_npcs(qtbot, tmp_path):
    doc = _save([_e(5, "FactLearned", fact_id="harbor.dues_raised", confidence="KnowsOf", source="Heard")])
    doc["npcs"] = {str(200 + k): _npc(f"extra-{k:02d}") for k in range(15)}
    doc["journal"] += [_e(10 + k, "EntityObserved", entity=200 + k, confidence="KnowsOf", source="Heard",
                          relationship="Known") for k in range(15)]
    doc["saved_at_tick"] = 30
    path = tmp_path / "crowd.json"
    path.write_text(json.dumps(doc), encoding="utf-8")
    s = Session()
    s.load(Playthrough.open(path, CONTENT), npc=200)
    view = KnowledgeView(s)
    qtbot.addWidget(view)
    view.tabs.setCurrentIndex(view.GRAPH_TAB)
    drawn = view.graph.node_ids("npc")
    assert len(drawn) == 12 and 200 in drawn  # the selected NPC, then the most recently seen
    assert set(drawn) == {200, *range(204, 215)}
    s.set_npc(201)
    assert 201 in view.graph.node_ids("npc") and len(view.graph.node_ids("npc")) == 12
    assert "12 of 15 NPCs" in view.graph.summary.text()


# ----- the interaction view -----
def test_interaction_table_and_header_follow_the_npc(session, interactions):
    session.set_npc(KAEL)
    model = interactions.model
    assert model.rowCount() == 3
    assert [model.index(r, 0).data() for r in range(3)] == [f"interaction.kael-davan_00{k}" for k in (1, 2, 3)]
    assert [model.index(0, c).data() for c in range(8)] == [
        "interaction.kael-davan_001", "20", "30", "Completed", "cargo", "dock-ward", "player", ""]
    assert model.index(2, 2).data() == "—" and model.index(2, 6).data() == "NPC"
    assert "Kael Davan" in interactions.heading.text()
    assert f"walk{NON_BREAKING_HYPHEN}aways <b" in interactions.heading.text()  # the heading wraps between its parts only
    assert interactions.npc_choice.currentData() == KAEL
    session.set_npc(MIRA)
    assert model.rowCount() == 1 and model.index(0, 7).data() == "yes"
    interactions.npc_choice.setCurrentIndex(interactions.npc_choice.findData(KAEL))
    assert session.npc == KAEL


def test_state_machine_counts_and_progress(session, interactions):
    session.set_npc(KAEL)
    labels = interactions.diagram.edge_labels
    assert labels[(None, S.Active, True)] == "3"
    assert labels[(S.Active, S.Completed, True)] == "1"
    assert labels[(S.Active, S.WalkedAway, True)] == "1"
    assert labels[(S.Active, S.Confrontation, True)] == "0"
    assert interactions.diagram.highlighted == {S.Active}  # kael-davan_003 is in progress at tick 100
    session.set_tick(90)
    assert interactions.diagram.edge_labels[(None, S.Active, True)] == "2"
    assert interactions.diagram.highlighted == set()
    session.set_npc(MIRA)
    labels = interactions.diagram.edge_labels
    assert labels[(S.Active, S.Confrontation, True)] == "1" and labels[(S.Confrontation, S.Completed, True)] == "1"
    session.set_tick(57)
    assert interactions.diagram.highlighted == {S.Confrontation}


def test_selecting_an_interaction_row_selects_the_fact(session, interactions):
    session.set_npc(KAEL)
    interactions.table.selectRow(1)
    assert session.fact == "interaction.kael-davan_002"
    session.set_fact("interaction.kael-davan_001")
    assert interactions.table.currentIndex().row() == 0


def _slow_rows(state, slug: str) -> list:
    rows = list(state.knowledge.interaction_facts_for(slug))
    rows.sort(key=lambda r: (r[1].started_tick, len(r[0]), r[0]))
    return rows


def _shown_ids(model) -> list[str]:
    return [model.index(r, 0).data() for r in range(model.rowCount())]


def test_interaction_table_sorts_like_the_materialised_rows(session, interactions):
    session.set_npc(KAEL)
    model, table = interactions.model, interactions.table
    rows = _slow_rows(session.state, "kael-davan")
    natural = [fid for fid, _ in rows]
    assert _shown_ids(model) == natural
    table.sortByColumn(3, Qt.AscendingOrder)
    assert _shown_ids(model) == [fid for fid, _ in sorted(rows, key=lambda r: r[1].interaction_state.value)]
    table.sortByColumn(3, Qt.DescendingOrder)
    assert _shown_ids(model) == [fid for fid, _ in sorted(rows, key=lambda r: r[1].interaction_state.value)][::-1]
    session.set_fact("interaction.kael-davan_001")
    assert model.index(table.currentIndex().row(), 0).data() == "interaction.kael-davan_001"
    session.set_tick(75)  # a refresh keeps the sort
    assert _shown_ids(model) == ["interaction.kael-davan_001", "interaction.kael-davan_002"]  # Completed > Active
    session.set_tick(100)
    for column in (0, 1):
        table.sortByColumn(column, Qt.DescendingOrder)
        assert _shown_ids(model) == natural[::-1]
        assert model.row_of("interaction.kael-davan_003") == 0
        table.sortByColumn(column, Qt.AscendingOrder)
        assert _shown_ids(model) == natural
    assert model.row_of("interaction.mira-holt_001") is None and model.row_of("harbor.dues_raised") is None


def test_interaction_ticks_have_thousands_separators_and_sort_as_numbers(qtbot, tmp_path):
    """The Started and Ended columns showed "9000000" where the Journal writes 9,000,000;
    sorting them still orders the ticks, not their text ("10,000,000" < "2,000,000")."""
    s = Session()
    s.load(_open(tmp_path, [
        _e(999_990, "InteractionStarted", target=KAEL, player_initiated=True, location="dock-ward"),
        _e(999_995, "InteractionCompleted", target=KAEL, topics=[]),
        _e(1_500_000, "InteractionStarted", target=KAEL, player_initiated=True, location="dock-ward"),
        _e(2_000_000, "InteractionCompleted", target=KAEL, topics=[]),
        _e(9_000_000, "InteractionStarted", target=KAEL, player_initiated=True, location="dock-ward"),
        _e(10_000_000, "InteractionCompleted", target=KAEL, topics=[]),
        _e(12_345_678, "InteractionStarted", target=KAEL, player_initiated=False, location="dock-ward"),
    ]))
    view = InteractionView(s)
    qtbot.addWidget(view)
    s.set_npc(KAEL)
    model, table = view.model, view.table

    def column(col: int) -> list[str]:
        return [model.index(r, col).data() for r in range(model.rowCount())]

    assert column(1) == ["999,990", "1,500,000", "9,000,000", "12,345,678"]
    assert column(2) == ["999,995", "2,000,000", "10,000,000", "—"]
    table.sortByColumn(2, Qt.AscendingOrder)
    assert column(2) == ["999,995", "2,000,000", "10,000,000", "—"]
    table.sortByColumn(2, Qt.DescendingOrder)
    assert column(2) == ["—", "10,000,000", "2,000,000", "999,995"]
    table.sortByColumn(1, Qt.DescendingOrder)
    assert column(1) == ["12,345,678", "9,000,000", "1,500,000", "999,990"]


def test_faulty_saves_list_the_interactions_the_slow_way(qtbot, tmp_path):
    journal = [
        _e(20, "InteractionStarted", target=KAEL, player_initiated=True, location="dock-ward"),
        _e(30, "InteractionCompleted", target=KAEL, topics=[]),
        _e(15, "InteractionStarted", target=KAEL, player_initiated=False, location="salt-market"),  # J001
        _e(40, "InteractionConfrontation", target=KAEL),
    ]
    s = Session()
    s.load(_open(tmp_path, journal), npc=KAEL)
    view = InteractionView(s)
    qtbot.addWidget(view)
    assert not s.state.interactions_exact(KAEL)
    assert _shown_ids(view.model) == ["interaction.kael-davan_002", "interaction.kael-davan_001"]
    assert "2 conversations" in view.heading.text()
    assert view.diagram.highlighted == {S.Confrontation}
    s.set_fact("interaction.kael-davan_001")
    assert view.table.currentIndex().row() == 1
    assert view.diagram.edge_labels[(None, S.Active, True)] == "2"


def test_a_shared_slug_lists_both_npcs_interactions(qtbot, tmp_path):
    doc = _save([
        _e(20, "InteractionStarted", target=KAEL, player_initiated=True, location="dock-ward"),
        _e(30, "InteractionCompleted", target=KAEL, topics=[]),
        _e(40, "InteractionStarted", target=MIRA, player_initiated=True, location="dock-ward"),
    ])
    doc["npcs"][str(MIRA)]["slug"] = "kael-davan"
    path = tmp_path / "twins.json"
    path.write_text(json.dumps(doc), encoding="utf-8")
    s = Session()
    s.load(Playthrough.open(path, CONTENT), npc=KAEL)
    view = InteractionView(s)
    qtbot.addWidget(view)
    assert not s.state.interactions_exact(KAEL)
    assert _shown_ids(view.model) == [fid for fid, _ in _slow_rows(s.state, "kael-davan")]
    assert view.model.rowCount() == 2 and view.diagram.highlighted == {S.Active}
    assert view.diagram.edge_labels[(None, S.Active, True)] == "1"  # transitions stay per NPC


def test_table_resolves_only_the_rows_asked_for(session, interactions):
    """Setting the interactions reads no fact; showing a cell reads its row's fact only."""
    session.set_npc(KAEL)
    model = interactions.model
    state = session.state
    asked = []

    class Facts(dict):
        def __getitem__(self, fact_id):
            asked.append(fact_id)
            return super().__getitem__(fact_id)

    ids = state.index.interactions_by_npc[KAEL]
    model.set_interactions(ids, Facts(state.index.facts), state.position, count=model.rowCount())
    assert model.rowCount() >= 2 and asked == []
    model.index(1, 3).data()
    assert set(asked) == {ids[1]}


@pytest.mark.skipif(not EVENING.exists(), reason="sample_saves/evening.json not generated")
def test_edge_counts_equal_the_playthrough(qtbot, evening_playthrough):
    s = Session()
    s.load(evening_playthrough)
    view = InteractionView(s)
    qtbot.addWidget(view)
    for tick in (s.last_tick // 3, s.last_tick):
        s.set_tick(tick)
        for npc in evening_playthrough.save.npcs:
            s.set_npc(npc)
            expected = Counter((t.source, t.target) for t in s.state.transitions(npc) if t.legal)
            shown = {(a, b): int(text) for (a, b, legal), text in view.diagram.edge_labels.items() if legal}
            assert shown == {key: expected.get(key, 0) for key in shown}
            assert sum(shown.values()) == sum(expected.values())


def test_illegal_transition_is_a_red_edge(qtbot, tmp_path):
    journal = [
        _e(20, "InteractionStarted", target=KAEL, player_initiated=True, location="dock-ward"),
        _e(40, "InteractionConflictAbandoned", target=KAEL),  # Active → ConflictAbandoned
        _e(40, "StressChanged", target=KAEL, delta=6, current_stress=6, cause="walk_away"),
    ]
    playthrough = _open(tmp_path, journal)
    finding = next(f for f in playthrough.findings if f.code == "I001")
    s = Session()
    s.load(playthrough, npc=KAEL)
    view = InteractionView(s)
    qtbot.addWidget(view)
    diagram = view.diagram
    assert diagram.edge_labels[(S.Active, S.ConflictAbandoned, False)] == "I001"
    red = [item for item in diagram.scene().items()
           if hasattr(item, "pen") and item.pen().color() == FAULT_COLOR and item.pen().style() == Qt.DashLine]
    assert red
    badge_tips = [item.toolTip() for item in diagram.scene().items() if "I001" in item.toolTip()]
    assert any(finding.message in tip for tip in badge_tips)
    assert "I001" in view.faults.text() and "tick 40" in view.faults.text()
    s.set_tick(35)
    assert (S.Active, S.ConflictAbandoned, False) not in view.diagram.edge_labels


def test_an_event_after_the_interaction_ended_draws_no_move(qtbot, tmp_path):
    """checks.md I011: a terminal state is never left, so no Completed → Completed edge is drawn."""
    journal = [
        _e(20, "InteractionStarted", target=KAEL, player_initiated=True, location="dock-ward"),
        _e(30, "InteractionCompleted", target=KAEL, topics=[]),
        _e(40, "InteractionCompleted", target=KAEL, topics=[]),
    ]
    playthrough = _open(tmp_path, journal)
    assert [f.code for f in playthrough.findings if f.code in ("I001", "I011")] == ["I011"]
    s = Session()
    s.load(playthrough, tick=45, npc=KAEL)
    view = InteractionView(s)
    qtbot.addWidget(view)
    assert not [key for key in view.diagram.edge_labels if not key[2]]


# ----- they render -----
def test_widgets_render_something(qtbot, session, knowledge, interactions):
    session.set_npc(KAEL)
    for view in (knowledge, interactions):
        view.show()
        qtbot.waitExposed(view)
    assert _distinct_colours(knowledge) > 12
    knowledge.tabs.setCurrentIndex(knowledge.GRAPH_TAB)
    assert _distinct_colours(knowledge) > 12
    assert _distinct_colours(interactions) > 12


def test_empty_session_is_quiet(qtbot):
    s = Session()
    kv, iv = KnowledgeView(s), InteractionView(s)
    qtbot.addWidget(kv)
    qtbot.addWidget(iv)
    assert kv.model.rowCount() == 0 and iv.model.rowCount() == 0
    assert "no save open" in kv.heading.text() and "no save open" in iv.heading.text()
    kv.tabs.setCurrentIndex(kv.GRAPH_TAB)
    s.tickPreview.emit(3)
    assert "previewing tick 3" in kv.preview.text()


def test_preview_is_cheap(session, knowledge):
    before = knowledge.model.rowCount()
    session.set_tick(5, live=True)
    assert knowledge.model.rowCount() == before
    assert "previewing tick 5" in knowledge.preview.text()
    session.set_tick(5)
    assert knowledge.preview.text() == ""


def test_interaction_counts_and_tick_have_thousands_separators(qtbot, tmp_path):
    """Trial 49: the Interactions view wrote "8515 conversations", badges of "7924" and
    "up to tick 17711193" where the rest of the app writes 8,515 and 17,711,193."""
    from tests.support.savegen.generator import generate_save, write_save

    path = tmp_path / "many.json"
    write_save(generate_save(seed=3, events=40_000, scenario="many-conversations"), path)
    s = Session()
    s.load(Playthrough.open(path, CONTENT))
    view = InteractionView(s)
    qtbot.addWidget(view)
    view.resize(1100, 700)
    s.set_npc(LERA)
    state = s.state
    conversations = _slow_rows(state, "lera-sessik")
    completed = sum(meta.interaction_state == S.Completed for _, meta in conversations)
    assert state.tick > 999_999 and completed > 999
    assert f"up to tick {state.tick:,}." in view.caption.text()
    assert f"{len(conversations):,} conversations" in view.heading.text()
    labels = view.diagram.edge_labels
    assert labels[(None, S.Active, True)] == f"{len(conversations):,}"
    assert int(labels[(S.Active, S.Completed, True)].replace(",", "")) > 999 and "," in labels[(S.Active, S.Completed, True)]
    assert f"{completed:,} here now" in [text for text, _ink, _fill in view.diagram.texts]


def test_the_knowledge_table_writes_ticks_with_thousands_separators(qtbot):
    """Trial 49: the Acquired column and the tooltips wrote "27587" where the Journal
    and the Interactions view write 27,587; sorting stays by the tick."""
    from narrative_debugger.widgets.kit.fact_model import COL_ACQUIRED
    from tests.conftest import SAMPLES

    s = Session()
    s.load(Playthrough.open(SAMPLES / "evening.json", CONTENT))
    view = KnowledgeView(s)
    qtbot.addWidget(view)
    s.set_tick(s.last_tick)
    model = view.model
    rows = [(model.index(r, COL_ACQUIRED).data(), model.index(r, COL_FACT).data(Qt.ToolTipRole) or "") for r in range(model.rowCount())]
    late = [(text, tip) for text, tip in rows if int(text.replace(",", "")) >= 1000]
    assert late and all("," in text for text, _ in late)
    assert any("learned at tick " in tip and "," in tip.split("learned at tick ")[1].split()[0] for _, tip in late)


@pytest.mark.parametrize("size", [(1440, 900), (1040, 700)])
def test_the_knowledge_table_shows_its_columns_whole(qtbot, open_window, size):
    """Trial defect: at 1040 px fixed widths (FactId 215 px) put Source at the table's
    edge, cut ("Told b"), and State, Acquired tick and Interaction behind a horizontal
    scroll. Every column shown is as wide as its header and its values in view, with
    no scroll: a narrow table leaves out Category (the FactId's first part), then Source,
    then Interaction, which the row's tooltip still gives."""
    from narrative_debugger.widgets.kit.fact_model import COL_CATEGORY, COL_SOURCE
    from PySide6.QtGui import QFont, QFontMetrics
    from PySide6.QtWidgets import QApplication, QStyle

    from tests.conftest import SAMPLES

    w = open_window(SAMPLES / "evening.json", size=size)
    w.session.set_view("knowledge")
    w.finish_background()
    QApplication.processEvents()
    view = w.views["knowledge"]
    table, header = view.table, view.table.horizontalHeader()
    model = table.model()
    shown = [col for col in range(model.columnCount()) if not table.isColumnHidden(col)]
    assert COL_FACT in shown and table.horizontalScrollBar().maximum() == 0
    assert sum(table.columnWidth(col) for col in shown) <= table.viewport().width()
    margins = 2 * (table.style().pixelMetric(QStyle.PM_FocusFrameHMargin, None, table) + 1)  # a cell's text margins
    header_margins = 2 * table.style().pixelMetric(QStyle.PM_HeaderMargin, None, header)
    bold = QFont(table.font())
    bold.setBold(True)
    first, last = table.rowAt(0), table.rowAt(table.viewport().height() - 1)
    last = model.rowCount() - 1 if last < 0 else last
    for col in shown:
        title = model.headerData(col, Qt.Horizontal)
        assert QFontMetrics(header.font()).horizontalAdvance(title) + header_margins <= table.columnWidth(col), title
        for row in range(first, last + 1):
            index = model.index(row, col)
            metrics = QFontMetrics(bold if index.data(ChangedRole) else table.font())
            text = index.data()
            assert metrics.horizontalAdvance(text) + margins <= table.columnWidth(col), (title, text)
    if size == (1440, 900):  # room for every column
        assert COL_CATEGORY in shown and COL_SOURCE in shown
    tip = model.index(first, COL_FACT).data(Qt.ToolTipRole)
    assert model.index(first, COL_SOURCE).data() in tip  # a column left out is in the tooltip


@pytest.mark.parametrize("size", [(1440, 900), (1040, 700)])
def test_stepped_knowledge_columns_equal_a_fresh_measure(qtbot, open_window, size):
    """Issue 37: a tick step measures the Knowledge table's rows in view again only
    when a row in view changed (``RowsInViewWatch``); the widths it leaves after every
    step, forward and back, near the start and the end, are the widths a measure of every
    row in view gives (``fit_columns(remeasure=True)``), and every value in view is whole."""
    from narrative_debugger.widgets.kit.fact_model import ChangedRole
    from PySide6.QtGui import QFont, QFontMetrics
    from PySide6.QtWidgets import QApplication, QStyle

    from tests.conftest import SAMPLES

    w = open_window(SAMPLES / "evening.json", size=size)
    w.session.set_view("knowledge")
    w.finish_background()
    w.session.set_tick(0)
    QApplication.processEvents()
    view = w.views["knowledge"]
    table = view.table
    margins = 2 * (table.style().pixelMetric(QStyle.PM_FocusFrameHMargin, None, table) + 1)
    bold = QFont(table.font())
    bold.setBold(True)

    def widths() -> list[int]:
        return [-1 if table.isColumnHidden(col) else table.columnWidth(col) for col in range(table.model().columnCount())]

    checked = 0
    for action, count in ((w.tickbar.next_action, 60), (w.tickbar.prev_action, 25), (w.tickbar.last_action, 1),
                          (w.tickbar.prev_action, 25)):
        for _ in range(count):
            if not action.isEnabled():
                break
            action.trigger()
            QApplication.processEvents()
            stepped = widths()
            view.fit_columns(remeasure=True)
            QApplication.processEvents()
            assert widths() == stepped, (w.session.tick, stepped, widths())
            model = table.model()
            first, last = table.rowAt(0), table.rowAt(table.viewport().height() - 1)
            last = model.rowCount() - 1 if last < 0 else last
            for row in range(max(0, first), last + 1):
                for col in range(model.columnCount()):
                    if table.isColumnHidden(col) or col == COL_FACT:  # the FactId elides at its left when narrow
                        continue
                    index = model.index(row, col)
                    metrics = QFontMetrics(bold if index.data(ChangedRole) else table.font())
                    assert metrics.horizontalAdvance(index.data()) + margins <= table.columnWidth(col), (w.session.tick, index.data())
            checked += 1
    assert checked > 60

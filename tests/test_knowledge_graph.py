"""The knowledge graph tab (pytest-qt, offscreen): malformed FactIds get their own group,
the graph zooms under the mouse, pans, fits, finds facts and NPCs, expands groups, and
an expanded group of hundreds of facts stays a handful of items."""

from __future__ import annotations

from pathlib import Path

import pytest
from narrative_debugger.models.domain.knowledge import fact_id_fault, malformed_fact_ids
from narrative_debugger.models.playthrough import Playthrough
from narrative_debugger.widgets.knowledge.groups import MALFORMED, fact_faults, fact_groups, recent_interactions
from narrative_debugger.widgets.knowledge.view import KnowledgeView
from narrative_debugger.widgets.session import Session
from PySide6.QtCore import QPoint, QPointF, Qt
from PySide6.QtGui import QWheelEvent
from PySide6.QtWidgets import QApplication

ROOT = Path(__file__).resolve().parent.parent
SAMPLES = ROOT / "sample_saves"
CONTENT = SAMPLES / "content"
KAEL, LERA, MIRA = 17, 9, 42


def graph_on(qtbot, save: Path, npc: int | None = None):
    session = Session()
    session.load(Playthrough.open(save, CONTENT), npc=npc)
    view = KnowledgeView(session)
    qtbot.addWidget(view)
    view.resize(1100, 750)
    view.show()
    qtbot.waitExposed(view)
    view.tabs.setCurrentIndex(view.GRAPH_TAB)
    QApplication.processEvents()
    return session, view.graph


# ----- grouping -----
def test_malformed_ids_are_found_as_one_by_one():
    ids = ["Smuggling-night_boats", "interaction.mira-holt_18", "interaction.a_001", "a.b", "interaction.a_1000",
           "interaction.a_0012", "", "x.y\nz", "Interaction.a_001", "interaction.bad_slug_001", "a.B", "harbor.dues_raised"]
    expected = {fid: fact_id_fault(fid) for fid in ids if fact_id_fault(fid)}
    assert malformed_fact_ids(ids) == expected
    assert malformed_fact_ids([i for i in ids if "\n" not in i]) == {k: v for k, v in expected.items() if "\n" not in k}
    assert expected["Smuggling-night_boats"] == "K001" and expected["interaction.mira-holt_18"] == "K003"


def test_a_malformed_fact_gets_its_own_group_and_never_shifts_another():
    keys = sorted(["Smuggling-night_boats", "contraband.ring_exists", "contraband.ring_leader", "contraband.Bad",
                   "interaction.kael-davan_001", "interaction.kael-davan_18", "weather.storm_coming"])
    groups, conversations = fact_groups(keys, fact_faults(keys))
    assert [(g.title, g.ids) for g in groups] == [
        ("contraband", ["contraband.ring_exists", "contraband.ring_leader"]),
        ("weather", ["weather.storm_coming"]),
        (MALFORMED, ["Smuggling-night_boats", "contraband.Bad", "interaction.kael-davan_18"]),
    ]
    assert groups[-1].malformed and conversations == 1
    assert recent_interactions(keys, "kael-davan", 5, fact_faults(keys)) == (["interaction.kael-davan_001"], 1)


def test_qa_faults_draws_k001_under_malformed_ids_not_under_a_category(qtbot):
    _, graph = graph_on(qtbot, SAMPLES / "qa-faults.json")
    assert graph.group_of("Smuggling-night_boats") == MALFORMED
    assert graph.group_of("contraband.ring_exists") == "contraband"
    titles = [item.text() for item in graph.scene.items() if hasattr(item, "text")]
    assert any(MALFORMED in t for t in titles)
    assert not any("Smuggling" in t and MALFORMED not in t and t != "Smuggling-night_boats" for t in titles)
    assert "1 malformed" in graph.summary.text()


def test_sequence_order_past_999():
    keys = sorted(f"interaction.kael-davan_{n:03d}" for n in range(1, 1203))
    ids, total = recent_interactions(keys, "kael-davan", 3, {})
    assert total == 1202 and ids == [f"interaction.kael-davan_{n}" for n in (1200, 1201, 1202)]


# ----- zoom, pan, fit -----
def wheel(view, pos: QPoint, steps: int) -> None:
    event = QWheelEvent(QPointF(pos), QPointF(view.viewport().mapToGlobal(pos)), QPoint(0, 0), QPoint(0, 120 * steps),
                        Qt.NoButton, Qt.NoModifier, Qt.NoScrollPhase, False)
    QApplication.sendEvent(view.viewport(), event)


def test_wheel_zooms_under_the_mouse_and_fit_restores(qtbot):
    _, graph = graph_on(qtbot, SAMPLES / "evening.json", npc=LERA)
    view = graph.view
    assert view.auto_fit
    fitted = view.scale_factor()
    pos = QPoint(view.viewport().width() // 3, view.viewport().height() // 3)
    under = view.mapToScene(pos)
    wheel(view, pos, 3)
    assert view.scale_factor() == pytest.approx(fitted * 1.2 ** 3, rel=1e-3)
    after = view.mapToScene(pos)
    assert abs(after.x() - under.x()) < 2 / view.scale_factor() + 1 and abs(after.y() - under.y()) < 2 / view.scale_factor() + 1
    assert not view.auto_fit
    wheel(view, pos, -40)  # clamped, never inverted or zero
    assert view.scale_factor() > 0.01
    graph.fit_button.click()
    assert view.auto_fit and view.scale_factor() == pytest.approx(fitted, rel=1e-3)
    shown = view.mapToScene(view.viewport().rect()).boundingRect()
    assert shown.adjusted(-2, -2, 2, 2).contains(graph.scene.overview)


def test_drag_pans(qtbot):
    _, graph = graph_on(qtbot, SAMPLES / "evening.json", npc=LERA)
    view = graph.view
    graph.zoom_in.click()
    before = view.center()
    empty = QPoint(8, 8)  # a corner away from every node
    qtbot.mousePress(view.viewport(), Qt.LeftButton, pos=empty)
    for k in range(1, 6):
        qtbot.mouseMove(view.viewport(), QPoint(8 + 20 * k, 8 + 10 * k))
    qtbot.mouseRelease(view.viewport(), Qt.LeftButton, pos=QPoint(108, 58))
    after = view.center()
    assert after.x() < before.x() - 20 and after.y() < before.y() - 10


# ----- search and expansion -----
def test_find_a_fact_expands_its_npc_selects_and_centres_it(qtbot):
    session, graph = graph_on(qtbot, SAMPLES / "evening.json", npc=LERA)
    target = "interaction.kael-davan_003"  # older than the six drawn at Kael
    assert graph.group_of(target) is None
    graph.search.setText(target)
    qtbot.keyClick(graph.search, Qt.Key_Return)
    assert session.fact == target and session.npc == KAEL
    assert ("npc", KAEL) in graph.expanded and graph.group_of(target) == "Kael Davan"
    rect = graph.scene.fact_rect(target)
    middle = graph.view.mapFromScene(rect.center())
    viewport = graph.view.viewport().rect()
    assert abs(middle.x() - viewport.center().x()) <= 2 and abs(middle.y() - viewport.center().y()) <= 2
    assert graph.view.scale_factor() >= 1.0  # readable, whatever the fitted size was


def test_find_an_npc_by_part_of_its_name_and_say_when_nothing_matches(qtbot):
    session, graph = graph_on(qtbot, SAMPLES / "evening.json", npc=LERA)
    assert graph.find("mira")
    assert session.npc == MIRA
    assert not graph.find("no such thing")
    assert "Nothing" in graph.message.text()
    assert graph.find("ring_exi")
    assert session.fact == "contraband.ring_exists"


def test_a_collapsed_group_shows_a_count_and_expands_to_all_its_facts(qtbot):
    session, graph = graph_on(qtbot, SAMPLES / "evening.json", npc=LERA)
    graph.per_category.setValue(1)
    assert graph.group_of("contraband.ring_exists") is None or graph.group_of("contraband.ring_leader") is None
    texts = [item.text() for item in graph.scene.items() if hasattr(item, "text")]
    assert "2 facts" in texts and any("1 older" in t for t in texts)
    head = next(item for item in graph.scene.items() if item.data(0) == "group" and item.data(1) == ("category", "contraband"))
    qtbot.mouseClick(graph.view.viewport(), Qt.LeftButton, pos=graph.view.mapFromScene(head.sceneBoundingRect().center()))
    assert ("category", "contraband") in graph.expanded
    assert graph.group_of("contraband.ring_exists") == graph.group_of("contraband.ring_leader") == "contraband"
    session.set_tick(session.tick - 1)  # expansion is kept from tick to tick
    assert ("category", "contraband") in graph.expanded


def test_an_expanded_npc_with_hundreds_of_conversations_stays_a_few_items(qtbot, tmp_path):
    from tests.support.savegen.generator import generate_save, write_save

    path = tmp_path / "many.json"
    write_save(generate_save(seed=3, events=30_000, scenario="large"), path)
    session, graph = graph_on(qtbot, path)
    state = session.state
    keys = list(state.knowledge.facts)
    counts = {npc.stable_id: recent_interactions(keys, npc.slug, 1, {})[1] for npc in state.npcs.values()}
    busiest = max(counts, key=counts.get)
    assert counts[busiest] > 500
    before = len(graph.scene.items())
    graph.toggle(("npc", busiest))
    assert len(graph.scene.items()) <= before + 4  # one grid and its title, not an item per fact
    drawn = [fid for fid in graph.node_ids("fact") if graph.group_of(fid) == session.playthrough.npc_name(busiest)]
    assert len(drawn) == counts[busiest]
    graph.view.viewport().grab()  # paints only what is on screen; must not fail
    oldest = min(drawn, key=lambda fid: int(fid.rsplit("_", 1)[1]))
    assert graph.find(oldest) and session.fact == oldest


def test_a_fact_far_below_the_fitted_overview_can_still_be_centred(qtbot):
    """The scene rect spans everything drawn, not only what Fit shows (a tall expanded grid)."""
    from narrative_debugger.widgets.knowledge.graph_view import ZoomView
    from PySide6.QtCore import QRectF
    from PySide6.QtWidgets import QGraphicsScene

    scene = QGraphicsScene()
    scene.addRect(QRectF(0, 0, 400, 300))
    far = scene.addRect(QRectF(100, 20_000, 14, 14))
    view = ZoomView(scene, lambda *_: None)
    qtbot.addWidget(view)
    view.resize(600, 400)
    view.show()
    view.set_content(QRectF(0, 0, 400, 300), scene.itemsBoundingRect())
    view.show_rect(far.sceneBoundingRect(), min_scale=1.7)
    middle = view.mapFromScene(far.sceneBoundingRect().center())
    assert abs(middle.y() - view.viewport().rect().center().y()) <= 2
    assert view.scale_factor() == pytest.approx(1.7)


def test_fact_and_entity_values_hold_no_floats():
    """snapshot_diff skips a fact or entity whose saved and replayed values are equal:
    that only agrees with its float tolerance while these types hold no float."""
    from narrative_debugger.models.domain import types

    for cls in (types.FactKnowledge, types.FactMetadata, types.InteractionMetadata, types.EntityKnowledge):
        for name, hint in cls.__annotations__.items():
            assert "float" not in str(hint), (cls.__name__, name, hint)


def test_equal_facts_give_no_difference_and_a_changed_field_still_does():
    from narrative_debugger.models.domain.types import FactKnowledge, KnowledgeConfidence, KnowledgeSource, KnowledgeState
    from narrative_debugger.models.rules.snapshot_diff import _map_differences, fact_fields

    a = FactKnowledge(KnowledgeConfidence.KnowsOf, KnowledgeSource.Heard, KnowledgeState.Active, 5)
    b = FactKnowledge(KnowledgeConfidence.KnowsOf, KnowledgeSource.Heard, KnowledgeState.Active, 5)
    c = FactKnowledge(KnowledgeConfidence.Direct, KnowledgeSource.Heard, KnowledgeState.Active, 5)

    def found(snap, replayed):
        return [d.path for d in _map_differences(None, snap, replayed, fact_fields, "facts", "facts", lambda *_: None)]

    assert found({"x.y": a}, {"x.y": b}) == []
    assert found({"x.y": a}, {"x.y": c}) == ["facts.x.y.confidence"]


@pytest.mark.parametrize("ordered", [True, False])
def test_next_interaction_sequence_stays_the_count_of_prefixed_keys_as_facts_arrive(ordered):
    """The counts kept per prefix agree with a bisection of the keys after every insert,
    also for slugs that are prefixes of each other and FactIds that are not interaction ids."""
    import random

    from narrative_debugger.models.domain.knowledge import KnowledgeGraph, interaction_prefix
    from narrative_debugger.models.domain.types import FactKnowledge, KnowledgeConfidence, KnowledgeSource, KnowledgeState

    slugs = ["old", "old_kael", "kael", "a_b_c", "a_b", ""]
    rng = random.Random(7)
    graph = KnowledgeGraph({1: "old", 2: "kael"}, ordered=ordered)
    fact = FactKnowledge(KnowledgeConfidence.KnowsOf, KnowledgeSource.Heard, KnowledgeState.Active, 1)
    for step in range(600):
        slug = rng.choice(slugs)
        if step % 3 == 0:
            graph.next_interaction_sequence(slug)  # starts counting this prefix
        fact_id = rng.choice([f"interaction.{slug}_{rng.randint(1, 40):03d}", f"interaction.{slug}_x", f"lore.{slug}_1", f"interaction.{slug}"])
        graph.set_fact(fact_id, fact)
        for name in slugs:
            prefix = interaction_prefix(name)
            expected = sum(1 for key in graph.facts if key.startswith(prefix)) + 1
            assert graph.next_interaction_sequence(name) == expected, (step, name)
            assert [k for k, _ in graph.interaction_items(name)] == sorted(k for k in graph.facts if k.startswith(prefix))

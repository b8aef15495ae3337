"""The seeds' own rules and numbers, held by the models."""

import pytest
from narrative_debugger.models.domain.knowledge import KnowledgeGraph, interaction_fact_id, parse_interaction_id
from narrative_debugger.models.domain.relationship import add_shared_reference, prompt_modifier, record_interaction, score_delta
from narrative_debugger.models.domain.types import (
    TRANSITIONS,
    FactKnowledge,
    FactMetadata,
    InteractionMetadata,
    InteractionState,
    KnowledgeConfidence,
    KnowledgeSource,
    KnowledgeState,
    Relationship,
    RelationshipLevel,
    is_legal_transition,
)

S = InteractionState


@pytest.mark.parametrize(
    "sentiment, length, turns, expected",
    [
        (0.4, 100, 1, 0.55),  # "Friendly chat"
        (-0.3, 20, 1, 0.04),  # "Short dismissive message"
        (0.8, 800, 5, 1.0),  # "Long, deep, positive conversation" (capped)
    ],
)
def test_relationship_delta_worked_examples(sentiment, length, turns, expected):
    assert score_delta(sentiment, length, turns) == pytest.approx(expected, abs=1e-9)


def test_delta_is_clamped_both_ways():
    assert score_delta(-1.0, 0, 0) == pytest.approx(-0.4)
    assert score_delta(5.0, 5000, 50) == 1.0
    assert score_delta(-5.0, 0, 0) == -1.0


@pytest.mark.parametrize(
    "score, level",
    [
        (0, RelationshipLevel.STRANGER),
        (20, RelationshipLevel.STRANGER),
        (20.5, RelationshipLevel.ACQUAINTANCE),
        (40, RelationshipLevel.ACQUAINTANCE),
        (40.01, RelationshipLevel.FRIEND),
        (60, RelationshipLevel.FRIEND),
        (80, RelationshipLevel.GOOD_FRIEND),
        (80.01, RelationshipLevel.CLOSE_FRIEND),
        (100, RelationshipLevel.CLOSE_FRIEND),
    ],
)
def test_level_bounds_inclusive(score, level):
    assert RelationshipLevel.for_score(score) is level


def test_level_display_names():
    assert RelationshipLevel.GOOD_FRIEND.display_name == "Good Friend"
    assert RelationshipLevel.STRANGER.display_name == "Stranger"


def test_record_interaction_counters_and_running_averages():
    rel = Relationship()
    rel = record_interaction(rel, tick=10, sentiment=0.4, message_length=100, conversation_turns=1)
    assert rel.score == pytest.approx(0.55)
    rel = record_interaction(rel, tick=20, sentiment=-0.3, message_length=20, conversation_turns=3)
    assert rel.score == pytest.approx(0.55 + 0.14)  # -0.15 + 0.04 + 0.15 + 0.1
    assert rel.total_interactions == 2
    assert rel.positive_interactions == 1 and rel.negative_interactions == 1
    assert rel.avg_message_length == pytest.approx(60.0)
    assert rel.conversation_depth_avg == pytest.approx(2.0)
    assert rel.first_interaction_tick == 10 and rel.last_interaction_tick == 20
    # sentiment exactly 0.2 is neither positive nor negative
    rel = record_interaction(rel, tick=30, sentiment=0.2, message_length=0, conversation_turns=0)
    assert rel.positive_interactions == 1 and rel.negative_interactions == 1


def test_score_clamped_to_100():
    rel = Relationship(score=99.8)
    rel = record_interaction(rel, tick=1, sentiment=0.8, message_length=800, conversation_turns=5)
    assert rel.score == 100.0


def test_shared_references_cap_oldest_dropped_duplicates_ignored():
    rel = Relationship()
    for i in range(12):
        rel = add_shared_reference(rel, "jokes", f"joke {i}")
    rel = add_shared_reference(rel, "jokes", "joke 11")
    jokes = rel.references("jokes")
    assert len(jokes) == 10
    assert jokes[0] == "joke 2" and jokes[-1] == "joke 11"
    with pytest.raises(ValueError):
        add_shared_reference(rel, "secrets", "x")


def test_prompt_modifier_references_only_from_good_friend():
    rel = add_shared_reference(Relationship(), "jokes", "the eel in the ledger")
    rel = add_shared_reference(rel, "nicknames", "Gull")
    friend = prompt_modifier(RelationshipLevel.FRIEND, rel, npc="Kael", player="Ilse")
    good = prompt_modifier(RelationshipLevel.GOOD_FRIEND, rel, npc="Kael", player="Ilse")
    close = prompt_modifier(RelationshipLevel.CLOSE_FRIEND, rel, npc="Kael", player="Ilse")
    assert "eel in the ledger" not in friend and "Gull" not in friend
    assert "eel in the ledger" in good and "Gull" in good
    assert "eel in the ledger" in close
    texts = {prompt_modifier(level, Relationship(), npc="K", player="I") for level in RelationshipLevel}
    assert len(texts) == 5


def test_transition_table_is_schema_3_2():
    legal = {
        (None, S.Active),
        (S.Active, S.Completed),
        (S.Active, S.WalkedAway),
        (S.Active, S.Confrontation),
        (S.Confrontation, S.Completed),
        (S.Confrontation, S.ConflictAbandoned),
    }
    assert set(TRANSITIONS) == legal
    for source in [None, *S]:
        for target in S:
            assert is_legal_transition(source, target) == ((source, target) in legal)
    # terminal states have no exit
    for terminal in (S.Completed, S.WalkedAway, S.ConflictAbandoned):
        assert not any(is_legal_transition(terminal, t) for t in S)


def test_confidence_is_ordered():
    C = KnowledgeConfidence
    assert C.Suspects < C.KnowsOf < C.KnowsDetails < C.Direct
    assert max([C.KnowsOf, C.Direct, C.Suspects]) is C.Direct


def _interaction(target, state, started, ended=None):
    meta = InteractionMetadata(target, state, started, ended, (), False, True, "dock-ward")
    return FactKnowledge(KnowledgeConfidence.KnowsDetails, KnowledgeSource.DirectObservation, KnowledgeState.Active, started, FactMetadata(meta))


def test_sequence_allocation_counts_existing_plus_one():
    kg = KnowledgeGraph({17: "kael-davan", 18: "kael"})
    assert kg.next_interaction_sequence("kael-davan") == 1
    kg.set_fact("interaction.kael-davan_001", _interaction(17, S.Completed, 10, 20))
    kg.set_fact("interaction.kael-davan_002", _interaction(17, S.WalkedAway, 30, 40))
    kg.set_fact("interaction.kael_001", _interaction(18, S.Completed, 5, 6))  # a prefix of another slug
    assert kg.next_interaction_sequence("kael-davan") == 3
    assert kg.next_interaction_sequence("kael") == 2
    assert interaction_fact_id("kael-davan", 3) == "interaction.kael-davan_003"
    assert interaction_fact_id("kael-davan", 1000) == "interaction.kael-davan_1000"
    assert parse_interaction_id("interaction.kael-davan_1000") == ("kael-davan", 1000)
    assert parse_interaction_id("interaction.Kael_001") is None


def test_queries_of_schema_5_1():
    kg = KnowledgeGraph({17: "kael-davan", 23: "sera-venn"})
    assert not kg.has_interacted_with(17)
    assert kg.last_interaction_with(17) is None
    kg.set_fact("interaction.kael-davan_001", _interaction(17, S.WalkedAway, 10, 20))
    kg.set_fact("interaction.kael-davan_002", _interaction(17, S.Completed, 30, 40))
    active = _interaction(23, S.Active, 50)
    kg.set_fact("interaction.sera-venn_001", active)
    kg.set_fact("contraband.ring_exists", FactKnowledge(KnowledgeConfidence.KnowsOf, KnowledgeSource.Heard, KnowledgeState.Active, 5))
    assert kg.has_interacted_with(17)
    assert kg.interaction_count_with(17) == 2
    assert kg.has_walked_away_from(17)
    assert not kg.has_walked_away_from(23)
    assert not kg.has_confronted(17)
    assert kg.last_interaction_with(17).interaction_state is S.Completed
    assert [m.started_tick for m in kg.interactions_with(17)] == [10, 30]
    assert kg.active_interaction().target_entity == 23
    assert kg.interaction_count_with(99) == 0


def test_interactions_with_orders_by_started_tick_past_999():
    kg = KnowledgeGraph({17: "kael-davan"})
    for seq in (998, 999, 1000, 1001):
        kg.set_fact(interaction_fact_id("kael-davan", seq), _interaction(17, S.Completed, seq * 10, seq * 10 + 1))
    # FactId byte order puts _1000 before _998; the query orders by started_tick.
    assert list(kg.facts)[:2] == ["interaction.kael-davan_1000", "interaction.kael-davan_1001"]
    assert [m.started_tick for m in kg.interactions_with(17)] == [9980, 9990, 10000, 10010]


def test_entities_sort_numerically():
    kg = KnowledgeGraph()
    from narrative_debugger.models.domain.types import EntityKnowledge, RelationshipState

    e = EntityKnowledge(KnowledgeConfidence.KnowsOf, KnowledgeSource.Heard, KnowledgeState.Active, RelationshipState.Known, 1)
    for sid in (10, 9, 100, 2**63):
        kg.set_entity(sid, e)
    assert list(kg.entities) == [9, 10, 100, 2**63]


def test_adding_a_shared_reference_keeps_the_other_kinds_pairs():
    """A new joke changes the jokes only; the nicknames' and memories' pairs are the
    previous version's own (each NPC version holds the tuple: ~8 MB at 1M events)."""
    rel = add_shared_reference(Relationship(), "memories", "the flood")
    after = add_shared_reference(rel, "jokes", "the goat")
    old, new = dict(rel.shared_references), dict(after.shared_references)
    assert new["jokes"] == ("the goat",) and new["memories"] == ("the flood",) and rel.shared_references != after.shared_references
    assert [name for name, _ in after.shared_references] == [name for name, _ in rel.shared_references]
    kept = [a is b for a, b in zip(rel.shared_references, after.shared_references)]
    assert kept == [name != "jokes" for name, _ in rel.shared_references]
    assert old == dict(add_shared_reference(rel, "memories", "the flood").shared_references)  # a repeat changes nothing

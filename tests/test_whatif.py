"""What if (issue 38): tuning values, the what-if replay and the ``whatif`` command."""

from __future__ import annotations

import pytest

from narrative_debugger.models.domain.relationship import score_delta
from narrative_debugger.models.domain.tuning import DEFAULT_TUNING, NAMES, Tuning
from narrative_debugger.models.domain.types import RelationshipLevel


def test_default_tuning_is_the_seed_formula():
    # The relationship seed's worked examples.
    assert score_delta(0.4, 100, 1) == pytest.approx(0.55)
    assert score_delta(-0.3, 20, 1) == pytest.approx(0.04)
    assert score_delta(0.8, 800, 5) == pytest.approx(1.0)
    assert DEFAULT_TUNING.formula_is_default


def test_tuned_sentiment_weight_changes_the_delta():
    t = DEFAULT_TUNING.with_value("relationship.sentiment_weight", 0.25)
    # 0.4 * 0.25 + min(0.3, 100/500) + min(0.2, 1 * 0.05) + 0.1 = 0.1 + 0.2 + 0.05 + 0.1
    assert score_delta(0.4, 100, 1, t) == pytest.approx(0.45)
    assert not t.formula_is_default


def test_level_bounds_and_npc_values():
    t = DEFAULT_TUNING.with_value("levels.stranger", 10)
    assert t.level_for(15.0) is RelationshipLevel.ACQUAINTANCE
    assert DEFAULT_TUNING.level_for(15.0) is RelationshipLevel.STRANGER
    t = DEFAULT_TUNING.with_value("npc.kael.threshold", 3)
    assert t.threshold_of("kael", 40) == 3 and t.threshold_of("mira", 40) == 40


@pytest.mark.parametrize("name, value, words", [
    ("relationship.length_divisor", 0, "out of range"),
    ("relationship.base", "x", "expected a number"),
    ("levels.friend", 10, "must rise"),
    ("npc.kael.threshold", 1.5, "expected an integer"),
    ("npc.kael.walk_away_threshold", 300, "out of range"),
])
def test_bad_tuning_values_say_why(name, value, words):
    with pytest.raises(ValueError, match=words):
        DEFAULT_TUNING.with_value(name, value)


def test_unknown_tuning_name():
    with pytest.raises(KeyError):
        Tuning().with_value("relationship.nothing", 1)
    assert "relationship.sentiment_weight" in NAMES

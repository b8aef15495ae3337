"""The timeline index answers "state at tick T" exactly as a replay stopped at T would."""

from __future__ import annotations

import copy
import random
from pathlib import Path

import pytest

from models.knowledge import InteractionQueries
from models.playthrough import Playthrough
from models.replay import replay
from models.savefile import Journal

ROOT = Path(__file__).resolve().parent.parent
SAMPLES = ROOT / "sample_saves"
CONTENT = SAMPLES / "content"


@pytest.fixture(scope="module", params=["evening.json", "abandoned-confrontation.json", "walkaway-spiral.json"])
def play(request):
    return Playthrough.open(SAMPLES / request.param, CONTENT)


def truncated_replay(play: Playthrough, tick: int):
    save = copy.copy(play.save)
    j = play.save.journal
    n = play.index.position_for_tick(tick)
    save.journal = Journal(j.ticks[:n], j.kinds[:n], j.data[:n])
    return replay(save, play.content)


def test_state_at_tick_equals_replay_stopped_there(play):
    rng = random.Random(3)
    ticks = [0, play.first_tick, play.last_tick] + [rng.randint(0, play.last_tick) for _ in range(6)]
    for tick in ticks:
        state = play.state_at(tick)
        fresh = truncated_replay(play, tick)
        assert dict(state.knowledge.facts) == dict(fresh.knowledge.facts), tick
        assert state.knowledge.entities == dict(fresh.knowledge.entities)
        assert state.npcs == fresh.npcs
        assert state.knowledge.active_fact_id() == fresh.knowledge.active_fact_id()


def test_fast_queries_equal_the_prefix_range_queries(play):
    rng = random.Random(5)
    for tick in [rng.randint(0, play.last_tick) for _ in range(25)] + [play.last_tick]:
        knowledge = play.state_at(tick).knowledge
        for sid in play.save.npcs:
            for name in ("has_interacted_with", "interaction_count_with", "has_walked_away_from", "has_confronted", "last_interaction_with"):
                fast = getattr(knowledge, name)(sid)
                slow = getattr(InteractionQueries, name)(knowledge, sid)
                assert fast == slow, (tick, sid, name)


def test_position_for_tick_counts_entries_at_or_before(play):
    ticks = play.index.ticks
    t = ticks[len(ticks) // 2]
    n = play.index.position_for_tick(t)
    assert all(x <= t for x in ticks[:n]) and all(x > t for x in ticks[n:])


def test_npc_series_start_at_initial_state(play):
    for sid in play.save.npcs:
        ticks, scores, stress = play.index.npc_series(sid)
        assert scores[0] == 0.0 and stress[0] == 0
        assert ticks == sorted(ticks)
        assert scores[-1] == pytest.approx(play.save.npcs[sid].relationship.score, abs=1e-4)


def test_interaction_counts_by_state_agree(play):
    from models.types import InteractionState

    rng = random.Random(9)
    for tick in [rng.randint(0, play.last_tick) for _ in range(10)] + [play.last_tick]:
        knowledge = play.state_at(tick).knowledge
        for npc in play.save.npcs.values():
            for state in [None, *InteractionState]:
                assert knowledge.count_interactions(npc.slug, state) == InteractionQueries.count_interactions(knowledge, npc.slug, state)
    final = truncated_replay(play, play.last_tick).knowledge
    for npc in play.save.npcs.values():
        for state in [None, *InteractionState]:
            assert final.count_interactions(npc.slug, state) == InteractionQueries.count_interactions(final, npc.slug, state)

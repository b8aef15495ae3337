"""The timeline index answers "state at tick T" exactly as a replay stopped at T would."""

from __future__ import annotations

import copy
from bisect import bisect_right
import random
from pathlib import Path

import pytest
from narrative_debugger.models.domain.knowledge import InteractionQueries
from narrative_debugger.models.domain.types import InteractionState
from narrative_debugger.models.playthrough import Playthrough
from narrative_debugger.models.save.savefile import Journal
from narrative_debugger.models.timeline.index import INTERACTION_SERIES, NPC_MOVES
from narrative_debugger.models.timeline.replay import replay

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


def test_facts_items_are_the_mapping_s_own_pairs(play):
    """``FactsAtTick.items()`` iterates the versions directly: the same pairs, in key
    order, as looking each key up, and the rest of an items view still holds."""
    for tick in (0, play.last_tick // 2, play.last_tick):
        facts = play.state_at(tick).knowledge.facts
        pairs = list(facts.items())
        assert pairs == [(fact_id, facts[fact_id]) for fact_id in facts], tick
        assert [fact_id for fact_id, _ in pairs] == sorted(fact_id for fact_id, _ in pairs)
        assert len(facts.items()) == len(facts)
        assert all(pair in facts.items() for pair in pairs[:5])
        assert ("no.such.fact", None) not in facts.items()


def test_facts_as_dict_is_the_mapping_at_every_position(play):
    """``FactsAtTick.as_dict()`` holds the same pairs as the mapping, also at the end of
    the journal where it reads each fact's last version without a bisection."""
    from narrative_debugger.models.timeline.state_view import FactsAtTick

    index = play.index
    for position in (0, 1, len(index.ticks) // 3, len(index.ticks) - 1, len(index.ticks), len(index.ticks) + 5):
        facts = FactsAtTick(index, position)
        assert sorted(facts.as_dict().items()) == list(facts.items()), position


@pytest.mark.parametrize("name", ["evening.json", "qa-faults.json"])
def test_snapshot_differences_equal_the_fact_by_fact_walk(name):
    """The one-comparison path of ``differences`` lists what the fact-by-fact walk lists
    (qa-faults.json replays to another snapshot, evening.json to its own)."""
    from narrative_debugger.models.rules import snapshot_diff as sd

    play = Playthrough.open(SAMPLES / name, CONTENT)
    state = play.state_at(play.save.saved_at_tick)
    walked = list(sd._map_differences(play.save, play.save.knowledge.facts, state.knowledge.facts, sd.fact_fields, sd.FACTS, "facts", sd._fact_target))
    listed = [d for d in sd.differences(play.save, state) if d.group == "facts"]
    assert [(d.path, d.saved, d.replayed) for d in listed] == [(d.path, d.saved, d.replayed) for d in walked]
    assert bool(walked) == (name == "qa-faults.json")


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
    from narrative_debugger.models.domain.types import InteractionState

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


ALL_SAMPLES = sorted(SAMPLES.glob("*.json"))


@pytest.fixture(scope="module", params=[p.name for p in ALL_SAMPLES])
def any_play(request):
    return Playthrough.open(SAMPLES / request.param, CONTENT)


def _started_order(knowledge, slug):
    rows = list(knowledge.interaction_facts_for(slug))
    rows.sort(key=lambda r: (r[1].started_tick, len(r[0]), r[0]))
    return rows


def test_indexed_interaction_queries_equal_the_slow_forms(any_play):
    """interaction_ids, transition_counts, illegal_transitions and fact_transitions
    agree with interaction_facts_for and a fold of state.transitions(npc) at ~20 ticks."""
    from collections import Counter

    play = any_play
    rng = random.Random(11)
    ticks = [0, play.first_tick, play.last_tick] + [rng.randint(0, play.last_tick) for _ in range(18)]
    checked = 0
    for tick in ticks:
        state = play.state_at(tick)
        knowledge = state.knowledge
        for sid, npc in play.save.npcs.items():
            rows = _started_order(knowledge, npc.slug)
            assert state.interactions_exact(sid), (tick, sid)
            ids = state.interaction_ids(sid)
            assert ids == [fid for fid, _ in rows], (tick, sid)
            assert list(state.index.interaction_ids_newest_first(sid, state.position)) == ids[::-1]
            assert [state.index.interaction_ordinal(sid, fid) for fid in ids] == list(range(len(ids)))
            summary = knowledge.summary(sid)
            assert summary.count == len(rows)
            assert Counter({s: summary.in_state(s) for s in InteractionState if summary.in_state(s)}) == Counter(
                meta.interaction_state for _, meta in rows)
            moves = state.transitions(sid)
            assert state.transition_counts(sid) == dict(Counter((r.source, r.target) for r in moves if r.legal))
            assert state.illegal_transitions(sid) == [r for r in moves if not r.legal]
            assert state.index.transition_total(sid, state.position) == len(moves)
            for fid in {r.fact_id for r in moves} | set(ids[-3:]):
                assert state.fact_transitions(fid) == [r for r in state.transitions() if r.fact_id == fid]
            checked += len(ids)
    assert checked > 0


def test_faulty_interaction_orders_are_flagged(tmp_path):
    """A J001 tick drop between two starts, and a FactLearned over an interaction fact,
    make interactions_exact False from where the fast forms stop matching."""
    import json

    doc = json.loads((SAMPLES / "walkaway-spiral.json").read_text(encoding="utf-8"))
    sid = int(next(iter(doc["npcs"])))
    slug = doc["npcs"][str(sid)]["slug"]
    last = max(e["tick"] for e in doc["journal"])
    doc["journal"] += [
        {"tick": last + 10, "event": {"InteractionStarted": {"target": sid, "player_initiated": True, "location": "dock-ward"}}},
        {"tick": last + 11, "event": {"InteractionCompleted": {"target": sid, "topics": []}}},
        {"tick": last + 5, "event": {"InteractionStarted": {"target": sid, "player_initiated": True, "location": "dock-ward"}}},
        {"tick": last + 20, "event": {"InteractionCompleted": {"target": sid, "topics": []}}},
        {"tick": last + 30, "event": {"FactLearned": {"fact_id": f"interaction.{slug}_001", "confidence": "KnowsOf", "source": "Heard"}}},
    ]
    doc["saved_at_tick"] = last + 30
    path = tmp_path / "faulty.json"
    path.write_text(json.dumps(doc), encoding="utf-8")
    play = Playthrough.open(path, CONTENT)
    assert play.state_at(last + 10).interactions_exact(sid)
    drop = play.state_at(last + 11)  # the start at last + 5 applies under the running maximum tick
    rows = _started_order(drop.knowledge, slug)
    assert not drop.interactions_exact(sid)
    assert drop.interaction_ids(sid) != [fid for fid, _ in rows]
    assert sorted(drop.interaction_ids(sid)) == sorted(fid for fid, _ in rows)
    lost = play.state_at(last + 30)
    assert not lost.interactions_exact(sid)
    assert f"interaction.{slug}_001" not in dict(lost.knowledge.interaction_facts_for(slug))


def test_an_ordinary_fact_replacing_the_interaction_in_progress_ends_it_without_a_crash(tmp_path):
    """A FactLearned naming the interaction in progress (K002) used to crash the replay
    at the next DialogueLine (its metadata was gone). It now ends that interaction: the
    lines that follow belong to no conversation and the NPC's next outcome is I011."""
    from tests.conftest import k002_save

    path, doc, _start, line = k002_save(tmp_path)
    journal, fact_id = doc["journal"], doc["k002_fact"]

    play = Playthrough.open(path, CONTENT)
    codes = [f.code for f in play.findings]
    assert "K002" in codes and "I011" in codes
    after = [r for r in play.index.dialogue if r.index > line]
    assert after[0].conversation is None
    state = play.index.at(journal[line]["tick"])
    assert state.knowledge.facts[fact_id].metadata is None


def test_npc_for_slug_finds_the_first_npc_of_a_slug_and_none_for_others():
    from narrative_debugger.models.timeline.index import TimelineIndex

    index = TimelineIndex(slugs={9: "kael", 4: "mira", 7: "kael"})
    assert (index.npc_for_slug("kael"), index.npc_for_slug("mira"), index.npc_for_slug("nobody")) == (9, 4, None)
    index.slugs[12] = "sera"  # a slug added later is found too
    assert index.npc_for_slug("sera") == 12


def _eager_summaries(index):
    """The per-NPC aggregates as the replay used to keep them, change by change: the
    reference ``InteractionSeries`` must equal at every position."""
    from narrative_debugger.models.timeline.index import InteractionSummary

    out = {}
    for npc, log in index._interaction_log.items():
        s, rows = InteractionSummary(), []
        for position, fact_id in zip(index.interaction_changes[npc], log):
            # The change's values: the fact's version from ``position`` on, and the one before it.
            versions = index.facts[fact_id]
            k = bisect_right(versions.positions, position) - 1
            meta = versions.values[k].interaction
            before = versions.values[k - 1].interaction if k > 0 else None
            by_state = list(s.by_state)
            if before is not None:
                by_state[before.interaction_state.slot] -= 1
            by_state[meta.interaction_state.slot] += 1
            ended_now = not meta.interaction_state.in_progress and (before is None or before.interaction_state.in_progress)
            s = InteractionSummary(
                count=s.count + (before is None),
                walked_away=s.walked_away + meta.interaction_state.is_walk_away - (before is not None and before.interaction_state.is_walk_away),
                confronted=s.confronted + meta.confrontation - (before is not None and before.confrontation),
                last=fact_id if before is None else s.last,
                last_ended=fact_id if ended_now else s.last_ended,
                by_state=tuple(by_state),
            )
            if rows and rows[-1][0] == position:
                rows[-1] = (position, s)
            else:
                rows.append((position, s))
        out[npc] = rows
    return out


def _faulty_generated(tmp_path):
    from tests.support.savegen.generator import generate_save, inject_faults, write_save

    doc = generate_save(seed=5, events=4000)
    inject_faults(doc)
    # An ordinary fact over an interaction, and one made ahead of its NPC's sequence
    # (the FactId the next InteractionStarted then makes again).
    journal = doc["journal"]
    started = next(k for k, e in enumerate(journal) if "InteractionStarted" in e["event"])
    slug = doc["npcs"][str(journal[started]["event"]["InteractionStarted"]["target"])]["slug"]
    journal.insert(started, {"tick": journal[started]["tick"], "event": {"FactLearned": {"fact_id": f"interaction.{slug}_002", "confidence": "KnowsOf", "source": "Heard"}}})
    path = tmp_path / "faulty.json"
    write_save(doc, path)
    return Playthrough.open(path, CONTENT)


@pytest.mark.parametrize("name", [p.name for p in ALL_SAMPLES] + ["faulty generated"])
def test_interaction_series_and_move_tables_equal_the_per_change_fold(name, tmp_path):
    """``summary``/``series_of`` and ``moves_of`` are made on first use from the replay's
    log (issue 10: 0.6 s of a 1 000 000-event replay); at every position they hold
    what the per-change fold held, and the moves by kind, by fact and the illegal ones
    are those of the NPC's moves in journal order."""
    from collections import Counter

    play = _faulty_generated(tmp_path) if name == "faulty generated" else Playthrough.open(SAMPLES / name, CONTENT)
    index = play.index
    eager = _eager_summaries(index)
    assert eager and any(len(rows) > 3 for rows in eager.values())
    for npc, rows in eager.items():
        series = index.series_of(npc)
        assert series.positions == [p for p, _ in rows]
        for k, (position, expected) in enumerate(rows):
            assert index.summary(npc, position) == expected, (npc, position)
            if k + 1 < len(rows) and rows[k + 1][0] > position + 1:
                assert index.summary(npc, rows[k + 1][0] - 1) == expected
        assert index.summary(npc, rows[0][0] - 1).count == 0
        for state in [None, *InteractionState]:
            assert series.in_state(state) == [s.in_state(state) for _, s in rows]
    assert index.summary(-12345, 10**9).count == 0
    for npc in play.save.npcs:
        moves = index.transitions_by_npc.get(npc, [])
        for position in (0, len(index.ticks) // 2, len(index.ticks) + 1):
            done = [r for r in moves if r.index < position]
            counts = index.transition_counts(npc, position)
            assert counts == dict(Counter((r.source, r.target) for r in done if r.legal))
            assert index.illegal_transitions(npc, position) == [r for r in done if not r.legal]
    for fact_id in {r.fact_id for r in index.transitions}:
        assert index.moves_of_fact(fact_id) == [r for r in index.transitions if r.fact_id == fact_id]
    if name == "faulty generated":
        assert any(not r.legal for r in index.transitions)


def test_prepare_npc_tables_makes_those_of_long_histories_first():
    """Before the first paint the loader makes the tables of NPCs whose on-step making
    would cost most; the rest follow once the save is shown (issue 10)."""
    play = Playthrough.open(SAMPLES / "evening.json", CONTENT)
    index = play.index
    sizes = {sid: len(index.interaction_changes.get(sid, ())) for sid in play.save.npcs}
    cut = sorted(sizes.values())[len(sizes) // 2] + 1
    index.prepare_npc_tables(min_changes=cut)
    made = {sid for sid in sizes if INTERACTION_SERIES.get(index, sid) is not None}
    assert made == {sid for sid, n in sizes.items() if n >= cut} and made != set(sizes)
    index.prepare_npc_tables()
    assert all(INTERACTION_SERIES.get(index, sid) is not None and NPC_MOVES.get(index, sid) is not None for sid in sizes)


def test_interaction_series_reads_python_ints_from_its_columns(evening_playthrough):
    """The series keeps its running sums as int64 columns; what it hands out are Python
    ints (the state JSON and the explanations print them), equal to the loop's counts."""
    index = evening_playthrough.index
    seen = 0
    for npc in evening_playthrough.save.npcs:
        series = index.series_of(npc)
        counts = series.in_state(None)
        assert type(counts) is list and all(type(c) is int for c in counts)
        for k, position in enumerate(series.positions):
            summary = series.at(position)
            assert all(type(v) is int for v in (summary.count, summary.walked_away, summary.confronted, *summary.by_state))
            assert summary.count == counts[k] and summary.in_state(InteractionState.Active) == series.in_state(InteractionState.Active)[k]
            seen += 1
    assert seen > 0


def test_dialogue_by_npc_is_an_array_of_each_conversation_lines(evening_playthrough):
    """Each NPC's prompt history is an 8-byte array of positions in ``dialogue`` (no Python
    int per line), the lines whose conversation is that NPC, in order."""
    index = evening_playthrough.index
    assert index.dialogue_by_npc
    for npc, positions in index.dialogue_by_npc.items():
        assert positions.itemsize == 8
        assert list(positions) == [k for k, record in enumerate(index.dialogue) if record.conversation == npc]
        assert index.dialogue_with(npc, index.last_tick) == [index.dialogue[k] for k in positions]
        assert index.dialogue_count_with(npc, index.last_tick) == len(positions)

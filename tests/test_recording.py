"""What a replay records (``models.timeline.index.Recording``, issue 37): ``check`` and
``state`` replay recording only what they read, and must answer exactly as a replay
that records everything does: the same findings, the same state at every tick asked."""

from __future__ import annotations

import copy
import json
from pathlib import Path

import pytest
from narrative_debugger.models.playthrough import Playthrough
from narrative_debugger.models.timeline.index import CHECKS, EVERYTHING, STATES
from narrative_debugger.models.timeline.replay import replay
from narrative_debugger.models.timeline.state_json import state_json

from tests.conftest import CONTENT, SAMPLES
from tests.test_check_codes import BASE, CONTENT_FILES, MUTATIONS
from tests.support.files import write_files


def _ticks(play: Playthrough) -> list[int]:
    """Ticks worth comparing a state at: the start, the first and last entries, the middle,
    ``saved_at_tick`` and each tick where the journal's ticks step back (J001)."""
    ticks = play.index.ticks
    journal = play.save.journal.ticks
    wanted = {0, play.first_tick, play.last_tick, play.save.saved_at_tick, (play.first_tick + play.last_tick) // 2}
    wanted.update(t for t in journal if t is not None and t <= play.last_tick)
    if len(wanted) > 40:  # a long journal: an even spread of its ticks
        wanted = {0, play.save.saved_at_tick, *ticks[:: max(1, len(ticks) // 30)], play.last_tick}
    return sorted(t for t in wanted if t <= play.last_tick)


def assert_same_answers(path: Path, content: Path) -> None:
    """``check``'s findings and ``state``'s documents of ``path`` are the ones a replay
    that records everything gives."""
    whole = Playthrough.open(path, content)
    checked = Playthrough.open(path, content, recording=CHECKS)
    stated = Playthrough.open(path, content, recording=STATES)
    assert checked.readable == whole.readable == stated.readable
    assert checked.findings == whole.findings
    assert stated.findings == whole.findings
    if not whole.readable:
        return
    for tick in _ticks(whole):
        assert state_json(stated, tick) == state_json(whole, tick), tick


@pytest.mark.parametrize("name", ["evening.json", "qa-faults.json", "walkaway-spiral.json", "abandoned-confrontation.json"])
def test_the_samples_check_and_state_alike_whatever_is_recorded(name):
    assert_same_answers(SAMPLES / name, CONTENT)


@pytest.fixture(scope="module")
def content_dir(tmp_path_factory) -> Path:
    return write_files(tmp_path_factory.mktemp("content"), CONTENT_FILES)


@pytest.mark.parametrize("code", sorted(MUTATIONS))
def test_each_faulty_save_checks_and_states_alike_whatever_is_recorded(tmp_path, content_dir, code):
    """Every finding code's save (``test_check_codes``): ticks behind (J001), entries past
    ``saved_at_tick`` (J002), a fact learned over an interaction (K002), unknown targets…"""
    doc = copy.deepcopy(BASE)
    MUTATIONS[code](doc)
    path = tmp_path / "save.json"
    path.write_text(json.dumps(doc))
    assert_same_answers(path, content_dir)


def test_a_fact_learned_over_an_interaction_in_progress_states_alike(tmp_path, content_dir):
    """An interaction's fact replaced by an ordinary one while in progress, then one more
    conversation: the NPC's interaction tables then lose it (``interactions_exact``)."""
    doc = copy.deepcopy(BASE)
    doc["journal"] += [
        {"tick": 165, "event": {"InteractionStarted": {"target": 17, "player_initiated": True, "location": "dock-ward"}}},
        {"tick": 166, "event": {"FactLearned": {"fact_id": "interaction.kael-davan_002", "confidence": "KnowsOf", "source": "Heard"}}},
        {"tick": 167, "event": {"InteractionStarted": {"target": 17, "player_initiated": False, "location": "dock-ward"}}},
        {"tick": 168, "event": {"InteractionCompleted": {"target": 17, "topics": ["cargo"]}}},
    ]
    path = tmp_path / "save.json"
    path.write_text(json.dumps(doc))
    assert_same_answers(path, content_dir)


def test_only_everything_records_the_timeline():
    """The dialogue lines, the moves and the fact changes are a timeline's: recorded by
    ``EVERYTHING`` only; ``STATES`` keeps each NPC's interactions, ``CHECKS`` not."""
    path = SAMPLES / "evening.json"
    whole, stated, checked = (Playthrough.open(path, CONTENT, recording=r) for r in (EVERYTHING, STATES, CHECKS))
    assert len(whole.index.dialogue) > 0 and whole.index.transitions and whole.index.monologues_fired
    for play in (stated, checked):
        assert len(play.index.dialogue) == 0 and not play.index.transitions
        assert not play.index.monologues_fired and not play.index.change_positions
    npc = next(iter(whole.save.npcs))
    assert stated.index.interaction_ids(npc, len(whole.index.ticks)) == whole.index.interaction_ids(npc, len(whole.index.ticks))
    assert checked.index.interaction_ids(npc, len(whole.index.ticks)) == []


def test_a_what_if_replay_records_everything():
    """A what-if continues a recorded timeline: a smaller recording is refused, not half done."""
    play = Playthrough.open(SAMPLES / "evening.json", CONTENT)
    with pytest.raises(ValueError, match="records everything"):
        replay(play.save, play.content, dialogue_of=play.index, recording=CHECKS)

"""Issue 38: a what-if's replay resumes at the recorded run's nearest checkpoint before
the first changed entry, and gives what a replay from the first entry gives.

Each case runs the same what-if twice: once with checkpoints every few entries (the
replay of B resumes at one), once with none (B is replayed from the start). The
``whatif --format json`` documents must be equal, and so must B's whole timeline index
and findings: the index holds every version of every value the views and checks read.
"""

from __future__ import annotations

import dataclasses
import json
from itertools import product
from array import array
from pathlib import Path

import pytest

from narrative_debugger.models.columns import transfer
from narrative_debugger.models.playthrough import Playthrough
from narrative_debugger.models.timeline import replay as replay_module
from narrative_debugger.models.timeline.index import Versions
from narrative_debugger.models.whatif import run as whatif_run
from narrative_debugger.models.whatif.run import resume_point, what_if
from tests.support.savegen.generator import generate_save, inject_faults, write_save

ROOT = Path(__file__).resolve().parent.parent
SAMPLES = ROOT / "sample_saves"
CONTENT = SAMPLES / "content"


def _plain(value):
    """A value of an index field as plain lists and tuples (``Versions`` has no equality)."""
    if isinstance(value, Versions):
        return ("versions", list(value.positions), list(value.values))
    if isinstance(value, dict):
        return {key: _plain(item) for key, item in value.items()}
    if isinstance(value, array):
        return list(value)
    if isinstance(value, (list, tuple)):
        return [_plain(item) for item in value]
    return value


def assert_same_index(got, want) -> None:
    for f in dataclasses.fields(want):
        if f.name == "memos":
            continue
        g, w = getattr(got, f.name), getattr(want, f.name)
        if f.name == "dialogue":
            assert list(g) == list(w)
            continue
        if f.name in ("fact_keys", "entity_keys"):
            g, w = list(g), list(w)
        assert _plain(g) == _plain(w), f.name
    # Dict order too: the replay's iteration orders (facts in creation order) are the same.
    assert list(got.facts) == list(want.facts)
    assert list(got.entities) == list(want.entities)


def _save(tmp_path: Path, name: str, *, seed: int, events: int, scenario: str = "evening", faults: bool = False) -> Path:
    doc = generate_save(seed=seed, events=events, scenario=scenario, content_dir=CONTENT)
    if faults:
        inject_faults(doc, CONTENT)
    path = tmp_path / name
    write_save(doc, path)
    return path


@pytest.fixture(scope="module")
def saves(tmp_path_factory) -> list[Path]:
    folder = tmp_path_factory.mktemp("checkpoint-saves")
    out = [SAMPLES / name for name in ("evening.json", "walkaway-spiral.json", "abandoned-confrontation.json", "qa-faults.json")]
    out.append(_save(folder, "faults.json", seed=5, events=2_500, faults=True))
    out.append(_save(folder, "spiral.json", seed=6, events=2_500, scenario="walkaway-spiral"))
    out.append(_overlapping(folder / "overlap.json"))
    return out


def _overlapping(path: Path) -> Path:
    """The evening sample, ending in a conversation with Lera (9): one with Kael (17)
    then starts and ends inside it (I005), and 60 lines follow. The graph's interaction
    in progress is then none (Kael's ended, and it was the last set), while the index's
    is Lera's: a graph rebuilt from the index alone would say Lera's."""
    doc = json.loads((SAMPLES / "evening.json").read_text(encoding="utf-8"))
    tick = doc["journal"][-1]["tick"]
    doc["journal"] += [{"tick": tick + 1, "event": {"InteractionStarted": {"target": 17, "player_initiated": True, "location": "dock-ward"}}},
                       {"tick": tick + 2, "event": {"InteractionCompleted": {"target": 17, "topics": ["cargo"]}}}]
    doc["journal"] += [{"tick": tick + 3 + k, "event": {"DialogueLine": {"speaker": 1, "text": f"Line {k}."}}} for k in range(60)]
    path.write_text(json.dumps(doc), encoding="utf-8")
    return path


def _open(path: Path, spacing: int, monkeypatch) -> Playthrough:
    monkeypatch.setattr(replay_module, "CHECKPOINT_SPACING", spacing)
    monkeypatch.setattr(replay_module, "CHECKPOINTS_MAX", 10_000)
    return Playthrough.open(path, CONTENT, defer_checks=True)


def _edits(play: Playthrough) -> list[list[dict]]:
    """Edits spread over the journal: sentiments, a stress delta, a dialogue text, a
    walk-away turned into a completion, and no edit at all."""
    kinds = play.save.journal.kinds
    n = len(kinds)
    out: list[list[dict]] = [[]]
    for kind, field, value in (("RelationshipInteraction", "sentiment", -0.9), ("StressChanged", "delta", 9),
                               ("DialogueLine", "text", "Something else entirely.")):
        at = [i for i, k in enumerate(kinds) if k == kind]
        for i in (at[len(at) // 4], at[len(at) // 2], at[-1]) if at else ():
            out.append([{"op": "replace", "path": f"/journal/{i}/event/{kind}/{field}", "value": value}])
    walks = [i for i, k in enumerate(kinds) if k == "InteractionWalkedAway"]
    if walks:
        i = walks[len(walks) // 2]
        out.append([{"op": "replace", "path": f"/journal/{i}/tick", "value": play.save.journal.ticks[i]}])
    assert n
    return out


def test_a_resumed_what_if_equals_one_replayed_from_the_start(saves, monkeypatch):
    resumed = []  # the positions B's replays resumed at: the cases must take that path
    real = replay_module._Replayer.resume
    monkeypatch.setattr(replay_module._Replayer, "resume", lambda self, point: (resumed.append(point.checkpoint.position), real(self, point))[1])
    resumed_somewhere = 0
    for path in saves:
        whole = _open(path, 10 ** 12, monkeypatch)
        assert whole.checkpoints == ()
        stepped = _open(path, 40, monkeypatch)
        assert len(stepped.checkpoints) >= 3, path.name
        for ops in _edits(whole):
            with monkeypatch.context() as m:  # the reference: every entry applied, from the first
                m.setattr(whatif_run, "_dialogue_as_recorded", lambda *args: False)
                want = what_if(path, CONTENT, ops, recorded=whole)
            before = len(resumed)
            got = what_if(path, CONTENT, ops, recorded=stepped)
            from_start = what_if(path, CONTENT, ops, recorded=whole)  # the lines taken from A where they may be
            assert json.dumps(from_start.to_json(), sort_keys=True) == json.dumps(want.to_json(), sort_keys=True), (path.name, ops)
            assert_same_index(from_start.comparison.b.index, want.comparison.b.index)
            resumed_somewhere += len(resumed) > before
            assert got.comparison.b.index is not None
            assert json.dumps(got.to_json(), sort_keys=True) == json.dumps(want.to_json(), sort_keys=True), (path.name, ops)
            assert_same_index(got.comparison.b.index, want.comparison.b.index)
            assert got.comparison.b.findings == want.comparison.b.findings, (path.name, ops)
    # Every save's edits after its first checkpoint resumed (the empty patch too: at the last one).
    assert resumed_somewhere >= 8 * len(saves), resumed_somewhere
    assert len(set(resumed)) >= 3 * len(saves)


def test_the_resume_point_is_the_last_checkpoint_before_the_edit(saves, monkeypatch):
    play = _open(saves[-1], 40, monkeypatch)
    positions = [c.position for c in play.checkpoints]
    assert positions == sorted(positions) and positions[0] >= 40
    middle = positions[len(positions) // 2]
    point = resume_point(play, play.save, middle + 3, play.tuning)
    assert point is not None and point.checkpoint.position == max(p for p in positions if p <= middle + 3)
    assert resume_point(play, play.save, positions[0] - 1, play.tuning) is None  # before the first: from the start
    # A tuned rule acts from tick 0: no checkpoint of the recorded run holds.
    tuned = play.tuning.with_value("relationship.sentiment_weight", 0.25)
    assert resume_point(play, play.save, middle, tuned) is None
    assert resume_point(play, play.save, middle, play.tuning.with_value("npc.kael-davan.threshold", 3)) is None
    # The prompt's values do not act on the replay.
    assert resume_point(play, play.save, middle, play.tuning.with_value("prompt.budget", 900)) is not None


def test_a_recorded_run_read_from_columns_resumes_the_same(saves, monkeypatch, tmp_path):
    """The window's case: the what-if's child reads A from the open's columns file."""
    path = saves[-2]  # generated with planted faults
    whole = _open(path, 10 ** 12, monkeypatch)
    stepped = _open(path, 40, monkeypatch)
    for plain in (False, True):  # mapped columns as the window reads them; plain as the what-if's child does
        target = tmp_path / f"a-{plain}.columns"
        transfer.write(target, stepped)
        read = transfer.read(target, plain=plain)
        assert len(read.checkpoints) == len(stepped.checkpoints)
        for ops in _edits(whole)[1:4]:
            want = what_if(path, CONTENT, ops, recorded=whole)
            got = what_if(path, CONTENT, ops, recorded=read)
            assert json.dumps(got.to_json(), sort_keys=True) == json.dumps(want.to_json(), sort_keys=True), (plain, ops)
            assert_same_index(got.comparison.b.index, want.comparison.b.index)


def test_a_replay_resumed_at_any_checkpoint_ends_as_the_whole_replay(saves, monkeypatch):
    """The live state a replay ends with (graph, NPCs, confrontations seen, the
    interaction in progress) and its findings, from every checkpoint of each save."""
    from narrative_debugger.models.rules.findings import FindingSink
    from narrative_debugger.models.timeline.replay import Resume, replay

    monkeypatch.setattr(replay_module, "CHECKPOINT_SPACING", 25)
    monkeypatch.setattr(replay_module, "CHECKPOINTS_MAX", 10_000)
    for path in saves:
        play = Playthrough.open(path, CONTENT, defer_checks=True)
        sink = FindingSink()
        whole = replay(play.save, play.content, sink, checkpoints=True)
        assert whole.checkpoints
        for point, (lines, knowledge) in product((*whole.checkpoints[:: max(1, len(whole.checkpoints) // 12)], whole.checkpoints[-1]), _line_modes(sink)):
            again = FindingSink()
            got = replay(play.save, play.content, again, resume=Resume(point, whole.index, tuple(sink.items)), dialogue_of=whole.index if lines else None,
                         knowledge_of=whole.index if knowledge else None)
            assert_same_index(got.index, whole.index)
            assert got.knowledge.facts == whole.knowledge.facts and list(got.knowledge.facts) == list(whole.knowledge.facts)
            assert got.knowledge.entities == whole.knowledge.entities
            assert got.knowledge.active_fact_id() == whole.knowledge.active_fact_id(), (path.name, point.position)
            assert got.npcs == whole.npcs and got.confrontation_seen == whole.confrontation_seen
            assert again.close() == sink.close(), (path.name, point.position)


def _line_modes(sink) -> tuple[tuple[bool, bool], ...]:
    """How a resumed replay may run, as (lines taken, knowledge taken): applying every
    entry, and, where the whole replay found no tick or speaker fault (what ``whatif``
    asks before it lets B take A's lines), taking the dialogue lines and ticks from the
    recorded index, and its knowledge too (the journal is the recorded one)."""
    clean = not any(f.code in ("J001", "J002", "J004") for f in sink.items)
    return ((False, False), (True, False), (True, True)) if clean else ((False, False),)


def _resumed_equals_whole(play: Playthrough, every: int) -> int:
    """Replay ``play``'s save with a checkpoint every ``every`` entries, then resume at
    each and compare with the whole replay: index, live state and findings. Returns how
    many checkpoints it had (it tries about ten of them, the last two among them)."""
    from narrative_debugger.models.rules.findings import FindingSink
    from narrative_debugger.models.timeline.replay import Resume, replay

    with pytest.MonkeyPatch.context() as m:
        m.setattr(replay_module, "CHECKPOINT_SPACING", every)
        m.setattr(replay_module, "CHECKPOINTS_MAX", 10_000)
        sink = FindingSink()
        whole = replay(play.save, play.content, sink, checkpoints=True)
    points = whole.checkpoints
    for point, (lines, knowledge) in product((*points[:: max(1, len(points) // 8)], *points[-2:]), _line_modes(sink)):
        again = FindingSink()
        got = replay(play.save, play.content, again, resume=Resume(point, whole.index, tuple(sink.items)), dialogue_of=whole.index if lines else None,
                     knowledge_of=whole.index if knowledge else None)
        assert_same_index(got.index, whole.index)
        assert got.knowledge.facts == whole.knowledge.facts and got.knowledge.active_fact_id() == whole.knowledge.active_fact_id()
        assert got.npcs == whole.npcs and got.confrontation_seen == whole.confrontation_seen
        assert again.close() == sink.close(), point.position
    for lines, knowledge in _line_modes(sink)[1:]:  # from the first entry, the lines and ticks (and knowledge) taken from the whole replay
        again = FindingSink()
        got = replay(play.save, play.content, again, dialogue_of=whole.index, knowledge_of=whole.index if knowledge else None)
        assert_same_index(got.index, whole.index)
        assert got.knowledge.facts == whole.knowledge.facts and got.knowledge.active_fact_id() == whole.knowledge.active_fact_id()
        assert got.npcs == whole.npcs and again.close() == sink.close()
    return len(whole.checkpoints)


from hypothesis import HealthCheck, given, settings  # noqa: E402

from tests.test_fuzz import ALL_SAVES, _lay_out, cases  # noqa: E402


@settings(max_examples=25, derandomize=True, deadline=None, database=None, suppress_health_check=list(HealthCheck))
@given(case=cases(ALL_SAVES))
def test_a_resumed_replay_of_a_mutated_save_equals_the_whole_replay(tmp_path_factory, case):
    """The fuzzer's hostile saves (values out of range, keys renamed, entries dropped,
    duplicated or reordered, ticks that go back, unknown speakers and targets): a
    replay resumed at any checkpoint ends as the replay from the start does."""
    folder = tmp_path_factory.mktemp("resumed")
    save, content = _lay_out(case, folder)
    try:
        play = Playthrough.open(save, content, defer_checks=True)
    except OSError:
        return
    if not play.readable:
        return
    _resumed_equals_whole(play, 7)

"""Comparing playthroughs (issue 13): the models and the ``diff`` command.

Expected values are worked out independently of the comparison: from the generated
documents themselves, or by brute force over every tick of the journal.
"""

from __future__ import annotations

import json
import shutil

import pytest
from narrative_debugger.app.cli.main import main
from narrative_debugger.models.compare.comparison import compare
from narrative_debugger.models.content.monologue import evaluate
from narrative_debugger.models.playthrough import Playthrough
from narrative_debugger.models.prompt.builder import PromptBuilder

from tests.conftest import CONTENT, SAMPLES
from tests.support.savegen.generator import generate_fork, write_save

JSON_KEYS = {"a", "b", "divergence", "npcs", "facts", "interactions", "monologues", "findings", "prompts"}


@pytest.fixture(scope="module")
def fork(tmp_path_factory):
    """Two 1 600-entry evenings of seed 5 that fork half way (seed 99 after the fork)."""
    doc_a, doc_b, at = generate_fork(seed=5, events=1600, fork_at=800, fork_seed=99)
    folder = tmp_path_factory.mktemp("fork")
    write_save(doc_a, folder / "a.json")
    write_save(doc_b, folder / "b.json")
    play_a, play_b = Playthrough.open(folder / "a.json", CONTENT), Playthrough.open(folder / "b.json", CONTENT)
    return doc_a, doc_b, at, play_a, play_b


@pytest.fixture()
def changed_content(tmp_path):
    """A copy of the sample content with one monologue line's prerequisite changed:
    harbor-nights_m_s_020 needs 9 completed conversations with Sera instead of 2."""
    folder = tmp_path / "content"
    shutil.copytree(CONTENT, folder)
    pool = folder / "monologues" / "harbor-nights.yaml"
    text = pool.read_text(encoding="utf-8")
    assert text.count("min_count: 2") >= 1
    pool.write_text(text.replace("min_count: 2", "min_count: 9", 1), encoding="utf-8")
    return folder


def run_diff(capsys, *args) -> tuple[int, str]:
    status = main(["diff", *map(str, args)])
    return status, capsys.readouterr().out


def distinct_ticks(play: Playthrough) -> list[int]:
    return sorted(set(play.index.ticks))


# ----- a fork half way -----
def test_generated_fork_shares_exactly_the_entries_before_the_fork(fork):
    doc_a, doc_b, at, _, _ = fork
    assert 800 <= at < 900
    assert doc_a["journal"][:at] == doc_b["journal"][:at]
    assert doc_a["journal"][at] != doc_b["journal"][at]
    assert len(doc_a["journal"]) == len(doc_b["journal"]) == 1600


def test_fork_divergence_is_found_exactly(fork):
    doc_a, doc_b, at, play_a, play_b = fork
    c = compare(play_a, play_b)
    d = c.divergence
    assert (d.a_index, d.b_index) == (at, at)
    assert (d.a_tick, d.b_tick) == (doc_a["journal"][at]["tick"], doc_b["journal"][at]["tick"])
    assert d.a_event == doc_a["journal"][at]
    assert d.b_event == doc_b["journal"][at]
    assert not c.equal


def test_fork_score_curves_part_where_brute_force_says(fork):
    """Every tick of either journal, read through state_at: the first where scores differ."""
    _, _, _, play_a, play_b = fork
    c = compare(play_a, play_b)
    ticks = sorted(set(play_a.index.ticks) | set(play_b.index.ticks))
    parted = 0
    for slug, npc in c.npcs.items():
        sid_a, sid_b = play_a.save.npc_by_slug(slug).stable_id, play_b.save.npc_by_slug(slug).stable_id
        expected = next(
            (t for t in ticks if abs(play_a.state_at(t).npc(sid_a).relationship.score - play_b.state_at(t).npc(sid_b).relationship.score) > 1e-4),
            None,
        )
        assert npc.score_first_differs_tick == expected, slug
        parted += expected is not None
        end_a = play_a.state_at(play_a.last_tick).npc(sid_a)
        assert npc.a.score == end_a.relationship.score and npc.a.walk_aways == end_a.walk_aways
        assert npc.a.level is end_a.level and npc.a.stress == end_a.tolerance.current_stress
    assert parted >= 3  # half an evening apart: most NPCs' regard parts
    assert all(n.score_first_differs_tick >= c.divergence.tick for n in c.npcs.values() if n.score_first_differs_tick is not None)


def test_fork_facts_and_interactions_match_the_final_states(fork):
    _, _, _, play_a, play_b = fork
    c = compare(play_a, play_b)
    facts_a = dict(play_a.state_at(play_a.last_tick).knowledge.facts.items())
    facts_b = dict(play_b.state_at(play_b.last_tick).knowledge.facts.items())
    plain = lambda facts: {f for f in facts if not f.startswith("interaction.")}  # noqa: E731
    assert {f for f, _ in c.facts.only_a} == plain(facts_a) - plain(facts_b)
    assert {f for f, _ in c.facts.only_b} == plain(facts_b) - plain(facts_a)
    changed = {f for f in plain(facts_a) & plain(facts_b) if (facts_a[f].confidence, facts_a[f].state) != (facts_b[f].confidence, facts_b[f].state)}
    assert {ch.fact_id for ch in c.facts.changed} == changed
    inter = set(f for f in facts_a | facts_b if f.startswith("interaction."))
    differing = {
        f for f in inter
        if f not in facts_a or f not in facts_b or facts_a[f].interaction.interaction_state != facts_b[f].interaction.interaction_state
    }
    assert {(ch.a or ch.b).fact_id for ch in c.interactions} == differing
    assert differing  # a different half evening ends conversations differently


def test_fork_compared_before_the_fork_is_equal(fork, capsys):
    _, _, at, play_a, _ = fork
    before = play_a.index.ticks[at - 1]
    path_a, path_b = play_a.save.path, play_a.save.path.with_name("b.json")
    status, out = run_diff(capsys, path_a, path_b, "--tick", before, "--format", "json")
    doc = json.loads(out)
    assert doc["divergence"] is None and all(n["score_first_differs_tick"] is None for n in doc["npcs"].values())
    assert status == 0
    status, out = run_diff(capsys, path_a, path_b, "--format", "json")
    assert status == 1 and json.loads(out)["divergence"]["a_index"] == at


# ----- a save compared with itself -----
def test_save_compared_with_itself_exits_0_with_no_differences(capsys):
    save = SAMPLES / "evening.json"
    status, out = run_diff(capsys, save, save, "--format", "json")
    assert status == 0
    doc = json.loads(out)
    assert set(doc) == JSON_KEYS
    assert doc["a"] == doc["b"] and set(doc["a"]) == {"path", "sha256", "content"}
    assert doc["divergence"] is None
    assert doc["facts"] == {"only_a": [], "only_b": [], "changed": []}
    assert doc["interactions"] == {"changed": []}
    assert doc["monologues"] == {"only_a": [], "only_b": [], "eligibility_changed": []}
    assert doc["findings"] == {"only_a": [], "only_b": []}
    for slug, npc in doc["npcs"].items():
        assert npc["a"] == npc["b"] and npc["score_first_differs_tick"] is None
        p = doc["prompts"][slug]
        assert p["sections_changed"] == [] and p["tokens_a"] == p["tokens_b"] > 0
        assert p["cards_only_a"] == p["cards_only_b"] == []
    status, out = run_diff(capsys, save, "--content-b", CONTENT)
    assert status == 0 and "agree on everything compared" in out


# ----- one save under two content folders -----
def test_one_line_content_change_changes_exactly_that_line(capsys, changed_content, evening_playthrough):
    status, out = run_diff(capsys, SAMPLES / "evening.json", "--content-b", changed_content, "--format", "json")
    assert status == 1
    doc = json.loads(out)
    assert doc["divergence"] is None
    assert doc["facts"] == {"only_a": [], "only_b": [], "changed": []} and doc["interactions"] == {"changed": []}
    assert all(n["a"] == n["b"] for n in doc["npcs"].values())
    # Monologues: exactly the changed line, over exactly the ticks brute force finds.
    assert [e["line_id"] for e in doc["monologues"]["eligibility_changed"]] == ["harbor-nights_m_s_020"]
    play_a = evening_playthrough
    play_b = Playthrough.open(SAMPLES / "evening.json", changed_content)
    line_a, line_b = play_a.content.monologues["harbor-nights_m_s_020"], play_b.content.monologues["harbor-nights_m_s_020"]
    spans, open_at = [], None
    for t in distinct_ticks(play_a):
        k = play_a.state_at(t).knowledge
        differ = evaluate(line_a, k).eligible != evaluate(line_b, k).eligible
        if differ and open_at is None:
            open_at = t
        elif not differ and open_at is not None:
            spans.append([open_at, t])
            open_at = None
    if open_at is not None:
        spans.append([open_at, None])
    assert spans and doc["monologues"]["eligibility_changed"][0]["ticks"] == spans
    assert doc["monologues"]["only_a"] == doc["monologues"]["only_b"] == []
    # Findings: an M001 in B for each time the line fired while the new rule failed.
    fired = [t for _, t, line in play_a.index.monologues_fired if line == "harbor-nights_m_s_020"]
    failing = [t for t in fired if not evaluate(line_b, play_a.state_at(t).knowledge).eligible]
    assert doc["findings"]["only_a"] == []
    assert [(f["code"], f["tick"]) for f in doc["findings"]["only_b"]] == [("M001", t) for t in failing]
    assert failing
    # Prompts: monologues are not part of any prompt.
    assert all(p["sections_changed"] == [] and p["tokens_a"] == p["tokens_b"] for p in doc["prompts"].values())


def test_one_line_lore_change_changes_the_prompts_that_match_it(tmp_path, evening_playthrough):
    """Dropping the dock-ward card's keys: prompts that included it lose it, and nothing else changes."""
    folder = tmp_path / "content"
    shutil.copytree(CONTENT, folder)
    lore = folder / "lore" / "harbor.yaml"
    lore.write_text(lore.read_text(encoding="utf-8").replace('keys: "dock, pier, wharf, crates"', 'keys: ""', 1), encoding="utf-8")
    play_b = Playthrough.open(SAMPLES / "evening.json", folder)
    c = compare(evening_playthrough, play_b)
    builder = PromptBuilder(evening_playthrough)
    had = {slug for slug in c.prompts if any(card.id == "dock-ward" and card.included for card in builder.build(slug, c.tick_a).cards)}
    assert had
    changed = {slug for slug, p in c.prompts.items() if p.differs}
    assert changed == had
    for slug in changed:
        assert c.prompts[slug].cards_only_a == ("dock-ward",) and c.prompts[slug].cards_only_b == ()
        assert c.prompts[slug].sections_changed == ("world_lore",)
        assert c.prompts[slug].tokens_a > c.prompts[slug].tokens_b
    assert c.monologues.empty and c.facts.empty and not c.interactions and c.divergence is None


# ----- the sample saves -----
def test_walkaway_spiral_against_evening(capsys):
    status, out = run_diff(capsys, SAMPLES / "walkaway-spiral.json", SAMPLES / "evening.json", "--format", "json")
    assert status == 1
    doc = json.loads(out)
    assert doc["divergence"]["a_index"] == 0 and doc["divergence"]["a_event"]["tick"] == 201
    kael = doc["npcs"]["kael-davan"]
    # The spiral: 13 walk-aways, regard ground down to nothing; the evening: one walk-away, Acquaintance.
    assert kael["a"] == {"score": 0.0, "level": "Stranger", "stress": 78, "walk_aways": 13}
    assert kael["b"]["walk_aways"] == 1 and kael["b"]["level"] == "Acquaintance"
    assert kael["score_first_differs_tick"] is not None
    kael_changes = [ch for ch in doc["interactions"]["changed"] if ch["npc"] == "kael-davan"]
    assert sum(ch["a"] is not None and ch["a"]["state"] == "WalkedAway" for ch in kael_changes) >= 10
    assert "interaction_memory" in doc["prompts"]["kael-davan"]["sections_changed"]
    text_status, text = run_diff(capsys, SAMPLES / "walkaway-spiral.json", SAMPLES / "evening.json")
    assert text_status == 1 and "kael-davan: A 0.00 Stranger, stress 78, walk-aways 13" in text


# ----- misuse -----
def test_diff_misuse_exits_2(capsys, tmp_path):
    save = SAMPLES / "evening.json"
    assert main(["diff", str(save)]) == 2  # no B and no --content-b
    assert "--content-b" in capsys.readouterr().err
    assert main(["diff", str(save), str(tmp_path / "missing.json")]) == 2
    assert "missing.json" in capsys.readouterr().err
    broken = tmp_path / "broken.json"
    broken.write_text("{not json", encoding="utf-8")
    assert main(["diff", str(broken), str(save)]) == 2
    assert "broken.json" in capsys.readouterr().err
    assert main(["diff", str(save), "--content-b", str(tmp_path / "nowhere")]) == 2
    assert "--content-b" in capsys.readouterr().err
    assert main(["diff", str(save), str(save), "--tick", "-1"]) == 2
    assert main(["diff", str(save), str(save), "--tick", str(10**12)]) == 2
    capsys.readouterr()


@pytest.mark.parametrize(
    "order, tick, says",
    [
        (("walkaway-spiral.json", "evening.json"), 100000, "is beyond the end of a save: A walkaway-spiral.json ends at tick 37113; give a tick from 0 to 37113"),
        (("evening.json", "walkaway-spiral.json"), 37114, "is beyond the end of a save: B walkaway-spiral.json ends at tick 37113; give a tick from 0 to 37113"),
        (
            ("evening.json", "walkaway-spiral.json"),
            302030,
            "is beyond the end of both saves: A evening.json ends at tick 302029; B walkaway-spiral.json ends at tick 37113; give a tick from 0 to 37113",
        ),
    ],
)
def test_diff_tick_past_the_end_of_either_save_exits_2_naming_it(capsys, order, tick, says):
    """Past one save's last tick the comparison would set that save's end against the
    other at T as if both were at T: misuse (exit 2, issue 13), never a silent compare."""
    a, b = (str(SAMPLES / name) for name in order)
    assert main(["diff", a, b, "--tick", str(tick)]) == 2
    captured = capsys.readouterr()
    assert captured.out == "" and captured.err == f"narrative-debugger diff: --tick {tick} {says}\n"


def test_diff_tick_at_the_last_tick_of_the_shorter_save_still_compares(capsys):
    status, out = run_diff(capsys, SAMPLES / "evening.json", SAMPLES / "walkaway-spiral.json", "--tick", "37113", "--format", "json")
    assert status == 1 and json.loads(out)["npcs"]
    assert main(["diff", str(SAMPLES / "evening.json"), "--content-b", str(CONTENT), "--tick", "302030"]) == 2
    assert "beyond the end of the save: evening.json (A and B) ends at tick 302029" in capsys.readouterr().err


def test_score_curves_part_at_the_first_step_that_differs_beyond_the_tolerance():
    """Step curves as ``score_steps`` gives them (uint64 ticks, float64 scores): a step of
    the same value, a difference within 1e-4, and ticks past 2^63 never count; the first
    tick where they do is the answer, and the later first tick when they start apart."""
    import numpy as np

    from narrative_debugger.models.compare.npcs import first_score_difference

    def curve(ticks, scores):
        return np.array(ticks, dtype=np.uint64), np.array(scores, dtype=np.float64)

    big = 2**63 + 5
    a = curve([0, 10, 20, big], [1.0, 2.0, 2.0, 3.0])
    assert first_score_difference(a, curve([0, 10, big], [1.0, 2.00005, 3.0])) is None
    assert first_score_difference(a, curve([0, 10, big + 1], [1.0, 2.0, 3.0])) == big
    assert first_score_difference(a, curve([0, 15], [1.0, 2.0])) == 10
    assert first_score_difference(curve([4], [1.0]), curve([7], [1.5])) == 7

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
    ("levels.friend", 10, "must not fall"),
    ("levels.stranger", 40.5, "each at least the one before"),
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


# ----- the what-if replay and the command (issue 38) -----
import json  # noqa: E402
import re  # noqa: E402

from narrative_debugger.app.cli.main import main  # noqa: E402
from narrative_debugger.models.whatif.patch import PatchError, split_edits  # noqa: E402
from narrative_debugger.models.whatif.run import what_if  # noqa: E402
from tests.conftest import SAMPLES  # noqa: E402

SAVES = sorted(SAMPLES.glob("*.json"))


def run_whatif(capsys, *args) -> tuple[int, str, str]:
    status = main(["whatif", *map(str, args)])
    captured = capsys.readouterr()
    return status, captured.out, captured.err


@pytest.mark.parametrize("save", SAVES, ids=lambda p: p.name)
def test_empty_patch_changes_nothing(capsys, tmp_path, save):
    patch = tmp_path / "empty.json"
    patch.write_text("[]", encoding="utf-8")
    before = save.read_bytes()
    status, out, _ = run_whatif(capsys, save, "--patch", patch, "--format", "json")
    doc = json.loads(out)
    assert status == 0
    assert doc["divergence"] is None and doc["would_not_happen"] == [] and doc["prompts_regenerate"] == {}
    assert not any(n["score_first_differs_tick"] is not None or n["a"] != n["b"] for n in doc["npcs"].values())
    assert save.read_bytes() == before  # never written


def _seed_delta(sentiment, length, turns, weight=0.5):
    """The relationship seed's formula, written out by hand for the test."""
    return max(-1.0, min(1.0, sentiment * weight + min(0.3, length / 500) + min(0.2, turns * 0.05) + 0.1))


def _score_chain(journal, target, start, first_sentiment, score):
    """Score points after each of ``target``'s score entries from ``start`` on, the
    sentiment of the first replaced, by the seed formula with its clamps."""
    chain = []
    for i in range(start, len(journal)):
        event = journal[i]["event"]
        if "RelationshipInteraction" in event and event["RelationshipInteraction"]["target"] == target:
            e = event["RelationshipInteraction"]
            sentiment = first_sentiment if i == start else e["sentiment"]
            score = max(0.0, min(100.0, score + _seed_delta(sentiment, e["message_length"], e["conversation_turns"])))
            chain.append((journal[i]["tick"], score))
        elif "WalkAwayPenalty" in event and event["WalkAwayPenalty"]["target"] == target:
            score = max(0.0, score - event["WalkAwayPenalty"]["penalty"])
            chain.append((journal[i]["tick"], score))
    return chain


def test_one_sentiment_recomputes_that_npcs_chain_only():
    save = SAMPLES / "evening.json"
    journal = json.loads(save.read_text(encoding="utf-8"))["journal"]
    entry = 62  # lera-sessik (9), tick 4520, sentiment 0.69, recorded score_after 0.945
    assert journal[entry]["event"]["RelationshipInteraction"]["target"] == 9 and journal[entry]["tick"] == 4520
    before = 0.0  # lera's recorded score before the entry: the last score_after about her
    for e in journal[:entry]:
        for kind in ("RelationshipInteraction", "WalkAwayPenalty"):
            if kind in e["event"] and e["event"][kind]["target"] == 9:
                before = e["event"][kind]["score_after"]
    w = what_if(save, None, [{"op": "replace", "path": f"/journal/{entry}/event/RelationshipInteraction/sentiment", "value": -0.5}])
    b = w.comparison.b
    chain = _score_chain(journal, 9, entry, -0.5, before)
    # -0.5 * 0.5 + min(0.3, 275/500) + min(0.2, 7 * 0.05) + 0.1 = -0.25 + 0.3 + 0.2 + 0.1 = 0.35
    assert chain[0] == (4520, pytest.approx(before + 0.35))
    last_of_tick = dict(chain)  # the state after every entry of a tick
    for tick, score in last_of_tick.items():
        assert b.state_at(tick).npc(9).relationship.score == pytest.approx(score, abs=1e-9)
    lera = w.comparison.npcs["lera-sessik"]
    assert lera.score_first_differs_tick == 4520
    assert lera.b.score == pytest.approx(chain[-1][1], abs=1e-9)
    others = [slug for slug, d in w.comparison.npcs.items() if d.differs and slug != "lera-sessik"]
    assert others == []
    assert "lera-sessik" in w.prompts_regenerate and set(w.prompts_regenerate) == {"lera-sessik"}


@pytest.mark.parametrize("recorded", [False, True], ids=["opens A", "A open"])
def test_progress_rises_from_0_to_1_through_each_stage(recorded):
    from narrative_debugger.models.playthrough import Playthrough

    save = SAMPLES / "evening.json"
    seen = []
    a = Playthrough.open(save) if recorded else None
    what_if(save, None, [{"op": "replace", "path": "/journal/62/event/RelationshipInteraction/sentiment", "value": -0.5}],
            recorded=a, progress=lambda fraction, stage: seen.append((fraction, stage)))
    fractions = [f for f, _ in seen]
    assert fractions == sorted(fractions) and fractions[0] == 0.0 and fractions[-1] == 1.0
    stages = list(dict.fromkeys(stage for _, stage in seen))
    expected = ["applying the edits", "replaying with the edits", "comparing with the recorded run", "rebuilding the prompts", "done"]
    assert stages == (expected if recorded else ["opening the recorded save", *expected])
    assert sum(stage == "replaying with the edits" for _, stage in seen) > 10  # the replay reports as it goes


def test_sentiment_weight_changes_every_curve_and_lists_end_levels(capsys):
    status, out, _ = run_whatif(capsys, SAMPLES / "evening.json", "--set", "relationship.sentiment_weight=0.25", "--format", "json")
    doc = json.loads(out)
    assert status == 1
    talked = [slug for slug, n in doc["npcs"].items() if n["a"]["score"] > 0]
    assert talked and all(doc["npcs"][slug]["score_first_differs_tick"] is not None for slug in talked)
    assert doc["end_levels"] == {"mira-holt": {"a": "Acquaintance", "b": "Stranger"}}
    assert doc["edits"] == [{"op": "set", "name": "relationship.sentiment_weight", "value": 0.25}]


def test_lowering_thresholds_moves_crossings_and_walk_aways(capsys):
    save = SAMPLES / "walkaway-spiral.json"
    status, out, _ = run_whatif(capsys, save, "--set", "npc.kael-davan.threshold=5", "--format", "json")
    doc = json.loads(out)
    assert status == 1
    assert doc["crossings"]["kael-davan"] == {"a": [16598], "b": [4914]}
    # Over by the stress of walk-away journal[86] (StressChanged journal[87]): that conversation
    # has ended, so a walk-away would follow at Kael's next one, journal[123] (trials, stops 44,
    # 46), which the recorded run walked away from already (journal[131]): nothing new would
    # happen (trial 47 read the walk-away listed there as a new one).
    assert doc["would_happen"] == []
    # Walk-aways before a penalty: 1 recorded; 3 makes the penalties of walk-aways 2 and 3 not follow.
    status, out, _ = run_whatif(capsys, save, "--set", "npc.kael-davan.walk_away_threshold=3", "--format", "json")
    doc = json.loads(out)
    assert status == 1
    assert [(e["journal_index"], e["tick"], e["event"]) for e in doc["would_not_happen"]] == [(133, 7652, "WalkAwayPenalty"), (152, 8969, "WalkAwayPenalty")]
    # Consequences, not faults of B (trial, stop 45: "T004 only in B: … yet it is penalised"
    # beside the same penalty under "would not have happened", whose reason was that message).
    assert doc["would_not_happen"][0]["reason"] == ("kael-davan: walk-away #2 is within the walk-away threshold of 3: "
                                                    "no WalkAwayPenalty follows it")
    assert not [f for f in doc["findings"]["only_b"] if f["code"] == "T004"]
    # Lowered to 0, walk-away #1 (journal[86], tick 4914) calls for a penalty of its NPC's walk_away_penalty.
    status, out, _ = run_whatif(capsys, save, "--set", "npc.kael-davan.walk_away_threshold=0", "--format", "json")
    doc = json.loads(out)
    assert status == 1 and not [f for f in doc["findings"]["only_b"] if f["code"] == "T004"]
    assert doc["would_happen"] == [{"journal_index": 86, "tick": 4914, "event": "WalkAwayPenalty",
                                    "reason": "kael-davan: walk-away #1 is past the walk-away threshold of 0: a WalkAwayPenalty of 0.43 would follow"}]
    # A stress threshold below the initial stress 0: over from the start (trial, stop 45: -1 listed
    # no crossing and nothing that would happen), so a walk-away follows the first conversation.
    status, out, _ = run_whatif(capsys, save, "--set", "npc.kael-davan.threshold=-1", "--format", "json")
    doc = json.loads(out)
    assert status == 1 and doc["crossings"]["kael-davan"] == {"a": [16598], "b": [0]}
    assert doc["would_happen"] == [{"journal_index": 1, "tick": 217, "event": "InteractionWalkedAway",
                                    "reason": "kael-davan: stress 0 is over the threshold -1 from the start: a walk-away "
                                              "would follow at the first conversation (journal[1])"}]
    # Raising the stress threshold over every recorded stress: the walk-aways made over it no longer follow.
    status, out, _ = run_whatif(capsys, save, "--set", "npc.kael-davan.threshold=1000", "--format", "json")
    doc = json.loads(out)
    late = [e for e in doc["would_not_happen"] if e["event"] in ("InteractionWalkedAway", "InteractionConflictAbandoned")]
    assert late and all(e["tick"] >= 16598 and "not over the threshold 1000" in e["reason"] for e in late)


def test_a_threshold_below_the_initial_stress_after_a_first_walk_away_lists_the_next_conversation(capsys):
    """New-user trial: on evening.json, npc.lera-sessik.threshold=-1 listed no walk-away that
    would happen while 0 listed two. A negative threshold is a valid i16 (save-format §5,
    ToleranceThreshold): stress 0 is over -1 from the start. Lera's first conversation
    (journal[2]) was walked away from as recorded (journal[17]); its stress (4, journal[18])
    keeps her over -1, so a walk-away would follow at her next conversation, journal[44], as
    with 0. Her stress never falls to -1 or below, so no later crossing: that one only (0
    lists journal[2817] too, where she crosses back over 0)."""
    save = SAMPLES / "evening.json"
    status, out, _ = run_whatif(capsys, save, "--set", "npc.lera-sessik.threshold=-1", "--format", "json")
    doc = json.loads(out)
    assert status == 1 and doc["crossings"]["lera-sessik"] == {"a": [], "b": [0]}
    assert doc["would_happen"] == [{"journal_index": 44, "tick": 3748, "event": "InteractionWalkedAway",
                                    "reason": "lera-sessik: stress 0 is over the threshold -1 from the start; the first conversation "
                                              "(journal[2]) was walked away from, as recorded, and the stress is still over (4) at the "
                                              "next one: a walk-away would follow there (journal[44])"}]
    zero = json.loads(run_whatif(capsys, save, "--set", "npc.lera-sessik.threshold=0", "--format", "json")[1])
    assert [e["journal_index"] for e in zero["would_happen"]] == [44, 2817]


def test_tick_bounds_the_prompts_to_regenerate(capsys):
    """New-user trial, stop 45: with --tick 5000 the NPCs were compared at 5000 but the
    prompts listed turns up to the end (lera-sessik from 76 948, 220 turns)."""
    save = SAMPLES / "evening.json"
    whole = json.loads(run_whatif(capsys, save, "--set", "relationship.sentiment_weight=0.25", "--format", "json")[1])["prompts_regenerate"]
    assert whole["lera-sessik"] == {"first_tick": 76948, "turns": 220}
    bounded = json.loads(run_whatif(capsys, save, "--set", "relationship.sentiment_weight=0.25", "--tick", "100000", "--format", "json")[1])
    assert bounded["prompts_regenerate"]["lera-sessik"]["first_tick"] == 76948
    assert 0 < bounded["prompts_regenerate"]["lera-sessik"]["turns"] < 220
    assert all(v["first_tick"] <= 100000 for v in bounded["prompts_regenerate"].values())
    assert json.loads(run_whatif(capsys, save, "--set", "relationship.sentiment_weight=0.25", "--tick", "5000", "--format", "json")[1])["prompts_regenerate"] == {}


def test_removing_or_retargeting_an_interaction_derives_the_npcs_later_scores(capsys, tmp_path):
    """New-user trial, stop 45: with Mira's first RelationshipInteraction (journal[43],
    delta 0.285) removed, B kept every later recorded score_after (21.074, as A) and
    flagged its own run with R003. Her later deltas are the recorded ones (the formula's),
    so B ends 0.285 lower; moved to Kael (17), she ends as lower and he gains the entry."""
    save = SAMPLES / "evening.json"
    entry = json.loads(save.read_text(encoding="utf-8"))["journal"][43]["event"]["RelationshipInteraction"]
    assert entry["target"] == 42 and entry["delta"] == 0.285  # Mira Holt
    patch = tmp_path / "remove.json"
    patch.write_text(json.dumps([{"op": "remove", "path": "/journal/43"}]), encoding="utf-8")
    status, out, _ = run_whatif(capsys, save, "--patch", str(patch), "--format", "json")
    doc = json.loads(out)
    mira = doc["npcs"]["mira-holt"]
    assert status == 1 and mira["b"]["score"] == pytest.approx(mira["a"]["score"] - 0.285, abs=1e-3)
    assert doc["findings"]["only_b"] == []
    assert all(d["a"] == d["b"] for slug, d in doc["npcs"].items() if slug != "mira-holt")
    status, out, _ = run_whatif(capsys, save, "--set", "/journal/43/event/RelationshipInteraction/target=17", "--format", "json")
    doc = json.loads(out)
    assert doc["npcs"]["mira-holt"]["b"]["score"] == pytest.approx(mira["b"]["score"], abs=1e-3)
    kael = doc["npcs"]["kael-davan"]
    assert kael["b"]["score"] > kael["a"]["score"] and not any(f["code"] == "R003" for f in doc["findings"]["only_b"])
    # To no NPC at all: the edit makes the journal invalid (I010), exit 2.
    status, out, err = run_whatif(capsys, save, "--set", "/journal/43/event/RelationshipInteraction/target=99")
    assert status == 2 and "makes the save invalid: I010 at journal[43].event.RelationshipInteraction.target" in err


@pytest.mark.parametrize("op, words", [
    ({"op": "replace", "path": "", "value": []}, 'operation 0 (replace "" (the whole save)) makes the save invalid: F002 at $'),
    ({"op": "replace", "path": "", "value": None}, 'operation 0 (replace "" (the whole save)) makes the save invalid: F002 at $'),
    ({"op": "replace", "path": "", "value": {}}, 'operation 0 (replace "" (the whole save)) makes the save invalid: F003'),
    ({"op": "remove", "path": ""}, 'operation 0 (remove "" (the whole save)): the whole save cannot be removed'),
])
def test_a_patch_of_the_whole_save_is_applied_not_ignored(capsys, tmp_path, op, words):
    """New-user trial, stop 45: ``replace ""`` with [] said "Nothing changes", exit 0 (the
    patched whole was dropped: jsonpatch returns a new root, it cannot replace one in place)."""
    patch = tmp_path / "whole.json"
    patch.write_text(json.dumps([op]), encoding="utf-8")
    status, out, err = run_whatif(capsys, SAMPLES / "evening.json", "--patch", str(patch))
    assert status == 2 and out == "" and words in err, err


@pytest.mark.parametrize("args, words", [
    (["--set", "/journal/99999/event/RelationshipInteraction/sentiment=0.5"], "operation 0 (replace /journal/99999/event/RelationshipInteraction/sentiment)"),
    (["--set", "/journal/62/event/RelationshipInteraction/nothing=1"], "operation 0 (replace /journal/62/event/RelationshipInteraction/nothing)"),
    (["--set", "/journal/62/event/RelationshipInteraction/sentiment=\"kind\""], "operation 0 (replace /journal/62/event/RelationshipInteraction/sentiment) makes the save invalid: F002"),
    (["--set", "/npcs/17/tolerance/threshold=70000"], "operation 0 (replace /npcs/17/tolerance/threshold) makes the save invalid: F002"),
    # A sentiment outside -1..1 (save-format §5): refused, as check reports it (R006); new-user trial, stop 44.
    (["--set", "/journal/62/event/RelationshipInteraction/sentiment=5"],
     "operation 0 (replace /journal/62/event/RelationshipInteraction/sentiment): sentiment 5 at journal[62] is outside -1..1"),
    (["--set", "/journal/62/event/RelationshipInteraction/message_length=3", "--set", "/journal/62/event/RelationshipInteraction/sentiment=-1.01"],
     "operation 1 (replace /journal/62/event/RelationshipInteraction/sentiment): sentiment -1.01 at journal[62] is outside -1..1"),
    (["--set", "relationship.sentiment_weight=x"], "--set relationship.sentiment_weight: expected a number"),
    (["--set", "relationship.nothing=1"], "not a JSON pointer"),
])
def test_bad_patches_exit_2_naming_the_operation(capsys, args, words):
    status, out, err = run_whatif(capsys, SAMPLES / "evening.json", *args)
    assert status == 2 and out == ""
    assert words in err, err


def test_list_prints_names_with_values(capsys):
    status, out, _ = run_whatif(capsys, "--list")
    assert status == 0 and "relationship.sentiment_weight" in out and "0.5" in out
    status, out, _ = run_whatif(capsys, SAMPLES / "evening.json", "--list", "--format", "json")
    doc = json.loads(out)
    assert doc["npc.kael-davan.threshold"] == 30 and doc["levels.friend"] == 60.0 and doc["prompt.budget"] == 8192


def test_a_snapshot_edit_reads_the_document_and_agrees_with_the_tuning_name(capsys):
    # /npcs/17 is kael-davan: the snapshot's threshold (a patch of the whole document)
    # and the tuning name npc.kael-davan.threshold (A's save reused) give the same what-if.
    save = SAMPLES / "walkaway-spiral.json"
    _, by_pointer, _ = run_whatif(capsys, save, "--set", "/npcs/17/tolerance/threshold=5", "--format", "json")
    _, by_name, _ = run_whatif(capsys, save, "--set", "npc.kael-davan.threshold=5", "--format", "json")
    a, b = json.loads(by_pointer), json.loads(by_name)
    assert a["crossings"] == b["crossings"] == {"kael-davan": {"a": [16598], "b": [4914]}}
    assert a["would_happen"] == b["would_happen"]


def test_a_journal_edit_with_add_reads_the_whole_document(capsys, tmp_path):
    # An added entry shifts none of the entries after it: only that NPC's chain moves.
    patch = tmp_path / "add.json"
    entry = {"tick": 4520, "event": {"RelationshipInteraction": {"target": 9, "sentiment": 1.0, "message_length": 500,
                                                                  "conversation_turns": 4, "delta": 1.0, "score_after": 1.945}}}
    patch.write_text(json.dumps([{"op": "add", "path": "/journal/63", "value": entry}]), encoding="utf-8")
    status, out, _ = run_whatif(capsys, SAMPLES / "evening.json", "--patch", patch, "--format", "json")
    doc = json.loads(out)
    assert status == 1
    assert doc["npcs"]["lera-sessik"]["score_first_differs_tick"] == 4520
    assert [slug for slug, n in doc["npcs"].items() if n["score_first_differs_tick"] is not None] == ["lera-sessik"]


def test_bad_pointer_messages_quote_neither_the_save_nor_python_types(capsys, tmp_path):
    # jsonpointer quoted the whole object a missing member was looked for in: for
    # /nosuch that was the save itself, 600 KB of it on stderr.
    status, out, err = run_whatif(capsys, SAMPLES / "evening.json", "--set", "/nosuch/x=1")
    assert status == 2 and out == ""
    assert err.strip() == "narrative-debugger whatif: operation 0 (replace /nosuch/x): member 'nosuch' not found"
    # journal[5] is a DialogueLine: its text is a string, not a container.
    status, _, err = run_whatif(capsys, SAMPLES / "evening.json", "--set", "/journal/5/event/DialogueLine/text/x=1")
    assert status == 2 and "<class" not in err and "non-container type a string" in err
    patch = tmp_path / "test.json"
    patch.write_text(json.dumps([{"op": "test", "path": "/saved_at_tick", "value": 1}]), encoding="utf-8")
    status, _, err = run_whatif(capsys, SAMPLES / "evening.json", "--patch", patch)
    assert status == 2 and err.strip().endswith("operation 0 (test /saved_at_tick): the test failed: /saved_at_tick holds 302029, not 1")
    patch.write_text(json.dumps([{"op": "test", "path": "/journal", "value": []}]), encoding="utf-8")
    status, _, err = run_whatif(capsys, SAMPLES / "evening.json", "--patch", patch)
    assert status == 2 and len(err) < 300 and "/journal holds [" in err and "…, not []" in err


def test_an_npc_tuning_value_for_an_npc_the_save_lacks_is_refused(capsys):
    # It was taken, changed nothing, and the what-if exited 0 ("Nothing changes").
    for name in ("npc.nobody.threshold=3", "npc.nobody.walk_away_threshold=1"):
        status, out, err = run_whatif(capsys, SAMPLES / "evening.json", "--set", name)
        assert status == 2 and out == ""
        assert f"--set {name.partition('=')[0]}: evening.json has no NPC 'nobody'" in err, err
    status, _, _ = run_whatif(capsys, SAMPLES / "evening.json", "--set", "npc.kael-davan.threshold=3")
    assert status == 1


def test_the_text_names_b_as_the_what_if_not_an_empty_sha256(capsys):
    status, out, _ = run_whatif(capsys, SAMPLES / "evening.json", "--set", "relationship.sentiment_weight=0.25")
    lines = out.splitlines()
    a = next(line for line in lines if line.startswith("A: "))
    b = next(line for line in lines if line.startswith("B: "))
    assert status == 1 and "(sha256 dea4aa0bdb4d)" in a
    assert "(what if: changed in memory)" in b and "sha256" not in b


@pytest.mark.parametrize("extra", [["--set", "relationship.base=0.2"], ["--set", "relationship.base=abc"], ["--tick", "5"]])
def test_list_with_edits_is_misuse_not_a_silent_drop(capsys, extra):
    # The list printed relationship.base 0.1 and exited 0 as if --set had been taken.
    status, out, err = run_whatif(capsys, SAMPLES / "evening.json", "--list", *extra)
    assert (status, out) == (2, "")
    assert f"--list prints the recorded tuning values; it takes no {extra[0]}" in err


def test_the_edited_entry_shows_the_delta_and_score_b_derived():
    # Entry 62 (lera-sessik, sentiment 0.69 -> -0.5): B's entry kept the recorded delta
    # and score_after while B's replay derived 0.35 and before + 0.35 (seed formula:
    # -0.5 * 0.5 + min(0.3, 275/500) + min(0.2, 7 * 0.05) + 0.1).
    save = SAMPLES / "evening.json"
    recorded = json.loads(save.read_text(encoding="utf-8"))["journal"][62]["event"]["RelationshipInteraction"]
    w = what_if(save, None, [{"op": "replace", "path": "/journal/62/event/RelationshipInteraction/sentiment", "value": -0.5}])
    d = w.comparison.divergence
    a_fields, b_fields = d.a_event["event"]["RelationshipInteraction"], d.b_event["event"]["RelationshipInteraction"]
    assert a_fields == recorded  # A as recorded
    assert b_fields["sentiment"] == -0.5 and b_fields["delta"] == 0.35
    before = recorded["score_after"] - recorded["delta"]  # her score before the entry (not clamped there)
    assert b_fields["score_after"] == pytest.approx(before + 0.35, abs=1e-6)
    assert {k: v for k, v in b_fields.items() if k not in ("sentiment", "delta", "score_after")} == \
        {k: v for k, v in recorded.items() if k not in ("sentiment", "delta", "score_after")}


def test_text_edits_name_a_moves_source_and_cut_a_long_value(capsys, tmp_path):
    """New-user trial, stop 45: a copy read "copy /journal/44" (its source left out), and a
    5 000-digit value was echoed whole."""
    patch = tmp_path / "p.json"
    patch.write_text(json.dumps([{"op": "copy", "from": "/journal/43", "path": "/journal/44"},
                                 {"op": "add", "path": "/note", "value": "x" * 300}]), encoding="utf-8")
    _, out, _ = run_whatif(capsys, SAMPLES / "evening.json", "--patch", patch)
    lines = out.splitlines()
    assert lines[1] == "  copy from /journal/43 to /journal/44"
    assert lines[2] == '  add /note "' + "x" * 99 + "… (302 characters)"


def test_a_long_integer_is_not_shown_shortened(capsys):
    """New-user trial, stop 45: a 41-digit value was reported as 'an integer
    (9999999999999999999999999999999999999999)', 40 digits, as if that were the value."""
    status, _, err = run_whatif(capsys, SAMPLES / "evening.json", "--set", "/journal/43/event/RelationshipInteraction/sentiment=" + "9" * 41)
    assert status == 2 and "found an integer of 41 digits (" + "9" * 30 + "…)" in err


@pytest.mark.parametrize("value, words", [
    ("1e999", "--set relationship.base: 1e999 is out of range: not a finite number"),
    ("NaN", "--set relationship.base: NaN is out of range: not a finite number"),
    ("9" * 5000, "--set relationship.base: a number of 5,000 characters is out of range for any value of a save"),
])
def test_a_number_out_of_any_range_is_refused_as_a_number(capsys, value, words):
    """New-user trial, stop 45: 1e999 said "expected a number, found inf", and a 5 000-digit
    number passed JSON's digit limit and was taken as a string (echoed whole)."""
    status, out, err = run_whatif(capsys, SAMPLES / "evening.json", "--set", f"relationship.base={value}")
    assert (status, out) == (2, "") and err.strip() == f"narrative-debugger whatif: {words}"


def test_a_field_the_replay_derives_is_refused(capsys):
    """New-user trial, stop 46: delta=50 was replaced by the formula's 0.285 and left float
    noise as "1 difference" (exit 1). A derived field is refused, naming what to change."""
    for pointer, words in (("/journal/43/event/RelationshipInteraction/delta", "delta is derived by the replay from its sentiment, "
                            "message_length and conversation_turns (relationship seed, delta formula): change sentiment, "
                            "message_length or conversation_turns instead"),
                           ("/journal/43/event/RelationshipInteraction/score_after", "score_after is derived by the replay")):
        status, out, err = run_whatif(capsys, SAMPLES / "evening.json", "--set", f"{pointer}=50")
        assert (status, out) == (2, "") and f"operation 0 (replace {pointer}): {words}" in err


def _lera_entry(kind: str, **fields) -> dict:
    """An entry about lera-sessik (9) at tick 4520, where evening.json scores her first
    conversation (journal[62]: score 0.945; her stress is 4 since journal[18])."""
    return {"tick": 4520, "event": {kind: {"target": 9, **fields}}}


_ADDED_INTERACTION = dict(sentiment=1.0, message_length=500, conversation_turns=4)  # the seed formula: 1.1, clamped to 1.0


@pytest.mark.parametrize("entry, words", [
    (_lera_entry("RelationshipInteraction", **_ADDED_INTERACTION, delta=50.0, score_after=50.945),
     "delta of journal[63] is derived by the replay from its sentiment, message_length and conversation_turns (relationship seed, "
     "delta formula): the replay derives 1.0 there, not the 50.0 given: write 1.0, or change sentiment, message_length or "
     "conversation_turns instead"),
    (_lera_entry("RelationshipInteraction", **_ADDED_INTERACTION, delta=1.0, score_after=3.0),
     "score_after of journal[63] is derived by the replay from the score before it and its delta, clamped to 0..100: the replay "
     "derives 1.945 there, not the 3.0 given: write 1.945"),
    (_lera_entry("StressChanged", delta=3, current_stress=99, cause="argument"),
     "current_stress of journal[63] is derived by the replay from the stress before it and its delta: the replay derives 7 there, "
     "not the 99 given: write 7, or change delta instead"),
    (_lera_entry("WalkAwayPenalty", penalty=0.29, score_after=0.9),
     "score_after of journal[63] is derived by the replay from the score before it and its penalty, clamped at 0: the replay "
     "derives 0.655 there, not the 0.9 given: write 0.655, or change penalty instead"),
])
def test_a_derived_field_of_an_added_entry_is_refused_unless_the_replay_derives_it(capsys, tmp_path, entry, words):
    """New-user trial: an ``add`` of a RelationshipInteraction with delta 50 was replayed
    with the formula's 1.0 (and a StressChanged's current_stress 99 with 4 + 3) while
    ``edits`` echoed the values given, where a ``replace`` of the same field is refused. An
    added entry has no recorded value to keep: a derived field must be what B's replay
    derives there, and the message gives it."""
    patch = tmp_path / "add.json"
    patch.write_text(json.dumps([{"op": "add", "path": "/journal/63", "value": entry}]), encoding="utf-8")
    status, out, err = run_whatif(capsys, SAMPLES / "evening.json", "--patch", patch, "--format", "json")
    assert (status, out) == (2, "") and f"operation 0 (add /journal/63): {words}" in err, err
    # The values the replay derives are taken, and shown as given.
    kind, fields = next(iter(entry["event"].items()))
    right = {"RelationshipInteraction": {"delta": 1.0, "score_after": 1.945}, "StressChanged": {"current_stress": 7},
             "WalkAwayPenalty": {"score_after": 0.655}}[kind]
    given = {**entry, "event": {kind: {**fields, **right}}}
    patch.write_text(json.dumps([{"op": "add", "path": "/journal/63", "value": given}]), encoding="utf-8")
    status, out, _ = run_whatif(capsys, SAMPLES / "evening.json", "--patch", patch, "--format", "json")
    doc = json.loads(out)
    assert status == 1 and doc["edits"][0]["value"] == given


def test_entries_a_patch_moves_or_copies_are_held_to_their_recorded_values(tmp_path):
    """The entries of a patch that adds one are matched to the recorded ones through the
    operations: an entry replaced whole after the added one (shifted by it) keeps the
    recorded rule (its recorded delta kept beside a new sentiment: taken); a copy of a
    recorded entry is that entry again (its values derived anew, as every later one of
    its NPC's); an entry added and moved is still the added one; one of another kind put
    in an entry's place has no recorded value either; nor has an entry of a whole journal
    given with one entry more."""
    save = SAMPLES / "evening.json"
    journal = json.loads(save.read_text(encoding="utf-8"))["journal"]
    later = next(i for i in range(100, len(journal)) if journal[i]["event"].get("RelationshipInteraction", {}).get("target") == 9)
    kinder = json.loads(json.dumps(journal[later]["event"]))
    kinder["RelationshipInteraction"]["sentiment"] = -0.5  # its recorded delta and score_after kept
    right = _lera_entry("RelationshipInteraction", **_ADDED_INTERACTION, delta=1.0, score_after=1.945)
    wrong = _lera_entry("RelationshipInteraction", **_ADDED_INTERACTION, delta=0.2, score_after=1.945)
    taken = [
        [{"op": "add", "path": "/journal/63", "value": right}, {"op": "replace", "path": f"/journal/{later + 1}/event", "value": kinder}],
        [{"op": "replace", "path": f"/journal/{later}/event", "value": kinder}, {"op": "add", "path": "/journal/63", "value": right}],
        [{"op": "copy", "from": "/journal/62", "path": "/journal/63"}],
    ]
    for operations in taken:
        assert what_if(save, None, operations).changed
    with_one_more = journal[:63] + [wrong] + journal[63:]
    refused = [
        ([{"op": "add", "path": "/journal/62", "value": wrong}, {"op": "move", "from": "/journal/63", "path": "/journal/62"}],
         "operation 0 (add /journal/62): delta of journal[63]"),
        ([{"op": "copy", "from": "/journal/62", "path": "/journal/63"}, {"op": "add", "path": "/journal/63", "value": wrong}],
         "operation 1 (add /journal/63): delta of journal[63]"),
        ([{"op": "replace", "path": "/journal/60", "value": _lera_entry("StressChanged", delta=1, current_stress=40, cause="argument")}],
         "operation 0 (replace /journal/60): current_stress of journal[60] is derived by the replay from the stress before it and "
         "its delta: the replay derives 5 there"),
        ([{"op": "replace", "path": "/journal", "value": with_one_more}], "operation 0 (replace /journal): delta of journal[63]"),
    ]
    for operations, words in refused:
        with pytest.raises(PatchError, match=re.escape(words)):
            what_if(save, None, operations)


@pytest.mark.parametrize("name", ["relationship.base", "levels.stranger", "prompt.card_share"])
def test_a_huge_integer_tuning_value_is_out_of_range(capsys, name):
    """New-user trial, stop 46: a 309-digit integer crashed with OverflowError (exit 1)."""
    status, out, err = run_whatif(capsys, SAMPLES / "evening.json", "--set", f"{name}=2{'0' * 308}")
    assert (status, out) == (2, "") and "Traceback" not in err
    assert f"--set {name}: 200000000000000000000000000000… (309 characters) is out of range: " in err


HINT = " with no quotes, no leading '+' or '.')"


@pytest.mark.parametrize("typed, words", [
    (".5", 'expected a number, found ".5" (write it as a JSON number: 0.5,' + HINT),
    ("+0.25", 'expected a number, found "+0.25" (write it as a JSON number: 0.25,' + HINT),
    ('"0.5"', 'expected a number, found "0.5" (write it as a JSON number: 0.5,' + HINT),
    ("abc", 'expected a number, found "abc"'),
])
def test_a_number_json_does_not_read_says_how_to_write_it(capsys, typed, words):
    # New-user trial, stop 46: '.5' and '+0.25' were refused without saying a JSON number was wanted.
    status, out, err = run_whatif(capsys, SAMPLES / "evening.json", "--set", f"relationship.sentiment_weight={typed}")
    assert (status, out) == (2, "")
    assert err.strip() == f"narrative-debugger whatif: --set relationship.sentiment_weight: {words}"


@pytest.mark.parametrize("typed", ["sentiment_weight", "relationship.sentimnt_weight"])
def test_a_tuning_name_half_typed_is_named_in_full(capsys, typed):
    status, _, err = run_whatif(capsys, SAMPLES / "evening.json", "--set", f"{typed}=0.3")
    assert status == 2
    assert f"--set {typed}: not a JSON pointer (they start with /) nor a tuning name: did you mean relationship.sentiment_weight? (see whatif --list)" in err


def test_a_tuning_value_set_twice_is_listed_once_with_the_later_value(capsys):
    # New-user trial, stop 46: both edits were listed; the later one was in force.
    status, out, _ = run_whatif(capsys, SAMPLES / "evening.json", "--set", "relationship.sentiment_weight=0.3",
                                "--set", "relationship.sentiment_weight=0.25", "--format", "json")
    assert status == 1
    assert json.loads(out)["edits"] == [{"op": "set", "name": "relationship.sentiment_weight", "value": 0.25}]
    _, once, _ = run_whatif(capsys, SAMPLES / "evening.json", "--set", "relationship.sentiment_weight=0.25", "--format", "json")
    assert once == out


def test_a_pointer_set_twice_is_listed_once_with_the_later_value(capsys):
    """``--set P=V --set P=W`` listed both replace operations among the edits (a tuning
    name set twice is listed once): the later value counts, listed once, in its place,
    and the output is that of ``--set P=W`` alone."""
    pointer = "/journal/62/event/RelationshipInteraction/sentiment"
    status, out, _ = run_whatif(capsys, SAMPLES / "evening.json", "--set", f"{pointer}=-0.5", "--set", f"{pointer}=0.9", "--format", "json")
    assert status == 1
    assert json.loads(out)["edits"] == [{"op": "replace", "path": pointer, "value": 0.9}]
    _, once, _ = run_whatif(capsys, SAMPLES / "evening.json", "--set", f"{pointer}=0.9", "--format", "json")
    assert once == out
    status, text, _ = run_whatif(capsys, SAMPLES / "evening.json", "--set", f"{pointer}=-0.5", "--set", f"{pointer}=0.9")
    assert text.startswith(f"edits: 1\n  replace {pointer} 0.9\n")


def test_split_edits_keeps_the_later_of_a_target_given_twice_in_its_place():
    """Pointers and tuning names alike: the earlier one is dropped (not applied, then
    overwritten), the later one stays where it was given, the others keep their order."""
    a, b = "/journal/62/event/RelationshipInteraction/sentiment", "/journal/43/event/RelationshipInteraction/sentiment"
    operations, tuning, sets = split_edits([(a, -0.5), ("relationship.base", 0.2), (b, 0.1), (a, 0.9), ("relationship.base", 0.3)])
    assert operations == [{"op": "replace", "path": b, "value": 0.1}, {"op": "replace", "path": a, "value": 0.9}]
    assert sets == [("relationship.base", 0.3)] and tuning == DEFAULT_TUNING.with_value("relationship.base", 0.3)


@pytest.mark.parametrize("edits, target", [
    ([("relationship.length_cap", "abc")], "relationship.length_cap"),
    ([("relationship.base", 0.2), ("levels.acquaintance", 101)], "levels.acquaintance"),
    ([("no.such.name", 1)], None),  # no value of a target refused: the name itself
])
def test_a_refused_value_names_its_target(edits, target):
    """A PatchError about a value says which target's (the What if panel clears the
    message once that cell changes), besides naming it in its message."""
    from narrative_debugger.models.whatif.patch import PatchError, parse_set

    with pytest.raises(PatchError) as refused:
        split_edits(edits, said="")
    assert refused.value.target == target
    with pytest.raises(PatchError) as refused:
        parse_set("relationship.length_cap=1e999", said="")
    assert refused.value.target == "relationship.length_cap"


def test_tick_limits_what_would_and_would_not_happen(capsys):
    """``--tick T`` compares the states at T, so a consequence past T is none (trial 48:
    "A and B agree on everything compared" beside a penalty at tick 210 712, and exit 1)."""
    save = SAMPLES / "evening.json"
    status, out, _ = run_whatif(capsys, save, "--set", "npc.sera-venn.walk_away_threshold=3", "--format", "json")
    later = json.loads(out)
    assert status == 1 and [e["tick"] for e in later["would_happen"]] == [210712]
    status, out, _ = run_whatif(capsys, save, "--set", "npc.sera-venn.walk_away_threshold=3", "--tick", "20000", "--format", "json")
    doc = json.loads(out)
    assert status == 0 and doc["would_not_happen"] == [] and doc["would_happen"] == [] and doc["crossings"] == {}
    status, out, _ = run_whatif(capsys, save, "--set", "npc.sera-venn.walk_away_threshold=0", "--tick", "20000", "--format", "json")
    doc = json.loads(out)
    assert status == 1 and [(e["tick"], e["event"]) for e in doc["would_happen"]] == [(10243, "WalkAwayPenalty")]


@pytest.mark.parametrize("edits, lines", [
    # Lera's score is clamped at 100 in the end either way: where it parts, and meets again.
    ([("/journal/62/event/RelationshipInteraction/sentiment", 0.9)],
     ["Scores that part mid-run (A → B): lera-sessik parts at tick 4,520 (0.94 → 1.00), meets again at tick 301,528 "
      "and ends the same (100.00 at tick 302,029)"]),
    ([("npc.kael-davan.threshold", 2)],
     ["Stress crosses the threshold: kael-davan A never, B at ticks 15,163, 23,320, 299,055",
      "Prompts that need a new LLM response: kael-davan from tick 1,935 (180 turns)",
      "Would now happen (1):",
      "  tick 299,055 InteractionWalkedAway: kael-davan: stress 3 is over the threshold 2 once journal[3762] (StressChanged) "
      "applied: a walk-away would follow"]),
    ([("relationship.sentiment_weight", 0.5)], ["Nothing changes: B agrees with the recorded run."]),
])
def test_the_outcome_is_never_blank(edits, lines):
    """The What if panel's Outcome (models/whatif/outcome.py) says what changes, whatever
    it is, or that nothing does (new-user trial: a blank Outcome beside "B differs")."""
    from narrative_debugger.models.whatif.outcome import outcome_lines

    assert outcome_lines(what_if(SAMPLES / "evening.json", None, *split_edits(edits))) == lines

"""``whatif`` against hostile input (issue 38; hostile-input trial 47): every bad edit
is one message and exit 2, a save's errors are said, and ticks are u64 throughout."""

from __future__ import annotations

import json

import pytest

from narrative_debugger.app.cli.main import main
from tests.conftest import SAMPLES

SPIRAL = SAMPLES / "walkaway-spiral.json"
KAEL = 17  # kael-davan's StableId in walkaway-spiral.json


def run_whatif(capsys, *args) -> tuple[int, str, str]:
    status = main(["whatif", *map(str, args)])
    captured = capsys.readouterr()
    return status, captured.out, captured.err


def _save(tmp_path, change) -> str:
    doc = json.loads(SPIRAL.read_text(encoding="utf-8"))
    change(doc)
    path = tmp_path / "save.json"
    path.write_text(json.dumps(doc), encoding="utf-8")
    return str(path)


def _patch(tmp_path, text: str) -> str:
    path = tmp_path / "patch.json"
    path.write_bytes(text.encode("utf-8"))
    return str(path)


def test_ticks_of_2_63_and_past_are_u64_in_the_what_if(tmp_path, capsys):
    # The prompts stage put the ticks in int64 columns: OverflowError and a traceback.
    def late(doc):
        doc["journal"][-1]["tick"] = doc["saved_at_tick"] = 2**63
    status, out, err = run_whatif(capsys, _save(tmp_path, late), "--set", "relationship.sentiment_weight=0.25", "--format", "json")
    assert status == 1 and "Traceback" not in err
    sera = json.loads(out)["npcs"]["sera-venn"]  # the prompts stage ran over ticks past 2^63 (its columns are u64 now)
    assert sera["a"]["score"] == pytest.approx(3.18, abs=0.01) and sera["b"]["score"] == pytest.approx(2.76, abs=0.01)


def test_a_value_nested_too_deep_is_a_message(capsys):
    status, out, err = run_whatif(capsys, SPIRAL, "--set", "/journal/13/event/RelationshipInteraction/sentiment=" + "[" * 1000 + "]" * 1000)
    assert (status, out) == (2, "")
    assert err.strip() == ("narrative-debugger whatif: --set /journal/13/event/RelationshipInteraction/sentiment: "
                           "the value is nested too deep to read (a save's values are a few levels deep)")


@pytest.mark.parametrize("typed", ["1e-99999", "-1e-400"])
def test_a_number_too_small_to_hold_is_refused_not_zero(capsys, typed):
    status, out, err = run_whatif(capsys, SPIRAL, "--set", f"/journal/13/event/RelationshipInteraction/sentiment={typed}")
    assert (status, out) == (2, "")
    assert f"sentiment: {typed} is too small for a number a save holds: it would read as 0" in err
    assert run_whatif(capsys, SPIRAL, "--set", "/journal/13/event/RelationshipInteraction/sentiment=0e5")[0] == 1  # a zero is a zero


def test_copies_of_copies_are_refused_before_they_fill_the_memory(tmp_path, capsys):
    # A 7 KB patch doubling the document at each copy ran a minute and ended in MemoryError.
    ops = [{"op": "add", "path": "/bomb", "value": [1, 2]}] + [{"op": "copy", "from": "/bomb", "path": "/bomb/-"}] * 40
    status, out, err = run_whatif(capsys, SPIRAL, "--patch", _patch(tmp_path, json.dumps(ops)))
    assert (status, out) == (2, "")
    assert "(copy /bomb/-): the patch's copies hold more than 5,000,000 values in all" in err


@pytest.mark.parametrize("args, said", [
    (["--set", "/journal/-/tick=5"], "operation 0 (replace /journal/-/tick): '-' (after the last item) can only be added to, not read or replaced inside"),
    (["--patch", "{ops}"], 'operation 0: an operation is an object with "op" and "path", not an integer'),
    (["--patch", ""], "--patch: an empty file name (give a file)"),
    (["--patch", "{ops}", "--patch", "{ops}"], "--patch: given twice (give one file; it may hold any number of operations)"),
])
def test_misuse_is_said_in_the_tools_words(tmp_path, capsys, args, said):
    ops = _patch(tmp_path, "[1, 2, 3]")
    status, out, err = run_whatif(capsys, SPIRAL, *[a.format(ops=ops) for a in args])
    assert (status, out) == (2, "")
    assert err.strip() == f"narrative-debugger whatif: {said}"


@pytest.mark.parametrize("text, said", [
    ("\ufeff[]", "starts with a UTF-8 byte-order mark, which the game never writes (at 1:1): a patch is read as strict JSON"),
    ('[{"op": "test", "path": "/saved_at_tick", "value": 1, "value": 2}]', "duplicate key 'value' at 1:55; first at 1:43 (at 1:55): a patch is read as strict JSON"),
])
def test_a_patch_that_is_not_strict_json_says_it_is_refused(tmp_path, capsys, text, said):
    # The save reader's words said "read past it" and "the last value is used" of a patch that was refused.
    status, out, err = run_whatif(capsys, SPIRAL, "--patch", _patch(tmp_path, text))
    assert (status, out) == (2, "")
    assert said in err and "read past it" not in err and "the last value is used" not in err


def test_a_save_with_errors_is_said_as_state_says_it(tmp_path, capsys):
    def past_u64(doc):
        doc["saved_at_tick"] = 2**64
    status, _, err = run_whatif(capsys, _save(tmp_path, past_u64), "--set", "relationship.sentiment_weight=0.25")
    assert status == 1
    assert "narrative-debugger: warning: save.json has 1 error finding(s); results use what could be read (first: F002 at saved_at_tick" in err


@pytest.mark.parametrize("args, said", [
    # A snapshot value the replay derives: B's replay never takes it ("Nothing changes").
    (["--set", f"/npcs/{KAEL}/relationship/score=5"],
     f"operation 0 (replace /npcs/{KAEL}/relationship/score): npcs.{KAEL}.relationship.score of the snapshot is what the replay derives"),
    # The tuned threshold acts either way: the operation listed among the edits did nothing.
    (["--set", "npc.kael-davan.threshold=5", "--set", f"/npcs/{KAEL}/tolerance/threshold=7"],
     f"operation 0 (replace /npcs/{KAEL}/tolerance/threshold): sets kael-davan's threshold in the save, which the tuning value npc.kael-davan.threshold sets too"),
    # When the game saved is not a value of the past: moved to 2^64 - 1 it stretched the
    # window's axis while the what-if said "Nothing changes".
    (["--set", f"/saved_at_tick={2**64 - 1}"], "operation 0 (replace /saved_at_tick): saved_at_tick is when the game saved"),
    # The sizes the journal's penalties and stress changes record: B's scores did not move, and
    # each recorded entry became a T004 of B's, a dozen alike.
    (["--set", f"/npcs/{KAEL}/interaction_tolerance/walk_away_penalty=0.1"],
     f"operation 0 (replace /npcs/{KAEL}/interaction_tolerance/walk_away_penalty): kael-davan's walk_away_penalty is the size of "
     "what the journal records (each WalkAwayPenalty's penalty), which a what-if keeps as recorded: change those entries instead"),
    # Every entry about an NPC left about none, where one retargeted entry is refused.
    (["--set", "/npcs={}"], "operation 0 (replace /npcs) makes the save invalid: I010 at journal[1]"),
])
def test_an_edit_that_would_do_nothing_or_break_the_save_is_refused(capsys, args, said):
    status, out, err = run_whatif(capsys, SPIRAL, *args)
    assert (status, out) == (2, "")
    assert said in err


def test_a_derived_field_inside_a_whole_event_is_refused_as_its_own_pointer_is(tmp_path, capsys):
    doc = json.loads(SPIRAL.read_text(encoding="utf-8"))
    event = doc["journal"][13]["event"]
    recorded = event["RelationshipInteraction"]["delta"]
    event["RelationshipInteraction"].update(delta=50.0, score_after=50.0)
    patch = _patch(tmp_path, json.dumps([{"op": "replace", "path": "/journal/13/event", "value": event}]))
    status, out, err = run_whatif(capsys, SPIRAL, "--patch", patch)
    assert (status, out) == (2, "")
    assert (f"operation 0 (replace /journal/13/event): delta of journal[13] is derived by the replay from its sentiment, "
            f"message_length and conversation_turns (relationship seed, delta formula): keep the recorded {recorded}") in err
    kept = json.loads(SPIRAL.read_text(encoding="utf-8"))["journal"][13]["event"]
    kept["RelationshipInteraction"]["sentiment"] = -0.5  # the recorded derived values kept: taken, and derived anew
    patch = _patch(tmp_path, json.dumps([{"op": "replace", "path": "/journal/13/event", "value": kept}]))
    status, out, _ = run_whatif(capsys, SPIRAL, "--patch", patch, "--format", "json")
    assert status == 1 and json.loads(out)["divergence"]["b_event"]["event"]["RelationshipInteraction"]["delta"] == 0.35


def test_a_threshold_edited_in_the_snapshot_lists_the_prompts_the_tuning_name_lists(capsys):
    # Trial 47: '/npcs/17/tolerance/threshold=3' listed no prompt to regenerate, while
    # 'npc.kael-davan.threshold=3' (the same value, by name) listed 89 turns.
    outs = [json.loads(run_whatif(capsys, SPIRAL, "--set", edit, "--format", "json")[1])
            for edit in (f"/npcs/{KAEL}/tolerance/threshold=3", "npc.kael-davan.threshold=3")]
    assert outs[0]["prompts_regenerate"] == outs[1]["prompts_regenerate"] == {"kael-davan": {"first_tick": 261, "turns": 89}}


def test_the_edited_conversation_shows_its_fields_before_and_after(capsys):
    # Trial 47: the text said only "A tick 3438 RelationshipInteraction / B tick 3438
    # RelationshipInteraction", and B's score_after read 0.9999999999999999 (the first
    # conversation with Mira: score_after is the delta, f32 1.0).
    evening = SAMPLES / "evening.json"
    status, out, _ = run_whatif(capsys, evening, "--set", "/journal/43/event/RelationshipInteraction/sentiment=0.8")
    assert status == 1
    assert ("journals part at entry 43: A tick 3438 RelationshipInteraction / B tick 3438 RelationshipInteraction: "
            "sentiment -0.63 → 0.8, delta 0.285 → 1.0, score_after 0.285 → 1.0") in out
    _, out, _ = run_whatif(capsys, evening, "--set", "/journal/43/event/RelationshipInteraction/sentiment=0.8", "--format", "json")
    assert json.loads(out)["divergence"]["b_event"]["event"]["RelationshipInteraction"]["score_after"] == 1.0


def test_a_name_with_spaces_around_the_equals_sign_says_so(capsys):
    # Trial 47: "relationship.sentiment_weight = 0.25" was told "did you mean relationship.sentiment_weight?".
    status, _, err = run_whatif(capsys, SPIRAL, "--set", "relationship.sentiment_weight = 0.25")
    assert status == 2
    assert err.strip() == "narrative-debugger whatif: --set 'relationship.sentiment_weight ': write NAME=VALUE without spaces around '='"


@pytest.mark.parametrize("pointer, said", [
    # A pointer's value that JSON does not read as a number is text: the F002 says how to write it.
    ("/journal/13/event/RelationshipInteraction/sentiment=.8", "found the string '.8' (write it as a JSON number: 0.8,"),
    # A member named much like an existing one (trial 47: jsonpatch's words alone).
    ("/journal/13/event/RelationshipInteraction/sentimnt=0.8",
     "can't replace a non-existent object 'sentimnt'; did you mean /journal/13/event/RelationshipInteraction/sentiment?"),
])
def test_a_pointers_typo_is_helped(capsys, pointer, said):
    status, out, err = run_whatif(capsys, SPIRAL, "--set", pointer)
    assert (status, out) == (2, "") and said in err


def test_a_tick_edit_that_puts_later_entries_behind_is_refused(capsys):
    # Trial 49: the J001 landed on journal[6], the first entry behind, not on the edited
    # journal[5]: the edit was taken as a what-if (exit 1), where a move to the same
    # effect was refused.
    status, out, err = run_whatif(capsys, SPIRAL, "--set", "/journal/5/tick=600")
    assert (status, out) == (2, "")
    assert err.startswith("narrative-debugger whatif: operation 0 (replace /journal/5/tick) makes the save invalid: J001 at journal[6].tick: "
                          "journal tick 489 comes after tick 600")


def test_two_npcs_given_one_slug_is_refused_with_i012(capsys):
    # Trial 49: B listed kael-davan absent and his 36 conversations as lera-sessik's.
    status, out, err = run_whatif(capsys, SPIRAL, "--set", '/npcs/17/slug="lera-sessik"')
    assert (status, out) == (2, "")
    assert err.strip() == ("narrative-debugger whatif: operation 0 (replace /npcs/17/slug) makes the save invalid: I012 at npcs.17.slug: "
                           "NPCs 9 and 17 both have the slug 'lera-sessik': their interactions and every lookup by slug cannot tell them apart")


@pytest.mark.parametrize("gzipped", [False, True])
def test_a_patch_number_too_small_to_hold_is_refused_not_zero(tmp_path, capsys, gzipped):
    import gzip

    text = '[{"op": "replace", "path": "/journal/13/event/RelationshipInteraction/sentiment", "value": 1e-400}]'
    path = tmp_path / "patch.json"
    path.write_bytes(gzip.compress(text.encode()) if gzipped else text.encode())
    status, out, err = run_whatif(capsys, SPIRAL, "--patch", path)
    assert (status, out) == (2, "")
    assert err.strip() == f"narrative-debugger whatif: --patch {path}: the number 1e-400 is too small for a number a save holds: it would read as 0"
    zero = _patch(tmp_path, text.replace("1e-400", "0.0e-400"))
    assert run_whatif(capsys, SPIRAL, "--patch", zero)[0] == 1  # a zero is a zero


def test_a_pointer_into_another_kind_of_entry_says_what_the_entry_is(capsys):
    status, out, err = run_whatif(capsys, SPIRAL, "--set", "/journal/10/event/RelationshipInteraction/sentiment=0.8")
    assert (status, out) == (2, "")
    assert err.strip() == ("narrative-debugger whatif: operation 0 (replace /journal/10/event/RelationshipInteraction/sentiment): "
                           "member 'RelationshipInteraction' not found; journal[10] is a DialogueLine, not a RelationshipInteraction "
                           "(the nearest is journal[13])")


def test_a_huge_pointer_is_cut_and_an_npc_name_in_another_case_is_suggested(capsys):
    status, out, err = run_whatif(capsys, SPIRAL, "--set", "/" + "x" * 400_000 + "=1")
    assert (status, out) == (2, "") and len(err) < 400
    status, out, err = run_whatif(capsys, SPIRAL, "--set", "npc.KAEL-DAVAN.threshold=5")
    assert (status, out) == (2, "")
    assert "has no NPC 'KAEL-DAVAN'; did you mean npc.kael-davan.threshold?" in err


def test_scores_in_the_json_carry_no_float_noise(capsys):
    # Trial 49: B's score came out 21.781000000000002 where the recorded one is 21.781.
    status, out, err = run_whatif(capsys, SPIRAL, "--set", "relationship.sentiment_weight=0.25", "--format", "json")
    assert status == 1
    scores = [end["score"] for npc in json.loads(out)["npcs"].values() for end in (npc["a"], npc["b"]) if end]
    assert scores and all(score == float(f"{score:.12g}") for score in scores)


@pytest.mark.parametrize("op", ["replace", "remove"])
def test_a_pointer_index_past_python_s_digit_limit_is_a_message(tmp_path, capsys, op):
    # Trial 49: 4 301 digits raised ValueError in the entry-edit path (a traceback, exit 1).
    huge = "9" * 4301
    status, out, err = run_whatif(capsys, SPIRAL, "--set", f"/journal/{huge}/event/X/y=5")
    assert (status, out) == (2, "") and "Traceback" not in err
    assert err.strip().endswith("an index of more than 4,300 digits is past the end of any list")
    patch = _patch(tmp_path, json.dumps([{"op": op, "path": f"/journal/{huge}/tick", "value": 5}]))
    status, out, err = run_whatif(capsys, SPIRAL, "--patch", patch)
    assert (status, out) == (2, "") and "set_int_max_str_digits" not in err and len(err) < 400


def test_level_bounds_are_judged_once_all_are_set_and_a_name_set_twice_counts_its_later_value(capsys):
    # Trial 49: stranger=50 then acquaintance=55 was refused ("50, 40, 60, 80"), the other
    # order taken; a weight of 50 then 0.3 was refused though the later value counts.
    for order in (("levels.stranger=50", "levels.acquaintance=55"), ("levels.acquaintance=55", "levels.stranger=50")):
        status, out, err = run_whatif(capsys, SPIRAL, "--set", order[0], "--set", order[1], "--format", "json")
        assert status in (0, 1) and err == ""  # taken (this save's levels may not move)
        assert [e["name"] for e in json.loads(out)["edits"]] == [order[0].split("=")[0], order[1].split("=")[0]]
    status, out, err = run_whatif(capsys, SPIRAL, "--set", "relationship.sentiment_weight=50", "--set", "relationship.sentiment_weight=0.3", "--format", "json")
    assert status == 1 and json.loads(out)["edits"] == [{"op": "set", "name": "relationship.sentiment_weight", "value": 0.3}]
    status, out, err = run_whatif(capsys, SPIRAL, "--set", "levels.stranger=50", "--set", "levels.friend=45")
    assert (status, out) == (2, "")
    assert err.strip() == ("narrative-debugger whatif: --set levels.stranger, levels.friend: level bounds must not fall "
                           "(each at least the one before): 50, 40, 45, 80")

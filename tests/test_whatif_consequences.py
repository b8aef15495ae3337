"""What if (issue 38): what a what-if lists as (not) happening is what B's replay did.

A penalty listed under ``would_not_happen`` is not in B's score, one listed under
``would_happen`` is (interaction seed §8: "if threshold exceeded, apply
walk_away_penalty"; save-format §5); a fault the recorded run has already (a line fired
while a prerequisite failed, a penalty within the threshold) is no consequence of the edit.
"""

from __future__ import annotations

import json

import pytest

from narrative_debugger.app.cli.main import main
from narrative_debugger.models.domain.tuning import DEFAULT_TUNING
from narrative_debugger.models.whatif.run import what_if
from tests.conftest import SAMPLES


def _seed_delta(sentiment, length, turns):
    """The relationship seed's delta formula, written out by hand for the test."""
    return max(-1.0, min(1.0, sentiment * 0.5 + min(0.3, length / 500) + min(0.2, turns * 0.05) + 0.1))


def _whatif_json(capsys, *args) -> tuple[int, dict]:
    status = main(["whatif", *map(str, args), "--format", "json"])
    return status, json.loads(capsys.readouterr().out)


def _kael_at(w, tick: int) -> tuple[float, float]:
    return w.comparison.scores_at("kael-davan", tick)


#: evening.json: Kael's only walk-away (journal[200], tick 15163) is #1 of his
#: walk_away_threshold 1, so no penalty follows it; a WalkAwayPenalty added after it.
ADDED_PENALTY = {"op": "add", "path": "/journal/202",
                 "value": {"tick": 15163, "event": {"WalkAwayPenalty": {"target": 17, "penalty": 0.36, "score_after": 1.026}}}}


def test_an_added_penalty_within_the_threshold_is_listed_and_not_applied(capsys, tmp_path):
    save = SAMPLES / "evening.json"
    journal = json.loads(save.read_text(encoding="utf-8"))["journal"]
    e = journal[170]["event"]["RelationshipInteraction"]  # Kael's last score entry before the walk-away
    assert e["target"] == 17 and (e["sentiment"], e["message_length"], e["conversation_turns"]) == (0.29, 190, 5)
    # 0.29 * 0.5 + min(0.3, 190/500) + min(0.2, 5 * 0.05) + 0.1 = 0.145 + 0.3 + 0.2 + 0.1 = 0.745
    assert _seed_delta(0.29, 190, 5) == pytest.approx(0.745)
    before = e["score_after"]
    assert before == pytest.approx(0.641 + 0.745)  # 1.386
    patch = tmp_path / "penalty.json"
    patch.write_text(json.dumps([ADDED_PENALTY]), encoding="utf-8")
    status, doc = _whatif_json(capsys, save, "--patch", patch)
    assert status == 1
    assert doc["would_not_happen"] == [{"journal_index": 202, "tick": 15163, "event": "WalkAwayPenalty",
                                        "reason": "kael-davan: walk-away #1 is within the walk-away threshold of 1: no WalkAwayPenalty follows it"}]
    # ... and B's score does not take it (the trial's B read 1.386 − 0.36 = 1.026, A 1.386).
    kael = doc["npcs"]["kael-davan"]
    assert kael["score_first_differs_tick"] is None and kael["b"]["score"] == kael["a"]["score"]
    assert not [f for f in doc["findings"]["only_b"] if f["code"] == "T004"]
    w = what_if(save, None, [ADDED_PENALTY])
    assert _kael_at(w, 15163) == (pytest.approx(before), pytest.approx(before))
    assert _kael_at(w, w.comparison.tick_b) == (pytest.approx(21.781), pytest.approx(21.781))
    status, out = main(["whatif", str(save), "--patch", str(patch)]), capsys.readouterr().out
    assert "kael-davan: A" not in out  # no score difference in the text either
    assert "journal[202] tick 15163 WalkAwayPenalty: kael-davan: walk-away #1 is within" in out


def test_an_added_penalty_the_threshold_calls_for_is_applied():
    # Kael's walk_away_threshold tuned to 0: walk-away #1 is past it, and the added
    # penalty pays for it: 1.386 − 0.36 = 1.026, and nothing is missing or left out.
    tuning = DEFAULT_TUNING.with_value("npc.kael-davan.walk_away_threshold", 0)
    w = what_if(SAMPLES / "evening.json", None, [ADDED_PENALTY], tuning=tuning)
    assert _kael_at(w, 15163) == (pytest.approx(1.386), pytest.approx(1.386 - 0.36))
    assert w.would_not_happen == [] and w.would_happen == []


def test_a_removed_penalty_the_threshold_calls_for_is_listed_and_applied(capsys, tmp_path):
    # walkaway-spiral.json: Kael's walk-away #2 (journal[131], tick 7652) is past his
    # walk_away_threshold 1; its penalty journal[133] (0.43) removed. The rule calls for it:
    # listed under would_happen, and B's score takes it as A's did: 0.8 + 0.83 − 0.43 = 1.2.
    assert _seed_delta(0.4, 230, 5) + _seed_delta(0.46, 339, 6) == pytest.approx(1.63)
    patch = tmp_path / "remove.json"
    patch.write_text(json.dumps([{"op": "remove", "path": "/journal/133"}]), encoding="utf-8")
    status, doc = _whatif_json(capsys, SAMPLES / "walkaway-spiral.json", "--patch", patch, "--tick", "7652")
    assert status == 1
    assert doc["would_happen"] == [{"journal_index": 131, "tick": 7652, "event": "WalkAwayPenalty",
                                    "reason": "kael-davan: walk-away #2 is past the walk-away threshold of 1: a WalkAwayPenalty of 0.43 would follow"}]
    kael = doc["npcs"]["kael-davan"]
    assert kael["a"]["score"] == pytest.approx(1.63 - 0.43) and kael["b"]["score"] == pytest.approx(1.63 - 0.43)
    assert kael["score_first_differs_tick"] is None


def test_a_line_fired_while_failing_in_the_recorded_run_is_not_listed(capsys, tmp_path):
    # qa-faults.json: journal[0] fires the-last-shift_m_s_050 at tick 309 with its prerequisites
    # failing (M001 in the recorded run). A conversation added before it changes which clauses
    # fail, not whether the line should have fired: it was listed as "would not have happened".
    save = SAMPLES / "qa-faults.json"
    patch = tmp_path / "start.json"
    patch.write_text(json.dumps([{"op": "add", "path": "/journal/0", "value": {
        "tick": 300, "event": {"InteractionStarted": {"target": 17, "player_initiated": True, "location": "dock-ward"}}}}]), encoding="utf-8")
    status, doc = _whatif_json(capsys, save, "--patch", patch)
    assert status == 1
    assert doc["would_not_happen"] == []
    # It stays a finding of each side, worded as each replay found it.
    assert [f["code"] for f in doc["findings"]["only_a"] if f["code"] == "M001"] == ["M001"]
    assert [f["message"] for f in doc["findings"]["only_b"] if f["code"] == "M001"] == [
        "monologue 'the-last-shift_m_s_050' fired at tick 309 but its prerequisites did not hold: "
        "0 walked_away interaction(s) with kael-davan, needs 1"]


def test_a_penalty_within_the_threshold_in_the_recorded_run_stays_as_recorded(capsys):
    # qa-faults.json: sera-venn's walk-away #1 (journal[881]) is within her walk_away_threshold 1,
    # yet journal[883] penalises it (T004 in the recorded run). Tuned to 2 it is as much within:
    # the fault is the recorded game's, not a consequence of the edit. It was listed as a penalty
    # that would not happen, and B's score left it out (19.42 against 19.29).
    save = SAMPLES / "qa-faults.json"
    status, doc = _whatif_json(capsys, save, "--set", "npc.sera-venn.walk_away_threshold=2")
    assert doc["would_not_happen"] == [] and doc["would_happen"] == []
    sera = doc["npcs"]["sera-venn"]
    assert sera["score_first_differs_tick"] is None and sera["b"]["score"] == sera["a"]["score"]
    # The T004 of each side, worded with its threshold.
    assert [f["message"] for f in doc["findings"]["only_b"]] == ["sera-venn: walk-away #1 is within the threshold of 2, yet it is penalised"]
    assert status == 1
    # Tuned to its recorded value: nothing changes at all.
    status, doc = _whatif_json(capsys, save, "--set", "npc.sera-venn.walk_away_threshold=1")
    assert status == 0 and doc["would_not_happen"] == []

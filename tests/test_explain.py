"""Why-chains (issue 11): the seed's numbers, chain continuity, why-not on monologue lines,
the budget arithmetic of a dropped card, and the ``why`` command's contract."""

from __future__ import annotations

import copy
import json
import re
import shutil

import pytest
from narrative_debugger.app.cli.main import main
from narrative_debugger.models.content.monologue import evaluate
from narrative_debugger.models.explain import UnknownTarget, explain
from narrative_debugger.models.explain.tracks import ATTRIBUTES
from narrative_debugger.models.playthrough import Playthrough
from narrative_debugger.models.prompt.builder import PromptBuilder
from narrative_debugger.models.prompt.tokens import get_encoder
from narrative_debugger.models.timeline.state_json import state_json

from tests.conftest import CONTENT, DATA, SAMPLES

SAVES = ["evening.json", "walkaway-spiral.json", "abandoned-confrontation.json", "qa-faults.json"]
NUMERIC = ["score", "stress", "walk_aways", "total_interactions", "positive_interactions", "negative_interactions"]
# Journal variants that set each value, for counting the events independently of the index.
SCORE_KINDS = {"RelationshipInteraction", "WalkAwayPenalty"}


@pytest.fixture(scope="module")
def plays():
    return {name: Playthrough.open(SAMPLES / name, CONTENT) for name in SAVES}


def ev(tick, variant, **fields):
    return {"tick": tick, "event": {variant: fields}}


# ----- the seed's worked deltas -----
def test_seed_worked_deltas_appear_in_the_score_chain(tmp_path):
    doc = json.loads((DATA / "minimal.json").read_text())
    doc["journal"] += [
        ev(166, "RelationshipInteraction", target=17, sentiment=0.4, message_length=100, conversation_turns=1, delta=0.55, score_after=0.55),
        ev(167, "RelationshipInteraction", target=17, sentiment=-0.3, message_length=20, conversation_turns=1, delta=0.04, score_after=0.59),
        ev(168, "RelationshipInteraction", target=17, sentiment=0.8, message_length=800, conversation_turns=5, delta=1.0, score_after=1.59),
    ]
    path = tmp_path / "seed.json"
    path.write_text(json.dumps(doc))
    play = Playthrough.open(path, CONTENT)
    exp = explain(play, "npc:kael-davan.score", 170)
    details = [s.detail for s in exp.steps]
    assert details[0] == "delta = 0.4×0.5 + min(0.3, 100/500) + min(0.2, 1×0.05) + 0.1 = 0.55 (relationship seed formula); 0.00 → 0.55"
    assert details[1] == "delta = -0.3×0.5 + min(0.3, 20/500) + min(0.2, 1×0.05) + 0.1 = 0.04 (relationship seed formula); 0.55 → 0.59"
    assert details[2] == "delta = 0.8×0.5 + min(0.3, 800/500) + min(0.2, 5×0.05) + 0.1 = 1.00 (relationship seed formula); 0.59 → 1.59"
    assert [s.journal_index for s in exp.steps] == [4, 5, 6]
    assert exp.value == pytest.approx(1.59)
    # the counters follow the seed's sentiment bands (> 0.2 positive, < -0.2 negative)
    assert explain(play, "npc:kael-davan.positive_interactions", 170).value == 2
    neg = explain(play, "npc:kael-davan.negative_interactions", 170)
    assert neg.value == 1 and "sentiment -0.3 < −0.2: negative" in neg.steps[0].detail


def test_a_clamped_delta_and_score_say_so(tmp_path):
    doc = json.loads((DATA / "minimal.json").read_text())
    doc["journal"] += [ev(166, "RelationshipInteraction", target=17, sentiment=1.0, message_length=1000, conversation_turns=9, delta=1.0, score_after=1.0)]
    path = tmp_path / "clamp.json"
    path.write_text(json.dumps(doc))
    exp = explain(Playthrough.open(path, CONTENT), "npc:kael-davan.score", 170)
    assert "= 1.10, clamped to 1.00 (relationship seed formula)" in exp.steps[0].detail


# ----- numbers in the text output -----
NOISE = re.compile(r"(?<![\w.])-?\d+\.\d{3,}|\de[-+]\d|(?<![\w.−])-0(\.0+)?(?![\d.])|−0\.00")
#: A sum written out in a why text: "0.555 − 0.430 = 0.125". It may take up to 6
#: decimals (``fmt_sum``), so it is checked for exactness instead of noise.
WRITTEN_SUM = re.compile(r"(?<![\w.])(-?\d+(?:\.\d+)?) ([+−]) (\d+(?:\.\d+)?) = (-?\d+(?:\.\d+)?)(?![\d.])")


#: The seed's delta formula written out: "delta = 0.4×0.5 + min(0.3, 100/500) + min(0.2, 1×0.05) + 0.1 = 0.55".
FORMULA = re.compile(r"delta = (-?[\d.]+)×0\.5 \+ min\(0\.3, (-?[\d.]+)/500\) \+ min\(0\.2, (-?[\d.]+)×0\.05\) \+ 0\.1 = (-?\d+\.\d+)(?:, clamped to -?\d+\.\d+)?")


def sums_are_exact(text: str) -> str:
    """``text`` without its written-out sums and formula results, after asserting that
    each adds up exactly as written (carried bug: "0.56 − 0.43 = 0.12"), a formula's
    result rounded to the decimals it is written with."""
    from decimal import Decimal

    for match in FORMULA.finditer(text):
        sentiment, length, turns, result = (Decimal(g) for g in match.groups())
        exact = sentiment * Decimal("0.5") + min(Decimal("0.3"), length / 500) + min(Decimal("0.2"), turns * Decimal("0.05")) + Decimal("0.1")
        assert abs(exact - result) <= Decimal(1).scaleb(result.as_tuple().exponent) / 2, match.group(0)
    text = FORMULA.sub("FORMULA", text)
    text = re.sub(r"the save records delta -?\d+\.\d+ \(R002\)", "RECORDED", text)  # at its row's decimals
    for match in WRITTEN_SUM.finditer(text):
        a, op, b, result = match.groups()
        total = Decimal(a) - Decimal(b) if op == "−" else Decimal(a) + Decimal(b)
        assert total == Decimal(result), match.group(0)
    return WRITTEN_SUM.sub("SUM", text)


def test_why_text_shows_score_points_with_2_decimals_and_no_float_noise(tmp_path, capsys):
    """Float noise in a save (0.1 + 0.2, -0.0, 1e-05, 1e6) reads as score points with 2
    decimals in ``why`` text, like ``state``; ``--format json`` keeps the full values."""
    doc = json.loads((DATA / "minimal.json").read_text())
    noisy = 0.1 + 0.2  # 0.30000000000000004
    first = 0.5000000000000001  # the delta of noisy, 100 characters, 1 turn, as a game's floats may record it
    third = 1e-05 * 0.5 + 0.3 + 0.1 + 0.1
    doc["journal"] += [
        ev(166, "RelationshipInteraction", target=17, sentiment=noisy, message_length=100, conversation_turns=1, delta=first, score_after=first),
        ev(167, "WalkAwayPenalty", target=17, penalty=first, score_after=-0.0),
        ev(168, "RelationshipInteraction", target=17, sentiment=1e-05, message_length=1000000, conversation_turns=2, delta=third, score_after=third),
    ]
    path = tmp_path / "noisy.json"
    path.write_text(json.dumps(doc))
    assert noisy == 0.30000000000000004 and third == 0.5000049999999999
    assert main(["why", str(path), "npc:kael-davan.score", "--content", str(CONTENT), "--tick", "170"]) == 0
    text = capsys.readouterr().out
    lines = text.splitlines()
    assert lines[0] == "npc:kael-davan.score at tick 170: 0.50"
    assert "is 0.50, from 2 × delta formula (+1.00), 1 × walk-away penalty (−0.50); last changed at tick 168 by RelationshipInteraction (0.00 → 0.50)" in lines[1]
    assert "           0.00 → 0.50" in lines and "           0.50 → 0.00" in lines
    assert "           delta = 0.3×0.5 + min(0.3, 100/500) + min(0.2, 1×0.05) + 0.1 = 0.50 (relationship seed formula); 0.00 → 0.50" in lines
    assert any(line.endswith(": 0.50 − 0.50 = 0.00") for line in lines)
    assert "           delta = 0.00001×0.5 + min(0.3, 1000000/500) + min(0.2, 2×0.05) + 0.1 = 0.50 (relationship seed formula); 0.00 → 0.50" in lines
    assert not any(noise in text for noise in ("0.30000000000000004", "0.5000000000000001", "e-05", "e+06", "-0.00", "−0.00", "0.5000")), text
    assert main(["why", str(path), "npc:kael-davan.total_interactions", "--content", str(CONTENT), "--tick", "170"]) == 0
    counters = capsys.readouterr().out
    assert "sentiment 0.3 > 0.2: positive; 0 + 1 = 1" in counters and "sentiment 0.00001 is within ±0.2" in counters
    assert "e-05" not in counters and "0.30000000000000004" not in counters, counters
    assert main(["why", str(path), "npc:kael-davan.score", "--content", str(CONTENT), "--tick", "170", "--format", "json", "--limit", "1"]) == 0
    full = json.loads(capsys.readouterr().out)
    assert full["value"] == third and full["steps"][0]["before"] == 0.0 and full["steps"][0]["after"] == third
    assert full["folded"]["by_rule"]["delta formula (relationship seed, Score Calculation)"]["sum"] == first
    assert list(full)[:6] == ["target", "tick", "value", "summary", "steps", "folded"]


def test_why_text_on_every_target_kind_of_every_sample_save_has_no_float_noise(plays):
    """Every target (NPC values and levels, facts, entities, lines, cards, history) at
    the saved tick: no number with 3 or more decimals, exponent or negative zero, but
    in a sum written out, which adds up exactly as written."""
    from narrative_debugger.app.cli.commands.why import format_text
    from narrative_debugger.models.explain import npc_targets

    for name, play in plays.items():
        builder = PromptBuilder(play)
        slugs = [n.slug for n in play.save.npcs.values()]
        targets = [
            *npc_targets(play), *(f"npc:{s}.level" for s in slugs), *(f"fact:{f}" for f in play.index.facts),
            *(f"entity:{e}" for e in play.index.entities), *(f"line:{x}" for x in play.content.monologues),
            *(f"card:{s}/{c.id}" for s in slugs[:2] for c in play.content.cards), *(f"history:{s}" for s in slugs),
        ]
        for target in targets:
            text = format_text(explain(play, target, play.save.saved_at_tick, 5, builder=builder))
            rest = sums_are_exact(text)
            assert not NOISE.search(rest), (name, target, NOISE.search(rest).group(0))
        score = format_text(explain(play, f"npc:{slugs[0]}.score", play.save.saved_at_tick, 5, builder=builder))
        state = state_json(play, play.save.saved_at_tick)["npcs"][slugs[0]]["score"]
        assert score.splitlines()[0].endswith(f": {state:.2f}")


def test_why_text_prints_the_targets_own_keys_as_text_not_json(capsys):
    """The keys after the steps (clauses, nearest miss, crossings, budget...) read as
    lines: the text output used to end with raw JSON (carried bug list, issue 10)."""
    assert main(["why", str(SAMPLES / "walkaway-spiral.json"), "npc:kael-davan.stress", "--content", str(CONTENT)]) == 0
    text = capsys.readouterr().out
    crossings = text.splitlines()[text.splitlines().index("crossings:") + 1]
    # The seed's walk-away delta of 6 takes stress 30 -> 36 across the threshold.
    assert crossings.startswith("  - journal index 234, tick 16598, before 30, after 36, direction up, walk away walk-away #6")
    assert main(["why", str(SAMPLES / "evening.json"), "line:the-last-shift_m_s_090", "--tick", "100000", "--content", str(CONTENT)]) == 0
    lines = capsys.readouterr().out.splitlines()
    at = lines.index("clauses:")
    assert lines[at + 1] == "  - clause person.kael_debts ≥ knows_details, holds no, since tick —, journal index —, last held tick —"
    assert lines[at + 2] == "  - clause ≥ 2 completed interaction(s) with kael-davan, holds yes, since tick 12273, journal index 169"
    assert lines[at + 3 :] == ["nearest miss:", "  tick: 100000", "  failing: person.kael_debts is knows_of, needs knows_details"]
    assert main(["why", str(SAMPLES / "evening.json"), "card:kael-davan/night-boats", "--tick", "33548", "--content", str(CONTENT)]) == 0
    text = capsys.readouterr().out
    assert "\nbudget:\n  budget: 8192\n  reserved:\n    - label narrator, tokens 69\n" in text
    assert "\n  lore budget: 2987\n" in text
    for out in (text, "\n".join(lines), crossings):
        assert '{"' not in out and '": ' not in out


# ----- chain continuity -----
def _events_up_to(play: Playthrough, npc: int, kinds: set, tick: int) -> int:
    j = play.save.journal
    return sum(1 for t, k, d in zip(play.index.ticks, j.kinds, j.data) if t <= tick and k in kinds and d and d.get("target") == npc)


def _ticks(play: Playthrough) -> list[int]:
    ticks = sorted(set(play.index.ticks))
    return [0, ticks[len(ticks) // 5], ticks[len(ticks) // 2], ticks[4 * len(ticks) // 5], play.save.saved_at_tick]


@pytest.mark.parametrize("name", SAVES)
def test_numeric_chains_add_up_and_equal_state(plays, name):
    play = plays[name]
    for tick in _ticks(play):
        state = state_json(play, tick)
        snapshot = play.state_at(tick)
        for npc in play.save.npcs.values():
            for attr in NUMERIC:
                for limit in (0, 3, 10_000):
                    exp = explain(play, f"npc:{npc.slug}.{attr}", tick, limit)
                    value = ATTRIBUTES[attr].get(snapshot.npc(npc.stable_id))
                    assert exp.value == value
                    folded = exp.folded.total if exp.folded else 0
                    count = len(exp.steps) + (exp.folded.count if exp.folded else 0)
                    if exp.steps:
                        assert 0 + folded == pytest.approx(exp.steps[0].before, abs=1e-6)
                        for a, b in zip(exp.steps, exp.steps[1:]):
                            assert a.after == b.before
                            assert a.journal_index < b.journal_index and a.tick <= b.tick <= tick
                        assert exp.steps[-1].after == exp.value
                    else:
                        assert folded == pytest.approx(exp.value, abs=1e-6)
                    assert len(exp.steps) <= limit
                    if attr == "score":
                        assert exp.value == state["npcs"][npc.slug]["score"]
                        assert count == _events_up_to(play, npc.stable_id, SCORE_KINDS, tick)
                    elif attr == "stress":
                        assert exp.value == state["npcs"][npc.slug]["stress"]
                        assert count == _events_up_to(play, npc.stable_id, {"StressChanged"}, tick)
                    elif attr == "walk_aways":
                        assert exp.value == state["npcs"][npc.slug]["walk_aways"] == count
                    else:  # each counted event adds exactly one
                        assert count == value


def test_stress_crossings_and_summary_on_walkaway_spiral(plays):
    play = plays["walkaway-spiral.json"]
    exp = explain(play, "npc:kael-davan.stress", play.save.saved_at_tick, 5)
    assert exp.value == 78 and exp.extra["threshold"] == 30
    up = [c for c in exp.extra["crossings"] if c["direction"] == "up"]
    assert up and up[-1]["before"] <= 30 < up[-1]["after"]
    j = play.save.journal
    assert j.kinds[up[-1]["journal_index"]] == "StressChanged"
    assert f"over its threshold 30 since tick {exp.extra['crossings'][-1]['tick']}" in exp.summary
    # The summary names the walk-away that took him over (README: "since which tick, and which walk-away").
    assert up[-1]["walk_away"] == "walk-away #6, InteractionWalkedAway #233 at tick 16598: interaction.kael-davan_008 Active → WalkedAway"
    assert exp.summary.endswith("since tick 16598 (journal #234: 30 → 36), raised by " + up[-1]["walk_away"] + ".")
    score = explain(play, "npc:kael-davan.score", play.save.saved_at_tick, 5)
    assert "walk-away penalty" in score.summary and score.value == 0.0
    assert any("clamped to 0.00" in s.detail for s in score.steps)


def test_a_walk_away_stress_step_names_its_walk_away(plays, capsys):
    """Schema §7.2/§8.1: StressChanged cause walk_away follows a walk-away of the NPC at the
    same tick; the step names that walk-away (ordinal, journal index, tick, interaction)."""
    play = plays["walkaway-spiral.json"]
    exp = explain(play, "npc:kael-davan.stress", play.save.saved_at_tick, 2)
    last = exp.steps[-1]
    assert (last.journal_index, last.tick, last.before, last.after) == (492, 36630, 72, 78)
    assert play.save.journal.kinds[491] == "InteractionWalkedAway"
    assert last.detail == ("72 + 6 = 78 (cause walk_away: walk-away #13, InteractionWalkedAway #491 at tick 36630: "
                           "interaction.kael-davan_016 Active → WalkedAway); walk_away_stress_delta 6")
    # A confrontation abandoned is a walk-away too.
    play = plays["abandoned-confrontation.json"]
    exp = explain(play, "npc:kael-davan.stress", 19869, 1)
    assert exp.steps[-1].journal_index == 280
    assert ("cause walk_away: walk-away #1, InteractionConflictAbandoned #279 at tick 19869: "
            "interaction.kael-davan_005 Confrontation → ConflictAbandoned") in exp.steps[-1].detail
    # Other causes keep their word.
    assert any(s.detail.endswith("(cause rest)") for s in explain(play, "npc:kael-davan.stress", play.save.saved_at_tick, 50).steps)
    # The CLI prints the same step.
    assert main(["why", str(SAMPLES / "walkaway-spiral.json"), "npc:kael-davan.stress", "--limit", "1"]) == 0
    assert "walk-away #13, InteractionWalkedAway #491 at tick 36630" in capsys.readouterr().out


def test_a_walk_away_stress_step_without_its_walk_away_says_so(tmp_path):
    data = json.loads((SAMPLES / "walkaway-spiral.json").read_text(encoding="utf-8"))
    del data["journal"][491]  # the InteractionWalkedAway before StressChanged #492
    path = tmp_path / "no-walk-away.json"
    path.write_text(json.dumps(data), encoding="utf-8")
    play = Playthrough.open(path, CONTENT)
    step = explain(play, "npc:kael-davan.stress", play.save.saved_at_tick, 1).steps[-1]
    # It said "no walk-away of Kael Davan precedes it at tick 36630": walk-away #12 does, at an earlier tick.
    assert step.journal_index == 491 and ("cause walk_away: no walk-away of Kael Davan at tick 36630; the last before it is "
                                          "walk-away #12, InteractionWalkedAway #463 at tick 34203: interaction.kael-davan_015 "
                                          "Active → WalkedAway)") in step.detail


def test_level_names_the_crossing_into_the_current_band(plays):
    play = plays["evening.json"]
    exp = explain(play, "npc:lera-sessik.level", play.save.saved_at_tick, 50)
    assert exp.value == "Close Friend"
    last = exp.steps[-1]
    assert last.after == "Close Friend" and "crosses 80" in last.detail
    assert f"since tick {last.tick}" in exp.summary
    assert exp.extra["score"]["value"] == 100.0


def test_shared_references_duplicates_and_drops(plays):
    play = plays["evening.json"]
    exp = explain(play, "npc:lera-sessik.shared_references", play.save.saved_at_tick, 10_000)
    rules = [s.rule.split(" (")[0] for s in exp.steps]
    assert rules.count("duplicate ignored") == 23
    assert rules.count("oldest dropped past 10") >= 2
    drop = next(s for s in exp.steps if s.rule.startswith("oldest dropped"))
    kind = play.save.journal.data[drop.journal_index]["kind"]
    assert len(drop.before[kind]) == len(drop.after[kind]) == 10 and drop.before[kind][1:] == drop.after[kind][:-1]
    assert exp.steps[-1].after == exp.value


# ----- facts -----
def test_interaction_fact_path_through_the_state_machine(plays):
    play = plays["abandoned-confrontation.json"]
    fid = next(f for f, v in play.index.facts.items() if v.values[-1].interaction and v.values[-1].interaction.interaction_state.name == "ConflictAbandoned")
    exp = explain(play, f"fact:{fid}", play.save.saved_at_tick)
    assert [p["to"] for p in exp.extra["path"]] == ["Active", "Confrontation", "ConflictAbandoned"]
    assert [p["event"] for p in exp.extra["path"]] == ["InteractionStarted", "InteractionConfrontation", "InteractionConflictAbandoned"]
    assert exp.value["confidence"] == "KnowsDetails" and exp.value["interaction_state"] == "ConflictAbandoned"


def test_ordinary_fact_chain_ends_in_the_state_value(plays):
    play = plays["evening.json"]
    state = state_json(play, play.save.saved_at_tick)
    for fid, fact in state["facts"].items():
        exp = explain(play, f"fact:{fid}", play.save.saved_at_tick, 2)
        assert {k: exp.value[k] for k in fact} == fact
        assert exp.steps[-1].after == exp.value


# ----- monologue lines: why and why not -----
def _first(play, kind, npc, n=1):
    """(journal index, tick) of the n-th entry of ``kind`` for ``npc``."""
    seen = 0
    for i, (k, d) in enumerate(zip(play.save.journal.kinds, play.save.journal.data)):
        if k == kind and d.get("target") == npc:
            seen += 1
            if seen == n:
                return i, play.index.ticks[i]
    raise AssertionError("not found")


def test_why_not_walked_away_from_kael(plays):
    play = plays["walkaway-spiral.json"]
    kael = play.save.npc_by_slug("kael-davan").stable_id
    i, t = _first(play, "InteractionWalkedAway", kael)
    before = explain(play, "line:the-last-shift_m_s_050", t - 1)
    assert before.extra["eligible"] is False
    walk = before.extra["clauses"][1]
    assert walk["clause"] == "≥ 1 walked_away interaction(s) with kael-davan"
    assert walk["holds"] is False and walk["journal_index"] is None and walk["last_held_tick"] is None
    assert "0 walked_away interaction(s) with kael-davan, needs 1" in before.extra["nearest_miss"]["failing"]
    after = explain(play, "line:the-last-shift_m_s_050", t)
    assert after.extra["eligible"] is True
    assert after.extra["clauses"][1] == {"clause": walk["clause"], "holds": True, "since_tick": t, "journal_index": i}
    assert evaluate(play.content.monologues["the-last-shift_m_s_050"], play.state_at(t).knowledge).eligible


def test_why_not_three_completed_conversations_with_lera(plays):
    play = plays["evening.json"]
    lera = play.save.npc_by_slug("lera-sessik").stable_id
    i, t = _first(play, "InteractionCompleted", lera, 3)
    _, t2 = _first(play, "InteractionCompleted", lera, 2)
    exp = explain(play, "line:the-last-shift_m_s_030", t - 1)
    assert exp.extra["eligible"] is False
    clause = exp.extra["clauses"][0]
    assert clause["holds"] is False and clause["clause"] == "≥ 3 completed interaction(s) with lera-sessik"
    assert exp.extra["nearest_miss"] == {"tick": t - 1, "failing": ["2 completed interaction(s) with lera-sessik, needs 3"]}
    assert "cannot fire" in exp.summary and "has never held" in exp.summary
    now = explain(play, "line:the-last-shift_m_s_030", play.save.saved_at_tick)
    assert now.extra["clauses"][0]["journal_index"] == i and now.extra["clauses"][0]["since_tick"] == t
    assert t2 < t


def test_fired_line_m001_reasoning(plays):
    bad = explain(plays["qa-faults.json"], "line:the-last-shift_m_s_050", plays["qa-faults.json"].save.saved_at_tick)
    first = bad.extra["fired"][0]
    assert first["journal_index"] == 0 and first["held"] is False and first["failing"]
    assert "M001" in bad.summary
    good = explain(plays["evening.json"], "line:the-last-shift_m_s_050", plays["evening.json"].save.saved_at_tick)
    assert good.extra["fired"] and all(f["held"] for f in good.extra["fired"])


def test_a_clause_that_stopped_holding_says_when_it_last_held(plays):
    play = plays["evening.json"]
    # the-last-shift_m_s_060 needs a confrontation in progress: it holds during one, then stops.
    exp = explain(play, "line:the-last-shift_m_s_060", play.save.saved_at_tick)
    clause = exp.extra["clauses"][-1]
    assert clause["holds"] is False and clause["journal_index"] is not None
    assert play.save.journal.kinds[clause["journal_index"]] in ("InteractionCompleted", "InteractionConflictAbandoned")
    assert clause["last_held_tick"] == clause["since_tick"] - 1
    assert exp.extra["nearest_miss"]["failing"] == []  # it could have fired while the confrontation lasted


# ----- the prompt: a dropped card, with exact arithmetic -----
def test_dropped_card_budget_arithmetic(tmp_path):
    content = tmp_path / "content"
    shutil.copytree(CONTENT, content)
    prompt = content / "prompt.yaml"
    prompt.write_text(prompt.read_text().replace("context_token_budget: 8192", "context_token_budget: 1200"))
    assert "context_token_budget: 1200" in prompt.read_text()
    play = Playthrough.open(SAMPLES / "evening.json", content)
    exp = explain(play, "card:kael-davan/night-boats", 33548)
    doc = exp.to_json()
    assert doc["included"] is False and doc["value"] == "dropped"
    preview = PromptBuilder(play).build("kael-davan", 33548)
    counter = get_encoder("cl100k_base")
    reserved = sum(n for _, n in preview.reserved)
    assert preview.available == max(256, 1200 - reserved) == doc["budget"]["available"]
    assert doc["lore_budget"] == int(0.4 * preview.available)
    card = next(c for c in play.content.cards if c.id == "night-boats")
    assert doc["tokens"] == counter.count(f"World lore ({card.name}): {card.entry}") + counter.count("\n")
    before = [c for c in preview.cards[: [c.id for c in preview.cards].index("night-boats")] if c.included]
    assert doc["used_before"] == sum(c.tokens for c in before)
    assert doc["used_before"] + doc["tokens"] > doc["lore_budget"] >= doc["used_before"]
    assert doc["reason"].startswith(f"{doc['used_before']} + {doc['tokens']} = {doc['used_before'] + doc['tokens']} > lore budget {doc['lore_budget']}")
    assert doc["keyword"] in doc["line"]["text"].lower()
    assert play.save.journal.kinds[doc["line"]["journal_index"]] == "DialogueLine"
    # the lore chain adds up to what the included cards use
    own = next(s for s in exp.steps if s.detail.startswith("night-boats:"))
    assert own.before == doc["used_before"] and own.after == doc["used_before"]


def test_card_steps_chain_in_budget_order(plays):
    """Card steps follow the lore budget's card order, so each after is the next before
    (a journal-index order read 160 → 160, 52 → 105, 105 → 160, 0 → 52 and the Explain
    waterfall made no sense); each step still names its keyword line's journal index."""
    play = plays["evening.json"]
    exp = explain(play, "card:orrin-vask/harbor-guild", 50000)
    assert {s.journal_index for s in exp.steps} == {580, 587}
    assert exp.steps[0].before == 0
    assert all(a.after == b.before for a, b in zip(exp.steps, exp.steps[1:]))
    own = exp.steps[-1]
    assert own.detail.startswith("harbor-guild:")
    assert (own.before, own.after) == (exp.extra["used_before"], exp.extra["used_before"] + exp.extra["tokens"])


def test_history_explains_the_budget(plays):
    play = plays["evening.json"]
    exp = explain(play, "history:lera-sessik", play.save.saved_at_tick, 5)
    doc = exp.to_json()
    h = doc["history"]
    assert h["budget"] == doc["budget"]["available"] - sum(c.tokens for c in PromptBuilder(play).build("lera-sessik", play.save.saved_at_tick).cards if c.included)
    assert h["spent"] + h["left"] == h["budget"]
    assert doc["value"] == h["included"]


def test_why_history_and_prompt_give_the_same_budgeted_tokens_and_say_why_the_sections_count_fewer(plays):
    """`prompt` and `why history:` gave different token counts (7 146 spent against the
    sections' 6 742 + 45) with nothing to tie them. The fit counts each line alone with
    its separator (context builder seed); both now give that figure and the assembled one."""
    play = plays["evening.json"]
    tick = play.save.saved_at_tick
    builder = PromptBuilder(play)
    preview = builder.build("kael-davan", tick)
    npc = play.save.npc_by_slug("kael-davan").stable_id
    kept = list(play.index.dialogue_newest_first(npc, tick))[: preview.history.included]
    alone = sum(builder.render_line(rec)[1] for rec in kept)
    assembled = sum(s.tokens for s in preview.sections if s.label in ("history", "recent_history"))
    assert preview.history.budgeted == alone == 7146 and assembled == 6787
    assert set(preview.to_json()["history"]) == {"included", "total", "oldest_truncated"}  # the documented keys only
    exp = explain(play, "history:kael-davan", tick, 5)
    h = exp.to_json()["history"]
    assert (h["spent"], h["assembled_tokens"]) == (7146, 6787)
    assert "the history sections count 6787 tokens" in exp.summary


# ----- unknown targets -----
@pytest.mark.parametrize(
    "target, match",
    [
        ("npc:kael-davn.score", "kael-davan"),
        ("npc:kael-davan.scor", "npc:kael-davan.score"),
        ("fact:contraband.ring_exist", "fact:contraband.ring_exists"),
        ("line:the-last-shift_m_s_05", "line:the-last-shift_m_s_050"),
        ("card:kael-davan/dock-wards", "card:kael-davan/dock-ward"),
        ("history:lera", None),
        ("nonsense", None),
    ],
)
def test_unknown_targets_list_close_matches(plays, target, match):
    with pytest.raises(UnknownTarget) as info:
        explain(plays["evening.json"], target, 1000)
    if match:
        assert match in info.value.matches


@pytest.mark.parametrize(
    "target, match",
    [
        ("npc:KAEL.score", "kael-davan"),
        ("npc:Kael-Davan.stress", "kael-davan"),
        ("npc:KAEL", "kael-davan"),
        ("npc:kael-davan.SCORE", "npc:kael-davan.score"),
        ("fact:CONTRABAND.RING_EXISTS", "fact:contraband.ring_exists"),
        ("line:THE-LAST-SHIFT_M_S_090", "line:the-last-shift_m_s_090"),
        ("card:kael-davan/DOCK-WARD", "card:kael-davan/dock-ward"),
        ("history:LERA-SESSIK", "lera-sessik"),
        ("kael-davan", "npc:kael-davan.score"),
    ],
)
def test_close_matches_are_found_in_any_case(plays, target, match):
    with pytest.raises(UnknownTarget) as info:
        explain(plays["evening.json"], target, 1000)
    assert info.value.matches[0] == match


def test_the_kind_may_be_in_any_case(plays):
    play = plays["walkaway-spiral.json"]
    assert explain(play, "NPC:kael-davan.score", 500).value == explain(play, "npc:kael-davan.score", 500).value


@pytest.mark.parametrize(
    "target, says",
    [
        ("entity:abc", "entity:STABLE_ID takes a whole number, not 'abc'"),
        ("entity:٣", "takes a whole number"),
        ("entity:1.5", "takes a whole number"),
        ("entity:" + "1" * 5000, "takes a whole number, not '" + "1" * 40 + "…' (it is 5000 characters long"),
        ("entity:5_000", "takes a whole number, not '5_000' ('_' is not an ASCII digit"),
        ("npc:kael-davan", "npc: takes SLUG.ATTR"),
        ("npc:.score", "npc: takes SLUG.ATTR"),
        ("card:kael-davan", "card: takes SLUG/CARD_ID"),
        ("card:/dock-ward", "card: takes SLUG/CARD_ID"),
        ("fact:", "nothing after fact:"),
        ("nonsense", "it has no KIND: before its name"),
        ("foo:bar", "unknown kind 'foo'"),
    ],
)
def test_malformed_targets_exit_2_with_one_line_naming_every_form(capsys, target, says):
    assert main(["why", str(SAMPLES / "evening.json"), target]) == 2
    captured = capsys.readouterr()
    assert captured.out == ""
    err = captured.err.rstrip("\n")
    assert "\n" not in err and "Traceback" not in err
    # A long target is cut with its length (trial 47: 100 000 characters were echoed whole).
    shown = repr(target) if len(target) <= 80 else f"{target[:60]!r}… ({len(target):,} characters)"
    assert err.startswith(f"narrative-debugger why: {shown} is not a target: ") and says in err and len(err) < 900
    assert "npc:SLUG.score|level|stress" in err and all(form in err for form in ("fact:FACT_ID", "entity:STABLE_ID", "line:LINE_ID", "card:SLUG/CARD_ID", "history:SLUG"))


@pytest.mark.parametrize(
    "target, says",
    [
        ("line:nope", "no monologue line 'nope' in the content; line:LINE_ID takes one of the 17 monologue lines, e.g. line:"),
        ("fact:zzzz", "no fact 'zzzz' in evening.json's journal; fact:FACT_ID takes one of the 288 facts in its journal, e.g. fact:"),
        ("entity:123456", "no observed entity '123456' in evening.json; entity:STABLE_ID takes one of the 6 observed entities, e.g. entity:"),
        ("card:kael-davan/zzzz", "no story card 'zzzz' in the content; card:SLUG/CARD_ID takes one of the 11 story cards, e.g. card:kael-davan/"),
        ("history:zzz", "no NPC 'zzz' in evening.json (NPCs: kael-davan, lera-sessik, mira-holt, orrin-vask, sera-venn, tobin-quill)"),
    ],
)
def test_unknown_ids_with_nothing_close_say_what_the_form_takes(capsys, target, says):
    assert main(["why", str(SAMPLES / "evening.json"), target]) == 2
    err = capsys.readouterr().err.rstrip("\n")
    assert "\n" not in err and err.startswith(f"narrative-debugger why: {says}")


# ----- the command line -----
def test_cli_json_contract(capsys):
    assert main(["why", str(SAMPLES / "walkaway-spiral.json"), "npc:kael-davan.score", "--format", "json", "--limit", "4"]) == 0
    doc = json.loads(capsys.readouterr().out)
    assert list(doc)[:6] == ["target", "tick", "value", "summary", "steps", "folded"]
    assert set(doc["steps"][0]) == {"journal_index", "tick", "event", "rule", "before", "after", "detail"}
    assert len(doc["steps"]) == 4 and set(doc["folded"]) == {"count", "by_rule"}
    assert all(set(v) == {"count", "sum"} for v in doc["folded"]["by_rule"].values())
    assert main(["why", str(SAMPLES / "evening.json"), "line:the-last-shift_m_s_090", "--tick", "100000", "--format", "json"]) == 0
    line = json.loads(capsys.readouterr().out)
    assert {"eligible", "clauses", "nearest_miss"} <= set(line)
    assert set(line["clauses"][0]) >= {"clause", "holds", "since_tick", "journal_index"}
    assert main(["why", str(SAMPLES / "evening.json"), "card:kael-davan/dock-ward", "--tick", "33548", "--format", "json"]) == 0
    card = json.loads(capsys.readouterr().out)
    assert {"included", "keyword", "tokens", "lore_budget", "used_before", "reason"} <= set(card)


def test_cli_text_and_errors(capsys):
    assert main(["why", str(SAMPLES / "walkaway-spiral.json"), "npc:kael-davan.stress"]) == 0
    out = capsys.readouterr().out
    assert "over its threshold 30" in out and "walk_away" in out
    assert main(["why", str(SAMPLES / "walkaway-spiral.json"), "npc:kael-davn.stress"]) == 2
    assert "kael-davan" in capsys.readouterr().err
    assert main(["why", str(SAMPLES / "evening.json"), "fact:nothing.here"]) == 2
    assert "no fact 'nothing.here'" in capsys.readouterr().err
    assert main(["why", str(SAMPLES / "evening.json"), "npc:kael-davan.score", "--limit", "-1"]) == 2
    capsys.readouterr()


def test_explanations_never_mutate_the_playthrough(plays):
    play = plays["walkaway-spiral.json"]
    before = copy.deepcopy(state_json(play, play.save.saved_at_tick))
    for attr in NUMERIC + ["level", "shared_references"]:
        explain(play, f"npc:kael-davan.{attr}", play.save.saved_at_tick)
    assert state_json(play, play.save.saved_at_tick) == before


def test_line_steps_and_folded_count_every_clause_event_and_firing(plays):
    play = plays["evening.json"]
    for line_id in play.content.monologues:
        full = explain(play, f"line:{line_id}", play.save.saved_at_tick, 10_000)
        fired = sum(1 for _, _, fid in play.index.monologues_fired if fid == line_id)
        assert full.extra["fired_count"] == fired == sum(s.rule.startswith("fires only") for s in full.steps)
        for limit in (0, 1, 2):
            short = explain(play, f"line:{line_id}", play.save.saved_at_tick, limit)
            assert len(short.steps) + (short.folded.count if short.folded else 0) == len(full.steps)
            assert [s.journal_index for s in short.steps] == [s.journal_index for s in full.steps][len(full.steps) - len(short.steps):]


def test_summary_counts_the_whole_chain_whatever_the_limit(plays):
    """Defect 5: ``--limit 0`` must not claim "initial value", and the clamped count is over every change."""
    play = plays["walkaway-spiral.json"]
    full = explain(play, "npc:kael-davan.score", play.save.saved_at_tick, 10_000)
    clamped = sum(1 for s in full.steps if "clamped to" in s.detail)
    assert clamped == 8 and len(full.steps) == 15
    for limit in (0, 1, 5, 20):
        exp = explain(play, "npc:kael-davan.score", play.save.saved_at_tick, limit)
        assert "initial value" not in exp.summary
        assert f"{clamped} of the {len(full.steps)} changes were clamped" in exp.summary
        # The last penalty met the floor: it applied, and changed nothing (was "last changed … (0.00 → 0.00)").
        assert f"last applied at tick {full.steps[-1].tick} by WalkAwayPenalty, which left it at 0.00" in exp.summary
    stress = explain(play, "npc:kael-davan.stress", play.save.saved_at_tick, 0)
    assert stress.steps == [] and stress.folded.count > 0 and "initial value" not in stress.summary


def test_nearest_miss_is_the_latest_tick_with_the_fewest_failing(plays):
    """Defect 9: the nearest miss was the tick a best count began, not the latest tick it
    held (the-last-shift_m_s_060: 299055 instead of 299281, one tick before a clause failed)."""
    from narrative_debugger.models.explain.lines import clauses_of

    play = plays["evening.json"]
    index = play.index
    now = play.save.saved_at_tick
    candidates = sorted({t for t in index.ticks} | {t - 1 for t in index.ticks if t > index.first_tick} | {index.first_tick, now})
    candidates = [t for t in candidates if index.first_tick <= t <= now]
    checked = 0
    for line_id, line in play.content.monologues.items():
        exp = explain(play, f"line:{line_id}", now)
        if exp.extra["eligible"] or not exp.extra["clauses"]:
            continue
        clauses = clauses_of(index, line)
        failing = {t: sum(not c.at(index.position_for_tick(t))[0] for c in clauses) for t in candidates}
        fewest = min(failing.values())
        latest = max(t for t, n in failing.items() if n == fewest)
        miss = exp.extra["nearest_miss"]
        assert (miss["tick"], len(miss["failing"])) == (latest, fewest), line_id
        checked += 1
    assert checked >= 2
    shift = explain(play, "line:the-last-shift_m_s_060", now)
    assert shift.extra["nearest_miss"] == {"tick": 299281, "failing": []} and shift.extra["clauses"][0]["last_held_tick"] == 299281
    assert explain(play, "line:harbor-nights_m_s_030", now).extra["nearest_miss"]["tick"] == 266645


def test_why_of_a_fact_replaced_by_fact_learned_gives_the_acquired_tick_state_gives(tmp_path):
    """A FactLearned naming the interaction in progress (K002) replaces the fact and sets
    its acquired_tick anew: why's summary says that tick, as ``state`` does, and names
    the entry that first made the fact apart from it."""
    from tests.conftest import k002_save

    path, doc, start, line = k002_save(tmp_path)
    journal, fact_id = doc["journal"], doc["k002_fact"]
    learned = journal[line]["tick"]
    play = Playthrough.open(path, CONTENT)
    tick = learned + 10
    exp = explain(play, f"fact:{fact_id}", tick)
    shown = state_json(play, tick)["facts"][fact_id]["acquired_tick"]
    assert shown == learned == exp.value["acquired_tick"]
    assert f"acquired_tick {learned}, first known at tick {journal[start]['tick']} by InteractionStarted" in exp.summary


def test_why_step_of_an_entry_whose_tick_goes_back_says_both_ticks(tmp_path):
    """An entry whose tick is lower than the one before it (J001) applies at the higher
    tick (ticks never go back): the why step shows that tick, as ``state`` applies it,
    and its detail also gives the entry's own tick."""
    doc = json.loads((SAMPLES / "evening.json").read_text(encoding="utf-8"))
    journal = doc["journal"]
    at = 40
    later = journal[at - 1]["tick"]
    journal.insert(at, {"tick": later - 30, "event": {"FactLearned": {"fact_id": "harbor.test_rumour", "confidence": "KnowsOf", "source": "Heard"}}})
    path = tmp_path / "back.json"
    path.write_text(json.dumps(doc), encoding="utf-8")
    play = Playthrough.open(path, CONTENT)
    assert "J001" in {f.code for f in play.findings}
    exp = explain(play, "fact:harbor.test_rumour", play.save.saved_at_tick)
    (step,) = exp.steps
    assert step.tick == later and step.journal_index == at
    assert f"the entry says tick {later - 30}" in step.detail and f"applies at tick {later}" in step.detail
    assert "harbor.test_rumour" not in state_json(play, later - 1)["facts"]
    # Known from the tick it applies at; its acquired_tick is the tick the entry says.
    assert state_json(play, later)["facts"]["harbor.test_rumour"]["acquired_tick"] == later - 30


def test_a_written_out_sum_adds_up_as_written():
    """The walkaway-spiral sample's walk-away #11 read "0.56 − 0.43 = 0.12" at two
    decimals (true 0.555 − 0.43 = 0.125): figures take the fewest decimals that add up."""
    from narrative_debugger.models.explain.chain import fmt_sum

    assert fmt_sum(0.555, -0.43, 0.125) == "0.555 − 0.430 = 0.125"
    assert fmt_sum(1.63, -0.43, 1.2) == "1.63 − 0.43 = 1.20"  # exact at 2: unchanged
    assert fmt_sum(0.1, 0.2, 0.1 + 0.2) == "0.10 + 0.20 = 0.30"  # float noise never shows
    assert fmt_sum(0.34, -0.43, 0.34 - 0.43) == "0.34 − 0.43 = -0.09"
    assert fmt_sum(5, -3, 2) == "5 − 3 = 2"
    assert sums_are_exact(fmt_sum(1 / 3, 0.43, 1 / 3 + 0.43)) == "SUM"


def test_two_scores_side_by_side_take_the_decimals_that_part_them():
    """The timelines' readout wrote A and B at one decimal ("score 0.6 … B score 0.6" for
    0.641 and 0.645): side by side they take ``fmt_num``'s 2, more where 2 reads the same."""
    from narrative_debugger.models.explain.chain import apart_places, fmt_places

    assert apart_places(0.641, 0.645) == 2 and apart_places(0.641, 0.641) == 2
    assert apart_places(0.6123, 0.6127) == 3 and (fmt_places(0.6123, 3), fmt_places(0.6127, 3)) == ("0.612", "0.613")
    assert apart_places(0.641, 0.6414) == 4
    assert apart_places(0.1 + 0.2, 0.3) == 2  # float noise never shows
    assert apart_places(float("nan"), 0.5) == 2


def test_why_score_of_the_walkaway_spiral_writes_exact_sums(plays):
    from narrative_debugger.app.cli.commands.why import format_text

    play = plays["walkaway-spiral.json"]
    text = format_text(explain(play, "npc:kael-davan.score", play.save.saved_at_tick, 100))
    assert "walk-away #11 is past walk_away_threshold 1: 0.555 − 0.430 = 0.125" in text
    assert "0.56 − 0.43 = 0.12" not in text


def test_a_score_step_that_two_decimals_cannot_add_writes_the_sum_out(plays):
    """"= 0.99 …; 0.94 → 1.94" did not add up (0.945 + 0.990 = 1.935; new-user trials: 156
    of 548 delta rows). Such a row writes the sum out at the decimals that add up."""
    from narrative_debugger.app.cli.commands.why import format_text

    play = plays["evening.json"]
    text = format_text(explain(play, "npc:lera-sessik.score", play.save.saved_at_tick, 400))
    assert "= 0.990 (relationship seed formula); 0.945 + 0.990 = 1.935" in text
    assert "= 0.945 (relationship seed formula); 0.000 + 0.945 = 0.945" in text  # 0.945 is not written 0.94 (trial)
    assert "= 1.002, clamped to 1.000 (relationship seed formula)" in text  # nor 1.002 as 1.00
    assert sums_are_exact(text)
    assert "; 1 of the 122 changes was clamped to 0..100" in text  # one, not "were"


def test_why_names_a_penalty_within_the_threshold_as_check_does(plays):
    """why said "walk-away #1 is past walk_away_threshold 1" where check's T004 says the
    walk-away is within it yet penalised (second trial)."""
    from narrative_debugger.app.cli.commands.why import format_text

    play = plays["qa-faults.json"]
    assert any(f.code == "T004" and "sera-venn" in f.message for f in play.findings)
    text = format_text(explain(play, "npc:sera-venn.score", play.save.saved_at_tick, 100))
    assert "walk-away #1 is within walk_away_threshold 1, yet the save applies a penalty (T004): 4.81 − 0.33 = 4.48" in text
    assert "walk-away #1 is past" not in text


# ----- issue 38: the explanations of a what-if's side B use its tuning -----
def _b_score_chain(journal, target, weight):
    """Score points after each of ``target``'s score entries, from the start, by the
    seed formula with sentiment weight ``weight``, written out by hand, with its clamps."""
    score, chain = 0.0, []
    for i, e in enumerate(journal):
        event = e["event"]
        if "RelationshipInteraction" in event and event["RelationshipInteraction"]["target"] == target:
            r = event["RelationshipInteraction"]
            delta = max(-1.0, min(1.0, r["sentiment"] * weight + min(0.3, r["message_length"] / 500) + min(0.2, r["conversation_turns"] * 0.05) + 0.1))
            score = max(0.0, min(100.0, score + delta))
            chain.append((i, score))
        elif "WalkAwayPenalty" in event and event["WalkAwayPenalty"]["target"] == target:
            score = max(0.0, score - event["WalkAwayPenalty"]["penalty"])
            chain.append((i, score))
    return chain


def test_explaining_a_tuned_what_if_uses_its_formula():
    from narrative_debugger.models.domain.tuning import DEFAULT_TUNING
    from narrative_debugger.models.whatif.run import what_if

    save = SAMPLES / "evening.json"
    journal = json.loads(save.read_text(encoding="utf-8"))["journal"]
    w = what_if(save, None, [], DEFAULT_TUNING.with_value("relationship.sentiment_weight", 0.25))
    b = w.comparison.b
    npc = b.save.npc_by_slug("kael-davan").stable_id
    exp = explain(b, "npc:kael-davan.score", b.last_tick, limit=10_000)
    chain = _b_score_chain(journal, npc, 0.25)
    assert len(chain) > 10 and exp.folded is None
    assert [(s.journal_index, s.after) for s in exp.steps] == [(i, pytest.approx(v, abs=1e-9)) for i, v in chain]
    first = exp.steps[0]
    r = journal[first.journal_index]["event"]["RelationshipInteraction"]
    assert f"delta = {r['sentiment']}×0.25 + min(0.3, {r['message_length']}/500)" in first.detail
    assert "×0.5 " not in first.detail and "R002" not in first.detail and "tuned" in first.detail
    # Side A (as recorded) still says the seed's 0.5.
    a = explain(w.comparison.a, "npc:kael-davan.score", exp.tick, limit=10_000)
    assert f"delta = {r['sentiment']}×0.5 + " in a.steps[0].detail and "tuned" not in a.steps[0].detail


def test_explaining_an_edited_sentiment_derives_the_chain_anew():
    from narrative_debugger.models.whatif.run import what_if

    save = SAMPLES / "evening.json"
    entry = 62  # lera-sessik, tick 4520, sentiment 0.69 -> -0.5
    w = what_if(save, None, [{"op": "replace", "path": f"/journal/{entry}/event/RelationshipInteraction/sentiment", "value": -0.5}])
    exp = explain(w.comparison.b, "npc:lera-sessik.score", 4520, limit=10_000)
    step = exp.steps[-1]
    assert step.journal_index == entry
    # -0.5 * 0.5 + min(0.3, 275/500) + min(0.2, 7 * 0.05) + 0.1 = 0.35, not the recorded 0.945
    assert step.after == pytest.approx(step.before + 0.35, abs=1e-9)
    assert "delta = -0.5×0.5 + min(0.3, 275/500) + min(0.2, 7×0.05) + 0.1 = 0.35" in step.detail
    assert "R002" not in step.detail and "derived anew" in step.detail


def test_explaining_tuned_level_bounds_names_them():
    from narrative_debugger.models.domain.tuning import DEFAULT_TUNING
    from narrative_debugger.models.whatif.run import what_if

    save = SAMPLES / "evening.json"
    w = what_if(save, None, [], DEFAULT_TUNING.with_value("levels.stranger", 10))
    b = w.comparison.b
    exp = explain(b, "npc:kael-davan.level", b.last_tick)
    score = b.state_at(b.last_tick).npc(b.save.npc_by_slug("kael-davan").stable_id).relationship.score
    assert 10 < score <= 40  # 21.78: the crossing into Acquaintance is at the tuned 10, not the seed's 20
    assert exp.value == "Acquaintance"
    assert any("crosses 10 (the top of Stranger, inclusive)" in s.detail for s in exp.steps)


def test_a_tuned_formulas_rows_take_the_decimals_they_need(tmp_path):
    """New-user trial, stop 46: with sentiment_weight 0.25 B's rows read "18.796500 +
    0.582500 = 19.379000" (6 decimals): 0.69×0.25 + 0.3 + 0.25 + 0.1 = 0.7725 needs 4."""
    from pathlib import Path

    from narrative_debugger.models.domain.tuning import DEFAULT_TUNING
    from narrative_debugger.models.whatif.run import what_if

    root = Path(__file__).resolve().parents[1]
    b = what_if(root / "sample_saves" / "evening.json", None, [], DEFAULT_TUNING.with_value("relationship.sentiment_weight", 0.25)).comparison.b
    steps = explain(b, "npc:mira-holt.score", b.last_tick).steps
    assert steps[-2].detail.endswith("= 0.7725 (relationship seed formula, tuned); derived anew by the what-if's replay; 18.0240 + 0.7725 = 18.7965")
    assert steps[-1].detail.endswith("; 18.7965 + 0.5825 = 19.3790")

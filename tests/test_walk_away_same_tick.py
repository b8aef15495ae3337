"""Walk-aways and penalties that share one tick (T004; save-format §5, interaction seed §8).

A walk-away whose ordinal for its NPC exceeds ``walk_away_threshold`` is followed at the
same tick by a WalkAwayPenalty. A tick may hold several walk-aways, of one NPC or of two,
before their penalties: each penalty pays for its NPC's earliest walk-away past the
threshold not paid for yet. It was paired with the NPC's first walk-away of the tick,
so a walk-away within the threshold followed by one past it, then the penalty, read as
"#2 is within the threshold, yet it is penalised" and "#3 ... no WalkAwayPenalty follows".
"""

from __future__ import annotations

import copy
import json
from pathlib import Path

import pytest

from narrative_debugger.app.cli.main import main
from tests.test_check_codes import BASE, CONTENT_FILES, ev

SLUGS = {17: "kael-davan", 9: "sera-venn"}
T = 169  # the shared tick


@pytest.fixture(scope="module")
def content(tmp_path_factory) -> Path:
    root = tmp_path_factory.mktemp("content")
    files = CONTENT_FILES | {"npcs/sera-venn.yaml": "name: Sera Venn\npronouns: she/her\ndescription: A clerk.\ntolerance: {threshold: 40}\n"}
    for rel, text in files.items():
        (root / rel).parent.mkdir(parents=True, exist_ok=True)
        (root / rel).write_text(text)
    return root


def save(tmp_path: Path, threshold: int, plan: list[tuple[str, int]], penalty: float = 0.3) -> Path:
    """The minimal save (Kael's walk-away #1 at 164) with Sera Venn (her #1 at 166), both
    at ``walk_away_threshold``, then ``plan`` at tick 169: ``("walk", npc)`` a conversation
    walked away from with its stress change, ``("pen", npc)`` a penalty. The snapshot
    follows, so a save whose penalties pair up is clean."""
    d = copy.deepcopy(BASE)
    facts = d["player"]["knowledge"]["facts"]
    template = facts["interaction.kael-davan_001"]
    d["npcs"] = {"9": copy.deepcopy(d["npcs"]["17"]) | {"slug": "sera-venn"}, "17": d["npcs"]["17"]}
    seq, walks, stress = {17: 1, 9: 0}, {17: 1, 9: 0}, {17: 6, 9: 0}

    def walk(tick, npc, started):
        seq[npc] += 1
        walks[npc] += 1
        stress[npc] += 6
        f = copy.deepcopy(template)
        f["acquired_tick"] = started
        f["metadata"]["Interaction"].update(target_entity=npc, started_tick=started, ended_tick=tick)
        facts[f"interaction.{SLUGS[npc]}_{seq[npc]:03d}"] = f
        d["journal"] += [ev(started, "InteractionStarted", target=npc, player_initiated=True, location="dock-ward"),
                         ev(tick, "InteractionWalkedAway", target=npc),
                         ev(tick, "StressChanged", target=npc, delta=6, current_stress=stress[npc], cause="walk_away")]

    walk(166, 9, 165)
    for kind, npc in plan:
        if kind == "walk":
            walk(T, npc, T)
        else:
            d["journal"].append(ev(T, "WalkAwayPenalty", target=npc, penalty=penalty, score_after=0.0))
    for sid, npc in d["npcs"].items():
        npc["interaction_tolerance"]["walk_away_threshold"] = threshold
        npc["walk_aways"] = walks[int(sid)]
        npc["tolerance"]["current_stress"] = stress[int(sid)]
    d["player"]["knowledge"]["facts"] = dict(sorted(facts.items(), key=lambda kv: kv[0].encode()))
    path = tmp_path / "same-tick.json"
    path.write_text(json.dumps(d))
    return path


def check(capsys, path: Path, content: Path) -> list[str]:
    """``check --format json``: each finding as ``CODE location: message``."""
    main(["check", str(path), "--content", str(content), "--format", "json"])
    (doc,) = json.loads(capsys.readouterr().out)["files"]
    return [f"{f['code']} {f['location']}: {f['message']}" for f in doc["findings"]]


W17, W9, P17, P9 = ("walk", 17), ("walk", 9), ("pen", 17), ("pen", 9)


@pytest.mark.parametrize("threshold, plan", [
    (2, [W17, W17, P17]),            # Kael's #2 (within) and #3 (past), then the one penalty (was a false T004, twice)
    (2, [W17, W17, W17, P17, P17]),  # #2 within, #3 and #4 past, both penalties at the end
    (1, [W17, W17, P17, P17]),       # two walk-aways past the threshold, then two penalties
    (1, [W17, W9, P17, P9]),         # Kael walks, Sera walks, then both penalties
    (1, [W17, W9, P9, P17]),         # the same, penalties the other way round
    (2, [W17, W9, W17, W9, P17, P9]),  # each NPC: one within, one past
], ids=["within-then-past", "within-then-two-past", "two-then-two", "two-npcs", "two-npcs-swapped", "two-npcs-mixed"])
def test_walk_aways_and_penalties_at_one_tick_are_clean(capsys, tmp_path, content, threshold, plan):
    assert check(capsys, save(tmp_path, threshold, plan), content) == []


@pytest.mark.parametrize("threshold, plan, penalty, expected", [
    # A penalty with no walk-away of its NPC at the tick.
    (1, [W17, P17, P9], 0.3, ["T004 journal[11].event.WalkAwayPenalty: sera-venn: a WalkAwayPenalty with no walk-away at this tick"]),
    # One walk-away past the threshold and two penalties: the second has none left (trial 48: it said "no walk-away at this tick").
    (1, [W17, P17, P17], 0.3, ["T004 journal[11].event.WalkAwayPenalty: kael-davan: a WalkAwayPenalty too many: the walk-aways at this tick "
                               "(#2 at journal[8]) are paid for already"]),
    # Two past the threshold, one penalty: the second walk-away's is missing.
    (1, [W17, W17, P17], 0.3, ["T004 journal[11]: kael-davan: walk-away #3 is past the threshold of 1 but no WalkAwayPenalty of 0.3 follows at tick 169"]),
    # Both within the threshold: the penalty is not owed (paired with the first).
    (3, [W17, W17, P17], 0.3, ["T004 journal[13].event.WalkAwayPenalty: kael-davan: walk-away #2 is within the threshold of 3, yet it is penalised"]),
    # One within, one past, and a penalty too many.
    (2, [W17, W17, P17, P17], 0.3, ["T004 journal[14].event.WalkAwayPenalty: kael-davan: walk-away #2 is within the threshold of 2, yet it is penalised"]),
    # Two NPCs, one penalty: Sera's is missing.
    (1, [W17, W9, P17], 0.3, ["T004 journal[11]: sera-venn: walk-away #2 is past the threshold of 1 but no WalkAwayPenalty of 0.3 follows at tick 169"]),
    # The wrong size, paired right.
    (2, [W17, W17, P17], 0.5, ["T004 journal[13].event.WalkAwayPenalty.penalty: kael-davan: penalty 0.5 is not walk_away_penalty 0.3"]),
])
def test_penalties_at_one_tick_that_do_not_pair_are_t004(capsys, tmp_path, content, threshold, plan, penalty, expected):
    assert check(capsys, save(tmp_path, threshold, plan, penalty), content) == expected


def test_whatif_names_the_walk_away_each_penalty_pays_for(capsys, tmp_path, content):
    """A what-if threshold of 3 over two penalties at one tick: each would-not-happen
    reason names its own walk-away (#2, #3), not the NPC's count after both (#3 twice)."""
    path = save(tmp_path, 1, [W17, W17, P17, P17])
    status = main(["whatif", str(path), "--content", str(content), "--set", "npc.kael-davan.walk_away_threshold=3", "--format", "json"])
    doc = json.loads(capsys.readouterr().out)
    assert status == 1
    assert [(e["journal_index"], e["reason"]) for e in doc["would_not_happen"]] == [
        (13, "kael-davan: walk-away #2 is within the walk-away threshold of 3: no WalkAwayPenalty follows it"),
        (14, "kael-davan: walk-away #3 is within the walk-away threshold of 3: no WalkAwayPenalty follows it"),
    ]
    assert not [f for f in doc["findings"]["only_b"] if f["code"] == "T004"]


def why_details(capsys, path: Path, content: Path, slug: str = "kael-davan") -> list[tuple[int, str]]:
    """``why npc:SLUG.score --format json`` at the shared tick: each step's journal index and detail."""
    assert main(["why", str(path), f"npc:{slug}.score", "--content", str(content), "--tick", str(T), "--format", "json"]) == 0
    return [(s["journal_index"], s["detail"]) for s in json.loads(capsys.readouterr().out)["steps"]]


CLAMPED = "0.00 − 0.30 = -0.30, clamped to 0.00 (score never below 0)"


@pytest.mark.parametrize("threshold, plan, slug, expected", [
    # Two penalties at one tick: each names its own walk-away, not the count after both (#3 twice).
    (1, [W17, W17, P17, P17], "kael-davan", [(13, f"walk-away #2 is past walk_away_threshold 1: {CLAMPED}"),
                                             (14, f"walk-away #3 is past walk_away_threshold 1: {CLAMPED}")]),
    # #2 within, #3 and #4 past: the penalties pay for #3 and #4 (not #4 twice).
    (2, [W17, W17, W17, P17, P17], "kael-davan", [(16, f"walk-away #3 is past walk_away_threshold 2: {CLAMPED}"),
                                                  (17, f"walk-away #4 is past walk_away_threshold 2: {CLAMPED}")]),
    # A penalty too many: the second pays for #2, within the threshold, as check's T004 says.
    (2, [W17, W17, P17, P17], "kael-davan", [(13, f"walk-away #3 is past walk_away_threshold 2: {CLAMPED}"),
                                             (14, f"walk-away #2 is within walk_away_threshold 2, yet the save applies a penalty (T004): {CLAMPED}")]),
    # Sera's penalty has no walk-away of hers at the tick (T004): no walk-away number to name.
    (1, [W17, P17, P9], "sera-venn", [(11, f"no walk-away of Sera Venn at tick 169 left for it to pay for (T004): {CLAMPED}")]),
], ids=["two-then-two", "within-then-two-past", "one-too-many", "none-to-pay-for"])
def test_why_score_names_the_walk_away_each_penalty_pays_for(capsys, tmp_path, content, threshold, plan, slug, expected):
    """``why npc:SLUG.score`` pairs each penalty with the walk-away the replay (and check) pairs it with."""
    assert why_details(capsys, save(tmp_path, threshold, plan), content, slug) == expected


@pytest.mark.usefixtures("message_boxes")
def test_the_explain_dock_names_the_same_walk_aways(qtbot, open_window, tmp_path, content):
    """The window's Explain dock shows the steps ``why`` prints: #3 and #4, not #4 twice."""
    path = save(tmp_path, 2, [W17, W17, W17, P17, P17])
    window = open_window(save=path, content=content)
    s = window.session
    s.set_tick(T)
    s.explain("npc:kael-davan.score")
    view = window.panels["explain"][0]
    qtbot.waitUntil(lambda: view.explanation is not None and view.explanation.tick == T, timeout=20000)
    rows = [(view.model.index(r, 0).data(), view.model.index(r, 5).data()) for r in range(view.model.rowCount())]
    assert rows == [("16", f"walk-away #3 is past walk_away_threshold 2: {CLAMPED}"),
                    ("17", f"walk-away #4 is past walk_away_threshold 2: {CLAMPED}")]


@pytest.mark.parametrize("threshold, plan, expected", [
    # The penalty, then its walk-away: one T004 on the penalty, naming the walk-away (not
    # "no walk-away at this tick" and a missing penalty on the walk-away).
    (1, [P17, W17], "kael-davan: this WalkAwayPenalty comes before the walk-away it pays for (#2, at journal[9]); "
                    "a penalty follows its walk-away at the same tick"),
    # A penalty written after its walk-away keeps it: the one before pays for the walk-away left (#3).
    (1, [P17, W17, W17, P17], "kael-davan: this WalkAwayPenalty comes before the walk-away it pays for (#3, at journal[12]); "
                              "a penalty follows its walk-away at the same tick"),
    # Another NPC's walk-away between them changes nothing.
    (1, [P17, W9, W17, P9], "kael-davan: this WalkAwayPenalty comes before the walk-away it pays for (#2, at journal[12]); "
                            "a penalty follows its walk-away at the same tick"),
    # Before a walk-away within the threshold: not owed, and written before it.
    (2, [P17, W17], "kael-davan: walk-away #2 is within the threshold of 2, yet it is penalised, by a WalkAwayPenalty "
                    "that comes before it (the walk-away is at journal[9])"),
], ids=["penalty-first", "penalty-first-then-a-pair", "between-another-npc", "penalty-first-within"])
def test_a_penalty_written_before_its_walk_away_is_one_t004_that_says_so(capsys, tmp_path, content, threshold, plan, expected):
    """Save-format §5: a penalty follows its walk-away at the same tick. One written before
    it is T004 on the penalty (where a double-click lands: its journal entry and NPC)."""
    path = save(tmp_path, threshold, plan)
    assert check(capsys, path, content) == [f"T004 journal[7].event.WalkAwayPenalty: {expected}"]
    main(["check", str(path), "--content", str(content), "--format", "json"])
    (finding,) = json.loads(capsys.readouterr().out)["files"][0]["findings"]
    assert (finding["tick"], finding["target"]["journal_index"], finding["target"]["npc"]) == (T, 7, "kael-davan")


def test_why_score_names_the_walk_away_written_after_its_penalty(capsys, tmp_path, content):
    assert why_details(capsys, save(tmp_path, 1, [P17, W17]), content) == [
        (7, f"walk-away #2 (journal #9) is past walk_away_threshold 1, but written after this penalty (T004): {CLAMPED}")]


def with_score(path: Path) -> Path:
    """``path`` with a RelationshipInteraction of Kael at tick 165 (score 0.55, so a penalty
    of 0.3 shows: 0.25), its penalties' ``score_after`` and the snapshot to match."""
    d = json.loads(path.read_text())
    d["journal"].insert(4, ev(165, "RelationshipInteraction", target=17, sentiment=0.4, message_length=100, conversation_turns=1, delta=0.55, score_after=0.55))
    score = 0.55
    for entry in d["journal"]:
        penalty = entry["event"].get("WalkAwayPenalty")
        if penalty is not None and penalty["target"] == 17:
            score = round(max(0.0, score - penalty["penalty"]), 6)
            penalty["score_after"] = score
    d["npcs"]["17"]["relationship"].update(score=score, total_interactions=1, positive_interactions=1, avg_message_length=100.0,
                                           conversation_depth_avg=1.0, first_interaction_tick=165, last_interaction_tick=165)
    path.write_text(json.dumps(d))
    return path


@pytest.mark.parametrize("plan", [[W17, P17], [P17, W17]], ids=["in-order", "penalty-first"])
@pytest.mark.parametrize("walk_threshold, b_score", [(3, 0.55), (0, 0.25)], ids=["within", "still-past"])
def test_whatif_drops_a_penalty_written_before_its_walk_away_as_one_written_after(capsys, tmp_path, content, plan, walk_threshold, b_score):
    """A what-if threshold that puts the walk-away within it drops its penalty, also when the
    penalty is written before the walk-away (T004): B's score follows the would-not-happen
    it lists. It was listed, yet still applied (0.25 in B, as in A)."""
    path = with_score(save(tmp_path, 1, plan))
    status = main(["whatif", str(path), "--content", str(content), "--set", f"npc.kael-davan.walk_away_threshold={walk_threshold}", "--format", "json"])
    doc = json.loads(capsys.readouterr().out)
    kael = doc["npcs"]["kael-davan"]
    assert (kael["a"]["score"], kael["b"]["score"]) == (0.25, pytest.approx(b_score))
    if walk_threshold == 3:
        assert kael["score_first_differs_tick"] == T
        assert [e["reason"] for e in doc["would_not_happen"]] == [
            "kael-davan: walk-away #2 is within the walk-away threshold of 3: no WalkAwayPenalty follows it"]
    assert status == 1


def test_why_stress_names_the_walk_away_each_stress_change_follows(capsys, tmp_path, content):
    """Kael's walk-aways #2 and #3, then both StressChanged, at one tick: the first is #2's,
    as check pairs them (the save is clean). Both were credited to #3, the nearest before."""
    path = save(tmp_path, 3, [W17, W17])
    d = json.loads(path.read_text())
    started, walked, stress = d["journal"][7:10]
    d["journal"][7:13] = [started, walked, d["journal"][10], d["journal"][11], stress, d["journal"][12]]
    path.write_text(json.dumps(d))
    assert check(capsys, path, content) == []
    assert main(["why", str(path), "npc:kael-davan.stress", "--content", str(content), "--tick", str(T), "--format", "json"]) == 0
    steps = [(s["journal_index"], s["detail"]) for s in json.loads(capsys.readouterr().out)["steps"]]
    assert steps[-2:] == [
        (11, "6 + 6 = 12 (cause walk_away: walk-away #2, InteractionWalkedAway #8 at tick 169: interaction.kael-davan_002 Active → WalkedAway); walk_away_stress_delta 6"),
        (12, "12 + 6 = 18 (cause walk_away: walk-away #3, InteractionWalkedAway #10 at tick 169: interaction.kael-davan_003 Active → WalkedAway); walk_away_stress_delta 6"),
    ]


def why_stress(capsys, path: Path, content: Path, tick: int = T) -> list[tuple[int, str]]:
    """``why npc:kael-davan.stress --format json`` at ``tick``: each step's journal index and detail."""
    main(["why", str(path), "npc:kael-davan.stress", "--content", str(content), "--tick", str(tick), "--format", "json"])
    return [(s["journal_index"], s["detail"]) for s in json.loads(capsys.readouterr().out)["steps"]]


def with_second_stress(path: Path, at: int, tick: int = T) -> Path:
    """``path`` with a second StressChanged of Kael (cause walk_away, 12 → 18) at journal
    index ``at`` and ``tick``, the snapshot's stress to match."""
    d = json.loads(path.read_text())
    d["journal"].insert(at, ev(tick, "StressChanged", target=17, delta=6, current_stress=18, cause="walk_away"))
    d["npcs"]["17"]["tolerance"]["current_stress"] = 18
    d["saved_at_tick"] = max(d["saved_at_tick"], tick)
    path.write_text(json.dumps(d))
    return path


WALK_2 = "walk-away #2, InteractionWalkedAway #8 at tick 169: interaction.kael-davan_002 Active → WalkedAway"


def test_why_stress_names_the_walk_away_a_second_stress_change_follows(capsys, tmp_path, content):
    """A walk-away followed by two StressChanged (cause walk_away): the replay pairs the
    first with it; the second said "no walk-away of Kael Davan precedes it at tick 169",
    with walk-away #2 right before it. It names that walk-away and the stress change
    that is the walk-away's own."""
    path = with_second_stress(save(tmp_path, 3, [W17]), 10)
    assert why_stress(capsys, path, content)[-2:] == [
        (9, f"6 + 6 = 12 (cause walk_away: {WALK_2}); walk_away_stress_delta 6"),
        (10, f"12 + 6 = 18 (cause walk_away: a further stress change after {WALK_2} (its stress change is #9)); walk_away_stress_delta 6"),
    ]


def test_why_stress_of_a_walk_away_stress_change_at_a_later_tick_names_the_last_walk_away(capsys, tmp_path, content):
    """One at a tick with no walk-away: it follows walk-away #2 all the same, two ticks on."""
    path = with_second_stress(save(tmp_path, 3, [W17]), 10, T + 2)
    assert why_stress(capsys, path, content, T + 2)[-1] == (
        10, f"12 + 6 = 18 (cause walk_away: no walk-away of Kael Davan at tick 171; the last before it is {WALK_2}); walk_away_stress_delta 6")


def test_why_stress_of_two_stress_changes_written_before_their_walk_away(capsys, tmp_path, content):
    """Both written before the walk-away at its tick: the first is its own (T003 says it
    comes first), the second a further one, before it."""
    path = with_second_stress(save(tmp_path, 3, [W17]), 10)
    d = json.loads(path.read_text())
    d["journal"][8:11] = [d["journal"][9], d["journal"][10], d["journal"][8]]  # both StressChanged, then the walk-away
    path.write_text(json.dumps(d))
    walk = "walk-away #2, InteractionWalkedAway #10 at tick 169: interaction.kael-davan_002 Active → WalkedAway"
    assert why_stress(capsys, path, content)[-2:] == [
        (8, f"6 + 6 = 12 (cause walk_away: {walk}, written after this stress change (T003)); walk_away_stress_delta 6"),
        (9, f"12 + 6 = 18 (cause walk_away: a further stress change before {walk} (its stress change is #8)); walk_away_stress_delta 6"),
    ]


def test_why_stress_of_a_walk_away_stress_change_before_any_walk_away(capsys, tmp_path, content):
    d = json.loads(save(tmp_path, 3, []).read_text())
    d["journal"].insert(2, ev(131, "StressChanged", target=17, delta=6, current_stress=6, cause="walk_away"))
    path = tmp_path / "before-any.json"
    path.write_text(json.dumps(d))
    assert why_stress(capsys, path, content, 131) == [
        (2, "0 + 6 = 6 (cause walk_away: no walk-away of Kael Davan precedes it); walk_away_stress_delta 6")]


def test_a_stress_change_written_before_its_walk_away_is_one_t003_that_says_so(capsys, tmp_path, content):
    """Save-format §5: a walk-away's StressChanged follows it at the same tick. One written
    before it is T003 on the walk-away (where it landed) saying so, not "has no StressChanged
    ... at the same tick", which was false: it is there, in the wrong order."""
    path = save(tmp_path, 3, [W17])
    d = json.loads(path.read_text())
    d["journal"][8:10] = d["journal"][9:7:-1]  # the StressChanged, then the walk-away
    path.write_text(json.dumps(d))
    assert check(capsys, path, content) == [
        "T003 journal[9]: kael-davan: walk-away #2 at tick 169: its StressChanged (cause walk_away) comes before it, "
        "at journal[8]; a StressChanged follows its walk-away at the same tick"]
    assert main(["why", str(path), "npc:kael-davan.stress", "--content", str(content), "--tick", str(T), "--format", "json"]) == 0
    step = json.loads(capsys.readouterr().out)["steps"][-1]
    assert (step["journal_index"], step["detail"]) == (8, "6 + 6 = 12 (cause walk_away: walk-away #2, InteractionWalkedAway #9 at tick 169: "
                                                          "interaction.kael-davan_002 Active → WalkedAway, written after this stress change (T003)); "
                                                          "walk_away_stress_delta 6")

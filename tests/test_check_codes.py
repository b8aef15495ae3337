"""One minimal save per finding code of checks.md, and proof that the clean one is clean."""

from __future__ import annotations

import copy
import json
import re
from pathlib import Path

import pytest
from narrative_debugger.models.playthrough import Playthrough
from tests.support.files import write_files

DATA = Path(__file__).parent / "data"
BASE = json.loads((DATA / "minimal.json").read_text())

CONTENT_FILES = {
    "prompt.yaml": "narrator_prompt: You voice the Reach.\ncontext_token_budget: 2048\nmax_output_tokens: 300\n",
    "global/enums/topics.yaml": "- cargo\n- the-ring\n",
    "global/locations.yaml": "- dock-ward\n",
    "global/enums/fact_categories.yaml": "- contraband\n",
    "npcs/kael-davan.yaml": "name: Kael Davan\npronouns: he/him\ndescription: A dockhand.\ntolerance: {threshold: 40}\n",
    "monologues/pool.yaml": (
        "- id: after-kael\n  text: Kael noticed.\n  prerequisites:\n    interaction: {target: 'npc:kael-davan', state: walked_away}\n"
        "- id: ring-rumour\n  text: The ring is real.\n  prerequisites:\n    facts:\n      - {fact_id: contraband.ring_exists, min_confidence: knows_details}\n"
    ),
    "lore/dock.yaml": "- id: dock-ward\n  name: Dock Ward\n  keys: cargo, dock\n  entry: The dock ward smells of tar.\n",
}


@pytest.fixture(scope="module")
def content_dir(tmp_path_factory) -> Path:
    return write_files(tmp_path_factory.mktemp("content"), CONTENT_FILES)


def run(tmp_path: Path, content_dir: Path, doc=None, raw: bytes | None = None, name="save.json") -> Playthrough:
    path = tmp_path / name
    path.write_bytes(raw if raw is not None else json.dumps(doc).encode())
    return Playthrough.open(path, content_dir)


def codes(play: Playthrough) -> set[str]:
    return {f.code for f in play.findings}


def fact(doc):
    return doc["player"]["knowledge"]["facts"]["interaction.kael-davan_001"]


def meta(doc):
    return fact(doc)["metadata"]["Interaction"]


def npc(doc):
    return doc["npcs"]["17"]


def ev(tick, variant, **fields):
    return {"tick": tick, "event": {variant: fields}}


def test_minimal_save_is_clean(tmp_path, content_dir):
    play = run(tmp_path, content_dir, BASE)
    assert play.readable
    assert play.findings == []


def _mut_k005(d):
    d["npcs"]["9"] = copy.deepcopy(d["npcs"]["17"]) | {"slug": "sera-venn", "walk_aways": 0}
    d["npcs"]["9"]["tolerance"]["current_stress"] = 0
    d["npcs"] = {"17": d["npcs"]["17"], "9": d["npcs"]["9"]}  # "17" before "9": string order, not numeric


def _mut_i001(d):
    d["journal"].append(ev(165, "InteractionStarted", target=17, player_initiated=True, location="dock-ward"))
    d["journal"].append(ev(166, "InteractionConflictAbandoned", target=17))  # Active -> ConflictAbandoned


def _mut_i005(d):
    f2 = copy.deepcopy(fact(d))
    f2["metadata"]["Interaction"].update(interaction_state="Active", ended_tick=None, started_tick=166)
    f2["confidence"] = "Direct"
    f2["acquired_tick"] = 166
    f3 = copy.deepcopy(f2)
    d["player"]["knowledge"]["facts"]["interaction.kael-davan_002"] = f2
    d["player"]["knowledge"]["facts"]["interaction.kael-davan_003"] = f3


def _mut_i006(d):
    d["player"]["knowledge"]["facts"]["interaction.kael-davan_003"] = copy.deepcopy(fact(d))


def _mut_r002(d):
    d["journal"].append(ev(168, "RelationshipInteraction", target=17, sentiment=0.4, message_length=100, conversation_turns=1, delta=0.75, score_after=0.75))


def _mut_r003(d):
    d["journal"].append(ev(168, "RelationshipInteraction", target=17, sentiment=0.4, message_length=100, conversation_turns=1, delta=0.55, score_after=0.9))


def _mut_t003(d):
    d["journal"].pop()  # the StressChanged that must follow the walk-away


def _mut_t004(d):
    d["journal"].append(ev(164, "WalkAwayPenalty", target=17, penalty=0.3, score_after=0.0))  # walk-away 1 of threshold 2


def _mut_c(d):
    pass


MUTATIONS = {
    "F002": lambda d: d.pop("world_seed"),
    "K001": lambda d: d["player"]["knowledge"]["facts"].update(
        {"Contraband.Ring": {"confidence": "KnowsOf", "source": "Heard", "state": "Active", "acquired_tick": 1, "metadata": None}}
    ),
    "K002": lambda d: d["player"]["knowledge"]["facts"].update({"contraband.ring_exists": copy.deepcopy(fact(d))}),
    "K003": lambda d: d["player"]["knowledge"]["facts"].update({"interaction.kael-davan_01": d["player"]["knowledge"]["facts"].pop("interaction.kael-davan_001")}),
    "K004": lambda d: fact(d).update(acquired_tick=999),
    "K005": _mut_k005,
    "K006": lambda d: npc(d).update(slug="kael\u200bdavan"),  # a zero-width space: not kebab-case ASCII
    "I001": _mut_i001,
    "I002": lambda d: meta(d).update(ended_tick=None),
    "I003": lambda d: meta(d).update(ended_tick=100),
    "I004": lambda d: meta(d).update(confrontation=True),
    "I005": _mut_i005,
    "I006": _mut_i006,
    "I007": lambda d: (d["npcs"].update({"23": copy.deepcopy(npc(d)) | {"slug": "sera-venn", "walk_aways": 0}}), meta(d).update(target_entity=23)),
    "I008": lambda d: fact(d).update(confidence="Direct"),
    "I009": lambda d: meta(d).update(topics=["gossip-about-eels"]),
    "I010": lambda d: meta(d).update(target_entity=99),
    "I011": lambda d: d["journal"].append(ev(166, "InteractionCompleted", target=17, topics=[])) if False else d["journal"].insert(0, ev(100, "InteractionWalkedAway", target=17)),
    "I012": lambda d: d["npcs"].update({"18": copy.deepcopy(npc(d))}),  # a second NPC with kael-davan's slug
    "R001": lambda d: npc(d)["relationship"].update(score=150.0),
    "R002": _mut_r002,
    "R003": _mut_r003,
    "R004": lambda d: npc(d)["relationship"]["shared_references"].update(jokes=[f"j{i}" for i in range(11)]),
    "R005": lambda d: npc(d)["relationship"].update(positive_interactions=2),
    # Delta and score_after as the formula gives them for 1.5: only the range is wrong.
    "R006": lambda d: d["journal"].append(ev(168, "RelationshipInteraction", target=17, sentiment=1.5, message_length=100, conversation_turns=1, delta=1.1, score_after=1.45)),
    "T001": lambda d: d["journal"][-1]["event"]["StressChanged"].update(current_stress=9),
    "T002": lambda d: npc(d)["interaction_tolerance"].update(walk_away_threshold=9),
    "T003": _mut_t003,
    "T004": _mut_t004,
    "J001": lambda d: d["journal"].insert(2, ev(90, "DialogueLine", speaker=1, text="Earlier?")),
    "J002": lambda d: d["journal"].append(ev(200, "DialogueLine", speaker=1, text="Later.")),
    "J003": lambda d: npc(d).update(walk_aways=2),
    "J004": lambda d: d["journal"].insert(2, ev(131, "DialogueLine", speaker=555, text="Who am I?")),
    "C013": lambda d: d["npcs"].update({"24": copy.deepcopy(npc(d)) | {"slug": "wren-unlisted", "walk_aways": 0}}),
    "M001": lambda d: d["journal"].append(ev(165, "MonologueFired", line_id="ring-rumour")),
    "M002": lambda d: d["journal"].append(ev(165, "MonologueFired", line_id="no-such-line")),
}


@pytest.mark.parametrize("code", sorted(MUTATIONS))
def test_each_code_has_a_save_that_triggers_it(tmp_path, content_dir, code):
    doc = copy.deepcopy(BASE)
    MUTATIONS[code](doc)
    play = run(tmp_path, content_dir, doc)
    found = codes(play)
    assert code in found, [f"{f.code} {f.location} {f.message}" for f in play.findings]
    hit = next(f for f in play.findings if f.code == code)
    assert hit.location and hit.message


def test_m001_holds_when_prerequisite_is_met(tmp_path, content_dir):
    doc = copy.deepcopy(BASE)
    doc["journal"].append(ev(165, "MonologueFired", line_id="after-kael"))  # walked away at 164: holds
    assert "M001" not in codes(run(tmp_path, content_dir, doc))


def test_m001_is_judged_at_the_end_of_the_tick(tmp_path, content_dir):
    doc = copy.deepcopy(BASE)
    doc["journal"].insert(2, ev(164, "MonologueFired", line_id="after-kael"))  # before the walk-away, same tick
    assert "M001" not in codes(run(tmp_path, content_dir, doc))


def test_penalty_beyond_threshold_is_required(tmp_path, content_dir):
    doc = copy.deepcopy(BASE)
    npc(doc)["interaction_tolerance"]["walk_away_threshold"] = 1
    doc["journal"].extend(
        [
            ev(166, "InteractionStarted", target=17, player_initiated=False, location="dock-ward"),
            ev(169, "InteractionWalkedAway", target=17),
            ev(169, "StressChanged", target=17, delta=6, current_stress=12, cause="walk_away"),
        ]
    )
    play = run(tmp_path, content_dir, doc)
    assert "T004" in codes(play)
    doc["journal"].append(ev(169, "WalkAwayPenalty", target=17, penalty=0.3, score_after=0.0))
    assert "T004" not in codes(run(tmp_path, content_dir, doc))


@pytest.mark.parametrize(
    "raw, code",
    [
        (b'{"format": "settled-reach.save", "format_version": 1, "journal": [', "F001"),
        (b"\xff\xfe{}", "F001"),
        (b'{"format": "some-other-game", "format_version": 1}', "F003"),
        (b'{"format": "settled-reach.save", "format_version": 7}', "F003"),
    ],
)
def test_unreadable_files(tmp_path, content_dir, raw, code):
    play = run(tmp_path, content_dir, raw=raw)
    assert not play.readable
    assert code in codes(play)


def test_content_codes(tmp_path):
    root = tmp_path / "content"
    files = dict(CONTENT_FILES)
    files["npcs/Bad_Name.yaml"] = "pronouns: they/them\n"  # C002 twice: file name and no name
    files["monologues/broken.yaml"] = "- id: x\n  text: [unclosed\n"  # C001
    files["monologues/rules.yaml"] = (
        "- id: after-kael\n  text: duplicate id\n"  # C005
        "- id: bad-state\n  text: t\n  prerequisites:\n    interaction: {target: 'npc:kael-davan', state: furious}\n"  # C003
        "- id: bad-count\n  text: t\n  prerequisites:\n    interaction: {target: 'npc:kael-davan', min_count: 0}\n"  # C003
        "- id: a-list\n  text: t\n  prerequisites:\n    interaction:\n      - {target: 'npc:kael-davan'}\n"  # C003
        "- id: who\n  text: t\n  prerequisites:\n    interaction: {target: 'npc:nobody-here'}\n"  # C004
        "- id: what\n  text: t\n  prerequisites:\n    facts: [{fact_id: unicorns.exist, min_confidence: suspects}]\n"  # C004
    )
    for rel, text in files.items():
        path = root / rel
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text)
    play = run(tmp_path, root, BASE)
    found = [f for f in play.findings if f.code.startswith("C")]
    by_code = {}
    for f in found:
        by_code.setdefault(f.code, []).append(f)
    assert set(by_code) == {"C001", "C002", "C003", "C004", "C005"}
    assert len(by_code["C003"]) == 3 and len(by_code["C004"]) == 2 and len(by_code["C002"]) == 2
    c001 = by_code["C001"][0]
    assert re.fullmatch(r"monologues/broken.yaml:\d+:\d+", c001.location)
    assert by_code["C005"][0].location.startswith("monologues/rules.yaml:1:")


def test_event_after_every_interaction_ended_is_i011_not_i001(tmp_path, content_dir):
    """checks.md I011: an interaction event with nothing in progress, also when the NPC's
    earlier interactions have all ended (was reported as I001 "Completed -> Completed")."""
    doc = copy.deepcopy(BASE)
    doc["journal"].append(ev(165, "InteractionCompleted", target=17, topics=[]))
    play = run(tmp_path, content_dir, doc)
    found = [f for f in play.findings if f.code in ("I001", "I011")]
    assert [f.code for f in found] == ["I011"], [f"{f.code} {f.message}" for f in found]
    assert found[0].target.kind == "journal"
    assert found[0].target.journal_index == len(doc["journal"]) - 1
    assert found[0].target.npc == "kael-davan"


@pytest.mark.parametrize(
    "raw, said",
    [
        (b'{"format": 1}', "has 'format' an integer 1, not the string 'settled-reach.save'"),
        (b'{"format": true}', "has 'format' a boolean true, not the string 'settled-reach.save'"),
        (b'{"format": null}', "has 'format' null, not the string 'settled-reach.save'"),
        (b'{"format": ["settled-reach.save"]}', "has 'format' a list, not the string 'settled-reach.save'"),
        (b'{"format": "x"}', "has 'format' 'x', not 'settled-reach.save'"),
        (b'{"world_seed": 3}', "has no 'format' field"),
    ],
)
def test_f003_names_what_the_format_field_holds(raw, said):
    # {"format": 1} used to read "has 'format' '1'", quoting the number as text, and
    # {"format": null} "has no 'format' field".
    from narrative_debugger.models.save.savefile import load_save_bytes

    (f,) = load_save_bytes(raw, "x.json").findings
    assert f.code == "F003" and f.message == f"x.json {said}: this is not a Settled Reach save", f.message


def test_c004_reads_the_facts_learned_anywhere_in_the_journal(tmp_path):
    """A fact category that only the journal's FactLearned entries name is known,
    wherever its entry falls (first, last, between others); a category nothing names is
    still C004. An open reads them from the replay's index instead: the same findings."""
    from narrative_debugger.models.rules import checks
    from narrative_debugger.models.rules.findings import FindingSink

    learned = ["omens", "tides", "debts", "ghosts"]  # named only by FactLearned entries
    files = dict(CONTENT_FILES)
    files["monologues/learned.yaml"] = "".join(
        f"- id: needs-{cat}\n  text: t\n  prerequisites:\n    facts: [{{fact_id: {cat}.seen, min_confidence: suspects}}]\n"
        for cat in [*learned, "unicorns"]
    )
    root = tmp_path / "content"
    for rel, text in files.items():
        (root / rel).parent.mkdir(parents=True, exist_ok=True)
        (root / rel).write_text(text)
    doc = copy.deepcopy(BASE)
    journal = doc["journal"]
    first, last = journal[0]["tick"], journal[-1]["tick"]

    def learn(tick, cat):
        return ev(tick, "FactLearned", fact_id=f"{cat}.seen", confidence="KnowsOf", source="ToldBy")

    # The first entry, between two others, and the last two: the first and the last entry
    # of a pass, and entries of other kinds around them.
    journal[:0] = [learn(first, learned[0])]
    journal.insert(3, learn(journal[2]["tick"], learned[1]))
    journal += [learn(last, learned[2]), learn(last, learned[3])]
    play = run(tmp_path, root, doc)
    c004 = [f.message for f in play.findings if f.code == "C004"]
    assert len(c004) == 1 and "'unicorns'" in c004[0], c004
    scanned = FindingSink()
    checks.check_content(play.content, [play.save], scanned)  # no index: the journal's entries
    assert [f.message for f in scanned.close() if f.code == "C004"] == c004


def test_a_save_without_its_player_gives_one_j004_per_speaker_not_one_per_line(tmp_path):
    """Without a readable player every player line was a J004: the evening sample gave
    one F002 and 1 363 J004 (carried bug: finding cascades). Now each unknown speaker
    has one J004, on its first line, that counts its lines and names the cause."""
    from tests.conftest import SAMPLES

    doc = json.loads((SAMPLES / "evening.json").read_text())
    player = doc.pop("player")["stable_id"]
    lines = [k for k, e in enumerate(doc["journal"]) if e["event"].get("DialogueLine", {}).get("speaker") == player]
    doc["journal"].insert(3, ev(doc["journal"][3]["tick"], "DialogueLine", speaker=555, text="Who am I?"))
    play = run(tmp_path, SAMPLES / "content", doc)
    j004 = [f for f in play.findings if f.code == "J004"]
    first = lines[0] + (lines[0] >= 3)  # the player's first line, after the insert
    assert sorted(f.location for f in j004) == sorted([f"journal[{first}].event.DialogueLine.speaker", "journal[3].event.DialogueLine.speaker"])
    by_speaker = {f.message.split()[2]: f for f in j004}
    assert by_speaker[str(player)].values == (("lines", f"{len(lines):,}"),)
    assert f"({len(lines):,} lines, the first here); the save's player could not be read (F002 at player)" in by_speaker[str(player)].message
    assert by_speaker["555"].values == (("lines", "1"),) and "lines, the first" not in by_speaker["555"].message
    assert by_speaker["555"].target.stable_id == 555 and by_speaker[str(player)].target.stable_id == player  # as I010's
    assert [f.code for f in play.findings].count("F002") == 1 and len(lines) > 1000


def test_events_about_an_npc_missing_from_the_save_give_one_i010(tmp_path):
    """An NPC missing from ``npcs`` gave one I010 per event about them (113 on the
    evening sample; new-user trial): now one, on the first event, with the count."""
    from tests.conftest import SAMPLES

    doc = json.loads((SAMPLES / "evening.json").read_text())
    del doc["npcs"]["17"]
    events = [k for k, e in enumerate(doc["journal"]) if next(iter(e["event"].values())).get("target") == 17]
    play = run(tmp_path, SAMPLES / "content", doc)
    journal = [f for f in play.findings if f.code == "I010" and f.location.startswith("journal")]
    assert len(journal) == 1 and len(events) > 100
    assert journal[0].location.startswith(f"journal[{events[0]}].")
    assert journal[0].values == (("events", f"{len(events):,}"),) and f"({len(events):,} events name it, the first here)" in journal[0].message
    assert journal[0].target.stable_id == 17


def test_entries_behind_one_huge_tick_give_one_j001(tmp_path):
    """One entry at tick 2^64 - 1 made each of the 3 795 after it a J001 (new-user
    trial): now one, on the first entry behind it, naming it and counting them."""
    from tests.conftest import SAMPLES

    doc = json.loads((SAMPLES / "evening.json").read_text())
    doc["journal"][4]["tick"] = 2**64 - 1
    play = run(tmp_path, SAMPLES / "content", doc)
    j001 = [f for f in play.findings if f.code == "J001"]
    behind = len(doc["journal"]) - 5
    assert [f.location for f in j001] == ["journal[5].tick"]
    assert j001[0].values == (("entries behind", f"{behind:,}"),)
    assert f"comes after tick {2**64 - 1}: ticks never decrease ({behind:,} entries are behind journal[4]'s tick, the first here)" in j001[0].message
    assert j001[0].target.previous_journal_index == 4  # the culprit view selects both entries


def test_check_warns_when_content_has_no_content(tmp_path):
    """``--content`` naming a folder with nothing of a content folder in it: a warning
    on stderr, the check still runs (its M002s say what is missing)."""
    import subprocess
    import sys

    from tests.conftest import SAMPLES

    empty = tmp_path / "empty"
    empty.mkdir()
    done = subprocess.run([sys.executable, "-m", "narrative_debugger.app", "check", str(SAMPLES / "evening.json"), "--content", str(empty), "--format", "json"],
                          capture_output=True, text=True, timeout=120)
    assert done.returncode == 1 and json.loads(done.stdout)
    assert f"warning: --content {empty} has none of prompt.yaml, npcs, monologues, lore, global: is it a content folder?" in done.stderr
    done = subprocess.run([sys.executable, "-m", "narrative_debugger.app", "check", str(SAMPLES / "evening.json"), "--content", str(SAMPLES / "content")],
                          capture_output=True, text=True, timeout=120)
    assert done.returncode == 0 and "warning" not in done.stderr


def test_diff_warns_once_per_content_flag_and_a_file_named_npcs_is_no_content(tmp_path):
    """diff warned twice for one --content (both sides), always as --content; a plain
    file named npcs silenced the warning (second trial)."""
    import subprocess
    import sys

    from tests.conftest import SAMPLES

    odd = tmp_path / "odd"
    odd.mkdir()
    (odd / "npcs").write_text("not a folder")
    base = [sys.executable, "-m", "narrative_debugger.app", "diff"]
    done = subprocess.run([*base, str(SAMPLES / "evening.json"), str(SAMPLES / "walkaway-spiral.json"), "--content", str(odd)],
                          capture_output=True, text=True, timeout=120)
    assert done.stderr.count("is it a content folder?") == 1 and f"warning: --content {odd} has none" in done.stderr
    done = subprocess.run([*base, str(SAMPLES / "evening.json"), "--content", str(SAMPLES / "content"), "--content-b", str(odd)],
                          capture_output=True, text=True, timeout=120)
    assert done.stderr.count("is it a content folder?") == 1 and f"warning: --content-b {odd} has none" in done.stderr

"""Tests of the save generator (tests.support.savegen) and the sample saves it writes.

The saves are checked by ``tests/generator_audit.py``, a separate reading of the save
contract (not the application's replay). The 1M-entry ``large`` run is never
made here; 20 000 entries stand in for it.
"""

from __future__ import annotations

import ast
import gzip
import importlib.util
import json
import re
import sys
import time
from collections import Counter
from pathlib import Path

import pytest

from tests.support.savegen import generator
from tests.support.savegen.content import load_yaml
from tests.support.savegen.generator import f32, generate_save, generate_save_file, inject_faults, write_samples, write_save

yaml = pytest.importorskip("yaml")
from tests.generator_audit import audit, read_content  # noqa: E402

ROOT = Path(__file__).resolve().parent.parent
SAMPLES = ROOT / "sample_saves"
CONTENT_DIR = SAMPLES / "content"
SCENARIOS = ("evening", "walkaway-spiral", "abandoned-confrontation", "large", "many-conversations")


@pytest.fixture(scope="module")
def content():
    return read_content(CONTENT_DIR)


def kinds(doc):
    return Counter(next(iter(e["event"])) for e in doc["journal"])


def bodies(doc, kind):
    return [(i, e["tick"], e["event"][kind]) for i, e in enumerate(doc["journal"]) if kind in e["event"]]


# -- numbers and bytes -----------------------------------------------------------


def test_f32_writes_the_shortest_round_trip_decimal():
    assert f32(0.1 + 0.2) == 0.3
    assert repr(f32(1 / 3)) == "0.33333334"
    assert f32(100.0) == 100.0 and f32(0.0) == 0.0
    assert repr(f32(51.622000001)) == "51.622"


@pytest.mark.parametrize("scenario", SCENARIOS)
def test_same_seed_gives_identical_bytes(tmp_path, scenario):
    first, second = tmp_path / "a.json", tmp_path / "b.json"
    write_save(generate_save(seed=4, events=700, scenario=scenario), first)
    write_save(generate_save(seed=4, events=700, scenario=scenario), second)
    assert first.read_bytes() == second.read_bytes()
    write_save(generate_save(seed=5, events=700, scenario=scenario), second)
    assert first.read_bytes() != second.read_bytes()


@pytest.mark.parametrize("scenario", SCENARIOS)
def test_a_save_streamed_to_its_file_has_the_bytes_of_the_whole_document(tmp_path, scenario):
    # The benchmarks' 10 000 000-entry saves are streamed: they must be the saves the
    # generator's document gives, byte for byte, and leave no spool file behind.
    write_save(generate_save(seed=4, events=900, scenario=scenario), tmp_path / "whole.json")
    generate_save_file(tmp_path / "streamed.json", seed=4, events=900, scenario=scenario)
    assert (tmp_path / "streamed.json").read_bytes() == (tmp_path / "whole.json").read_bytes()
    assert sorted(p.name for p in tmp_path.iterdir()) == ["streamed.json", "whole.json"]


def test_gzip_output_is_deterministic_and_compact(tmp_path):
    doc = generate_save(seed=2, events=300)
    write_save(doc, tmp_path / "a.json.gz")
    write_save(doc, tmp_path / "b.json.gz")
    packed = (tmp_path / "a.json.gz").read_bytes()
    assert packed == (tmp_path / "b.json.gz").read_bytes()
    raw = gzip.decompress(packed)
    assert raw == json.dumps(doc, separators=(",", ":"), ensure_ascii=False).encode("utf-8")
    assert b": " not in raw[:200] and not raw.endswith(b"\n")


def test_maps_are_in_btreemap_order():
    doc = generate_save(seed=9, events=2000)
    npcs = list(doc["npcs"])
    assert npcs == sorted(npcs, key=int) and npcs != sorted(npcs)
    assert max(map(int, npcs)) > 2**53
    entities = list(doc["player"]["knowledge"]["entities"])
    assert entities == sorted(entities, key=int)
    facts = list(doc["player"]["knowledge"]["facts"])
    assert facts == sorted(facts, key=lambda k: k.encode("utf-8"))
    raw = json.dumps(doc, separators=(",", ":"))
    assert raw.index('"9":{"slug"') < raw.index('"17":{"slug"') < raw.index('"130":{"slug"')


def test_big_stable_ids_survive_a_round_trip(tmp_path):
    doc = generate_save(seed=1, events=1500)
    write_save(doc, tmp_path / "s.json")
    back = json.loads((tmp_path / "s.json").read_text(encoding="utf-8"))
    assert "9007199254740993" in back["npcs"]
    targets = {e["event"]["InteractionStarted"]["target"] for e in back["journal"]
               if "InteractionStarted" in e["event"]}
    assert 9007199254740993 in targets


# -- rules the journal shows -----------------------------------------------------------


@pytest.mark.parametrize("scenario", SCENARIOS)
@pytest.mark.parametrize("seed", [1, 7, 12])
def test_replay_matches_snapshot_and_rules_hold(content, scenario, seed):
    doc = generate_save(seed=seed, events=2500, scenario=scenario)
    assert audit(doc, content) == []


@pytest.mark.parametrize("events", [0, 1, 2, 3, 5, 17, 301, 4000])
def test_journal_has_exactly_the_requested_entries(content, events):
    for scenario in SCENARIOS:
        doc = generate_save(seed=events, events=events, scenario=scenario)
        assert len(doc["journal"]) == events
        assert audit(doc, content) == []
        last = doc["journal"][-1]["tick"] if events else 0
        assert doc["saved_at_tick"] >= last


def test_many_conversations_has_two_exchanges_a_conversation():
    """The benchmark's long-history shape (issue 37): "large" with two exchanges a
    conversation, so the same number of entries holds many more conversations."""
    large = kinds(generate_save(seed=6, events=6000, scenario="large"))["InteractionStarted"]
    many = generate_save(seed=6, events=6000, scenario="many-conversations")
    assert kinds(many)["InteractionStarted"] > 1.3 * large
    journal = many["journal"]
    starts = [i for i, e in enumerate(journal) if "InteractionStarted" in e["event"]]
    for start, end in zip(starts, starts[1:]):
        ended = [i for i in range(start, end) if set(journal[i]["event"]) & {"InteractionCompleted", "InteractionWalkedAway", "InteractionConflictAbandoned"}]
        player_lines = [i for i in range(start, ended[0] if ended else end) if journal[i]["event"].get("DialogueLine", {}).get("speaker") == 1]
        assert len(player_lines) <= 3  # two exchanges and a closing line


def test_walk_aways_pair_with_stress_and_penalty():
    doc = generate_save(seed=3, events=500, scenario="walkaway-spiral")
    journal, npcs = doc["journal"], doc["npcs"]
    counts: Counter = Counter()
    for i, entry in enumerate(journal):
        kind, body = next(iter(entry["event"].items()))
        if kind not in ("InteractionWalkedAway", "InteractionConflictAbandoned"):
            assert kind != "WalkAwayPenalty" or next(iter(journal[i - 2]["event"])).startswith("Interaction")
            continue
        tol = npcs[str(body["target"])]["interaction_tolerance"]
        counts[body["target"]] += 1
        stress = journal[i + 1]
        assert stress["tick"] == entry["tick"]
        assert stress["event"]["StressChanged"] == {
            "target": body["target"], "delta": tol["walk_away_stress_delta"],
            "current_stress": stress["event"]["StressChanged"]["current_stress"], "cause": "walk_away"}
        follow = journal[i + 2] if i + 2 < len(journal) else {"event": {}}
        penalised = "WalkAwayPenalty" in follow["event"]
        assert penalised == (counts[body["target"]] > tol["walk_away_threshold"])
        if penalised:
            assert follow["tick"] == entry["tick"]
            assert follow["event"]["WalkAwayPenalty"]["penalty"] == tol["walk_away_penalty"]


def test_interaction_ids_are_sequential_per_npc():
    doc = generate_save(seed=8, events=20_000, scenario="large")
    numbers: dict[str, list[int]] = {}
    for fact_id, fact in doc["player"]["knowledge"]["facts"].items():
        if fact_id.startswith("interaction."):
            slug, number = fact_id[len("interaction."):].rsplit("_", 1)
            assert len(number) >= 3 and (len(number) == 3 or number[0] != "0")
            assert fact["metadata"]["Interaction"]["target_entity"] == next(
                int(k) for k, v in doc["npcs"].items() if v["slug"] == slug)
            numbers.setdefault(slug, []).append(int(number))
    starts = Counter(e["event"]["InteractionStarted"]["target"] for e in doc["journal"]
                     if "InteractionStarted" in e["event"])
    for slug, found in numbers.items():
        assert sorted(found) == list(range(1, len(found) + 1))
    assert sum(starts.values()) == sum(len(v) for v in numbers.values())


def test_dialogue_only_inside_conversations():
    doc = generate_save(seed=6, events=3000)
    active = None
    for entry in doc["journal"]:
        kind, body = next(iter(entry["event"].items()))
        if kind == "InteractionStarted":
            active = body["target"]
        elif kind in ("InteractionCompleted", "InteractionWalkedAway", "InteractionConflictAbandoned"):
            active = None
        elif kind == "DialogueLine":
            assert active is not None and body["speaker"] in (active, doc["player"]["stable_id"])


def test_monologue_lines_fire_alone_at_their_tick():
    doc = generate_save(seed=7, events=3800)
    journal = doc["journal"]
    fired = [i for i, e in enumerate(journal) if "MonologueFired" in e["event"]]
    assert fired
    for i in fired:
        assert journal[i - 1]["tick"] < journal[i]["tick"] if i else True
        assert i + 1 == len(journal) or journal[i + 1]["tick"] > journal[i]["tick"]


def test_large_scenario_scales(content):
    started = time.perf_counter()
    doc = generate_save(seed=5, events=20_000, scenario="large")
    assert time.perf_counter() - started < 5.0
    assert len(doc["journal"]) == 20_000
    assert audit(doc, content) == []
    assert kinds(doc)["WalkAwayPenalty"] > 0


# -- scenarios --------------------------------------------------------------------------


def test_evening_moves_scores_across_levels_and_shares_references():
    doc = generate_save(seed=7, events=3800)
    rel = {v["slug"]: v["relationship"] for v in doc["npcs"].values()}
    assert rel["lera-sessik"]["score"] > 80
    assert any(r["score"] <= 20 for r in rel.values()) and any(20 < r["score"] <= 40 for r in rel.values())
    refs = rel["lera-sessik"]["shared_references"]
    assert refs["jokes"] and refs["nicknames"]
    assert kinds(doc)["WalkAwayPenalty"] == 0 and kinds(doc)["InteractionWalkedAway"] > 0
    lines = " ".join(b["text"].lower() for _, _, b in bodies(doc, "DialogueLine"))
    for key in ("harbor", "the ring", "lighthouse", "dock", "guild", "salt"):
        assert key in lines


def test_walkaway_spiral_pushes_kael_past_threshold():
    doc = generate_save(seed=3, events=500, scenario="walkaway-spiral")
    kael = doc["npcs"]["17"]
    assert kael["walk_aways"] > kael["interaction_tolerance"]["walk_away_threshold"]
    assert kael["tolerance"]["current_stress"] > kael["tolerance"]["threshold"]
    penalties = [b for _, _, b in bodies(doc, "WalkAwayPenalty")]
    assert penalties and all(b["target"] == 17 for b in penalties)


def test_abandoned_confrontation_escalates_then_is_abandoned():
    doc = generate_save(seed=33, events=900, scenario="abandoned-confrontation")
    journal = doc["journal"]
    abandoned = bodies(doc, "InteractionConflictAbandoned")
    assert abandoned
    i, _, body = abandoned[0]
    mine = [next(iter(e["event"])) for e in journal[:i]
            if next(iter(e["event"].values())).get("target") == body["target"]]
    since_start = mine[len(mine) - 1 - mine[::-1].index("InteractionStarted"):]
    assert "InteractionConfrontation" in since_start
    assert not {"InteractionCompleted", "InteractionWalkedAway"} & set(since_start)
    facts = doc["player"]["knowledge"]["facts"].values()
    assert any(f["metadata"] and f["metadata"]["Interaction"]["interaction_state"] == "ConflictAbandoned"
               and f["metadata"]["Interaction"]["confrontation"] for f in facts)
    assert any(f["metadata"] and f["metadata"]["Interaction"]["interaction_state"] == "Completed"
               and f["metadata"]["Interaction"]["confrontation"] for f in facts)


# -- faults --------------------------------------------------------------------------


def test_injected_faults_are_found_and_nothing_else(content):
    doc = generate_save(seed=11, events=3000)
    faults = inject_faults(doc)
    assert len({f["code"] for f in faults}) >= 10
    found = audit(doc, content)
    codes = {code for code, _ in found}
    assert {f["code"] for f in faults} <= codes
    allowed = {f["code"] for f in faults} | {c for f in faults for c in f["also"]}
    assert codes <= allowed, codes - allowed
    for fault in faults:
        assert any(code == fault["code"] and (fault["where"].startswith(where) or where.startswith(fault["where"]))
                   for code, where in found), fault


def test_faults_plant_k003_when_every_npc_has_100_interactions_or_more(content):
    """From 100 on a number's unpadded form is its padded one: K003 is then planted as
    one zero too many (``_0123``). Before, ``--faults`` failed on every save that long."""
    doc = generate_save(seed=11, events=20_000, scenario="large")
    faults = inject_faults(doc)
    (k003,) = [f for f in faults if f["code"] == "K003"]
    assert k003["where"].rsplit("_", 1)[-1].startswith("0") and len(k003["where"].rsplit("_", 1)[-1]) >= 4
    found = audit(doc, content)
    assert any(code == "K003" and where.startswith(k003["where"]) for code, where in found)


# -- sample saves and content ----------------------------------------------------------


def test_sample_saves_are_current_and_small(tmp_path):
    faults = write_samples(tmp_path)
    for path in sorted(tmp_path.glob("*.json")):
        committed = SAMPLES / path.name
        assert committed.exists(), path.name
        assert committed.read_bytes() == path.read_bytes(), f"{path.name} is stale: rerun write_samples"
        assert committed.stat().st_size < 1_000_000
    readme = (SAMPLES / "README.md").read_text(encoding="utf-8")
    for fault in faults:
        assert f"`{fault['where']}`" in readme and fault["code"] in readme


def test_sample_evening_has_enough_events():
    doc = json.loads((SAMPLES / "evening.json").read_text(encoding="utf-8"))
    assert len(doc["journal"]) >= 300


def test_content_reader_agrees_with_pyyaml():
    for path in sorted(CONTENT_DIR.rglob("*.yaml")):
        assert load_yaml(path) == yaml.safe_load(path.read_text(encoding="utf-8")), path


def test_content_is_well_formed(content):
    ids = []
    for path in sorted((CONTENT_DIR / "monologues").glob("*.yaml")):
        for line in yaml.safe_load(path.read_text(encoding="utf-8")):
            ids.append(line["id"])
            assert isinstance(line["text"], str) and all(isinstance(t, str) for t in line["tags"])
            pre = line["prerequisites"] or {}
            assert set(pre) <= {"facts", "interaction"}
            for fact in pre.get("facts", []):
                assert set(fact) == {"fact_id", "min_confidence"}
                assert fact["min_confidence"] in ("suspects", "knows_of", "knows_details", "direct")
            inter = pre.get("interaction")
            if inter is not None:
                assert isinstance(inter, dict) and set(inter) <= {"target", "state", "min_count"}
                assert inter["target"].split(":", 1)[1] in content["npcs"]
                assert inter.get("min_count", 1) >= 1
    assert len(ids) == len(set(ids)) and "the-last-shift_m_s_050" in ids
    for path in (CONTENT_DIR / "npcs").glob("*.yaml"):
        profile = yaml.safe_load(path.read_text(encoding="utf-8"))
        assert profile["name"] and isinstance(profile["tolerance"]["threshold"], int)
    for path in (CONTENT_DIR / "lore").glob("*.yaml"):
        for card in yaml.safe_load(path.read_text(encoding="utf-8")):
            assert set(card) == {"id", "name", "keys", "entry"} and isinstance(card["keys"], str)


def test_every_sample_npc_has_a_profile(content):
    for name in ("evening.json", "walkaway-spiral.json", "abandoned-confrontation.json"):
        doc = json.loads((SAMPLES / name).read_text(encoding="utf-8"))
        assert {v["slug"] for v in doc["npcs"].values()} <= content["npcs"]


# -- module hygiene ----------------------------------------------------------------------


def test_generator_modules_use_the_standard_library_only():
    allowed = set(sys.stdlib_module_names)
    for path in sorted((ROOT / "models").glob("generator*.py")):
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            if isinstance(node, ast.Import):
                names = [a.name for a in node.names]
            elif isinstance(node, ast.ImportFrom) and node.level == 0:
                names = [node.module]
            else:
                continue
            for name in names:
                assert name.split(".")[0] in allowed | {"__future__"}, (path.name, name)


def test_command_line_writes_a_save(tmp_path):
    out = tmp_path / "cli.json"
    assert generator.main(["--scenario", "evening", "--events", "300", "--seed", "7", "--out", str(out)]) == 0
    doc = json.loads(out.read_text(encoding="utf-8"))
    assert doc["format"] == "settled-reach.save" and len(doc["journal"]) == 300


def test_every_command_in_the_sample_readme_names_a_module_that_exists():
    # The page used to say `python -m models.generator`, a module that no longer exists.
    readme = (SAMPLES / "README.md").read_text(encoding="utf-8")
    modules = re.findall(r"^python -m (\S+)", readme, flags=re.M)
    assert modules
    for module in modules:
        assert importlib.util.find_spec(module) is not None, module


@pytest.mark.parametrize("scenario, events, code", [("large", 200, "T003"), ("evening", 50, "K001"), ("evening", 200, "K004")])
def test_faults_on_a_save_too_short_name_the_fault_and_write_nothing(tmp_path, capsys, scenario, events, code):
    """``--faults --events 200`` raised IndexError (stop 31's trial), and a save with one
    plain fact a KeyError: now exit 2 with the fault that did not fit."""
    from tests.support.savegen import generator

    out = tmp_path / "short.json"
    argv = ["--scenario", scenario, "--events", str(events), "--seed", "7" if scenario == "evening" else "11", "--faults", "--out", str(out)]
    assert generator.main(argv) == 2
    err = capsys.readouterr().err
    assert err.startswith(f"savegen: --faults: {code} needs ") and f"a save of {events:,} journal entries is too short" in err
    assert not out.exists()
    big = generate_save(seed=7, events=800, scenario=scenario)
    assert len(inject_faults(big)) == 13  # with room, every fault is planted


def test_a_negative_event_count_is_a_usage_error(tmp_path, capsys):
    """``--events -5`` ended in a traceback (trial)."""
    from tests.support.savegen import generator

    with pytest.raises(SystemExit) as stop:
        generator.main(["--events", "-5", "--out", str(tmp_path / "x.json")])
    assert stop.value.code == 2 and "argument --events: -5 is below 0" in capsys.readouterr().err

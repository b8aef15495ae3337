"""Hostile or broken files never raise, never hang, and say where the problem is."""

from __future__ import annotations

import copy
import gzip
import json
from pathlib import Path

import pytest
from narrative_debugger.models.content.loader import load_content
from narrative_debugger.models.playthrough import Playthrough
from narrative_debugger.models.save.jsonio import decode_bytes
from narrative_debugger.models.save.savefile import load_save_bytes

from tests.support.files import write_content

DATA = Path(__file__).parent / "data"
RAW = (DATA / "minimal.json").read_bytes()
BASE = json.loads(RAW)


def only(codes, findings):
    return [f for f in findings if f.code in codes]


def test_truncated_json_names_line_and_column():
    doc = decode_bytes(RAW[:400], "cut.json")
    assert doc.value is None
    (f,) = doc.findings
    assert f.code == "F001" and f.location.count(":") == 1


def test_utf8_bom_is_reported_and_read_past():
    save = load_save_bytes(b"\xef\xbb\xbf" + RAW, "bom.json")
    assert save.readable
    assert [f.code for f in save.findings] == ["F001"]
    assert "byte-order mark" in save.findings[0].message


@pytest.mark.parametrize("literal", ["NaN", "Infinity", "-Infinity"])
def test_nan_and_infinity_are_not_json(literal):
    text = RAW.decode().replace('"score": 0.0', f'"score": {literal}')
    doc = decode_bytes(text.encode(), "nan.json")
    assert doc.value is None
    assert doc.findings[0].code == "F001" and literal.lstrip("-") in doc.findings[0].message
    line, col = map(int, doc.findings[0].location.split(":"))
    assert text.splitlines()[line - 1][col - 1:].lstrip("-").startswith(literal.lstrip("-"))


def test_nan_inside_a_string_is_fine():
    text = RAW.decode().replace("Cargo's late again.", "NaN Infinity, said the clerk.")
    doc = decode_bytes(text.encode(), "ok.json")
    assert doc.value is not None and doc.findings == []


def test_duplicate_keys_are_reported_last_wins():
    text = RAW.decode().replace('"game_version": "0.7.2"', '"game_version": "0.7.2", "game_version": "0.7.3"')
    save = load_save_bytes(text.encode(), "dup.json")
    assert save.readable and save.game_version == "0.7.3"
    (f,) = only({"F001"}, save.findings)
    assert "game_version" in f.message


def test_deep_nesting_does_not_crash():
    raw = b'{"format": "settled-reach.save", "x": ' + b"[" * 100_000 + b"]" * 100_000 + b"}"
    doc = decode_bytes(raw, "deep.json")
    assert doc.value is None
    assert doc.findings[0].code == "F001" and "deep" in doc.findings[0].message


def test_huge_integer_is_refused_quickly():
    raw = RAW.decode().replace('"world_seed": 8812', '"world_seed": ' + "9" * 5000).encode()
    doc = decode_bytes(raw, "big.json")
    assert doc.value is None
    assert doc.findings[0].code == "F001" and "digits" in doc.findings[0].message


def test_u64_out_of_range_is_a_shape_error():
    doc = copy.deepcopy(BASE)
    doc["world_seed"] = 2**64
    save = load_save_bytes(json.dumps(doc).encode(), "u64.json")
    assert [f.location for f in save.findings] == ["world_seed"]


def test_u64_above_2_53_is_exact():
    doc = copy.deepcopy(BASE)
    doc["world_seed"] = 2**64 - 1
    doc["npcs"] = {"9007199254740993": doc["npcs"]["17"]}
    meta = doc["player"]["knowledge"]["facts"]["interaction.kael-davan_001"]["metadata"]["Interaction"]
    meta["target_entity"] = 9007199254740993
    for e in doc["journal"]:
        fields = next(iter(e["event"].values()))
        for k in ("target", "speaker"):
            if fields.get(k) == 17:
                fields[k] = 9007199254740993
    save = load_save_bytes(json.dumps(doc).encode(), "big-ids.json")
    assert save.world_seed == 2**64 - 1
    assert list(save.npcs) == [9007199254740993]
    assert save.findings == []


@pytest.mark.parametrize(
    "mutate, path",
    [
        (lambda d: d["journal"][0]["event"].update({"InteractionStarted": d["journal"][0]["event"]["InteractionStarted"]}) or d["journal"][0].update(event={"InteractionTeleported": {}}), "journal[0].event"),
        (lambda d: d["journal"][0].update(event={}), "journal[0].event"),
        (lambda d: d["journal"][1]["event"].update({"MonologueFired": {"line_id": "x"}}), "journal[1].event"),
        (lambda d: d["player"]["knowledge"]["facts"]["interaction.kael-davan_001"].update(confidence="Certain"), "player.knowledge.facts.interaction.kael-davan_001.confidence"),
        (lambda d: d["player"]["knowledge"]["facts"]["interaction.kael-davan_001"].update(metadata={"Interaction": {}, "Evidence": {}}), "player.knowledge.facts.interaction.kael-davan_001.metadata"),
        (lambda d: d["player"]["knowledge"]["facts"]["interaction.kael-davan_001"].update(metadata={}), "player.knowledge.facts.interaction.kael-davan_001.metadata"),
        (lambda d: d["journal"][2]["event"]["InteractionWalkedAway"].update(target="17"), "journal[2].event.InteractionWalkedAway.target"),
        (lambda d: d["journal"][2]["event"]["InteractionWalkedAway"].update(target=True), "journal[2].event.InteractionWalkedAway.target"),
    ],
)
def test_shape_errors_name_the_json_path(tmp_path, mutate, path):
    doc = copy.deepcopy(BASE)
    mutate(doc)
    p = tmp_path / "bad.json"
    p.write_text(json.dumps(doc))
    play = Playthrough.open(p)
    assert play.readable
    f002 = only({"F002"}, play.findings)
    assert f002, play.findings
    assert any(f.location == path for f in f002), [f.location for f in f002]
    play.state_at(play.last_tick)  # the rest is still usable


def test_gzip_save_and_broken_gzip(tmp_path):
    p = tmp_path / "s.json.gz"
    p.write_bytes(gzip.compress(RAW))
    assert Playthrough.open(p).findings == [] or all(f.code.startswith("C") for f in Playthrough.open(p).findings)
    p.write_bytes(gzip.compress(RAW)[:50])
    play = Playthrough.open(p)
    assert not play.readable and play.findings[0].code == "F001"
    p.write_bytes(RAW)  # .gz name, plain bytes
    play = Playthrough.open(p)
    assert not play.readable and "not gzip" in play.findings[0].message


def test_missing_file_and_directory(tmp_path):
    for p in (tmp_path / "nope.json", tmp_path):
        play = Playthrough.open(p)
        assert not play.readable and play.findings[0].code == "F001"


def test_wrong_top_level_types(tmp_path):
    for raw in (b"[]", b"42", b'"save"', b"null"):
        play = Playthrough.open(_write(tmp_path, raw))
        assert not play.readable


def _write(tmp_path, raw: bytes) -> Path:
    p = tmp_path / "x.json"
    p.write_bytes(raw)
    return p


def test_yaml_alias_bomb_is_refused(tmp_path):
    bomb = "a: &a [x, x, x, x, x, x, x, x, x]\n"
    prev = "a"
    for n in "bcdefghij":
        bomb += f"{n}: &{n} [" + ", ".join([f"*{prev}"] * 9) + "]\n"
        prev = n
    content = load_content(write_content(tmp_path, {"npcs/kael-davan.yaml": bomb}))
    (f,) = content.findings
    assert f.code == "C001" and "alias" in f.message


def test_yaml_11_scalars_stay_strings(tmp_path):
    root = write_content(
        tmp_path,
        {
            "global/enums/topics.yaml": "- no\n- on\n- 1:30\n- 2024-01-05\n- yes\n",
            "npcs/kael-davan.yaml": "name: Norway\npronouns: no\ndescription: on\n",
            "lore/x.yaml": "- id: 2024-01-05\n  name: off\n  keys: y, n\n  entry: 1:30\n",
        },
    )
    content = load_content(root)
    assert content.findings == []
    assert content.topics == {"no", "on", "1:30", "2024-01-05", "yes"}
    assert content.npcs["kael-davan"].pronouns == "no"
    card = content.cards[0]
    assert (card.id, card.name, card.keys, card.entry) == ("2024-01-05", "off", "y, n", "1:30")


def test_yaml_tabs_are_located(tmp_path):
    root = write_content(tmp_path, {"npcs/kael-davan.yaml": "name: Kael\ntolerance:\n\tthreshold: 4\n"})
    content = load_content(root)
    (f,) = content.findings
    assert f.code == "C001" and f.location.startswith("npcs/kael-davan.yaml:3:")


def test_content_never_written(tmp_path):
    root = write_content(tmp_path, {"npcs/kael-davan.yaml": "name: Kael\n"})
    before = {p: p.stat().st_mtime_ns for p in root.rglob("*")}
    load_content(root)
    assert {p: p.stat().st_mtime_ns for p in root.rglob("*")} == before


def test_lone_surrogate_escape_is_f001_with_location():
    text = RAW.decode().replace("Cargo's late again.", "Cargo\\ud800 late.")
    doc = decode_bytes(text.encode(), "lone.json")
    assert doc.value is None and doc.findings[0].code == "F001"
    line, col = map(int, doc.findings[0].location.split(":"))
    assert text.splitlines()[line - 1][col - 1 :].startswith("\\ud800")
    pair = RAW.decode().replace("Cargo's late again.", "Cargo \\ud83d\\ude00 late.")
    assert decode_bytes(pair.encode(), "pair.json").findings == []


def test_overlong_names_and_texts_are_cut_with_f002():
    doc = copy.deepcopy(BASE)
    doc["player"]["name"] = "A" * 10_000_000
    doc["story"]["story_summary"] = "x" * 5_000_000
    save = load_save_bytes(json.dumps(doc).encode(), "long.json")
    assert len(save.player.name) == 1_000 and len(save.story.story_summary) == 200_000
    assert {f.location for f in save.findings} == {"player.name", "story.story_summary"}


def test_gzip_bomb_is_refused_early():
    import zlib

    comp = zlib.compressobj(9, zlib.DEFLATED, 31)
    chunk = b" " * (1 << 20)
    data = b"".join(comp.compress(chunk) for _ in range(40)) + comp.flush()
    doc = decode_bytes(data, "bomb.json.gz", max_bytes=32 << 20)
    assert not doc.parsed and "larger than" in doc.findings[0].message


def test_npc_of_entry_names_target_speaker_or_interaction_slug():
    save = load_save_bytes(RAW, "minimal.json")
    assert [save.npc_of_entry(i) for i in range(len(save.journal))] == [17, 17, 17, 17]
    assert save.npc_of_entry(99) is None


@pytest.mark.parametrize("cut, said", [
    (lambda raw: raw[: raw.index(b'"Cargo') + 3], "a string starts here and the file ends before it does: the file looks cut off"),
    (lambda raw: raw[: raw.index(b",\n", len(raw) // 2) + 2], "the file ends before the document does"),
    (lambda raw: raw + b" {}", "more data after the end of the document"),
    (lambda raw: b"", "not valid JSON: the file is empty"),
    (lambda raw: b" \n\t\n", "not valid JSON: the file holds only white space"),
])
def test_a_cut_off_or_doubled_file_is_said_to_be_so_at_its_place(tmp_path, cut, said):
    from narrative_debugger.models.save.savefile import load_save

    raw = (Path(__file__).parent / "data" / "minimal.json").read_bytes()
    path = tmp_path / "cut.json"
    path.write_bytes(cut(raw))
    save = load_save(path)
    (f,) = [f for f in save.findings if f.code == "F001"]
    assert said in f.message and f.message.startswith("cut.json: not valid JSON: ")
    assert ":" in f.location and not f.message.rstrip().endswith(" at")


@pytest.mark.parametrize("value", [2**64, -1, "late", None])
def test_an_unreadable_saved_at_tick_stands_in_with_the_last_journal_tick(tmp_path, value):
    """One F002 at saved_at_tick, and the snapshot compared with the end of the journal:
    2**64 there used to compare it with tick 0 and report hundreds of J003/J002/K004."""
    import json

    from narrative_debugger.models.playthrough import Playthrough

    samples = Path(__file__).resolve().parents[1] / "sample_saves"
    doc = json.loads((samples / "walkaway-spiral.json").read_text(encoding="utf-8"))
    clean = Playthrough.open(samples / "walkaway-spiral.json", samples / "content")
    doc["saved_at_tick"] = value
    path = tmp_path / "saved_at.json"
    path.write_text(json.dumps(doc), encoding="utf-8")
    play = Playthrough.open(path, samples / "content")
    assert play.save.saved_at_tick == max(t for t in play.save.journal.ticks if t is not None)
    assert [f.location for f in play.findings if f.code == "F002"] == ["saved_at_tick"]
    # Nothing else than the clean save has (none): 2**64 gave 507 J003 and 115 warnings.
    assert sorted(f.code for f in play.findings) == sorted([f.code for f in clean.findings] + ["F002"])

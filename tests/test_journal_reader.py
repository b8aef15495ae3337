"""Reading the journal while it is decoded (JournalReader) gives exactly the Save that
parsing the whole decoded document gives: journal, findings and their order."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from narrative_debugger.models.save import fastjson, jsonio, saveshape
from narrative_debugger.models.save.saveshape import JournalReader
from narrative_debugger.models.save.savefile import load_save, save_from_document

ROOT = Path(__file__).resolve().parents[1]
SAMPLES = sorted((ROOT / "sample_saves").glob("*.json"))


def whole(path: Path):
    document, _ = jsonio.decode_file(path, path.name)
    return save_from_document(document, path.name, path)


def assert_same(path: Path, monkeypatch, *, read_in_pieces=True):
    monkeypatch.setattr(fastjson, "STEP_BYTES", 512)  # many pieces even in a small save
    pieces, typed = [], []
    real = JournalReader.add_text
    monkeypatch.setattr(JournalReader, "add_text", lambda self, text, first: pieces.append(first) or real(self, text, first))
    real_typed = saveshape._typed_piece
    monkeypatch.setattr(saveshape, "_typed_piece", lambda text: typed.append(real_typed(text) is not None) or real_typed(text))
    a, b = load_save(path), whole(path)
    assert (len(pieces) > 3) == read_in_pieces
    a.typed_pieces = typed  # what took the typed decode, for the tests below
    assert a.journal == b.journal
    assert [type(v) for d in a.journal.data if d for v in d.values()] == [type(v) for d in b.journal.data if d for v in d.values()]
    assert [(f.code, f.message, f.location) for f in a.findings] == [(f.code, f.message, f.location) for f in b.findings]
    assert a.document == b.document and a.knowledge.facts == b.knowledge.facts and a.npcs == b.npcs
    return a


@pytest.mark.parametrize("path", SAMPLES, ids=lambda p: p.name)
def test_samples(path, monkeypatch):
    careful = []
    real = jsonio.parse_document
    monkeypatch.setattr(jsonio, "parse_document", lambda *args: careful.append(1) or real(*args))
    save = assert_same(path, monkeypatch)
    assert careful == []  # the pieces' key counts proved the file clean: no careful parse
    assert len(save.journal) > 100
    assert all(save.typed_pieces)  # a clean save's pieces all decode straight into structs


def test_journal_shape_faults_keep_their_findings_and_order(tmp_path, monkeypatch):
    doc = json.loads((ROOT / "sample_saves" / "evening.json").read_text(encoding="utf-8"))
    journal = doc["journal"]
    journal[3]["event"] = {"DialogueLine": {"speaker": "nine", "text": "hi"}}
    journal[10]["tick"] = -4
    journal[20]["event"] = {"NoSuchEvent": {}}
    journal[-2]["event"] = {"FactLearned": {"fact_id": "a.b", "confidence": "Sure", "source": "Heard"}}
    journal.insert(30, {"tick": 1, "event": {"DialogueLine": {"speaker": 1, "text": "x" * 200_001}}})
    doc["npcs"]["9"]["walk_aways"] = "many"  # an F002 before the journal's, in the same sink
    path = tmp_path / "faults.json"
    path.write_text(json.dumps(doc, separators=(",", ":")), encoding="utf-8")
    careful = []
    real = jsonio.parse_document
    monkeypatch.setattr(jsonio, "parse_document", lambda *args: careful.append(1) or real(*args))
    save = assert_same(path, monkeypatch)
    assert careful == []  # shape faults are not JSON faults: the fast path still holds
    assert 0 < sum(save.typed_pieces) < len(save.typed_pieces)  # faulty pieces are checked entry by entry
    paths = [f.location for f in save.findings if f.code == "F002"]
    assert paths[0].startswith("npcs.9") and "journal[3].event.DialogueLine.speaker" in paths and paths[-1].startswith("journal[")


def test_a_duplicate_key_late_in_the_journal_falls_back_to_the_careful_parse(tmp_path, monkeypatch):
    text = (ROOT / "sample_saves" / "evening.json").read_text(encoding="utf-8")
    cut = text.rindex('{"tick":')
    path = tmp_path / "dup.json"
    path.write_text(text[:cut] + text[cut:].replace('{"tick":', '{"tick":1,"tick":', 1), encoding="utf-8")
    save = assert_same(path, monkeypatch)
    assert [f.code for f in save.findings if f.code == "F001"] == ["F001"]


@pytest.mark.parametrize("name", [
    "clean", "extra field", "extra entry key", "no tick", "negative tick", "tick too big", "bool tick", "float tick", "two variants",
    "unknown variant", "fields not object", "missing field", "topic not str", "bad enum", "bad optional enum", "enum not str",
    "null required enum", "second enum bad", "u32 too big", "number a bool", "number a string", "long text", "event empty",
])
def test_each_entry_fault_read_in_pieces_gives_the_whole_parse(name, tmp_path, monkeypatch):
    """The typed decode of a piece, its fallback to checking entry by entry, and the
    careful parse all agree, for every kind of faulty entry among clean ones."""
    import copy

    from tests.test_fast_journal import BASE, MUTATIONS

    doc = json.loads((ROOT / "sample_saves" / "evening.json").read_text(encoding="utf-8"))
    clean = [{"tick": 1, "event": {"DialogueLine": {"speaker": 9, "text": f"line {k}"}}} for k in range(60)]
    faulty = MUTATIONS[name](copy.deepcopy(BASE))
    faulty[-1]["tick"] = 2**63 - 1  # in the typed range; 2**64 - 1 is its own case below
    if "DialogueLine" in (faulty[-1]["event"] or {}):
        faulty[-1]["event"]["DialogueLine"]["speaker"] = 2**63 - 1
    doc["journal"] = clean + faulty + clean
    path = tmp_path / "case.json"
    path.write_text(json.dumps(doc, separators=(",", ":")), encoding="utf-8")
    save = assert_same(path, monkeypatch)
    assert any(save.typed_pieces)


def test_u64_values_past_i63_take_the_checked_path_and_stay_exact(tmp_path, monkeypatch):
    doc = json.loads((ROOT / "sample_saves" / "evening.json").read_text(encoding="utf-8"))
    doc["journal"] += [{"tick": 2**64 - 1, "event": {"DialogueLine": {"speaker": 2**64 - 1, "text": "end"}}}]
    path = tmp_path / "u64.json"
    path.write_text(json.dumps(doc, separators=(",", ":")), encoding="utf-8")
    save = assert_same(path, monkeypatch)
    assert save.journal.ticks[-1] == 2**64 - 1 and save.journal.data[-1].speaker == 2**64 - 1
    assert not all(save.typed_pieces) and any(save.typed_pieces)


def test_the_document_kept_for_the_key_order_checks_is_the_maps_keys():
    """Until the checks run, a save holds the keys of its three ordered maps, in file
    order, not the decoded document (a 1M-event save's peak held it beside the replay)."""
    from narrative_debugger.models.save.savefile import key_order_skeleton

    doc = {"format_version": 1, "player": {"name": "P", "knowledge": {"facts": {"b": {"x": 1}, "a": {"x": 2}}, "entities": {"10": {}, "2": {}}}},
           "npcs": {"10": {"slug": "k"}, "2": {"slug": "m"}}, "story": {"beats": [1, 2]}}
    kept = key_order_skeleton(doc)
    assert kept == {"player": {"knowledge": {"facts": {"b": None, "a": None}, "entities": {"10": None, "2": None}}}, "npcs": {"10": None, "2": None}}
    assert list(kept["player"]["knowledge"]["facts"]) == ["b", "a"] and list(kept["npcs"]) == ["10", "2"]
    # Values off the checked path that are not objects stay as they were: the check skips them.
    assert key_order_skeleton({"player": [1], "npcs": 3}) == {"player": [1], "npcs": 3}
    assert key_order_skeleton({"player": {"knowledge": "x"}}) == {"player": {"knowledge": "x"}}
    save = load_save(SAMPLES[0])
    assert set(save.document) <= {"player", "npcs"} and list(save.document["npcs"]) == [str(sid) for sid in save.npcs]
    assert all(value is None for value in save.document["npcs"].values())


@pytest.mark.parametrize("repeat_every", [3, None])
def test_repeated_texts_of_a_journal_are_one_object(tmp_path, monkeypatch, repeat_every):
    """Equal string values of the journal's entries share one str object (a 1M-entry
    save repeats its dialogue lines: ~95 MB of copies); texts that hardly repeat are
    left as decoded once the reader has seen enough of them. The values never change."""
    monkeypatch.setattr(fastjson, "STEP_BYTES", 512)  # many pieces
    monkeypatch.setattr(saveshape, "SHARE_SAMPLE", 10_000 if repeat_every else 40)
    doc = json.loads((ROOT / "sample_saves" / "evening.json").read_text(encoding="utf-8"))
    line = next(e for e in doc["journal"] if "DialogueLine" in e["event"])
    last = max(e["tick"] for e in doc["journal"])
    wanted = [f"line {k % repeat_every}" if repeat_every else f"line {k}" for k in range(300)]
    doc["journal"] += [{"tick": last, "event": {"DialogueLine": {"speaker": line["event"]["DialogueLine"]["speaker"], "text": text}}} for text in wanted]
    path = tmp_path / "repeats.json"
    path.write_text(json.dumps(doc, separators=(",", ":"), ensure_ascii=False), encoding="utf-8")  # the game's compact form: read in pieces
    save = load_save(path)
    texts = [d.text for d, kind in zip(save.journal.data, save.journal.kinds) if kind == "DialogueLine"][-300:]
    assert texts == wanted
    if repeat_every:
        assert len({id(text) for text in texts}) == repeat_every

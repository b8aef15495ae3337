"""The fast JSON path (msgspec) gives exactly what the careful parser gives, or defers to it."""

from __future__ import annotations

import gzip
import json
from pathlib import Path

import pytest
from narrative_debugger.models.save import fastjson, jsonio
from narrative_debugger.models.save.fastjson import NOT_PROVEN, count_keys, fast_decode
from narrative_debugger.models.save.jsonio import decode_bytes, decode_file, parse_text

ROOT = Path(__file__).resolve().parents[1]
SAMPLES = sorted((ROOT / "sample_saves").glob("*.json"))
RAW = (Path(__file__).parent / "data" / "minimal.json").read_bytes()


def careful(data: bytes, label: str = "x.json", monkeypatch=None) -> jsonio.JsonDocument:
    """decode_bytes with the fast path switched off."""
    monkeypatch.setattr(jsonio, "fast_decode", lambda data, reader=None: NOT_PROVEN)
    try:
        return decode_bytes(data, label)
    finally:
        monkeypatch.undo()


def same(a: jsonio.JsonDocument, b: jsonio.JsonDocument) -> None:
    assert json.dumps(a.value, sort_keys=False) == json.dumps(b.value, sort_keys=False)
    assert a.value == b.value
    assert [(f.code, f.message, f.location) for f in a.findings] == [(f.code, f.message, f.location) for f in b.findings]
    assert a.size == b.size and a.parsed == b.parsed


@pytest.mark.parametrize("path", SAMPLES, ids=lambda p: p.name)
def test_samples_take_the_fast_path_and_match_the_careful_parse(path, monkeypatch):
    data = path.read_bytes()
    value = fast_decode(data)
    assert value is not NOT_PROVEN
    found = []
    assert value == parse_text(data.decode("utf-8"), path.name, found) and found == []
    same(decode_bytes(data, path.name), careful(data, path.name, monkeypatch))


def test_generated_save_with_unicode_and_big_ids_matches(monkeypatch):
    from tests.support.savegen.generator import generate_save

    doc = generate_save(seed=5, events=4000, scenario="large")
    doc["journal"].append({"tick": 2**64 - 1, "event": {"DialogueLine": {"speaker": 9_007_199_254_740_993, "text": "Ünïcödé — “quotes” \"x\" 🐟 \\u: a:b"}}})
    data = json.dumps(doc, separators=(",", ":"), ensure_ascii=False).encode()
    value = fast_decode(data)
    assert value is not NOT_PROVEN
    same(decode_bytes(data, "gen.json"), careful(data, "gen.json", monkeypatch))


def _cases() -> dict[str, bytes]:
    text = RAW.decode()
    compact = json.dumps(json.loads(RAW), separators=(",", ":"))
    entry = '{"tick":5,"event":{"DialogueLine":{"speaker":1,"text":"hi"}}}'
    return {
        "truncated": RAW[:400],
        "bom": b"\xef\xbb\xbf" + RAW,
        "nan": text.replace('"score": 0.0', '"score": NaN').encode(),
        "infinity": text.replace('"score": 0.0', '"score": -Infinity').encode(),
        "1e400": text.replace('"score": 0.0', '"score": 1e400').encode(),
        "dup top": text.replace('"game_version": "0.7.2"', '"game_version": "0.7.2", "game_version": "0.7.3"').encode(),
        "dup compact": compact.replace('"game_version":"0.7.2"', '"game_version":"0.7.2","game_version":"0.7.3"').encode(),
        "dup in entry": compact.replace('"journal":[', '"journal":[' + entry.replace('{"tick":5,', '{"tick":5,"tick":6,') + ",").encode(),
        "dup in event": compact.replace('"journal":[', '"journal":[' + entry.replace('"speaker":1,', '"speaker":1,"speaker":2,') + ",").encode(),
        "dup nested in a field": compact.replace('"journal":[', '"journal":[' + entry.replace('"text":"hi"', '"text":{"a":1,"a":2}') + ",").encode(),
        "dup in a list in a field": compact.replace('"journal":[', '"journal":[' + entry.replace('"text":"hi"', '"text":[{"a":1,"a":2}]') + ",").encode(),
        "dup with space before colon": compact.replace('"game_version":"0.7.2"', '"game_version" :"0.7.2","game_version":"0.7.3"').encode(),
        "space before colon, no dup": compact.replace('"game_version":"0.7.2"', '"game_version" : "0.7.2"').encode(),
        "dup hidden by a colon string": compact.replace('"game_version":"0.7.2"', '"game_version":":x","game_version":"0.7.3"').encode(),
        "escaped quote colon": compact.replace('"game_version":"0.7.2"', '"game_version":"a\\":b"').encode(),
        "lone surrogate": compact.replace('"game_version":"0.7.2"', '"game_version":"\\ud800"').encode(),
        "surrogate pair": compact.replace('"game_version":"0.7.2"', '"game_version":"\\ud83d\\ude00"').encode(),
        "escaped backslash u": compact.replace('"game_version":"0.7.2"', '"game_version":"\\\\ud800"').encode(),
        "huge int": text.replace('"world_seed": 8812', '"world_seed": ' + "9" * 5000).encode(),
        "41 digits": text.replace('"world_seed": 8812', '"world_seed": ' + "9" * 41).encode(),
        "40 digits": text.replace('"world_seed": 8812', '"world_seed": ' + "9" * 40).encode(),
        "41 digits in a string": text.replace('"world_seed": 8812', '"world_seed": 8812, "note": "' + "9" * 41 + '"').encode(),
        "deep": b'{"format": "settled-reach.save", "x": ' + b"[" * 100_000 + b"]" * 100_000 + b"}",
        "deep in a field": ('{"journal":[{"tick":1,"event":{"X":{"a":' + "[" * 985 + "1" + "]" * 985 + "}}}]}").encode(),
        "control char": compact.replace('"game_version":"0.7.2"', '"game_version":"a\x01b"').encode(),
        "bad utf8": RAW.replace(b"Cargo", b"C\xffrgo"),
        "not json": b"hello",
        "empty": b"",
        "top list": b"[1, 2, 3]",
        "journal not a list": compact.replace('"journal":[', '"journal":{"a":1,"a":2},"x":[').encode(),
        "entry not a dict": compact.replace('"journal":[', '"journal":[1,"x",[{"a":1,"a":2}],').encode(),
        "trailing garbage": RAW + b"}",
    }


@pytest.mark.parametrize("name", list(_cases()))
def test_bad_and_odd_input_gives_the_careful_result(name, monkeypatch):
    data = _cases()[name]
    same(decode_bytes(data, "case.json"), careful(data, "case.json", monkeypatch))


@pytest.mark.parametrize("name", ["dup top", "dup compact", "dup in entry", "dup in event", "dup nested in a field",
                                  "dup in a list in a field", "dup with space before colon", "dup hidden by a colon string",
                                  "lone surrogate", "41 digits", "deep in a field", "nan", "1e400"])
def test_the_fast_path_never_vouches_for_a_file_with_something_to_report(name):
    assert fast_decode(_cases()[name]) is NOT_PROVEN


def test_gzip_save_takes_the_fast_path(monkeypatch):
    data = gzip.compress(SAMPLES[0].read_bytes())
    calls = []
    real = fastjson.fast_decode
    monkeypatch.setattr(jsonio, "fast_decode", lambda d, reader=None: calls.append(1) or real(d, reader))
    doc = decode_bytes(data, "s.json.gz")
    assert calls and doc.value is not None and doc.findings == []


def test_count_keys_counts_every_object():
    value = {"a": {"b": 1, "c": [{"d": 2}, {"e": {"f": None}}]}, "journal": [{"tick": 1, "event": {"X": {"y": 1, "z": [1]}}}]}
    assert count_keys(value) == 2 + 2 + 1 + 1 + 1 + 2 + 1 + 2
    assert count_keys([[[[{"k": 1}]]]]) == 1


@pytest.mark.parametrize("raw", [b"null", b"1", b'"s"', b"{}", b"[]", b'{"journal":[]}', b'{"journal":null}',
                                 b'{"player":null,"journal":[]}', b'{"player":{"knowledge":{"facts":[1]}},"journal":[]}',
                                 b'{"player":{"knowledge":{"facts":{"a":1,"b":{"metadata":5}}}},"journal":[]}'])
def test_any_json_value_is_decoded_or_deferred(raw, monkeypatch):
    same(decode_bytes(raw, "v.json"), careful(raw, "v.json", monkeypatch))


@pytest.mark.parametrize("name", ["dup in event", "bom", "lone surrogate", "space before colon, no dup"])
def test_files_read_in_a_stream_match_too(name, tmp_path, monkeypatch):
    path = tmp_path / "case.json"
    path.write_bytes(_cases()[name])
    fast, digest = decode_file(path, "case.json")
    monkeypatch.setattr(jsonio, "fast_decode", lambda data, reader=None: NOT_PROVEN)
    slow, digest2 = decode_file(path, "case.json")
    same(fast, slow)
    assert digest == digest2


def test_a_sample_file_read_in_a_stream_takes_the_fast_path(tmp_path, monkeypatch):
    calls = []
    real = fastjson.fast_decode
    monkeypatch.setattr(jsonio, "fast_decode", lambda d, reader=None: calls.append(type(d)) or real(d, reader))
    doc, _ = decode_file(SAMPLES[0], SAMPLES[0].name)
    assert calls == [bytearray] and doc.parsed and doc.findings == []


@pytest.fixture()
def tiny_steps(monkeypatch):
    """Steps of 64 bytes and 2 entries, so that small files take the stepwise paths."""
    monkeypatch.setattr(fastjson, "STEP_BYTES", 64)
    monkeypatch.setattr(fastjson, "STEP_ENTRIES", 2)


@pytest.mark.parametrize("path", SAMPLES, ids=lambda p: p.name)
def test_samples_in_steps(path, tiny_steps, monkeypatch):
    data = path.read_bytes()
    compact = json.dumps(json.loads(data), separators=(",", ":"), ensure_ascii=False).encode()
    for raw in (data, compact):
        value = fast_decode(raw)
        assert value is not NOT_PROVEN and value == json.loads(raw)
        same(decode_bytes(raw, path.name), careful(raw, path.name, monkeypatch))


@pytest.mark.parametrize("name", list(_cases()))
def test_bad_and_odd_input_in_steps(name, tiny_steps, monkeypatch):
    data = _cases()[name]
    same(decode_bytes(data, "case.json"), careful(data, "case.json", monkeypatch))


def test_a_journal_that_is_not_the_top_level_one_is_not_cut(tiny_steps, monkeypatch):
    entry = '{"tick":1,"event":{"DialogueLine":{"speaker":1,"text":"%s"}}}'
    nested = '{"x":{"journal":[%s],"story":1},"journal":[%s],"story":{"a":"b"}}' % (
        ",".join(entry % ("n" * k) for k in range(20)), ",".join(entry % ("t" * k) for k in range(30)))
    raw = nested.encode()
    assert fast_decode(raw) == json.loads(raw)
    broken = raw.replace(b'"text":"ttttt"', b'"text":"ttttt",')  # a syntax error inside the journal
    same(decode_bytes(broken, "b.json"), careful(broken, "b.json", monkeypatch))
    dup = raw.replace(b'"text":"tttt"', b'"text":"tttt","text":"x"')
    assert fast_decode(dup) is NOT_PROVEN
    same(decode_bytes(dup, "d.json"), careful(dup, "d.json", monkeypatch))


def _facts_doc(facts: dict, *, before: dict | None = None) -> bytes:
    """A compact save-shaped document whose snapshot facts are ``facts``."""
    entry = {"tick": 1, "event": {"DialogueLine": {"speaker": 1, "text": "hi"}}}
    doc = {"format": "x", "player": {**(before or {}), "knowledge": {"entities": {}, "facts": facts}}, "npcs": {},
           "journal": [entry] * 40, "story": {}}
    return json.dumps(doc, separators=(",", ":"), ensure_ascii=False).encode()


def _fact(tick: int, **extra) -> dict:
    return {"confidence": "KnowsOf", "source": "Heard", "state": "Active", "acquired_tick": tick, "metadata": None, **extra}


def test_facts_are_decoded_in_pieces_in_document_order(tiny_steps, monkeypatch):
    facts = {f"cat{k % 3}.fact_{k:03}": _fact(k) for k in range(60)}
    facts['odd "quoted" \\ key'] = _fact(1)  # a FactId with escapes: never cut before
    facts["strings.look_like_cuts"] = _fact(2, note='},"x",{"confidence" },')  # no '":' in a string: that defers
    # A cut candidate inside a fact's value: its piece does not decode, the rest stays whole.
    facts["nested.metadata"] = {**_fact(3), "metadata": {"A": {"k": 1}, "Other": {"confidence": "x"}}}
    facts.update({f"late.fact_{k:03}": _fact(k) for k in range(40)})
    raw = _facts_doc(facts)
    pieces = []
    real = fastjson._decode_deeper
    monkeypatch.setattr(fastjson, "_decode_deeper", lambda frames, data: pieces.append(bytes(data[:2])) or real(frames, data))
    value = fast_decode(raw)
    assert value == json.loads(raw)
    assert list(value["player"]["knowledge"]["facts"]) == list(facts)
    assert pieces.count(b'{"') > 10  # the facts were cut (the journal's pieces start with "[")
    monkeypatch.undo()
    same(decode_bytes(raw, "f.json"), careful(raw, "f.json", monkeypatch))


def test_a_fact_repeated_in_another_piece_is_not_vouched_for(tiny_steps, monkeypatch):
    facts = {f"f.{k:03}": _fact(k) for k in range(50)}
    raw = _facts_doc(facts).replace(b'"f.049":', b'"f.001":')
    assert fast_decode(raw) is NOT_PROVEN
    same(decode_bytes(raw, "d.json"), careful(raw, "d.json", monkeypatch))


def test_facts_that_are_not_the_snapshots_are_not_cut(tiny_steps, monkeypatch):
    # An earlier "facts" object (not player.knowledge.facts) is where the cuts would go:
    # the marker is not found where it belongs, and the whole document decodes at once.
    other = {"notes": {"facts": {f"n.{k:03}": _fact(k) for k in range(40)}}}
    raw = _facts_doc({f"f.{k:03}": _fact(k) for k in range(40)}, before=other)
    assert fast_decode(raw) == json.loads(raw)
    broken = raw.replace(b'"f.020":{"confidence":"KnowsOf"', b'"f.020":{"confidence":"KnowsOf",', 1)
    same(decode_bytes(broken, "b.json"), careful(broken, "b.json", monkeypatch))

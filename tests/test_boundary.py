"""Conversions at trust boundaries (issue 35, pattern 1): one module turns outside text
and JSON numbers into typed values, and every reader uses it. Hostile numerals never
raise anything but ConversionError, never reach ``int`` unbounded, and a save holding
them gets a finding at its JSON path, never a traceback."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from narrative_debugger.models.boundary import (
    F32_OVERFLOW,
    I16,
    I64,
    MAX_NUMERAL_CHARS,
    U8,
    U32,
    U64,
    ConversionError,
    check_f32,
    is_f32,
    is_int_text,
    parse_int,
)
from narrative_debugger.models.domain.knowledge import fact_id_fault, malformed_fact_ids, parse_interaction_id
from narrative_debugger.models.save.jsonio import decode_bytes
from narrative_debugger.models.save.savefile import load_save_bytes

DATA = Path(__file__).parent / "data"
RAW = (DATA / "minimal.json").read_bytes()

# text, type, why it is refused (a part of the message)
HOSTILE = [
    ("５", U64, "(U+FF15) is not an ASCII digit"),
    ("٣", U64, "(U+0663) is not an ASCII digit"),
    ("१२", U64, "(U+0967) is not an ASCII digit"),
    ("5_000", U64, "'_' is not an ASCII digit"),
    (" 5", U64, "white space"),
    ("5\n", U64, "white space"),
    ("\t5", U64, "white space"),
    ("+5", U64, "the sign '+'"),
    ("+5", I16, "the sign '+'"),
    ("-5", U64, "it is negative; a u64 is 0 or more"),
    ("-0", U32, "it is negative"),
    ("--5", I64, "'-' is not an ASCII digit"),
    ("-", I16, "the sign '-'"),
    ("", U64, "empty"),
    ("0x10", U64, "'x' (U+0078)"),
    ("1e3", U64, "'e' (U+0065)"),
    ("1.0", U64, "'.' (U+002E)"),
    ("５" * 5000, U64, "5000 characters long"),
    ("9" * 5000, U64, "5000 characters long"),
    ("9" * (MAX_NUMERAL_CHARS + 1), U64, f"{MAX_NUMERAL_CHARS + 1} characters long"),
    ("18446744073709551616", U64, "outside 0..18446744073709551615"),
    ("256", U8, "outside 0..255"),
    ("32768", I16, "outside -32768..32767"),
    ("-32769", I16, "outside -32768..32767"),
    ("4294967296", U32, "outside 0..4294967295"),
    ("9223372036854775808", I64, "outside"),
    ("１７\u200b", U64, "(U+FF11)"),
]


@pytest.mark.parametrize("text, kind, why", HOSTILE, ids=[f"{k.name}-{t[:8]!r}" for t, k, _ in HOSTILE])
def test_hostile_numerals_are_refused_with_a_reason(text, kind, why):
    with pytest.raises(ConversionError) as caught:
        parse_int(text, kind)
    message = str(caught.value)
    assert why in message and (f"is not a {kind.name}:" in message or f"is not an {kind.name}:" in message), message
    assert len(message) < 200, "the value is quoted shortened, never whole"
    assert not is_int_text(text, kind)


@pytest.mark.parametrize(
    "text, kind, value",
    [
        ("0", U64, 0),
        ("18446744073709551615", U64, 2**64 - 1),
        ("007", U64, 7),
        ("255", U8, 255),
        ("-32768", I16, -32768),
        ("32767", I16, 32767),
        ("-9223372036854775808", I64, -(2**63)),
        ("0" * 39 + "1", U64, 1),
    ],
)
def test_plain_ascii_numerals_read_exactly(text, kind, value):
    assert parse_int(text, kind) == value


def test_leading_zeros_are_refused_where_serde_never_writes_them():
    assert parse_int("0", U64, leading_zeros=False) == 0
    with pytest.raises(ConversionError, match="leading zero"):
        parse_int("017", U64, leading_zeros=False)


@pytest.mark.parametrize("value", [None, 5, 5.0, b"5", ["5"]])
def test_a_value_that_is_not_text_is_refused(value):
    with pytest.raises(ConversionError, match="expected text"):
        parse_int(value, U64)


def test_f32_range_is_the_values_that_do_not_round_to_infinity():
    largest_f32 = (2 - 2**-23) * 2**127
    assert is_f32(largest_f32) and is_f32(-largest_f32) and is_f32(3.4028235e38)  # serde's spelling of f32::MAX
    assert not is_f32(F32_OVERFLOW) and not is_f32(1e39) and not is_f32(10**39)
    assert not is_f32(float("inf")) and not is_f32(float("-inf")) and not is_f32(float("nan"))
    assert is_f32(0) and is_f32(-0.5) and not is_f32(True) and not is_f32("1")
    assert check_f32(2) == 2.0
    with pytest.raises(ConversionError, match="not a finite number"):
        check_f32(float("-inf"))
    with pytest.raises(ConversionError, match="beyond the f32 range"):
        check_f32(1e39)


# ----- interaction FactIds -----
@pytest.mark.parametrize("fact_id", ["interaction.kael-davan_" + "1" * 5000, "interaction.kael-davan_００１", "interaction.kael-davan_٠٠١", "interaction.kael-davan_" + "9" * 21])
def test_an_interaction_sequence_that_is_not_an_ascii_u64_is_k003(fact_id):
    assert parse_interaction_id(fact_id) is None
    assert fact_id_fault(fact_id) in ("K001", "K003")
    assert malformed_fact_ids([fact_id, "interaction.kael-davan_001"]) == {fact_id: fact_id_fault(fact_id)}


def test_a_long_but_valid_sequence_still_reads():
    assert parse_interaction_id("interaction.kael-davan_1234") == ("kael-davan", 1234)
    assert parse_interaction_id("interaction.kael-davan_18446744073709551615") == ("kael-davan", 2**64 - 1)
    assert malformed_fact_ids(["interaction.kael-davan_18446744073709551616"]) == {"interaction.kael-davan_18446744073709551616": "K003"}


@pytest.mark.parametrize("digits", ["9" * 19, "0" * 19, "1" + "0" * 19, "99999999999999999999", "0" * 20, "0" * 19 + "7"])
def test_sequences_either_side_of_twenty_digits_read_as_u64(digits):
    expected = ("kael-davan", int(digits)) if int(digits) < 2**64 else None
    assert parse_interaction_id("interaction.kael-davan_" + digits) == expected


# ----- saves -----
def _load(raw: bytes, label: str = "hostile.json"):
    return load_save_bytes(raw, label)


def _codes_at(save) -> dict[str, set[str]]:
    out: dict[str, set[str]] = {}
    for f in save.findings:
        out.setdefault(f.location, set()).add(f.code)
    return out


LONG = "1" * 5000


@pytest.mark.parametrize(
    "old, new, path_start",
    [
        (b'"17": {"slug"', f'"{LONG}": {{"slug"'.encode(), "npcs.1111"),
        (b'"17": {"slug"', '"１７": {"slug"'.encode(), "npcs.１７"),
        (b'"17": {"slug"', b'"1_7": {"slug"', "npcs.1_7"),
        (b'"17": {"slug"', b'"017": {"slug"', "npcs.017"),
        (b'"entities": {}', f'"entities": {{"{LONG}": {{}}}}'.encode(), "player.knowledge.entities.1111"),
        (b'"entities": {}', '"entities": {"٣": {}}'.encode(), "player.knowledge.entities.٣"),
    ],
)
def test_a_map_key_that_is_not_a_stable_id_is_f002_at_its_path(old, new, path_start):
    save = _load(RAW.replace(old, new))
    bad = [f for f in save.findings if f.code == "F002" and f.location.startswith(path_start)]
    assert bad and "is not a StableId" in bad[0].message, save.findings
    assert len(bad[0].location) < 100


def test_two_long_npc_keys_are_compared_for_key_order_without_int():
    """K005 sorts StableId keys numerically: two 5 000-digit keys once reached int()."""
    doc = json.loads(RAW)
    npc = doc["npcs"]["17"]
    doc["npcs"] = {"2" * 5000: npc, "1" * 5000: npc}
    save = _load(json.dumps(doc).encode())
    assert {f.code for f in save.findings} >= {"F002"}


def _open(tmp_path: Path, raw: bytes):
    from narrative_debugger.models.playthrough import Playthrough

    path = tmp_path / "hostile.json"
    path.write_bytes(raw)
    return Playthrough.open(path)


def test_an_interaction_sequence_of_5000_digits_is_k003_not_a_traceback(tmp_path):
    raw = RAW.replace(b"kael-davan_001", f"kael-davan_{LONG}".encode())
    play = _open(tmp_path, raw)
    assert "K003" in {f.code for f in play.findings}


@pytest.mark.parametrize(
    "old, new, path, code_too",
    [
        (b'"walk_away_threshold": 2', b'"walk_away_threshold": 300', "npcs.17.interaction_tolerance.walk_away_threshold", "T002"),
        (b'"walk_away_threshold": 2', b'"walk_away_threshold": -1', "npcs.17.interaction_tolerance.walk_away_threshold", "T002"),
        (b'"walk_away_stress_delta": 6', b'"walk_away_stress_delta": 40000', "npcs.17.interaction_tolerance.walk_away_stress_delta", "T002"),
        (b'"current_stress": 6, "threshold"', b'"current_stress": -40000, "threshold"', "npcs.17.tolerance.current_stress", "T001"),
        (b'"threshold": 40', b'"threshold": 32768', "npcs.17.tolerance.threshold", "T001"),
        (b'"walk_away_penalty": 0.3', b'"walk_away_penalty": 1e39', "npcs.17.interaction_tolerance.walk_away_penalty", "T002"),
    ],
)
def test_a_value_outside_its_save_format_type_is_f002_and_its_range_rule_still_reports(tmp_path, old, new, path, code_too):
    """F002 for a value its Rust type cannot hold (save-format §4: u8, i16, f32); the
    range rule of checks.md (T001 for stress outside i16, T002 for the interaction
    tolerance) reports the same value by its own code."""
    raw = RAW.replace(old, new)
    assert raw != RAW
    play = _open(tmp_path, raw)
    codes = _codes_at(play.save)
    assert "F002" in codes.get(path, set()), play.save.findings
    assert code_too in {f.code for f in play.findings if f.location == path}


@pytest.mark.parametrize("spelled", [b"1e400", b"-1e400"])
def test_an_overflowing_snapshot_number_is_f002_and_never_kept(spelled):
    raw = RAW.replace(b'"score": 0.0', b'"score": ' + spelled)
    save = _load(raw)
    bad = [f for f in save.findings if f.location == "npcs.17.relationship.score"]
    assert [f.code for f in bad] == ["F002"] and "overflows" in bad[0].message
    assert save.npcs[17].relationship.score == 0.0


def test_an_overflowing_journal_number_makes_its_entry_invalid_f002():
    doc = json.loads(RAW)
    doc["journal"].append({"tick": 170, "event": {"WalkAwayPenalty": {"target": 17, "penalty": 0.3, "score_after": 0.0}}})
    text = json.dumps(doc).replace('"score_after": 0.0', '"score_after": -1e400')
    save = _load(text.encode())
    at = f"journal[{len(doc['journal']) - 1}].event.WalkAwayPenalty.score_after"
    assert [f.code for f in save.findings if f.location == at] == ["F002"], save.findings
    assert save.journal.kinds[-1] is None


def test_an_f32_overflow_in_a_clean_journal_piece_is_found_by_the_typed_decoder_too():
    """The typed decode (msgspec) bounds numbers as f64 only: 1e39 passes it and must
    still get its F002 (saveshape checks the f32 fields after a suspect piece)."""
    from narrative_debugger.models.save.saveshape import JournalReader

    entry = {"tick": 5, "event": {"WalkAwayPenalty": {"target": 17, "penalty": 0.3, "score_after": 1e39}}}
    reader = JournalReader("x.json")
    reader.add_text(json.dumps([entry, entry]).encode(), 0)
    assert reader.journal.kinds == [None, None]
    assert [call[0] for call in reader.calls] == ["F002", "F002"]
    ok = {"tick": 5, "event": {"WalkAwayPenalty": {"target": 17, "penalty": 0.3, "score_after": 3.4e38}}}
    reader = JournalReader("x.json")
    reader.add_text(json.dumps([ok]).encode(), 0)
    assert reader.journal.kinds == ["WalkAwayPenalty"] and not reader.calls


# ----- encodings -----
@pytest.mark.parametrize(
    "encoding, said",
    [
        ("utf-16-le", "UTF-16LE text (a NUL byte after"),
        ("utf-16-be", "UTF-16BE text (a NUL byte before"),
        ("utf-32-le", "UTF-32LE text (three NUL bytes after"),
        ("utf-32-be", "UTF-32BE text (three NUL bytes before"),
        ("utf-16", "with a byte-order mark"),
        ("utf-32", "with a byte-order mark"),
    ],
)
def test_a_utf16_or_utf32_save_is_f001_not_utf8_naming_the_file(encoding, said):
    raw = RAW.decode("utf-8").encode(encoding)
    doc = decode_bytes(raw, "wide.json")
    assert not doc.parsed
    assert [(f.code, f.location) for f in doc.findings] == [("F001", "1:1")]
    message = doc.findings[0].message
    assert message.startswith("wide.json: not UTF-8") and said in message, message
    assert "not valid JSON" not in message


def test_leading_white_space_in_utf16_is_still_found():
    doc = decode_bytes(("\n " + RAW.decode()).encode("utf-16-le"), "wide.json")
    assert "UTF-16LE" in doc.findings[0].message


@pytest.mark.parametrize("field", ["current_stress", "delta"])
def test_a_journal_stress_outside_i16_is_f002_and_the_entry_is_kept_for_t001(tmp_path, field):
    """StressChanged carries stress (schema: i16). Outside i16 it is F002 at its path;
    the entry stays, so the replay's T001 (checks.md: stress outside the i16 range)
    reports it too, as for the snapshot's stress."""
    doc = json.loads(RAW)
    last = len(doc["journal"]) - 1
    event = doc["journal"][last]["event"]["StressChanged"]
    event[field] = 40000
    play = _open(tmp_path, json.dumps(doc).encode())
    at = f"journal[{last}].event.StressChanged.{field}"
    assert [f.code for f in play.findings if f.location == at and f.code == "F002"] == ["F002"], play.findings
    assert play.save.journal.kinds[last] == "StressChanged"
    assert "T001" in {f.code for f in play.findings}

"""``dumps_indented`` writes exactly what ``json.dumps(indent=1, ensure_ascii=False)`` does."""

from __future__ import annotations

import json
import math
import random
import struct
from pathlib import Path

import pytest
from narrative_debugger.models.playthrough import Playthrough
from narrative_debugger.models.report import json_text
from narrative_debugger.models.report.json_text import dumps_indented
from narrative_debugger.models.timeline.state_json import state_json

SAMPLES = Path(__file__).resolve().parent.parent / "sample_saves"


def reference(value) -> str:
    return json.dumps(value, ensure_ascii=False, indent=1)


@pytest.mark.parametrize("name", ["evening.json", "walkaway-spiral.json", "abandoned-confrontation.json", "qa-faults.json"])
def test_state_documents_of_every_sample_at_several_ticks(name):
    play = Playthrough.open(SAMPLES / name)
    for tick in (0, play.last_tick // 3, play.last_tick // 2, play.last_tick):
        doc = state_json(play, tick)
        assert dumps_indented(doc) == reference(doc)


@pytest.mark.parametrize(
    "value",
    [
        {"a": [], "b": {}, "c": [1, {}], "d": [[]], "e": None, "f": True, "g": False},
        [1e16, 1e-05, 1.2345678901234568e17, 1.5e300, 5e-324, -0.0, 0.1, 0.30000000000000004, 100.0],
        [2.975302656962789e-05],  # msgspec: 0.00002975302656962789, Python: 2.975302656962789e-05
        [-1.0001607231292517e-05, 9.99e-05, 0.0001, 0.00012, 1234567890123456.0],
        {"score": 14.55, "tick": 2**64 - 1, "low": -(2**63)},
        {"text": "\x00\x1f\x7f \u2028\u2029 é😀 \"\\/ \t\n\r\b\f <b>&amp;</b>", "nested": {"1e5 in a string": "3e-2"}},
        {"lone surrogate": "a\ud800b"},
        {"big": 2**70},
        {1: "int key", "x": 2},
        [],
        {},
        "plain",
    ],
)
def test_hostile_and_edge_values(value):
    assert dumps_indented(value) == reference(value)


def test_non_string_keys_json_writes_fall_back():
    assert dumps_indented({None: 1, True: 2}) == reference({None: 1, True: 2})


def test_random_floats_of_every_magnitude():
    """Floats from raw bits and from every decade, singly and in a document."""
    rng = random.Random(7)
    values = []
    for _ in range(20_000):
        v = struct.unpack("d", rng.randbytes(8))[0]
        if math.isfinite(v):
            values.append(v)
        values.append(rng.uniform(-1, 1) * 10.0 ** rng.randint(-12, 20))
    for v in values[:5000]:
        assert dumps_indented([v]) == reference([v])
    clean = [v for v in values if 1e-4 <= abs(v) < 1e16]
    assert dumps_indented({"clean": clean}) == reference({"clean": clean})


@pytest.mark.parametrize("chunk", [1, 2, 5, 8, 1 << 22])
def test_the_byte_scan_answers_as_the_regular_expression(monkeypatch, chunk):
    """``_spelled_otherwise`` (numpy masks) finds what ``_EXPONENT`` finds, also when a
    match straddles two scan chunks or ends the text."""
    monkeypatch.setattr(json_text, "SCAN_CHUNK", chunk)
    rng = random.Random(chunk)
    alphabet = b'0123456789.eE+-x "\xc3\xa9'
    for _ in range(5000):
        text = bytes(rng.choice(alphabet) for _ in range(rng.randint(0, 24)))
        assert json_text._spelled_otherwise(text) == bool(json_text._EXPONENT.search(text)), text
    for text, found in [(b"1e5", True), (b"[1.5e-05]", True), (b".E+9", True), (b"x1e", False), (b"1e-", False), (b"1ex5", False), (b"e5", False), (b"0.00001", True), (b"0.0001", False)]:
        assert json_text._spelled_otherwise(text) is found, text

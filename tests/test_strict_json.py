"""Every JSON the tool writes is strict (issue 35, pattern 1): no NaN, Infinity or
-Infinity. A save number that overflows to infinity becomes an F002 where it is read,
so it never reaches an output; a writer that is handed one anyway refuses it, naming
where it is, and writes nothing."""

from __future__ import annotations

import io
import json
import re
from pathlib import Path

import pytest
from narrative_debugger.app.cli.main import main
from narrative_debugger.models.report.json_text import NonFiniteNumber, dump_strict, dumps_indented, dumps_strict

ROOT = Path(__file__).resolve().parent.parent
SAMPLES = ROOT / "sample_saves"
EVENING = SAMPLES / "evening.json"


def strict_loads(text: str):
    """``json.loads`` that refuses NaN, Infinity and -Infinity, as RFC 8259 does."""

    def refuse(name):
        raise AssertionError(f"{name} is not JSON")

    return json.loads(text, parse_constant=refuse)


@pytest.mark.parametrize("bad", [float("inf"), float("-inf"), float("nan")])
@pytest.mark.parametrize(
    "shape, path",
    [
        (lambda x: {"a": [1, {"b": x}]}, "$.a[1].b"),
        (lambda x: {"big": 1e300, "a": [x]}, "$.a[0]"),  # an exponent: the json fallback of dumps_indented
        (lambda x: [x], "$[0]"),
    ],
)
def test_writers_refuse_a_non_finite_number_naming_its_path(bad, shape, path):
    value = shape(bad)
    for write in (dumps_indented, dumps_strict, lambda v: dumps_strict(v, indent=1, sort_keys=True)):
        with pytest.raises(NonFiniteNumber) as caught:
            write(value)
        assert caught.value.path == path and path in str(caught.value)
    out = io.StringIO()
    with pytest.raises(NonFiniteNumber):
        dump_strict(value, out)
    assert out.getvalue() == ""


def test_a_string_that_looks_like_a_packed_infinity_is_not_refused():
    """The fast test looks for an IEEE 754 pattern in packed bytes; text holding those
    bytes goes to the exact walk, which finds nothing."""
    tricky = {"text": "\xcb\x7f\xf0\x00" * 3, "n": 1.5}
    assert strict_loads(dumps_indented(tricky)) == tricky


def test_finite_values_are_written_as_before():
    value = {"a": 1.5, "b": [None, 2**70, -0.0, 1e-7, 3.4e38], "c": "é"}
    assert dumps_indented(value) == json.dumps(value, ensure_ascii=False, indent=1)
    assert dumps_strict(value) == json.dumps(value, ensure_ascii=False)


@pytest.fixture(scope="module")
def overflowing_save(tmp_path_factory) -> Path:
    """evening.json with one journal number spelled ``-1e400`` (reads as -inf)."""
    raw = EVENING.read_text(encoding="utf-8")
    assert '"score_after":0.641' in raw
    path = tmp_path_factory.mktemp("strict") / "overflow.json"
    path.write_text(raw.replace('"score_after":0.641', '"score_after":-1e400', 1), encoding="utf-8")
    return path


def test_an_overflowing_journal_number_is_f002_in_check_and_every_format_stays_strict(capsys, overflowing_save):
    assert main(["check", str(overflowing_save), "--format", "json"]) == 1
    report = strict_loads(capsys.readouterr().out)
    bad = [f for f in report["files"][0]["findings"] if f["code"] == "F002"]
    assert [f["location"] for f in bad] == ["journal[28].event.RelationshipInteraction.score_after"]
    assert "overflows to -inf" in bad[0]["message"]
    assert main(["check", str(overflowing_save), "--format", "sarif"]) == 1
    strict_loads(capsys.readouterr().out)


@pytest.mark.parametrize(
    "args",
    [
        ["diff", str(EVENING), "{save}", "--format", "json"],
        ["diff", "{save}", str(EVENING), "--format", "json"],
        ["state", "{save}"],
        ["why", "{save}", "npc:kael-davan.score", "--format", "json"],
        ["prompt", "{save}", "--npc", "kael-davan", "--format", "json"],
    ],
)
def test_query_outputs_of_an_overflowing_save_are_strict_json(capsys, overflowing_save, args):
    status = main([a.replace("{save}", str(overflowing_save)) for a in args])
    out = capsys.readouterr().out
    assert status in (0, 1), status
    assert not re.search(r"\b(?:-?Infinity|NaN)\b", out)
    strict_loads(out)


def test_every_json_writer_goes_through_json_text():
    """A json.dump/json.dumps in the product would bypass the strict writer."""
    offenders = []
    for folder in ("app", "models", "widgets"):
        for path in sorted((ROOT / folder).rglob("*.py")):
            if path.name == "json_text.py":
                continue
            for n, line in enumerate(path.read_text(encoding="utf-8").splitlines(), 1):
                if re.search(r"\bjson\.dumps?\(", line) and "allow_nan=False" not in line:
                    offenders.append(f"{path.relative_to(ROOT)}:{n}: {line.strip()}")
    # jsonscan spells a key as JSON to find it in the text; nothing is written
    assert [o for o in offenders if not o.startswith("models/save/jsonscan.py")] == []

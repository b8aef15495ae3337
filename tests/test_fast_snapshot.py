"""parse_save's clean-fact fast path gives exactly what the checked path gives."""

from __future__ import annotations

import copy
import json
from pathlib import Path

import pytest
from narrative_debugger.models.rules.findings import FindingSink
from narrative_debugger.models.save import savefile
from narrative_debugger.models.save.saveshape import Shape

ROOT = Path(__file__).resolve().parents[1]
SAMPLES = sorted((ROOT / "sample_saves").glob("*.json"))


def facts_of(path: Path) -> dict:
    return json.loads(path.read_bytes())["player"]["knowledge"]["facts"]


def checked(value):
    sink = FindingSink()
    fact = savefile._parse_fact(copy.deepcopy(value), "player.knowledge.facts.x", Shape(sink, "x.json"))
    return fact, sink.close()


@pytest.mark.parametrize("path", SAMPLES, ids=lambda p: p.name)
def test_samples(path):
    facts = facts_of(path)
    assert facts
    for value in facts.values():
        fast = savefile._clean_fact(copy.deepcopy(value))
        slow, findings = checked(value)
        if fast is not None:
            assert (fast, []) == (slow, findings)
            assert [type(getattr(fast, name)) for name in fast.__struct_fields__] == [type(getattr(slow, name)) for name in slow.__struct_fields__]


INTERACTION = next(v for v in facts_of(ROOT / "sample_saves" / "evening.json").values() if v["metadata"])
ORDINARY = next(v for v in facts_of(ROOT / "sample_saves" / "evening.json").values() if not v["metadata"])
BAD_VALUES = [None, True, 1.5, -1, 2**64, "Nope", [], {}, ["x", 1]]


def mutations():
    """Every field of both shapes of fact, missing or replaced by each bad value."""
    for base in (INTERACTION, ORDINARY):
        for key in base:
            gone = copy.deepcopy(base)
            del gone[key]
            yield gone
            for bad in BAD_VALUES:
                changed = copy.deepcopy(base)
                changed[key] = bad
                yield changed
    meta = INTERACTION["metadata"]["Interaction"]
    for key in meta:
        gone = copy.deepcopy(INTERACTION)
        del gone["metadata"]["Interaction"][key]
        yield gone
        for bad in BAD_VALUES:
            changed = copy.deepcopy(INTERACTION)
            changed["metadata"]["Interaction"][key] = bad
            yield changed
    yield {**copy.deepcopy(INTERACTION), "metadata": {"Interaction": meta, "Other": {}}}
    yield {**copy.deepcopy(INTERACTION), "metadata": {"Other": meta}}
    yield {**copy.deepcopy(INTERACTION), "metadata": "Interaction"}
    yield "not a fact"


@pytest.mark.parametrize("value", list(mutations()), ids=lambda v: json.dumps(v)[:60])
def test_a_fact_the_fast_path_accepts_is_one_the_checked_path_accepts_unchanged(value):
    fast = savefile._clean_fact(copy.deepcopy(value))
    slow, findings = checked(value)
    if fast is not None:
        assert (fast, findings) == (slow, [])
    else:
        assert findings  # rejected: the checked path says what is wrong


def test_the_fast_path_takes_clean_facts():
    assert savefile._clean_fact(copy.deepcopy(INTERACTION)) == checked(INTERACTION)[0] is not None
    assert savefile._clean_fact(copy.deepcopy(ORDINARY)) == checked(ORDINARY)[0] is not None

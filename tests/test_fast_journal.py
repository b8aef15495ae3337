"""parse_journal's clean-entry fast path gives exactly what the checked path gives."""

from __future__ import annotations

import copy
import json
from pathlib import Path

import pytest
from narrative_debugger.models.rules.findings import FindingSink
from narrative_debugger.models.save import saveshape
from narrative_debugger.models.save.saveshape import MAX_TEXT_CHARS, Shape, parse_journal

ROOT = Path(__file__).resolve().parents[1]
SAMPLES = sorted((ROOT / "sample_saves").glob("*.json"))


def run(journal, monkeypatch=None, fast=True):
    if not fast:
        monkeypatch.setattr(saveshape, "CLEAN_ENTRY_CHECKS", {})
    sink = FindingSink()
    result = parse_journal(journal, Shape(sink, "x.json"))
    if not fast:
        monkeypatch.undo()
    return (result.ticks, result.kinds, result.data), [(f.code, f.message, f.location) for f in sink.close()]


def both(journal, monkeypatch):
    fast = run(copy.deepcopy(journal))
    slow = run(copy.deepcopy(journal), monkeypatch, fast=False)
    assert fast == slow
    # Same enum members, not equal strings.
    assert [type(v) for d in fast[0][2] if d for v in d.values()] == [type(v) for d in slow[0][2] if d for v in d.values()]
    return fast


@pytest.mark.parametrize("path", SAMPLES, ids=lambda p: p.name)
def test_samples(path, monkeypatch):
    both(json.loads(path.read_bytes())["journal"], monkeypatch)


def test_generated_save(monkeypatch):
    from tests.support.savegen.generator import generate_save

    both(generate_save(seed=3, events=5000, scenario="large")["journal"], monkeypatch)


BASE = [
    {"tick": 3, "event": {"FactLearned": {"fact_id": "a.b", "confidence": "KnowsOf", "source": "Heard"}}},
    {"tick": 4, "event": {"FactUpdated": {"fact_id": "a.b", "confidence": None, "state": "Stale"}}},
    {"tick": 4, "event": {"FactUpdated": {"fact_id": "a.b", "confidence": "Direct", "state": None}}},
    {"tick": 5, "event": {"InteractionCompleted": {"target": 9, "topics": ["x", "y"]}}},
    {"tick": 6, "event": {"RelationshipInteraction": {"target": 9, "sentiment": 0.5, "message_length": 3, "conversation_turns": 1, "delta": 1, "score_after": 1.5}}},
    {"tick": 7, "event": {"EntityObserved": {"entity": 9, "confidence": "Direct", "source": "DirectObservation", "relationship": "Known"}}},
    {"tick": 2**64 - 1, "event": {"DialogueLine": {"speaker": 2**64 - 1, "text": "hi"}}},
]


def _edit(k, fn):
    def apply(journal):
        fn(journal[k])
        return journal

    return apply


MUTATIONS = {
    "clean": lambda j: j,
    "extra field": _edit(0, lambda e: e["event"]["FactLearned"].__setitem__("extra", {"a": 1})),
    "extra entry key": _edit(0, lambda e: e.__setitem__("x", 1)),
    "no tick": _edit(0, lambda e: e.pop("tick")),
    "tick and other key": _edit(0, lambda e: e.__setitem__("other", e.pop("event"))),
    "negative tick": _edit(1, lambda e: e.__setitem__("tick", -1)),
    "tick too big": _edit(1, lambda e: e.__setitem__("tick", 2**64)),
    "bool tick": _edit(1, lambda e: e.__setitem__("tick", True)),
    "float tick": _edit(1, lambda e: e.__setitem__("tick", 3.0)),
    "two variants": _edit(3, lambda e: e["event"].__setitem__("DialogueLine", {})),
    "unknown variant": _edit(3, lambda e: e.__setitem__("event", {"Nope": {}})),
    "fields not object": _edit(3, lambda e: e["event"].__setitem__("InteractionCompleted", [1])),
    "missing field": _edit(3, lambda e: e["event"]["InteractionCompleted"].pop("topics")),
    "topic not str": _edit(3, lambda e: e["event"]["InteractionCompleted"].__setitem__("topics", ["x", 1])),
    "bad enum": _edit(0, lambda e: e["event"]["FactLearned"].__setitem__("confidence", "Sure")),
    "bad optional enum": _edit(1, lambda e: e["event"]["FactUpdated"].__setitem__("state", "Gone")),
    "enum not str": _edit(0, lambda e: e["event"]["FactLearned"].__setitem__("confidence", 1)),
    "enum a list": _edit(0, lambda e: e["event"]["FactLearned"].__setitem__("confidence", ["KnowsOf"])),
    "null required enum": _edit(0, lambda e: e["event"]["FactLearned"].__setitem__("confidence", None)),
    "second enum bad": _edit(5, lambda e: e["event"]["EntityObserved"].__setitem__("relationship", "Enemy")),
    "u32 too big": _edit(4, lambda e: e["event"]["RelationshipInteraction"].__setitem__("message_length", 2**32)),
    "number a bool": _edit(4, lambda e: e["event"]["RelationshipInteraction"].__setitem__("delta", True)),
    "number a string": _edit(4, lambda e: e["event"]["RelationshipInteraction"].__setitem__("delta", "1")),
    "long text": _edit(6, lambda e: e["event"]["DialogueLine"].__setitem__("text", "x" * (MAX_TEXT_CHARS + 1))),
    "entry a list": lambda j: j + [[1]],
    "event null": _edit(6, lambda e: e.__setitem__("event", None)),
    "event empty": _edit(6, lambda e: e.__setitem__("event", {})),
}


@pytest.mark.parametrize("name", list(MUTATIONS))
def test_each_fault_gives_the_checked_result(name, monkeypatch):
    both(MUTATIONS[name](copy.deepcopy(BASE)), monkeypatch)


def test_a_failed_check_leaves_the_fields_untouched():
    fields = {"fact_id": "a.b", "confidence": "KnowsOf", "source": "Nowhere"}
    assert saveshape.CLEAN_ENTRY_CHECKS["FactLearned"](fields) is None
    assert fields == {"fact_id": "a.b", "confidence": "KnowsOf", "source": "Nowhere"}


def test_not_a_list():
    (_, kinds, _), findings = run({"a": 1})
    assert kinds == [] and findings[0][0] == "F002"


@pytest.mark.parametrize("spelled", ["3.5e38", "3.5E+38", "350000000000000000000000000000000000000.0", "-1e39", "1e308"])
def test_an_f32_out_of_range_in_a_clean_journal_is_f002(tmp_path, spelled):
    """The typed decode takes any f64; the f32 range is checked on the decoded entries
    (it was a regex over the text, which cost more than the decode)."""
    from narrative_debugger.models.save.savefile import load_save

    root = Path(__file__).resolve().parent.parent
    text = (root / "sample_saves" / "evening.json").read_text(encoding="utf-8")
    doc = json.loads(text)
    i = next(k for k, e in enumerate(doc["journal"]) if "RelationshipInteraction" in e["event"])
    marker = 0.123456789
    doc["journal"][i]["event"]["RelationshipInteraction"]["delta"] = marker
    path = tmp_path / "f32.json"
    path.write_text(json.dumps(doc).replace(repr(marker), spelled), encoding="utf-8")
    save = load_save(path)
    assert [f.location for f in save.findings if f.code == "F002"] == [f"journal[{i}].event.RelationshipInteraction.delta"]

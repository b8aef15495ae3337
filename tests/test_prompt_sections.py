"""The prompt section registry (models/prompt/sections.py) drives the assembled prompt.

Runs on the real sample saves: every NPC, both encodings, four ticks each. The token
figures in tests/data/prompt_tokens_golden.json (whole-prompt tokens, available tokens,
each section's tokens) are golden: a change to the prompt that is meant to change them is
committed with the file that ``make golden`` writes (tests/support/golden.py).
"""

from __future__ import annotations

import json
from functools import cache
from pathlib import Path

import pytest
from narrative_debugger.models.playthrough import Playthrough
from narrative_debugger.models.prompt.builder import MIN_AVAILABLE, SEPARATOR, PromptBuilder
from narrative_debugger.models.prompt.sections import BY_LABEL, SECTIONS, SYSTEM_LABELS, Block

from tests.support.golden import ENCODINGS, PROMPT_TOKENS, REGENERATE, prompt_cases, prompt_key

ROOT = Path(__file__).resolve().parent.parent
SAMPLES = ROOT / "sample_saves"
GOLDEN = json.loads(PROMPT_TOKENS.read_text(encoding="utf-8"))


@cache
def _play(name: str) -> Playthrough:
    return Playthrough.open(SAMPLES / name, None)


@cache
def _builder(name: str, encoding: str) -> PromptBuilder:
    return PromptBuilder(_play(name), encoding=encoding)


def _cases() -> list[tuple[str, str, str, int]]:
    return [(save, npc, enc, int(tick)) for save, npc, enc, tick in (key.split(" ") for key in GOLDEN)]


def test_registry_declares_each_section_once_with_a_colour_and_a_builder():
    labels = [s.label for s in SECTIONS]
    assert len(labels) == len(set(labels)) == len(BY_LABEL)
    assert all(s.colour.startswith("#") and len(s.colour) == 7 and callable(s.text) for s in SECTIONS)
    # The system block is one cacheable prefix: it comes before every story section.
    blocks = [s.block for s in SECTIONS]
    assert blocks == sorted(blocks, key=lambda b: b is Block.STORY)
    assert SYSTEM_LABELS == {s.label for s in SECTIONS if s.block is Block.SYSTEM}
    # History and lore fill what the counted sections leave.
    assert {s.label for s in SECTIONS if not s.counted} == {"history", "recent_history", "world_lore"}


def test_golden_figures_cover_every_sample_save_npc_and_encoding():
    saves = {p.name for p in SAMPLES.glob("*.json")}
    covered = {(save, npc, enc) for save, npc, enc, _ in _cases()}
    for save in saves:
        for npc in (n.slug for n in _play(save).save.npcs.values()):
            assert {(save, npc, enc) for enc in ENCODINGS} <= covered, f"{save} {npc} has no golden figures: {REGENERATE}"
    assert set(GOLDEN) == {prompt_key(*case) for case in prompt_cases()}, f"the golden cases are not the sample saves' ones: {REGENERATE}"


@pytest.mark.parametrize("save", sorted(p.name for p in SAMPLES.glob("*.json")))
def test_prompt_follows_the_registry_and_the_budget_sums_the_counted_sections(save):
    """Section order = registry order; available = budget - tokens of the counted sections
    (at least 256); token figures unchanged from before the registry, on every sample save."""
    seen: set[str] = set()
    for case_save, npc, encoding, tick in _cases():
        if case_save != save:
            continue
        builder = _builder(save, encoding)
        p = builder.build(npc, tick)
        labels = [s.label for s in p.sections]
        assert labels == [s.label for s in SECTIONS if s.label in labels], (npc, tick)
        seen |= set(labels)

        counted = sum(builder.counter.count(s.text) for s in p.sections if BY_LABEL[s.label].counted)
        assert p.available == max(MIN_AVAILABLE, p.budget - counted), (npc, tick)
        assert [label for label, _ in p.reserved] == [s.label for s in SECTIONS if s.counted]
        assert sum(n for _, n in p.reserved) == counted
        system_text = SEPARATOR.join(s.text for s in p.sections if s.label in SYSTEM_LABELS)
        assert p.system_tokens == builder.counter.count(system_text)

        total, available, tokens = GOLDEN[f"{save} {npc} {encoding} {tick}"]
        assert (p.total_tokens, p.available, [s.tokens for s in p.sections]) == (total, available, tokens), (
            f"{npc} {encoding} {tick}: the token figures differ from {PROMPT_TOKENS.name}; if the change is meant, {REGENERATE}"
        )
    if save == "evening.json":  # the richest sample: every section of the registry appears
        assert seen == set(BY_LABEL), f"sections of the registry never in evening.json's prompts: {sorted(set(BY_LABEL) - seen)}"


def test_the_prompt_view_colours_come_from_the_registry():
    from narrative_debugger.widgets.prompt.parts import section_colour
    from PySide6.QtGui import QColor

    for spec in SECTIONS:
        assert section_colour(spec.label) == QColor(spec.colour)
    assert section_colour("not_a_section") == QColor("#b8b8b8")

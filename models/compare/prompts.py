"""Each NPC's prompt in A and in B at the compared tick (prompt-preview.md).

Each side is assembled by its own PromptBuilder, with its own content and save, so a
changed lore card, canon rule or history shows as the sections it changes.
"""

from __future__ import annotations

from dataclasses import dataclass

from narrative_debugger.models.prompt.builder import PromptPreview


@dataclass(frozen=True, slots=True)
class PromptChange:
    """One NPC's prompt in A and in B.

    Attributes:
        npc: the NPC's slug.
        sections_changed: labels of sections whose text differs (or that only one has),
            in prompt order.
        tokens_a, tokens_b: tokens of each whole prompt.
        cards_only_a, cards_only_b: ids of story cards included in one prompt only.
        tick_a, tick_b: the ticks the prompts were assembled at.
    """

    npc: str
    sections_changed: tuple[str, ...]
    tokens_a: int
    tokens_b: int
    cards_only_a: tuple[str, ...]
    cards_only_b: tuple[str, ...]
    tick_a: int = 0
    tick_b: int = 0

    @property
    def differs(self) -> bool:
        return bool(self.sections_changed or self.cards_only_a or self.cards_only_b) or self.tokens_a != self.tokens_b

    def to_json(self) -> dict:
        return {
            "sections_changed": list(self.sections_changed),
            "tokens_a": self.tokens_a,
            "tokens_b": self.tokens_b,
            "cards_only_a": list(self.cards_only_a),
            "cards_only_b": list(self.cards_only_b),
        }


def compare_prompts(a: PromptPreview, b: PromptPreview) -> PromptChange:
    """Sections, total tokens and included cards of two previews of one NPC."""
    text_a = {s.label: s.text for s in a.sections}
    text_b = {s.label: s.text for s in b.sections}
    labels = list(dict.fromkeys([*text_a, *text_b]))
    changed = tuple(label for label in labels if text_a.get(label) != text_b.get(label))
    cards_a = [c.id for c in a.cards if c.included]
    cards_b = [c.id for c in b.cards if c.included]
    return PromptChange(
        a.npc,
        changed,
        a.total_tokens,
        b.total_tokens,
        tuple(c for c in cards_a if c not in cards_b),
        tuple(c for c in cards_b if c not in cards_a),
        a.tick,
        b.tick,
    )

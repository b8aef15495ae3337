"""The prompt's sections, declared once: order, block, colour, budget rule and text builder.

``SECTIONS`` is the registry. The prompt is its entries' texts in this order (empty
texts left out), joined by a blank line (prompt-preview.md). The order follows the
context builder seed: a static system block first (narrator, canon, instructions, who
the NPC is, who the player is, plot essentials) so that it stays in a provider's prompt
cache, then the story block: history with the author's note three lines before its
end, the live sections from least to most volatile (summary, lore, relationship,
interaction memory, NPC state), the length hint and the closing reminder.

Budget (context builder seed): the tokens of every ``counted`` section are reserved
first; history and lore (not counted) share what is left of ``context_token_budget``,
at least 256 tokens. So a counted section's text may depend only on the NPC and the
tick; a filled section's text may also use ``SectionContext.fill``.

Adding a section: one ``SectionSpec`` entry here, at its place in the order, with a text
builder ``(SectionContext) -> str``. The builder, the budget sum, ``prompt --format
json``, the prompt view's bar, legend and text colours all read this list.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass
from enum import Enum
from typing import TYPE_CHECKING

from narrative_debugger.models.domain.relationship import prompt_modifier
from narrative_debugger.models.domain.types import InteractionState, NpcState

if TYPE_CHECKING:
    from narrative_debugger.models.content.loader import PromptConfig
    from narrative_debugger.models.playthrough import Playthrough
    from narrative_debugger.models.timeline.state_view import StateAtTick

LINE_SEPARATOR = "\n"
AUTHORS_NOTE_DEPTH = 3  # lines from the end of history (context builder seed)

# Length hint constants (context builder seed, "Output-length guidance").
LENGTH_HEADROOM = 50  # tokens kept free under max_output_tokens
WORDS_PER_TOKEN = 0.75
LENGTH_BUFFER = 0.90
MIN_LENGTH_HINT_WORDS = 40
LENGTH_FLOOR_SHARE = 0.35
MIN_LENGTH_FLOOR_WORDS = 60
MAX_LENGTH_FLOOR_WORDS = 300


class Block(Enum):
    """Where a section sits: the cacheable system block, or the story block after it."""

    SYSTEM = "system"
    STORY = "story"


@dataclass(frozen=True, slots=True)
class Fill:
    """What the budget let in, for the filled sections (history and lore).

    Attributes:
        lines: the included history lines, oldest first (``"Speaker: text"``): any
            sequence (the builder's is a view of the NPC's kept lines, not a copy).
        lore: the included ``World lore (name): entry`` lines, in card order.
        note_at: index in ``lines`` where the author's note goes (``len(lines)``
            when there is no note: all lines are ``history``).
    """

    lines: Sequence[str] = ()
    lore: tuple[str, ...] = ()
    note_at: int = 0


@dataclass(frozen=True, slots=True)
class SectionContext:
    """What a section's text is built from: one NPC at one tick.

    Attributes:
        play: the playthrough.
        state: the narrative state at the tick.
        npc: the NPC's state at the tick.
        name: the NPC's display name.
        player: the player's name, or "Player".
        config: ``prompt.yaml``.
        fill: the budget's choice of history and lore (empty while the counted
            sections are built, before the budget is known).
    """

    play: Playthrough
    state: StateAtTick
    npc: NpcState
    name: str
    player: str
    config: PromptConfig
    fill: Fill = Fill()


def fill_with(context: SectionContext, lines: Sequence[str], lore: list[str]) -> Fill:
    """The Fill for the history ``lines`` (oldest first; kept as given, a list is copied
    to a tuple) and ``lore`` lines the budget let in.

    The author's note, when the save has one, goes ``AUTHORS_NOTE_DEPTH`` (3) lines
    before the end of history (context builder seed); without one all lines are history.
    """
    note_at = max(0, len(lines) - AUTHORS_NOTE_DEPTH) if _authors_note(context) else len(lines)
    return Fill(tuple(lines) if isinstance(lines, list) else lines, tuple(lore), note_at)


@dataclass(frozen=True, slots=True)
class SectionSpec:
    """One entry of the registry.

    Attributes:
        label: the section's name in ``prompt --format json`` and the view (a contract).
        block: system or story block.
        colour: hex colour of its bar segment, legend swatch and text tint.
        counted: True when its tokens are reserved before history and lore get the rest
            of the budget; False for the sections that fill what is left.
        text: builds the section's text (empty: the section is left out).
        lines: for a section that is a list of lines (history, lore): those lines, whose
            ``LINE_SEPARATOR`` join is ``text``'s; the builder then encodes it line by line
            with each line's token ids kept, rather than cut the joined text up again.
    """

    label: str
    block: Block
    colour: str
    counted: bool
    text: Callable[[SectionContext], str]
    lines: Callable[[SectionContext], Sequence[str]] | None = None


# ----- text builders, in prompt order -----


def _narrator(c: SectionContext) -> str:
    return c.config.narrator_prompt.strip()


def _campaign_canon(c: SectionContext) -> str:
    canon = [f"- {rule}" for rule in c.config.canon_rules]
    canon += [f"- What is {a} never becomes {b}." for a, b in c.config.forbidden_status_changes]
    return ("Campaign canon (true, never to be contradicted):\n" + "\n".join(canon)).strip() if canon else ""


def _ai_instructions(c: SectionContext) -> str:
    return c.config.ai_instructions.strip()


def _npc_profile(c: SectionContext) -> str:
    profile = c.play.content.npcs.get(c.npc.slug)
    who = f"You speak as {c.name}" + (f" ({profile.pronouns})" if profile and profile.pronouns else "") + "."
    return ("NPC:\n" + " ".join(p for p in (who, profile.description if profile else "") if p)).strip()


def _player_character(c: SectionContext) -> str:
    player = c.play.save.player
    if not (player.name or player.description):
        return ""
    head = f"The player character is {player.name}" if player.name else ""
    if head and player.pronouns:
        head += f" ({player.pronouns})"
    return ("Player character:\n" + " ".join(p for p in (head + "." if head else "", player.description) if p)).strip()


def _plot_essentials(c: SectionContext) -> str:
    essentials = c.play.save.story.plot_essentials.strip()
    return f"Plot essentials:\n{essentials}".strip() if essentials else ""


def _history_lines(c: SectionContext) -> Sequence[str]:
    return c.fill.lines[: c.fill.note_at]


def _history(c: SectionContext) -> str:
    return LINE_SEPARATOR.join(_history_lines(c))


def _authors_note(c: SectionContext) -> str:
    note = c.play.save.story.authors_note.strip()
    return f"[Author's note: {note}]" if note else ""


def _recent_history_lines(c: SectionContext) -> Sequence[str]:
    return c.fill.lines[c.fill.note_at :]


def _recent_history(c: SectionContext) -> str:
    return LINE_SEPARATOR.join(_recent_history_lines(c))


def _story_summary(c: SectionContext) -> str:
    summary = c.play.save.story.story_summary.strip()
    return f"Story summary:\n{summary}" if summary else ""


def _world_lore_lines(c: SectionContext) -> Sequence[str]:
    return c.fill.lore


def _world_lore(c: SectionContext) -> str:
    return LINE_SEPARATOR.join(_world_lore_lines(c))


def _relationship(c: SectionContext) -> str:
    return "Relationship:\n" + prompt_modifier(c.play.tuning.level_for(c.npc.relationship.score), c.npc.relationship, npc=c.name, player=c.player)


def memory_inputs(npc: NpcState) -> tuple[int, bool]:
    """What the interaction memory section reads of an NPC's state, besides its StableId:
    its walk-aways so far and whether it never forgets a confrontation. The rest of the
    section is the knowledge's, so two states with equal inputs give the same section
    at one knowledge state (a what-if compares turns so: ``whatif.prompts.prompts``)."""
    return npc.walk_aways, npc.interaction_tolerance.permanent_confrontation_memory


def _interaction_memory(c: SectionContext) -> str:
    """Past conversations, walk-aways, confrontations and the one in progress (schema §3)."""
    npc, name, knowledge = c.npc, c.name, c.state.knowledge
    walk_aways, never_forgets = memory_inputs(npc)
    player = c.play.save.player.name or "the player"
    summary = knowledge.summary(npc.stable_id)
    active = knowledge.active_interaction()
    current = active if active is not None and active.target_entity == npc.stable_id else None
    past = summary.count - (current is not None)
    lines = []
    if past <= 0:
        lines.append(f"This is the first conversation between {player} and {name}.")
    else:
        lines.append(f"{player} and {name} have spoken {past} time{'s' * (past != 1)} before.")
        last_fact = knowledge.fact(summary.last_ended) if summary.last_ended else None
        last = last_fact.interaction if last_fact is not None else None
        if last is not None:
            ending = {
                InteractionState.Completed: "ended normally",
                InteractionState.WalkedAway: f"ended when {player} walked away mid-conversation",
                InteractionState.ConflictAbandoned: f"ended when {player} walked out of a confrontation",
            }.get(last.interaction_state, "ended")
            lines.append(f"The last one, at {last.location}, {ending}.")
    if knowledge.has_walked_away_from(npc.stable_id):
        lines.append(f"{player} has walked away from {name} before ({walk_aways} time{'s' * (walk_aways != 1)}).")
    if knowledge.has_confronted(npc.stable_id):
        memory = " and will not forget it" if never_forgets else ""
        lines.append(f"{name} has been in a confrontation with {player}{memory}.")
    if current is not None:
        who = player if current.player_initiated else name
        lines.append(f"They are talking now at {current.location}; {who} began it.")
        if current.interaction_state is InteractionState.Confrontation:
            lines.append("The conversation has turned into a confrontation.")
    return "Interaction memory:\n" + " ".join(lines)


def stress_words(stress: int, threshold: int) -> str:
    """How close ``stress`` is to the ToleranceThreshold (stress points), in words."""
    if threshold <= 0:
        return "has no patience to spare" if stress > 0 else "is calm"
    ratio = stress / threshold
    if stress > threshold:
        return "is past the end of their patience"
    if ratio >= 0.75:
        return "is close to losing patience"
    if ratio >= 0.5:
        return "is on edge"
    if ratio >= 0.25:
        return "is a little tense"
    return "is calm"


def _npc_state(c: SectionContext) -> str:
    tolerance = c.npc.tolerance
    return (
        f"{c.name}'s state:\n{c.name} {stress_words(tolerance.current_stress, tolerance.threshold)} "
        f"(stress {tolerance.current_stress} of {tolerance.threshold})."
    )


def length_hint(max_output_tokens: int) -> str:
    """A word-budget hint that keeps the reply inside ``max_output_tokens`` (context builder seed).

    words = int((max_output_tokens - 50) * 0.75 * 0.90); no hint under 40 words; a
    floor of 35 % of the words (capped at 300) is named only when it is at least 60.
    For 300 tokens: 168 words and a floor of 58, so no floor; for 1000: 641 and 224;
    for 100: 33 words, so no hint.
    """
    words = int((max_output_tokens - LENGTH_HEADROOM) * WORDS_PER_TOKEN * LENGTH_BUFFER)
    if words < MIN_LENGTH_HINT_WORDS:
        return ""
    floor = min(int(words * LENGTH_FLOOR_SHARE), MAX_LENGTH_FLOOR_WORDS)
    tail = " End the reply well before the limit."
    if floor < MIN_LENGTH_FLOOR_WORDS:
        return f"[Length: no more than {words} words. Most replies need far fewer; say only what the moment calls for.{tail}]"
    return (
        f"[Length: no more than {words} words and not much under {floor}. "
        f"Stay near the lower figure unless the scene truly asks for more.{tail}]"
    )


def _length_hint(c: SectionContext) -> str:
    return length_hint(c.config.max_output_tokens)


def _state_reminder(c: SectionContext) -> str:
    return f"Reply as {c.name} only, in character, with {c.name}'s next line of dialogue."


S, T = Block.SYSTEM, Block.STORY

#: The registry, in prompt order. System block in cool tones, history in ambers, the
#: live sections in greens and reds.
SECTIONS: tuple[SectionSpec, ...] = (
    SectionSpec("narrator", S, "#5b7db1", True, _narrator),
    SectionSpec("campaign_canon", S, "#7a68b8", True, _campaign_canon),
    SectionSpec("ai_instructions", S, "#8a9bb0", True, _ai_instructions),
    SectionSpec("npc_profile", S, "#3e9e9a", True, _npc_profile),
    SectionSpec("player_character", S, "#58b5d6", True, _player_character),
    SectionSpec("plot_essentials", S, "#a86bb5", True, _plot_essentials),
    SectionSpec("history", T, "#e0a23b", False, _history, _history_lines),
    SectionSpec("authors_note", T, "#e2713a", True, _authors_note),
    SectionSpec("recent_history", T, "#d9c03e", False, _recent_history, _recent_history_lines),
    SectionSpec("story_summary", T, "#9aae4a", True, _story_summary),
    SectionSpec("world_lore", T, "#4fa15a", False, _world_lore, _world_lore_lines),
    SectionSpec("relationship", T, "#d96a8e", True, _relationship),
    SectionSpec("interaction_memory", T, "#c25b5b", True, _interaction_memory),
    SectionSpec("npc_state", T, "#b0795a", True, _npc_state),
    SectionSpec("length_hint", T, "#9e9e9e", True, _length_hint),
    SectionSpec("state_reminder", T, "#6e6e6e", True, _state_reminder),
)

#: label -> registry entry.
BY_LABEL: dict[str, SectionSpec] = {s.label: s for s in SECTIONS}
#: Labels of the system block (the cacheable prefix).
SYSTEM_LABELS: frozenset[str] = frozenset(s.label for s in SECTIONS if s.block is Block.SYSTEM)
#: The sections that hold the history lines: before and after the author's note (prompt-preview §7).
HISTORY_LABELS: frozenset[str] = frozenset({"history", "recent_history"})

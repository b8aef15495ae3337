"""The relationship score: the delta formula, counters, shared references and the
prompt modifier (relationship seed: "Score Calculation", "Interaction Tracking",
"Shared References", "Prompt Modifiers").

Scores are in score points on 0..100. Functions return new ``Relationship`` values;
nothing is mutated.
"""

from __future__ import annotations

import math

from msgspec.structs import replace

from narrative_debugger.models.domain.tuning import DEFAULT_TUNING, Tuning
from narrative_debugger.models.domain.types import SHARED_REFERENCE_KINDS, Relationship, RelationshipLevel

SCORE_MIN = 0.0
SCORE_MAX = 100.0
#: Most shared references kept per kind (relationship seed, "Shared References").
MAX_REFERENCES_PER_KIND = 10
#: Sentiment above this counts as a positive interaction, below its negative as negative.
SENTIMENT_BAND = 0.2
#: The range of a RelationshipInteraction's sentiment (save-format §5; the seed's base
#: delta ``sentiment * 0.5`` spans -0.5..+0.5).
SENTIMENT_MIN, SENTIMENT_MAX = -1.0, 1.0
#: Written f32 values are compared with recomputed ones at this tolerance (save-format §1).
FLOAT_TOLERANCE = 1e-4


def unclamped_delta(sentiment: float, message_length: float, conversation_turns: float, tuning: Tuning = DEFAULT_TUNING) -> float:
    """The delta formula before its clamp (relationship seed, "Delta Formula"), score points:
    ``sentiment * 0.5`` (-0.5..0.5) + length bonus ``min(0.3, length / 500)`` + depth
    bonus ``min(0.2, turns * 0.05)`` + 0.1 for talking at all. (0.8, 800, 5) -> 1.1.
    The constants are ``tuning``'s (``models/domain/tuning.py``; the seed's by default)."""
    return tuning.unclamped_delta(sentiment, message_length, conversation_turns)


def score_delta(sentiment: float, message_length: float, conversation_turns: float, tuning: Tuning = DEFAULT_TUNING) -> float:
    """Score points one interaction adds (relationship seed, "Delta Formula"):
    ``unclamped_delta`` clamped to -1..1. The seed's worked examples: (0.4, 100, 1) ->
    0.55; (-0.3, 20, 1) -> 0.04; (0.8, 800, 5) -> 1.0.
    """
    return max(-1.0, min(1.0, tuning.unclamped_delta(sentiment, message_length, conversation_turns)))


def sentiment_in_range(sentiment: float) -> bool:
    """Whether ``sentiment`` lies in -1..1 (save-format §5; R006 where it does not)."""
    return SENTIMENT_MIN <= sentiment <= SENTIMENT_MAX


def clamp_score(score: float) -> float:
    """Clamp to 0..100 score points."""
    return max(SCORE_MIN, min(SCORE_MAX, score))


def close_enough(a: float, b: float) -> bool:
    """Equality for values the game wrote as rounded f32 (save-format §1, 1e-4)."""
    return math.isfinite(a) and math.isfinite(b) and abs(a - b) <= FLOAT_TOLERANCE


def record_interaction(
    rel: Relationship,
    *,
    tick: int,
    sentiment: float,
    message_length: float,
    conversation_turns: float,
    score_after: float | None = None,
    tuning: Tuning = DEFAULT_TUNING,
) -> Relationship:
    """Apply one ``record_interaction`` (relationship seed) and return the new value.

    Counters: total + 1; positive when sentiment > 0.2, negative when < -0.2; running
    averages ``(avg * (n - 1) + new) / n`` for message length and turns; first and last
    interaction ticks. The score becomes ``score_after`` when the game recorded one
    (the game's own f32 arithmetic is the truth the snapshot holds), else the clamped
    previous score plus ``score_delta``.
    """
    n = rel.total_interactions + 1
    score = score_after if score_after is not None else clamp_score(rel.score + score_delta(sentiment, message_length, conversation_turns, tuning))
    return Relationship(
        score=score,
        total_interactions=n,
        positive_interactions=rel.positive_interactions + (sentiment > SENTIMENT_BAND),
        negative_interactions=rel.negative_interactions + (sentiment < -SENTIMENT_BAND),
        avg_message_length=(rel.avg_message_length * (n - 1) + message_length) / n,
        conversation_depth_avg=(rel.conversation_depth_avg * (n - 1) + conversation_turns) / n,
        shared_references=rel.shared_references,
        first_interaction_tick=rel.first_interaction_tick if rel.first_interaction_tick is not None else tick,
        last_interaction_tick=tick,
    )


def apply_penalty(rel: Relationship, penalty: float, score_after: float | None = None) -> Relationship:
    """Subtract a walk-away penalty in score points, clamped at 0 (save-format §5, schema §8.1)."""
    score = score_after if score_after is not None else max(SCORE_MIN, rel.score - penalty)
    return replace(rel, score=score)


def add_shared_reference(rel: Relationship, kind: str, content: str) -> Relationship:
    """Add a joke, nickname or memory: duplicates ignored, at most 10 a kind with the
    oldest dropped (relationship seed, "Adding References").

    Raises:
        ValueError: for a kind other than jokes, nicknames or memories.
    """
    if kind not in SHARED_REFERENCE_KINDS:
        raise ValueError(f"unknown shared reference kind {kind!r}")
    refs = []
    for pair in rel.shared_references:
        name, items = pair
        if name == kind and content not in items:
            pair = (name, (items + (content,))[-MAX_REFERENCES_PER_KIND:])
        refs.append(pair)  # the kinds left as they were keep their pair (each version of an NPC holds one)
    return replace(rel, shared_references=tuple(refs))


#: How the NPC should treat the player at each level: our wording of the seed's
#: level behaviours (formal stranger .. familiar close friend).
LEVEL_GUIDANCE: dict[RelationshipLevel, str] = {
    RelationshipLevel.STRANGER: (
        "{npc} barely knows {player}. Keep a courteous distance: speak formally, "
        "assume no familiarity, and ask before presuming anything."
    ),
    RelationshipLevel.ACQUAINTANCE: (
        "{npc} has spoken with {player} a few times. Be friendly but a little guarded, "
        "use their name now and then, and recall only the plain facts you know of them."
    ),
    RelationshipLevel.FRIEND: (
        "{npc} counts {player} as a friend. Talk easily and warmly, use their name, "
        "and bring up earlier conversations when they fit."
    ),
    RelationshipLevel.GOOD_FRIEND: (
        "{npc} knows {player} well. Be relaxed and personal, draw on what you have "
        "been through together, and allow some playful teasing."
    ),
    RelationshipLevel.CLOSE_FRIEND: (
        "{npc} and {player} are close. Be openly familiar and supportive, lean on "
        "your private jokes, tease gently and say what you feel."
    ),
}


def prompt_modifier(level: RelationshipLevel, rel: Relationship, *, npc: str, player: str) -> str:
    """The relationship section of the NPC prompt (relationship seed, "Prompt Modifiers").

    Shared references (jokes, nicknames) are added only at Good Friend and Close
    Friend, as the seed rules.
    """
    text = LEVEL_GUIDANCE[level].format(npc=npc, player=player)
    if level in (RelationshipLevel.GOOD_FRIEND, RelationshipLevel.CLOSE_FRIEND):
        jokes = rel.references("jokes")
        nicknames = rel.references("nicknames")
        if jokes:
            text += f" Jokes only the two of you share: {', '.join(jokes)}."
        if nicknames:
            text += f" You sometimes call {player}: {', '.join(nicknames)}."
    return text

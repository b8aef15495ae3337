"""Why-chains: the journal entries that made each value, verdict and prompt choice (issue 11).

``explain(play, target, tick)`` answers for one target at one tick from the timeline
index (no replay from zero). Targets:

- ``npc:SLUG.ATTR`` with ATTR one of ``score``, ``level``, ``stress``, ``walk_aways``,
  ``total_interactions``, ``positive_interactions``, ``negative_interactions``,
  ``shared_references``;
- ``fact:FACT_ID`` (and ``entity:STABLE_ID``);
- ``line:LINE_ID`` (a monologue line, why or why not);
- ``card:SLUG/CARD_ID`` (a story card in the NPC's prompt);
- ``history:SLUG`` (the prompt's history and budget).

Unknown targets raise ``UnknownTarget`` with close matches. This package never imports Qt.
"""

from __future__ import annotations

from difflib import get_close_matches

from narrative_debugger.models.explain.chain import DEFAULT_LIMIT, Explanation, Folded, Step, UnknownTarget
from narrative_debugger.models.explain.facts import explain_entity, explain_fact
from narrative_debugger.models.explain.lines import explain_line
from narrative_debugger.models.explain.npc import explain_attribute, explain_level
from narrative_debugger.models.explain.prompt import explain_card, explain_history
from narrative_debugger.models.explain.tracks import NPC_ATTRIBUTES
from narrative_debugger.models.playthrough import Playthrough

TARGET_FORMS = (
    "npc:SLUG." + "|".join(NPC_ATTRIBUTES),
    "fact:FACT_ID",
    "entity:STABLE_ID",
    "line:LINE_ID",
    "card:SLUG/CARD_ID",
    "history:SLUG",
)


def _close(word: str, choices) -> list[str]:
    return get_close_matches(word, list(choices), n=5, cutoff=0.5)


def _npc(play: Playthrough, slug: str) -> int:
    npc = play.save.npc_by_slug(slug)
    if npc is None:
        slugs = [n.slug for n in play.save.npcs.values()]
        raise UnknownTarget(f"no NPC {slug!r} in {play.save.label}", _close(slug, slugs))
    return npc.stable_id


def npc_targets(play: Playthrough) -> list[str]:
    """Every ``npc:`` target of the save, for completion and close matches."""
    return [f"npc:{n.slug}.{a}" for n in play.save.npcs.values() for a in NPC_ATTRIBUTES]


def explain(play: Playthrough, target: str, tick: int, limit: int = DEFAULT_LIMIT, builder=None) -> Explanation:
    """Explain ``target`` at ``tick`` (game ticks) in a readable playthrough.

    Args:
        play: the playthrough (``readable``).
        target: one of ``TARGET_FORMS``.
        tick: the tick.
        limit: steps kept in full; older ones are folded by rule.
        builder: a PromptBuilder to reuse for ``card:``/``history:`` (one is made if None).

    Raises:
        UnknownTarget: the form, NPC, attribute, fact, entity, line or card is unknown.
    """
    kind, sep, rest = target.partition(":")
    if not sep or not rest:
        raise UnknownTarget(f"target {target!r} is not one of {', '.join(TARGET_FORMS)}", _close(target, [*npc_targets(play), *(f"line:{x}" for x in play.content.monologues)]))
    if kind == "npc":
        slug, dot, attr = rest.rpartition(".")
        if not dot:
            slug, attr = rest, ""
        npc = _npc(play, slug)
        if attr not in NPC_ATTRIBUTES:
            raise UnknownTarget(f"{attr!r} is not an NPC value (one of {', '.join(NPC_ATTRIBUTES)})", [f"npc:{slug}.{a}" for a in _close(attr, NPC_ATTRIBUTES)])
        if attr == "level":
            return explain_level(play, npc, tick, limit, target)
        return explain_attribute(play, npc, attr, tick, limit, target)
    if kind == "fact":
        if rest not in play.index.facts:
            raise UnknownTarget(f"no fact {rest!r} in {play.save.label}'s journal", [f"fact:{x}" for x in _close(rest, play.index.facts)])
        return explain_fact(play, rest, tick, limit, target)
    if kind == "entity":
        if not rest.isdigit() or int(rest) not in play.index.entities:
            raise UnknownTarget(f"no observed entity {rest!r} in {play.save.label}", [f"entity:{x}" for x in _close(rest, map(str, play.index.entities))])
        return explain_entity(play, int(rest), tick, limit, target)
    if kind == "line":
        if rest not in play.content.monologues:
            raise UnknownTarget(f"no monologue line {rest!r} in the content", [f"line:{x}" for x in _close(rest, play.content.monologues)])
        return explain_line(play, rest, tick, limit, target)
    if kind in ("card", "history"):
        from narrative_debugger.models.prompt.builder import PromptBuilder

        if kind == "card":
            slug, slash, card_id = rest.partition("/")
            _npc(play, slug)
            ids = [c.id for c in play.content.cards]
            if not slash or card_id not in ids:
                raise UnknownTarget(f"no story card {card_id!r} in the content", [f"card:{slug}/{x}" for x in _close(card_id, ids)])
            return explain_card(play, builder or PromptBuilder(play), slug, card_id, tick, limit, target)
        _npc(play, rest)
        return explain_history(play, builder or PromptBuilder(play), rest, tick, limit, target)
    raise UnknownTarget(f"unknown target kind {kind!r}: use one of {', '.join(TARGET_FORMS)}", _close(kind, ["npc", "fact", "entity", "line", "card", "history"]))


__all__ = ["DEFAULT_LIMIT", "TARGET_FORMS", "Explanation", "Folded", "Step", "UnknownTarget", "explain", "npc_targets"]

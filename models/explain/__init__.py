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

Unknown targets raise ``UnknownTarget`` with close matches (found case-insensitively), or
the form and an example; malformed ones name every form. This package never imports Qt.
"""

from __future__ import annotations

import dataclasses

from narrative_debugger.models.boundary import U64, ConversionError, parse_int
from narrative_debugger.models.explain.chain import DEFAULT_LIMIT, Explanation, Folded, Step, UnknownTarget
from narrative_debugger.models.explain.facts import explain_entity, explain_fact
from narrative_debugger.models.explain.lines import explain_line
from narrative_debugger.models.explain.npc import explain_attribute, explain_level
from narrative_debugger.models.explain.prompt import explain_card, explain_history
from narrative_debugger.models.explain.tracks import NPC_ATTRIBUTES
from narrative_debugger.models.playthrough import Playthrough
from narrative_debugger.models.report.plain_text import close_matches

TARGET_FORMS = (
    "npc:SLUG." + "|".join(NPC_ATTRIBUTES),
    "fact:FACT_ID",
    "entity:STABLE_ID",
    "line:LINE_ID",
    "card:SLUG/CARD_ID",
    "history:SLUG",
)


#: Every target kind, the word before the colon (matched case-insensitively).
KINDS = ("npc", "fact", "entity", "line", "card", "history")


def _said(text: str) -> str:
    """``text`` quoted for a message, cut past 80 characters with its length (a
    100 000-character target was echoed whole: trial 47)."""
    return repr(text) if len(text) <= 80 else f"{text[:60]!r}… ({len(text):,} characters)"


def _malformed(target: str, why: str, matches: list[str] | None = None) -> UnknownTarget:
    """A target that is no target form: say why, and name every form (one line)."""
    return UnknownTarget(f"{_said(target)} is not a target: {why}; use one of {', '.join(TARGET_FORMS)}", matches)


def _unknown(what: str, word: str, where: str, choices: list[str], form: str, plural: str, as_target) -> UnknownTarget:
    """No ``what`` ``word`` ``where`` (``choices`` lacks it): close matches (as targets),
    or else the form and one example, so that the message always says what is accepted."""
    matches = [as_target(x) for x in close_matches(word, choices)]
    message = f"no {what} {_said(word)} {where}"
    if matches:
        return UnknownTarget(message, matches)
    if not choices:
        return UnknownTarget(f"{message}; there are no {plural} for {form}")
    return UnknownTarget(f"{message}; {form} takes one of the {len(choices)} {plural}, e.g. {as_target(choices[0])}")


def _npc(play: Playthrough, slug: str, also: str = "") -> int:
    """The StableId of the NPC ``slug``; else UnknownTarget with close slugs (any case),
    or every slug when none is close. ``also`` adds a second complaint to the message."""
    npc = play.save.npc_by_slug(slug)
    if npc is None:
        slugs = [n.slug for n in play.save.npcs.values()]
        matches = close_matches(slug, slugs)
        known = "" if matches else f" (NPCs: {', '.join(sorted(slugs)) or 'none'})"
        raise UnknownTarget(f"no NPC {_said(slug)} in {play.save.label}{known}{also}", matches)
    return npc.stable_id


def npc_targets(play: Playthrough) -> list[str]:
    """Every ``npc:`` target of the save, for completion and close matches."""
    return [f"npc:{n.slug}.{a}" for n in play.save.npcs.values() for a in NPC_ATTRIBUTES]


def explain(play: Playthrough, target: str, tick: int, limit: int = DEFAULT_LIMIT, builder=None) -> Explanation:
    """Explain ``target`` at ``tick`` (game ticks) in a readable playthrough.

    A step's tick is the tick the replay applies its entry at. An entry whose own tick
    is lower than an earlier entry's (J001) applies at that earlier, higher tick, as
    ticks never go back (save-format §5): its detail says both.

    Args:
        play: the playthrough (``readable``).
        target: one of ``TARGET_FORMS``; the kind before the colon in any case
            (``NPC:`` is ``npc:``), slugs and ids exactly as the save and content spell them.
        tick: the tick.
        limit: steps kept in full; older ones are folded by rule.
        builder: a PromptBuilder to reuse for ``card:``/``history:`` (one is made if None).

    Raises:
        UnknownTarget: the form is malformed (the message names every form: no colon, an
            unknown kind, nothing after the colon, a STABLE_ID that is no whole number, an
            ``npc:`` without ``.ATTR``, a ``card:`` without ``/CARD_ID``), or the NPC,
            attribute, fact, entity, line or card is unknown (close matches, found
            case-insensitively, or the form and an example).
    """
    exp = _explain(play, target, tick, limit, builder)
    own = play.save.journal.ticks
    for k, step in enumerate(exp.steps):
        i = step.journal_index
        said = own[i] if 0 <= i < len(own) else None
        if said is not None and said != step.tick:
            note = f" (the entry says tick {said}; ticks never go back (J001), so it applies at tick {step.tick})"
            exp.steps[k] = dataclasses.replace(step, detail=step.detail + note)
    return exp


def _explain(play: Playthrough, target: str, tick: int, limit: int, builder) -> Explanation:
    kind, sep, rest = target.partition(":")
    kind = kind.lower()
    if not sep:
        bare = {**{x: f"fact:{x}" for x in play.index.facts}, **{x: f"line:{x}" for x in play.content.monologues}}
        bare.update({n.slug: f"npc:{n.slug}.score" for n in play.save.npcs.values()})
        raise _malformed(target, "it has no KIND: before its name", [bare[x] for x in close_matches(target, bare)])
    if kind not in KINDS:
        raise _malformed(target, f"unknown kind {kind!r}", [f"{k}:{rest}" for k in close_matches(kind, KINDS)])
    if not rest:
        raise _malformed(target, f"nothing after {kind}:")
    if kind == "npc":
        slug, dot, attr = rest.rpartition(".")
        if not dot:
            slug, attr = rest, ""
        if not slug:
            raise _malformed(target, "npc: takes SLUG.ATTR")
        npc = _npc(play, slug, "" if attr else f", and npc: takes SLUG.ATTR with ATTR one of {', '.join(NPC_ATTRIBUTES)}")
        if not attr:
            raise _malformed(target, "npc: takes SLUG.ATTR", [f"npc:{slug}.{a}" for a in NPC_ATTRIBUTES])
        if attr not in NPC_ATTRIBUTES:
            raise UnknownTarget(f"{_said(attr)} is not an NPC value (one of {', '.join(NPC_ATTRIBUTES)})", [f"npc:{slug}.{a}" for a in close_matches(attr, NPC_ATTRIBUTES)])
        if attr == "level":
            return explain_level(play, npc, tick, limit, target)
        return explain_attribute(play, npc, attr, tick, limit, target)
    if kind == "fact":
        if rest not in play.index.facts:
            raise _unknown("fact", rest, f"in {play.save.label}'s journal", list(play.index.facts), "fact:FACT_ID", "facts in its journal", lambda x: f"fact:{x}")
        return explain_fact(play, rest, tick, limit, target)
    if kind == "entity":
        try:
            sid = parse_int(rest, U64)
        except ConversionError as exc:
            shown = repr(rest if len(rest) <= 40 else rest[:40] + "…")
            raise _malformed(target, f"entity:STABLE_ID takes a whole number, not {shown} ({exc.reason})") from None
        if sid not in play.index.entities:
            raise _unknown("observed entity", rest, f"in {play.save.label}", [str(x) for x in play.index.entities], "entity:STABLE_ID", "observed entities", lambda x: f"entity:{x}")
        return explain_entity(play, sid, tick, limit, target)
    if kind == "line":
        if rest not in play.content.monologues:
            raise _unknown("monologue line", rest, "in the content", list(play.content.monologues), "line:LINE_ID", "monologue lines", lambda x: f"line:{x}")
        return explain_line(play, rest, tick, limit, target)
    from narrative_debugger.models.prompt.builder import PromptBuilder

    if kind == "card":
        slug, slash, card_id = rest.partition("/")
        if not slash or not slug or not card_id:
            raise _malformed(target, "card: takes SLUG/CARD_ID")
        _npc(play, slug)
        ids = [c.id for c in play.content.cards]
        if card_id not in ids:
            raise _unknown("story card", card_id, "in the content", ids, "card:SLUG/CARD_ID", "story cards", lambda x: f"card:{slug}/{x}")
        return explain_card(play, builder or PromptBuilder(play), slug, card_id, tick, limit, target)
    _npc(play, rest)
    return explain_history(play, builder or PromptBuilder(play), rest, tick, limit, target)


__all__ = ["DEFAULT_LIMIT", "TARGET_FORMS", "Explanation", "Folded", "Step", "UnknownTarget", "explain", "npc_targets"]

"""What the knowledge graph groups and picks: fact groups, NPCs worth drawing, recent facts.

Plain Python over the sorted FactId list of a tick (BTreeMap order), so that a
66 000-fact save is grouped by bisection, not by reading every fact:

* ``fact_groups``: one group per category (in key order), the ``interaction``
  category counted only (the graph draws conversations at their NPC), and the
  malformed FactIds (K001, K003) in a group of their own, so that a bad id never
  lands in, or shifts, a well-formed category;
* ``pick_npcs``: the NPCs a crowded graph draws;
* ``recent_interactions``, ``conversation_ids``, ``recent_in_range``: which facts a
  collapsed group shows, and every fact of an expanded NPC.
"""

from __future__ import annotations

import heapq
from bisect import bisect_left
from collections.abc import Container, Mapping, Sequence
from dataclasses import dataclass

from narrative_debugger.models.domain.knowledge import interaction_prefix, malformed_fact_ids, parse_interaction_id
from narrative_debugger.models.domain.types import FactId
from narrative_debugger.models.timeline.state_view import StateAtTick
from narrative_debugger.widgets.kit.fact_model import categories_in

#: NPCs drawn at most (the game has 30-80 Active NPCs, D-026); the selected one is always drawn.
MAX_NPCS = 12
#: The title of the group of malformed FactIds.
MALFORMED = "malformed ids"


@dataclass(frozen=True)
class FactGroup:
    """A card of the graph.

    Attributes:
        key: ``("category", name)`` or ``("malformed",)``: what expanding it remembers.
        title: the card title.
        ids: its FactIds in key order.
        malformed: True for the group of malformed FactIds.
    """

    key: tuple
    title: str
    ids: list[FactId]
    malformed: bool = False


def fact_faults(fact_ids) -> dict[FactId, str]:
    """FactId -> the code it breaks (K001 or K003; see ``fact_id_fault``), for the bad ones only."""
    return malformed_fact_ids(fact_ids)


def fact_groups(keys: Sequence[FactId], faults: Mapping[FactId, str]) -> tuple[list[FactGroup], int]:
    """The cards of a tick and the number of well-formed conversations.

    Args:
        keys: the tick's FactIds in BTreeMap order.
        faults: malformed FactIds (of any tick) -> code; only those in ``keys`` count.

    Returns:
        (groups, conversations): a group per non-interaction category that has a
        well-formed fact, in key order, then the malformed group if any; and how many
        well-formed ``interaction.*`` facts there are.
    """
    present = sorted(fid for fid in faults if _has(keys, fid))
    bad = set(present)
    groups: list[FactGroup] = []
    conversations = 0
    lo = 0
    for category, n in categories_in(keys):
        hi = lo + n
        if category == "interaction":
            conversations = n - sum(1 for fid in present if lo <= bisect_left(keys, fid) < hi)
        else:
            ids = [fid for fid in keys[lo:hi] if fid not in bad] if bad else list(keys[lo:hi])
            if ids:
                groups.append(FactGroup(("category", category), category, ids))
        lo = hi
    if present:
        groups.append(FactGroup(("malformed",), MALFORMED, present, malformed=True))
    return groups, conversations


def _has(keys: Sequence[FactId], fid: FactId) -> bool:
    k = bisect_left(keys, fid)
    return k < len(keys) and keys[k] == fid


def recent_in_range(keys: Sequence[FactId], lo: int, hi: int, limit: int, facts) -> list[FactId]:
    """The ``limit`` most recently learned FactIds among ``keys[lo:hi]`` (by acquired tick), in key order."""
    if hi - lo <= limit:
        return list(keys[lo:hi])
    picked = heapq.nlargest(limit, range(lo, hi), key=lambda k: (facts[keys[k]].acquired_tick, k))
    return [keys[k] for k in sorted(picked)]


def pick_npcs(state: StateAtTick, keys: Sequence[FactId], selected: int | None, most: int = MAX_NPCS,
              malformed: Mapping[FactId, str] | None = None):
    """The NPCs worth drawing and how many are left out.

    All of them when there are at most ``most``; else the selected NPC and those the
    player talked to most recently (then saw most recently), in StableId order so
    that nodes keep their places from tick to tick.
    """
    npcs = state.npcs
    if len(npcs) <= most:
        return list(npcs.values()), 0
    facts = state.knowledge.facts
    entities = state.knowledge.entities

    def recency(npc) -> tuple:
        last, _ = recent_interactions(keys, npc.slug, 1, malformed if malformed is not None else {})
        talked = facts[last[0]].interaction.started_tick if last else -1
        entity = entities.get(npc.stable_id)
        return (npc.stable_id == selected, talked, entity.last_seen_tick if entity else -1)

    chosen = heapq.nlargest(most, npcs.values(), key=recency)
    return sorted(chosen, key=lambda npc: npc.stable_id), len(npcs) - most


def _interaction_range(keys: Sequence[FactId], slug: str) -> tuple[int, int]:
    prefix = interaction_prefix(slug)
    lo = bisect_left(keys, prefix)
    return lo, bisect_left(keys, prefix[:-1] + chr(ord("_") + 1), lo)


def _by_sequence(ids: Sequence[FactId]) -> list[FactId]:
    """``ids`` (one slug's range, in key order) in sequence order, without parsing them.

    Within one ``interaction.{slug}_`` prefix a longer id has a longer number, and ids
    of one length sort by number as text (``_999`` < ``_1000``), so a stable sort by
    length (in C) is sequence order.
    """
    return sorted(ids, key=len)


def conversation_ids(keys: Sequence[FactId], slug: str, malformed: Container[FactId] | None = None) -> list[FactId]:
    """Every well-formed interaction FactId with ``slug``, in sequence order (schema §7.3).

    Args:
        keys: the tick's FactIds in key order.
        slug: the NPC's slug.
        malformed: the malformed FactIds (``fact_faults``) to leave out; when None
            every id is parsed instead.
    """
    lo, hi = _interaction_range(keys, slug)
    ordered = _by_sequence(keys[lo:hi])
    if malformed is None:
        return [fid for fid in ordered if _parses(fid, slug)]
    return [fid for fid in ordered if fid not in malformed]


def _parses(fid: FactId, slug: str) -> bool:
    parsed = parse_interaction_id(fid)
    return parsed is not None and parsed[0] == slug


def recent_interactions(keys: Sequence[FactId], slug: str, limit: int,
                        malformed: Mapping[FactId, str] | None = None) -> tuple[list[FactId], int]:
    """The ``limit`` highest-sequence interaction FactIds with ``slug`` and how many there are.

    Sequence numbers grow with time (schema §7.3), so they give recency without
    reading the facts: a sort by length (in C) puts the range in sequence order, and
    only the ids picked are parsed.

    Args:
        keys: the tick's FactIds in key order.
        slug: the NPC's slug; limit: how many to return.
        malformed: the malformed FactIds (``fact_faults``, a few) to leave out of the
            count; when None every id of the range is parsed to count them.
    """
    lo, hi = _interaction_range(keys, slug)
    if malformed is None:
        total = sum(1 for fid in keys[lo:hi] if _parses(fid, slug))
    else:
        prefix = interaction_prefix(slug)
        total = hi - lo - sum(1 for fid in malformed if fid.startswith(prefix) and _has(keys, fid))
    ordered = _by_sequence(keys[lo:hi])
    best: list[FactId] = []
    for fid in reversed(ordered):
        if len(best) == limit:
            break
        if _parses(fid, slug):
            best.append(fid)
    best.reverse()
    return best, total

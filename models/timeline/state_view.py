"""Read-only views of the narrative state at one journal position.

``StateAtTick`` (what ``TimelineIndex.at(tick)`` returns) answers for NPCs,
transitions and monologues; ``KnowledgeAtTick`` is the knowledge graph of that tick,
with the schema §5.1 queries in O(log N) from the index's summaries; ``FactsAtTick``
is its FactId -> FactKnowledge mapping in BTreeMap order. Nothing here replays:
every value is a bisection into the versions the replay recorded.
"""

from __future__ import annotations

from bisect import bisect_right
from collections.abc import ItemsView, Iterator, Mapping
from dataclasses import dataclass
from itertools import islice
from typing import TYPE_CHECKING

from narrative_debugger.models.domain.knowledge import InteractionQueries, interaction_prefix
from narrative_debugger.models.domain.types import EntityKnowledge, FactId, FactKnowledge, InteractionMetadata, InteractionState, NpcState, StableId

if TYPE_CHECKING:
    from narrative_debugger.models.timeline.index import TimelineIndex, TransitionRecord


class FactsAtTick(Mapping):
    """Read-only FactId -> FactKnowledge mapping of one tick, iterated in BTreeMap order."""

    def __init__(self, index: TimelineIndex, position: int) -> None:
        self._index = index
        self._position = position

    def __getitem__(self, fact_id: FactId) -> FactKnowledge:
        versions = self._index.facts.get(fact_id)
        value = versions.at(self._position) if versions is not None else None
        if value is None:
            raise KeyError(fact_id)
        return value

    def __iter__(self) -> Iterator[FactId]:
        # ``facts`` is in creation order, so the facts that exist here are its first
        # len(self) keys; sorting them in C is much faster than filtering in Python.
        return iter(sorted(islice(self._index.facts, len(self))))

    def __len__(self) -> int:
        return bisect_right(self._index.fact_created, self._position)

    def as_dict(self) -> dict[FactId, FactKnowledge]:
        """The mapping as a plain dict, in creation order (not key order). At or past
        the journal's last entry each fact's value is its last version, read in one
        pass without a bisection; elsewhere one bisection a fact."""
        index, position = self._index, self._position
        pairs = islice(index.facts.items(), len(self))
        if position >= len(index.ticks):
            return {fact_id: versions.values[-1] for fact_id, versions in pairs}
        return {fact_id: versions.at(position) for fact_id, versions in pairs}

    def items(self) -> "_FactItems":
        """``(FactId, FactKnowledge)`` pairs in key order, each version found once (the
        Mapping's own items look every key up again through ``__getitem__``)."""
        return _FactItems(self)

    def irange_prefix(self, prefix: str) -> Iterator[tuple[FactId, FactKnowledge]]:
        """Facts whose id starts with ``prefix``, in key order: O(log N + K) (schema §5.2)."""
        facts, pos = self._index.facts, self._position
        for fact_id in self._index.fact_keys.irange(minimum=prefix):
            if not fact_id.startswith(prefix):
                break
            value = facts[fact_id].at(pos)
            if value is not None:
                yield fact_id, value


class _FactItems(ItemsView):
    """``FactsAtTick.items()``: iterates the versions directly; the rest is ItemsView's."""

    def __iter__(self) -> Iterator[tuple[FactId, FactKnowledge]]:
        mapping = self._mapping
        facts, position = mapping._index.facts, mapping._position
        for fact_id in mapping:
            yield fact_id, facts[fact_id].at(position)


class KnowledgeAtTick(InteractionQueries):
    """The knowledge graph at one journal position, answering the schema §5.1 queries.

    Attributes:
        facts: FactsAtTick mapping.
    """

    def __init__(self, index: TimelineIndex, position: int) -> None:
        self._index = index
        self._position = position
        self.facts = FactsAtTick(index, position)

    def slug_for(self, target: StableId) -> str | None:
        return self._index.slugs.get(target)

    def fact(self, fact_id: FactId) -> FactKnowledge | None:
        return self.facts.get(fact_id)

    def interaction_items(self, slug: str):
        return self.facts.irange_prefix(interaction_prefix(slug))

    def active_fact_id(self) -> FactId | None:
        return self._index.active.at(self._position)

    # O(log N) forms of the schema §5.1 queries, read from the interaction summaries.
    # The replay creates every interaction fact from its target's slug, so these agree
    # with the prefix-range forms of InteractionQueries (a test holds them equal).
    def summary(self, target: StableId):
        """The NPC's interaction aggregates at this tick (see InteractionSummary)."""
        return self._index.summary(target, self._position)

    def has_interacted_with(self, target: StableId) -> bool:
        return self.summary(target).count > 0

    def count_interactions(self, slug: str, state: InteractionState | None = None) -> int:
        target = self._index.npc_for_slug(slug)
        return self.summary(target).in_state(state) if target is not None else 0

    def interaction_count_with(self, target: StableId) -> int:
        return self.summary(target).count

    def has_walked_away_from(self, target: StableId) -> bool:
        return self.summary(target).walked_away > 0

    def has_confronted(self, target: StableId) -> bool:
        return self.summary(target).confronted > 0

    def last_interaction_with(self, target: StableId):
        last = self.summary(target).last
        fact = self.fact(last) if last is not None else None
        return fact.interaction if fact is not None else None

    @property
    def entities(self) -> dict[StableId, EntityKnowledge]:
        """StableId -> EntityKnowledge at this tick, in numeric order."""
        out = {}
        for key in self._index.entity_keys:
            value = self._index.entities[key].at(self._position)
            if value is not None:
                out[key] = value
        return out

    def changes_since(self, since_position: int) -> int:
        """How many fact values (interactions included) were recorded between
        ``since_position`` and this position, either way: 0 when every fact, and so
        every schema §5.1 answer, is the same at both. O(log N)."""
        lo, hi = sorted((since_position, self._position))
        positions = self._index.change_positions
        return bisect_right(positions, hi) - bisect_right(positions, lo)

    def changed_facts(self, since_position: int) -> list[FactId]:
        """FactIds whose value differs between ``since_position`` and this position."""
        lo, hi = sorted((since_position, self._position))
        index = self._index
        start = bisect_right(index.change_positions, lo)
        end = bisect_right(index.change_positions, hi)
        return sorted(set(index.change_facts[start:end]))


@dataclass(frozen=True)
class StateAtTick:
    """The narrative state after every journal entry with tick <= ``tick``.

    Attributes:
        index: the timeline it reads from.
        tick: the tick asked for.
        position: journal entries applied.
    """

    index: TimelineIndex
    tick: int
    position: int

    @property
    def knowledge(self) -> KnowledgeAtTick:
        """The player's knowledge graph at this tick."""
        return KnowledgeAtTick(self.index, self.position)

    def npc(self, stable_id: StableId) -> NpcState | None:
        """One NPC's state at this tick."""
        versions = self.index.npcs.get(stable_id)
        return versions.at(self.position) if versions is not None else None

    @property
    def npcs(self) -> dict[StableId, NpcState]:
        """Every NPC's state at this tick, in numeric StableId order."""
        return {sid: self.npc(sid) for sid in sorted(self.index.npcs)}

    def monologues_fired(self) -> list[tuple[int, int, str]]:
        """(journal index, tick, line_id) of the monologue lines shown so far."""
        fired = self.index.monologues_fired
        return fired[: bisect_right(fired, self.position - 1, key=lambda r: r[0])]

    def transitions(self, npc: StableId | None = None) -> list[TransitionRecord]:
        """Interaction state moves so far, optionally for one NPC."""
        moves = self.index.transitions if npc is None else self.index.transitions_by_npc.get(npc, [])
        return moves[: bisect_right(moves, self.position - 1, key=lambda r: r.index)]

    def interaction_ids(self, npc: StableId) -> list[FactId]:
        """FactIds of the NPC's interactions at this tick, in creation order (see TimelineIndex)."""
        return self.index.interaction_ids(npc, self.position)

    def in_progress(self, npc: StableId) -> tuple[FactId, InteractionMetadata] | None:
        """The NPC's own interaction in progress (Active or Confrontation) at this tick, as
        (FactId, metadata): its latest-started one still in progress, read from the
        interaction facts the Interactions view lists. None when it has none.

        ``knowledge.active_interaction()`` is the single interaction the replay tracks as
        in progress; when a second one starts before the first ends (finding I005) both
        are in progress and each NPC has its own. O(log N), plus a walk back over the
        NPC's interactions while it has one in progress.
        """
        summary = self.index.summary(npc, self.position)
        if not any(summary.in_state(s) for s in InteractionState if s.in_progress):
            return None
        knowledge = self.knowledge
        for fact_id in self.index.interaction_ids_newest_first(npc, self.position):
            fact = knowledge.fact(fact_id)
            meta = fact.interaction if fact is not None else None
            if meta is not None and meta.interaction_state.in_progress:
                return fact_id, meta
        return None

    def npcs_with_interaction_moves(self, since_position: int) -> set[StableId]:
        """The NPCs an interaction started or changed state for between ``since_position``
        and this position (either order): those whose ``in_progress`` may differ."""
        lo, hi = sorted((since_position, self.position))
        moves = self.index.transitions
        start = bisect_right(moves, lo - 1, key=lambda r: r.index)
        end = bisect_right(moves, hi - 1, key=lambda r: r.index)
        return {r.npc for r in moves[start:end]}

    def interactions_exact(self, npc: StableId) -> bool:
        """Whether ``interaction_ids`` equals the slow prefix-range form here (see TimelineIndex)."""
        return self.index.interactions_exact(npc, self.position)

    def transition_counts(self, npc: StableId) -> dict[tuple, int]:
        """(source, target) -> legal moves of that kind the NPC's interactions took so far."""
        return self.index.transition_counts(npc, self.position)

    def illegal_transitions(self, npc: StableId) -> list[TransitionRecord]:
        """The NPC's forbidden interaction moves so far, in journal order."""
        return self.index.illegal_transitions(npc, self.position)

    def fact_transitions(self, fact_id: FactId | None) -> list[TransitionRecord]:
        """The moves one interaction took so far, in journal order."""
        return self.index.fact_transitions(fact_id, self.position)

"""What the player knows in A and in B: facts and interaction outcomes (issue 13).

Facts are compared by FactId (confidence and KnowledgeState); interaction facts are
left to the interaction comparison, which matches them by NPC slug and sequence
number (``interaction.{slug}_{NNN}``, schema §3.1) and compares their
InteractionState, so one missing conversation is one difference, not two.
"""

from __future__ import annotations

from dataclasses import dataclass
from operator import attrgetter, itemgetter

from narrative_debugger.models.domain.knowledge import parse_interaction_id
from narrative_debugger.models.domain.types import FactKnowledge
from narrative_debugger.models.timeline.state_view import KnowledgeAtTick


@dataclass(frozen=True, slots=True)
class FactChange:
    """A FactId known in both with a different confidence or state."""

    fact_id: str
    a: FactKnowledge
    b: FactKnowledge

    def to_json(self) -> dict:
        return {"fact_id": self.fact_id, "a": _fact_json(self.a), "b": _fact_json(self.b)}


@dataclass(frozen=True, slots=True)
class FactsDiff:
    """Facts known only in A, only in B, and known in both but differently (FactId order)."""

    only_a: tuple[tuple[str, FactKnowledge], ...] = ()
    only_b: tuple[tuple[str, FactKnowledge], ...] = ()
    changed: tuple[FactChange, ...] = ()

    @property
    def empty(self) -> bool:
        return not (self.only_a or self.only_b or self.changed)

    def to_json(self) -> dict:
        """``{"only_a": [...], "only_b": [...], "changed": [{"fact_id", "a", "b"}]}``."""
        return {
            "only_a": [{"fact_id": f, **_fact_json(k)} for f, k in self.only_a],
            "only_b": [{"fact_id": f, **_fact_json(k)} for f, k in self.only_b],
            "changed": [c.to_json() for c in self.changed],
        }


@dataclass(frozen=True, slots=True)
class InteractionEnd:
    """One interaction's outcome: InteractionState and its started/ended ticks."""

    fact_id: str
    state: str
    started_tick: int
    ended_tick: int | None

    @property
    def tick(self) -> int:
        """Where its outcome shows: the ended tick, else the started tick."""
        return self.ended_tick if self.ended_tick is not None else self.started_tick

    def to_json(self) -> dict:
        return {"fact_id": self.fact_id, "state": self.state, "started_tick": self.started_tick, "ended_tick": self.ended_tick}


@dataclass(frozen=True, slots=True)
class InteractionChange:
    """An interaction (NPC slug, sequence number) whose outcome differs; None where it does not exist."""

    npc: str
    sequence: int
    a: InteractionEnd | None
    b: InteractionEnd | None

    @property
    def tick(self) -> int:
        """Where both outcomes show: the later of the two ends (or starts) that exist."""
        return max(x.tick for x in (self.a, self.b) if x is not None)

    def to_json(self) -> dict:
        return {
            "npc": self.npc,
            "sequence": self.sequence,
            "a": self.a.to_json() if self.a else None,
            "b": self.b.to_json() if self.b else None,
        }


def _fact_json(fact: FactKnowledge) -> dict:
    return {"confidence": fact.confidence.name, "state": fact.state.name, "acquired_tick": fact.acquired_tick}


def _split(known: dict, parsed_ids: dict) -> tuple[dict, dict, dict]:
    """(ordinary facts by FactId, interaction facts and their FactIds by (slug,
    sequence)) of one side, in creation order. ``parsed_ids`` (FactId ->
    ``parse_interaction_id``) is shared by both sides: they mostly hold the same FactIds
    (a what-if at 1M events: 134 000 each), parsed once. No object is made per
    interaction: at 1M events a record each, on both sides, cost the collector a full
    pass (0.5 s) in every what-if. ``known`` is the side's ``FactsAtTick.as_dict()`` (at
    the journal's end, each fact's last version, with no bisection), not in key order:
    only the differences are sorted."""
    facts, interactions, ids = {}, {}, {}
    for fact_id, fact in known.items():
        if fact.interaction is None:
            parsed = None
        else:
            parsed = parsed_ids.get(fact_id, parsed_ids)
            if parsed is parsed_ids:
                parsed = parsed_ids[fact_id] = parse_interaction_id(fact_id)
        if parsed is None:
            facts[fact_id] = fact
        elif parsed not in ids or ids[parsed] < fact_id:  # two FactIds of one (slug, sequence): the last in key order
            interactions[parsed] = fact
            ids[parsed] = fact_id
    return facts, interactions, ids


def _end(key: tuple, interactions: dict, ids: dict) -> InteractionEnd | None:
    fact = interactions.get(key)
    if fact is None:
        return None
    meta = fact.interaction
    return InteractionEnd(ids[key], meta.interaction_state.name, meta.started_tick, meta.ended_tick)


def compare_knowledge(a: KnowledgeAtTick, b: KnowledgeAtTick) -> tuple[FactsDiff, tuple[InteractionChange, ...]]:
    """Facts and interaction outcomes of two knowledge graphs (each at its compared tick).

    Returns:
        (FactsDiff, interaction changes ordered by NPC slug then sequence number).
    """
    known_a, known_b = a.facts.as_dict(), b.facts.as_dict()
    if known_a == known_b:  # in C: a what-if that changes no fact (most of them) is done here
        return FactsDiff(), ()
    parsed_ids: dict = {}
    facts_a, inter_a, ids_a = _split(known_a, parsed_ids)
    facts_b, inter_b, ids_b = _split(known_b, parsed_ids)
    first = itemgetter(0)
    only_a = tuple(sorted(((f, k) for f, k in facts_a.items() if f not in facts_b), key=first))
    only_b = tuple(sorted(((f, k) for f, k in facts_b.items() if f not in facts_a), key=first))
    changed = []
    for f, k in facts_a.items():
        other = facts_b.get(f)
        if other is not None and other is not k and (k.confidence != other.confidence or k.state != other.state):
            changed.append(FactChange(f, k, other))
    changed = tuple(sorted(changed, key=attrgetter("fact_id")))
    # Most interactions end alike on both sides (after a what-if's resume, the very same
    # objects): only the keys that differ are sorted, not the 67 000 of a 1M-event save.
    differ = [key for key, fa in inter_a.items() if (fb := inter_b.get(key)) is not fa
              and (fb is None or fa.interaction.interaction_state is not fb.interaction.interaction_state)]
    differ += [key for key in inter_b.keys() - inter_a.keys()]
    inter = [InteractionChange(key[0], key[1], _end(key, inter_a, ids_a), _end(key, inter_b, ids_b)) for key in sorted(differ)]
    return FactsDiff(only_a, only_b, changed), tuple(inter)

"""What the player knows in A and in B: facts and interaction outcomes (issue 13).

Facts are compared by FactId (confidence and KnowledgeState); interaction facts are
left to the interaction comparison, which matches them by NPC slug and sequence
number (``interaction.{slug}_{NNN}``, schema §3.1) and compares their
InteractionState, so one missing conversation is one difference, not two.
"""

from __future__ import annotations

from dataclasses import dataclass

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


def _split(knowledge: KnowledgeAtTick) -> tuple[dict, dict]:
    """(ordinary facts by FactId, interactions by (slug, sequence)) of one side."""
    facts, interactions = {}, {}
    for fact_id, fact in knowledge.facts.items():
        meta = fact.interaction
        parsed = parse_interaction_id(fact_id) if meta is not None else None
        if parsed is None:
            facts[fact_id] = fact
        else:
            interactions[parsed] = InteractionEnd(fact_id, meta.interaction_state.name, meta.started_tick, meta.ended_tick)
    return facts, interactions


def compare_knowledge(a: KnowledgeAtTick, b: KnowledgeAtTick) -> tuple[FactsDiff, tuple[InteractionChange, ...]]:
    """Facts and interaction outcomes of two knowledge graphs (each at its compared tick).

    Returns:
        (FactsDiff, interaction changes ordered by NPC slug then sequence number).
    """
    facts_a, inter_a = _split(a)
    facts_b, inter_b = _split(b)
    only_a = tuple((f, k) for f, k in facts_a.items() if f not in facts_b)
    only_b = tuple((f, k) for f, k in facts_b.items() if f not in facts_a)
    changed = tuple(
        FactChange(f, k, facts_b[f])
        for f, k in facts_a.items()
        if f in facts_b and (k.confidence != facts_b[f].confidence or k.state != facts_b[f].state)
    )
    inter = []
    for key in sorted(inter_a.keys() | inter_b.keys()):
        ea, eb = inter_a.get(key), inter_b.get(key)
        if ea is None or eb is None or ea.state != eb.state:
            inter.append(InteractionChange(key[0], key[1], ea, eb))
    return FactsDiff(only_a, only_b, changed), tuple(inter)

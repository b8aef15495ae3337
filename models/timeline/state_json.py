"""The ``state`` command's document: the replayed state at a tick as plain JSON data."""

from __future__ import annotations

from narrative_debugger.models.content.monologue import evaluate
from narrative_debugger.models.playthrough import Playthrough


def state_json(play: Playthrough, tick: int) -> dict:
    """The ``state`` contract: tick, npcs by slug, facts by FactId, monologue eligibility.

    Enum names are read as ``member._name_``, the attribute ``member.name`` returns
    through a descriptor, a cost paid for every fact of a large save."""
    state = play.state_at(tick)
    knowledge = state.knowledge
    npcs = {}
    for sid, npc in state.npcs.items():
        interactions = []
        for fact_id, meta in knowledge.interaction_facts_for(npc.slug):
            interactions.append(
                {
                    "fact_id": fact_id,
                    "state": meta.interaction_state._name_,
                    "started_tick": meta.started_tick,
                    "ended_tick": meta.ended_tick,
                    "topics": list(meta.topics),
                    "confrontation": meta.confrontation,
                }
            )
        interactions.sort(key=lambda x: (x["started_tick"], x["fact_id"]))
        npcs[npc.slug] = {
            "stable_id": sid,
            "score": npc.relationship.score,
            "level": npc.level.display_name,
            "stress": npc.tolerance.current_stress,
            "threshold": npc.tolerance.threshold,
            "walk_aways": npc.walk_aways,
            "interactions": interactions,
        }
    facts = {
        fact_id: {
            "confidence": fact.confidence._name_,
            "source": fact.source._name_,
            "state": fact.state._name_,
            "acquired_tick": fact.acquired_tick,
        }
        for fact_id, fact in knowledge.facts.items()
    }
    monologues = {}
    for line_id, line in play.content.monologues.items():
        result = evaluate(line, knowledge)
        monologues[line_id] = {"eligible": result.eligible, "failing": list(result.failing)}
    return {"tick": tick, "npcs": npcs, "facts": facts, "monologues": monologues}

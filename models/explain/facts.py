"""Why a fact or an entity is known as it is: the FactLearned / FactUpdated /
EntityObserved chain, and for interaction facts the path through the state machine
of schema §3.2 with the event behind each move (schema §7.2)."""

from __future__ import annotations

from bisect import bisect_right

from narrative_debugger.models.explain.chain import Explanation, Folded, Step, fold_list
from narrative_debugger.models.playthrough import Playthrough

RULE_LEARNED = "fact learned (schema §3.4, D-041)"
RULE_UPDATED = "fact updated (schema §3.4, D-041)"
RULE_MOVE = "interaction move (schema §3.2, §7.2)"
RULE_OBSERVED = "entity observed (save-format §5)"


def fact_json(fact) -> dict | None:
    """A FactKnowledge as the ``state`` command writes it, plus the interaction state."""
    if fact is None:
        return None
    out = {"confidence": fact.confidence.name, "state": fact.state.name, "source": fact.source.name, "acquired_tick": fact.acquired_tick}
    meta = fact.interaction
    if meta is not None:
        out["interaction_state"] = meta.interaction_state.name
        out["ended_tick"] = meta.ended_tick
        out["confrontation"] = meta.confrontation
    return out


def _changes(before: dict | None, after: dict) -> str:
    if before is None:
        return ", ".join(f"{k} {v}" for k, v in after.items() if v is not None)
    return ", ".join(f"{k} {before.get(k)} → {v}" for k, v in after.items() if before.get(k) != v) or "no field changed"


def explain_fact(play: Playthrough, fact_id: str, tick: int, limit: int, target: str) -> Explanation:
    """Every version of the fact up to ``tick`` (one per journal entry that set it)."""
    index = play.index
    versions = index.facts[fact_id]
    position = index.position_for_tick(tick)
    n = bisect_right(versions.positions, position)
    moves = {r.index: r for r in index.moves_of_fact(fact_id)}
    data = play.save.journal.data
    cut = max(0, n - max(0, limit))
    by_rule: dict[str, tuple[int, float]] = {}
    for k in range(cut):  # folded: only their rules are counted
        i = versions.positions[k] - 1
        rule = RULE_MOVE if i in moves else RULE_LEARNED if index.kinds[i] == "FactLearned" else RULE_UPDATED
        by_rule[rule] = (by_rule.get(rule, (0, 0))[0] + 1, 0)
    steps = []
    prev = fact_json(versions.values[cut - 1]) if cut else None
    for k in range(cut, n):
        i = versions.positions[k] - 1
        kind = index.kinds[i]
        after = fact_json(versions.values[k])
        move = moves.get(i)
        if move is not None:
            rule = RULE_MOVE
            src = move.source.name if move.source else "(start)"
            detail = f"{src} → {move.target.name}" + ("" if move.legal else " (forbidden by schema §3.2: I001)") + f"; {_changes(prev, after)}"
        elif kind == "FactLearned":
            rule = RULE_LEARNED
            d = data[i] or {}
            detail = f"learned from {getattr(d.get('source'), 'name', d.get('source'))}: {_changes(prev, after)}"
        else:
            rule = RULE_UPDATED
            detail = _changes(prev, after)
        steps.append(Step(i, index.ticks[i], kind, rule, prev, after, detail))
        prev = after
    value = prev
    shown, folded = steps, (Folded(cut, by_rule) if cut else None)
    if value is None:
        first = index.tick_at_position(versions.positions[0])
        summary = f"{fact_id} is not known at tick {tick}; the player first learns it at tick {first}."
    else:
        last = steps[-1]
        first_i = versions.positions[0] - 1
        first_tick = index.ticks[first_i]
        # acquired_tick is what the fact holds now (as ``state`` shows it): a FactLearned
        # that replaced the fact (K002) set it anew, after the entry that first made it.
        acquired = value.get("acquired_tick")
        origin = (f"acquired at tick {first_tick} by {index.kinds[first_i]}" if acquired in (None, first_tick)
                  else f"acquired_tick {acquired}, first known at tick {first_tick} by {index.kinds[first_i]}")
        summary = (
            f"{fact_id} is {value['confidence']}, {value['state']}, from {value['source']} at tick {tick}"
            + (f" ({value['interaction_state']})" if "interaction_state" in value else "")
            + f": {origin}, {n - 1} change(s) since, the last by {last.event} at tick {last.tick}."
        )
    exp = Explanation(target, tick, value, summary, shown, folded, False, _npc_of(play, fact_id, versions))
    path = index.fact_transitions(fact_id, position)
    if path:
        exp.extra["path"] = [
            {"journal_index": r.index, "tick": r.tick, "event": index.kinds[r.index], "from": r.source.name if r.source else None, "to": r.target.name, "legal": r.legal}
            for r in path
        ]
    return exp


def _npc_of(play: Playthrough, fact_id: str, versions) -> int | None:
    for value in versions.values:
        if value.interaction is not None:
            return value.interaction.target_entity
    return None


def explain_entity(play: Playthrough, entity: int, tick: int, limit: int, target: str) -> Explanation:
    """Every EntityObserved of ``entity`` up to ``tick`` (each replaces the entry)."""
    index = play.index
    versions = index.entities[entity]
    position = index.position_for_tick(tick)
    n = bisect_right(versions.positions, position)
    steps = []
    prev = None
    for k in range(n):
        i = versions.positions[k] - 1
        v = versions.values[k]
        after = {"confidence": v.confidence.name, "source": v.source.name, "state": v.state.name, "relationship": v.relationship.name, "last_seen_tick": v.last_seen_tick}
        steps.append(Step(i, index.ticks[i], index.kinds[i], RULE_OBSERVED, prev, after, _changes(prev, after)))
        prev = after
    shown, folded = fold_list(steps, limit, None)
    name = play.npc_name(entity)
    if prev is None:
        summary = f"The player has not observed {name} by tick {tick}."
    else:
        summary = f"The player knows {name} at {prev['confidence']} ({prev['relationship']}), last seen at tick {prev['last_seen_tick']}: {len(steps)} observation(s)."
    return Explanation(target, tick, prev, summary, shown, folded, False, entity if entity in play.save.npcs else None)

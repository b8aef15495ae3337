"""The kinds of journal event the views mark and the tick bar steps between.

Each kind of ``EVENT_KINDS`` names a set of journal variants (save-format §5). The
kinds of ``DERIVED_KINDS`` are moments read from the replayed state instead: a stress
change that crosses the NPC's threshold either way (schema §8.1 ToleranceThreshold:
over means ``current_stress > threshold``), a score change that moves the NPC into
another relationship level (relationship seed, bounds 20/40/60/80 inclusive), and
the first InteractionStarted with each NPC (its first meeting, schema §5.3).
"""

from __future__ import annotations

from bisect import bisect_left

import numpy as np
from narrative_debugger.models.gil_slices import C_PASS_ITEMS

#: Journal variants shown as markers and offered by "next event of this kind".
EVENT_KINDS = {
    "walk-away": {"InteractionWalkedAway", "InteractionConflictAbandoned"},
    "confrontation": {"InteractionConfrontation"},
    "penalty": {"WalkAwayPenalty"},
    "interaction": {"InteractionStarted"},
    "completed": {"InteractionCompleted"},
    "fact": {"FactLearned", "FactUpdated"},
    "relationship": {"RelationshipInteraction"},
    "monologue": {"MonologueFired"},
    "dialogue": {"DialogueLine"},
}

#: Kinds read from the replayed state: name -> words for menus.
DERIVED_KINDS = {
    "threshold": "Stress crosses threshold",
    "level": "Level changes",
    "first-meeting": "First meeting",
}

_LEVEL_BOUNDS = (20.0, 40.0, 60.0, 80.0)  # inclusive upper bounds (relationship seed)


def _npc_changes(index, value) -> list[int]:
    """Journal indices where ``value(NpcState)`` differs from the NPC's previous version."""
    out: list[int] = []
    for versions in index.npcs.values():
        values = [value(v) for v in versions.values]
        positions = versions.positions
        out.extend(positions[k] - 1 for k in range(1, len(values)) if values[k] != values[k - 1])
    out.sort()
    return out


def event_indices(index, kind: str) -> list[int]:
    """Journal indices of the entries of ``kind`` (a key of EVENT_KINDS or DERIVED_KINDS), in order.

    Derived kinds cost one pass over the NPCs' versions; results are kept on the index.

    Raises:
        KeyError: for an unknown kind.
    """
    key = ("event-indices", kind)
    cached = index.derived.get(key)
    if cached is not None:
        return cached
    if kind in EVENT_KINDS:
        buckets: dict = {}
        for i, k in enumerate(index.kinds):
            buckets.setdefault(k, []).append(i)
        for name, variants in EVENT_KINDS.items():
            found = sorted(i for v in variants for i in buckets.get(v, ()))
            index.derived[("event-indices", name)] = found
        return index.derived[key]
    if kind == "threshold":
        out = _npc_changes(index, lambda n: n.tolerance.current_stress > n.tolerance.threshold)
    elif kind == "level":
        out = _npc_changes(index, lambda n: bisect_left(_LEVEL_BOUNDS, n.relationship.score))
    elif kind == "first-meeting":
        out = sorted(created[0] - 1 for created in index.interactions_created.values() if created)
    else:
        raise KeyError(kind)
    index.derived[key] = out
    return out


#: Entries handled per slice by ``distinct_ticks``: each slice is one short C call, so a
#: worker thread running it lets the GUI thread take the GIL between slices.
_SLICE = C_PASS_ITEMS


def tick_array(ticks) -> np.ndarray:
    """``np.asarray(ticks, dtype=np.uint64)`` of a list of Python int ticks, converted
    ``_SLICE`` at a time: one conversion of a million ints holds the GIL for 50-140 ms."""
    if isinstance(ticks, np.ndarray) or len(ticks) <= _SLICE:
        return np.asarray(ticks, dtype=np.uint64)
    return np.concatenate([np.asarray(ticks[start : start + _SLICE], dtype=np.uint64) for start in range(0, len(ticks), _SLICE)])


def distinct_ticks(ticks) -> list[int]:
    """The distinct ticks of the index's non-decreasing ``ticks`` (the running maximum
    of the journal's ticks), in order: ``sorted(set(ticks))`` without one sort and one
    set of a million ticks, each of which held the GIL for about 100 ms."""
    out: list[int] = []
    for start in range(0, len(ticks), _SLICE):
        piece = dict.fromkeys(ticks[start : start + _SLICE])  # keeps order, drops repeats
        if out and piece and next(iter(piece)) == out[-1]:
            del piece[out[-1]]
        out.extend(piece)
    return out

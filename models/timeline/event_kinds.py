"""The kinds of journal event the views mark and the tick bar steps between.

Each kind of ``EVENT_KINDS`` names a set of journal variants (save-format §5). The
kinds of ``DERIVED_KINDS`` are moments read from the replayed state instead: a stress
change that crosses the NPC's threshold either way (schema §8.1 ToleranceThreshold:
over means ``current_stress > threshold``), a score change that moves the NPC into
another relationship level (relationship seed, bounds 20/40/60/80 inclusive), and
the first InteractionStarted with each NPC (its first meeting, schema §5.3).
"""

from __future__ import annotations


import numpy as np
from narrative_debugger.models.domain.types import LEVEL_BOUNDS
from narrative_debugger.models.memo import Memo

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

#: The levels' inclusive upper bounds (relationship seed; ``domain.types.LEVEL_BOUNDS``).
_LEVEL_BOUNDS = tuple(bound for bound, _ in LEVEL_BOUNDS)

#: Kind (a key of EVENT_KINDS or DERIVED_KINDS) -> the journal indices of its entries,
#: ascending (``event_indices``).
EVENT_INDICES: Memo[str, list[int]] = Memo("event indices", "kind -> ascending journal indices")
#: Journal kind (a key of EVENT_KINDS) -> the same indices as an int64 array, made
#: with them (``event_indices``): the session picks their ticks in numpy.
EVENT_POSITIONS: Memo[str, np.ndarray] = Memo("event positions", "journal kind -> int64 array of journal indices")


def _npc_changes(index) -> tuple[list[int], list[int]]:
    """Journal indices where an NPC's stress crosses its threshold (either way), and
    where its score enters another relationship level: one pass over every NPC's
    versions for both (a second pass would double the loader's cost here)."""
    crossings: list[int] = []
    levels: list[int] = []
    bounds = np.asarray(_LEVEL_BOUNDS)
    for versions in index.npcs.values():
        states = versions.values
        if len(states) < 2:
            continue
        over = np.fromiter((v.tolerance.current_stress > v.tolerance.threshold for v in states), dtype=bool, count=len(states))
        scores = np.fromiter((v.relationship.score for v in states), dtype=np.float64, count=len(states))
        level = np.where(np.isnan(scores), 0, np.searchsorted(bounds, scores, side="left"))  # NaN: below every bound, as bisect has it
        at = np.asarray(versions.positions, dtype=np.int64) - 1
        crossings.extend(at[1:][over[1:] != over[:-1]].tolist())
        levels.extend(at[1:][level[1:] != level[:-1]].tolist())
    crossings.sort()
    levels.sort()
    return crossings, levels


def event_indices(index, kind: str) -> list[int]:
    """Journal indices of the entries of ``kind`` (a key of EVENT_KINDS or DERIVED_KINDS), in order.

    Derived kinds cost one pass over the NPCs' versions; results are kept on the index
    (``EVENT_INDICES``; journal kinds also as int64 arrays, ``EVENT_POSITIONS``).

    Raises:
        KeyError: for an unknown kind.
    """
    cached = EVENT_INDICES.get(index, kind)
    if cached is not None:
        return cached
    if kind in EVENT_KINDS:
        buckets = variant_positions(index.kinds)
        for name, variants in EVENT_KINDS.items():
            parts = [buckets[v] for v in sorted(variants) if v in buckets]
            found = np.sort(np.concatenate(parts)) if len(parts) > 1 else parts[0] if parts else np.empty(0, np.int64)
            EVENT_POSITIONS.publish(index, name, found)  # the same, as an int64 array
            EVENT_INDICES.publish(index, name, int_list(found))
        return EVENT_INDICES.get(index, kind)
    if kind in ("threshold", "level"):
        crossings, levels = _npc_changes(index)
        EVENT_INDICES.publish(index, "threshold", crossings)
        EVENT_INDICES.publish(index, "level", levels)
        return EVENT_INDICES.get(index, kind)
    if kind == "first-meeting":
        out = sorted(created[0] - 1 for created in index.interactions_created.values() if created)
    else:
        raise KeyError(kind)
    return EVENT_INDICES.publish(index, kind, out)


def tick_array(ticks) -> np.ndarray:
    """``np.asarray(ticks, dtype=np.uint64)`` of Python int ticks (or a column of them)."""
    return np.asarray(ticks, dtype=np.uint64)


def int_list(values: np.ndarray) -> list[int]:
    """``values.tolist()``: Python ints, exact for u64."""
    return values.tolist()


def picked(values, positions: np.ndarray) -> list:
    """``[values[i] for i in positions]``: the list holds the very objects of ``values``
    (a list of Python int ticks), where ``int_list`` of the same ticks as an array made
    a new int object for each (~32 bytes an entry: about a third of the session's
    stepping data at 1 000 000 entries). ``values`` as an array gives
    ``int_list(values[positions])``."""
    if isinstance(values, np.ndarray):
        return int_list(values[positions])
    return list(map(values.__getitem__, positions.tolist()))


def variant_positions(kinds) -> dict[object, np.ndarray]:
    """Journal variant (or None) -> the ascending indices of its entries (int64 array).

    A Python loop that appends each of a million indices to its variant's list would
    be most of the session's ``prepare``. Here the variants are numbered by C-level
    passes (``dict.fromkeys``, a ``map`` into ``np.fromiter``) and one stable sort of the
    small codes groups them.
    """
    code_of = {name: k for k, name in enumerate(dict.fromkeys(kinds))}
    if not code_of:
        return {}
    dtype = np.int16 if len(code_of) < 1 << 15 else np.int64
    codes = np.fromiter(map(code_of.__getitem__, kinds), dtype=dtype, count=len(kinds))
    order = np.argsort(codes, kind="stable")  # stable: each variant's indices stay ascending
    ends = np.cumsum(np.bincount(codes, minlength=len(code_of)))
    return {name: order[(ends[k - 1] if k else 0) : ends[k]] for name, k in code_of.items()}


def distinct_ticks(ticks, array: np.ndarray | None = None) -> list[int]:
    """The distinct ticks of the index's non-decreasing ``ticks`` (the running maximum
    of the journal's ticks), in order: ``sorted(set(ticks))`` without a sort.
    ``array``: ``tick_array(ticks)`` when the caller has it (then it is much cheaper)."""
    if array is not None and len(array):
        keep = np.empty(len(array), dtype=bool)
        keep[0] = True
        np.not_equal(array[1:], array[:-1], out=keep[1:])
        return picked(ticks, np.flatnonzero(keep)) if isinstance(ticks, list) else int_list(array[keep])
    return list(dict.fromkeys(ticks))  # keeps order, drops repeats

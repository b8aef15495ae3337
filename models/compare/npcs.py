"""Each NPC in A and in B: its state at the end and where the score curves part.

NPCs are matched by content slug (StableIds may differ between saves). Ticks are
aligned by value: the score curve of an NPC is a step function of the tick, the
state after every entry with tick <= T (save-format §5), so in-tick intermediate
values never count.
"""

from __future__ import annotations

from bisect import bisect_right
from dataclasses import dataclass
from operator import attrgetter

import numpy as np

from narrative_debugger.models.domain.types import NpcState, RelationshipLevel
from narrative_debugger.models.timeline.index import TimelineIndex

#: Score points within which two scores are the same (save-format §1: f32, 1e-4).
SCORE_TOLERANCE = 1e-4
_SCORE = attrgetter("relationship.score")


@dataclass(frozen=True, slots=True)
class NpcEnd:
    """One NPC at the compared tick: score points, RelationshipLevel, stress, walk-aways."""

    score: float
    level: RelationshipLevel
    stress: int
    walk_aways: int

    @classmethod
    def of(cls, npc: NpcState) -> NpcEnd:
        return cls(npc.relationship.score, npc.level, npc.tolerance.current_stress, npc.walk_aways)

    def same_as(self, other: NpcEnd) -> bool:
        """Equal within the score tolerance."""
        return (
            abs(self.score - other.score) <= SCORE_TOLERANCE
            and self.level is other.level
            and self.stress == other.stress
            and self.walk_aways == other.walk_aways
        )

    def to_json(self) -> dict:
        """``{score, level, stress, walk_aways}``; the level by display name, as ``state`` prints it.
        The score to 12 significant digits: a what-if's replay sums deltas in f64 and
        wrote 21.781000000000002 for a recorded 21.781 (trial 49), far below the f32
        a save holds (save-format §1)."""
        return {"score": float(f"{self.score:.12g}"), "level": self.level.display_name, "stress": self.stress, "walk_aways": self.walk_aways}


@dataclass(frozen=True, slots=True)
class NpcDiff:
    """One NPC (by slug) in A and in B.

    Attributes:
        slug: the content slug.
        a, b: the NPC at the compared tick in each (None when that save has no such NPC).
        score_first_differs_tick: the first tick where the two score curves differ by
            more than 1e-4 score points (None when they never do).
    """

    slug: str
    a: NpcEnd | None
    b: NpcEnd | None
    score_first_differs_tick: int | None

    @property
    def differs(self) -> bool:
        if self.a is None or self.b is None:
            return True
        return not self.a.same_as(self.b) or self.score_first_differs_tick is not None

    def to_json(self) -> dict:
        return {
            "a": self.a.to_json() if self.a else None,
            "b": self.b.to_json() if self.b else None,
            "score_first_differs_tick": self.score_first_differs_tick,
        }


def score_steps(index: TimelineIndex, npc: int, start: int, limit: int) -> tuple[np.ndarray, np.ndarray]:
    """The NPC's score curve from journal position ``start`` to ``limit``, one step per tick.

    Returns:
        (ticks, scores): uint64 game ticks, increasing, and float64 score points;
        ``scores[k]`` holds from ``ticks[k]`` until the next step. The first step is
        the value at ``start`` (tick 0 when ``start`` is 0). Each tick keeps its last
        value, the state after every entry of that tick (a tick whose entries leave
        the score as it was is a step of the same value).
    """
    versions = index.npcs[npc]
    positions, values = versions.positions, versions.values
    k = max(0, bisect_right(positions, start) - 1)
    end = max(k + 1, bisect_right(positions, limit))
    # As columns: a what-if at 1M events walks ~100 000 versions an NPC, on both sides.
    ticks = np.empty(end - k, dtype=np.uint64)
    ticks[0] = index.ticks[start - 1] if start > 0 else 0
    ticks[1:] = index.version_ticks(versions, k + 1, end)
    column = index.score_column(npc)
    if column is not None:  # kept by the replay, in step with the versions
        scores = np.array(column[k:end], dtype=np.float64)
    else:
        scores = np.fromiter(map(_SCORE, values[k:end]), dtype=np.float64, count=end - k)
    last = np.append(ticks[1:] != ticks[:-1], True)  # the last version of each tick
    return ticks[last], scores[last]


def first_score_difference(a: tuple[np.ndarray, np.ndarray], b: tuple[np.ndarray, np.ndarray]) -> int | None:
    """The first tick where two step curves differ by more than ``SCORE_TOLERANCE``
    score points, at every step of either; None when they never do. Where the first
    steps differ already, the later of their two ticks.

    Args:
        a, b: ``(ticks, scores)`` as ``score_steps`` gives them.
    """
    ta, sa = a
    tb, sb = b
    if abs(sa[0] - sb[0]) > SCORE_TOLERANCE:
        return max(int(ta[0]), int(tb[0]))
    steps = np.union1d(ta[1:], tb[1:])
    ia = np.maximum(np.searchsorted(ta, steps, side="right") - 1, 0)
    ib = np.maximum(np.searchsorted(tb, steps, side="right") - 1, 0)
    apart = np.abs(sa[ia] - sb[ib]) > SCORE_TOLERANCE
    if not apart.any():
        return None
    m = int(apart.argmax())
    return max(int(ta[ia[m]]), int(tb[ib[m]]))


def score_meets_again(a: tuple[np.ndarray, np.ndarray], b: tuple[np.ndarray, np.ndarray]) -> int | None:
    """The tick from which two step curves that differed agree again (within
    ``SCORE_TOLERANCE``) to their end; None when they still differ at the end, or never
    did.

    Args:
        a, b: ``(ticks, scores)`` as ``score_steps`` gives them.
    """
    ta, sa = a
    tb, sb = b
    steps = np.union1d(ta, tb)
    ia = np.maximum(np.searchsorted(ta, steps, side="right") - 1, 0)
    ib = np.maximum(np.searchsorted(tb, steps, side="right") - 1, 0)
    apart = np.abs(sa[ia] - sb[ib]) > SCORE_TOLERANCE
    if not apart.any() or apart[-1]:
        return None
    last = len(apart) - 1 - int(apart[::-1].argmax())
    return int(steps[last + 1])


def compare_npc(slug: str, index_a: TimelineIndex | None, sid_a: int | None, pos_a: int,
                index_b: TimelineIndex | None, sid_b: int | None, pos_b: int, parted_tick: int | None) -> NpcDiff:
    """One NPC in A (at journal position ``pos_a``) and in B (at ``pos_b``).

    Args:
        parted_tick: the tick of the first journal entry that differs (None when the
            compared journals are equal). Before it both curves are the same, so the
            walk starts with the state at the tick before it.
    """
    end_a = NpcEnd.of(index_a.npcs[sid_a].at(pos_a)) if sid_a is not None else None
    end_b = NpcEnd.of(index_b.npcs[sid_b].at(pos_b)) if sid_b is not None else None
    first = None
    if end_a is not None and end_b is not None and parted_tick is not None:
        start_a = min(index_a.position_for_tick(parted_tick - 1), pos_a) if parted_tick > 0 else 0
        start_b = min(index_b.position_for_tick(parted_tick - 1), pos_b) if parted_tick > 0 else 0
        first = first_score_difference(
            score_steps(index_a, sid_a, start_a, pos_a),
            score_steps(index_b, sid_b, start_b, pos_b),
        )
    return NpcDiff(slug, end_a, end_b, first)

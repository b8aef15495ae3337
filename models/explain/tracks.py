"""One NPC value over the journal: the events that changed it, with per-rule prefix sums.

A ``Track`` lists, for one NPC and one attribute (score, stress, walk-aways, the
interaction counters, shared references), every journal entry of the kinds that set
it, in journal order, with the rule each applied. It is read from the NPC's versions
in the timeline index (each version is one journal entry) the first time it is asked
for, then kept: any later question is two bisections plus the steps shown, so a
chain of a hundred thousand deltas folds in O(log N) (issue 11: no replay from zero).
"""

from __future__ import annotations

from bisect import bisect_right
from dataclasses import dataclass, field
from typing import Callable

from narrative_debugger.models.domain.types import NpcState, RelationshipLevel
from narrative_debugger.models.timeline.index import TimelineIndex
from narrative_debugger.models.memo import Memo

RULE_DELTA = "delta formula (relationship seed, Score Calculation)"
RULE_PENALTY = "walk-away penalty (schema §8.1, D-064)"
RULE_WALK_AWAY = "walk-away (schema §7.2, D-064)"
RULE_COUNTER = "interaction counters (relationship seed, Interaction Tracking)"
RULE_REF_ADDED = "reference added (relationship seed, Shared References)"
RULE_REF_DROPPED = "oldest dropped past 10 (relationship seed, Shared References)"
RULE_REF_DUPLICATE = "duplicate ignored (relationship seed, Shared References)"
RULE_LEVEL = "level band (relationship seed, Relationship Levels)"


def stress_rule(cause: str) -> str:
    """The rule name of a stress change by its cause (``walk_away``, ``argument``, ...)."""
    return f"stress {cause} (schema §8.1, ToleranceThreshold)"


def _score(n: NpcState) -> float:
    return n.relationship.score


def _stress(n: NpcState) -> int:
    return n.tolerance.current_stress


@dataclass(frozen=True)
class Attribute:
    """How one NPC attribute is read and which journal variants set it.

    Attributes:
        name: the target suffix (``score``, ``stress``...).
        label: words for sentences.
        get: NpcState -> value.
        kinds: journal variants that set it.
        numeric: True for numbers (chains add up; the waterfall draws them).
        changed_only: count only entries that changed the value (positive/negative counters).
    """

    name: str
    label: str
    get: Callable
    kinds: frozenset
    numeric: bool = True
    changed_only: bool = False


ATTRIBUTES: dict[str, Attribute] = {
    a.name: a
    for a in (
        Attribute("score", "relationship score", _score, frozenset({"RelationshipInteraction", "WalkAwayPenalty"})),
        Attribute("stress", "stress", _stress, frozenset({"StressChanged"})),
        Attribute("walk_aways", "walk-aways", lambda n: n.walk_aways, frozenset({"InteractionWalkedAway", "InteractionConflictAbandoned"})),
        Attribute("total_interactions", "interactions", lambda n: n.relationship.total_interactions, frozenset({"RelationshipInteraction"})),
        Attribute(
            "positive_interactions", "positive interactions", lambda n: n.relationship.positive_interactions, frozenset({"RelationshipInteraction"}), changed_only=True
        ),
        Attribute(
            "negative_interactions", "negative interactions", lambda n: n.relationship.negative_interactions, frozenset({"RelationshipInteraction"}), changed_only=True
        ),
        Attribute("shared_references", "shared references", lambda n: n.relationship.shared_references, frozenset({"SharedReferenceAdded"}), numeric=False),
    )
}
#: Every NPC target suffix, in the order ``why`` lists them (``level`` reads the score track).
NPC_ATTRIBUTES = ("score", "level", "stress", "walk_aways", "total_interactions", "positive_interactions", "negative_interactions", "shared_references")


@dataclass
class Track:
    """The events of one attribute of one NPC, oldest first.

    Attributes:
        positions: journal position of each event (journal index + 1).
        versions: index of the NPC version each event produced (its before is the one below).
        rules: rule of each event.
        cum: rule -> prefix sums of after − before (``cum[rule][k]`` over events 0..k-1).
        cnt: rule -> prefix counts.
        crossings: ordinals of the events that crossed a boundary (stress: the
            threshold, either way; score: a level bound, either way).
    """

    positions: list[int] = field(default_factory=list)
    versions: list[int] = field(default_factory=list)
    rules: list[str] = field(default_factory=list)
    cum: dict[str, list[float]] = field(default_factory=dict)
    cnt: dict[str, list[int]] = field(default_factory=dict)
    crossings: list[int] = field(default_factory=list)

    def count_at(self, position: int) -> int:
        """Events applied at journal ``position``: O(log N)."""
        return bisect_right(self.positions, position)

    def folded(self, n: int) -> dict[str, tuple[int, float]]:
        """Per rule (count, Σ after − before) of the first ``n`` events (rules never seen left out): O(rules)."""
        out = {}
        for rule, counts in self.cnt.items():
            if counts[n]:
                out[rule] = (counts[n], self.cum[rule][n])
        return out


def _rule_of(attr: Attribute, kind: str, data: dict | None, before, after) -> str:
    if attr.name == "score":
        return RULE_DELTA if kind == "RelationshipInteraction" else RULE_PENALTY
    if attr.name == "stress":
        return stress_rule((data or {}).get("cause", "?"))
    if attr.name == "walk_aways":
        return RULE_WALK_AWAY
    if attr.name == "shared_references":
        if before == after:
            return RULE_REF_DUPLICATE
        kind_name = (data or {}).get("kind")
        b = dict(before).get(kind_name, ())
        a = dict(after).get(kind_name, ())
        return RULE_REF_DROPPED if len(a) == len(b) else RULE_REF_ADDED
    return RULE_COUNTER


def _crossed(attr: Attribute, npc: NpcState, before, after, level_for) -> bool:
    if attr.name == "stress":
        threshold = npc.tolerance.threshold
        return (before > threshold) != (after > threshold)
    if attr.name == "score":
        return level_for(before) is not level_for(after)
    return False


def build_track(index: TimelineIndex, journal_data: list, npc: int, attr: Attribute, level_for=RelationshipLevel.for_score) -> Track:
    """Read one attribute's events from the NPC's versions: O(versions), done once.
    ``level_for`` (score points -> level) marks the score's level crossings: the
    playthrough's ``Tuning.level_for`` (issue 38), the seed's bounds by default."""
    track = Track()
    versions = index.npcs.get(npc)
    if versions is None:
        return track
    kinds = index.kinds
    get = attr.get
    positions, values = versions.positions, versions.values
    sums: dict[str, float] = {}
    counts: dict[str, int] = {}
    n = 0
    for k in range(1, len(values)):
        pos = positions[k]
        kind = kinds[pos - 1]
        if kind not in attr.kinds:
            continue
        before, after = get(values[k - 1]), get(values[k])
        if attr.changed_only and before == after:
            continue
        data = journal_data[pos - 1] if attr.name in ("stress", "shared_references") else None
        rule = _rule_of(attr, kind, data, before, after)
        if rule not in track.cum:
            track.cum[rule] = [0] * (n + 1)
            track.cnt[rule] = [0] * (n + 1)
        if _crossed(attr, values[k], before, after, level_for):
            track.crossings.append(n)
        track.positions.append(pos)
        track.versions.append(k)
        track.rules.append(rule)
        sums[rule] = sums.get(rule, 0) + ((after - before) if attr.numeric else 0)
        counts[rule] = counts.get(rule, 0) + 1
        n += 1
        for r in track.cum:
            track.cum[r].append(sums.get(r, 0))
            track.cnt[r].append(counts.get(r, 0))
    return track


#: (StableId, attribute name) -> the NPC's ``Track`` of that attribute (``track_for``).
TRACKS: Memo[tuple[int, str], Track] = Memo("why-chain tracks", "(StableId, attribute) -> Track")


def track_for(index: TimelineIndex, journal_data: list, npc: int, attr_name: str, level_for=RelationshipLevel.for_score) -> Track:
    """The cached Track of ``attr_name`` for ``npc`` (built on first use; ``level_for``
    as ``build_track``'s, the same for every call on one index)."""
    return TRACKS.get_or_make(index, (npc, attr_name), lambda: build_track(index, journal_data, npc, ATTRIBUTES[attr_name], level_for))

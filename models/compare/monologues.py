"""Monologue lines in A and in B: lines fired in one only, and eligibility (schema §6).

For one save under two content folders the journal is the same, so eligibility can
be followed over the whole timeline: a line's eligibility changes only where one of
its inputs changes (a prerequisite fact, or the interaction summary of the target
NPC), so each line is evaluated at those ticks only, never at every tick.
"""

from __future__ import annotations

from dataclasses import dataclass

from narrative_debugger.models.content.loader import Content
from narrative_debugger.models.content.monologue import MonologueLine
from narrative_debugger.models.content.monologue import evaluate
from narrative_debugger.models.timeline.index import TimelineIndex
from narrative_debugger.models.timeline.state_view import KnowledgeAtTick


@dataclass(frozen=True, slots=True)
class FiredLine:
    """A line fired on one side only: its id, first tick fired and how often it fired."""

    line_id: str
    first_tick: int
    count: int

    def to_json(self) -> dict:
        return {"line_id": self.line_id, "first_tick": self.first_tick, "count": self.count}


@dataclass(frozen=True, slots=True)
class EligibilityChange:
    """A line whose eligibility differs between A and B.

    Attributes:
        line_id: the line.
        a, b: eligible at the compared tick in each (None when that content has no such line).
        a_failing, b_failing: the prerequisites that fail there, in words.
        spans: for one save under two contents, each ``(from_tick, until_tick)`` where the
            two disagree (``until_tick`` None: to the end); empty for two saves.
    """

    line_id: str
    a: bool | None
    b: bool | None
    a_failing: tuple[str, ...] = ()
    b_failing: tuple[str, ...] = ()
    spans: tuple[tuple[int, int | None], ...] = ()

    @property
    def tick(self) -> int | None:
        """The first tick where A and B disagree (None when only the end is known)."""
        return self.spans[0][0] if self.spans else None

    def to_json(self) -> dict:
        out = {"line_id": self.line_id, "a": self.a, "b": self.b, "a_failing": list(self.a_failing), "b_failing": list(self.b_failing)}
        if self.spans:
            out["ticks"] = [[start, until] for start, until in self.spans]
        return out


@dataclass(frozen=True, slots=True)
class MonologuesDiff:
    """Lines fired only in A, only in B, and lines whose eligibility differs (line id order)."""

    only_a: tuple[FiredLine, ...] = ()
    only_b: tuple[FiredLine, ...] = ()
    eligibility_changed: tuple[EligibilityChange, ...] = ()

    @property
    def empty(self) -> bool:
        return not (self.only_a or self.only_b or self.eligibility_changed)

    def to_json(self) -> dict:
        """``{"only_a": [...], "only_b": [...], "eligibility_changed": [...]}``."""
        return {
            "only_a": [x.to_json() for x in self.only_a],
            "only_b": [x.to_json() for x in self.only_b],
            "eligibility_changed": [x.to_json() for x in self.eligibility_changed],
        }


def _fired(index: TimelineIndex, position: int) -> dict[str, FiredLine]:
    out: dict[str, list] = {}
    for i, tick, line_id in index.monologues_fired:
        if i >= position:
            break
        seen = out.get(line_id)
        if seen is None:
            out[line_id] = [tick, 1]
        else:
            seen[1] += 1
    return {line_id: FiredLine(line_id, t, n) for line_id, (t, n) in out.items()}


def _same_rule(x: MonologueLine | None, y: MonologueLine | None) -> bool:
    """Whether two definitions of a line have the same prerequisites (text and place aside)."""
    if x is None or y is None:
        return x is y
    return x.facts == y.facts and x.interaction == y.interaction


def _input_positions(index: TimelineIndex, lines: list[MonologueLine], limit: int) -> list[int]:
    """Journal positions (<= ``limit``) where an input of any of ``lines`` changes."""
    positions = {0}
    for line in lines:
        for pre in line.facts:
            versions = index.facts.get(pre.fact_id)
            if versions is not None:
                positions.update(p for p in versions.positions if p <= limit)
        if line.interaction is not None:
            npc = index.npc_for_slug(line.interaction.target_slug)
            if npc is not None:
                positions.update(p for p in index.series_of(npc).positions if p <= limit)
    return sorted(positions)


def eligibility_spans(index: TimelineIndex, line_a: MonologueLine | None, line_b: MonologueLine | None, limit: int) -> tuple[tuple[int, int | None], ...]:
    """Tick spans where one journal makes ``line_a`` and ``line_b`` disagree on eligibility.

    Evaluated at the end of each tick where an input changes (the state at a tick is the
    state after all of its entries); a missing definition counts as never eligible.
    """
    lines = [x for x in (line_a, line_b) if x is not None]
    spans: list[list] = []
    last_tick = None
    for pos in _input_positions(index, lines, limit):
        tick = index.tick_at_position(pos)
        if tick == last_tick:
            continue
        last_tick = tick
        knowledge = KnowledgeAtTick(index, min(index.position_for_tick(tick), limit))
        ea = line_a is not None and evaluate(line_a, knowledge).eligible
        eb = line_b is not None and evaluate(line_b, knowledge).eligible
        open_span = bool(spans) and spans[-1][1] is None
        if ea != eb and not open_span:
            spans.append([tick, None])
        elif ea == eb and open_span:
            spans[-1][1] = tick
    return tuple((start, until) for start, until in spans)


def compare_monologues(index_a: TimelineIndex, pos_a: int, content_a: Content, index_b: TimelineIndex, pos_b: int,
                       content_b: Content, same_journal: bool) -> MonologuesDiff:
    """Lines fired in one only, and lines whose eligibility differs.

    Args:
        pos_a, pos_b: the compared journal positions.
        same_journal: one save under two contents: follow eligibility over the timeline
            for each line whose prerequisites differ between the two contents.
    """
    fired_a, fired_b = _fired(index_a, pos_a), _fired(index_b, pos_b)
    only_a = tuple(fired_a[k] for k in sorted(fired_a.keys() - fired_b.keys()))
    only_b = tuple(fired_b[k] for k in sorted(fired_b.keys() - fired_a.keys()))
    know_a, know_b = KnowledgeAtTick(index_a, pos_a), KnowledgeAtTick(index_b, pos_b)
    changed = []
    for line_id in sorted(content_a.monologues.keys() | content_b.monologues.keys()):
        line_a, line_b = content_a.monologues.get(line_id), content_b.monologues.get(line_id)
        ra = evaluate(line_a, know_a) if line_a is not None else None
        rb = evaluate(line_b, know_b) if line_b is not None else None
        spans = ()
        if same_journal:
            if _same_rule(line_a, line_b):
                continue
            spans = eligibility_spans(index_a, line_a, line_b, pos_a)
            if not spans and line_a is not None and line_b is not None:
                continue
        elif ra is not None and rb is not None and ra.eligible == rb.eligible:
            continue
        changed.append(
            EligibilityChange(
                line_id,
                ra.eligible if ra else None,
                rb.eligible if rb else None,
                ra.failing if ra else (),
                rb.failing if rb else (),
                spans,
            )
        )
    return MonologuesDiff(only_a, only_b, tuple(changed))

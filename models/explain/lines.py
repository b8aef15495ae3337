"""Why a monologue line can or cannot fire (schema §6), and whether it held when it fired (M001).

Each prerequisite is a clause: a ``facts`` item holds while the fact is known at
``min_confidence`` or better; the ``interaction`` item holds while at least
``min_count`` interactions with the NPC are in the given state (any state when none
is named). A clause's truth changes only at journal entries, so it is kept as a list
of flips (journal position, holds), read once from the timeline index and cached.
The nearest miss is the latest tick at which the fewest clauses failed.
"""

from __future__ import annotations

from bisect import bisect_right
from dataclasses import dataclass

from narrative_debugger.models.content.monologue import MonologueLine
from narrative_debugger.models.content.monologue import Eligibility, evaluate
from narrative_debugger.models.explain.chain import Explanation, Folded, Step, fold_list
from narrative_debugger.models.playthrough import Playthrough
from narrative_debugger.models.timeline.index import TimelineIndex
from narrative_debugger.models.memo import Memo

RULE_CLAUSE = "prerequisite (schema §6)"
RULE_FIRED = "fires only when its prerequisites hold (M001)"

#: (FactId, min_confidence) -> the flips of a ``facts`` clause (``clauses_of``).
FACT_CLAUSES: Memo[tuple, tuple] = Memo("fact clause flips", "(FactId, KnowledgeConfidence) -> ((position, holds), ...)")
#: (target slug, state or None, min_count) -> the flips of an ``interaction`` clause.
INTERACTION_CLAUSES: Memo[tuple, tuple] = Memo("interaction clause flips", "(slug, state, min_count) -> ((position, holds), ...)")
#: Line id -> ``_sweep`` of its clauses (positions, best so far), for the nearest miss.
SWEEPS: Memo[str, tuple] = Memo("nearest-miss sweep", "line id -> (positions, bests)")
#: Line id -> (its firings, prefix counts of those unheld) (``_firings``).
FIRINGS: Memo[str, tuple] = Memo("firings", "line id -> ([(journal index, tick)], [unheld prefix counts])")
#: Key None -> line id -> its (journal index, tick) MonologueFired entries, in journal order.
FIRED_BY_LINE: Memo[None, dict] = Memo("fired by line", "line id -> [(journal index, tick)]")


@dataclass(frozen=True)
class Clause:
    """One prerequisite of a line with its truth over the journal.

    Attributes:
        text: the clause in words (``contraband.ring_exists >= knows_of``).
        flips: (journal position, holds) at each change of truth, oldest first; it
            holds False before the first.
    """

    text: str
    flips: tuple[tuple[int, bool], ...]

    def at(self, position: int) -> tuple[bool, int]:
        """(holds, number of flips applied) at ``position``."""
        k = bisect_right(self.flips, (position, True))
        return (self.flips[k - 1][1] if k else False), k


def _flips(pairs) -> tuple[tuple[int, bool], ...]:
    out = []
    holds = False
    for position, value in pairs:
        if value != holds:
            if out and out[-1][0] == position:
                out.pop()
            else:
                out.append((position, value))
            holds = value
    return tuple(out)


def clauses_of(index: TimelineIndex, line: MonologueLine) -> list[Clause]:
    """The line's clauses in prerequisite order (facts, then the interaction), cached on the index."""
    out = []
    for pre in line.facts:
        flips = FACT_CLAUSES.get(index, (pre.fact_id, pre.min_confidence))
        if flips is None:
            versions = index.facts.get(pre.fact_id)
            pairs = zip(versions.positions, versions.values) if versions is not None else ()
            made = _flips((pos, v is not None and v.confidence >= pre.min_confidence) for pos, v in pairs)
            flips = FACT_CLAUSES.publish(index, (pre.fact_id, pre.min_confidence), made)
        out.append(Clause(f"{pre.fact_id} ≥ {pre.min_confidence.snake}", flips))
    inter = line.interaction
    if inter is not None:
        key = (inter.target_slug, inter.state, inter.min_count)
        flips = INTERACTION_CLAUSES.get(index, key)
        if flips is None:
            npc = index.npc_for_slug(inter.target_slug)
            series = index.series_of(npc) if npc is not None else None
            pairs = zip(series.positions, series.in_state(inter.state)) if series is not None else ()
            flips = INTERACTION_CLAUSES.publish(index, key, _flips((pos, count >= inter.min_count) for pos, count in pairs))
        what = f"{inter.state.snake} " if inter.state else ""
        out.append(Clause(f"≥ {inter.min_count} {what}interaction(s) with {inter.target_slug}", flips))
    return out


def _sweep(index: TimelineIndex, clauses: list[Clause]) -> tuple[list[int], list[tuple[int, int]]]:
    """The clauses' flips merged in journal order, judged at the end of each tick.

    Returns (positions, best): ``positions[k]`` is the journal position at the end of
    the k-th tick where a clause changed, and ``best[k]`` the (fewest failing, latest
    tick with that many) over the ticks up to it. Built once per line (O(F log F)),
    so a nearest miss at any tick is one bisection.
    """
    events = sorted((pos, c, holds) for c, clause in enumerate(clauses) for pos, holds in clause.flips)
    truth = [False] * len(clauses)
    failing = len(clauses)
    best = (failing, index.first_tick)
    ticks = index.ticks
    positions, bests = [], []
    held, held_since = failing, index.first_tick  # the count judged last, and its tick
    for k, (pos, c, holds) in enumerate(events):
        if truth[c] != holds:
            truth[c] = holds
            failing += -1 if holds else 1
        tick = ticks[pos - 1]
        if k + 1 < len(events) and ticks[events[k + 1][0] - 1] == tick:
            continue  # judged at the end of the tick
        # The count judged last held through the tick before this one: its latest tick.
        if tick - 1 >= held_since and held <= best[0]:
            best = (held, tick - 1)
        if failing <= best[0]:
            best = (failing, tick)
        held, held_since = failing, tick
        positions.append(index.position_for_tick(tick))
        bests.append(best)
    return positions, bests


def _nearest_miss(index: TimelineIndex, line: MonologueLine, clauses: list[Clause], position: int, now: int) -> tuple[int, int] | None:
    """(tick, failing count) of the latest tick up to ``now`` where the fewest clauses failed; None without clauses."""
    if not clauses:
        return None
    positions, bests = SWEEPS.get_or_make(index, line.id, lambda: _sweep(index, clauses))
    k = bisect_right(positions, position) - 1
    best = bests[k] if k >= 0 else (len(clauses), index.first_tick)
    failing = sum(not clause.at(position)[0] for clause in clauses)
    if failing <= best[0] and now >= best[1]:
        best = (failing, now)  # as close now as ever: the latest tick wins ties
    return best[1], best[0]


def explain_line(play: Playthrough, line_id: str, tick: int, limit: int, target: str) -> Explanation:
    """Why ``line_id`` can or cannot fire at ``tick``; its nearest miss; its firings (M001)."""
    index = play.index
    line = play.content.monologues[line_id]
    position = index.position_for_tick(tick)
    state = index.at(tick)
    result = evaluate(line, state.knowledge)
    clauses = clauses_of(index, line)
    steps: list[Step] = []
    clause_docs = []
    for clause in clauses:
        holds, k = clause.at(position)
        doc = {"clause": clause.text, "holds": holds, "since_tick": None, "journal_index": None}
        if k:
            pos = clause.flips[k - 1][0]
            i = pos - 1
            doc["since_tick"] = index.ticks[i]
            doc["journal_index"] = i
            detail = f"{clause.text} {'holds' if holds else 'stops holding'} after this {index.kinds[i]}"
            if not holds:
                held_from = clause.flips[k - 2][0] if k >= 2 else None
                last = index.ticks[i] - 1 if held_from is not None and index.ticks[held_from - 1] < index.ticks[i] else None
                doc["last_held_tick"] = last
                detail += f"; it last held at tick {last}" if last is not None else "; it held only within that tick"
            steps.append(Step(i, index.ticks[i], index.kinds[i], RULE_CLAUSE, "fails" if holds else "holds", "holds" if holds else "fails", detail))
        elif not holds:
            doc["last_held_tick"] = None
        clause_docs.append(doc)
    firings, unheld_before = _firings(index, line, clauses)
    count = bisect_right(firings, position - 1, key=lambda r: r[0])
    fired = []
    unheld = unheld_before[count]
    first_unheld = firings[bisect_right(unheld_before, 0) - 1] if unheld else None
    # Only the newest firings can be shown: at most ``limit`` of them join the clause steps.
    tail = firings[max(0, count - max(0, limit)) : count]
    for k, (i, ftick) in enumerate(tail, start=count - len(tail)):
        held = unheld_before[k + 1] == unheld_before[k]
        steps.append(Step(i, ftick, "MonologueFired", RULE_FIRED, None, "fired", "its prerequisites held at that tick" if held else "M001"))
    steps.sort(key=lambda s: s.journal_index)
    shown, folded = fold_list(steps, limit, None)
    older = count - len(tail)
    if older:
        by_rule = dict(folded.by_rule) if folded else {}
        n, _ = by_rule.get(RULE_FIRED, (0, 0))
        by_rule[RULE_FIRED] = (n + older, 0)
        folded = Folded((folded.count if folded else 0) + older, by_rule)
    for k, step in enumerate(shown):
        if step.rule == RULE_FIRED and step.detail == "M001":
            failing = evaluate(line, index.at(step.tick).knowledge).failing
            shown[k] = Step(step.journal_index, step.tick, step.event, step.rule, None, "fired", "its prerequisites did NOT hold at that tick (M001): " + "; ".join(failing))
    listed = {(i, t) for i, t in firings[max(0, count - max(1, limit)) : count]} | ({first_unheld} if first_unheld else set())
    for i, ftick in sorted(listed):
        held = evaluate(line, index.at(ftick).knowledge)
        fired.append({"journal_index": i, "tick": ftick, "held": held.eligible, "failing": list(held.failing)})
    miss = None
    if not result.eligible:
        best = _nearest_miss(index, line, clauses, position, tick)
        if best is not None:
            miss_tick, _ = best
            miss = {"tick": miss_tick, "failing": list(evaluate(line, index.at(miss_tick).knowledge).failing)}
    summary = _summary(line_id, tick, result, clause_docs, miss, count, unheld, first_unheld)
    exp = Explanation(target, tick, "eligible" if result.eligible else "not eligible", summary, shown, folded, False, index.npc_for_slug(line.interaction.target_slug) if line.interaction else None)
    exp.extra.update({"eligible": result.eligible, "clauses": clause_docs, "nearest_miss": miss, "fired": fired, "fired_count": count, "fired_unheld": unheld})
    return exp


def _firings(index: TimelineIndex, line: MonologueLine, clauses: list[Clause]) -> tuple[list[tuple[int, int]], list[int]]:
    """(journal index, tick) of every MonologueFired of the line, and prefix counts of the
    firings whose prerequisites did not hold (M001: judged at the end of the firing tick,
    every clause must hold there). Read once per line and cached on the index."""
    cached = FIRINGS.get(index, line.id)
    if cached is None:
        firings = FIRED_BY_LINE.get_or_make(index, None, lambda: _fired_by_line(index)).get(line.id, [])
        unheld = [0]
        for _, ftick in firings:
            at = index.position_for_tick(ftick)
            unheld.append(unheld[-1] + (not all(clause.at(at)[0] for clause in clauses)))
        cached = FIRINGS.publish(index, line.id, (firings, unheld))
    return cached


def _fired_by_line(index: TimelineIndex) -> dict[str, list[tuple[int, int]]]:
    by_line: dict[str, list[tuple[int, int]]] = {}
    for i, ftick, fid in index.monologues_fired:
        by_line.setdefault(fid, []).append((i, ftick))
    return by_line


def _summary(line_id, tick, result, clauses, miss, count, unheld, first_unheld) -> str:
    if not clauses:
        text = f"{line_id} has no prerequisites: it can fire at any tick"
    elif result.eligible:
        held = "; ".join(f"{c['clause']} (since tick {c['since_tick']})" for c in clauses)
        text = f"{line_id} can fire at tick {tick}: every prerequisite holds — {held}"
    else:
        parts = []
        for c in clauses:
            if c["holds"]:
                continue
            last = c.get("last_held_tick")
            if c["journal_index"] is None:
                parts.append(f"{c['clause']} has never held")
            else:
                parts.append(f"{c['clause']} fails since tick {c['since_tick']}" + (f" (last held at tick {last})" if last is not None else ""))
        text = f"{line_id} cannot fire at tick {tick}: " + "; ".join(parts)
        if miss is not None:
            if miss["failing"] and miss["tick"] == tick:
                text += f". It has never been closer than now ({len(miss['failing'])} of {len(clauses)} failing)"
            elif miss["failing"]:
                text += f". Closest at tick {miss['tick']}, where {len(miss['failing'])} of {len(clauses)} failed: " + "; ".join(miss["failing"])
            else:
                text += f". It could have fired at tick {miss['tick']}, when every prerequisite held"
    if count:
        text += f"; fired {count} time(s)" + (f", {unheld} of them when its prerequisites did not hold (M001, first at tick {first_unheld[1]})" if unheld else ", each time with its prerequisites holding")
    return text + "."


def nearest_miss_in_save(play: Playthrough, line_id: str) -> tuple[int, Eligibility] | None:
    """The save's nearest miss of ``line_id`` over its whole journal (up to ``last_tick``):
    ``(tick, the line's evaluate() there)``, the latest tick where the fewest clauses
    failed (the rule of ``explain_line``'s nearest miss, asked at the save's last tick);
    its ``failing`` are the clauses in words (empty: every clause held there) and its
    ``distance`` how far they were from holding. None for a line without prerequisites
    or an unreadable save. Used by the corpus's ``near_misses`` table (issue 39).

    Raises:
        KeyError: the content has no line ``line_id``.
    """
    index = play.index
    if index is None:
        return None
    line = play.content.monologues[line_id]
    clauses = clauses_of(index, line)
    if not clauses:
        return None
    end = play.last_tick
    tick, _ = _nearest_miss(index, line, clauses, index.position_for_tick(end), end)
    return tick, evaluate(line, index.at(tick).knowledge)

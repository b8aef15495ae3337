"""What follows from a what-if's edit (issue 38), filled into its ``WhatIf``.

``decisions``: recorded decisions (a walk-away, a line fired, a penalty) B's state no
longer supports (``would_not_happen``, with the clause) and those it calls for that the
journal lacks (``would_happen``); ``crossings``: where the stress threshold crossings
moved, and the walk-aways a crossing now calls for; ``relevel``: B's levels under the
tuned bounds (``end_levels``); ``up_to``: only what happens by the compared tick;
``recorded_faults``: the walk-away rule's faults of the recorded run, kept as recorded.
"""

from __future__ import annotations

from bisect import bisect_left
from dataclasses import replace

from narrative_debugger.models.domain.tuning import DEFAULT_TUNING, Tuning
from narrative_debugger.models.domain.types import InteractionState
from narrative_debugger.models.playthrough import Playthrough
from narrative_debugger.models.save.savefile import Save
from narrative_debugger.models.timeline.index import TimelineIndex
from narrative_debugger.models.timeline.replay import Recompute
from narrative_debugger.models.whatif.result import WhatIf
from narrative_debugger.models.whatif.span import Shift


_WALK_AWAYS = (InteractionState.WalkedAway, InteractionState.ConflictAbandoned)
#: T004 messages the replay writes about a penalty (``replay.on_WalkAwayPenalty``, ``_pay_early``, ``settle``).
_PENALISED_WITHIN = "yet it is penalised"
_PENALTY_MISSING = "but no WalkAwayPenalty"


def relevel(result: WhatIf, tuning: Tuning) -> None:
    """B's levels under the tuned bounds; ``end_levels`` where A's and B's differ."""
    c = result.comparison
    for slug, d in c.npcs.items():
        if d.b is not None and tuning.level_bounds != DEFAULT_TUNING.level_bounds:
            d = c.npcs[slug] = replace(d, b=replace(d.b, level=tuning.level_for(d.b.score)))
        if d.a is not None and d.b is not None and d.a.level is not d.b.level:
            result.end_levels[slug] = {"a": d.a.level.display_name, "b": d.b.level.display_name}
    c._differences = None


def recorded_faults(a: Playthrough, shift: Shift) -> frozenset:
    """B's journal indices of the entries where A's replay found the walk-away rule broken
    (T004: a penalty of a walk-away within the threshold, a walk-away past it with no
    penalty) and the edit left alone: ``Recompute.recorded_faults``, applied as recorded."""
    out = set()
    for i, f in _replay_faults(a, "T004"):
        if _PENALISED_WITHIN in f.message or _PENALTY_MISSING in f.message:
            at_b = shift.to_b(i)
            if at_b is not None:
                out.add(at_b)
    return frozenset(out)


def _replay_faults(a: Playthrough, code: str):
    """``(journal index, finding)`` of each ``code`` finding A's replay made at an entry."""
    for f in a.replay_findings:
        if f.code == code and f.target is not None and f.target.journal_index is not None:
            yield f.target.journal_index, f


def _faults_at(a: Playthrough, code: str) -> set[int]:
    """A's journal indices where its replay reported ``code``."""
    return {i for i, _ in _replay_faults(a, code)}


def _entry(play: Playthrough, i: int, reason: str, event: str | None = None) -> dict:
    journal = play.save.journal
    return {"journal_index": i, "tick": journal.ticks[i] if 0 <= i < len(journal) else None,
            "event": event or (journal.kinds[i] if 0 <= i < len(journal) else None), "reason": reason}


def _walk_away_rule(b: Playthrough, i: int, stable_id) -> tuple[str, int, int, float] | None:
    """``(slug, walk-away ordinal, walk_away_threshold, walk_away_penalty)`` of the NPC
    in B's state after journal entry ``i`` (a walk-away, or the penalty at its tick). A
    penalty's walk-away is the one B's replay paired it with (``penalty_pairs``): with
    several at one tick, the NPC's count after the penalty is that of the tick's last."""
    versions = b.index.npcs.get(stable_id) if stable_id is not None else None
    npc = versions.at(i + 1) if versions is not None else None
    if npc is None:
        return None
    tol = npc.interaction_tolerance
    paid = b.index.penalty_pairs.get(i)
    return npc.slug, paid[1] if paid is not None else npc.walk_aways, tol.walk_away_threshold, tol.walk_away_penalty


def decisions(result: WhatIf, a: Playthrough, b: Playthrough, rc: Recompute, shift: Shift) -> None:
    """Recorded decisions B no longer supports, and those B calls for: the replay's own
    rules (M001 a line fired while a prerequisite fails, T004 a penalty) found in B and
    not in A, and walk-aways from an NPC whose stress is no longer over its threshold.

    Those findings are consequences of the edit, reported here and no longer as
    findings only in B (the trial read "T004 only in B: … yet it is penalised" beside
    "would not have happened" for the same penalty). A penalty's reason says what the
    walk-away rule (interaction seed: walk_away_threshold) calls for in B; a penalty is
    listed as not happening exactly where B's replay did not apply it
    (``Recompute.unapplied``), and one as happening where it applied it (``imposed``).
    A fault A's replay reported at the same entry (a line fired while a prerequisite
    failed, a penalty within the threshold) happened in the recorded run too: it is no
    consequence of the edit and stays a finding, its message as B words it."""
    c = result.comparison
    kept = []
    fired_failing = _faults_at(a, "M001")
    listed = set()
    for f in c.findings_only_b:
        target = f.target
        i = target.journal_index if target is not None else None
        within, missing = f.code == "T004" and _PENALISED_WITHIN in f.message, f.code == "T004" and _PENALTY_MISSING in f.message
        rule = _walk_away_rule(b, i, target.stable_id) if i is not None and (within or missing) else None
        if i is not None and f.code == "M001" and shift.to_a(i) not in fired_failing:
            result.would_not_happen.append(_entry(b, i, f.message))
        elif rule is not None and within and i in rc.unapplied:
            listed.add(i)
            result.would_not_happen.append(_not_penalised(b, i, rule))
        elif rule is not None and missing and i in rc.imposed:
            listed.add(i)
            result.would_happen.append(_penalised(b, i, rule))
        else:
            kept.append(f)
    for i in sorted((rc.unapplied | rc.imposed) - listed):  # their T004 reads as A's at that tick: not only in B
        rule = _walk_away_rule(b, i, getattr(b.save.journal.data[i], "target", None))
        if rule is not None and i in rc.unapplied:
            result.would_not_happen.append(_not_penalised(b, i, rule))
        elif rule is not None:
            result.would_happen.append(_penalised(b, i, rule))
    if len(kept) != len(c.findings_only_b):
        c.findings_only_b = tuple(kept)
        c._differences = None
    ia, ib = a.index, b.index
    for record in ib.transitions:
        if record.target not in _WALK_AWAYS:
            continue
        before_b = ib.npcs[record.npc].at(record.index)
        versions_a = ia.npcs.get(record.npc)
        recorded = shift.to_a(record.index)  # the same walk-away in A (None: one the edit changed)
        before_a = versions_a.at(recorded) if versions_a is not None and recorded is not None and recorded < len(a.save.journal) else None
        if before_a is None or before_b is None:
            continue
        ta, tb = before_a.tolerance, before_b.tolerance
        if ta.current_stress > ta.threshold and not tb.current_stress > tb.threshold:
            result.would_not_happen.append(_entry(b, record.index, f"{before_b.slug}: stress {tb.current_stress} is not over the threshold {tb.threshold} "
                                                  f"(as recorded: {ta.current_stress} over {ta.threshold})"))
    result.would_not_happen.sort(key=lambda e: e["journal_index"])


def _not_penalised(b: Playthrough, i: int, rule: tuple) -> dict:
    """The ``would_not_happen`` entry of WalkAwayPenalty ``i``, which B's replay did not apply."""
    slug, n, threshold, _ = rule
    return _entry(b, i, f"{slug}: walk-away #{n} is within the walk-away threshold of {threshold}: "
                        "no WalkAwayPenalty follows it")


def _penalised(b: Playthrough, i: int, rule: tuple) -> dict:
    """The ``would_happen`` entry of walk-away ``i``, which B's replay penalised."""
    slug, n, threshold, penalty = rule
    return _entry(b, i, f"{slug}: walk-away #{n} is past the walk-away threshold of {threshold}: "
                        f"a WalkAwayPenalty of {penalty:g} would follow", "WalkAwayPenalty")


def _crossing_ticks(index: TimelineIndex, sid: int) -> list[tuple[int, int, bool]]:
    """(position, tick, now over) of each change of ``stress > threshold`` of one NPC."""
    versions = index.npcs.get(sid)
    out = []
    if versions is None:
        return out
    over = False  # before the first state: an NPC over its threshold from the start crosses at position 0
    for position, npc in zip(versions.positions, versions.values):
        now = npc.tolerance.current_stress > npc.tolerance.threshold
        if now != over:
            out.append((position, index.tick_at_position(position), now))
        over = now
    return out


def _next_conversation(index: TimelineIndex, sid: int, position: int, threshold: int) -> int | None:
    """The journal index of the NPC's first InteractionStarted after ``position``, when its
    stress is still over ``threshold`` there; None when it has no later conversation or
    is no longer over."""
    created = index.interactions_created.get(sid, ())
    k = bisect_left(created, position + 1)
    if k == len(created):
        return None
    start = created[k] - 1  # the journal index of the entry that started it
    npc = index.npcs[sid].at(start)
    return start if npc is not None and npc.tolerance.current_stress > threshold else None


def _walked_away(index: TimelineIndex, sid: int, start: int) -> bool:
    """True when the conversation the NPC started at journal index ``start`` ended in a
    walk-away in the journal (WalkedAway, or ConflictAbandoned after a confrontation)."""
    moves = index.transitions_by_npc.get(sid, [])
    k = bisect_left(moves, start, key=lambda move: move.index)
    for move in moves[k + 1:]:
        if move.source is None:  # the next conversation began: this one never ended
            return False
        if move.target in _WALK_AWAYS:
            return True
        if not move.target.in_progress:
            return False
    return False


def up_to(result: WhatIf, tick: int | None) -> None:
    """Keep the decisions that would (not) happen at or before ``tick`` (``whatif
    --tick``: the states are compared there, so a consequence past it is not one; trial
    48 read "A and B agree" beside a penalty at a later tick, and exit 1)."""
    if tick is None:
        return
    for name in ("would_happen", "would_not_happen"):
        entries = getattr(result, name)
        setattr(result, name, [e for e in entries if e["tick"] is None or e["tick"] <= tick])


def crossings(result: WhatIf, ia: TimelineIndex, ib: TimelineIndex, sa: Save, sb: Save, until: int | None = None) -> None:
    """Where the stress threshold crossings moved, and the crossings over it that B has
    and A has not at that tick: a walk-away would now follow from the state there.
    ``until``: only the crossings at or before this tick (``whatif --tick``)."""
    for slug in sorted({n.slug for n in sb.npcs.values()}):
        na, nb = sa.npc_by_slug(slug), sb.npc_by_slug(slug)
        if na is None or nb is None:
            continue
        ca, cb = _crossing_ticks(ia, na.stable_id), _crossing_ticks(ib, nb.stable_id)
        if until is not None:
            ca, cb = [c for c in ca if c[1] <= until], [c for c in cb if c[1] <= until]
        if [(t, o) for _, t, o in ca] == [(t, o) for _, t, o in cb]:
            continue
        result.crossings[slug] = {"a": [t for _, t, _ in ca], "b": [t for _, t, _ in cb]}
        ups_a = {t for _, t, over in ca if over}
        for position, t, over in cb:
            if over and t not in ups_a and position == 0:  # over from the start (a threshold below the initial stress)
                npc = ib.npcs[nb.stable_id].at(0)
                started = ib.interactions_created.get(nb.stable_id)
                if not started:
                    continue
                first = started[0] - 1
                said = f"{slug}: stress {npc.tolerance.current_stress} is over the threshold {npc.tolerance.threshold} from the start"
                if not _walked_away(ib, nb.stable_id, first):
                    result.would_happen.append({"journal_index": first, "tick": sb.journal.ticks[first], "event": "InteractionWalkedAway",
                                                "reason": f"{said}: a walk-away would follow at the first conversation (journal[{first}])"})
                    continue
                # The first conversation was walked away from as recorded, and its walk-away's
                # stress keeps the NPC over: the next conversation would follow as a walk-away
                # does after a walk-away's own stress (trial: evening.json, lera-sessik's threshold
                # -1 listed nothing where 0 listed that next conversation).
                following = _next_conversation(ib, nb.stable_id, started[0], npc.tolerance.threshold)
                if following is not None and not _walked_away(ib, nb.stable_id, following):
                    there = ib.npcs[nb.stable_id].at(following).tolerance.current_stress
                    result.would_happen.append({
                        "journal_index": following, "tick": sb.journal.ticks[following], "event": "InteractionWalkedAway",
                        "reason": f"{said}; the first conversation (journal[{first}]) was walked away from, as recorded, and the stress "
                                  f"is still over ({there}) at the next one: a walk-away would follow there (journal[{following}])"})
            elif over and t not in ups_a:
                npc = ib.npcs[nb.stable_id].at(position)
                kind = sb.journal.kinds[position - 1] if 0 < position <= len(sb.journal) else None
                if kind == "StressChanged" and getattr(sb.journal.data[position - 1], "cause", None) == "walk_away":
                    # Over by a walk-away's own stress: that conversation has ended; a walk-away
                    # would follow at the NPC's next one (the trial read a walk-away "following"
                    # the StressChanged of the walk-away listed as not happening).
                    following = _next_conversation(ib, nb.stable_id, position, npc.tolerance.threshold)
                    # A conversation recorded as walked away from already is no new walk-away
                    # (trial 47: the only consequence listed was one that happened anyway).
                    if following is not None and not _walked_away(ib, nb.stable_id, following):
                        result.would_happen.append({
                            "journal_index": following, "tick": sb.journal.ticks[following], "event": "InteractionWalkedAway",
                            "reason": f"{slug}: stress {npc.tolerance.current_stress} is over the threshold {npc.tolerance.threshold} once "
                                      f"journal[{position - 1}] (the stress of a walk-away, as recorded) applied: a walk-away would "
                                      f"follow at the next conversation (journal[{following}])"})
                    continue
                result.would_happen.append({"journal_index": position - 1, "tick": t, "event": "InteractionWalkedAway",
                                            "reason": f"{slug}: stress {npc.tolerance.current_stress} is over the threshold {npc.tolerance.threshold} "
                                                      f"once journal[{position - 1}] ({kind or 'an invalid entry'}) applied: a walk-away would follow"})
    result.would_happen.sort(key=lambda e: (e["tick"] if e["tick"] is not None else -1, e["journal_index"]))

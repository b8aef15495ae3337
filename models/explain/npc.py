"""Why an NPC value is what it is: score, level, stress, walk-aways, counters, shared references.

Each chain is the NPC's journal entries of the kinds that set the value (a ``Track``),
oldest first; the arithmetic of each step uses the rules' numbers as the replay did:
the relationship seed's delta formula with the playthrough's ``Tuning`` (its constants
and level bounds; the seed's unless a what-if tuned them, issue 38) and schema §8.1
tolerance. In a what-if's side B a score change the replay derived anew
(``Recompute.derived``) is explained by the tuned formula, not the recorded delta.
"""

from __future__ import annotations

from decimal import Decimal

from narrative_debugger.models.domain.relationship import MAX_REFERENCES_PER_KIND, SENTIMENT_BAND, close_enough, score_delta, unclamped_delta
from narrative_debugger.models.domain.tuning import DEFAULT_TUNING, Tuning
from narrative_debugger.models.domain.types import LEVEL_BOUNDS
from narrative_debugger.models.explain.chain import Explanation, Folded, Step, adds_up, fmt_num, fmt_places, fmt_plain, fmt_signed, fmt_sum
from narrative_debugger.models.explain.tracks import ATTRIBUTES, RULE_LEVEL, Track, track_for
from narrative_debugger.models.playthrough import Playthrough
from narrative_debugger.models.memo import Memo


class NpcContext:
    """What every NPC step needs: the playthrough, the NPC and its versions."""

    def __init__(self, play: Playthrough, npc: int) -> None:
        self.play = play
        self.index = play.index
        self.npc = npc
        self.versions = self.index.npcs[npc]
        self.data = play.save.journal.data
        self.name = play.npc_name(npc)
        self.tuning = play.tuning
        self.recompute = play.recompute

    def track(self, attr: str) -> Track:
        return track_for(self.index, self.data, self.npc, attr, self.tuning.level_for)

    def derived(self, i: int) -> bool:
        """True when entry ``i``'s score change was derived anew by a what-if's replay."""
        return self.recompute is not None and self.recompute.derived(self.npc, i)

    def applied_delta(self, i: int, d: dict) -> float:
        """The delta the replay added at RelationshipInteraction ``i`` (entry data ``d``):
        the formula's with the playthrough's tuning where it was derived anew, else the
        recorded one (the formula's when the save records none)."""
        formula = score_delta(d.get("sentiment", 0.0), d.get("message_length", 0), d.get("conversation_turns", 0), self.tuning)
        if self.derived(i):
            return formula
        recorded = d.get("delta")
        return formula if recorded is None else recorded

    def step(self, track: Track, k: int, attr: str) -> Step:
        """The k-th event of ``track`` as a Step with its arithmetic."""
        v = track.versions[k]
        pos = track.positions[k]
        get = ATTRIBUTES[attr].get
        before_state, after_state = self.versions.values[v - 1], self.versions.values[v]
        before, after = get(before_state), get(after_state)
        i = pos - 1
        kind = self.index.kinds[i]
        detail = DETAILS[attr](self, i, before_state, after_state, before, after)
        if attr == "shared_references":
            before, after = _refs_json(before), _refs_json(after)
        return Step(i, self.index.ticks[i], kind, track.rules[k], before, after, detail)


def _refs_json(refs) -> dict:
    return {kind: list(items) for kind, items in refs}


# ----- the arithmetic of one step, per attribute -----
def formula_text(sentiment: float, length: float, turns: float, places: int = 2, tuning: Tuning = DEFAULT_TUNING) -> str:
    """The delta formula in numbers: ``0.4×0.5 + min(0.3, 100/500) + min(0.2, 1×0.05) + 0.1 = 0.55``
    (the result with ``places`` decimals, those of the sum that follows it), with the
    constants of ``tuning`` (the seed's by default; a tuned formula says "tuned")."""
    raw = unclamped_delta(sentiment, length, turns, tuning)
    delta = score_delta(sentiment, length, turns, tuning)
    t = tuning
    text = (f"delta = {fmt_plain(sentiment)}×{fmt_plain(t.sentiment_weight)} + min({fmt_plain(t.length_cap)}, {fmt_plain(length)}/{fmt_plain(t.length_divisor)})"
            f" + min({fmt_plain(t.turns_cap)}, {fmt_plain(turns)}×{fmt_plain(t.turns_step)}) + {fmt_plain(t.base)} = {fmt_places(raw, places)}")
    if delta != raw:
        text += f", clamped to {fmt_places(delta, places)}"
    return text + (" (relationship seed formula)" if t.formula_is_default else " (relationship seed formula, tuned)")


def _score_detail(ctx: NpcContext, i, bs, as_, before, after) -> str:
    d = ctx.data[i] or {}
    if ctx.index.kinds[i] == "RelationshipInteraction":
        s, length, turns = d["sentiment"], d["message_length"], d["conversation_turns"]
        recorded = ctx.applied_delta(i, d)
        raw = before + recorded
        clamped = not close_enough(raw, after)
        # Written out where two decimals do not add up ("0.74; 50.05 → 50.80"): the
        # formula's result and the sum then take the decimals that do (fmt_sum).
        places = _row_places(before, recorded, raw if clamped else after, s, length, turns, ctx.tuning)
        text = formula_text(s, length, turns, places, ctx.tuning)
        if ctx.derived(i):
            text += "; derived anew by the what-if's replay"
        elif not close_enough(recorded, score_delta(s, length, turns, ctx.tuning)):
            text += f"; the save records delta {fmt_places(recorded, places)} (R002)"
        if clamped:
            return text + f"; {fmt_sum(before, recorded, raw, places)}, clamped to {fmt_num(after)}"
        if places == 2:
            return text + f"; {fmt_num(before)} → {fmt_num(after)}"
        return text + f"; {fmt_sum(before, recorded, after, places)}"
    penalty = d.get("penalty", before - after)
    tol = as_.interaction_tolerance
    result = before - penalty if not close_enough(before - penalty, after) else after
    # The walk-away the penalty pays for is the one the replay paired it with (its T004s
    # name the same): with several at one tick, the NPC's count is that of the last.
    paid = ctx.index.penalty_pairs.get(i)
    if paid is None:  # check's T004: no walk-away of the NPC at this tick to pay for
        text = f"no walk-away of {ctx.name} at tick {ctx.index.ticks[i]} left for it to pay for (T004): {fmt_sum(before, -penalty, result)}"
    else:
        walk, ordinal = paid
        if ctx.recompute is not None and i in ctx.recompute.unapplied:  # the what-if's replay left it out (replay.Recompute)
            return (f"walk-away #{ordinal} is within walk_away_threshold {tol.walk_away_threshold}: the what-if's replay "
                    f"does not apply the recorded penalty {fmt_num(penalty)}; {fmt_num(before)} → {fmt_num(after)}")
        early = walk > i  # check's T004: the save format writes a penalty after its walk-away (§5)
        if ordinal > tol.walk_away_threshold:
            text = (f"walk-away #{ordinal} (journal #{walk}) is past walk_away_threshold {tol.walk_away_threshold}, but written after "
                    f"this penalty (T004): " if early else f"walk-away #{ordinal} is past walk_away_threshold {tol.walk_away_threshold}: ")
            text += fmt_sum(before, -penalty, result)
        else:  # check's T004: "within" the threshold, as check says, never "past"
            text = (f"walk-away #{ordinal}{f' (journal #{walk}, written after this penalty)' if early else ''} is within walk_away_threshold "
                    f"{tol.walk_away_threshold}, yet the save applies a penalty (T004): {fmt_sum(before, -penalty, result)}")
    if result != after:
        return text + f", clamped to {fmt_num(after)} (score never below 0)"
    return text


def _row_places(before: float, recorded: float, result: float, sentiment, length, turns, tuning: Tuning = DEFAULT_TUNING) -> int:
    """The decimals of a delta row: the fewest, 2 to 6, at which its sum adds up and the
    formula's own result (computed apart from the save's delta) and its clamp read as
    they are: at fewer, "= 0.44 …; 21.17 → 21.62" adds up only with a delta of 0.45
    while the formula's 0.445 prints 0.44, and "= 1.00, clamped to 1.00" hides 1.002."""
    raw = unclamped_delta(sentiment, length, turns, tuning)

    # Written whole to the game's 3 decimals (sentiment×0.5, length/500); a tuned formula's
    # constants give more (a weight of 0.25: 0.7725), which compared to 3 decimals made
    # every row 6 ("18.796500 + 0.582500"): to 6 then, past float noise.
    whole = 3 if tuning.formula_is_default else 6

    def exact(x: float, places: int) -> bool:
        return Decimal(f"{x:.{places}f}") == Decimal(f"{x:.{whole}f}")

    for places in range(2, 6):
        if adds_up(before, recorded, result, places) and exact(raw, places) and exact(recorded, places):
            return places
    return 6


def _stress_detail(ctx: NpcContext, i, bs, as_, before, after) -> str:
    d = ctx.data[i] or {}
    threshold = as_.tolerance.threshold
    cause = d.get("cause", "?")
    if cause == "walk_away":
        cause = f"walk_away: {_walk_away_named(ctx, i)}"
    delta = d.get("delta", after - before)
    text = f"{fmt_plain(before)} {'+' if delta >= 0 else '−'} {fmt_plain(abs(delta))} = {fmt_plain(after)} (cause {cause})"
    if d.get("cause") == "walk_away":
        text += f"; walk_away_stress_delta {fmt_plain(as_.interaction_tolerance.walk_away_stress_delta)}"
    if before <= threshold < after:
        text += f"; crosses the threshold {threshold}: over"
    elif after <= threshold < before:
        text += f"; back to the threshold {threshold} or under"
    return text


def _walk_away_named(ctx: NpcContext, i: int) -> str:
    """The walk-away a ``StressChanged`` with cause ``walk_away`` at journal index ``i`` follows.

    Schema §7.2 / save-format: each walk-away (``InteractionWalkedAway`` or
    ``InteractionConflictAbandoned``) is followed at the same tick by ``StressChanged``
    with cause ``walk_away``. The walk-away is the one the replay paired it with
    (``TimelineIndex.stress_pairs``, as check's T003 does): with several at one tick, not
    the nearest before it. Returns e.g. ``walk-away #13, InteractionWalkedAway #491 at
    tick 36630: interaction.kael-davan_013 Active → WalkedAway``. One the replay paired
    with none is said as what it is (``_unpaired_walk_away``).
    """
    paired = ctx.index.stress_pairs.get(i)
    if paired is None:
        return _unpaired_walk_away(ctx, i)
    walk, ordinal = paired
    early = ", written after this stress change (T003)" if walk > i else ""
    return _walk_away_text(ctx, walk, ordinal) + early


def _walk_away_text(ctx: NpcContext, walk: int, ordinal: int) -> str:
    """``walk-away #13, InteractionWalkedAway #491 at tick 36630: interaction.kael-davan_013
    Active → WalkedAway``: the NPC's walk-away at journal index ``walk``, its ``ordinal``."""
    from bisect import bisect_left

    moves = ctx.index.transitions_by_npc.get(ctx.npc, [])
    k = bisect_left(moves, walk, key=lambda r: r.index)
    head = f"walk-away #{ordinal}, {ctx.index.kinds[walk]} #{walk}"
    if k == len(moves) or moves[k].index != walk:
        return head
    move = moves[k]
    source = move.source.name if move.source is not None else "(nothing)"
    return f"{head} at tick {move.tick}: {move.fact_id} {source} → {move.target.name}"


def _unpaired_walk_away(ctx: NpcContext, i: int) -> str:
    """What a walk-away ``StressChanged`` the replay paired with no walk-away follows.

    The NPC's walk-aways are its ``walk_aways`` track (each with its ordinal). One of them
    at the same tick has its stress change already (the replay pairs one each): this is
    a further one after it (or before it, written first), and says which is the
    walk-away's own. With none at its tick, it names the NPC's last walk-away before it,
    if any: "no walk-away precedes it" was said of a stress change that follows one."""
    walks = ctx.track("walk_aways")
    get = ATTRIBUTES["walk_aways"].get
    ticks = ctx.index.ticks
    tick = ticks[i]
    n = walks.count_at(i + 1)  # the NPC's walk-aways written before entry i
    at_tick = [k for k in (n - 1, n) if 0 <= k < len(walks.positions) and ticks[walks.positions[k] - 1] == tick]
    if at_tick:
        k = at_tick[0]
        walk = walks.positions[k] - 1
        own = next((j for j, (w, _) in ctx.index.stress_pairs.items() if w == walk), None)
        own_text = f" (its stress change is #{own})" if own is not None else ""
        return (f"a further stress change {'after' if walk < i else 'before'} "
                f"{_walk_away_text(ctx, walk, get(ctx.versions.values[walks.versions[k]]))}{own_text}")
    if n:
        walk = walks.positions[n - 1] - 1
        return (f"no walk-away of {ctx.name} at tick {tick}; the last before it is "
                f"{_walk_away_text(ctx, walk, get(ctx.versions.values[walks.versions[n - 1]]))}")
    return f"no walk-away of {ctx.name} precedes it"


def _walk_detail(ctx: NpcContext, i, bs, as_, before, after) -> str:
    move = _move_at(ctx, i)
    what = f"{move.fact_id} {move.source.name if move.source else '(nothing)'} → {move.target.name}; " if move else ""
    return f"{what}walk-away #{after} (walk_away_threshold {as_.interaction_tolerance.walk_away_threshold})"


def _move_at(ctx: NpcContext, i: int):
    from bisect import bisect_left

    moves = ctx.index.transitions_by_npc.get(ctx.npc, [])
    k = bisect_left(moves, i, key=lambda r: r.index)
    return moves[k] if k < len(moves) and moves[k].index == i else None


def _counter_detail(ctx: NpcContext, i, bs, as_, before, after) -> str:
    s = (ctx.data[i] or {}).get("sentiment", 0.0)
    if s > SENTIMENT_BAND:
        kind = f"sentiment {fmt_plain(s)} > {fmt_plain(SENTIMENT_BAND)}: positive"
    elif s < -SENTIMENT_BAND:
        kind = f"sentiment {fmt_plain(s)} < −{fmt_plain(SENTIMENT_BAND)}: negative"
    else:
        kind = f"sentiment {fmt_plain(s)} is within ±{fmt_plain(SENTIMENT_BAND)}: neither positive nor negative"
    return f"{kind}; {before} + 1 = {after}"


def _refs_detail(ctx: NpcContext, i, bs, as_, before, after) -> str:
    d = ctx.data[i] or {}
    kind, content = d.get("kind", "?"), d.get("content", "")
    b, a = dict(before).get(kind, ()), dict(after).get(kind, ())
    if b == a:
        return f"{content!r} is already among the {kind}: duplicates are ignored"
    if len(a) == len(b):
        return f"{kind} held {MAX_REFERENCES_PER_KIND}: the oldest, {b[0]!r}, is dropped and {content!r} added"
    return f"{content!r} added to {kind} ({len(b)} → {len(a)} of at most {MAX_REFERENCES_PER_KIND})"


DETAILS = {
    "score": _score_detail,
    "stress": _stress_detail,
    "walk_aways": _walk_detail,
    "total_interactions": _counter_detail,
    "positive_interactions": _counter_detail,
    "negative_interactions": _counter_detail,
    "shared_references": _refs_detail,
}


# ----- explanations -----
def explain_attribute(play: Playthrough, npc: int, attr: str, tick: int, limit: int, target: str) -> Explanation:
    """Why the NPC's ``attr`` (a key of ATTRIBUTES) has its value at ``tick``.

    Steps are the last ``limit`` events of the attribute's kinds up to ``tick``; the
    older ones are folded by rule from the track's prefix sums (O(log N + limit)).
    """
    ctx = NpcContext(play, npc)
    track = ctx.track(attr)
    position = ctx.index.position_for_tick(tick)
    n = track.count_at(position)
    first = max(0, n - max(0, limit))
    steps = [ctx.step(track, k, attr) for k in range(first, n)]
    folded = Folded(first, track.folded(first)) if first else None
    state = ctx.index.at(tick).npc(npc)
    value = ATTRIBUTES[attr].get(state)
    if attr == "shared_references":
        value = _refs_json(value)
    totals = track.folded(n)
    exp = Explanation(target, tick, value, "", steps, folded, ATTRIBUTES[attr].numeric, npc)
    if attr == "stress":
        exp.extra["threshold"] = state.tolerance.threshold
        exp.extra["crossings"], exp.extra["crossings_count"] = _crossings(ctx, track, n, "stress", limit)
    last = steps[-1] if steps else (ctx.step(track, n - 1, attr) if n else None)
    clamped = _clamped_prefix(ctx, track)[n] if attr == "score" else 0
    exp.summary = _summary(ctx, attr, exp, totals, state, last, n, clamped)
    return exp


#: StableId -> ``_clamped_prefix`` of the NPC's score track.
CLAMPED: Memo[int, list[int]] = Memo("clamped score events", "StableId -> prefix counts of clamped score events")


def _clamped_prefix(ctx: NpcContext, track: Track) -> list[int]:
    """Prefix counts of the score events whose result was clamped to 0..100 (cached per NPC).

    ``out[k]`` is how many of the first ``k`` events of the score track were clamped: the
    recorded delta (or walk-away penalty, schema §8.1) does not add up to the new score.
    """
    out = CLAMPED.get(ctx.index, ctx.npc)
    if out is not None:
        return out
    get = ATTRIBUTES["score"].get
    out = [0]
    for k, pos in enumerate(track.positions):
        v = track.versions[k]
        before, after = get(ctx.versions.values[v - 1]), get(ctx.versions.values[v])
        i = pos - 1
        d = ctx.data[i] or {}
        if ctx.index.kinds[i] == "RelationshipInteraction":
            change = ctx.applied_delta(i, d)
        else:
            change = -d.get("penalty", before - after)
        out.append(out[-1] + (0 if close_enough(before + change, after) else 1))
    return CLAMPED.publish(ctx.index, ctx.npc, out)


def _crossings(ctx: NpcContext, track: Track, n: int, attr: str, limit: int) -> tuple[list[dict], int]:
    """The last ``limit`` (at least one) threshold crossings up to event ``n``, and how many there were."""
    from bisect import bisect_left

    out = []
    count = bisect_left(track.crossings, n)
    for k in track.crossings[max(0, count - max(1, limit)) : count]:
        step = ctx.step(track, k, attr)
        crossing = {"journal_index": step.journal_index, "tick": step.tick, "before": step.before, "after": step.after, "direction": "up" if step.after > step.before else "down"}
        if (ctx.data[step.journal_index] or {}).get("cause") == "walk_away":
            # Schema §8.1: a walk-away adds walk_away_stress_delta; name the walk-away behind this crossing.
            crossing["walk_away"] = _walk_away_named(ctx, step.journal_index)
        out.append(crossing)
    return out, count


def _summary(ctx: NpcContext, attr: str, exp: Explanation, totals: dict, state, last: Step | None, n: int, clamped: int) -> str:
    """One sentence over the whole chain (``n`` events, ``clamped`` of them clamped), not only the steps shown."""
    a = ATTRIBUTES[attr]
    value = exp.value
    head = f"{ctx.name}'s {a.label} at tick {exp.tick}"
    if last is None:
        return f"{head} is {_show(value)}: nothing has changed it yet (initial value)."
    parts = []
    for rule, (count, total) in totals.items():
        short = rule.split(" (")[0]
        parts.append(f"{count} × {short}" + (f" ({fmt_signed(total)})" if a.numeric else ""))
    if a.numeric and last.before == last.after:
        # A clamped step (a penalty at 0) changed nothing: "last changed … (0.00 → 0.00)" said it did.
        text = f"{head} is {_show(value)}, from {', '.join(parts)}; last applied at tick {last.tick} by {last.event}, which left it at {fmt_num(last.after)}"
    else:
        text = f"{head} is {_show(value)}, from {', '.join(parts)}; last changed at tick {last.tick} by {last.event}"
        if a.numeric:
            text += f" ({fmt_num(last.before)} → {fmt_num(last.after)})"
    if attr == "score":
        if clamped:
            text += f"; {clamped} of the {n} changes {'was' if clamped == 1 else 'were'} clamped to 0..100"
    if attr == "stress":
        threshold = state.tolerance.threshold
        crossings = exp.extra.get("crossings") or []
        if state.tolerance.over_threshold:
            c = crossings[-1] if crossings else None
            text += f"; over its threshold {threshold}" + (f" since tick {c['tick']} (journal #{c['journal_index']}: {fmt_plain(c['before'])} → {fmt_plain(c['after'])})" if c else "")
            if c and "walk_away" in c:
                text += f", raised by {c['walk_away']}"
        else:
            text += f"; not over its threshold {threshold}"
    return text + "."


def _show(value) -> str:
    if isinstance(value, dict):
        return ", ".join(f"{len(v)} {k}" for k, v in value.items())
    return fmt_num(value) if isinstance(value, (int, float)) else str(value)


def explain_level(play: Playthrough, npc: int, tick: int, limit: int, target: str) -> Explanation:
    """Why the NPC is at its relationship level: each crossing of a level bound (the
    playthrough's ``Tuning.level_bounds``, 20/40/60/80 by the seed, inclusive upper
    bounds), the last one the crossing into the current band, and the score chain
    behind it (``extra["score"]``)."""
    ctx = NpcContext(play, npc)
    track = ctx.track("score")
    position = ctx.index.position_for_tick(tick)
    n = track.count_at(position)
    from bisect import bisect_left

    crossings = track.crossings[: bisect_left(track.crossings, n)]
    steps = []
    for k in crossings:
        s = ctx.step(track, k, "score")
        lb, la = ctx.tuning.level_for(s.before), ctx.tuning.level_for(s.after)
        detail = f"score {fmt_num(s.before)} → {fmt_num(s.after)} crosses {_bound_between(s.before, s.after, ctx.tuning)}: {lb.display_name} → {la.display_name}; {s.detail}"
        steps.append((s, lb, la, detail))
    cut = max(0, len(steps) - max(0, limit))
    folded = None
    if cut:
        folded = Folded(cut, {RULE_LEVEL: (cut, 0)})
    shown = [Step(s.journal_index, s.tick, s.event, RULE_LEVEL, lb.display_name, la.display_name, d) for s, lb, la, d in steps[cut:]]
    state = ctx.index.at(tick).npc(npc)
    level = ctx.tuning.level_for(state.relationship.score).display_name
    score = explain_attribute(play, npc, "score", tick, limit, target.rsplit(".", 1)[0] + ".score")
    if steps:
        s = steps[-1][0]
        summary = (
            f"{ctx.name} is {level} at tick {tick} (score {fmt_num(state.relationship.score)}) since tick {s.tick}, "
            f"when {s.event} moved the score {fmt_num(s.before)} → {fmt_num(s.after)} across {_bound_between(s.before, s.after, ctx.tuning)}."
        )
    else:
        summary = f"{ctx.name} is {level} at tick {tick} (score {fmt_num(state.relationship.score)}): the score has never left this band."
    exp = Explanation(target, tick, level, summary, shown, folded, False, npc)
    exp.extra["score"] = score.to_json()
    return exp


def _bound_between(before: float, after: float, tuning: Tuning = DEFAULT_TUNING) -> str:
    lo, hi = sorted((before, after))
    for bound, (_, level) in zip(tuning.level_bounds, LEVEL_BOUNDS):
        if lo <= bound < hi:
            return f"{bound:g} (the top of {level.display_name}, inclusive)"
    return "a level bound"

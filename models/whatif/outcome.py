"""The What if panel's Outcome as plain text: what a what-if changes, one paragraph each.

``outcome_lines(result)`` reads a ``result.WhatIf``: the levels reached, the scores at the
compared tick, the score curves that part mid-run (and whether they meet again), moved
stress crossings, the prompts to regenerate, and what would not have happened or now
would. It never leaves the Outcome blank: with none of those, it lists the differences
(a journal entry alone, a fact, a line's eligibility), or says that nothing changes.
"""

from __future__ import annotations

from narrative_debugger.models.compare.comparison import Comparison
from narrative_debugger.models.report.plain_text import one_line

#: At most this many differences (or crossing ticks) are written out.
LISTED = 10


def _at(tick: int | None) -> str:
    return "tick —" if tick is None else f"tick {tick:,}"


def _ticks(ticks: list[int]) -> str:
    """``"at ticks 14,600, 15,100"`` (the first ``LISTED``, then how many more), or "never"."""
    if not ticks:
        return "never"
    more = f" and {len(ticks) - LISTED:,} more" if len(ticks) > LISTED else ""
    return f"at tick{'s' * (len(ticks) != 1)} " + ", ".join(f"{t:,}" for t in ticks[:LISTED]) + more


def _parted_scores(comparison: Comparison, listed: set[str]) -> list[str]:
    """The NPCs (but those in ``listed``, whose end score differs) whose score curves part
    during the run, each as "slug parts at tick T (a → b), meets again at tick U and ends
    the same (s at tick E)": a kinder early conversation with an NPC clamped at 100 in the
    end differs only there (new-user trial: the Outcome stayed blank)."""
    out = []
    for slug, d in sorted(comparison.npcs.items()):
        tick = d.score_first_differs_tick
        if slug in listed or tick is None or d.a is None or d.b is None:
            continue
        a, b = comparison.scores_at(slug, tick)
        text = f"{slug} parts at tick {tick:,} ({a:.2f} → {b:.2f})"
        again = comparison.scores_meet_again(slug)
        if again is not None:
            text += f", meets again at tick {again:,} and ends the same ({d.b.score:.2f} at tick {comparison.tick_b:,})"
        else:  # apart at the end by less than the 2 decimals shown
            text += f" and ends {d.a.score:.3f} → {d.b.score:.3f} at tick {comparison.tick_b:,}"
        out.append(text)
    return out


def outcome_lines(result) -> list[str]:
    """The Outcome of ``result`` (a ``run.WhatIf``), one line a paragraph; an item of a
    list is indented by two spaces. Each line holds no line break or control character
    (``one_line``): slugs, events and reasons come from the save."""
    comparison = result.comparison
    lines = []
    if result.end_levels:
        lines.append("Levels reached (A → B): " + "; ".join(f"{slug} {v['a']} → {v['b']}" for slug, v in sorted(result.end_levels.items())))
    scores = [(slug, d.a.score, d.b.score) for slug, d in sorted(comparison.npcs.items())
              if d.a is not None and d.b is not None and round(d.a.score, 2) != round(d.b.score, 2)]
    if scores:
        lines.append(f"Scores at tick {comparison.tick_b:,} (A → B): " + "; ".join(f"{slug} {a:.2f} → {b:.2f}" for slug, a, b in scores))
    parted = _parted_scores(comparison, {slug for slug, _, _ in scores})
    if parted:
        lines.append("Scores that part mid-run (A → B): " + "; ".join(parted))
    if result.crossings:
        lines.append("Stress crosses the threshold: " + "; ".join(
            f"{slug} A {_ticks(c['a'])}, B {_ticks(c['b'])}" for slug, c in sorted(result.crossings.items())))
    if result.prompts_regenerate:
        lines.append("Prompts that need a new LLM response: " + "; ".join(
            f"{slug} from tick {p['first_tick']:,} ({p['turns']} turn{'s' * (p['turns'] != 1)})" for slug, p in sorted(result.prompts_regenerate.items())))
    if result.would_not_happen:
        lines.append(f"Would not have happened ({len(result.would_not_happen)}; lines and walk-aways kept in B as recorded, with what follows; penalties not applied in B):")
        lines += [f"  {_at(w['tick'])} #{w['journal_index']} {w['event']}: {w['reason']}" for w in result.would_not_happen]
    if result.would_happen:
        lines.append(f"Would now happen ({len(result.would_happen)}):")
        lines += [f"  {_at(w['tick'])} {w['event']}: {w['reason']}" for w in result.would_happen]
    if not lines:
        if result.changed:
            diffs = [d.text for d in comparison.differences()]
            lines.append("No level, score, prompt or decision changes; B differs in (see Differences):")
            lines += [f"  {text}" for text in diffs[:LISTED]]
            if len(diffs) > LISTED:
                lines.append(f"  … and {len(diffs) - LISTED:,} more")
        else:
            lines.append("Nothing changes: B agrees with the recorded run.")
    return [one_line(t) if not t.startswith("  ") else "  " + one_line(t[2:]) for t in lines]

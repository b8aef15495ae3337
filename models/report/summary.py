"""The Markdown summary written beside a bug-report PNG.

It names the moment precisely enough for another person to reopen it: the save
and its SHA-256, game version, tick and game time, the selected NPC's standing,
the interaction in progress, the findings up to that tick, the facts changed at
that tick, and the prompt's token table.
"""

from __future__ import annotations

from narrative_debugger.models.playthrough import Playthrough
from narrative_debugger.models.prompt.builder import PromptPreview
from narrative_debugger.models.report.meta import ViewRecord

MAX_FINDINGS = 40


def build_summary(play: Playthrough, record: ViewRecord, preview: PromptPreview | None, png_name: str) -> str:
    """Markdown text describing the view in ``record`` (ticks, score points, tokens)."""
    save = play.save
    tick = record.tick
    state = play.state_at(tick)
    lines = [
        f"# Narrative bug report: {save.label} at tick {tick}",
        "",
        f"- Screenshot: `{png_name}` (drop it on the narrative debugger, or run `narrative-debugger open-report {png_name}`, to reopen this view)",
        f"- Save: `{save.label}`, SHA-256 `{save.sha256}`",
        f"- Game version: {save.game_version or 'unknown'}; format version {save.format_version}",
        f"- Tick: {tick} (game time {save.game_time(tick)}, {save.ticks_per_second} ticks per second); saved at tick {save.saved_at_tick}",
        f"- View: {record.view}" + (f"; selected fact `{record.fact}`" if record.fact else ""),
    ]
    npc_snapshot = save.npc_by_slug(record.npc) if record.npc else None
    if npc_snapshot is not None:
        npc = state.npc(npc_snapshot.stable_id)
        name = play.content.npc_name(npc.slug)
        tol = npc.tolerance
        lines += [
            "",
            f"## NPC: {name} (`{npc.slug}`, StableId {npc.stable_id})",
            "",
            f"- Relationship: {npc.level.display_name}, score {npc.relationship.score:.2f} of 100",
            f"- Stress: {tol.current_stress} against threshold {tol.threshold}" + (" — over threshold" if tol.over_threshold else ""),
            f"- Walk-aways: {npc.walk_aways} (penalised past {npc.interaction_tolerance.walk_away_threshold})",
        ]
        current = next((m for m in state.knowledge.interactions_with(npc.stable_id) if m.interaction_state.in_progress), None)
        if current is not None:
            lines.append(f"- Interaction in progress: {current.interaction_state.name} since tick {current.started_tick} at {current.location}")
        else:
            lines.append("- Interaction in progress: none")
    findings = [f for f in play.findings if f.tick is None or f.tick <= tick]
    lines += ["", f"## Findings at or before tick {tick} ({len(findings)})", ""]
    if findings:
        lines += ["| severity | code | tick | location | message |", "|---|---|---|---|---|"]
        for f in findings[:MAX_FINDINGS]:
            lines.append(f"| {f.severity.value} | {f.code} | {'' if f.tick is None else f.tick} | `{f.location}` | {_cell(f.message)} |")
        if len(findings) > MAX_FINDINGS:
            lines.append(f"| | | | | … and {len(findings) - MAX_FINDINGS} more |")
    else:
        lines.append("None.")
    previous = state.index.position_for_tick(tick - 1) if tick > 0 else 0
    changed = state.knowledge.changed_facts(previous)
    lines += ["", f"## Facts changed at tick {tick} ({len(changed)})", ""]
    for fact_id in changed[:50]:
        fact = state.knowledge.fact(fact_id)
        if fact is None:
            continue
        extra = f", {fact.interaction.interaction_state.name}" if fact.interaction else ""
        lines.append(f"- `{fact_id}`: {fact.confidence.name}, {fact.source.name}, {fact.state.name}{extra}")
    if not changed:
        lines.append("None.")
    if preview is not None:
        lines += [
            "",
            f"## Prompt for {preview.npc} ({preview.encoding}, budget {preview.budget} tokens)",
            "",
            "| section | tokens |",
            "|---|---:|",
        ]
        lines += [f"| {s.label} | {s.tokens} |" for s in preview.sections]
        lines += [
            f"| **sum of sections** | {preview.section_sum} |",
            f"| **whole prompt** | {preview.total_tokens} |",
            "",
            f"History: {preview.history.included} of {preview.history.total} lines"
            + ("; the oldest kept line was cut" if preview.history.oldest_truncated else ""),
        ]
    lines += [
        "",
        "## Reopen",
        "",
        f"`narrative-debugger {save.label} --tick {tick}" + (f" --npc {record.npc}" if record.npc else "") + "`",
        "",
    ]
    return "\n".join(lines)


def _cell(text: str) -> str:
    return text.replace("|", "\\|").replace("\n", " ")

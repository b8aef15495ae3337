"""The Markdown summary written beside a bug-report PNG.

It names the moment precisely enough for another person to reopen it: the save
and its SHA-256, game version, tick and game time, the selected NPC's standing,
the interaction in progress, the findings up to that tick (and, apart, those about
the saved snapshot and the content, which have no tick), the facts changed at that
tick, and the prompt's token table.

Names, slugs, ids and lines come from saves and content: each goes through the
Markdown sink (``sinks.markdown``, ``markdown_code``, ``markdown_cell``), so it is
on one line and inert: no link, image, HTML, heading or table column of its own.
The commands it suggests are quoted for a POSIX shell (``sinks.shell_path``, ``sinks.shell``).
"""

from __future__ import annotations

from narrative_debugger.models.playthrough import Playthrough
from narrative_debugger.models.prompt.builder import PromptPreview
from narrative_debugger.models.report.meta import ViewRecord
from narrative_debugger.models.report.sinks import markdown, markdown_cell, markdown_code, shell, shell_path

MAX_FINDINGS = 40
_SNAPSHOT_PREFIXES = ("npcs.", "player.")  # finding locations in the saved snapshot (schema: npcs, player)


def build_summary(play: Playthrough, record: ViewRecord, preview: PromptPreview | None, png_name: str) -> str:
    """Markdown text describing the view in ``record`` (ticks, score points, tokens)."""
    save = play.save
    tick = record.tick
    state = play.state_at(tick)
    lines = [
        f"# Narrative bug report: {markdown(save.label)} at tick {tick}",
        "",
        f"- Screenshot: {markdown_code(png_name)} (drop it on the narrative debugger, or run {markdown_code('narrative-debugger open-report ' + shell_path(png_name))}, to reopen this view)",
        f"- Save: {markdown_code(save.label)}, SHA-256 `{save.sha256}`",
        f"- Game version: {markdown(save.game_version or 'unknown')}; format version {save.format_version}",
        f"- Tick: {tick} (game time {save.game_time(tick)}, {save.ticks_per_second} ticks per second); saved at tick {save.saved_at_tick}",
        f"- View: {markdown(record.view)}" + (f"; selected fact {markdown_code(record.fact)}" if record.fact else ""),
    ]
    npc_snapshot = save.npc_by_slug(record.npc) if record.npc else None
    if npc_snapshot is not None:
        npc = state.npc(npc_snapshot.stable_id)
        name = play.content.npc_name(npc.slug)
        tol = npc.tolerance
        lines += [
            "",
            f"## NPC: {markdown(name)} ({markdown_code(npc.slug)}, StableId {npc.stable_id})",
            "",
            f"- Relationship: {npc.level.display_name}, score {npc.relationship.score:.2f} of 100",
            f"- Stress: {tol.current_stress} against threshold {tol.threshold}" + (" — over threshold" if tol.over_threshold else ""),
            f"- Walk-aways: {npc.walk_aways} (penalised past {npc.interaction_tolerance.walk_away_threshold})",
        ]
        current = next((m for m in state.knowledge.interactions_with(npc.stable_id) if m.interaction_state.in_progress), None)
        if current is not None:
            lines.append(f"- Interaction in progress: {current.interaction_state.name} since tick {current.started_tick} at {markdown(current.location)}")
        else:
            lines.append("- Interaction in progress: none")
    timed = [f for f in play.findings if f.tick is not None and f.tick <= tick]
    untimed = [f for f in play.findings if f.tick is None]
    snapshot = [f for f in untimed if f.location.startswith(_SNAPSHOT_PREFIXES)]
    other = [f for f in untimed if not f.location.startswith(_SNAPSHOT_PREFIXES)]
    lines += _findings_section(f"Findings at or before tick {tick}", timed, with_tick=True)
    lines += _findings_section(f"Findings about the saved snapshot (saved at tick {save.saved_at_tick})", snapshot)
    if other:
        lines += _findings_section("Other findings without a tick (content, file)", other)
    previous = state.index.position_for_tick(tick - 1) if tick > 0 else 0
    changed = state.knowledge.changed_facts(previous)
    lines += ["", f"## Facts changed at tick {tick} ({len(changed)})", ""]
    for fact_id in changed[:50]:
        fact = state.knowledge.fact(fact_id)
        if fact is None:
            continue
        extra = f", {fact.interaction.interaction_state.name}" if fact.interaction else ""
        lines.append(f"- {markdown_code(fact_id)}: {fact.confidence.name}, {fact.source.name}, {fact.state.name}{extra}")
    if not changed:
        lines.append("None.")
    if preview is not None:
        lines += [
            "",
            f"## Prompt for {markdown(preview.npc)} ({markdown(preview.encoding)}, budget {preview.budget} tokens)",
            "",
            "| section | tokens |",
            "|---|---:|",
        ]
        lines += [f"| {markdown_cell(s.label)} | {s.tokens} |" for s in preview.sections]
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
        markdown_code(f"narrative-debugger {shell_path(save.label)} --tick {tick}" + (f" --npc {shell(record.npc)}" if record.npc else "")),
        "",
    ]
    return "\n".join(lines)


def _findings_section(title: str, findings: list, with_tick: bool = False) -> list[str]:
    """A heading with the count, then a table of at most MAX_FINDINGS findings (or "None.")."""
    lines = ["", f"## {title} ({len(findings)})", ""]
    if not findings:
        return lines + ["None."]
    head, rule = ("| severity | code | tick | location | message |", "|---|---|---|---|---|") if with_tick else \
        ("| severity | code | location | message |", "|---|---|---|---|")
    lines += [head, rule]
    for f in findings[:MAX_FINDINGS]:
        when = f" {f.tick} |" if with_tick else ""
        lines.append(f"| {f.severity.value} | {f.code} |{when} {markdown_cell(f.location, code=True)} | {markdown_cell(f.message)} |")
    if len(findings) > MAX_FINDINGS:
        lines.append(f"| | |{' |' if with_tick else ''} | … and {len(findings) - MAX_FINDINGS} more |")
    return lines

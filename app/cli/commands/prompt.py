"""``narrative-debugger prompt``: the NPC prompt at a tick, as a token table and text or as JSON."""

from __future__ import annotations

import shutil
from pathlib import Path

from narrative_debugger.app.cli.commands.common import EXIT_OK, UsageError, content_arg, open_for_query, tick_arg, write_json
from narrative_debugger.app.cli.terminal import one_line
from narrative_debugger.models.prompt.builder import PromptBuilder, PromptPreview
from narrative_debugger.models.prompt.tokens import UnknownEncodingError

NAME = "prompt"
HELP = "assemble an NPC's LLM prompt at a tick with token counts"


def add_arguments(p) -> None:
    p.add_argument("save", type=Path, metavar="SAVE")
    p.add_argument("--npc", required=True, metavar="SLUG")
    tick_arg(p)
    content_arg(p)
    p.add_argument("--encoding", metavar="NAME", help="cl100k_base (default) or o200k_base")
    p.add_argument("--format", choices=("text", "json"), default="text")


def format_prompt_text(preview: PromptPreview, label: str) -> str:
    """A per-section token table, story cards and history, then the prompt itself.

    The lines about the prompt show names from the save and content through
    ``one_line`` (a newline, escape or bidi character as ``\\uXXXX``) even when the
    output is not a terminal, as ``state`` and ``why`` do; the sections' text stays
    exactly as sent (at a terminal the CLI's stdout escapes it too)."""
    width = min(100, shutil.get_terminal_size((100, 24)).columns)
    out = [
        f"{one_line(label)}: prompt for {one_line(preview.npc)} at tick {preview.tick} ({preview.encoding})",
        f"budget {preview.budget} tokens, {preview.available} available for history and lore",
        "",
        f"  {'section':<20} {'tokens':>7}  {'share':>6}",
    ]
    for s in preview.sections:
        share = 100 * s.tokens / max(1, preview.section_sum)
        out.append(f"  {s.label:<20} {s.tokens:>7}  {share:5.1f}%")
    out.append(f"  {'sum of sections':<20} {preview.section_sum:>7}")
    out.append(f"  {'whole prompt':<20} {preview.total_tokens:>7}  ({preview.total_tokens - preview.section_sum:+d} at section joins)")
    if preview.total_tokens > preview.budget:
        out.append(f"  OVER BUDGET by {preview.total_tokens - preview.budget} tokens (the fixed sections alone leave less than the 256-token minimum for the story)")
    h = preview.history
    out.append("")
    out.append(f"history: {h.included} of {h.total} lines included{'; the oldest included line was cut to fit' if h.oldest_truncated else ''}")
    if h.included:
        out.append(
            f"  {h.budgeted} tokens budgeted (each line counted alone with its separator, as `why history:` shows); "
            f"the history sections above count {preview.history_section_tokens} as assembled"
        )
    if preview.cards:
        out.append("story cards:")
        for c in preview.cards:
            status = "included" if c.included else f"dropped ({c.reason})"
            out.append(f"  {one_line(c.id):<24} key {one_line(repr(c.keyword)):<16} {c.tokens:>5} tokens  {status}")
    else:
        out.append("story cards: none matched the history")
    out.append("")
    for s in preview.sections:
        out.append(f"───── {s.label} ({s.tokens} tokens) " + "─" * max(0, width - len(s.label) - 20))
        out.append(s.text)  # exactly as sent: no wrapping
    return "\n".join(out)


def run(args) -> int:
    session = open_for_query(args.save, args.content, args.tick, args.npc)
    play, tick = session.playthrough, session.tick
    try:
        builder = PromptBuilder(play, encoding=args.encoding)
    except UnknownEncodingError as exc:
        raise UsageError(str(exc)) from None
    preview = builder.build(args.npc, tick)
    if args.format == "json":
        write_json(preview.to_json())
    else:
        print(format_prompt_text(preview, play.save.label))
    return EXIT_OK

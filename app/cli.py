"""The ``narrative-debugger`` command line.

``narrative-debugger [SAVE]`` opens the app; the sub-commands ``check``, ``state``,
``prompt``, ``screenshot`` and ``open-report`` serve QA automation. Command names,
flags and JSON keys are a contract (shared/docs, issues): keep them exactly.
Headless commands never import Qt except ``screenshot``.
"""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path

from narrative_debugger.models.playthrough import Playthrough
from narrative_debugger.models.rules.findings import Severity
from narrative_debugger.models.timeline.state_json import state_json

EXIT_OK, EXIT_ERRORS, EXIT_UNREADABLE = 0, 1, 2
SUBCOMMANDS = ("check", "state", "prompt", "screenshot", "open-report")


class UsageError(Exception):
    """A request the command cannot serve (unknown NPC, tick beyond the save): exit 2."""


def _content_arg(p: argparse.ArgumentParser) -> None:
    p.add_argument("--content", type=Path, metavar="DIR", help="content folder (default: content/ beside the save, else the bundled sample content)")


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(prog="narrative-debugger", description="Inspect Settled Reach saves: knowledge, interactions, relationships and NPC prompts.")
    sub = parser.add_subparsers(dest="command", metavar="COMMAND")

    p = sub.add_parser("check", help="check saves against the rule catalogue (exit 0 clean, 1 errors, 2 unreadable)")
    p.add_argument("saves", nargs="+", type=Path, metavar="SAVE")
    _content_arg(p)
    p.add_argument("--format", choices=("text", "json"), default="text")

    p = sub.add_parser("state", help="print the replayed state at a tick")
    p.add_argument("save", type=Path, metavar="SAVE")
    p.add_argument("--tick", type=int, metavar="T", help="tick (default: saved_at_tick)")
    _content_arg(p)
    p.add_argument("--format", choices=("json", "text"), default="json")

    p = sub.add_parser("prompt", help="assemble an NPC's LLM prompt at a tick with token counts")
    p.add_argument("save", type=Path, metavar="SAVE")
    p.add_argument("--npc", required=True, metavar="SLUG")
    p.add_argument("--tick", type=int, metavar="T")
    _content_arg(p)
    p.add_argument("--encoding", metavar="NAME", help="cl100k_base (default) or o200k_base")
    p.add_argument("--format", choices=("text", "json"), default="text")

    p = sub.add_parser("screenshot", help="render a view of a save to PNG without a display")
    p.add_argument("save", type=Path, metavar="SAVE")
    p.add_argument("--out", type=Path, required=True, metavar="PNG")
    _content_arg(p)
    p.add_argument("--tick", type=int, metavar="T")
    p.add_argument("--npc", metavar="SLUG")
    p.add_argument("--view", choices=("knowledge", "interactions", "timelines", "prompt", "all"), default="all")
    p.add_argument("--size", default="1280x800", metavar="WxH")

    p = sub.add_parser("open-report", help="reopen the view a bug-report PNG carries")
    p.add_argument("png", type=Path, metavar="PNG")
    return parser


def build_gui_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(prog="narrative-debugger", description="Open a save in the narrative debugger (no SAVE: the bundled sample).")
    parser.add_argument("save", nargs="?", type=Path, metavar="SAVE")
    _content_arg(parser)
    parser.add_argument("--tick", type=int, metavar="T")
    parser.add_argument("--npc", metavar="SLUG")
    return parser


def _looks_like_save(word: str) -> bool:
    return word.startswith("-") or Path(word).exists() or word.lower().endswith((".json", ".json.gz", ".gz"))


def main(argv: list[str] | None = None) -> int:
    argv = list(sys.argv[1:] if argv is None else argv)
    # Text output must never crash on a terminal or pipe that is not UTF-8.
    for stream in (sys.stdout, sys.stderr):
        if hasattr(stream, "reconfigure"):
            stream.reconfigure(errors="backslashreplace")
    if argv and argv[0] not in SUBCOMMANDS and argv[0] not in ("-h", "--help") and not _looks_like_save(argv[0]):
        print(
            f"narrative-debugger: unknown command or missing file {argv[0]!r} "
            f"(commands: {', '.join(SUBCOMMANDS)}; or give a save to open the app)",
            file=sys.stderr,
        )
        return EXIT_UNREADABLE
    if not argv or argv[0] not in SUBCOMMANDS and argv[0] not in ("-h", "--help"):
        args = build_gui_parser().parse_args(argv)
        from narrative_debugger.app.main_window import run_app

        return run_app(args.save, args.content, args.tick, args.npc)
    args = build_parser().parse_args(argv)
    try:
        if args.command == "check":
            return cmd_check(args)
        if args.command == "state":
            return cmd_state(args)
        if args.command == "prompt":
            from narrative_debugger.app.prompt_cli import cmd_prompt

            return cmd_prompt(args)
        if args.command == "screenshot":
            from narrative_debugger.app.report import cmd_screenshot

            return cmd_screenshot(args)
        if args.command == "open-report":
            from narrative_debugger.app.report import cmd_open_report

            return cmd_open_report(args)
    except UsageError as exc:
        print(f"narrative-debugger {args.command}: {exc}", file=sys.stderr)
        return EXIT_UNREADABLE
    except OSError as exc:  # an output path that cannot be written, a vanished input
        where = f" {exc.filename}" if getattr(exc, "filename", None) else ""
        print(f"narrative-debugger {args.command}:{where}: {exc.strerror or exc}", file=sys.stderr)
        return EXIT_UNREADABLE
    except BrokenPipeError:
        return EXIT_OK
    build_parser().print_help()
    return EXIT_UNREADABLE


def check_content_arg(content: Path | None) -> None:
    """A ``--content`` that is not a folder is misuse (exit 2), not a finding."""
    if content is not None and not Path(content).is_dir():
        what = "is not a folder" if Path(content).exists() else "does not exist"
        raise UsageError(f"--content {content} {what}")


def warn_about_errors(play: Playthrough) -> None:
    """state/prompt work on what could be read; say on stderr when that is not everything."""
    errors = [f for f in play.findings if f.severity is Severity.ERROR]
    if errors:
        first = errors[0]
        print(
            f"narrative-debugger: warning: {play.save.label} has {len(errors)} error finding(s); "
            f"results use what could be read (first: {first.code} at {first.location}: {first.message}). "
            f"Run 'narrative-debugger check' for all of them.",
            file=sys.stderr,
        )


def cmd_check(args) -> int:
    check_content_arg(args.content)
    results = []
    status = EXIT_OK
    for path in args.saves:
        play = Playthrough.open(path, args.content)
        results.append((path, play))
        if not play.readable:
            status = EXIT_UNREADABLE
        elif play.has_errors and status == EXIT_OK:
            status = EXIT_ERRORS
    if args.format == "json":
        doc = {"files": [{"path": str(path), "findings": [f.to_json() for f in play.findings]} for path, play in results]}
        json.dump(doc, sys.stdout, ensure_ascii=False, indent=1)
        sys.stdout.write("\n")
    else:
        for path, play in results:
            print(format_check_text(path, play))
    return status


def format_check_text(path: Path, play: Playthrough) -> str:
    """A report a tester can read: one header line per save, then one line per finding."""
    errors = sum(f.severity is Severity.ERROR for f in play.findings)
    warnings = len(play.findings) - errors
    head = f"{path}: {'UNREADABLE, ' if not play.readable else ''}{errors} error{'s' * (errors != 1)}, {warnings} warning{'s' * (warnings != 1)}"
    lines = [head]
    for f in play.findings:
        tick = f" @tick {f.tick}" if f.tick is not None else ""
        lines.append(f"  {f.severity.value:7} {f.code}{tick}  {f.location}")
        lines.append(f"          {f.message}")
    return "\n".join(lines)


def open_for_query(path: Path, content: Path | None, tick: int | None, npc: str | None = None) -> tuple[Playthrough, int]:
    """Open a save for ``state``/``prompt``/``screenshot``; check the tick and the NPC
    slug (when given). Raises UsageError."""
    check_content_arg(content)
    play = Playthrough.open(path, content)
    if not play.readable:
        reasons = "; ".join(f"{f.code} {f.location}: {f.message}" for f in play.findings[:3])
        raise UsageError(f"{path} cannot be read: {reasons}")
    warn_about_errors(play)
    if tick is None:
        tick = play.save.saved_at_tick
    if tick < 0:
        raise UsageError(f"--tick must be 0 or more, not {tick}")
    if tick > play.last_tick:
        raise UsageError(f"tick {tick} is beyond the save (its ticks run from 0 to {play.last_tick})")
    if npc is not None and play.save.npc_by_slug(npc) is None:
        known = ", ".join(sorted(n.slug for n in play.save.npcs.values())) or "none"
        raise UsageError(f"no NPC {npc!r} in {path} (NPCs: {known})")
    return play, tick


def cmd_state(args) -> int:
    play, tick = open_for_query(args.save, args.content, args.tick)
    doc = state_json(play, tick)
    if args.format == "json":
        json.dump(doc, sys.stdout, ensure_ascii=False, indent=1)
        sys.stdout.write("\n")
    else:
        print(f"{play.save.label} at tick {tick} ({play.save.game_time(tick)})")
        for slug, npc in doc["npcs"].items():
            print(f"  {slug}: {npc['level']} ({npc['score']:.2f}), stress {npc['stress']}/{npc['threshold']}, walk-aways {npc['walk_aways']}, {len(npc['interactions'])} interactions")
        print(f"  {len(doc['facts'])} facts; {sum(m['eligible'] for m in doc['monologues'].values())} monologue lines eligible")
    return EXIT_OK

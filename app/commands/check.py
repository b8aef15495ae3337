"""``narrative-debugger check``: apply the rule catalogue to saves (exit 0 clean, 1 errors, 2 unreadable)."""

from __future__ import annotations

import json
import sys
from pathlib import Path

from narrative_debugger.app.commands.common import EXIT_ERRORS, EXIT_OK, EXIT_UNREADABLE, check_content_arg, content_arg
from narrative_debugger.models.playthrough import Playthrough
from narrative_debugger.models.rules.findings import Severity

NAME = "check"
HELP = "check saves against the rule catalogue (exit 0 clean, 1 errors, 2 unreadable)"


def add_arguments(p) -> None:
    p.add_argument("saves", nargs="+", type=Path, metavar="SAVE")
    content_arg(p)
    p.add_argument("--format", choices=("text", "json"), default="text")


def run(args) -> int:
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

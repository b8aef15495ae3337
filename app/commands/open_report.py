"""``narrative-debugger open-report``: reopen the view a bug-report PNG carries."""

from __future__ import annotations

from pathlib import Path

NAME = "open-report"
HELP = "reopen the view a bug-report PNG carries"


def add_arguments(p) -> None:
    p.add_argument("png", type=Path, metavar="PNG")


def run(args) -> int:
    from narrative_debugger.app.report import cmd_open_report  # Qt only for this command

    return cmd_open_report(args)

"""``narrative-debugger screenshot``: render a view of a save to PNG without a display."""

from __future__ import annotations

from pathlib import Path

from narrative_debugger.app.commands.common import content_arg
from narrative_debugger.widgets.registry import VIEW_CHOICES

NAME = "screenshot"
HELP = "render a view of a save to PNG without a display"


def add_arguments(p) -> None:
    p.add_argument("save", type=Path, metavar="SAVE")
    p.add_argument("--out", type=Path, required=True, metavar="PNG")
    content_arg(p)
    p.add_argument("--tick", type=int, metavar="T")
    p.add_argument("--npc", metavar="SLUG")
    p.add_argument("--view", choices=VIEW_CHOICES, default="all")
    p.add_argument("--size", default="1280x800", metavar="WxH")


def run(args) -> int:
    from narrative_debugger.app.report import cmd_screenshot  # Qt only for this command

    return cmd_screenshot(args)

"""``narrative-debugger screenshot``: render a view of a save to PNG without a display."""

from __future__ import annotations

from pathlib import Path

from narrative_debugger.app.commands.common import content_arg
from narrative_debugger.widgets.registry import VIEW_CHOICES

#: Default window sizes: the app's own default for one view; room for all four views
#: at their minimum size (widgets.registry) beside the docks for ``--view all``.
DEFAULT_SIZE, DEFAULT_GRID_SIZE = "1440x900", "1920x1200"

NAME = "screenshot"
HELP = "render a view of a save to PNG without a display"


def add_arguments(p) -> None:
    p.add_argument("save", type=Path, metavar="SAVE")
    p.add_argument("--out", type=Path, required=True, metavar="PNG")
    content_arg(p)
    p.add_argument("--tick", type=int, metavar="T")
    p.add_argument("--npc", metavar="SLUG")
    p.add_argument("--view", choices=VIEW_CHOICES, default="all")
    p.add_argument("--size", default=None, metavar="WxH",
                   help=f"window size (default {DEFAULT_SIZE} for one view, {DEFAULT_GRID_SIZE} for all; "
                        "at least 1040x700)")
    p.add_argument("--why", metavar="TARGET", help="also open the Explain dock on TARGET (as the why command names it)")
    p.add_argument("--compare", type=Path, metavar="B", help="show the save compared with save B (File › Compare with…)")
    p.add_argument("--compare-content", type=Path, metavar="DIR", help="compare with B (default: SAVE itself) under this content folder")


def run(args) -> int:
    from narrative_debugger.app.report import cmd_screenshot  # Qt only for this command

    return cmd_screenshot(args)

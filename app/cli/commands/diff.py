"""``narrative-debugger diff``: compare two playthroughs, or one save under two content folders.

Exit 0 when A and B agree on everything compared, 1 when they differ, 2 on misuse or
an input that cannot be read (issue 13).
"""

from __future__ import annotations

from pathlib import Path

from narrative_debugger.app.cli.commands.common import EXIT_ERRORS, EXIT_OK, UsageError, check_content_arg, content_arg, folder_arg, keep, tick_arg, unreadable_reasons, write_json
from narrative_debugger.models.compare.comparison import Comparison, compare
from narrative_debugger.models.playthrough import Playthrough
from narrative_debugger.models.report.plain_text import one_line

NAME = "diff"
HELP = "compare two saves, or one save under two content folders (exit 0 same, 1 different, 2 misuse)"


def add_arguments(p) -> None:
    p.add_argument("save_a", type=Path, metavar="A")
    p.add_argument("save_b", type=Path, nargs="?", metavar="B", help="the second save (default: A again, with --content-b)")
    content_arg(p)
    p.add_argument("--content-b", type=folder_arg("--content-b"), metavar="DIR", help="content folder for B (default: --content, else content/ beside B, else the bundled sample content)")
    tick_arg(p, "compare the states at tick T (default: each save's last tick)")
    p.add_argument("--format", choices=("text", "json"), default="text")


def open_side(path: Path, content: Path | None, flag: str, *, first: bool, warn: bool = True) -> Playthrough:
    """Open one side; an unreadable save or a content flag that is not a folder is misuse.
    ``warn``: say when the folder holds no content (once: B's is often A's)."""
    check_content_arg(content, flag, warn=warn)
    play = keep(Playthrough.open(path, content), alone=first)
    if not play.readable:
        raise UsageError(unreadable_reasons(play))
    return play


def check_tick_in_both(tick: int, play_a: Playthrough, play_b: Playthrough) -> None:
    """``--tick T`` must lie within both saves (ticks 0 to each one's ``last_tick``):
    comparing past the end of one would compare its last state as if it were at T.
    Raises UsageError naming each side that ends before T and its last tick."""
    ends = [(side, play) for side, play in (("A", play_a), ("B", play_b)) if tick > play.last_tick]
    if not ends:
        return
    fits = min(play_a.last_tick, play_b.last_tick)
    if len(ends) == 2 and play_a.save.path == play_b.save.path:  # one save under two content folders
        what, said = "the save", f"{one_line(play_a.save.label)} (A and B) ends at tick {play_a.last_tick}"
    else:
        what = "both saves" if len(ends) == 2 else "a save"
        said = "; ".join(f"{side} {one_line(play.save.label)} ends at tick {play.last_tick}" for side, play in ends)
    raise UsageError(f"--tick {tick} is beyond the end of {what}: {said}; give a tick from 0 to {fits}")


def run(args) -> int:
    if args.save_b is None and args.content_b is None:
        raise UsageError("give a second save B, or --content-b DIR to compare A under two content folders")
    play_a = open_side(args.save_a, args.content, "--content", first=True)
    content_b = args.content_b if args.content_b is not None else args.content
    play_b = open_side(args.save_b if args.save_b is not None else args.save_a, content_b, "--content-b", first=False,
                       warn=args.content_b is not None)
    if args.tick is not None:
        check_tick_in_both(args.tick, play_a, play_b)
    comparison = compare(play_a, play_b, args.tick)
    if args.format == "json":
        write_json(comparison.to_json())
    else:
        print(format_diff_text(comparison))
    return EXIT_OK if comparison.equal else EXIT_ERRORS


def format_diff_text(c: Comparison) -> str:
    """Both sides, then every difference on one line, grouped by kind."""
    out = []
    for side, tick in (("a", c.tick_a), ("b", c.tick_b)):
        s = c.side_json(side)
        # A what-if's B has no bytes of its own (sha256 ""): it is named so, not "(sha256 )".
        origin = f"sha256 {s['sha256'][:12]}" if s["sha256"] else "what if: changed in memory"
        out.append(f"{side.upper()}: {one_line(s['path'])} ({origin}) with {one_line(s['content'])}, at tick {tick}")
    differences = c.differences()
    if not differences:
        out.append("A and B agree on everything compared.")
        return "\n".join(out)
    out.append(f"{len(differences)} difference{'s' * (len(differences) != 1)}:")
    kind = None
    for d in differences:
        if d.kind != kind:
            kind = d.kind
            out.append(f"  {kind}:")
        out.append(f"    {one_line(d.text)}")
    return "\n".join(out)

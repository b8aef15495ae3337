"""``narrative-debugger screenshot``: render a view of a save to PNG without a display.

With ``--finding CODE[:N]`` it renders what a double-click on that finding shows, and
the view record carries the finding and its selection; ``check --screenshots`` uses
``finding_screenshots`` to do that for every finding of a save.
"""

from __future__ import annotations

import argparse
import os
import stat
import sys
import tempfile
import time
from pathlib import Path

from narrative_debugger.app.cli.commands.common import UsageError, content_arg, folder_arg, open_for_query, tick_arg
from narrative_debugger.models.boundary import U32, is_int_text, parse_int
from narrative_debugger.widgets.registry import VIEW_CHOICES

#: Default window sizes: the app's own default for one view; room for all four views
#: at their minimum size (widgets.registry) beside the docks for ``--view all``.
DEFAULT_SIZE, DEFAULT_GRID_SIZE = "1440x900", "1920x1200"

NAME = "screenshot"
HELP = "render a view of a save to PNG without a display"


def add_arguments(p) -> None:
    p.add_argument("save", type=Path, metavar="SAVE")
    p.add_argument("--out", type=_out_arg, required=True, metavar="PNG", help="the PNG to write, or a folder to write it in (the summary .md goes beside it)")
    content_arg(p)
    tick_arg(p)
    p.add_argument("--npc", metavar="SLUG")
    p.add_argument("--view", choices=VIEW_CHOICES, default=None,
                   help="the view to show (default: all, or with --finding the view its culprit lands in)")
    p.add_argument("--finding", metavar="CODE[:N]",
                   help="render what a double-click on the N-th finding of CODE shows (default N = 1)")
    p.add_argument("--size", default=None, metavar="WxH",
                   help=f"window size (default {DEFAULT_SIZE} for one view, {DEFAULT_GRID_SIZE} for all; "
                        "at least 1040x700)")
    p.add_argument("--why", metavar="TARGET", help="also open the Explain dock on TARGET (as the why command names it)")
    p.add_argument("--compare", type=Path, metavar="B", help="show the save compared with save B (File › Compare with…)")
    p.add_argument("--compare-content", type=folder_arg("--compare-content"), metavar="DIR", help="compare with B (default: SAVE itself) under this content folder")


def _out_arg(text: str) -> Path:
    """``--out`` as given; an empty one is misuse (argparse exits 2)."""
    if not text.strip():
        raise argparse.ArgumentTypeError("must name a PNG file or a folder, not an empty string")
    return Path(text)


def out_folder_and_stem(out: Path) -> tuple[Path, str]:
    """The folder and file stem ``--out`` names ("" for a folder: a name is made), checked
    before anything is drawn: an existing file that is not regular (``/dev/null``,
    ``/dev/full``, a FIFO) and a folder that is missing or cannot take a new file
    (``/proc``, read-only) are refused.

    Raises:
        UsageError: naming ``out`` as the user gave it.
    """
    from narrative_debugger.app.window.report import PNG_SUFFIX
    from narrative_debugger.models.fileio import kind_of

    try:
        mode = os.stat(out).st_mode
    except OSError:
        mode = None
    if mode is not None and not stat.S_ISDIR(mode) and not stat.S_ISREG(mode):
        raise UsageError(f"--out {out}: is {kind_of(mode)}, not a PNG file or a folder")
    folder, stem = (out, "") if mode is not None and stat.S_ISDIR(mode) else (out.parent, out.name[: -len(PNG_SUFFIX)] if out.name.lower().endswith(PNG_SUFFIX) else out.name)
    if not folder.is_dir():
        raise UsageError(f"--out {out}: the folder {folder} does not exist")
    try:
        with tempfile.TemporaryFile(dir=folder):
            pass
    except OSError as exc:
        raise UsageError(f"--out {out}: cannot write in the folder {folder} ({exc.strerror or exc})") from None
    return folder, stem


def run(args) -> int:
    """Render offscreen, write the PNG (with its view record) and the summary beside it."""
    # Qt only for this command: the other commands never import it.
    from narrative_debugger.app.window.report import show_finding, write_report
    from PySide6.QtWidgets import QApplication

    if not os.environ.get("DISPLAY") and not os.environ.get("WAYLAND_DISPLAY"):
        os.environ.setdefault("QT_QPA_PLATFORM", "offscreen")
    view = args.view or ("all" if args.finding is None else None)
    width, height = _parse_size(args.size or (DEFAULT_GRID_SIZE if view == "all" else DEFAULT_SIZE))
    _quiet_platform_notes()
    out = Path(args.out)
    folder, stem = out_folder_and_stem(out)
    session = open_for_query(args.save, args.content, args.tick, args.npc)
    play, tick = session.playthrough, session.tick
    finding = pick_finding(play, args.finding) if args.finding is not None else None  # "" is a malformed spec, not none
    npc_id = session.npc if args.npc is not None else None
    why = getattr(args, "why", None)
    if why:
        from narrative_debugger.models.explain import UnknownTarget, explain

        try:
            explain(play, why, tick, 1)
        except UnknownTarget as exc:
            raise UsageError(f"--why: {exc}") from None
    window = fresh_window(play, Path(args.save), args.content, (width, height), tick=tick, npc=npc_id)
    compare_b = getattr(args, "compare", None)
    compare_content = getattr(args, "compare_content", None)
    if compare_b is not None or compare_content is not None:
        if compare_content is not None and not Path(compare_content).is_dir():
            raise UsageError(f"--compare-content {compare_content} is not a folder")
        window.compare.compare_with(Path(compare_b or args.save), compare_content, wait=True, quiet=True)
        if window.session.comparison is None:
            raise UsageError(f"cannot compare: {window.compare.last_error or 'the comparison did not finish'}")
    if view == "all":
        window.set_grid(True)
    elif view is not None:
        window.session.set_view(view)
    if finding is not None:
        show_finding(window, finding)
    wait_for_prompt(window)
    if why:
        window.session.explain(why)
        panel = window.panels["explain"][0]
        while panel.explanation is None or panel.explanation.target != why:
            panel.wait()
            QApplication.processEvents()
        QApplication.processEvents()
    try:
        png_path, md_path, _ = write_report(window, folder, stem or None)
    except OSError as exc:  # the folder changed since it was checked: name the user's path, not a temp file
        raise UsageError(f"--out {out}: cannot write the report ({exc.strerror or exc})") from None
    shot = window.size()
    if (shot.width(), shot.height()) != (width, height):
        print(f"narrative-debugger screenshot: note: the window needs at least {shot.width()}x{shot.height()}; drew it at that size", file=sys.stderr)
    window.close()
    print(png_path)
    print(md_path)
    return 0


def pick_finding(play, spec: str):
    """The finding ``CODE[:N]`` names: the N-th (1-based, default 1) finding of CODE in
    ``play.findings`` order (the order ``check`` prints).

    Raises:
        UsageError: a malformed spec, or no such finding.
    """
    code, _, nth = spec.partition(":")
    code = code.strip().upper()
    if code and not nth:
        n = 1
    elif code and is_int_text(nth, U32) and parse_int(nth, U32) >= 1:
        n = parse_int(nth, U32)
    else:  # "" too: it drew the default view as if no finding had been asked for
        raise UsageError(f"--finding {spec or repr(spec)}: expected CODE or CODE:N with N = 1, 2, ...")
    matches = [f for f in play.findings if f.code == code]
    if len(matches) < n:
        codes = sorted({f.code for f in play.findings})
        have = f"{len(matches)} {code} finding(s)" if matches else f"no {code} finding"
        raise UsageError(f"--finding {spec}: {play.save.label} has {have} (codes found: {', '.join(codes) or 'none'})")
    return matches[n - 1]


def fresh_window(play, path: Path, content: Path | None, size: tuple[int, int], *, tick: int | None = None, npc: int | None = None):
    """A new headless main window (default layout, nothing selected but what a fresh
    open selects) of ``size`` (width, height) showing ``play`` at ``tick`` (u64, default
    ``saved_at_tick``) with ``npc`` (a StableId) selected: the clean state every
    ``screenshot`` starts from, and every shot of ``check --screenshots`` too."""
    from narrative_debugger.app.window.main_window import MainWindow, make_app
    from PySide6.QtWidgets import QApplication

    make_app()
    window = MainWindow(persist=False)
    window.resize(*size)
    window.show()
    QApplication.processEvents()
    window.show_playthrough(play, Path(path), content, tick=tick, npc=npc)
    return window


def close_window(window) -> None:
    """Close a window from ``fresh_window`` and free it now (its workers stopped, its
    widgets deleted), so a batch of shots does not pile windows up."""
    import pyqtgraph as pg
    from PySide6.QtCore import QCoreApplication, QEvent

    # pyqtgraph gives each plot a "Plot Options" menu without a parent: it outlived the
    # window (~2.5 MB a shot with what it holds), so the plots' menus go with it.
    for view in window.findChildren(pg.GraphicsView):
        for item in view.items():
            if isinstance(item, pg.PlotItem) and item.ctrlMenu is not None:
                item.ctrlMenu.deleteLater()
    window.close()
    window.deleteLater()
    QCoreApplication.sendPostedEvents(None, QEvent.DeferredDelete)


def finding_screenshots(path: Path, content: Path | None, folder: Path, limit: int) -> list[Path]:
    """``check --screenshots``: one PNG per finding of a save (its first ``limit``), each what
    a double-click on it shows, with the finding and selection in its view record.

    Every shot starts in a fresh window (``fresh_window``), exactly as ``screenshot
    --finding`` does: nothing selected for one finding (an NPC, a fact, a view, a
    filter) carries over to the next. The save is read and checked once.

    Returns:
        The PNGs written, under fresh names ``<save>-<CODE>-<n>.png`` (never overwriting).
    """
    from narrative_debugger.app.window.report import PNG_SUFFIX, current_record, grab_png, show_finding
    from narrative_debugger.models.playthrough import Playthrough
    from narrative_debugger.models.report.meta import embed_record, safe_file_stem, write_new_file

    play = Playthrough.open(path, content)
    if not play.readable or not play.findings or limit <= 0:
        return []
    if not os.environ.get("DISPLAY") and not os.environ.get("WAYLAND_DISPLAY"):
        os.environ.setdefault("QT_QPA_PLATFORM", "offscreen")
    _quiet_platform_notes()
    base = safe_file_stem(Path(path).name.lstrip(".").split(".")[0])
    counts: dict[str, int] = {}
    written = []
    for finding in play.findings[:limit]:
        counts[finding.code] = counts.get(finding.code, 0) + 1
        window = fresh_window(play, Path(path), content, _parse_size(DEFAULT_SIZE))
        try:
            show_finding(window, finding)
            wait_for_prompt(window)
            record = current_record(window)  # before the grab, as write_report does
            png, _size = grab_png(window)
        finally:
            close_window(window)
        written.append(write_new_file(folder, f"{base}-{finding.code}-{counts[finding.code]}", PNG_SUFFIX, embed_record(png, record)))
    return written


def _parse_size(text: str) -> tuple[int, int]:
    shown = repr(text if len(text) <= 40 else text[:40] + "…")
    parts = text.lower().split("x")
    if len(parts) != 2 or not all(p.isascii() and p.isdigit() for p in parts):
        raise UsageError(f"--size must look like 1280x800 (WIDTHxHEIGHT in pixels), not {shown}")
    try:
        w, h = (parse_int(v, U32) for v in parts)
    except ValueError:  # ConversionError too: bounded before int()
        raise UsageError(f"--size must be between 200x200 and 8000x8000, not {shown}") from None
    if not (200 <= w <= 8000 and 200 <= h <= 8000):
        raise UsageError(f"--size must be between 200x200 and 8000x8000, not {shown}")
    return w, h


def wait_for_prompt(window, timeout_s: float = 60.0) -> None:
    """Process events until the prompt view shows the session's NPC at the session tick."""
    from PySide6.QtWidgets import QApplication

    view = window.views.get("prompt")
    session = window.session
    npc = session.playthrough.save.npcs.get(session.npc) if session.npc is not None else None
    deadline = time.monotonic() + timeout_s
    while npc is not None and time.monotonic() < deadline:
        current = getattr(view, "current_preview", None)
        if current is not None and current.npc == npc.slug and current.tick == session.tick:
            break
        QApplication.processEvents()
        time.sleep(0.01)
    for _ in range(5):
        QApplication.processEvents()


def _quiet_platform_notes() -> None:
    """Drop the offscreen platform's harmless 'does not support propagateSizeHints' notes."""
    from PySide6.QtCore import qInstallMessageHandler

    def handler(_kind, _context, message: str) -> None:
        if "propagateSizeHints" not in message:
            sys.stderr.write(message + "\n")

    qInstallMessageHandler(handler)

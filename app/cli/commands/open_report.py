"""``narrative-debugger open-report``: reopen the view a bug-report PNG carries."""

from __future__ import annotations

import sys
from pathlib import Path

from narrative_debugger.app.cli.desktop import EXIT_INTERRUPTED, SigintQuit, no_display_reason
from narrative_debugger.models.report.meta import ReportError, read_record_file

NAME = "open-report"
HELP = "reopen the view a bug-report PNG carries"


def add_arguments(p) -> None:
    p.add_argument("png", type=Path, metavar="PNG")


def run(args) -> int:
    """Open the app on the view the PNG carries.

    Exit 2 when the PNG carries no readable view or there is no display (said on
    stderr, before Qt would abort), 130 when Ctrl+C closed the app.
    """
    try:
        read_record_file(Path(args.png))
    except ReportError as exc:
        print(f"narrative-debugger open-report: {args.png}: {exc}", file=sys.stderr)
        return 2
    reason = no_display_reason()
    if reason:
        print(f"narrative-debugger open-report: {reason}", file=sys.stderr)
        return 2
    # Qt only for this command: the other commands never import it.
    from narrative_debugger.app.window.main_window import MainWindow, make_app
    from narrative_debugger.app.window.report import open_report

    app = make_app()
    window = MainWindow()
    window.show()
    if not open_report(window, Path(args.png)):
        return 2
    with SigintQuit(app) as guard:
        status = app.exec()
    return EXIT_INTERRUPTED if guard.interrupted else status

"""The ``narrative-debugger`` command line.

``narrative-debugger [SAVE]`` opens the app; the sub-commands (``app.cli.commands``, one
module each) serve QA automation. Command names, flags and JSON keys are a contract
(shared/docs, issues): keep them exactly. Headless commands never import Qt.

Ctrl+C ends any command with exit status 130 and one line on stderr, never a
traceback, and closes the app's windows cleanly (``app.cli.desktop``).
"""

from __future__ import annotations

import argparse
import gc
import os
import signal
import sys
import threading
from pathlib import Path


def _interrupted_while_starting(_signum, _frame) -> None:
    """Ctrl+C while the commands are imported: nothing to clean up yet, no traceback."""
    os.write(2, b"narrative-debugger: interrupted\n")
    os._exit(128 + signal.SIGINT)


_starting = threading.current_thread() is threading.main_thread()
_previous_sigint = signal.signal(signal.SIGINT, _interrupted_while_starting) if _starting else None

from narrative_debugger.app.cli.commands import COMMANDS  # noqa: E402 - after the start-up Ctrl+C handler
from narrative_debugger.app.cli.commands.common import EXIT_OK, EXIT_UNREADABLE, UsageError, content_arg, tick_arg, version  # noqa: E402
from narrative_debugger.app.cli.desktop import EXIT_INTERRUPTED, no_display_reason  # noqa: E402
from narrative_debugger.app.cli.streams import OutputFailed, Stderr, Stdout, finish, guard_descriptors, say, silence_stdout  # noqa: E402
from narrative_debugger.app.cli.terminal import TerminalSafe  # noqa: E402
from narrative_debugger.models.report.json_text import NonFiniteNumber  # noqa: E402

if _starting:
    signal.signal(signal.SIGINT, _previous_sigint if _previous_sigint is not None else signal.default_int_handler)

BY_NAME = {command.NAME: command for command in COMMANDS}
SUBCOMMANDS = tuple(BY_NAME)


def _version_flag(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--version", action="version", version=f"%(prog)s {version()}")


def build_parser() -> argparse.ArgumentParser:
    """The sub-command parser, built from the command registry."""
    parser = argparse.ArgumentParser(prog="narrative-debugger", description="Inspect Settled Reach saves: knowledge, interactions, relationships and NPC prompts.")
    _version_flag(parser)
    sub = parser.add_subparsers(dest="command", metavar="COMMAND", required=True)
    for command in COMMANDS:
        command.add_arguments(sub.add_parser(command.NAME, help=command.HELP))
    return parser


def build_gui_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(prog="narrative-debugger", description="Open a save in the narrative debugger (no SAVE: the bundled sample).")
    _version_flag(parser)
    parser.add_argument("save", nargs="?", type=Path, metavar="SAVE")
    content_arg(parser)
    tick_arg(parser)
    parser.add_argument("--npc", metavar="SLUG")
    return parser


def _looks_like_save(word: str) -> bool:
    return word.startswith("-") or Path(word).exists() or word.lower().endswith((".json", ".json.gz", ".gz"))


def main(argv: list[str] | None = None) -> int:
    """Run the command line; return the exit status (130 after Ctrl+C; 2 when stdout
    cannot be written: ``app.cli.streams``)."""
    guard_descriptors()
    try:
        return _main(argv)
    except KeyboardInterrupt:
        say("narrative-debugger: interrupted")
        return EXIT_INTERRUPTED


def entry() -> None:
    """The ``narrative-debugger`` console script: ``main``, then the process ends at once.

    A command's output is flushed, then ``os._exit`` ends the process without freeing
    what it read object by object (``commands.common.keep``: a large save's cost is
    felt). After the app's window has run, the interpreter exits as
    usual so Qt and the settings shut down in order.
    """
    global _ONE_SHOT
    _ONE_SHOT = True
    try:
        code = main()
    except SystemExit as exc:  # argparse after --help, --version or a usage error
        if not (exc.code is None or isinstance(exc.code, int)):
            raise
        code = exc.code or 0
    if _GUI_RAN:
        sys.exit(code)
    os._exit(finish(code, EXIT_UNREADABLE))


#: Set once the app's window has run in this process (``entry`` then exits normally).
_GUI_RAN = False

#: Set by ``entry``: this process runs one command and ends with ``os._exit``.
_ONE_SHOT = False

#: Commands that run the app's window (offscreen): they keep the collector, as the window does.
_WINDOWED = frozenset({"screenshot"})


def _without_collector(command: str) -> None:
    """A headless command run by ``entry`` does its work with the cyclic garbage collector
    off, as the app's child processes do (``app.workers.engine``). What it reads is held
    until ``os._exit`` (``commands.common.keep``), and an opened save is freed by
    reference counts alone (it holds no cycle), so the collector's passes found nothing
    to free: they walked every object the save made, again and again as it grew, a
    quarter of a 1 000 000-event ``check`` (6.7 s -> 4.9 s) at the same peak memory
    (414 MB; a 300 000-entry save of malformed entries, 272 MB both ways). The window
    keeps the collector: it runs for hours. Tests call ``main``, not ``entry``."""
    if _ONE_SHOT and command not in _WINDOWED:
        gc.disable()


def run_gui(save: Path | None, content: Path | None, tick: int | None, npc: str | None) -> int:
    """Open the app's window and run its event loop: exit 2 with a message when there is
    no display, 130 when Ctrl+C closed it."""
    reason = no_display_reason()
    if reason:
        print(f"narrative-debugger: {reason}", file=sys.stderr)
        return EXIT_UNREADABLE
    from narrative_debugger.app.cli.desktop import SigintQuit
    from narrative_debugger.app.window.main_window import make_app, run_app

    global _GUI_RAN
    _GUI_RAN = True
    with SigintQuit(make_app()) as guard:
        status = run_app(save, content, tick, npc)
    return EXIT_INTERRUPTED if guard.interrupted else status


def _main(argv: list[str] | None) -> int:
    # Text output must never crash on a terminal or pipe that is not UTF-8.
    for stream in (sys.stdout, sys.stderr):
        if hasattr(stream, "reconfigure"):
            stream.reconfigure(errors="backslashreplace")
    # Nor drive a terminal: messages always, results when they go to a terminal
    # (a pipe or file gets the bytes exactly; JSON escapes controls itself).
    stdout, stderr = sys.stdout, sys.stderr
    sys.stderr = Stderr(TerminalSafe(stderr))
    sys.stdout = Stdout(TerminalSafe(stdout) if stdout.isatty() else stdout)
    try:
        return _dispatch(list(sys.argv[1:] if argv is None else argv))
    except OutputFailed as exc:  # stdout closed, full or failing (app.cli.streams): one line, exit 2
        say(f"narrative-debugger: {exc}")
        return EXIT_UNREADABLE
    finally:
        sys.stdout, sys.stderr = stdout, stderr


def _dispatch(argv: list[str]) -> int:
    if argv and argv[0] not in SUBCOMMANDS and argv[0] not in ("-h", "--help", "--version") and not _looks_like_save(argv[0]):
        print(
            f"narrative-debugger: unknown command or missing file {argv[0]!r} "
            f"(commands: {', '.join(SUBCOMMANDS)}; or give a save to open the app)",
            file=sys.stderr,
        )
        return EXIT_UNREADABLE
    gui = not argv or argv[0] not in SUBCOMMANDS and argv[0] not in ("-h", "--help", "--version")
    try:
        args = (build_gui_parser() if gui else build_parser()).parse_args(argv)
    except UsageError as exc:  # a bad number (``number_arg``): one line, exit 2
        print(f"narrative-debugger{'' if gui else ' ' + argv[0]}: {exc}", file=sys.stderr)
        return EXIT_UNREADABLE
    if gui:
        return run_gui(args.save, args.content, args.tick, args.npc)
    _without_collector(args.command)
    try:
        code = BY_NAME[args.command].run(args)
        sys.stdout.flush()  # a closed pipe shows here, not in the interpreter's exit flush
        return code
    except UsageError as exc:
        print(f"narrative-debugger {args.command}: {exc}", file=sys.stderr)
        return EXIT_UNREADABLE
    except NonFiniteNumber as exc:  # the readers stop these (F002); never half a document
        print(f"narrative-debugger {args.command}: cannot write JSON: {exc}", file=sys.stderr)
        return EXIT_UNREADABLE
    except BrokenPipeError:  # the reader went away (| head) past the guard: status unknown
        silence_stdout()
        return EXIT_OK
    except OSError as exc:  # an output path that cannot be written, a vanished input
        where = f" {exc.filename}:" if getattr(exc, "filename", None) else ""
        print(f"narrative-debugger {args.command}:{where} {exc.strerror or exc}", file=sys.stderr)
        return EXIT_UNREADABLE

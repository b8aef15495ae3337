"""``narrative-debugger check``: apply the rule catalogue to saves (exit 0 clean, 1 errors, 2 unreadable).

Each save is opened, checked and dropped; only its findings are kept
(``FileResult``), so memory does not grow with the number of files. With
``--jobs N`` the saves are checked in N processes and each file's result is printed
as soon as it is done (text, github); JSON is streamed in input order and is the
same with or without ``--jobs``; SARIF and JUnit are one document written at the end.
"""

from __future__ import annotations

import os
import signal
import sys
from concurrent.futures import FIRST_COMPLETED, ProcessPoolExecutor, wait
from contextlib import closing
from pathlib import Path

from narrative_debugger.app.cli.commands.common import EXIT_ERRORS, EXIT_OK, EXIT_UNREADABLE, UsageError, check_content_arg, content_arg, keep, number_arg, version
from narrative_debugger.app.cli.desktop import EXIT_INTERRUPTED
from narrative_debugger.models.boundary import U32
from narrative_debugger.models.playthrough import Playthrough
from narrative_debugger.models.timeline.index import CHECKS
from narrative_debugger.models.report.check_formats import FileResult, JsonStream, github_lines, junit, sarif
from narrative_debugger.models.report.json_text import dump_strict
from narrative_debugger.models.report.plain_text import one_line

NAME = "check"
HELP = "check saves against the rule catalogue (exit 0 clean, 1 errors, 2 unreadable)"
FORMATS = ("text", "json", "sarif", "junit", "github")
#: ``--screenshots`` writes at most this many PNGs in one run.
MAX_SCREENSHOTS = 200


def add_arguments(p) -> None:
    p.add_argument("saves", nargs="+", type=Path, metavar="SAVE")
    content_arg(p)
    p.add_argument("--format", choices=FORMATS, default="text",
                   help="text (default), json, sarif (SARIF 2.1.0), junit (JUnit XML) or github (workflow annotations)")
    p.add_argument("--jobs", "-j", type=number_arg("--jobs", U32, minimum=1), default=1, metavar="N", help="check N saves at once in separate processes (default 1)")
    p.add_argument("--screenshots", type=Path, metavar="DIR",
                   help=f"also write one PNG per finding into DIR, what a double-click on it shows (at most {MAX_SCREENSHOTS})")


def check_file(path: Path, content: Path | None) -> FileResult:
    """Open and check one save, keeping only what ``check`` prints (runs in a worker process with --jobs):
    its replay records only what the checks read (``Recording`` ``CHECKS``)."""
    play = keep(Playthrough.open(path, content, recording=CHECKS))
    return FileResult(Path(path), play.readable, play.content.root, list(play.findings))


def results_in_order(paths: list, content: Path | None, jobs: int, work=check_file):
    """Yield ``(input position, work(path, content))`` as each file is done (completion
    order with jobs > 1). ``work`` is ``check_file`` for ``check``; ``corpus`` passes its
    own (a module-level function, so that a worker process can be handed it)."""
    if jobs <= 1 or len(paths) <= 1:
        for k, path in enumerate(paths):
            yield k, work(path, content)
        return
    pool = ProcessPoolExecutor(max_workers=min(jobs, len(paths)), initializer=_ignore_ctrl_c)
    try:
        pending = {pool.submit(work, path, content): k for k, path in enumerate(paths)}
        while pending:
            done, _ = wait(pending, return_when=FIRST_COMPLETED)
            for future in done:
                yield pending.pop(future), future.result()
    except BaseException as exc:  # Ctrl+C (exit 130), a closed pipe: stop the workers now, not after the queue
        interrupted = isinstance(exc, KeyboardInterrupt)
        if interrupted:
            try:
                _ignore_ctrl_c()  # a second Ctrl+C must not interrupt the clean-up below
            except ValueError:  # not the main thread: no signal handlers there
                pass
        workers = list((getattr(pool, "_processes", None) or {}).values())  # shutdown() forgets them
        pool.shutdown(wait=False, cancel_futures=True)
        for process in workers:
            process.terminate()
        if interrupted:
            _exit_interrupted()
        raise
    finally:
        pool.shutdown(wait=True, cancel_futures=True)


def _exit_interrupted() -> None:
    """Say "interrupted", flush and leave with 130 at once: the executor's manager thread is
    still alive, and a normal exit would join it in ``threading._shutdown``, where a late
    KeyboardInterrupt prints "Exception ignored in: <module 'threading'>" and a traceback."""
    for stream in (sys.stdout, sys.stderr):
        try:
            stream.flush()
        except (OSError, ValueError):
            pass
    os.write(2, b"narrative-debugger: interrupted\n")
    os._exit(EXIT_INTERRUPTED)


def _ignore_ctrl_c() -> None:
    """Workers leave Ctrl+C to the parent, which stops them (no traceback per worker)."""
    signal.signal(signal.SIGINT, signal.SIG_IGN)


def run(args) -> int:
    check_content_arg(args.content)
    if args.screenshots is not None and args.screenshots.exists() and not args.screenshots.is_dir():
        raise UsageError(f"--screenshots {args.screenshots} is not a folder")
    with_findings: list[tuple[int, Path, int]] = []  # --screenshots: (input position, save, findings)
    status = EXIT_OK
    kept: list[FileResult | None] = [None] * len(args.saves)  # sarif/junit: one document at the end
    waiting: dict[int, FileResult] = {}  # json: results done early, until their turn
    next_out = 0
    stream = JsonStream(sys.stdout) if args.format == "json" else None
    results = results_in_order(list(args.saves), args.content, args.jobs)
    with closing(results):  # an interrupt here stops the workers at once (results_in_order)
        for k, result in results:
            if result.readable and result.findings:
                with_findings.append((k, result.path, len(result.findings)))
            if not result.readable:
                status = EXIT_UNREADABLE
            elif result.errors and status == EXIT_OK:
                status = EXIT_ERRORS
            if args.format == "text":
                print(format_check_text(result), flush=True)
            elif args.format == "github":
                for line in github_lines(result):
                    print(line)
                sys.stdout.flush()
            elif stream is not None:
                waiting[k] = result
                while next_out in waiting:
                    stream.add(waiting.pop(next_out))
                    next_out += 1
            else:
                kept[k] = result
    if stream is not None:
        stream.close()
    elif args.format == "sarif":
        dump_strict(sarif([r for r in kept if r is not None], version()), sys.stdout)
        sys.stdout.write("\n")
    elif args.format == "junit":
        sys.stdout.write(junit([r for r in kept if r is not None]))
    if args.screenshots is not None:
        write_screenshots(sorted(with_findings), args.content, args.screenshots)
    return status


def write_screenshots(saves: list[tuple[int, Path, int]], content: Path | None, folder: Path) -> int:
    """``--screenshots``: one PNG per finding, in input order, at most ``MAX_SCREENSHOTS``;
    what was written (and what the cap left out) is said on stderr. Returns the count."""
    from narrative_debugger.app.cli.commands.screenshot import finding_screenshots  # Qt only for this option

    folder.mkdir(parents=True, exist_ok=True)
    total = sum(n for _, _, n in saves)
    written = 0
    for _, path, _ in saves:
        if written >= MAX_SCREENSHOTS:
            break
        written += len(finding_screenshots(path, content, folder, MAX_SCREENSHOTS - written))
    note = f"; the first {MAX_SCREENSHOTS} of {total} findings only (the cap)" if total > written else ""
    print(f"narrative-debugger check: wrote {written} screenshot(s) to {folder}{note}", file=sys.stderr)
    return written


def format_check_text(result: FileResult) -> str:
    """A report a tester can read: one header line per save, then one line per finding."""
    errors = result.errors
    warnings = len(result.findings) - errors
    head = f"{one_line(result.path)}: {'UNREADABLE, ' if not result.readable else ''}{errors} error{'s' * (errors != 1)}, {warnings} warning{'s' * (warnings != 1)}"
    lines = [head]
    for f in result.findings:
        tick = f" @tick {f.tick}" if f.tick is not None else ""
        lines.append(f"  {f.severity.value:7} {f.code}{tick}  {one_line(f.location)}")
        lines.append(f"          {one_line(f.message)}")
    return "\n".join(lines)

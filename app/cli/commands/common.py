"""What every command shares: exit codes, usage errors, opening a save for a query."""

from __future__ import annotations

import sys
from importlib import metadata
from pathlib import Path

from narrative_debugger.models.boundary import NUMERAL, U64, ConversionError, IntType, is_int_text, parse_int
from narrative_debugger.models.content.loader import not_content_reason
from narrative_debugger.models.playthrough import Playthrough
from narrative_debugger.models.rules.findings import Severity
from narrative_debugger.models.session import Session, TickOutOfRange, UnknownNpc
from narrative_debugger.models.timeline.index import EVERYTHING, Recording
from narrative_debugger.models.report.json_text import dumps_indented
from narrative_debugger.models.report.plain_text import one_line

EXIT_OK, EXIT_ERRORS, EXIT_UNREADABLE = 0, 1, 2


def version() -> str:
    """The installed distribution's version (importlib.metadata), or ``unknown`` when not installed."""
    try:
        return metadata.version("narrative-debugger")
    except metadata.PackageNotFoundError:
        return "unknown"


#: The playthroughs of the command running now, kept until the process exits (``keep``).
_KEPT: list[Playthrough] = []


def keep(play: Playthrough, *, alone: bool = True) -> Playthrough:
    """Hold ``play`` until the command line exits (``cli.entry`` ends the process with
    ``os._exit``), so a large playthrough is never freed object by object: that is a
    noticeable part of a ``check`` or ``state`` on a large save. ``alone`` lets go of
    what was kept before (``check`` of many saves keeps one at a time)."""
    if alone:
        _KEPT.clear()
    _KEPT.append(play)
    return play


class UsageError(Exception):
    """A request the command cannot serve (unknown NPC, tick beyond the save): exit 2."""


def number_arg(flag: str, kind: IntType = U64, minimum: int | None = None):
    """An argparse ``type`` for a whole-number flag (``boundary.parse_int``): ASCII
    digits of ``kind`` (a tick is a u64), at least ``minimum``.

    A bad value raises UsageError out of ``parse_args`` (argparse lets through what
    is not a ValueError), so the command line prints one line naming the flag and
    exits 2, never argparse's usage block or a traceback. A whole number below
    ``minimum`` (``-1`` too) is ``FLAG must be MINIMUM or more, not VALUE``.
    """

    def convert(text: str) -> int:
        try:
            value = parse_int(text, kind)
        except ConversionError as exc:
            if minimum is not None and is_int_text(text, NUMERAL) and int(text) < minimum:
                # '-1' is below the flag's range, not only the type's ("a u32 is 0 or more"
                # said of --jobs, which refuses 0 too: trial 50)
                raise UsageError(f"{flag} must be {minimum} or more, not {text}") from None
            raise UsageError(f"{flag}: {exc}") from None
        if minimum is not None and value < minimum:
            raise UsageError(f"{flag} must be {minimum} or more, not {value}")
        return value

    convert.__name__ = f"{kind.name} number"  # argparse names the type in its own messages
    return convert


def tick_arg(p, help: str | None = None) -> None:
    """Add ``--tick T``: a u64 tick (save-format §5)."""
    p.add_argument("--tick", type=number_arg("--tick", U64), metavar="T", help=help)


def folder_arg(flag: str):
    """An argparse ``type`` for a folder flag: an empty value is misuse (UsageError out of
    ``parse_args``, as ``number_arg``: one line naming the flag, exit 2).

    ``Path("")`` is ``.``: ``--content ''`` (an unset shell variable) read the current
    folder as content, silently (issue 35)."""
    return _path_arg(flag, "folder", "give a folder; '.' is the current one")


def file_arg(flag: str):
    """An argparse ``type`` for a file flag: an empty value is misuse, as ``folder_arg``
    (``--patch ''`` read as ``.`` and said "is a folder": trial 47)."""
    return _path_arg(flag, "file", "give a file")


def _path_arg(flag: str, kind: str, hint: str):
    def convert(text: str) -> Path:
        if not text:
            raise UsageError(f"{flag}: an empty {kind} name ({hint})")
        return Path(text)

    convert.__name__ = kind
    return convert


def content_arg(p) -> None:
    """Add the ``--content DIR`` flag every command that opens a save takes."""
    p.add_argument("--content", type=folder_arg("--content"), metavar="DIR", help="content folder (default: content/ beside the save, else the bundled sample content)")


def check_content_arg(content: Path | None, flag: str = "--content", *, warn: bool = True) -> None:
    """A ``--content`` that is not a folder is misuse (exit 2), not a finding; a folder
    with no content in it gets a warning on stderr (the command goes on with it: an
    empty folder or the save's own folder gave M002s and a default budget, silently)."""
    if content is not None and not Path(content).is_dir():
        what = "is not a folder" if Path(content).exists() else "does not exist"
        raise UsageError(f"{flag} {content} {what}")
    reason = not_content_reason(content) if content is not None and warn else None
    if reason is not None:
        print(f"narrative-debugger: warning: {flag} {one_line(reason)}", file=sys.stderr)


def warn_about_errors(play: Playthrough) -> None:
    """state/prompt work on what could be read; say on stderr when that is not everything."""
    errors = [f for f in play.findings if f.severity is Severity.ERROR]
    if errors:
        first = errors[0]
        print(
            f"narrative-debugger: warning: {one_line(play.save.label)} has {len(errors)} error finding(s); "
            f"results use what could be read (first: {first.code} at {one_line(first.location)}: {one_line(first.message)}). "
            f"Run 'narrative-debugger check' for all of them.",
            file=sys.stderr,
        )


def unreadable_reasons(play: Playthrough, limit: int = 3) -> str:
    """Why a save could not be read, for a usage error: its first findings as
    ``F001 at 1:1: x.json: ...``. Each message names the file already, so the file
    is not named again in front of it."""
    return "; ".join(f"{f.code} at {one_line(f.location)}: {one_line(f.message)}" for f in play.findings[:limit])


def open_for_query(path: Path, content: Path | None, tick: int | None, npc: str | None = None, *,
                   recording: Recording = EVERYTHING) -> Session:
    """Open a save for ``state``/``why``/``prompt``/``screenshot`` in a ``models.session``
    Session, the one the window uses: at ``tick`` (u64; default ``saved_at_tick``), which
    must not lie past the save's last tick, with the NPC of slug ``npc`` selected (when
    given; else the save's first). ``recording``: what the replay records beside the
    state at a tick (``Recording``; ``state`` reads only the state). Raises UsageError."""
    check_content_arg(content)
    play = keep(Playthrough.open(path, content, recording=recording))
    if not play.readable:
        raise UsageError(unreadable_reasons(play))
    warn_about_errors(play)
    session = Session()
    try:
        session.load(play, tick, exact=True)
        if npc is not None:
            session.set_npc(session.require_npc(npc))
    except TickOutOfRange as exc:
        raise UsageError(str(exc)) from None
    except UnknownNpc as exc:
        raise UsageError(f"no NPC {exc.slug!r} in {path} (NPCs: {', '.join(exc.known) or 'none'})") from None
    return session


def write_json(value) -> None:
    """``value`` as the commands' ``--format json`` prints it: strict, indented JSON
    (``models/report/json_text.py``) and a newline, on stdout."""
    sys.stdout.write(dumps_indented(value))
    sys.stdout.write("\n")

"""``narrative-debugger whatif``: change the past, replay, and see what follows (issue 38).

``whatif SAVE (--patch FILE | --set POINTER=VALUE ...)`` applies an RFC 6902 JSON Patch
(or ``replace`` operations written as ``--set /json/pointer=VALUE``) to the save's
document in memory, and ``--set NAME=VALUE`` sets a tuning value (``whatif --list``
prints the names and their values). It replays the result and prints the ``diff``
comparison with A = as recorded and B = what if, plus ``edits``, ``would_not_happen``
and ``prompts_regenerate``. The save is never written.

Exit 0 when nothing changes, 1 when something does, 2 on a bad patch (the message
names the operation and the pointer) or misuse.
"""

from __future__ import annotations

import argparse
import re
from pathlib import Path

from narrative_debugger.app.cli.commands.common import EXIT_ERRORS, EXIT_OK, UsageError, check_content_arg, content_arg, file_arg, keep, tick_arg, unreadable_reasons, warn_about_errors, write_json
from narrative_debugger.app.cli.commands.diff import format_diff_text
from narrative_debugger.models.boundary import cut
from narrative_debugger.models.domain.tuning import DEFAULT_TUNING, tuning_values
from narrative_debugger.models.playthrough import Playthrough
from narrative_debugger.models.report.plain_text import one_line
from narrative_debugger.models.report.json_text import dumps_strict
from narrative_debugger.models.fileio import FileRefused
from narrative_debugger.models.save.jsonio import decode_plain, read_stored, refused_document
from narrative_debugger.models.save.jsonscan import matches_outside_strings
from narrative_debugger.models.whatif.patch import PatchError, parse_set, reads_as_zero, split_edits
from narrative_debugger.models.whatif.result import WhatIf
from narrative_debugger.models.whatif.run import what_if

NAME = "whatif"
HELP = "change an event or a tuning value, replay, and compare with the recorded run (exit 0 same, 1 changed, 2 bad patch)"


def add_arguments(p) -> None:
    p.add_argument("save", type=Path, nargs="?", metavar="SAVE")
    content_arg(p)
    p.add_argument("--patch", type=file_arg("--patch"), action=_Once, metavar="FILE", help="a JSON Patch (RFC 6902) against the save document")
    p.add_argument("--set", action="append", default=[], metavar="POINTER=VALUE",
                   help="replace the value at a JSON pointer (/journal/3/event/RelationshipInteraction/sentiment=0.8), "
                        "or set a tuning value by name (relationship.sentiment_weight=0.3; see --list); VALUE is JSON, else a string")
    p.add_argument("--list", action="store_true", help="print the tuning names and their values (the save's NPCs' too when SAVE is given)")
    tick_arg(p, "compare the states at tick T (default: each side's last tick)")
    p.add_argument("--format", choices=("text", "json"), default="text")


class _Once(argparse.Action):
    """A flag given at most once: a second ``--patch`` replaced the first without a word
    (trial 47); UsageError leaves ``parse_args`` as one line naming the flag, exit 2."""

    def __call__(self, parser, namespace, values, option_string=None) -> None:
        if getattr(namespace, self.dest, None) is not None:
            raise UsageError(f"{option_string}: given twice (give one file; it may hold any number of operations)")
        setattr(namespace, self.dest, values)


#: A JSON Patch larger than this is refused unread (a patch is a few operations).
PATCH_MAX_BYTES = 64 * 1024 * 1024


def _read_patch(path: Path) -> list:
    """The operations of the JSON Patch file ``path``, read as a save is: a regular file
    only (a FIFO or a device is refused unread), at most ``PATCH_MAX_BYTES``, strict
    UTF-8 JSON with no duplicate key and a bounded depth (``jsonio.read_stored`` and
    ``decode_plain``). A number that reads as 0 though its digits are not (``1e-400``)
    is refused, as ``--set`` refuses it (trial 49: it became 0.0 without a word).

    Raises:
        UsageError: the file cannot be read or is not such JSON (the message names the
            file and the ``line:col``), is not a list, or writes such a number.
    """
    try:
        data, _ = read_stored(path, str(path), max_bytes=PATCH_MAX_BYTES)
    except FileRefused as exc:
        document, text = refused_document(str(path), exc), ""
    else:
        text = bytes(data).decode("utf-8", "replace")  # what the number scan reads: decode_plain consumes ``data``
        document = decode_plain(data, str(path), [])
    if document.findings:
        first = document.findings[0]
        # The reader says how it goes on with a save ("read past it", "the last value is
        # used"); a patch is refused instead, so that clause would say what did not happen.
        said = re.sub(r"; (read past it|the last value is used)$", "", first.message)
        raise UsageError(f"--patch {said} (at {first.location}): a patch is read as strict JSON")
    if not isinstance(document.value, list):
        raise UsageError(f"--patch {path}: a JSON Patch is a list of operations (RFC 6902)")
    for m in matches_outside_strings(text, _FRACTIONAL):
        if reads_as_zero(m.group(1)):
            raise UsageError(f"--patch {path}: the number {cut(m.group(1), 40)} is too small for a number a save holds: it would read as 0")
    return document.value


#: A JSON number with a fraction or an exponent (those that can read as 0 with digits that are not).
_FRACTIONAL = r"-?(?:0|[1-9][0-9]*)(?:\.[0-9]+(?:[eE][-+]?[0-9]+)?|[eE][-+]?[0-9]+)"


def run(args) -> int:
    if args.list:
        ignored = [flag for flag, given in (("--set", args.set), ("--patch", args.patch is not None), ("--tick", args.tick is not None)) if given]
        if ignored:  # they were dropped without a word: the list shows the recorded values
            raise UsageError(f"--list prints the recorded tuning values; it takes no {', '.join(ignored)}")
        return _list(args)
    if args.save is None:
        raise UsageError("give a SAVE, or --list")
    if args.patch is None and not args.set:
        raise UsageError("give --patch FILE or --set POINTER=VALUE (see whatif --list for tuning names)")
    check_content_arg(args.content)
    operations = _read_patch(args.patch) if args.patch is not None else []
    try:
        replaces, tuning, sets = split_edits([parse_set(text) for text in args.set])
        operations += replaces
        recorded = keep(Playthrough.open(args.save, args.content, defer_checks=True))
        if not recorded.readable:
            raise UsageError(unreadable_reasons(recorded))
        warn_about_errors(recorded)  # as state and prompt say it (trial 47: whatif said nothing)
        if args.tick is not None and args.tick > recorded.last_tick:
            raise UsageError(f"--tick {args.tick} is beyond the end of {one_line(recorded.save.label)} (tick {recorded.last_tick})")
        result = what_if(args.save, args.content, operations, tuning, sets, args.tick, recorded=recorded)
    except PatchError as exc:
        raise UsageError(str(exc)) from None
    keep(result.comparison.b, alone=False)
    if args.format == "json":
        write_json(result.to_json())
    else:
        print(format_whatif_text(result))
    return EXIT_ERRORS if result.changed else EXIT_OK


def _list(args) -> int:
    npcs, budget = (), None
    if args.save is not None:
        check_content_arg(args.content)
        play = keep(Playthrough.open(args.save, args.content, defer_checks=True))
        if not play.readable:
            raise UsageError(unreadable_reasons(play))
        warn_about_errors(play)
        npcs, budget = list(play.save.npcs.values()), play.content.prompt.context_token_budget
    rows = tuning_values(DEFAULT_TUNING, npcs, budget)
    if args.format == "json":
        write_json({name: value for name, value in rows})
        return EXIT_OK
    width = max(len(name) for name, _ in rows)
    for name, value in rows:
        shown = "(prompt.yaml's; give SAVE)" if value is None else (f"{value:g}" if isinstance(value, float) else str(value))
        print(f"{name:<{width}}  {shown}")
    if args.save is None:
        print(f"{'npc.SLUG.threshold':<{width}}  (the save's; give SAVE)")
        print(f"{'npc.SLUG.walk_away_threshold':<{width}}  (the save's; give SAVE)")
    return EXIT_OK


#: A value longer than this is shown cut, with its length (the trial's 5 000-digit value filled the screen).
SHOWN_VALUE_MAX = 120


def format_whatif_text(w: WhatIf) -> str:
    """The ``diff`` text with A = as recorded and B = what if, then what follows."""
    out = [f"edits: {len(w.edits)}"]
    for e in w.edits:
        if e.get("op") == "set" and "name" in e:
            out.append(f"  set {e['name']} = {dumps_strict(e['value'])}")
        else:
            value = f" {cut(dumps_strict(e['value']), SHOWN_VALUE_MAX)}" if "value" in e else ""
            source = f"from {one_line(str(e['from']))} to " if "from" in e else ""  # move, copy (RFC 6902)
            out.append(f"  {e.get('op')} {source}{one_line(str(e.get('path')))}{one_line(value)}")
    out.append(format_diff_text(w.comparison))
    if w.end_levels:
        out.append("levels at the end:")
        out += [f"  {slug}: {v['a']} → {v['b']}" for slug, v in w.end_levels.items()]
    if w.crossings:
        out.append("stress threshold crossings moved:")
        out += [f"  {slug}: A ticks {v['a']} / B ticks {v['b']}" for slug, v in w.crossings.items()]
    # The game's decisions stay in B as recorded (issue 38), and so does what follows from
    # them (a walk-away's stress and penalty): the trial read the unchanged counts as a contradiction.
    for title, items in (("would not have happened (lines and walk-aways kept in B as recorded, with what follows from them; penalties not applied in B)", w.would_not_happen),
                         ("would now happen", w.would_happen)):
        if items:
            out.append(f"{title}:")
            out += [f"  journal[{e['journal_index']}] tick {e['tick']} {e['event']}: {one_line(e['reason'])}" for e in items]
    if w.prompts_regenerate:
        out.append("prompts needing a new LLM response:")
        out += [f"  {slug}: from tick {v['first_tick']}, {v['turns']} turn{'s' * (v['turns'] != 1)}" for slug, v in w.prompts_regenerate.items()]
    if not w.changed:
        out.append("Nothing changes.")
    return "\n".join(out)

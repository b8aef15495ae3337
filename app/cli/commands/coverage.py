"""``narrative-debugger coverage``: what of the content fired across a corpus (issue 39).

The counts come from ``models.corpus.coverage``; this module prints them as text,
JSON (the issue's shape, with the keys README adds: ``cards_counted_in``,
``missing_saves``) or one self-contained HTML page with plots.
"""

from __future__ import annotations

import sys
from pathlib import Path

from narrative_debugger.app.cli.commands.common import EXIT_OK, UsageError, folder_arg
from narrative_debugger.models.corpus import store
from narrative_debugger.models.corpus.coverage import ELIGIBLE_UNCHOSEN, LEGAL_TRANSITIONS, NO_LONGER_THERE, LineTally, card_files, failing_clauses, coverage, final_scores, line_files, line_tally, missing_note, save_contents, saves_without_prompts
from narrative_debugger.models.corpus.html_page import coverage_page
from narrative_debugger.models.playthrough import default_content_dir
from narrative_debugger.models.report.json_text import dump_strict
from narrative_debugger.models.report.plain_text import one_line
from narrative_debugger.models.report.sinks import shell_command

NAME = "coverage"
HELP = "which monologue lines, story cards, transitions and finding codes fired across a corpus"
FORMATS = ("text", "json", "html")


def add_arguments(p) -> None:
    p.add_argument("corpus", type=folder_arg("CORPUS"), metavar="CORPUS")
    p.add_argument("--format", choices=FORMATS, default="text", help="text (default), json or html (one self-contained page)")


def open_command(save: str, tick: int, line_id: str, content: str | None) -> tuple[str, str]:
    """The commands that show a nearest miss: the app at the save and tick, and ``why``
    on the line there (its failing clauses). ``--content`` only when the save was indexed
    with another folder than the one it would open with."""
    extra = ("--content", content) if content and content != str(default_content_dir(Path(save))) else ()
    return (shell_command("narrative-debugger", save, "--tick", tick, *extra),
            shell_command("narrative-debugger", "why", save, f"line:{line_id}", "--tick", tick, *extra))


def run(args) -> int:
    try:
        con = store.connect(args.corpus)
    except store.CorpusError as exc:
        raise UsageError(str(exc)) from None
    import duckdb

    try:  # everything is read before anything is printed: a damaged part stops it whole
        doc = coverage(con)
        contents = save_contents(con)
        if args.format == "html":
            gone = set(doc["missing_saves"])
            commands = {line_id: open_command(e["nearest_miss"]["save"], e["nearest_miss"]["tick"], line_id, contents.get(e["nearest_miss"]["save"]))
                        for line_id, e in doc["lines"].items() if e["nearest_miss"] is not None and e["nearest_miss"]["save"] not in gone}
            files = line_files(con)
            page = coverage_page(doc, files, card_files(con), final_scores(con), commands, unprompted=saves_without_prompts(con),
                                 tally=line_tally(doc, files))
        elif args.format == "text":
            page = format_text(doc, contents, saves_without_prompts(con), line_tally(doc, line_files(con))) + "\n"
    except duckdb.Error as exc:
        raise UsageError(str(store.damaged(args.corpus, exc))) from None
    finally:
        con.close()
    if args.format == "json":
        dump_strict(doc, sys.stdout)
        sys.stdout.write("\n")
    else:
        sys.stdout.write(page)
    return EXIT_OK


def cards_counted(doc: dict) -> bool:
    """Whether ``doc``'s card counts mean anything: false when no readable save's cards
    were counted (their counts are null: every save was indexed with ``--no-prompts``)."""
    return all(e["included"] is not None for e in doc["cards"].values())


def cards_not_counted(unprompted: tuple[int, int]) -> str | None:
    """The note for saves indexed with ``--no-prompts`` (``saves_without_prompts``), or None."""
    without, readable = unprompted
    if not without:
        return None
    return (f"story cards were not counted in {without} of {readable} readable save(s): indexed with --no-prompts "
            "(run corpus again without it)")


def format_text(doc: dict, contents: dict[str, str], unprompted: tuple[int, int], tally: LineTally) -> str:
    """The summary, then each never-fired line with its nearest miss and the commands that show it.
    ``unprompted``: ``saves_without_prompts``; when no save's cards were counted, no card
    is said to be never matched or always dropped. ``tally``: ``line_tally`` (the lines
    fired that no content folder defines are named apart, not counted as content lines)."""
    lines, cards = doc["lines"], doc["cards"]
    never = [k for k, e in lines.items() if e["fired"] == 0]
    out = [f"{doc['saves']} save(s); monologue lines fired: {tally.fired} of {tally.total}; "
           + (f"story cards included: {sum(1 for e in cards.values() if e['included'])} of {len(cards)}" if cards_counted(doc)
              else f"story cards: not counted ({len(cards)} in the content; indexed with --no-prompts)")]
    if tally.not_in_content:
        out.append(f"fired but in no content folder (M002): {', '.join(one_line(k) for k in tally.not_in_content)}")
    gone = set(doc["missing_saves"])
    if gone:
        out.append(missing_note(doc["missing_saves"]))
    if never:
        out.append("")
        out.append("never fired:")
    for line_id in never:
        miss = lines[line_id]["nearest_miss"]
        if miss is None:
            out.append(f"  {one_line(line_id)}: no nearest miss (no prerequisites, or no readable save)")
            continue
        where = one_line(miss["save"]) + (f" ({NO_LONGER_THERE})" if miss["save"] in gone else "")
        if miss["failing"]:
            out.append(f"  {one_line(line_id)}: closest in {where} at tick {miss['tick']}, "
                       f"{len(miss['failing'])} failing: {one_line(failing_clauses(miss))}")
        else:
            out.append(f"  {one_line(line_id)}: eligible in {where} at tick {miss['tick']}: {ELIGIBLE_UNCHOSEN.removeprefix('none: ')}")
        if miss["save"] in gone:  # its commands would fail: no save there to open
            out.append("      (no command: the save cannot be opened)")
            continue
        for command in open_command(miss["save"], miss["tick"], line_id, contents.get(miss["save"])):
            out.append(f"      {command}")
    note = cards_not_counted(unprompted)
    if note:
        out.append("")
        out.append(note)
    counted = unprompted[0] < unprompted[1] or not unprompted[1]
    dropped = [k for k, e in cards.items() if e["dropped"] and not e["included"]] if counted else []
    if dropped:
        out.append("")
        out.append("story cards always dropped by the budget: " + ", ".join(one_line(k) for k in dropped))
    unseen = [k for k, e in cards.items() if not e["dropped"] and not e["included"]] if counted else []
    if unseen:
        out.append("story cards never matched: " + ", ".join(one_line(k) for k in unseen))
    out.append("")
    out.append("transitions:")
    out += [f"  {one_line(k):34} {e['count']:>8} in {e['saves']} save(s)" + ("" if k in LEGAL_TRANSITIONS else "  (forbidden by schema §3.2: I001)")
            for k, e in doc["transitions"].items()]
    found = {k: e for k, e in doc["codes"].items() if e["count"]}
    out.append("")
    out.append("finding codes:" + (" none" if not found else ""))
    out += [f"  {one_line(k):6} {e['count']:>8} in {e['saves']} save(s)" for k, e in sorted(found.items(), key=lambda kv: (-kv[1]["count"], kv[0]))]
    never = sorted(k for k, e in doc["codes"].items() if not e["count"])
    if never:  # the JSON lists them with 0; the text said nothing of them (trial 47)
        out.append(f"never found ({len(never)}): " + ", ".join(one_line(k) for k in never))
    return "\n".join(out)

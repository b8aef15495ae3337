"""``narrative-debugger query``: DuckDB SQL over a corpus's tables (issue 39).

JSON is a list of rows, one object per row (keys: the result's column names); CSV
has a header row, lists written as JSON text; text is an aligned table. SQL DuckDB
refuses is one message and exit 2.
"""

from __future__ import annotations

import csv
import datetime
import decimal
import sys

from narrative_debugger.app.cli.commands.common import EXIT_OK, UsageError, folder_arg
from narrative_debugger.models.corpus import store
from narrative_debugger.models.report.json_text import dump_strict, dumps_strict
from narrative_debugger.models.report.plain_text import one_line

NAME = "query"
HELP = "run DuckDB SQL over a corpus's tables (saves, npcs, firings, firing_counts, near_misses, prompts, content)"
FORMATS = ("text", "json", "csv")


def add_arguments(p) -> None:
    p.add_argument("corpus", type=folder_arg("CORPUS"), metavar="CORPUS")
    p.add_argument("sql", metavar="SQL")
    p.add_argument("--format", choices=FORMATS, default="text")


def plain(value):
    """A result value as JSON can hold it: lists and maps within, dates and decimals as text."""
    if isinstance(value, (list, tuple)):
        return [plain(v) for v in value]
    if isinstance(value, dict):
        return {str(k): plain(v) for k, v in value.items()}
    if isinstance(value, float) and value != value or value in (float("inf"), float("-inf")):
        return str(value)
    if isinstance(value, (decimal.Decimal, datetime.date, datetime.time, datetime.timedelta)):
        return str(value)
    if isinstance(value, (bytes, bytearray)):
        return value.hex()
    if value is None or isinstance(value, (bool, int, float, str)):
        return value
    return str(value)


def cell(value) -> str:
    """A value as one CSV or text cell: NULL empty, lists and maps as JSON."""
    value = plain(value)
    if value is None:
        return ""
    if isinstance(value, (list, dict)):
        return dumps_strict(value)
    if isinstance(value, bool):
        return "true" if value else "false"
    return str(value)


def run(args) -> int:
    try:
        names, rows = store.query(args.corpus, args.sql)
    except store.CorpusError as exc:
        raise UsageError(str(exc)) from None
    if args.format == "json":
        dump_strict([{name: plain(v) for name, v in zip(names, row)} for row in rows], sys.stdout)
        sys.stdout.write("\n")
    elif args.format == "csv":
        writer = csv.writer(sys.stdout, lineterminator="\n")
        writer.writerow(names)
        for row in rows:
            writer.writerow([cell(v) for v in row])
    else:
        table = [names] + [[one_line(cell(v)) for v in row] for row in rows]
        widths = [max(len(r[k]) for r in table) for k in range(len(names))]
        for r in table:
            print("  ".join(c.ljust(w) for c, w in zip(r, widths)).rstrip())
        print(f"({len(rows)} row{'s' * (len(rows) != 1)})")
    return EXIT_OK

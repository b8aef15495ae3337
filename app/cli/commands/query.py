"""``narrative-debugger query``: DuckDB SQL over a corpus's tables (issue 39).

JSON is a list of rows, one object per row (keys: the result's column names); CSV
has a header row, lists written as JSON text; text is an aligned table. SQL DuckDB
refuses is one message and exit 2, and so is a result that cannot be printed whole in
the format asked (a value nested deeper than ``MAX_NESTING``; for JSON, two columns of
one name): nothing is printed then.
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
#: How deep lists and maps may nest in a value printed (``plain`` and the JSON writer
#: recurse once a level: a value hundreds deep ran out of Python's stack).
MAX_NESTING = 256


class TooDeep(Exception):
    """A result value nested deeper than ``MAX_NESTING``."""


def add_arguments(p) -> None:
    p.add_argument("corpus", type=folder_arg("CORPUS"), metavar="CORPUS")
    p.add_argument("sql", metavar="SQL")
    p.add_argument("--format", choices=FORMATS, default="text")


def plain(value, depth: int = 0):
    """A result value as JSON can hold it: lists and maps within, dates and decimals as text.

    Raises:
        TooDeep: lists and maps nest more than ``MAX_NESTING`` deep in it.
    """
    if isinstance(value, (list, tuple, dict)) and depth >= MAX_NESTING:
        raise TooDeep
    if isinstance(value, (list, tuple)):
        return [plain(v, depth + 1) for v in value]
    if isinstance(value, dict):
        return {str(k): plain(v, depth + 1) for k, v in value.items()}
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
    """A ``plain`` value as one CSV or text cell: NULL empty, lists and maps as JSON."""
    if value is None:
        return ""
    if isinstance(value, (list, dict)):
        return dumps_strict(value)
    if isinstance(value, bool):
        return "true" if value else "false"
    return str(value)


def plain_rows(names: list[str], rows: list[tuple]) -> list[list]:
    """Every row's values ``plain``, made before anything is printed.

    Raises:
        UsageError: a value nests deeper than ``MAX_NESTING`` (its row and column named).
    """
    out = []
    for number, row in enumerate(rows, 1):
        values = []
        for name, value in zip(names, row):
            try:
                values.append(plain(value))
            except TooDeep:
                raise UsageError(f"row {number}, column {name!r}: a value with lists or maps nested more than {MAX_NESTING} deep "
                                 "cannot be printed (select less of it, or flatten it)") from None
        out.append(values)
    return out


def run(args) -> int:
    try:
        names, rows = store.query(args.corpus, args.sql)
    except store.CorpusError as exc:
        raise UsageError(str(exc)) from None
    if args.format == "json":
        repeated = sorted({name for name in names if names.count(name) > 1})
        if repeated:  # a JSON object keeps one value a key: the other column was dropped
            raise UsageError(f"the result has more than one column named {', '.join(repr(n) for n in repeated)}: "
                             "a JSON row is an object, one value per name (name them apart with AS, or use --format csv or text)")
    values = plain_rows(names, rows)
    if args.format == "json":
        dump_strict([dict(zip(names, row)) for row in values], sys.stdout)
        sys.stdout.write("\n")
    elif args.format == "csv":
        lines = [[cell(v) for v in row] for row in values]
        writer = csv.writer(sys.stdout, lineterminator="\n")
        writer.writerow(names)
        writer.writerows(lines)
    else:
        table = [names] + [[one_line(cell(v)) for v in row] for row in values]
        widths = [max(len(r[k]) for r in table) for k in range(len(names))]
        for r in table:
            print("  ".join(c.ljust(w) for c, w in zip(r, widths)).rstrip())
        print(f"({len(rows)} row{'s' * (len(rows) != 1)})")
    return EXIT_OK

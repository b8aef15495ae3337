"""``narrative-debugger query``: DuckDB SQL over a corpus's tables (issue 39).

JSON is a list of rows, one object per row (keys: the result's column names); CSV
has a header row, lists written as JSON text; text is an aligned table. The rows are
fetched, made printable and written ``BATCH_ROWS`` at a time, so memory does not grow
with the number of rows, and a reader that leaves (``| head``) stops the query. SQL
DuckDB refuses is one message and exit 2, and so is a result that cannot be printed
in the format asked (a value nested deeper than ``MAX_NESTING``; for JSON, two columns
of one name): nothing is printed when that shows in the first batch (or the column
names); a failure in a later batch (DuckDB's, or a value too deep there) stops the
output where it is, with the message, exit 2.
"""

from __future__ import annotations

import csv
import datetime
import decimal
import io
import sys

from narrative_debugger.app.cli.commands.common import EXIT_OK, UsageError, folder_arg
from narrative_debugger.app.cli.streams import reader_left
from narrative_debugger.models.corpus import store
from narrative_debugger.models.report.json_text import dumps_indented, dumps_strict
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


#: Types ``plain`` gives back as they are (exactly these: not a subclass).
_AS_IS = frozenset({int, str, bool, type(None)})


def plain_rows(names: list[str], rows: list[tuple], first: int = 1) -> list[list]:
    """Every row's values ``plain`` (``first``: the number of the first row, for messages).

    Raises:
        UsageError: a value nests deeper than ``MAX_NESTING`` (its row and column named).
    """
    out = []
    for number, row in enumerate(rows, first):
        values = []
        for name, value in zip(names, row):
            if type(value) in _AS_IS:  # what ``plain`` returns unchanged, without its tests
                values.append(value)
                continue
            try:
                values.append(plain(value))
            except TooDeep:
                raise UsageError(f"row {number}, column {name!r}: a value with lists or maps nested more than {MAX_NESTING} deep "
                                 "cannot be printed (select less of it, or flatten it)") from None
        out.append(values)
    return out


class JsonRows:
    """``--format json``: ``[``, each row an object, ``]`` as ``dump_strict`` (indent 1)
    writes the whole list, written a batch at a time (``dumps_indented`` of the batch's
    rows, their list's brackets left off)."""

    def __init__(self, names: list[str], out) -> None:
        self.names, self.out, self.started = names, out, False

    def write(self, rows: list[list]) -> None:
        text = dumps_indented([dict(zip(self.names, row)) for row in rows])
        self.out.write((",\n" if self.started else "[\n") + text[2:-2])  # "[\n" ... "\n]"
        self.started = True

    def close(self, count: int) -> None:
        self.out.write("\n]\n" if self.started else "[]\n")


class CsvRows:
    """``--format csv``: the header row, then each row (``cell``), one line each."""

    def __init__(self, names: list[str], out) -> None:
        self.names, self.out, self.started = names, out, False

    def write(self, rows: list[list]) -> None:
        text = io.StringIO()  # the batch written at once: one write a row costs more than making it
        writer = csv.writer(text, lineterminator="\n")
        if not self.started:
            writer.writerow(self.names)
            self.started = True
        writer.writerows([cell(v) for v in row] for row in rows)
        self.out.write(text.getvalue())

    def close(self, count: int) -> None:
        if not self.started:
            self.write([])


class TextRows:
    """``--format text``: an aligned table and the number of rows. The columns' widths
    are those of the header and the first batch of rows (``BATCH_ROWS``), kept for the
    rest: a longer value further down pushes the rest of its line to the right."""

    def __init__(self, names: list[str], out) -> None:
        self.names, self.out, self.widths = names, out, None

    def _line(self, cells: list[str]) -> str:
        return "  ".join(c.ljust(w) for c, w in zip(cells, self.widths)).rstrip() + "\n"

    def write(self, rows: list[list]) -> None:
        table = [[one_line(cell(v)) for v in row] for row in rows]
        if self.widths is None:
            table.insert(0, self.names)
            self.widths = [max(len(r[k]) for r in table) for k in range(len(self.names))]
        self.out.write("".join(self._line(r) for r in table))

    def close(self, count: int) -> None:
        if self.widths is None:
            self.write([])
        self.out.write(f"({count} row{'s' * (count != 1)})\n")


#: Rows fetched from DuckDB, made printable and written at a time: memory holds one
#: batch, whatever the number of rows. The first batch is fetched whole before
#: anything is printed, so a result of at most this many rows that fails prints nothing.
BATCH_ROWS = 10_000

WRITERS = {"json": JsonRows, "csv": CsvRows, "text": TextRows}


def run(args) -> int:
    try:
        with store.open_query(args.corpus, args.sql) as result:
            names = result.names
            if args.format == "json":
                repeated = sorted({name for name in names if names.count(name) > 1})
                if repeated:  # a JSON object keeps one value a key: the other column was dropped
                    raise UsageError(f"the result has more than one column named {', '.join(repr(n) for n in repeated)}: "
                                     "a JSON row is an object, one value per name (name them apart with AS, or use --format csv or text)")
            writer = WRITERS[args.format](names, sys.stdout)
            count = 0
            for batch in result.batches(BATCH_ROWS):
                writer.write(plain_rows(names, batch, count + 1))
                count += len(batch)
                sys.stdout.flush()  # a reader that left (| head) shows here: the rest is not fetched
                if reader_left():
                    return EXIT_OK
            writer.close(count)
    except store.CorpusError as exc:
        raise UsageError(str(exc)) from None
    return EXIT_OK

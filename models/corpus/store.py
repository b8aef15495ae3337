"""The corpus folder (issue 39): per-save Parquet parts and a DuckDB database of views.

Layout of ``CORPUS``::

    parts/<key>/<table>.parquet     one folder per save (key: a digest of its path)
    tables/<table>.parquet          every part of a table in one file (``compact``)
    content/<stamp>.parquet         the lines and cards of each content folder seen
    corpus.duckdb                   views over them, one per table (``SCHEMA``)

The views read ``tables/`` (one file a table: over the parts, a query of a large
corpus opens five small files a save). Before ``corpus`` writes any part it
puts a ``tables/stale`` mark, and removes it once ``tables/`` is made again at the
end: while the mark is there (a run stopped midway) the views read the parts
themselves, never stale tables. At the end only the saves indexed in this run are
taken from their parts; the others come from the previous ``tables/`` (a run after
a stopped one compacts every part).

A part folder is written under a temporary name and renamed into place, so a run
that stops midway leaves each save either whole or absent. DuckDB writes the
Parquet itself (``COPY ... TO (FORMAT parquet)``) from the column lists, scanned
from newline-delimited JSON: no other dependency.

Errors: ``CorpusError`` (a folder that is not a corpus, bad SQL, a file of the corpus
that cannot be written) with a message that names the corpus, the file or the query's
problem. A file that cannot be written leaves no temporary file behind.
"""

from __future__ import annotations

import hashlib
import os
import re
import shutil
import stat
import threading
import uuid
from contextlib import contextmanager
from pathlib import Path
from typing import Iterator

import duckdb
import msgspec

from narrative_debugger.models.corpus.rows import CONTENT_SCHEMA, SCHEMA
from narrative_debugger.models.fileio import FileRefused, kind_of, open_regular_file

DATABASE = "corpus.duckdb"
PARTS = "parts"
COMPACT = "tables"
STALE = "stale"
CONTENT = "content"
#: Every view the database holds: the per-save tables, then ``content``.
TABLES = (*SCHEMA, "content")


class CorpusError(Exception):
    """A corpus that cannot be read, or a query DuckDB refused (exit 2)."""


def _connection(database: str = ":memory:"):
    con = duckdb.connect(database)
    con.execute("SET enable_progress_bar = false")
    return con


_WRITER: list = []


def _writer():
    """This process's connection for writing parts, made once: opening one costs about
    as much as writing a part's tables, so a worker keeps it for every save it indexes."""
    if not _WRITER:
        _WRITER.append(_connection())
    return _WRITER[0]


def part_key(path: str) -> str:
    """The part folder's name of a save: a digest of its path as indexed."""
    return hashlib.sha256(path.encode("utf-8", "surrogateescape")).hexdigest()[:24]


def _sql_text(text: str) -> str:
    return "'" + text.replace("'", "''") + "'"


def _copy(con, name: str, columns: dict[str, list], schema, target: Path) -> None:
    """Write one table's columns to ``target`` as Parquet, each column cast to its type.

    The rows go through a newline-delimited JSON file that DuckDB reads with the
    columns' types given (DuckDB scans NumPy object arrays row by row, in Python)."""
    names = [c for c, _ in schema]
    rows = [dict(zip(names, values)) for values in zip(*(columns[c] for c in names))]
    lines = target.with_name(target.name + ".jsonl")
    with open(lines, "wb") as f:
        for row in rows:
            f.write(_ENCODE(row))
            f.write(b"\n")
    types = "{" + ", ".join(f"{_sql_text(c)}: {_sql_text(t)}" for c, t in schema) + "}"
    select = ", ".join(f'"{c}"' for c in names)
    source = f"read_json({_sql_text(str(lines))}, format='newline_delimited', columns={types})"
    try:
        if rows:
            con.execute(f"COPY (SELECT {select} FROM {source}) TO {_sql_text(str(target))} (FORMAT parquet)")
        else:
            empty = ", ".join(f'NULL::{t} AS "{c}"' for c, t in schema)
            con.execute(f"COPY (SELECT {empty} WHERE false) TO {_sql_text(str(target))} (FORMAT parquet)")
    finally:
        lines.unlink()


_ENCODE = msgspec.json.Encoder().encode


@contextmanager
def _written_as(temp: Path, target: Path):
    """Around writing ``temp`` and renaming it to ``target``: when either fails, ``temp``
    (and what DuckDB wrote beside it) is removed and the CorpusError names ``target``,
    the file that could not be written, not the temporary name.

    Raises:
        CorpusError: ``{target}: cannot be written ({reason})``.
    """
    try:
        yield
    except (OSError, duckdb.Error, CorpusError) as exc:
        for leftover in (temp, temp.with_name(temp.name + ".wal"), temp.with_name(temp.name + ".jsonl")):
            try:
                if leftover.is_dir() and not leftover.is_symlink():
                    shutil.rmtree(leftover, ignore_errors=True)
                else:
                    leftover.unlink(missing_ok=True)
            except OSError:
                pass
        if isinstance(exc, CorpusError):  # it names what failed already
            raise
        source = _unreadable_source(exc, temp)
        if source is not None:  # DuckDB could not read what it was copying: not a writing problem
            raise CorpusError(f"{source}: cannot be read ({_reason(exc, temp)}); {target} was not written") from None
        raise CorpusError(f"{target}: cannot be written ({_reason(exc, temp)})") from None


def _unreadable_source(exc: Exception, temp: Path) -> str | None:
    """The file DuckDB names in ``exc`` when it is not ``temp`` (nor a file beside it): a
    source that could not be read (``File '/c/parts/k/saves.parquet' too small to be a
    Parquet file``), else None."""
    if not isinstance(exc, duckdb.Error):
        return None
    first = (str(exc).strip().splitlines() or [""])[0]
    match = re.search(r"""[Ff]ile ['"]([^'"]+)['"]""", first)
    if match is None or match.group(1).startswith(str(temp)):
        return None
    return match.group(1)


def _reason(exc: Exception, temp: Path) -> str:
    """Why writing ``temp`` failed, in one line, without its temporary name."""
    if isinstance(exc, OSError):
        return exc.strerror or str(exc)
    first = (str(exc).strip().splitlines() or [type(exc).__name__])[0]
    quoted = f'"{temp}": '
    if quoted in first:  # DuckDB: 'IO Error: Cannot open file "TEMP": Permission denied'
        return first.split(quoted, 1)[1]
    return first.replace(str(temp), "the file")


def write_part(corpus: Path, path: str, tables: dict[str, dict[str, list]]) -> None:
    """Write one save's tables as its part folder, replacing the one it had."""
    parts = corpus / PARTS
    parts.mkdir(parents=True, exist_ok=True)
    final = parts / part_key(path)
    temp = parts / f".{final.name}.{uuid.uuid4().hex[:8]}.tmp"
    temp.mkdir()
    con = _writer()
    for name, schema in SCHEMA.items():
        _copy(con, name, tables[name], schema, temp / f"{name}.parquet")
    old = None
    if final.exists():
        old = parts / f".{final.name}.{uuid.uuid4().hex[:8]}.old"
        os.replace(final, old)
    os.replace(temp, final)
    if old is not None:
        shutil.rmtree(old, ignore_errors=True)


#: What begins and ends every Parquet file (its magic number).
_PARQUET_MAGIC = b"PAR1"


def part_is_whole(corpus: Path, path: str) -> bool:
    """Whether the part of the save at ``path`` has each table's file, each a regular
    file beginning and ending as a Parquet file does, with a footer (its metadata) that
    DuckDB reads and that holds the table's columns: a part deleted, cut short, damaged
    or replaced by hand, or written by a version with other columns (``tables/`` may
    still hold its rows, so the views would not tell) is then indexed again. Reads the
    ends of each file, not the rows (damage among the rows shows when they are read:
    ``compact``); a file that is not a regular one (a FIFO, a device, a folder) is never
    opened to wait or read on."""
    return _part_problem(corpus / PARTS / part_key(path)) is None


def _part_problem(folder: Path) -> str | None:
    """What is wrong with the part in ``folder``, in words (its first table file that is
    not whole: ``saves.parquet is not a whole Parquet file``, ``… is missing``, ``… has a
    damaged footer (...)``, ``… lacks the column(s) ...``), or None when each table's file
    is whole (``_parquet_file_whole``) with a footer that holds its columns."""
    files = {}
    for name in SCHEMA:
        file = folder / f"{name}.parquet"
        if not _parquet_file_whole(file):
            return f"{name}.parquet {_part_file_problem(file) or 'is not a whole Parquet file'}"
        files[name] = file
    return _footer_problem(files)


def _footer_problem(files: dict[str, Path]) -> str | None:
    """What is wrong with the footers of a part's table files (table -> file), in words, or
    None: the first of ``_footer_problems``, in ``files``' order."""
    problems = _footer_problems(list(files.items()))
    return next((problems[file] for file in files.values() if file in problems), None)


def _footer_problems(files: list[tuple[str, Path]]) -> dict[Path, str]:
    """File -> what is wrong with its footer, in words, for the table files ``files``
    ((table, file) pairs; any number of parts) whose footer DuckDB cannot read or lacks
    the table's columns. DuckDB reads every footer (``parquet_schema``: the metadata, not
    the rows) in one call, then one file at a time when that call fails, to name the
    files it could not read (a full compaction of 1 000 parts: 12 s one file at a time)."""
    con = _writer()
    problems: dict[Path, str] = {}
    try:
        rows = con.execute("SELECT file_name, name FROM parquet_schema(?)", [[str(f) for _, f in files]]).fetchall() if files else []
    except duckdb.Error:
        rows = []
        for name, file in files:
            try:
                rows += [(str(file), c) for (c,) in con.execute("SELECT name FROM parquet_schema(?)", [str(file)]).fetchall()]
            except duckdb.Error as exc:
                problems[file] = f"{name}.parquet has a footer DuckDB cannot read ({_first_line(exc)})"
    names: dict[str, set] = {}
    for file_name, column in rows:
        names.setdefault(file_name, set()).add(column)
    for name, file in files:
        lacking = [c for c, _ in SCHEMA[name] if c not in names.get(str(file), ())]
        if file not in problems and lacking:
            problems[file] = f"{name}.parquet lacks the column(s) {', '.join(lacking)} (written by another version)"
    return problems


def _first_line(exc: Exception) -> str:
    return (str(exc).strip().splitlines() or [type(exc).__name__])[0]


def _parquet_file_whole(file: Path) -> bool:
    """Whether ``file`` is a regular file with Parquet's magic number at both ends."""
    try:
        with open_regular_file(file) as f:
            head = f.read(4)
            f.seek(0, os.SEEK_END)
            if f.tell() < 12:
                return False
            f.seek(-4, os.SEEK_END)
            tail = f.read(4)
    except (OSError, FileRefused):
        return False
    return head == _PARQUET_MAGIC and tail == _PARQUET_MAGIC


def part_folders(corpus: Path) -> list[Path]:
    """The part folders of ``corpus`` (not those under a temporary name), in name order."""
    folder = corpus / PARTS
    if not folder.is_dir():
        return []
    return sorted(f for f in folder.iterdir() if f.is_dir() and not f.name.startswith("."))


def _whole_files(corpus: Path, name: str) -> list[Path]:
    """Table ``name``'s files of the part folders of ``corpus`` that are whole, absolute:
    ``_parquet_file_whole`` with a footer that holds the table's columns (``_footer_problems``)."""
    files = [folder.resolve() / f"{name}.parquet" for folder in part_folders(corpus)]
    whole = [f for f in files if _parquet_file_whole(f)]
    problems = _footer_problems([(name, f) for f in whole])
    return [f for f in whole if f not in problems]


def damaged_parts(corpus: Path) -> dict[str, str]:
    """Part folder name -> what is wrong with it, for each part folder of ``corpus`` whose
    table files are not all whole (``part_is_whole``'s test: missing, cut short, not a
    regular file, not Parquet), e.g. ``{"abc": "saves.parquet is not a whole Parquet file"}``.
    Reads 8 bytes a file."""
    out = {}
    for folder in part_folders(corpus):
        problem = _part_problem(folder)
        if problem is not None:
            out[folder.name] = problem
    return out


def remove_part(corpus: Path, key: str) -> None:
    """Remove the part folder ``key`` (a save dropped from the corpus, or a damaged part of
    no save). Call ``mark_stale`` first: ``tables/`` is then made again by ``compact``."""
    shutil.rmtree(corpus / PARTS / key, ignore_errors=True)


def _part_file_problem(file: Path) -> str | None:
    """What is wrong with a part's table file that its view would skip or wait on (missing,
    or not a regular file), in words; None when it is a regular file."""
    try:
        mode = os.stat(file).st_mode
    except OSError as exc:
        return "is missing" if isinstance(exc, FileNotFoundError) else f"cannot be read ({exc.strerror or exc})"
    return None if stat.S_ISREG(mode) else f"is {kind_of(mode)}, not a regular file"


def write_content(corpus: Path, stamp: str, columns: dict[str, list]) -> None:
    """Write a content folder's lines and cards once per stamp."""
    folder = corpus / CONTENT
    folder.mkdir(parents=True, exist_ok=True)
    target = folder / f"{stamp}.parquet"
    if target.exists():
        return
    temp = folder / f".{stamp}.{uuid.uuid4().hex[:8]}.tmp"
    with _written_as(temp, target):
        con = _connection()
        try:
            _copy(con, "content", columns, CONTENT_SCHEMA, temp)
        finally:
            con.close()
        os.replace(temp, target)


def clear_leftovers(corpus: Path) -> None:
    """Remove what a run that stopped midway left: part folders and files still under
    their temporary names (the views' globs would read them), and a database half written."""
    for leftover in corpus.glob(f".{DATABASE}.*.tmp*"):
        if leftover.is_file():
            leftover.unlink(missing_ok=True)
    for folder in (corpus / PARTS, corpus / CONTENT, corpus / COMPACT):
        if folder.is_dir():
            for leftover in folder.glob(".*"):
                if leftover.is_dir():
                    shutil.rmtree(leftover, ignore_errors=True)
                else:
                    leftover.unlink(missing_ok=True)


def has_content(corpus: Path, stamp: str) -> bool:
    return (corpus / CONTENT / f"{stamp}.parquet").exists()


def _view_sql(corpus: Path, name: str, whole_parts_only: bool = False) -> str:
    schema = CONTENT_SCHEMA if name == "content" else SCHEMA[name]
    columns = ", ".join(f'"{c}"' for c, _ in schema)
    compacted = corpus.resolve() / COMPACT / f"{name}.parquet"
    if name != "content" and compacted.is_file() and not is_stale(corpus):
        return f'CREATE OR REPLACE VIEW "{name}" AS SELECT {columns} FROM read_parquet({_sql_text(str(compacted))})'
    return f'CREATE OR REPLACE VIEW "{name}" AS {_parts_view(corpus, name, schema, whole_parts_only)}'


def _parts_view(corpus: Path, name: str, schema, whole_parts_only: bool = False, files: list[Path] | None = None) -> str:
    """A SELECT of the table's columns over its parts (or the content files).

    Every part folder must hold the table's file, a regular file (a glob would skip a
    missing one, or one DuckDB cannot read as a file, and answer with fewer rows): else
    ``damaged``'s CorpusError naming it. ``whole_parts_only``: read the part files that
    pass ``part_is_whole``'s test of a file (``_whole_files``) and leave the others out
    (``corpus`` indexes their saves again); ``files``: those files, found already."""
    columns = ", ".join(f'"{c}"' for c, _ in schema)
    if name == "content":
        pattern = corpus.resolve() / CONTENT / "*.parquet"
        source = _sql_text(str(pattern)) if list((corpus / CONTENT).glob("*.parquet")) else None
    else:
        if files is None:
            files = _whole_files(corpus, name) if whole_parts_only else [f.resolve() / f"{name}.parquet" for f in part_folders(corpus)]
        for file in files:
            problem = _part_file_problem(file)
            if problem is not None:
                raise damaged(corpus, Exception(f"{file} {problem}"), name)
        source = "[" + ", ".join(_sql_text(str(f)) for f in files) + "]" if files else None
    if source is None:  # an empty corpus: the view still has its columns
        empty = ", ".join(f'NULL::{t} AS "{c}"' for c, t in schema)
        return f"SELECT {empty} WHERE false"
    return f"SELECT {columns} FROM read_parquet({source})"


def is_stale(corpus: Path) -> bool:
    """Whether ``tables/`` may lag behind the parts (a run is writing parts, or stopped)."""
    return (corpus / COMPACT / STALE).exists()


def has_compacted(corpus: Path) -> bool:
    return all((corpus / COMPACT / f"{name}.parquet").is_file() for name in SCHEMA) and not is_stale(corpus)


def mark_stale(corpus: Path) -> None:
    """Say that parts are about to change: the views read the parts until ``compact``."""
    (corpus / COMPACT).mkdir(parents=True, exist_ok=True)
    (corpus / COMPACT / STALE).touch()


def compact(corpus: Path, changed: list[str] | None = None) -> None:
    """Write ``tables/<table>.parquet``, each table in one file (rows in no set order), and remove
    the stale mark. ``changed``: the saves whose parts were written (or removed) since
    ``tables/`` was last made whole (the rest is copied from it); None reads every whole part
    (``part_is_whole``: a damaged one is left out).

    Raises:
        CorpusError: a table cannot be written, or a file it is made from cannot be read
            (``{file}: cannot be read (...)``, naming that file).
    """
    folder = corpus / COMPACT
    folder.mkdir(parents=True, exist_ok=True)
    whole = all((folder / f"{name}.parquet").is_file() for name in SCHEMA)
    read_all = changed is None or not whole
    con = _connection()
    try:
        for name, schema in SCHEMA.items():
            columns = ", ".join(f'"{c}"' for c, _ in schema)
            key = "path" if name == "saves" else "save"
            if not read_all:
                parts = [corpus.resolve() / PARTS / part_key(path) / f"{name}.parquet" for path in changed]
                old = _sql_text(str(folder.resolve() / f"{name}.parquet"))
                kept = ", ".join(_sql_text(p) for p in changed) or "NULL"
                source = f"SELECT {columns} FROM read_parquet({old}) WHERE \"{key}\" NOT IN ({kept})"
                present = [p for p in parts if p.is_file()]
                if present:
                    files = "[" + ", ".join(_sql_text(str(p)) for p in present) + "]"
                    source += f" UNION ALL SELECT {columns} FROM read_parquet({files})"
            else:  # a damaged part (``damaged_parts``: ``corpus`` reported it) is left out
                present = _whole_files(corpus, name)
                source = _parts_view(corpus, name, schema, files=present)
            temp = folder / f".{name}.{uuid.uuid4().hex[:8]}.tmp"
            with _written_as(temp, folder / f"{name}.parquet"):
                try:
                    con.execute(f"COPY ({source}) TO {_sql_text(str(temp))} (FORMAT parquet)")
                except duckdb.Error:
                    _damaged_among(con, corpus, present, folder / f"{name}.parquet")
                    raise
                os.replace(temp, folder / f"{name}.parquet")
    finally:
        con.close()
    (folder / STALE).unlink(missing_ok=True)


def _damaged_among(con, corpus: Path, files: list[Path], target: Path) -> None:
    """After reading ``files`` (part files of one table) failed: read each alone, and for
    the first whose rows DuckDB cannot read (damage within the file, past its footer)
    remove its part (its save is then indexed when given again; ``tables/`` is marked
    stale) and raise, naming the part and the save to give again. Returns when each
    reads (the failure was elsewhere).

    Raises:
        CorpusError: ``{file}: the part of {save} is damaged ({reason}); it is removed:
            give that save to corpus to index it again ({target} was not written)``.
    """
    for file in files:
        problem = _rows_problem(con, file)
        if problem is not None:
            save = _save_of_part(con, file.parent)
            mark_stale(corpus)  # the tables made before this one hold its rows: read the parts
            remove_part(corpus, file.parent.name)
            of = f"the part of {save}" if save is not None else "a part whose save cannot be read from it"
            raise CorpusError(f"{file}: {of} is damaged ({problem}); it is removed: give that save to corpus "
                              f"to index it again ({target} was not written)")


def _rows_problem(con, file: Path) -> str | None:
    """Why DuckDB cannot read every value of the Parquet ``file``'s rows (the first line of
    its message: ``Snappy decompression failure``), or None. The values are read within
    DuckDB (a hash of each row), none brought into Python."""
    try:
        con.execute("SELECT bit_xor(hash(t)) FROM read_parquet(?) t", [str(file)]).fetchall()
    except duckdb.Error as exc:
        return _first_line(exc)
    return None


def tables_problem(corpus: Path) -> str | None:
    """What is wrong with ``tables/`` of a corpus that has parts, in words, or None (also
    when there is no part to make it from). ``… was left stale by a run that stopped or
    failed``, or the first table file that is not whole as a part's would not be
    (``_part_problem``: missing, cut short, a damaged footer, lacking a column), or whose
    rows DuckDB cannot read (``_rows_problem``: damage in the middle of the file, which
    ``coverage`` and ``query`` meet). Reads every row of ``tables/`` (within DuckDB)."""
    if not part_folders(corpus):
        return None
    folder = corpus / COMPACT
    if is_stale(corpus):
        return "were left unfinished by a run that stopped or failed"
    problem = _part_problem(folder)
    if problem is None:
        con = _writer()
        for name in SCHEMA:
            rows = _rows_problem(con, folder / f"{name}.parquet")
            if rows is not None:
                problem = f"{name}.parquet: {rows}"
                break
    return None if problem is None else f"could not be read ({problem})"


def _save_of_part(con, folder: Path) -> str | None:
    """The path of the save whose part is ``folder`` (its ``saves`` row), None when it cannot be read."""
    try:
        row = con.execute("SELECT path FROM read_parquet(?)", [str(folder / "saves.parquet")]).fetchone()
    except duckdb.Error:
        return None
    return row[0] if row else None


def write_database(corpus: Path) -> Path:
    """(Re)write ``corpus.duckdb``: one view per table over the parts (absolute paths).

    Raises:
        CorpusError: it cannot be written (``_written_as``: a read-only folder).
    """
    target = corpus / DATABASE
    temp = corpus / f".{DATABASE}.{uuid.uuid4().hex[:8]}.tmp"
    with _written_as(temp, target):
        con = _connection(str(temp))
        try:
            for name in TABLES:
                con.execute(_view_sql(corpus, name))
        finally:
            con.close()
        os.replace(temp, target)
    return target


def is_corpus(corpus: Path) -> bool:
    """Whether ``corpus`` looks like a corpus folder that ``corpus`` may write into (its
    database or ``parts/`` is there); ``connect`` asks more of one it reads."""
    return (corpus / DATABASE).is_file() or (corpus / PARTS).is_dir()


def _missing_tables(corpus: Path) -> str | None:
    """What a corpus to read lacks, in words, or None: it needs each table in ``tables/``
    (not stale) or at least one part folder. A ``corpus.duckdb`` alone (an empty file, any
    file of that name) or an empty ``parts/`` is not a corpus: its views would answer 0 rows."""
    if has_compacted(corpus) or part_folders(corpus):
        return None
    have = [f"{n}" for n in (DATABASE, PARTS + "/", COMPACT + "/") if (corpus / n.rstrip("/")).exists()]
    held = f"it holds {', '.join(have)} but " if have else ""
    return f"{held}no part of a save in {PARTS}/ and no {COMPACT}/ with every table ({', '.join(SCHEMA)})"


def is_unfinished(corpus: Path) -> bool:
    """Whether ``corpus`` holds only what a first ``corpus`` run makes before it writes
    its first part: ``content/`` (its Parquet files), ``tables/`` (the stale mark) and
    files under temporary names. A run that failed there (a scheduler it could not
    reach) or was stopped (Ctrl+C) leaves that; ``corpus`` goes on with it."""
    try:
        entries = list(corpus.iterdir())
        for entry in entries:
            if entry.name in (CONTENT, COMPACT) and entry.is_dir() and not entry.is_symlink():
                allowed = (lambda n: n.endswith(".parquet")) if entry.name == CONTENT else (lambda n: n == STALE or n.endswith(".parquet"))
                if not all(f.name.startswith(".") or (allowed(f.name) and f.is_file()) for f in entry.iterdir()):
                    return False
            elif not (entry.name.startswith(f".{DATABASE}.") and entry.is_file()):
                return False
    except OSError:
        return False
    return any(entry.name in (CONTENT, COMPACT) for entry in entries)


def connect(corpus: Path, whole_parts_only: bool = False, damaged_tables: dict | None = None, for_indexing: bool = False):
    """An in-memory DuckDB connection with the corpus's views (made from the folder as
    it is now, so a moved corpus still answers). It can read files under ``corpus``
    only, and write none outside it (DuckDB's ``enable_external_access`` off).
    ``whole_parts_only``: views over the parts leave out a damaged one (``_parts_view``)
    rather than refuse the corpus. ``damaged_tables``: a dict that gets, for each table
    whose file cannot be read, table -> ``damaged``'s CorpusError; that table's view
    is a stand-in that fails with the message when it is read
    (``_unreadable_view_sql``), so the other tables still answer. ``for_indexing``
    (``indexed``): a corpus folder with no table yet, or no save, is an empty corpus to
    add saves to, not an error.

    Raises:
        CorpusError: ``corpus`` does not exist or is not a folder; it is not a corpus (no
            ``corpus.duckdb`` or ``parts/``; or, to read, neither a part of a save nor
            every table in ``tables/``: an empty ``corpus.duckdb`` or ``parts/``); it holds
            no save (its parts removed by hand); its first run stopped before any save was
            indexed; or one of its tables cannot be read (a damaged or truncated Parquet
            file: ``damaged``'s message; not with ``damaged_tables``).
    """
    corpus = Path(corpus)
    problem = _folder_problem(corpus)
    if problem is not None:
        raise CorpusError(f"{corpus} {problem}")
    unfinished = (f"{corpus} is a corpus whose first run stopped before any save was indexed "
                  "(run 'narrative-debugger corpus' with its saves and --out it again)")
    if not is_corpus(corpus):
        if is_unfinished(corpus):
            raise CorpusError(unfinished)
        raise CorpusError(f"{corpus} is not a corpus (no {DATABASE} or {PARTS}/ in it; make one with 'narrative-debugger corpus')")
    if not for_indexing:
        missing = _missing_tables(corpus)
        if missing is not None:
            if is_stale(corpus):  # a first run stopped after it made parts/, before a part was whole
                raise CorpusError(unfinished)
            raise CorpusError(f"{corpus} is not a corpus: {missing} (make one with 'narrative-debugger corpus')")
    con = _connection()
    try:
        for name in TABLES:
            try:
                con.execute(_view_sql(corpus, name, whole_parts_only))
            except (duckdb.Error, CorpusError) as exc:
                error = exc if isinstance(exc, CorpusError) else damaged(corpus, exc, name)
                if damaged_tables is None:
                    raise error from None
                damaged_tables[name] = error
                con.execute(_unreadable_view_sql(name, str(error)))
        if not for_indexing and "saves" not in (damaged_tables or {}):
            try:
                empty = not con.execute("SELECT count(*) FROM saves").fetchone()[0]
            except duckdb.Error as exc:
                raise damaged(corpus, exc, "saves") from None
            if empty:
                raise CorpusError(f"{corpus} is a corpus with no save in it (index saves into it with "
                                  "'narrative-debugger corpus SAVE_OR_DIR --out' it)")
    except BaseException:
        con.close()
        raise
    # SQL from the command line reads the corpus only: no file elsewhere is read or
    # written (a COPY ... TO over a save, read_csv of any file), and the setting is locked.
    con.execute(f"SET allowed_directories = [{_sql_text(str(corpus.resolve()) + os.sep)}]")
    con.execute("SET enable_external_access = false")
    con.execute("SET lock_configuration = true")
    return con


def _folder_problem(folder: Path) -> str | None:
    """Why ``folder`` cannot be a corpus's folder, in words (``does not exist``, ``is not a
    folder``, ``cannot be read (...)``), or None: a typo said "is not a folder" (trial 50)."""
    try:
        mode = os.stat(folder).st_mode
    except (FileNotFoundError, NotADirectoryError):  # a link to nothing, a path below a file
        return "does not exist"
    except OSError as exc:
        return f"cannot be read ({exc.strerror or exc})"
    return None if stat.S_ISDIR(mode) else "is not a folder"


#: Around a damaged table's message in the error its stand-in view raises (``_duckdb_message``
#: takes the message back out of DuckDB's).
_UNREADABLE_MARK = "\u241e"


def _unreadable_view_sql(name: str, message: str) -> str:
    """A view of table ``name``'s columns (typed as its schema says) that raises
    ``message`` when its rows are read: DESCRIBE and SHOW TABLES still list it. Each
    column and the filter call ``error``: with constant columns (NULL) DuckDB answered
    a join on one with no rows, without reading the view."""
    schema = CONTENT_SCHEMA if name == "content" else SCHEMA[name]
    fail = f"error({_sql_text(_UNREADABLE_MARK + message + _UNREADABLE_MARK)})"
    columns = ", ".join(f'CAST({fail} AS {t}) AS "{c}"' for c, t in schema)
    return f'CREATE OR REPLACE VIEW "{name}" AS SELECT {columns} FROM range(1) WHERE {fail} IS NULL'


def damaged(corpus: Path, exc: Exception, table: str | None = None) -> CorpusError:
    """The error for a corpus whose files DuckDB cannot read (``exc``): the table, the
    first line of DuckDB's message (it names the file when it knows it) and what to do."""
    first = (str(exc).strip().splitlines() or [type(exc).__name__])[0]
    where = f"its {table} table: " if table else ""
    return CorpusError(f"{corpus} cannot be read: {where}{first} (run 'narrative-debugger corpus' with its saves and "
                       "--out it again: what is damaged is made again)")


def indexed(corpus: Path) -> dict[str, tuple[str | None, str | None, bool]]:
    """path -> (sha256, content_stamp, prompts) of each save already in the corpus
    (``prompts``: whether its prompts were built; an unreadable save counts as built).
    While ``tables/`` is stale, a save whose part is damaged is not in it (indexed again)."""
    if not (corpus / PARTS).is_dir():
        return {}
    con = connect(corpus, whole_parts_only=True, for_indexing=True)
    try:
        rows = con.execute("SELECT path, sha256, content_stamp, prompts OR NOT readable FROM saves").fetchall()
        return {path: (sha, stamp, bool(prompts)) for path, sha, stamp, prompts in rows}
    finally:
        con.close()


def unreadable_saves(corpus: Path) -> int:
    """How many saves of the corpus (all of them, not those of one run) could not be read
    (``saves.readable`` false). Raises CorpusError as ``connect`` does."""
    con = connect(corpus, for_indexing=True)
    try:
        return con.execute("SELECT count(*) FROM saves WHERE NOT readable").fetchone()[0]
    except duckdb.Error as exc:
        raise damaged(corpus, exc, "saves") from None
    finally:
        con.close()


#: Statements that write files. The allowed directory is the corpus itself (its parts are
#: read from there), so without this a COPY ... TO or an ATTACH could overwrite its
#: database or parts, or leave new files in it.
_WRITING = frozenset({duckdb.StatementType.COPY, duckdb.StatementType.COPY_DATABASE, duckdb.StatementType.EXPORT,
                      duckdb.StatementType.ATTACH})

#: What a query may be: a statement that reads. DuckDB gives SELECT for SHOW, DESCRIBE,
#: SUMMARIZE, VALUES and PRAGMA too; CALL runs a table function (``CALL pragma_version()``).
#: An EXPLAIN is judged by the statement it explains (``_effective``: EXPLAIN ANALYZE runs it).
_READING = frozenset({duckdb.StatementType.SELECT, duckdb.StatementType.EXPLAIN, duckdb.StatementType.CALL})

#: Table functions that change the database rather than read it, which DuckDB types as a
#: CALL: ``CHECKPOINT`` and ``FORCE CHECKPOINT`` are these (trial 51: they printed success).
#: DuckDB's table functions hold no other that changes anything; a SELECT that reads one
#: of these (``SELECT * FROM checkpoint()``) is refused as its CALL is.
_CHANGING_CALLS = frozenset({"checkpoint", "force_checkpoint"})

#: A comment of SQL; blanks and comments, skipped before a keyword (``_explained``).
_COMMENT = re.compile(r"--[^\n]*(?:\n|$)|/\*.*?\*/", re.S)
_BLANK = re.compile(rf"(?:\s+|{_COMMENT.pattern})*", re.S)
#: What may stand between EXPLAIN and the statement it explains: ANALYZE, or options in parentheses.
_EXPLAIN_OPTIONS = re.compile(r"(?:ANALY[SZ]E\b|\([^()]*\))", re.I)


class QueryResult:
    """The result of one query, its rows fetched from DuckDB a batch at a time (``open_query``).

    ``names``: the column names in order (empty for a statement that gives no rows).
    """

    def __init__(self, con, cursor, names: list[str]) -> None:
        self._con = con
        self._cursor = cursor
        self.names = names

    def batches(self, size: int) -> Iterator[list[tuple]]:
        """The rows, ``size`` at a time (the last batch may hold fewer; none when there
        are no rows): at most one batch is held at once, so memory stays flat in the
        number of rows. Each fetch can be stopped with Ctrl+C (``_interruptible``).

        Raises:
            CorpusError: DuckDB failed while making the rows (a cast that fails in a
                later row: the batches before it were given).
        """
        if not self.names:
            return
        while True:
            try:
                rows = _interruptible(self._con, lambda: self._cursor.fetchmany(size))
            except duckdb.Error as exc:
                raise CorpusError(_duckdb_message(exc)) from None
            if not rows:
                return
            yield rows


@contextmanager
def open_query(corpus: Path, sql: str) -> Iterator[QueryResult]:
    """Run ``sql`` over the corpus's views; the ``QueryResult`` streams its rows while
    the block runs (the connection is closed after it).

    A table whose file cannot be read fails only a query that names it (or reads it
    otherwise: its stand-in view, ``_unreadable_view_sql``), with ``damaged``'s
    message naming the corpus, the table and the file; a query of the other tables
    answers.

    Raises:
        CorpusError: the corpus cannot be read, DuckDB refused the query (its message),
            ``sql`` holds no statement (empty, blank, only ``;`` or a comment), more than
            one, one that writes files (COPY, EXPORT DATABASE, ATTACH: ``_WRITING``) or
            one that does not read (DROP, CREATE, INSERT, SET, INSTALL, CHECKPOINT ...:
            each query has a connection of its own, so what they did was never kept, yet
            they printed nothing but success); an EXPLAIN is judged by the statement it
            explains (``_effective``: EXPLAIN ANALYZE CREATE ... is refused).
    """
    unreadable: dict[str, CorpusError] = {}
    con = connect(corpus, damaged_tables=unreadable)
    try:
        try:
            statements = con.extract_statements(sql)
            given = [s for s in statements if s.query.strip()]  # DuckDB's own expansion of a PIVOT has no text
            judged = [_effective(con, statement, statement.query or sql) for statement in _main(statements)]
            for name, kind, _ in judged + [(_statement_name(s.query, s.type), s.type, s.query) for s in statements]:
                if kind in _WRITING:
                    raise CorpusError(f"{name} is refused: a query writes no file, in the corpus "
                                      "or elsewhere (print the rows with --format csv or json and redirect them)")
            if len(given) > 1:  # DuckDB would run them all and give the last one's rows alone
                raise CorpusError(f"the SQL holds {len(given)} statements: give one at a time")
            for name, kind, text in judged:
                # SELECT * FROM checkpoint() checkpoints as CALL checkpoint() does (trial 51)
                changing = _changing_table_function(con, text) if kind == duckdb.StatementType.SELECT else None
                if changing is not None or not _reads(kind, text):
                    raise CorpusError(f"{changing or name} is refused: a query reads the corpus's tables "
                                      "(SELECT, SHOW, DESCRIBE, SUMMARIZE, EXPLAIN, or a PRAGMA that only reads) and changes nothing")
            if unreadable:  # a damaged table the query names: its message before anything runs
                named = _tables_named(sql)
                for table, error in unreadable.items():
                    if table in named:
                        raise error
            cursor = _interruptible(con, lambda: con.execute(sql))
        except duckdb.Error as exc:
            raise CorpusError(_duckdb_message(exc)) from None
        if cursor is None:  # DuckDB returns no cursor for SQL without a statement ('', ';', a comment)
            raise CorpusError("the SQL holds no statement to run")
        names = [d[0] for d in cursor.description] if cursor.description is not None else []
        yield QueryResult(con, cursor, names)
    finally:
        con.close()


def _tables_named(sql: str) -> set[str]:
    """The names of the tables ``sql`` reads, lower case, without a schema; empty when
    DuckDB cannot tell without running it (``query_table`` of an expression)."""
    try:
        return {n.rsplit(".", 1)[-1].strip('"').lower() for n in duckdb.get_table_names(sql)}
    except duckdb.Error:
        return set()


#: Rows a batch ``query`` fetches at a time.
QUERY_BATCH = 10_000


def query(corpus: Path, sql: str) -> tuple[list[str], list[tuple]]:
    """(column names, every row) of ``sql`` over the corpus's views, held in memory at
    once (``open_query`` streams them). Raises what ``open_query`` raises."""
    with open_query(corpus, sql) as result:
        return result.names, [row for batch in result.batches(QUERY_BATCH) for row in batch]


#: The advice DuckDB appends to some errors to change a setting (``Use "SET
#: max_expression_depth TO x" to ...``): a query may not SET anything (``_READING``).
_SET_ADVICE = re.compile(r'\s*Use "SET ([a-z_]*)[^"]*" to [^.]*\.')
#: What the message says in its place, by setting (None: any other).
_INSTEAD_OF_SET = {
    "max_expression_depth": " (DuckDB's limit; a query cannot change settings: write the expression with less nesting, "
                            "e.g. a list_sum or an IN list instead of a long chain of + or OR)",
    None: " (a query cannot change settings)",
}


def _duckdb_message(exc: Exception) -> str:
    """DuckDB's message for ``exc``, without advice to SET a setting the query cannot
    change; a stand-in view's message (``_unreadable_view_sql``) as ``damaged`` made it."""
    text = str(exc).strip()
    if text.count(_UNREADABLE_MARK) >= 2:  # a stand-in view of a damaged table was read
        return text.split(_UNREADABLE_MARK)[1]
    advice = _SET_ADVICE.search(text)
    if advice:
        instead = _INSTEAD_OF_SET.get(advice.group(1), _INSTEAD_OF_SET[None])
        return text[: advice.start()] + instead + text[advice.end():]
    return text


def _main(statements) -> list:
    """The statements a query is judged by: those with text, or, when DuckDB expanded the
    SQL into statements of its own (a PIVOT: a CREATE TYPE, maybe within a transaction,
    then the statement itself, none with text), the last that is not a TRANSACTION."""
    given = [s for s in statements if s.query.strip()]
    return given or [s for s in statements if s.type != duckdb.StatementType.TRANSACTION][-1:]


def _effective(con, statement, text: str) -> tuple[str, "duckdb.StatementType | None", str]:
    """(name, type, text) of what ``statement`` (whose SQL is ``text``) runs: itself, or for
    an EXPLAIN the statement it explains, named ``EXPLAIN ANALYZE CREATE`` (EXPLAIN ANALYZE
    runs it; a plain EXPLAIN of it is no reading either). The type is None for an EXPLAIN
    whose statement cannot be told (it is then refused as not reading)."""
    name = _statement_name(text, statement.type)
    if statement.type != duckdb.StatementType.EXPLAIN:
        return name, statement.type, text
    inner = _explained(text)
    try:
        parsed = _main(con.extract_statements(inner)) if inner is not None else []
    except duckdb.Error:
        parsed = []
    if len(parsed) != 1:
        return name, None, text
    head = _COMMENT.sub(" ", text[: len(text) - len(inner)])
    words = " ".join(w.upper() for w in re.findall(r"[A-Za-z]+", head) if w.upper() in ("EXPLAIN", "ANALYZE", "ANALYSE"))
    inner_name, kind, inner_text = _effective(con, parsed[0], parsed[0].query or inner)
    return f"{words} {inner_name}", kind, inner_text


def _explained(text: str) -> str | None:
    """The statement an ``EXPLAIN [ANALYZE] [(options)] STATEMENT`` explains (its text),
    comments between the words allowed; None when ``text`` is not one."""
    at = _BLANK.match(text).end()
    if text[at:at + 7].upper() != "EXPLAIN" or text[at + 7:at + 8].isalnum():
        return None
    at += 7
    while True:
        at = _BLANK.match(text, at).end()
        option = _EXPLAIN_OPTIONS.match(text, at)
        if option is None:
            return text[at:]
        at = option.end()


def _reads(kind, text: str) -> bool:
    """Whether a statement of type ``kind`` and ``text`` (``_effective``) only reads: a
    SELECT or a CALL of a function that reads (``CALL pragma_version()``; not one of
    ``_CHANGING_CALLS``, nor ``CHECKPOINT``, which DuckDB types as a CALL)."""
    if kind == duckdb.StatementType.CALL:
        words = re.findall(r"[A-Za-z_]+", _COMMENT.sub(" ", text))
        return len(words) > 1 and words[0].upper() == "CALL" and words[1].lower() not in _CHANGING_CALLS
    return kind in _READING


def _changing_table_function(con, text: str) -> str | None:
    """The first of ``_CHANGING_CALLS`` that the SELECT ``text`` reads as a table function
    anywhere (``SELECT * FROM checkpoint()``, in a subquery or a join), named ``checkpoint()``;
    None when it reads none, or DuckDB cannot give its parse tree (``json_serialize_sql``)."""
    try:
        tree = msgspec.json.decode(con.execute("SELECT json_serialize_sql(?)", [text]).fetchone()[0])
    except (duckdb.Error, msgspec.DecodeError, TypeError):
        return None
    nodes = [tree]
    while nodes:
        node = nodes.pop()
        if isinstance(node, dict):
            function = node.get("function")
            if node.get("type") == "TABLE_FUNCTION" and isinstance(function, dict):
                name = str(function.get("function_name", "")).lower()
                if name in _CHANGING_CALLS:
                    return f"{name}()"
            nodes.extend(node.values())
        elif isinstance(node, list):
            nodes.extend(node)
    return None


def _statement_name(text: str, kind) -> str:
    """A statement's first word as typed (``INSTALL``, not DuckDB's type LOAD; ``FORCE
    CHECKPOINT`` two), or its type ``kind``."""
    words = _COMMENT.sub(" ", text).split()
    if words and words[0].upper() == "FORCE" and len(words) > 1:
        return f"FORCE {words[1].upper()}"
    return words[0].upper() if words and words[0].isalpha() else kind.name.replace("_", " ")


def _interruptible(con, work):
    """``work()``'s result, run on another thread while this one waits: DuckDB runs a query
    in C without returning to Python, so Ctrl+C (KeyboardInterrupt, raised on the main
    thread) would wait for the query's end, minutes for a large join. Interrupted, the
    query is cancelled (``con.interrupt``) and the KeyboardInterrupt goes on.

    Raises:
        duckdb.Error: what ``work`` raised; KeyboardInterrupt: Ctrl+C while it ran."""
    done: list = []

    def run() -> None:
        try:
            done.append((True, work()))
        except BaseException as exc:  # handed to the waiting thread, raised there
            done.append((False, exc))

    thread = threading.Thread(target=run, name="corpus-query", daemon=True)
    thread.start()
    try:
        while thread.is_alive():
            thread.join(0.1)
    except KeyboardInterrupt:
        con.interrupt()
        thread.join(5.0)
        raise
    ok, value = done[0]
    if not ok:
        raise value
    return value

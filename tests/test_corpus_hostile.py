"""Hostile input to ``corpus``, ``coverage`` and ``query`` (issue 39, trial 47): each is a
one-line message and exit 2 (or the right value), never a traceback, a hang or a
value made up."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from narrative_debugger.app.cli.main import main
from tests.support.cli import run
from tests.conftest import CONTENT, SAMPLES


@pytest.fixture(scope="module")
def saves(tmp_path_factory) -> Path:
    folder = tmp_path_factory.mktemp("saves")
    for name in ("evening.json", "walkaway-spiral.json"):
        shutil.copy(SAMPLES / name, folder / name)
    return folder


@pytest.fixture(scope="module")
def small_corpus(saves, tmp_path_factory) -> Path:
    """A corpus of two sample saves, without prompts (quick to make); tests copy it to change it."""
    out = tmp_path_factory.mktemp("corpus") / "c"
    assert main(["corpus", str(saves), "--content", str(CONTENT), "--out", str(out), "--no-prompts"]) == 0
    return out


def _index(saves: Path, out: Path, *more: str) -> list[str]:
    return ["corpus", str(saves), "--content", str(CONTENT), "--out", str(out), "--no-prompts", *more]


#: Every row of every table, in order: what a corpus answers.
EVERYTHING = [f"SELECT * FROM {table} ORDER BY ALL" for table in ("saves", "npcs", "firings", "firing_counts", "near_misses", "content")]


def _answers(capsys, corpus: Path) -> list:
    out = []
    for sql in EVERYTHING:
        code, text, err = run(capsys, "query", str(corpus), sql, "--format", "json")
        assert code == 0, err
        out.append(json.loads(text))
    return out


def _nested(depth: int) -> str:
    return "[" * depth + "1" + "]" * depth


@pytest.mark.parametrize("fmt", ["json", "csv", "text"])
def test_a_result_nested_too_deep_is_a_message_and_nothing_printed(small_corpus, capsys, fmt):
    # Trial 47, 1.3: a list 500 deep ran plain() out of Python's stack (RecursionError
    # traceback, exit 1; csv had printed its header first).
    code, out, err = run(capsys, "query", str(small_corpus), f"SELECT 1 AS fine, {_nested(260)} AS deep", "--format", fmt)
    assert (code, out) == (2, "")
    assert err.strip() == ("narrative-debugger query: row 1, column 'deep': a value with lists or maps nested more than 256 deep "
                           "cannot be printed (select less of it, or flatten it)")
    code, out, err = run(capsys, "query", str(small_corpus), f"SELECT {_nested(256)} AS x", "--format", fmt)
    assert code == 0 and out.count("[") == 256 + (fmt == "json"), err
    if fmt == "json":
        value = json.loads(out)[0]["x"]
        for _ in range(256):
            (value,) = value
        assert value == 1


def test_json_refuses_two_columns_of_one_name(small_corpus, capsys):
    # Trial 47, 2.5: [{"a": 2}], exit 0: the first column was lost.
    code, out, err = run(capsys, "query", str(small_corpus), "SELECT 1 AS a, 2 AS a, 3 AS b", "--format", "json")
    assert (code, out) == (2, "")
    assert err.strip() == ("narrative-debugger query: the result has more than one column named 'a': a JSON row is an object, "
                           "one value per name (name them apart with AS, or use --format csv or text)")
    code, out, _ = run(capsys, "query", str(small_corpus), "SELECT 1 AS a, 2 AS a", "--format", "csv")
    assert code == 0 and out == "a,a\n1,2\n"


@pytest.mark.parametrize("address, says", [
    ("", "--scheduler: an empty address (give tcp://HOST:PORT, as 'dask scheduler' prints it)"),
    ("garbage", "--scheduler garbage: not an address (give tcp://HOST:PORT, as 'dask scheduler' prints it)"),
    ("ucx://127.0.0.1:1", "--scheduler ucx://127.0.0.1:1: only tcp:// addresses are supported, not ucx:// (give tcp://HOST:PORT)"),
    ("tls://127.0.0.1:1", "--scheduler tls://127.0.0.1:1: only tcp:// addresses are supported, not tls:// (give tcp://HOST:PORT)"),
    ("inproc://x", "--scheduler inproc://x: only tcp:// addresses are supported, not inproc:// (give tcp://HOST:PORT)"),
    ("tcp://127.0.0.1:notaport", "--scheduler tcp://127.0.0.1:notaport: the port 'notaport' is not a number from 1 to 65535"),
    ("tcp://127.0.0.1:-5", "--scheduler tcp://127.0.0.1:-5: the port '-5' is not a number from 1 to 65535"),
    ("tcp://host:99999", "--scheduler tcp://host:99999: the port '99999' is not a number from 1 to 65535"),
    ("tcp://host:0", "--scheduler tcp://host:0: the port '0' is not a number from 1 to 65535"),
    ("tcp://127.0.0.1", "--scheduler tcp://127.0.0.1: no port (give tcp://HOST:PORT; 'dask scheduler' listens on 8786)"),
    ("tcp://[::1]", "--scheduler tcp://[::1]: no port (give tcp://HOST:PORT; 'dask scheduler' listens on 8786)"),
    ("tcp://:8786", "--scheduler tcp://:8786: no host name or address before the port (give tcp://HOST:PORT)"),
])
def test_a_scheduler_address_that_cannot_be_valid_is_refused_at_once(tmp_path, capsys, address, says):
    # Trial 47, 1.4 and 2.9: ucx:// and tls:// were Dask tracebacks, '' ran locally, a bad
    # port said "invalid literal for int()" (or waited Dask's 30 s connect timeout), and
    # inproc://x "not enough values to unpack". Refused before anything is made or read.
    code, out, err = run(capsys, "corpus", str(SAMPLES / "evening.json"), "--out", str(tmp_path / "c"), "--scheduler", address)
    assert (code, out) == (2, "")
    assert err.strip() == f"narrative-debugger corpus: {says}"
    assert not (tmp_path / "c").exists()


def _replace_by(file: Path, kind: str) -> None:
    """Make the part file ``file`` something that is not a regular file (or nothing)."""
    file.unlink()
    if kind == "fifo":
        os.mkfifo(file)
    elif kind == "zero":
        file.symlink_to("/dev/zero")
    elif kind == "folder":
        file.mkdir()


KINDS = ["missing", "folder", *(["fifo"] if hasattr(os, "mkfifo") else []), *(["zero"] if os.path.exists("/dev/zero") else [])]
SAYS = {"missing": "is missing", "folder": "is a folder, not a regular file", "fifo": "is a FIFO (named pipe), not a regular file",
        "zero": "is a character device, not a regular file"}


@pytest.mark.parametrize("kind", KINDS)
def test_a_part_that_is_not_a_regular_file_is_indexed_again_never_opened(saves, small_corpus, tmp_path, capsys, kind):
    # Trial 47, 1.7: a FIFO in place of a part's file hung corpus for ever (part_is_whole
    # opened it to read its magic number). Run in a child with a time limit: a hang fails.
    corpus = tmp_path / "c"
    shutil.copytree(small_corpus, corpus)
    before = _answers(capsys, corpus)
    part = sorted((corpus / "parts").glob("*/npcs.parquet"))[0]
    _replace_by(part, kind)
    done = subprocess.run([sys.executable, "-m", "narrative_debugger.app", *_index(saves, corpus)],
                          capture_output=True, text=True, timeout=240, cwd=tmp_path)
    assert done.returncode == 0, done.stderr
    assert "indexed 1 save(s) (1 replaced), skipped 1 unchanged, 0 unreadable" in done.stdout
    assert done.stderr.count("is missing or damaged; indexing it again") == 1
    assert part.is_file() and not part.is_symlink()
    assert _answers(capsys, corpus) == before


@pytest.mark.parametrize("kind", KINDS)
def test_a_stale_corpus_with_a_part_missing_or_not_a_file_is_a_message_not_fewer_rows(saves, small_corpus, tmp_path, capsys, kind):
    # Trial 47, 2.6: while tables/ is stale the views read the parts, and a missing part
    # (or a FIFO, a link to /dev/zero) was skipped: 18 NPC rows of 24, exit 0.
    corpus = tmp_path / "c"
    shutil.copytree(small_corpus, corpus)
    before = _answers(capsys, corpus)
    (corpus / "tables" / "stale").touch()  # as a stopped run leaves it
    part = sorted((corpus / "parts").glob("*/npcs.parquet"))[0]
    _replace_by(part, kind)
    for args in (["query", str(corpus), "SELECT count(*) FROM npcs"], ["coverage", str(corpus)], ["coverage", str(corpus), "--format", "json"]):
        code, out, err = run(capsys, *args)
        assert (code, out) == (2, ""), args
        assert err.strip() == (f"narrative-debugger {args[0]}: {corpus} cannot be read: its npcs table: {part.parent.resolve() / part.name} {SAYS[kind]} "
                               "(run 'narrative-debugger corpus' with its saves and --out it again: what is damaged is made again)")
    # Trial 50, 17: the other tables answer (a query of saves failed too).
    code, out, err = run(capsys, "query", str(corpus), "SELECT count(*) AS n FROM saves", "--format", "json")
    assert (code, json.loads(out)) == (0, [{"n": 2}]), err
    # As the message says: corpus indexes that save again, and the corpus answers as before.
    code, out, err = run(capsys, *_index(saves, corpus))
    assert code == 0 and "indexed 1 save(s) (1 replaced), skipped 1 unchanged" in out, err
    assert _answers(capsys, corpus) == before


def test_a_saved_at_tick_that_cannot_be_read_is_null_not_the_last_journal_tick(tmp_path, capsys):
    # Trial 47, 2.7: saved_at_tick 2^64, -1, "37113" and 37113.0 were stored as the last
    # journal tick (what the reader stands in for it); the F002 showed only in errors.
    doc = json.loads((SAMPLES / "evening.json").read_text(encoding="utf-8"))
    folder = tmp_path / "saves"
    folder.mkdir()
    given = {"big": 2**64, "negative": -1, "text": '"37113"', "float": "37113.0", "max": 2**64 - 1, "same": doc["saved_at_tick"]}
    for name, value in given.items():
        text = json.dumps({**doc, "saved_at_tick": "@"})
        (folder / f"{name}.json").write_text(text.replace('"@"', str(value)), encoding="utf-8")
    (folder / "missing.json").write_text(json.dumps({k: v for k, v in doc.items() if k != "saved_at_tick"}), encoding="utf-8")
    out = tmp_path / "c"
    code, _, err = run(capsys, *_index(folder, out))
    assert code == 0, err
    code, text, err = run(capsys, "query", str(out), "SELECT regexp_replace(path, '.*/', '') AS name, saved_at_tick, readable FROM saves "
                                                     "ORDER BY name", "--format", "json")
    assert code == 0, err
    assert json.loads(text) == [{"name": f"{name}.json", "saved_at_tick": tick, "readable": True} for name, tick in sorted({
        "big": None, "negative": None, "text": None, "float": None, "missing": None, "max": 2**64 - 1, "same": doc["saved_at_tick"]}.items())]
    code, text, _ = run(capsys, "query", str(out), "SELECT DISTINCT regexp_replace(save, '.*/', '') AS name FROM firings "
                                                   "WHERE kind = 'finding' AND id = 'F002' ORDER BY name", "--format", "json")
    assert [r["name"] for r in json.loads(text)] == ["big.json", "float.json", "missing.json", "negative.json", "text.json"]


def test_a_save_or_folder_that_does_not_exist_is_misuse(saves, tmp_path, capsys):
    # Trial 47, 2.9: /nonexistent became a saves row ("1 unreadable") and the run exited 0.
    code, out, err = run(capsys, "corpus", str(saves), str(tmp_path / "typo"), "--out", str(tmp_path / "c"))
    assert (code, out) == (2, "")
    assert err.strip() == f"narrative-debugger corpus: SAVE_OR_DIR {tmp_path / 'typo'}: no such file or folder"
    assert not (tmp_path / "c").exists()


def test_a_run_that_finds_no_save_says_so_and_writes_nothing(small_corpus, tmp_path, capsys):
    # Trial 47, 2.9: an empty folder gave "indexed 0 save(s)", exit 0, and an empty corpus.
    empty = tmp_path / "empty"
    (empty / "content").mkdir(parents=True)
    (empty / "content" / "ignored.json").write_text("{}", encoding="utf-8")  # content/ folders are not searched
    (empty / "notes.txt").write_text("no saves here", encoding="utf-8")
    says = (f"narrative-debugger corpus: no save found in {empty} (saves are *.json or *.json.gz files; folders are searched "
            "at any depth); nothing written")
    code, out, err = run(capsys, "corpus", str(empty), "--out", str(tmp_path / "c"))
    assert (code, out, err.strip()) == (2, "", says)
    assert not (tmp_path / "c").exists()
    corpus = tmp_path / "old"
    shutil.copytree(small_corpus, corpus)
    before = sorted((p.relative_to(corpus), p.stat().st_mtime_ns) for p in corpus.rglob("*"))
    code, out, err = run(capsys, "corpus", str(empty), "--out", str(corpus))
    assert (code, out, err.strip()) == (2, "", says.replace(str(tmp_path / "c"), str(corpus)))
    assert sorted((p.relative_to(corpus), p.stat().st_mtime_ns) for p in corpus.rglob("*")) == before


def test_an_out_folder_that_cannot_be_made_names_the_flag(saves, tmp_path, capsys):
    # Trial 47: '--out /proc/cproc' said "/proc/cproc: No such file or directory", no flag named.
    (tmp_path / "file").write_text("", encoding="utf-8")
    out_dir = tmp_path / "file" / "corpus"
    code, out, err = run(capsys, *_index(saves, out_dir))
    assert (code, out) == (2, "")
    assert err.strip() == f"narrative-debugger corpus: --out {out_dir}: the folder cannot be made (Not a directory)"


def _leftovers(corpus: Path) -> list[str]:
    return sorted(str(p.relative_to(corpus)) for p in corpus.rglob(".*"))


def test_a_table_file_that_cannot_be_written_is_named_and_no_temporary_file_is_left(saves, small_corpus, tmp_path, capsys):
    # Trial 47: with tables/npcs.parquet a folder, corpus named '.npcs.XXXX.tmp' and left
    # one more of them behind at each run.
    corpus = tmp_path / "c"
    shutil.copytree(small_corpus, corpus)
    (corpus / "tables" / "npcs.parquet").unlink()
    (corpus / "tables" / "npcs.parquet").mkdir()
    for _ in range(2):  # the second after the first failed
        code, out, err = run(capsys, *_index(saves, corpus))
        assert (code, out) == (2, "")
        said, failed = err.strip().split("\n")  # tables/ is made again (trial 51: said so), and fails
        assert said == (f"narrative-debugger corpus: {corpus}: its tables/ " + (
            "could not be read (npcs.parquet is a folder, not a regular file)" if not _ else
            "were left unfinished by a run that stopped or failed") + "; they are made again from the parts")
        assert failed == f"narrative-debugger corpus: {corpus / 'tables' / 'npcs.parquet'}: cannot be written (Is a directory)"
        assert _leftovers(corpus) == []


def test_a_corpus_database_that_cannot_be_written_is_a_message(saves, small_corpus, tmp_path, capsys, monkeypatch):
    # Trial 47, 1.5: into a read-only corpus whose saves were all unchanged, write_database
    # fell over with DuckDB's IOException (a traceback, exit 1). chattr +i is not at hand
    # in a test: corpus.duckdb made a folder, and DuckDB refusing to open the file.
    corpus = tmp_path / "c"
    shutil.copytree(small_corpus, corpus)
    database = corpus / "corpus.duckdb"
    database.unlink()
    database.mkdir()
    code, out, err = run(capsys, *_index(saves, corpus))
    assert (code, out) == (2, "")
    assert err.strip() == f"narrative-debugger corpus: {database}: cannot be written (Is a directory)"
    assert _leftovers(corpus) == []
    database.rmdir()
    import duckdb

    connect = duckdb.connect

    def refused(database=":memory:", *args, **kwargs):
        if database != ":memory:":
            raise duckdb.IOException(f'IO Error: Cannot open file "{database}": Operation not permitted')
        return connect(database, *args, **kwargs)

    monkeypatch.setattr(duckdb, "connect", refused)
    code, out, err = run(capsys, *_index(saves, corpus))
    assert (code, out) == (2, "")
    assert err.strip() == f"narrative-debugger corpus: {database}: cannot be written (Operation not permitted)"
    assert _leftovers(corpus) == []


def test_a_first_run_that_failed_is_resumed_not_refused(saves, tmp_path, capsys):
    # Trial 47, 3.1: a first run that failed (a scheduler it could not reach) or was
    # stopped before its first part left content/ and tables/stale; every later run then
    # said "a folder with other files in it, not a corpus", and query "not a corpus".
    import dask

    corpus = tmp_path / "c"
    with dask.config.set({"distributed.comm.timeouts.connect": "1s"}):
        code, _, err = run(capsys, *_index(saves, corpus, "--scheduler", "tcp://127.0.0.1:1"))
    assert code == 2 and "--scheduler tcp://127.0.0.1:1: cannot reach it" in err
    assert (corpus / "content").is_dir() and not (corpus / "parts").exists()
    for args in (["query", str(corpus), "SELECT 1"], ["coverage", str(corpus)]):
        code, out, err = run(capsys, *args)
        assert (code, out) == (2, "")
        assert err.strip() == (f"narrative-debugger {args[0]}: {corpus} is a corpus whose first run stopped before any save was "
                               "indexed (run 'narrative-debugger corpus' with its saves and --out it again)")
    (corpus / ".corpus.duckdb.0123abcd.tmp").write_bytes(b"")  # as a run stopped while it wrote the database leaves it
    code, out, err = run(capsys, *_index(saves, corpus))
    assert code == 0 and "indexed 2 save(s) (0 replaced), skipped 0 unchanged, 0 unreadable" in out, err
    code, out, _ = run(capsys, "query", str(corpus), "SELECT count(*) AS n FROM saves", "--format", "json")
    assert code == 0 and json.loads(out) == [{"n": 2}]
    assert _leftovers(corpus) == []


def test_a_folder_of_saves_with_its_content_is_still_not_taken_for_a_corpus(saves, tmp_path, capsys):
    # What a half-made corpus holds is its own: a folder with a content/ of YAML is refused as before.
    folder = tmp_path / "game"
    shutil.copytree(CONTENT, folder / "content")
    (folder / "tables").mkdir()
    code, out, err = run(capsys, *_index(saves, folder))
    assert (code, out) == (2, "")
    assert err.strip() == (f"narrative-debugger corpus: --out {folder} is a folder with other files in it, not a corpus "
                           "(give a new or empty folder)")

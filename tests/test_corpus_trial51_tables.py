"""Trial 51 (a new user's run of README's corpus, coverage and query): ``tables/``
damaged in its middle, missing or left stale is made again and said so; a summary that
counts this run's unreadable saves says so; a SELECT of checkpoint() is refused."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest

from tests.support.cli import run
from tests.conftest import SAMPLES

REFUSED = ("is refused: a query reads the corpus's tables (SELECT, SHOW, DESCRIBE, SUMMARIZE, EXPLAIN, or a PRAGMA "
           "that only reads) and changes nothing")


@pytest.fixture
def built(tmp_path, capsys) -> tuple[Path, Path]:
    """(the saves' folder, a corpus of it): two sample saves, --no-prompts."""
    saves = tmp_path / "saves"
    shutil.copytree(SAMPLES / "content", saves / "content")
    for name in ("evening.json", "qa-faults.json"):
        shutil.copy(SAMPLES / name, saves / name)
    code, _, err = run(capsys, "corpus", str(saves), "--out", str(tmp_path / "qc"), "--no-prompts")
    assert code == 0, err
    return saves, tmp_path / "qc"


def _damage_middle(file: Path) -> None:
    """The trial's damage: 140 bytes of text a third of the way in, the ends kept."""
    data = bytearray(file.read_bytes())
    at = len(data) // 3
    data[at:at + 140] = b"GARBAGEGARBAGE" * 10
    file.write_bytes(bytes(data))


def _count(capsys, corpus: Path, table: str) -> int:
    code, out, err = run(capsys, "query", str(corpus), f"SELECT count(*) AS n FROM (SELECT DISTINCT * FROM {table})", "--format", "json")
    assert code == 0, err
    return json.loads(out)[0]["n"]


@pytest.mark.parametrize("table, reader", [("firing_counts", ["coverage"]), ("firings", ["query", "SELECT DISTINCT * FROM firings"])])
def test_a_tables_file_damaged_in_its_middle_is_made_again_by_the_next_run(built, capsys, table, reader):
    # Trial 51: coverage said to run corpus again; corpus skipped every save, said nothing,
    # and coverage failed again (a loop).
    saves, corpus = built
    before = _count(capsys, corpus, table)
    _damage_middle(corpus / "tables" / f"{table}.parquet")
    code, out, err = run(capsys, reader[0], str(corpus), *reader[1:])
    assert code == 2 and f"tables/{table}.parquet" in err, err
    code, out, err = run(capsys, "corpus", str(saves), "--out", str(corpus), "--no-prompts")
    assert code == 0 and "skipped 2 unchanged" in out, err
    assert err.startswith(f"narrative-debugger corpus: {corpus}: its tables/ could not be read ({table}.parquet: ")
    assert err.endswith("; they are made again from the parts\n")
    code, out, err = run(capsys, reader[0], str(corpus), *reader[1:])
    assert code == 0, err
    assert _count(capsys, corpus, table) == before
    code, out, err = run(capsys, "corpus", str(saves), "--out", str(corpus), "--no-prompts")
    assert (code, err) == (0, "")  # whole again: nothing to say


def test_a_tables_file_deleted_or_left_stale_is_made_again_and_said_so(built, capsys):
    # README: "a damaged file of tables/ is made again from the parts (it says so)"; a
    # deleted one, or tables/ left stale by a failed run, was made again silently.
    saves, corpus = built
    (corpus / "tables" / "npcs.parquet").unlink()
    code, out, err = run(capsys, "corpus", str(saves), "--out", str(corpus), "--no-prompts")
    assert code == 0 and err == (f"narrative-debugger corpus: {corpus}: its tables/ could not be read (npcs.parquet is missing); "
                                 "they are made again from the parts\n")
    assert (corpus / "tables" / "npcs.parquet").is_file()
    (corpus / "tables" / "stale").touch()
    code, out, err = run(capsys, "corpus", str(saves), "--out", str(corpus), "--no-prompts")
    assert code == 0 and err == (f"narrative-debugger corpus: {corpus}: its tables/ were left unfinished by a run that stopped "
                                 "or failed; they are made again from the parts\n")
    assert not (corpus / "tables" / "stale").exists()


def test_the_summary_says_its_unreadable_count_is_this_runs_when_the_corpus_holds_more(built, capsys):
    saves, corpus = built
    (saves / "broken.json").write_text("{bad", encoding="utf-8")
    code, out, err = run(capsys, "corpus", str(saves), "--out", str(corpus), "--no-prompts")
    assert code == 0 and "indexed 1 save(s) (0 replaced), skipped 2 unchanged, 1 unreadable; database" in out, err
    code, out, err = run(capsys, "corpus", str(saves), "--out", str(corpus), "--no-prompts")
    assert code == 0 and "skipped 3 unchanged, 0 unreadable this run (1 in the corpus); database" in out, err


@pytest.mark.parametrize("sql, name", [
    ("SELECT * FROM checkpoint()", "checkpoint()"),
    ("SELECT * FROM force_checkpoint()", "force_checkpoint()"),
    ("select * from main.CHECKPOINT('memory')", "checkpoint()"),
    ("SELECT count(*) FROM saves WHERE 0 IN (SELECT count(*) FROM checkpoint())", "checkpoint()"),
    ("EXPLAIN ANALYZE SELECT * FROM force_checkpoint()", "force_checkpoint()"),
])
def test_a_select_of_a_checkpoint_table_function_is_refused_as_its_call_is(built, capsys, sql, name):
    # Trial 51: SELECT * FROM checkpoint() printed Success; force_checkpoint() a raw DuckDB error.
    _, corpus = built
    code, out, err = run(capsys, "query", str(corpus), sql)
    assert (code, out, err) == (2, "", f"narrative-debugger query: {name} {REFUSED}\n")
    code, out, err = run(capsys, "query", str(corpus), "CALL checkpoint()")
    assert (code, err) == (2, f"narrative-debugger query: CALL {REFUSED}\n")
    code, out, err = run(capsys, "query", str(corpus), "SELECT 'checkpoint()' AS text", "--format", "csv")
    assert (code, out) == (0, "text\ncheckpoint()\n"), err

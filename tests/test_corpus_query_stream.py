"""``query`` streams its rows (trial 50, finding 3): DuckDB's result is fetched, made
printable and written ``BATCH_ROWS`` at a time, so memory does not grow with the rows
(``SELECT * FROM range(5000000)`` held 1.8 GB as csv, 3.7 GB as json), and the bytes
are those the whole result gave. Also the expression-depth message (11) and a damaged
table that blocked every query (17)."""

from __future__ import annotations

import csv
import io
import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from narrative_debugger.app.cli.commands.query import BATCH_ROWS
from narrative_debugger.app.cli.main import main
from tests.support.cli import run
from tests.conftest import SAMPLES

CLI = [sys.executable, "-m", "narrative_debugger.app"]
#: More rows than two batches, the last one part full.
ROWS = 2 * BATCH_ROWS + 7
#: Rows whose values change type and width within and across batches.
SQL = (f"SELECT range AS n, repeat('x', (range % 5)::int) AS s, range % 3 = 0 AS b, [range, NULL] AS l, "
       f"CASE WHEN range % 7 = 0 THEN NULL ELSE range / 4 END AS f FROM range({ROWS})")


@pytest.fixture(scope="module")
def corpus(tmp_path_factory) -> Path:
    saves = tmp_path_factory.mktemp("saves")
    shutil.copy(SAMPLES / "walkaway-spiral.json", saves)
    out = tmp_path_factory.mktemp("corpus") / "c"
    assert main(["corpus", str(saves), "--content", str(SAMPLES / "content"), "--out", str(out), "--no-prompts"]) == 0
    return out


def _expected_rows() -> list[dict]:
    return [{"n": n, "s": "x" * (n % 5), "b": n % 3 == 0, "l": [n, None], "f": None if n % 7 == 0 else n / 4} for n in range(ROWS)]


def test_json_of_more_rows_than_a_batch_is_the_whole_list_as_one_document(corpus, capsys):
    code, out, err = run(capsys, "query", str(corpus), SQL, "--format", "json")
    assert code == 0, err
    assert out == json.dumps(_expected_rows(), ensure_ascii=False, indent=1) + "\n"


def test_csv_of_more_rows_than_a_batch(corpus, capsys):
    code, out, err = run(capsys, "query", str(corpus), SQL, "--format", "csv")
    assert code == 0, err
    text = io.StringIO()
    writer = csv.writer(text, lineterminator="\n")
    writer.writerow(["n", "s", "b", "l", "f"])
    for row in _expected_rows():
        writer.writerow([row["n"], row["s"], "true" if row["b"] else "false", json.dumps(row["l"]), "" if row["f"] is None else row["f"]])
    assert out == text.getvalue()


@pytest.mark.parametrize("fmt", ["json", "csv"])
def test_an_empty_result_is_the_same_as_before(corpus, capsys, fmt):
    code, out, _ = run(capsys, "query", str(corpus), "SELECT 1 AS a, 'x' AS b WHERE false", "--format", fmt)
    assert code == 0 and out == {"json": "[]\n", "csv": "a,b\n"}[fmt]


def test_text_aligns_to_the_first_batch_and_counts_every_row(corpus, capsys):
    # Widths are those of the header and the first BATCH_ROWS rows (README): a longer
    # value further down pushes the rest of its line to the right.
    code, out, err = run(capsys, "query", str(corpus), f"SELECT CASE WHEN range < {BATCH_ROWS} THEN 'abc' ELSE 'abcdefgh' END AS v, "
                         f"'end' AS e FROM range({ROWS}) ORDER BY range", "--format", "text")
    assert code == 0, err
    lines = out.splitlines()
    assert lines[:2] == ["v    e", "abc  end"]
    assert lines[BATCH_ROWS] == "abc  end" and lines[BATCH_ROWS + 1] == "abcdefgh  end"
    assert lines[-1] == f"({ROWS} rows)" and len(lines) == ROWS + 2


def test_a_value_too_deep_past_the_first_batch_stops_the_output_there(corpus, capsys):
    bad = BATCH_ROWS + 3
    deep = "[" * 260 + "1" + "]" * 260
    code, out, err = run(capsys, "query", str(corpus), f"SELECT range AS n, CASE WHEN range = {bad} THEN {deep} END AS d FROM range({ROWS})",
                         "--format", "csv")
    assert code == 2
    assert err.strip() == (f"narrative-debugger query: row {bad + 1}, column 'd': a value with lists or maps nested more than 256 deep "
                           "cannot be printed (select less of it, or flatten it)")
    assert out.splitlines() == ["n,d"] + [f"{n}," for n in range(BATCH_ROWS)]  # the first batch, whole


def _env() -> dict:
    return {k: v for k, v in os.environ.items() if k not in ("DISPLAY", "WAYLAND_DISPLAY")}


@pytest.mark.parametrize("fmt", ["csv", "json", "text"])
def test_a_reader_that_leaves_stops_a_result_too_large_to_make(corpus, fmt):
    # 10^10 rows: made whole (as before) it would not end, nor fit in memory.
    sql = "SELECT a.range AS a, b.range AS b FROM range(100000) a, range(100000) b"
    proc = subprocess.Popen([*CLI, "query", str(corpus), sql, "--format", fmt], stdout=subprocess.PIPE, stderr=subprocess.PIPE, env=_env())
    first = proc.stdout.readline()
    proc.stdout.close()
    err = proc.stderr.read()
    assert first.split() == {"csv": [b"a,b"], "json": [b"["], "text": [b"a", b"b"]}[fmt]  # text: widths from the first rows
    assert proc.wait(timeout=300) == 0, err
    assert err == b"", err


def test_peak_memory_does_not_grow_with_the_rows(corpus):
    # Before: 1 000 000 rows as json peaked at about 800 MB (3.7 GB for 5 000 000); now
    # about 115 MB for any number of rows. A child measures its own child's peak.
    measure = ("import resource, subprocess, sys; "
               "subprocess.run(sys.argv[1:], stdout=subprocess.DEVNULL, check=True); "
               "print(resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss)")
    if sys.platform != "linux":
        pytest.skip("ru_maxrss is in kilobytes on Linux")
    result = subprocess.run([sys.executable, "-c", measure, *CLI, "query", str(corpus), "SELECT * FROM range(1000000)", "--format", "json"],
                            capture_output=True, text=True, timeout=300, env=_env())
    assert result.returncode == 0, result.stderr
    assert int(result.stdout) < 400_000, f"{int(result.stdout) // 1024} MB"


def test_the_expression_depth_message_suggests_no_setting(corpus, capsys):
    # Trial 50, 11: DuckDB's message said 'Use "SET max_expression_depth TO x"', which
    # a query may not do (SET is refused).
    code, out, err = run(capsys, "query", str(corpus), "SELECT " + "1+" * 1200 + "1 AS x")
    assert (code, out) == (2, "")
    assert "Max expression depth limit of 1000 exceeded" in err and "SET" not in err
    assert "a query cannot change settings" in err


@pytest.mark.parametrize("sql", ["SELECT count(*) FROM firings",
                                 "SELECT s.path FROM saves s JOIN firings f ON f.save = s.path",
                                 "SELECT count(*) FROM query_table('fir' || 'ings')"])
def test_a_damaged_table_fails_the_queries_that_read_it_only(corpus, tmp_path, capsys, sql):
    # Trial 50, 17: one damaged table failed every query, even SELECT count(*) FROM saves.
    copy = tmp_path / "c"
    shutil.copytree(corpus, copy)
    (copy / "tables" / "firings.parquet").write_bytes(b"PAR1")
    code, out, err = run(capsys, "query", str(copy), sql)
    assert (code, out) == (2, "")
    assert err.startswith(f"narrative-debugger query: {copy} cannot be read: its firings table: ") and "Traceback" not in err
    assert "run 'narrative-debugger corpus' with its saves and --out it again" in err
    code, out, err = run(capsys, "query", str(copy), "SELECT count(*) AS n FROM saves", "--format", "json")
    assert (code, json.loads(out)) == (0, [{"n": 1}]), err
    code, out, err = run(capsys, "query", str(copy), "SHOW TABLES", "--format", "csv")
    assert code == 0 and "firings" in out.split(), err

"""``corpus`` with a relative ``--content``, and SQL with no statement in ``query``
(issue 39, found trying the commands as a new user would)."""

from __future__ import annotations

import json
import os
import shutil
from pathlib import Path

import pytest

from tests.support.content_lines import never_fired_line, sample_content_plus
from tests.support.savegen.generator import generate_save, write_save
from tests.support.cli import run

ROOT = Path(__file__).resolve().parent.parent
CONTENT = ROOT / "sample_saves" / "content"

#: A line one small playtest cannot fire: its nearest miss is printed with the commands
#: that open it, the content folder among their arguments.
NEVER = never_fired_line("paths-test_never_010", "Gated on fifty abandoned quarrels with Kael.")


@pytest.fixture
def relative_corpus(tmp_path, monkeypatch, capsys) -> Path:
    """A one-save corpus built from ``tmp_path`` with ``--content mine`` (relative)."""
    sample_content_plus(tmp_path / "mine", NEVER)
    (tmp_path / "plays").mkdir()
    write_save(generate_save(seed=5, events=150, content_dir=CONTENT), tmp_path / "plays" / "p.json")
    monkeypatch.chdir(tmp_path)
    code, _, err = run(capsys, "corpus", "plays", "--content", "mine", "--out", "qa", "--no-prompts")
    assert code == 0, err
    return tmp_path / "qa"


def test_a_relative_content_folder_is_kept_absolute(relative_corpus, tmp_path, monkeypatch, capsys):
    # The saves were named by absolute path, the content folder as typed ('mine'): the
    # nearest miss's commands (and the app's double-click) then looked for ./mine
    # wherever they were run.
    monkeypatch.chdir(ROOT)
    mine = os.path.abspath(tmp_path / "mine")
    code, out, err = run(capsys, "query", str(relative_corpus), "SELECT DISTINCT content FROM saves UNION ALL SELECT DISTINCT content FROM content", "--format", "json")
    assert code == 0, err
    assert json.loads(out) == [{"content": mine}, {"content": mine}]
    code, out, _ = run(capsys, "coverage", str(relative_corpus))
    assert code == 0 and "line:paths-test_never_010 --tick" in out
    assert f"--content {mine}" in out and "--content mine" not in out
    code, out, _ = run(capsys, "coverage", str(relative_corpus), "--format", "json")
    miss = json.loads(out)["lines"]["paths-test_never_010"]["nearest_miss"]
    code, _, err = run(capsys, "why", miss["save"], "line:paths-test_never_010", "--tick", str(miss["tick"]), "--content", mine)
    assert code == 0, err


@pytest.mark.parametrize("sql", ["", "   ", ";", "-- only a comment"])
def test_sql_without_a_statement_is_a_message(relative_corpus, capsys, sql):
    # DuckDB gives no cursor for these: the command fell over with an AttributeError.
    code, out, err = run(capsys, "query", str(relative_corpus), sql)
    assert (code, out) == (2, "")
    assert err.strip() == "narrative-debugger query: the SQL holds no statement to run"


def test_sql_with_two_statements_is_a_message(relative_corpus, capsys):
    # New-user trial, stop 45: "SELECT 1; SELECT 2" printed the second's rows alone.
    code, out, err = run(capsys, "query", str(relative_corpus), "SELECT 1; SELECT 2")
    assert (code, out) == (2, "")
    assert err.strip() == "narrative-debugger query: the SQL holds 2 statements: give one at a time"
    code, out, _ = run(capsys, "query", str(relative_corpus), "SELECT 1 AS n;", "--format", "json")
    assert code == 0 and json.loads(out) == [{"n": 1}]  # one statement and its ';'


@pytest.mark.parametrize("args, flag", [
    (["corpus", "", "--out", "qa"], "SAVE_OR_DIR"),
    (["corpus", "plays", "--out", ""], "--out"),
    (["coverage", ""], "CORPUS"),
    (["query", "", "SELECT 1"], "CORPUS"),
])
def test_an_empty_folder_name_is_misuse_not_the_current_folder(tmp_path, monkeypatch, capsys, args, flag):
    # Path('') is '.': `corpus "$PLAYTESTS" --out qa` with the variable unset indexed the
    # current folder, every save below it, without a word (as --content '' did, issue 35).
    (tmp_path / "plays").mkdir()
    write_save(generate_save(seed=5, events=150, content_dir=CONTENT), tmp_path / "here.json")
    monkeypatch.chdir(tmp_path)
    code, out, err = run(capsys, *args)
    assert (code, out) == (2, "")
    assert f"{flag}: an empty folder name" in err
    assert not (tmp_path / "qa").exists() and not (tmp_path / "parts").exists()


def test_cards_of_saves_indexed_without_prompts_are_not_said_never_matched(relative_corpus, capsys):
    # The fixture's corpus is made with --no-prompts: no card was counted, yet coverage
    # listed every card of the content as "never matched".
    code, out, _ = run(capsys, "coverage", str(relative_corpus))
    assert code == 0
    assert "story cards were not counted in 1 of 1 readable save(s): indexed with --no-prompts" in out
    assert "never matched" not in out and "always dropped" not in out
    code, out, _ = run(capsys, "coverage", str(relative_corpus), "--format", "html")
    assert code == 0 and "Story cards were not counted in 1 of 1 readable save(s)" in out


@pytest.mark.parametrize("sql", [
    "COPY (SELECT 1 AS x) TO '{corpus}/corpus.duckdb'",
    "COPY (SELECT 1 AS x) TO '{corpus}/notes.csv'",
    "SELECT 1; COPY saves TO '{corpus}/saves.csv'",
    "ATTACH '{corpus}/more.duckdb' AS more",
    "EXPORT DATABASE '{corpus}/export'",
    "EXPLAIN ANALYZE COPY (SELECT 1 AS x) TO '{corpus}/notes.csv'",  # EXPLAIN ANALYZE runs it (trial 51)
])
def test_a_query_writes_no_file_even_inside_the_corpus(relative_corpus, capsys, sql):
    # DuckDB's allowed directory is the corpus (its parts are read there): a COPY ... TO
    # overwrote corpus.duckdb, and an ATTACH left a new database in the folder.
    before = sorted((p.relative_to(relative_corpus), p.stat().st_size, p.stat().st_mtime_ns) for p in relative_corpus.rglob("*"))
    code, out, err = run(capsys, "query", str(relative_corpus), sql.format(corpus=relative_corpus))
    assert (code, out) == (2, "")
    assert "is refused: a query writes no file" in err
    after = sorted((p.relative_to(relative_corpus), p.stat().st_size, p.stat().st_mtime_ns) for p in relative_corpus.rglob("*"))
    assert after == before
    code, out, _ = run(capsys, "query", str(relative_corpus), "SELECT count(*) AS n FROM saves", "--format", "json")
    assert code == 0 and json.loads(out) == [{"n": 1}]


@pytest.mark.parametrize("part", ["tables/saves.parquet", "tables/npcs.parquet"])
def test_a_damaged_corpus_is_a_message_naming_it_not_a_traceback(relative_corpus, capsys, part):
    # A truncated Parquet file (a copy cut short, a full disk) made coverage, query and a
    # second corpus run fall over with DuckDB's InvalidInputException.
    (relative_corpus / part).write_bytes(b"PAR1")
    table = part.split("/")[1].split(".")[0]
    for args in (["coverage", str(relative_corpus)], ["coverage", str(relative_corpus), "--format", "html"],
                 ["query", str(relative_corpus), f"SELECT count(*) FROM {table}"]):
        code, out, err = run(capsys, *args)
        assert (code, out) == (2, ""), args
        assert f"{relative_corpus} cannot be read: its {table} table: " in err and "Traceback" not in err, args
        assert "run 'narrative-debugger corpus' with its saves and --out it again" in err
    # Trial 50, 17: a query that does not read the damaged table answers (it failed too).
    other = "npcs" if table == "saves" else "saves"
    code, out, err = run(capsys, "query", str(relative_corpus), f"SELECT count(*) > 0 AS some FROM {other}", "--format", "json")
    assert (code, json.loads(out)) == (0, [{"some": True}]), err
    # As the message says: corpus makes tables/ again from the parts (the trial, stop 45,
    # was told to index into a new folder), and the corpus answers again.
    code, out, err = run(capsys, "corpus", "plays", "--content", "mine", "--out", "qa", "--no-prompts")
    assert code == 0 and "skipped 1 unchanged" in out, out
    assert "its tables/ could not be read" in err and "they are made again from the parts" in err
    code, out, _ = run(capsys, "query", str(relative_corpus), "SELECT count(*) AS n FROM saves", "--format", "json")
    assert code == 0 and json.loads(out) == [{"n": 1}]


def test_the_window_says_a_damaged_corpus_cannot_be_read(relative_corpus, open_window, monkeypatch):
    shown = []
    monkeypatch.setattr("narrative_debugger.app.window.corpus.show_message", lambda parent, kind, title, text: shown.append(text))
    (relative_corpus / "tables" / "saves.parquet").write_bytes(b"PAR1")
    w = open_window(size=None, shown=False)
    assert not w.corpus.open(relative_corpus)
    assert shown == [shown[0]] and shown[0].startswith(f"{relative_corpus} cannot be read: its saves table: ")
    assert w.docks["coverage"].isHidden()


@pytest.mark.parametrize("sql, word", [
    ("DROP VIEW saves", "DROP"),
    ("CREATE TABLE t AS SELECT 1 AS x", "CREATE"),
    ("INSERT INTO saves SELECT * FROM saves", "INSERT"),
    ("SET threads = 1", "SET"),
    ("INSTALL httpfs", "INSTALL"),
    ("BEGIN", "BEGIN"),
    ("PRAGMA memory_limit='1KB'", "PRAGMA"),  # a setting: trial 47 was told PRAGMA is allowed, and refused it
    # Trial 51: these printed success, acting on the query's own in-memory database only.
    ("EXPLAIN ANALYZE CREATE TABLE t AS SELECT 1", "EXPLAIN ANALYZE CREATE"),
    ("/* timed */ explain -- how long\n (ANALYZE, FORMAT json) INSERT INTO saves SELECT * FROM saves", "EXPLAIN ANALYZE INSERT"),
    ("CHECKPOINT", "CHECKPOINT"),
    ("FORCE CHECKPOINT", "FORCE CHECKPOINT"),
    ("CALL checkpoint()", "CALL"),
    ("CREATE TABLE x AS (PIVOT saves ON readable USING count(*))", "CREATE"),  # DuckDB's expansion has no text
])
def test_a_query_that_does_not_read_is_refused_not_a_success(relative_corpus, capsys, sql, word):
    # New-user trial, stop 45: 'DROP VIEW saves' printed "Success" (each query has a
    # connection of its own, so nothing was dropped, yet it said it had been).
    code, out, err = run(capsys, "query", str(relative_corpus), sql)
    assert (code, out) == (2, "")
    assert err.strip() == (f"narrative-debugger query: {word} is refused: a query reads the corpus's tables "
                           "(SELECT, SHOW, DESCRIBE, SUMMARIZE, EXPLAIN, or a PRAGMA that only reads) and changes nothing")


@pytest.mark.parametrize("sql, rows", [
    ("SHOW TABLES", None),
    ("DESCRIBE saves", None),
    ("EXPLAIN SELECT 1", None),
    ("PIVOT (SELECT readable FROM saves) ON readable", [{"true": 1}]),  # DuckDB makes it two statements of its own
    ("CALL pragma_version()", None),
    ("EXPLAIN ANALYZE SELECT count(*) FROM saves", None),
    ("EXPLAIN CALL pragma_version()", None),
])
def test_reading_statements_still_answer(relative_corpus, capsys, sql, rows):
    code, out, err = run(capsys, "query", str(relative_corpus), sql, "--format", "json")
    assert code == 0, err
    got = json.loads(out)
    assert got if rows is None else got == rows


def test_coverage_text_names_the_codes_never_found_and_marks_forbidden_moves(tmp_path, capsys):
    # Trial 47: the text listed only the codes found (the JSON has all, 36 with count 0),
    # and Active->ConflictAbandoned (forbidden, I001) read like any other transition.
    code, _, err = run(capsys, "corpus", str(ROOT / "sample_saves"), "--out", str(tmp_path / "qa"), "--no-prompts")
    assert code == 0, err
    _, text, _ = run(capsys, "coverage", str(tmp_path / "qa"))
    _, doc, _ = run(capsys, "coverage", str(tmp_path / "qa"), "--format", "json")
    never = sorted(k for k, e in json.loads(doc)["codes"].items() if not e["count"])
    assert never and f"never found ({len(never)}): " + ", ".join(never) in text
    forbidden = [line for line in text.splitlines() if "(forbidden by schema §3.2: I001)" in line]
    assert [line.split()[0] for line in forbidden] == ["Active->ConflictAbandoned"]


def test_a_save_reached_by_several_paths_is_indexed_once_by_its_first(tmp_path, capsys):
    # Trial 50, 14: a symbolic link to a save was indexed as a second save (the same
    # sha256), and every count of coverage doubled. A hard link and a folder reached
    # through a link are the same file again.
    plays = tmp_path / "plays"
    plays.mkdir()
    shutil.copy(ROOT / "sample_saves" / "evening.json", plays / "b-evening.json")
    os.symlink(plays / "b-evening.json", plays / "c-link.json")
    os.link(plays / "b-evening.json", plays / "d-hard.json")
    os.symlink(plays, tmp_path / "linked-plays")
    code, out, err = run(capsys, "corpus", str(plays), str(tmp_path / "linked-plays" / "c-link.json"), "--content", str(CONTENT),
                         "--out", str(tmp_path / "qa"), "--no-prompts")
    assert code == 0 and "indexed 1 save(s)" in out, err
    assert err == (f"narrative-debugger corpus: 3 path(s) reach a save already listed (a link, or the same file by another path), "
                   f"indexed once by its first path: {plays / 'c-link.json'} is {plays / 'b-evening.json'} and 2 more\n")
    code, out, err = run(capsys, "query", str(tmp_path / "qa"), "SELECT path FROM saves", "--format", "json")
    assert json.loads(out) == [{"path": str(plays / "b-evening.json")}], err
    # Its counts are one save's: the same as a corpus of the file alone.
    code, _, err = run(capsys, "corpus", str(plays / "b-evening.json"), "--content", str(CONTENT), "--out", str(tmp_path / "alone"), "--no-prompts")
    assert code == 0, err
    counts = []
    for corpus in ("qa", "alone"):
        _, doc, _ = run(capsys, "coverage", str(tmp_path / corpus), "--format", "json")
        counts.append(json.loads(doc))
    assert counts[0] == counts[1] and counts[0]["saves"] == 1


@pytest.mark.parametrize("command", [["coverage"], ["query", "SELECT 1"]])
def test_a_corpus_that_does_not_exist_is_told_from_a_file(tmp_path, capsys, command):
    # Trial 50, 13: `coverage ../nonexistent` said "is not a folder".
    (tmp_path / "file").write_text("x", encoding="utf-8")
    os.symlink(tmp_path / "gone", tmp_path / "dangling")
    for name, says in (("nonexistent", "does not exist"), ("dangling", "does not exist"), ("file/below", "does not exist"),
                       ("file", "is not a folder")):
        code, out, err = run(capsys, command[0], str(tmp_path / name), *command[1:])
        assert (code, out) == (2, "")
        assert err == f"narrative-debugger {command[0]}: {tmp_path / name} {says}\n"

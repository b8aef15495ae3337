"""Trial 50's findings on ``corpus`` and ``coverage`` (issue 39): cards of saves indexed
with ``--no-prompts`` are unknown, not 0 (4); a save that is gone is dropped or named (6);
a folder that is not a corpus is a message, exit 2 (7); a damaged part of no save does
not block later runs (9); ids in no content folder do not draw as coverage (16)."""

from __future__ import annotations

import json
import re
import shutil
from pathlib import Path

import pytest

from narrative_debugger.app.cli.main import main
from narrative_debugger.models.corpus import store
from tests.support.content_lines import never_fired_line, sample_content_plus
from tests.support.savegen.generator import generate_save, write_save
from tests.support.cli import run
from tests.conftest import CONTENT, SAMPLES


@pytest.fixture(scope="module")
def samples_corpus(tmp_path_factory) -> Path:
    """The four sample saves (qa-faults.json fires a line no content defines), without prompts."""
    folder = tmp_path_factory.mktemp("samples")
    for save in SAMPLES.glob("*.json"):
        shutil.copy(save, folder / save.name)
    out = tmp_path_factory.mktemp("corpus") / "c"
    assert main(["corpus", str(folder), "--content", str(CONTENT), "--out", str(out), "--no-prompts"]) == 0
    return out


def _json(capsys, corpus: Path) -> dict:
    code, out, err = run(capsys, "coverage", str(corpus), "--format", "json")
    assert code == 0, err
    return json.loads(out)


# (4) cards not counted ----------------------------------------------------------------

def test_cards_not_counted_are_null_in_json_and_not_drawn_at_zero(samples_corpus, capsys):
    doc = _json(capsys, samples_corpus)
    assert doc["cards_counted_in"] == 0 and doc["cards"]
    assert all(e == {"included": None, "dropped": None, "saves": None} for e in doc["cards"].values())
    code, out, _ = run(capsys, "coverage", str(samples_corpus))
    assert code == 0 and "story cards: not counted (11 in the content; indexed with --no-prompts)" in out.splitlines()[0]
    code, page, _ = run(capsys, "coverage", str(samples_corpus), "--format", "html")
    assert code == 0
    assert "Story cards included" not in page and " of 11" not in page
    assert "Story cards (11): not counted: indexed with --no-prompts." in page
    for lore in ("lore/harbor.yaml", "lore/town.yaml"):  # a row saying so, not a bar at 0
        row = re.search(rf">{re.escape(lore)}</text>(.*?)(?=<text x=\"214\"|</svg>)", page).group(1)
        assert "not counted: indexed with --no-prompts" in row and "#3b7dd8" not in row and " of " not in row


def test_cards_counted_in_some_saves_are_counts_over_those(tmp_path, capsys):
    plays = tmp_path / "plays"
    plays.mkdir()
    write_save(generate_save(seed=3, events=150, content_dir=CONTENT), plays / "a.json")
    out = tmp_path / "c"
    assert run(capsys, "corpus", str(plays), "--content", str(CONTENT), "--out", str(out), "--no-prompts")[0] == 0
    shutil.copy(SAMPLES / "evening.json", tmp_path / "evening.json")
    assert run(capsys, "corpus", str(tmp_path / "evening.json"), "--content", str(CONTENT), "--out", str(out))[0] == 0
    doc = _json(capsys, out)
    assert doc["cards_counted_in"] == 1
    assert all(isinstance(e["included"], int) and isinstance(e["saves"], int) for e in doc["cards"].values())
    assert any(e["included"] for e in doc["cards"].values())


# (6) a save that is gone ----------------------------------------------------------------

@pytest.fixture
def two_plays(tmp_path) -> tuple[Path, Path]:
    """Content with a line no playtest fires, and a folder of two small playtests."""
    content = tmp_path / "content"
    sample_content_plus(content, never_fired_line("t50_never_010", "Gated on fifty quarrels."))
    plays = tmp_path / "plays"
    plays.mkdir()
    for name, seed in (("a.json", 11), ("b.json", 12)):
        write_save(generate_save(seed=seed, events=150, content_dir=CONTENT), plays / name)
    return content, plays


def _saves(capsys, corpus: Path) -> list[str]:
    code, out, err = run(capsys, "query", str(corpus), "SELECT path FROM saves ORDER BY path", "--format", "json")
    assert code == 0, err
    return [row["path"] for row in json.loads(out)]


def test_a_save_gone_from_a_folder_given_again_is_dropped_and_said(two_plays, tmp_path, capsys):
    content, plays = two_plays
    corpus = tmp_path / "c"
    args = ("corpus", str(plays), "--content", str(content), "--out", str(corpus), "--no-prompts")
    assert run(capsys, *args)[0] == 0
    (plays / "a.json").unlink()
    code, out, err = run(capsys, *args)
    assert code == 0, err
    assert "skipped 1 unchanged, 0 unreadable, dropped 1 no longer in their folder" in out
    assert f"dropped (indexed before, no longer in {plays}): {plays / 'a.json'}" in out
    assert _saves(capsys, corpus) == [str(plays / "b.json")]
    doc = _json(capsys, corpus)
    assert doc["saves"] == 1 and doc["missing_saves"] == []
    assert doc["lines"]["t50_never_010"]["nearest_miss"]["save"] == str(plays / "b.json")
    # unchanged saves stay incremental
    code, out, _ = run(capsys, *args)
    assert code == 0 and "indexed 0 save(s) (0 replaced), skipped 1 unchanged" in out and "dropped" not in out


def test_a_save_gone_outside_the_folders_given_is_named_kept_and_never_the_miss_shown(two_plays, tmp_path, capsys):
    content, plays = two_plays
    corpus = tmp_path / "c"
    assert run(capsys, "corpus", str(plays), "--content", str(content), "--out", str(corpus), "--no-prompts")[0] == 0
    before = _json(capsys, corpus)["lines"]["t50_never_010"]["nearest_miss"]
    assert before["save"] == str(plays / "a.json")  # the tie goes to the first save by path
    (plays / "a.json").unlink()
    code, out, err = run(capsys, "corpus", str(plays / "b.json"), "--content", str(content), "--out", str(corpus), "--no-prompts")
    assert code == 0, err
    assert (f"1 save(s) indexed before are no longer at their path (kept, still counted; run corpus with the folder "
            f"they were in to drop them): {plays / 'a.json'}") in out
    doc = _json(capsys, corpus)
    assert doc["saves"] == 2 and doc["missing_saves"] == [str(plays / "a.json")]
    assert doc["lines"]["t50_never_010"]["nearest_miss"]["save"] == str(plays / "b.json")  # a save still there
    said = next(line for line in out.splitlines() if "no longer at their path" in line)
    code, text, _ = run(capsys, "coverage", str(corpus))
    # Trial 51: corpus and coverage said it with two parentheticals; one line now, the page's too.
    assert said in text.splitlines()
    code, page, _ = run(capsys, "coverage", str(corpus), "--format", "html")
    assert f"<p>{said.replace(str(plays / 'a.json'), '<code>' + str(plays / 'a.json') + '</code>')}.</p>" in page
    # With both gone the miss can only be in a missing save: it says so and offers no command.
    (plays / "b.json").unlink()
    code, text, _ = run(capsys, "coverage", str(corpus))
    assert code == 0
    lines = text.splitlines()
    start = next(k for k, line in enumerate(lines) if line.startswith("  t50_never_010:"))
    entry = "\n".join([lines[start]] + [line for line in lines[start + 1:start + 3] if line.startswith("      ")])
    assert "(no longer at this path)" in entry and "no command: the save cannot be opened" in entry
    assert "narrative-debugger " not in entry
    code, page, _ = run(capsys, "coverage", str(corpus), "--format", "html")
    row = page.split("<code>t50_never_010</code>", 1)[1].split("</tr>", 1)[0]
    assert "(no longer at this path)" in row and "cannot be opened" in row and "narrative-debugger" not in row


# (7) not a corpus -----------------------------------------------------------------------

@pytest.mark.parametrize("make, says", [
    (lambda c: (c / "corpus.duckdb").write_bytes(b""), "it holds corpus.duckdb but no part of a save in parts/"),
    (lambda c: (c / "corpus.duckdb").write_text("hello\n"), "it holds corpus.duckdb but no part of a save in parts/"),
    (lambda c: (c / "parts").mkdir(), "it holds parts/ but no part of a save in parts/"),
])
@pytest.mark.parametrize("command", [("coverage",), ("query", "SELECT count(*) FROM saves")])
def test_a_folder_that_is_not_a_corpus_is_a_message_and_exit_2(tmp_path, capsys, make, says, command):
    folder = tmp_path / "c"
    folder.mkdir()
    make(folder)
    code, out, err = run(capsys, command[0], str(folder), *command[1:])
    assert code == 2 and out == ""
    assert f"{folder} is not a corpus: {says}" in err and "tables/" in err


def test_a_corpus_with_no_save_left_is_a_message_and_exit_2(samples_corpus, tmp_path, capsys):
    corpus = tmp_path / "c"
    shutil.copytree(samples_corpus, corpus)
    for folder in store.part_folders(corpus):
        shutil.rmtree(folder)
    store.compact(corpus)
    code, out, err = run(capsys, "coverage", str(corpus))
    assert code == 2 and f"{corpus} is a corpus with no save in it" in err


# (9) a damaged part ---------------------------------------------------------------------

def test_a_damaged_part_of_no_save_is_named_removed_and_blocks_no_later_run(samples_corpus, tmp_path, capsys):
    corpus = tmp_path / "c"
    shutil.copytree(samples_corpus, corpus)
    saves = _saves(capsys, corpus)
    junk = corpus / "parts" / "abc"
    junk.mkdir()
    (junk / "saves.parquet").write_text("junk\n")
    (corpus / "tables" / "stale").touch()  # as a run stopped midway leaves it: tables/ made from the parts
    args = ("corpus", *saves, "--content", str(CONTENT), "--out", str(corpus), "--no-prompts")
    code, out, err = run(capsys, *args)
    assert code == 0, err
    assert f"{junk}: a damaged part (saves.parquet is not a whole Parquet file) of no save in the corpus; removed" in err
    assert not junk.exists() and "skipped 4 unchanged" in out
    code, out, err = run(capsys, *args)
    assert code == 0 and err == ""
    assert _json(capsys, corpus)["saves"] == 4


def test_a_part_that_cannot_be_read_is_not_called_unwritable(samples_corpus, tmp_path, capsys):
    corpus = tmp_path / "c"
    shutil.copytree(samples_corpus, corpus)
    # The last part in name order: the views read the first part's columns, making
    # tables/ reads them all (it is the reading of the parts that fails, not a writing).
    saves = sorted(_saves(capsys, corpus), key=store.part_key)
    npcs = corpus / "parts" / store.part_key(saves[-1]) / "npcs.parquet"
    # Trial 51: damaged within its rows, past the ends and the footer the part check
    # reads: the part looks whole until its rows are read.
    with open(npcs, "r+b") as f:
        f.seek(npcs.stat().st_size // 8)
        f.write(b"\xff" * 16)
    assert store.part_is_whole(corpus, saves[-1])
    (corpus / "tables" / "npcs.parquet").unlink()  # tables/ is made again from every part
    code, out, err = run(capsys, "corpus", saves[0], "--content", str(CONTENT), "--out", str(corpus), "--no-prompts")
    assert code == 2
    # It names the part and the save to give again, as for a part damaged at its ends.
    said, err = err.split("\n", 1)  # tables/npcs.parquet is missing: said first (trial 51)
    assert said == (f"narrative-debugger corpus: {corpus}: its tables/ could not be read (npcs.parquet is missing); "
                    "they are made again from the parts")
    assert err.startswith(f"narrative-debugger corpus: {npcs}: the part of {saves[-1]} is damaged (")
    assert "it is removed: give that save to corpus to index it again (" in err and "tables/npcs.parquet was not written)" in err
    assert "cannot be written" not in err
    code, out, err = run(capsys, "corpus", *saves, "--content", str(CONTENT), "--out", str(corpus), "--no-prompts")
    assert code == 0 and "indexed 1 save(s) (0 replaced), skipped 3 unchanged" in out, err
    assert _json(capsys, corpus)["saves"] == 4


def test_a_part_damaged_in_its_footer_is_named_with_its_save_and_indexed_again(samples_corpus, tmp_path, capsys):
    # Trial 51: the check read the 4 bytes at each end, and a part damaged between them
    # (here its footer, the metadata) passed for whole.
    corpus = tmp_path / "c"
    shutil.copytree(samples_corpus, corpus)
    saves = sorted(_saves(capsys, corpus))
    npcs = corpus / "parts" / store.part_key(saves[1]) / "npcs.parquet"
    data = bytearray(npcs.read_bytes())
    footer = int.from_bytes(data[-8:-4], "little")
    data[-8 - footer:-8] = b"\0" * footer  # the metadata, between the last page and the length
    npcs.write_bytes(bytes(data))
    assert not store.part_is_whole(corpus, saves[1])
    code, out, err = run(capsys, "corpus", saves[0], "--content", str(CONTENT), "--out", str(corpus), "--no-prompts")
    assert code == 0, err
    assert (f"{npcs.parent}: the part of {saves[1]} is damaged (npcs.parquet has a footer DuckDB cannot read (") in err
    assert "give that save to corpus to index it again" in err
    code, out, err = run(capsys, "corpus", saves[1], "--content", str(CONTENT), "--out", str(corpus), "--no-prompts")
    assert code == 0 and "indexed 1 save(s) (1 replaced), skipped 0 unchanged" in out
    assert f"{saves[1]}: its part in {corpus} is missing or damaged; indexing it again" in err
    assert store.part_is_whole(corpus, saves[1])


def test_a_part_written_with_other_columns_is_indexed_again(samples_corpus, tmp_path, capsys):
    # A part of a version before near_misses.distance: its footer lacks the column.
    import duckdb

    corpus = tmp_path / "c"
    shutil.copytree(samples_corpus, corpus)
    saves = sorted(_saves(capsys, corpus))
    part = corpus / "parts" / store.part_key(saves[0]) / "near_misses.parquet"
    older = part.with_name("older.parquet")
    duckdb.sql(f"COPY (SELECT * EXCLUDE (distance) FROM read_parquet('{part}')) TO '{older}' (FORMAT parquet)")
    older.replace(part)
    code, out, err = run(capsys, "corpus", *saves, "--content", str(CONTENT), "--out", str(corpus), "--no-prompts")
    assert code == 0 and "indexed 1 save(s) (1 replaced), skipped 3 unchanged" in out, err
    assert store.part_is_whole(corpus, saves[0])


# (16) ids in no content folder ----------------------------------------------------------

def test_ids_in_no_content_folder_are_not_drawn_as_covered(samples_corpus, capsys):
    code, page, _ = run(capsys, "coverage", str(samples_corpus), "--format", "html")
    assert code == 0
    assert "(not in the content)" not in page
    row = page.split(">(in no content folder)</text>", 1)[1].split("</svg>", 1)[0]
    assert "1 id(s) fired, defined nowhere (M002): not coverage" in row
    assert "#3b7dd8" not in row and " of " not in row

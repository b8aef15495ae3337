"""Issue 39: ``corpus``, ``coverage`` and ``query`` over generated playtests.

Every count of ``coverage --format json`` is held against a count made straight from
the saves' journals (read here as plain JSON), and the finding codes against
``check --format json``."""

from __future__ import annotations

import csv
import io
import json
import os
import shutil
from collections import Counter
from pathlib import Path

import pytest
import yaml

from narrative_debugger.app.cli.main import main
from tests.support.content_lines import never_fired_line, sample_content_plus
from tests.support.savegen.generator import generate_save, write_save
from tests.support.cli import run

ROOT = Path(__file__).resolve().parent.parent
CONTENT = ROOT / "sample_saves" / "content"
#: Issue 39's "Counts": 50 generated playtests (one of them the QA sample).
SAVES = 50
SCENARIOS = ("evening", "walkaway-spiral", "abandoned-confrontation")


#: Two lines the playtests cannot fire, added to a copy of the sample content: one
#: with a prerequisite that never holds (a nearest miss), one with none (no miss).
EXTRA_LINES = never_fired_line("corpus-test_never_010", "A line gated on fifty abandoned quarrels with Kael.") + """
- id: corpus-test_free_020
  text: "A line with no prerequisites that the game never showed."
  trigger: on_arrival
  tags: [test]
- id: corpus-test_eligible_030
  text: "A line whose one prerequisite held, that the game never chose."
  trigger: on_arrival
  prerequisites:
    interaction:
      target: "npc:kael-davan"
      min_count: 1
  tags: [test]
"""


@pytest.fixture(scope="module")
def content(tmp_path_factory) -> Path:
    """The sample content plus ``EXTRA_LINES`` (the playtests are played by the sample's)."""
    folder = tmp_path_factory.mktemp("content") / "content"
    sample_content_plus(folder, EXTRA_LINES)
    return folder


@pytest.fixture(scope="module")
def playtests(tmp_path_factory) -> Path:
    """``SAVES`` small generated playtests (three scenarios, one with planted faults), one save
    whose name holds markup (an abandoned-confrontation one), and one that cannot be read."""
    folder = tmp_path_factory.mktemp("playtests")
    for k in range(SAVES):
        if k == 7:  # the QA sample: a playtest with planted faults
            (folder / "play07.json").write_bytes((ROOT / "sample_saves" / "qa-faults.json").read_bytes())
            continue
        doc = generate_save(seed=100 + k, events=120 + 6 * k, scenario=SCENARIOS[k % 3], content_dir=CONTENT)
        write_save(doc, folder / ("a<b>&'.json" if k == 2 else f"play{k:02d}.json"))
    (folder / "broken.json").write_text('{"format": "settled-reach-save", ', encoding="utf-8")
    return folder


@pytest.fixture(scope="module")
def corpus(playtests, content, tmp_path_factory) -> Path:
    out = tmp_path_factory.mktemp("corpus") / "c"
    assert main(["corpus", str(playtests), "--content", str(content), "--out", str(out), "--jobs", "2"]) == 0
    return out


def _journals(folder: Path):
    for path in sorted(folder.glob("*.json")):
        try:
            yield path, json.loads(path.read_text(encoding="utf-8"))["journal"]
        except (ValueError, KeyError):
            continue


def _moves(journal: list) -> list[str]:
    """Interaction state moves in journal order, told from the event names alone."""
    state: dict[int, str] = {}
    out = []
    for entry in journal:
        (variant, body), = entry["event"].items()
        target = body.get("target") if isinstance(body, dict) else None
        new = {"InteractionStarted": "Active", "InteractionConfrontation": "Confrontation", "InteractionCompleted": "Completed",
               "InteractionWalkedAway": "WalkedAway", "InteractionConflictAbandoned": "ConflictAbandoned"}.get(variant)
        if new is None:
            continue
        source = "Start" if variant == "InteractionStarted" else state.get(target)
        out.append(f"{source}->{new}")
        state[target] = new
    return out


def test_coverage_counts_equal_the_journals(corpus, playtests, content, capsys):
    code, out, _ = run(capsys, "coverage", str(corpus), "--format", "json")
    assert code == 0
    doc = json.loads(out)
    # The keys, and the two README adds (trial 50): cards counted in, saves gone.
    assert set(doc) == {"saves", "lines", "cards", "transitions", "codes", "cards_counted_in", "missing_saves"}
    assert doc["saves"] == SAVES + 1  # the unreadable one is a row too
    assert doc["cards_counted_in"] == SAVES and doc["missing_saves"] == []
    fired, fired_saves, moves, move_saves = Counter(), Counter(), Counter(), Counter()
    for _, journal in _journals(playtests):
        lines = [e["event"]["MonologueFired"]["line_id"] for e in journal if "MonologueFired" in e["event"]]
        fired.update(lines)
        fired_saves.update(set(lines))
        seen = _moves(journal)
        moves.update(seen)
        move_saves.update(set(seen))
    assert sum(fired.values()) > 0 and len(moves) >= 4
    for line_id, entry in doc["lines"].items():
        assert (entry["fired"], entry["saves"]) == (fired[line_id], fired_saves[line_id]), line_id
    assert set(fired) <= set(doc["lines"])
    for move, entry in doc["transitions"].items():
        assert (entry["count"], entry["saves"]) == (moves[move], move_saves[move]), move
    assert set(moves) <= set(doc["transitions"])
    # Codes: as check reports them, file by file.
    code, out, _ = run(capsys, "check", *sorted(map(str, playtests.glob("*.json"))), "--content", str(content), "--format", "json")
    count, saves = Counter(), Counter()
    for result in json.loads(out)["files"]:
        codes = [f["code"] for f in result["findings"]]
        count.update(codes)
        saves.update(set(codes))
    assert sum(count.values()) > 0
    for finding_code, entry in doc["codes"].items():
        assert (entry["count"], entry["saves"]) == (count[finding_code], saves[finding_code]), finding_code
    assert set(count) <= set(doc["codes"])


def test_never_fired_lines_are_the_content_minus_the_fired_and_their_misses_open(corpus, playtests, content, capsys):
    content_lines = set()
    for pool in sorted((content / "monologues").glob("*.yaml")):
        content_lines |= {line["id"] for line in yaml.safe_load(pool.read_text(encoding="utf-8"))}
    fired = {e["event"]["MonologueFired"]["line_id"] for _, j in _journals(playtests) for e in j if "MonologueFired" in e["event"]}
    _, out, _ = run(capsys, "coverage", str(corpus), "--format", "json")
    doc = json.loads(out)
    never = {k for k, e in doc["lines"].items() if e["fired"] == 0}
    assert never == content_lines - fired
    assert {"corpus-test_never_010", "corpus-test_free_020"} <= never
    assert doc["lines"]["corpus-test_free_020"]["nearest_miss"] is None
    assert doc["lines"]["corpus-test_never_010"]["nearest_miss"]["failing"]
    checked = 0
    for line_id in sorted(never):
        miss = doc["lines"][line_id]["nearest_miss"]
        if miss is None:
            continue
        # Opened there, ``why`` shows the same failing clauses at that tick.
        code, why_out, err = run(capsys, "why", miss["save"], f"line:{line_id}", "--tick", str(miss["tick"]), "--content", str(content), "--format", "json")
        assert code == 0, err
        if miss["failing"]:
            assert json.loads(why_out)["nearest_miss"]["failing"] == miss["failing"]
        else:  # nothing failed there: the line was eligible, and why says so
            assert json.loads(why_out)["eligible"] is True
        checked += 1
    assert checked
    _, text, _ = run(capsys, "coverage", str(corpus))
    assert "never fired:" in text and "narrative-debugger why" in text
    # Eligible, never chosen: said so, not "0 failing: every prerequisite held" (trial, stop 45).
    eligible = doc["lines"]["corpus-test_eligible_030"]["nearest_miss"]
    assert eligible["failing"] == []
    assert (f"  corpus-test_eligible_030: eligible in {eligible['save']} at tick {eligible['tick']}: "
            "every prerequisite held there, yet the game never chose the line") in text.splitlines()
    assert "0 failing" not in text
    _, page, _ = run(capsys, "coverage", str(corpus), "--format", "html")
    assert "none: every prerequisite held there, yet the game never chose the line" in page


def test_the_summaries_count_content_lines_and_name_a_fired_line_the_content_lacks(corpus, playtests, content, capsys):
    """The QA sample fires harbor-nights_m_s_999, which no pool defines (M002): it has
    its row in the JSON, but "N of M lines fired" counts the content's lines only (the
    new-user trial read "17 of 18" for 17 lines)."""
    content_lines = set()
    for pool in sorted((content / "monologues").glob("*.yaml")):
        content_lines |= {line["id"] for line in yaml.safe_load(pool.read_text(encoding="utf-8"))}
    fired = {e["event"]["MonologueFired"]["line_id"] for _, j in _journals(playtests) for e in j if "MonologueFired" in e["event"]}
    unknown = "harbor-nights_m_s_999"
    assert unknown in fired and unknown not in content_lines
    expected = f"monologue lines fired: {len(content_lines & fired)} of {len(content_lines)};"
    _, text, _ = run(capsys, "coverage", str(corpus))
    assert expected in text.splitlines()[0]
    assert f"fired but in no content folder (M002): {unknown}" in text
    _, page, _ = run(capsys, "coverage", str(corpus), "--format", "html")
    assert f"Monologue lines fired: {len(content_lines & fired)} of {len(content_lines)}." in page
    assert f"(M002): <code>{unknown}</code>" in page
    _, out, _ = run(capsys, "coverage", str(corpus), "--format", "json")
    assert json.loads(out)["lines"][unknown]["fired"] >= 1  # the row stays: the count is the journals'


def _query(capsys, corpus: Path, sql: str):
    code, out, err = run(capsys, "query", str(corpus), sql, "--format", "json")
    assert code == 0, err
    return json.loads(out)


@pytest.mark.skipif(not hasattr(os, "mkfifo"), reason="FIFOs are POSIX")
def test_a_fifo_or_a_device_among_the_saves_is_an_unreadable_row_not_a_hang(tmp_path, capsys):
    # New-user trial, stop 44: corpus hashed each file before opening it, so a FIFO
    # blocked for ever and a link to /dev/zero ran for ever. They are refused as check refuses them.
    saves = tmp_path / "saves"
    saves.mkdir()
    shutil.copy(ROOT / "sample_saves" / "evening.json", saves / "evening.json")
    os.mkfifo(saves / "fifo.json")
    if os.path.exists("/dev/zero"):
        (saves / "zero.json").symlink_to("/dev/zero")
    refused = ["fifo.json", *(["zero.json"] if os.path.exists("/dev/zero") else [])]
    code, out, err = run(capsys, "corpus", str(saves), "--content", str(CONTENT), "--out", str(tmp_path / "c"), "--no-prompts")
    assert code == 0, err
    rows = _query(capsys, tmp_path / "c", "SELECT path, readable, sha256 FROM saves ORDER BY path")
    assert [(Path(r["path"]).name, r["readable"], r["sha256"] is None) for r in rows] == [
        ("evening.json", True, False), *((name, False, True) for name in refused)]
    found = _query(capsys, tmp_path / "c", "SELECT save FROM firings WHERE kind = 'finding' AND id = 'F001' ORDER BY save")
    assert [Path(r["save"]).name for r in found] == refused
    # Run again: read again and unreadable again, not "replaced" (trial, stop 45).
    code, out, err = run(capsys, "corpus", str(saves), "--content", str(CONTENT), "--out", str(tmp_path / "c"), "--no-prompts")
    assert code == 0, err
    assert f"indexed {len(refused)} save(s) (0 replaced), skipped 1 unchanged, {len(refused)} unreadable" in out


def test_incremental_skips_the_unchanged_and_replaces_the_changed(tmp_path, capsys):
    saves = tmp_path / "saves"
    saves.mkdir()
    for k in range(3):
        write_save(generate_save(seed=k, events=120, content_dir=CONTENT), saves / f"s{k}.json")
    out_dir = tmp_path / "corpus"
    index = ("corpus", str(saves), "--content", str(CONTENT), "--out", str(out_dir))
    code, out, _ = run(capsys, *index)
    assert code == 0 and "indexed 3 save(s) (0 replaced), skipped 0 unchanged" in out
    code, out, _ = run(capsys, *index)
    assert code == 0 and "indexed 0 save(s) (0 replaced), skipped 3 unchanged" in out
    changed = generate_save(seed=99, events=200, content_dir=CONTENT)
    write_save(changed, saves / "s1.json")
    code, out, _ = run(capsys, *index)
    assert code == 0 and "indexed 1 save(s) (1 replaced), skipped 2 unchanged" in out
    rows = _query(capsys, out_dir, "SELECT path, events FROM saves ORDER BY path")
    assert [Path(r["path"]).name for r in rows] == ["s0.json", "s1.json", "s2.json"]
    assert rows[1]["events"] == 200
    fired = [e["event"]["MonologueFired"]["line_id"] for e in changed["journal"] if "MonologueFired" in e["event"]]
    got = _query(capsys, out_dir, f"SELECT count(*) AS n FROM firings WHERE kind = 'monologue_line' AND save = '{rows[1]['path']}'")
    assert got == [{"n": len(fired)}]
    # tables/ was made again from the old tables and the replaced save's part only:
    # it answers as the parts themselves do.
    sql = "SELECT save, kind, id, count(*) AS n FROM firings GROUP BY ALL ORDER BY ALL"
    compacted = _query(capsys, out_dir, sql)
    parts_only = tmp_path / "parts-only"
    shutil.copytree(out_dir, parts_only)
    (parts_only / "tables" / "stale").touch()  # as a stopped run leaves it: the views read the parts
    assert _query(capsys, parts_only, sql) == compacted and len({r["save"] for r in compacted}) == 3
    # Without prompts, then with them: the saves are indexed again, their prompts filled.
    bare = ("corpus", str(saves), "--content", str(CONTENT), "--out", str(tmp_path / "bare"))
    code, out, _ = run(capsys, *bare, "--no-prompts")
    assert code == 0 and "indexed 3 save(s)" in out
    assert _query(capsys, tmp_path / "bare", "SELECT count(*) AS n FROM prompts") == [{"n": 0}]
    assert _query(capsys, tmp_path / "bare", "SELECT bool_or(prompts) AS p FROM saves") == [{"p": False}]
    code, out, _ = run(capsys, *bare, "--no-prompts")
    assert code == 0 and "skipped 3 unchanged" in out
    code, out, _ = run(capsys, *bare)
    assert code == 0 and "indexed 3 save(s) (3 replaced)" in out
    assert _query(capsys, tmp_path / "bare", "SELECT bool_and(prompts) AS p FROM saves") == [{"p": True}]
    assert _query(capsys, tmp_path / "bare", "SELECT count(*) > 0 AS some FROM prompts") == [{"some": True}]


def test_a_part_damaged_by_hand_is_indexed_again_not_skipped(tmp_path, capsys):
    """New-user trial, stop 44: a part cut short by hand went unnoticed (``tables/``
    still held its rows) and the next run skipped its save as unchanged."""
    saves = tmp_path / "saves"
    saves.mkdir()
    for k in range(2):
        write_save(generate_save(seed=k, events=120, content_dir=CONTENT), saves / f"s{k}.json")
    out_dir = tmp_path / "corpus"
    index = ("corpus", str(saves), "--content", str(CONTENT), "--out", str(out_dir), "--no-prompts")
    assert run(capsys, *index)[0] == 0
    sql = "SELECT save, kind, id, count(*) AS n FROM firings GROUP BY ALL ORDER BY ALL"
    before = _query(capsys, out_dir, sql)
    damaged = next((out_dir / "parts").glob("*/firings.parquet"))
    damaged.write_bytes(damaged.read_bytes()[:100])
    missing = next(p for p in (out_dir / "parts").glob("*/npcs.parquet") if p.parent != damaged.parent)
    missing.unlink()
    code, out, err = run(capsys, *index)
    assert code == 0 and "indexed 2 save(s) (2 replaced), skipped 0 unchanged" in out
    assert err.count("is missing or damaged; indexing it again") == 2
    assert _query(capsys, out_dir, sql) == before
    # The parts are whole again: the views over them alone answer the same.
    (out_dir / "tables" / "stale").touch()
    assert _query(capsys, out_dir, sql) == before
    code, out, err = run(capsys, *index)
    # The stale mark put by hand is said (trial 51: tables/ made again silently), nothing else.
    assert "skipped 2 unchanged" in out and err == (f"narrative-debugger corpus: {out_dir}: its tables/ were left unfinished by "
                                                    "a run that stopped or failed; they are made again from the parts\n")


def test_an_unreadable_save_is_a_row_with_its_findings(corpus, capsys):
    rows = _query(capsys, corpus, "SELECT readable, events, errors, findings FROM saves WHERE path LIKE '%broken.json'")
    assert len(rows) == 1 and rows[0]["readable"] is False and rows[0]["errors"] >= 1
    codes = _query(capsys, corpus, "SELECT id FROM firings WHERE kind = 'finding' AND save LIKE '%broken.json'")
    assert codes and all(r["id"].startswith("F") for r in codes)
    assert _query(capsys, corpus, "SELECT count(*) AS n FROM saves WHERE readable") == [{"n": SAVES}]


def test_finding_firings_hold_the_message_and_location_check_prints(corpus, playtests, content, capsys):
    # Trial 51: a finding's code was in the tables, not what it said nor where.
    code, out, _ = run(capsys, "check", *sorted(map(str, playtests.glob("*.json"))), "--content", str(content), "--format", "json")
    expected = Counter((os.path.abspath(result["path"]), f["code"], f["message"], f["location"] or None)
                       for result in json.loads(out)["files"] for f in result["findings"])
    rows = _query(capsys, corpus, "SELECT save, id, message, location FROM firings WHERE kind = 'finding'")
    assert Counter((r["save"], r["id"], r["message"], r["location"]) for r in rows) == expected
    assert any(r["location"] for r in rows) and all(r["message"] for r in rows)
    others = _query(capsys, corpus, "SELECT count(*) AS n FROM firings WHERE kind <> 'finding' AND (message IS NOT NULL OR location IS NOT NULL)")
    assert others == [{"n": 0}]


def test_tables_have_their_contract_columns(corpus, capsys):
    expected = {
        "saves": ["path", "sha256", "readable", "events", "saved_at_tick", "content", "content_stamp", "errors", "warnings", "findings", "prompts"],
        "npcs": ["save", "slug", "stable_id", "score", "level", "stress", "walk_aways", "conversations"],
        "firings": ["save", "tick", "kind", "id", "npc", "journal_index", "message", "location"],
        "firing_counts": ["save", "kind", "id", "count"],
        "near_misses": ["save", "tick", "line_id", "failing_count", "failing", "distance"],
        "prompts": ["save", "tick", "npc", "tokens", "cards_included", "cards_dropped", "included", "dropped", "prefix_unchanged"],
    }
    for table, columns in expected.items():
        code, out, _ = run(capsys, "query", str(corpus), f"SELECT * FROM {table} LIMIT 0", "--format", "csv")
        assert code == 0 and out.splitlines()[0].split(",") == columns
    # firing_counts is firings counted per save, kind and id.
    counted = "SELECT save, kind, id, count(*) AS count FROM firings GROUP BY ALL ORDER BY ALL"
    assert _query(capsys, corpus, "SELECT * FROM firing_counts ORDER BY ALL") == _query(capsys, corpus, counted)
    # One prompt per conversation: as many as the journals started.
    started = _query(capsys, corpus, "SELECT count(*) AS n FROM firings WHERE kind = 'transition' AND id = 'Start->Active'")
    assert _query(capsys, corpus, "SELECT count(*) AS n FROM prompts") == started
    # An NPC's second prompt shares a prefix with its first; the first has none to share.
    firsts = _query(capsys, corpus, "SELECT count(*) AS n FROM prompts p WHERE prefix_unchanged IS NULL")
    npcs = _query(capsys, corpus, "SELECT count(*) AS n FROM (SELECT DISTINCT save, npc FROM prompts)")
    assert firsts == npcs
    assert _query(capsys, corpus, "SELECT min(prefix_unchanged) > 0 AS shared FROM prompts") == [{"shared": True}]


def test_prompts_table_equals_a_fresh_builder_for_each_conversation(tmp_path, capsys):
    """The prompts table, built with one builder and its caches over the whole save, holds
    what a fresh ``PromptBuilder`` gives for each conversation's first prompt alone: the
    tokens (the whole prompt encoded at once), the cards in and out, and the prefix shared
    with the NPC's previous prompt counted token by token. The save is long and the budget
    of the content it is indexed with small (1 500 tokens), so that histories overflow it,
    the oldest lines slide out and the lore budget drops cards."""
    from narrative_debugger.models.playthrough import Playthrough
    from narrative_debugger.models.prompt.builder import PromptBuilder
    from narrative_debugger.models.prompt.tokens import get_encoder

    content = tmp_path / "content"
    shutil.copytree(CONTENT, content)
    config = content / "prompt.yaml"
    config.write_text(config.read_text(encoding="utf-8").replace("context_token_budget: 8192", "context_token_budget: 1500"), encoding="utf-8")
    save = tmp_path / "long.json"
    write_save(generate_save(seed=5, events=2500, content_dir=CONTENT), save)
    assert main(["corpus", str(save), "--content", str(content), "--out", str(tmp_path / "c")]) == 0
    rows = _query(capsys, tmp_path / "c", "SELECT tick, npc, tokens, included, dropped, prefix_unchanged FROM prompts ORDER BY tick, npc")
    play = Playthrough.open(save, content)
    assert play.content.prompt.context_token_budget == 1500
    expected, previous, slid = [], {}, 0
    for move in play.index.transitions:
        if move.source is not None:
            continue
        slug = play.index.slugs[move.npc]
        preview = PromptBuilder(play).build(slug, move.tick)
        ids = get_encoder(preview.encoding).encode(preview.text)
        before = previous.get(slug)
        shared = None
        if before is not None:
            shared = next((k for k, (a, b) in enumerate(zip(before, ids)) if a != b), min(len(before), len(ids)))
        previous[slug] = ids
        slid += preview.history.included < preview.history.total
        expected.append({"tick": move.tick, "npc": slug, "tokens": len(ids), "included": [c.id for c in preview.cards if c.included],
                         "dropped": [c.id for c in preview.cards if not c.included], "prefix_unchanged": shared})
    expected.sort(key=lambda row: (row["tick"], row["npc"]))
    assert rows == expected
    assert len(rows) > 100 and slid > 20  # many prompts, many with history left out
    assert any(row["dropped"] for row in rows) and any(row["included"] for row in rows)


def test_query_json_csv_text_and_bad_sql(corpus, tmp_path, capsys):
    rows = _query(capsys, corpus, "SELECT slug, count(*) AS saves, max(score) AS best FROM npcs GROUP BY slug ORDER BY slug")
    assert rows and set(rows[0]) == {"slug", "saves", "best"} and all(r["saves"] == SAVES for r in rows)
    code, out, _ = run(capsys, "query", str(corpus), "SELECT slug, level FROM npcs ORDER BY save, slug LIMIT 3", "--format", "csv")
    table = list(csv.reader(io.StringIO(out)))
    assert code == 0 and table[0] == ["slug", "level"] and len(table) == 4
    code, out, _ = run(capsys, "query", str(corpus), "SELECT 1 AS one")
    assert code == 0 and out.splitlines() == ["one", "1", "(1 row)"]
    code, out, err = run(capsys, "query", str(corpus), "SELEC nonsense FROM")
    assert code == 2 and out == "" and err.startswith("narrative-debugger query: ") and "Traceback" not in err
    # SQL reads the corpus only: a COPY over a file elsewhere, or a read of one, is refused.
    target = tmp_path / "evening.json"
    target.write_text("keep", encoding="utf-8")
    for sql in (f"COPY saves TO '{target}' (FORMAT csv)", f"SELECT * FROM read_text('{target}')", "SET enable_external_access = true"):
        code, out, err = run(capsys, "query", str(corpus), sql)
        assert code == 2 and err.startswith("narrative-debugger query: "), sql
    assert target.read_text(encoding="utf-8") == "keep"
    code, _, err = run(capsys, "query", str(corpus / "nope"), "SELECT 1")
    assert code == 2 and "nope does not exist" in err


def test_html_is_one_self_contained_page_with_plots_and_escaped_text(corpus, capsys):
    code, out, _ = run(capsys, "coverage", str(corpus), "--format", "html")
    assert code == 0 and out.startswith("<!DOCTYPE html>")
    assert out.count("<svg") == 3
    for outside in ("<script", "src=", "href=", "@import", "url("):
        assert outside not in out
    # The nearest miss of corpus-test_never_010 is in the first save by path of those
    # least short of its clause (an abandoned-confrontation playtest, k % 3 == 2): the
    # one whose name is markup, shown as text.
    assert "a<b>" not in out and "a&lt;b&gt;&amp;&#x27;.json at tick" in out


def test_a_corpus_without_its_compacted_tables_reads_the_parts(corpus, tmp_path, capsys):
    """What a run stopped midway leaves (parts, no ``tables/``) answers the same."""
    sql = "SELECT kind, count(*) AS n, count(DISTINCT save) AS saves FROM firings GROUP BY kind ORDER BY kind"
    whole = _query(capsys, corpus, sql)
    copy = tmp_path / "copy"
    shutil.copytree(corpus, copy)
    assert (copy / "tables" / "firings.parquet").is_file()
    shutil.rmtree(copy / "tables")
    assert _query(capsys, copy, sql) == whole and len(whole) == 4


def test_a_dask_local_cluster_gives_the_same_tables(tmp_path, capsys):
    """The per-save work on a Dask LocalCluster (``--scheduler``) writes the same tables
    as the process pool."""
    from distributed import LocalCluster

    saves = tmp_path / "saves"
    saves.mkdir()
    for k in range(3):
        write_save(generate_save(seed=60 + k, events=150, scenario=SCENARIOS[k], content_dir=CONTENT), saves / f"d{k}.json")
    (saves / "bad.json").write_text("[", encoding="utf-8")
    pool, cluster_out = tmp_path / "pool", tmp_path / "cluster"
    assert main(["corpus", str(saves), "--content", str(CONTENT), "--out", str(pool), "--jobs", "2"]) == 0
    # tcp:// (--scheduler takes no other transport; in one process LocalCluster would use inproc://).
    with LocalCluster(n_workers=2, threads_per_worker=1, processes=False, dashboard_address=None, protocol="tcp://") as cluster:
        code, out, err = run(capsys, "corpus", str(saves), "--content", str(CONTENT), "--out", str(cluster_out), "--scheduler", cluster.scheduler_address)
    assert code == 0 and "indexed 4 save(s)" in out and "1 unreadable" in out, err
    for table in ("saves", "npcs", "firings", "firing_counts", "near_misses", "prompts", "content"):
        sql = f"SELECT * FROM {table} ORDER BY ALL"
        assert _query(capsys, cluster_out, sql) == _query(capsys, pool, sql), table
    import dask

    with dask.config.set({"distributed.comm.timeouts.connect": "1s"}):
        code, _, err = run(capsys, "corpus", str(saves), "--out", str(tmp_path / "none"), "--scheduler", "tcp://127.0.0.1:1")
    assert code == 2 and "--scheduler tcp://127.0.0.1:1: cannot reach it" in err

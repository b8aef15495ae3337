"""Report evidence holds its view state (issue 35): every shot of ``check --screenshots``
starts from the clean state a single ``screenshot --finding`` starts from, and a report
reopens every part of the view it recorded; a tampered record opens nothing outside
the PNG's folder.
"""

from __future__ import annotations

from pathlib import Path

import pytest
from narrative_debugger.app.cli.main import main
from narrative_debugger.models.playthrough import Playthrough
from narrative_debugger.models.report.meta import read_record
from PySide6.QtGui import QImage

from tests.conftest import SAMPLES

QA = SAMPLES / "qa-faults.json"


def finding_specs(path: Path) -> list[tuple[str, int]]:
    """(code, n) naming each finding of ``path`` as ``--finding CODE:N`` does, in order."""
    counts: dict[str, int] = {}
    specs = []
    for finding in Playthrough.open(path, None).findings:
        counts[finding.code] = counts.get(finding.code, 0) + 1
        specs.append((finding.code, counts[finding.code]))
    return specs


def test_batch_screenshots_match_single_finding_shots(qtbot, tmp_path, capsys):
    """10 of the 19 batch shots of qa-faults.json recorded (and drew) the fact, NPC or view
    an earlier finding had left selected. Now every record, and every pixel, is the one a
    single ``screenshot --finding`` of the same finding writes."""
    specs = finding_specs(QA)
    assert len(specs) == 19
    from PySide6.QtWidgets import QApplication, QMenu

    def plot_menus() -> int:
        return sum(isinstance(w, QMenu) and w.title() == "Plot Options" for w in QApplication.topLevelWidgets())

    menus = plot_menus()
    assert main(["check", str(QA), "--format", "json", "--screenshots", str(tmp_path / "batch")]) == 1
    assert plot_menus() <= menus  # the fresh windows are gone, with pyqtgraph's parentless menus (earlier tests' may go too)
    matched = []
    for code, n in specs:
        single = tmp_path / f"single-{code}-{n}.png"
        assert main(["screenshot", str(QA), "--finding", f"{code}:{n}", "--out", str(single)]) == 0
        batch = tmp_path / "batch" / f"qa-faults-{code}-{n}.png"
        want, got = read_record(single.read_bytes()), read_record(batch.read_bytes())
        assert got == want, f"{code}:{n}"
        assert QImage(str(batch)) == QImage(str(single)), f"{code}:{n} draws other pixels"
        matched.append(f"{code}:{n}")
    capsys.readouterr()
    assert len(matched) == 19
    # The cases that carried state over: their own view, NPC and no stale fact.
    records = {f"{c}:{n}": read_record((tmp_path / "batch" / f"qa-faults-{c}-{n}.png").read_bytes()) for c, n in specs}
    assert (records["J001:1"].npc, records["J001:1"].view, records["J001:1"].fact) == ("lera-sessik", "knowledge", "")
    assert (records["M002:1"].npc, records["M002:1"].view) == ("lera-sessik", "knowledge")
    assert records["R004:1"].fact == "" and records["J003:2"].fact == ""


# ----- a tampered save_name (pattern 6) -----

TAMPERED_NAMES = ["../outside/evening.json", "outside/evening.json", "/abs/evening.json", "..\\outside\\evening.json",
                  "C:evening.json", "c:\\evening.json", "..", ".", "even\x00ing.json"]


def tampered_report(folder: Path, save_name: str) -> Path:
    """A report PNG whose record names ``save_name`` and no old path, with a real save
    where a path-following reopen would find it (``folder/../outside``)."""
    from narrative_debugger.models.report.meta import REPORT_FORMAT_VERSION, ViewRecord, embed_record

    from tests.test_report_meta import tiny_png

    (folder / "reports").mkdir(parents=True)
    (folder / "outside").mkdir()
    (folder / "outside" / "evening.json").write_bytes((SAMPLES / "evening.json").read_bytes())
    png = folder / "reports" / "report.png"
    png.write_bytes(embed_record(tiny_png(), ViewRecord(REPORT_FORMAT_VERSION, save_name, "", "", "", 10, "", "knowledge")))
    return png


@pytest.mark.parametrize("name", TAMPERED_NAMES)
def test_a_save_name_that_is_not_a_plain_file_name_is_refused(name):
    from narrative_debugger.models.report.meta import not_plain_file_name

    assert not_plain_file_name(name)


@pytest.mark.parametrize("name", ["evening.json", "évening 2.json.gz", "note:1.json", "..evening.json", ""])
def test_a_plain_file_name_is_accepted(name):
    from narrative_debugger.models.report.meta import not_plain_file_name

    assert not_plain_file_name(name) is None


@pytest.mark.parametrize("name", ["../outside/evening.json", "..\\outside\\evening.json", "/abs/evening.json", "C:evening.json"])
def test_a_tampered_save_name_opens_nothing_and_says_so(qtbot, open_window, tmp_path, message_boxes, name):
    from narrative_debugger.app.window.report import open_report

    window = open_window(SAMPLES / "walkaway-spiral.json", (1200, 800), persist=False)
    before = window.session.playthrough
    png = tampered_report(tmp_path, name)
    assert open_report(window, png) is False
    kind, title, text = message_boxes[-1]
    assert (kind, title) == ("warning", "Cannot open report")
    assert text.startswith(f"{png}: ") and "save_name" in text and "not a plain file name" in text
    assert not window.loader.busy and window.session.playthrough is before


def test_open_report_with_a_tampered_save_name_exits_2(tmp_path, capsys):
    png = tampered_report(tmp_path, "../outside/evening.json")
    assert main(["open-report", str(png)]) == 2
    err = capsys.readouterr().err
    assert f"{png}: the view record's save_name '../outside/evening.json' is not a plain file name" in err


# ----- reopening brings back every part of the view recorded -----


def reopened(qtbot, open_window, png: Path, *, comparing: bool = False):
    """A fresh window that has reopened ``png`` and restored what it records."""
    from narrative_debugger.app.window.report import open_report

    window = open_window(None, (1440, 900), persist=False)
    record = read_record(png.read_bytes())
    assert open_report(window, png, ask=False)
    window.wait_for_load()
    if comparing:
        qtbot.waitUntil(lambda: window.session.comparison is not None and window.session.tick == record.tick, timeout=60000)
    qtbot.waitUntil(lambda: window.session.ready and window.session.tick == record.tick, timeout=60000)
    return window


def selected_finding_rows(window) -> list[int]:
    panel = window.panels["findings"][0]
    return sorted({i.row() for i in panel.view.selectionModel().selectedRows()})


@pytest.mark.parametrize("spec", ["J001:1", "K001:1", "K001:2", "M002:1", "T004:1", "R002:1"])
def test_reopening_a_finding_shot_brings_back_its_row_and_field(qtbot, open_window, tmp_path, message_boxes, spec, capsys):
    """A ``--finding`` shot reopened at the right tick and NPC but with no finding row
    selected and no culprit field marked. Now the record read back from the reopened
    window is the recorded one, the finding's row is selected and its culprit shown."""
    from narrative_debugger.app.window.report import current_record

    png = tmp_path / "shot.png"
    assert main(["screenshot", str(QA), "--finding", spec, "--out", str(png)]) == 0
    capsys.readouterr()
    record = read_record(png.read_bytes())
    window = reopened(qtbot, open_window, png)
    assert current_record(window) == record
    culprit = window.session.culprit
    assert culprit is not None and culprit.code == spec.split(":")[0]
    assert selected_finding_rows(window) == [window.panels["findings"][0].row_of(culprit)]
    if spec == "J001:1":  # the Journal dock's field table marks the culprit field
        journal = window.panels["journal"][0]
        marked = [journal.detail_model.index(r, 0).data() for r in journal.detail_model.marked()]
        assert "tick" in marked
    if spec == "K001:1":  # the snapshot dock's culprit row
        assert window.panels["snapshot"][0].culprit_row() >= 0


def test_reopening_brings_back_explain_since_journal_entry_and_comparison(qtbot, open_window, tmp_path, message_boxes):
    """The Explain dock's question was lost on reopening, as were the previous tick the
    Knowledge view counts changes since, the journal entry selected and side B."""
    from narrative_debugger.app.window.report import current_record, write_report

    first = open_window(SAMPLES / "walkaway-spiral.json", (1440, 900), persist=False)
    s = first.session
    first.compare.compare_with(SAMPLES / "abandoned-confrontation.json", None, wait=True)
    assert s.comparison is not None
    s.select_entry(40)
    s.set_tick(s.playthrough.index.ticks[60])
    s.set_journal_index(55)
    s.explain("npc:kael-davan.score")
    s.set_view("knowledge")
    panel = first.panels["explain"][0]
    qtbot.waitUntil(lambda: panel.explanation is not None and panel.explanation.tick == s.tick, timeout=30000)
    png, _, _ = write_report(first, tmp_path)
    record = read_record(png.read_bytes())
    assert record.since == s.playthrough.index.ticks[40] != record.tick
    assert (record.journal_index, record.explain, record.view) == (55, "npc:kael-davan.score", "knowledge")
    assert record.compare["save_name"] == "abandoned-confrontation.json"

    window = reopened(qtbot, open_window, png, comparing=True)
    t = window.session
    assert current_record(window) == record
    assert (t.previous_tick, t.journal_index, t.explain_target) == (record.since, 55, "npc:kael-davan.score")
    assert t.comparison.b.save.label == "abandoned-confrontation.json"
    answer = window.panels["explain"][0]
    qtbot.waitUntil(lambda: answer.explanation is not None and answer.explanation.tick == t.tick, timeout=30000)
    assert answer.explanation.target == "npc:kael-davan.score"
    window.finish_background()
    assert f"changed since tick {record.since:,}" in window.views["knowledge"].heading.text()


@pytest.mark.parametrize(("fields", "message"), [
    ({"since": -1}, "since should be a whole number from 0 to 2^64-1"),
    ({"journal_index": 2**64}, "journal_index should be a whole number"),
    ({"since": True}, "since should be a whole number"),
    ({"tick": -5}, "tick should be a whole number from 0 to 2^64-1"),
    ({"tick": 2**64}, "tick should be a whole number from 0 to 2^64-1"),
    ({"explain": 5}, "explain should be text"),
    ({"compare": []}, "compare should be an object"),
    ({"compare": {"save_path": 3}}, "compare.save_path should be text"),
    ({"compare": {"save_name": "../b.json"}}, "compare.save_name '../b.json' is not a plain file name"),
])
def test_a_record_with_a_bad_new_field_is_refused(fields, message):
    import json

    from narrative_debugger.models.report.meta import ReportError, ViewRecord

    doc = {"format_version": 1, "save_name": "a.json", "save_sha256": "", "save_path": "", "content_dir": "", "tick": 3, "npc": "", "view": "knowledge", **fields}
    with pytest.raises(ReportError, match=message.replace("^", r"\^").replace("(", r"\(")):
        ViewRecord.from_json(json.dumps(doc))


def test_a_record_from_before_the_new_fields_reads_with_their_defaults():
    import json

    from narrative_debugger.models.report.meta import ViewRecord

    doc = {"format_version": 1, "save_name": "a.json", "save_sha256": "", "save_path": "", "content_dir": "", "tick": 3, "npc": "", "view": "knowledge"}
    record = ViewRecord.from_json(json.dumps(doc))
    assert (record.since, record.journal_index, record.explain, record.compare) == (None, None, "", None)


def test_reopening_all_views_with_a_fact_and_no_tick_moved(qtbot, open_window, tmp_path, message_boxes):
    """All views, a fact selected and the tick never moved since the open (no "changed
    since"): the reopened window records the same view."""
    from narrative_debugger.app.window.report import current_record, write_report

    first = open_window(SAMPLES / "evening.json", (1920, 1200), persist=False)
    state = first.session.state
    fact = next(iter(state.knowledge.facts))
    first.session.set_fact(fact)
    first.set_grid(True)
    png, _, _ = write_report(first, tmp_path)
    record = read_record(png.read_bytes())
    assert (record.view, record.fact, record.since) == ("all", fact, record.tick)
    window = reopened(qtbot, open_window, png)
    assert window.grid_mode and current_record(window) == record

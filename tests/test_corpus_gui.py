"""Issue 39 in the window: File › Open corpus… shows the Coverage dock, and a line that
never fired opens at its nearest miss with the Explain dock on it."""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest
import yaml
from narrative_debugger.app.cli.main import main
from narrative_debugger.widgets.docks.coverage import CoverageModel
from PySide6.QtWidgets import QApplication
from tests.support.savegen.generator import generate_save, write_save
from tests.test_corpus import CONTENT, EXTRA_LINES
from tests.support.content_lines import sample_content_plus


@pytest.fixture()
def corpus(tmp_path) -> tuple[Path, Path]:
    content = tmp_path / "content"
    sample_content_plus(content, EXTRA_LINES)
    saves = tmp_path / "saves"
    saves.mkdir()
    for k in range(2):
        write_save(generate_save(seed=40 + k, events=200, content_dir=CONTENT), saves / f"p{k}.json")
    # The QA sample fires harbor-nights_m_s_999, a line no pool defines (M002).
    shutil.copy(CONTENT.parent / "qa-faults.json", saves / "qa.json")
    out = tmp_path / "corpus"
    assert main(["corpus", str(saves), "--content", str(content), "--out", str(out), "--no-prompts"]) == 0
    return out, content


def test_open_corpus_then_a_never_fired_line_opens_at_its_nearest_miss(qtbot, open_window, isolated_settings, corpus):
    folder, content = corpus
    w = open_window(size=None)
    assert w.findChild(type(w.menuBar().actions()[0]), "action-open-corpus") is not None
    assert w.docks["coverage"].isHidden()
    assert w.corpus.open(folder)
    assert w.docks["coverage"].isVisible()
    view = w.panels["coverage"][0]
    # The heading counts the content's lines; the fired line it lacks is named apart.
    content_lines = sum(len(yaml.safe_load(p.read_text(encoding="utf-8"))) for p in sorted((content / "monologues").glob("*.yaml")))
    heading = view.heading.text()
    assert f" of {content_lines} lines fired" in heading and "(M002): harbor-nights_m_s_999." in heading
    first = view.proxy.index(0, 0).data(CoverageModel.ROW_ROLE)
    assert first.fired == 0  # never-fired lines come first
    row = next(k for k in range(view.proxy.rowCount()) if view.proxy.index(k, 0).data() == "corpus-test_never_010")
    miss = view.proxy.index(row, 0).data(CoverageModel.ROW_ROLE).miss
    with qtbot.waitSignal(w.session.explainRequested, timeout=60_000) as asked:
        view.activate_row(row)
    assert asked.args == ["line:corpus-test_never_010"]
    assert w.save_path == Path(miss["save"]) and w.session.tick == miss["tick"]
    assert w.session.playthrough.content.root == content
    assert w.docks["explain"].isVisible()
    # The NPC its failing clause is about is the one chosen (the trial's was the first NPC).
    assert w.session.npc == w.session.playthrough.save.npc_by_slug("kael-davan").stable_id
    QApplication.processEvents()


def test_a_folder_that_is_not_a_corpus_is_a_message_not_a_crash(qtbot, open_window, isolated_settings, tmp_path, monkeypatch):
    shown = []
    monkeypatch.setattr("narrative_debugger.app.window.corpus.show_message", lambda parent, kind, title, text: shown.append(text))
    w = open_window(size=None, shown=False)
    assert not w.corpus.open(tmp_path)
    assert shown and "is not a corpus" in shown[0] and w.docks["coverage"].isHidden()
    assert shown[0].startswith(f"{tmp_path} is not a corpus") and shown[0].count(str(tmp_path)) == 1  # named once


def _never_fired(view, line_id: str = "corpus-test_never_010") -> tuple[int, dict]:
    row = next(k for k in range(view.proxy.rowCount()) if view.proxy.index(k, 0).data() == line_id)
    return row, view.proxy.index(row, 0).data(CoverageModel.ROW_ROLE).miss


@pytest.mark.parametrize("gone", ["deleted", "a file now"])
def test_a_content_folder_no_longer_there_is_a_message_naming_it_not_bogus_findings(qtbot, open_window, message_boxes, corpus, gone):
    """Trial 50, finding 5: the save was opened against another content (17 bogus errors,
    "no monologue line ... in the content"); now a message names the folder, nothing opens,
    and the dock opens the line once the folder is back."""
    folder, content = corpus
    w = open_window(size=None)
    assert w.corpus.open(folder)
    view = w.panels["coverage"][0]
    rows = view.proxy.rowCount()
    away = content.with_name("content-away")
    content.rename(away)
    if gone == "a file now":
        content.write_text("not a folder", encoding="utf-8")
    row, miss = _never_fired(view)
    view.activate_row(row)
    assert not w.loader.busy and w.save_path is None and w.session.playthrough is None  # nothing opened
    assert len(message_boxes) == 1
    kind, title, text = message_boxes[0]
    assert kind == "warning" and str(content) in text and Path(miss["save"]).name in text
    assert ("no longer exists" if gone == "deleted" else "is not a folder") in text
    assert "F001" not in text and "Traceback" not in text
    # The dock is as it was, and works once the folder is back.
    assert w.docks["coverage"].isVisible() and view.proxy.rowCount() == rows
    if content.is_file():
        content.unlink()
    away.rename(content)
    with qtbot.waitSignal(w.session.explainRequested, timeout=60_000):
        view.activate_row(row)
    assert w.save_path == Path(miss["save"]) and w.session.playthrough.content.root == content
    assert not any(f.code in ("C001", "M002") for f in w.session.playthrough.findings if f.location.endswith("never_010"))
    assert len(message_boxes) == 1
    QApplication.processEvents()


def test_a_nearest_miss_save_no_longer_there_is_a_clean_message(qtbot, open_window, message_boxes, corpus):
    """The trial saw "F001 at 1:1: ...: cannot be read (No such file or directory)"; now a
    sentence names the save and says how to index it again."""
    folder, _content = corpus
    w = open_window(size=None)
    assert w.corpus.open(folder)
    view = w.panels["coverage"][0]
    row, miss = _never_fired(view)
    Path(miss["save"]).rename(Path(miss["save"]).with_suffix(".moved"))
    view.activate_row(row)
    assert not w.loader.busy and w.save_path is None
    assert len(message_boxes) == 1
    kind, _title, text = message_boxes[0]
    assert kind == "warning" and miss["save"] in text and "is no longer there" in text and "narrative-debugger corpus" in text
    assert "F001" not in text and "No such file" not in text
    assert w.docks["coverage"].isVisible()


@pytest.mark.parametrize("size", [(1040, 700), (1440, 900)])
def test_the_coverage_dock_shows_every_column_and_rows_and_stays_beside_explain(qtbot, open_window, corpus, size):
    """Trial 50, finding 15: at 1040x700 about four rows showed and the Tick and Failing
    columns were past the right edge; a double-click's Explain tab covered the Coverage tab,
    so each next line needed a click on it first."""
    from narrative_debugger.app.window.corpus import ROWS

    folder, _content = corpus
    w = open_window(size=size)
    assert w.corpus.open(folder)
    QApplication.processEvents()
    view = w.panels["coverage"][0]
    table, model = view.view, view.model
    metrics = table.fontMetrics()
    # Every column inside the viewport, no horizontal scroll bar.
    right = max(table.columnViewportPosition(c) + table.columnWidth(c) for c in range(model.columnCount()))
    assert right <= table.viewport().width() and not table.horizontalScrollBar().isVisible()
    # The line ids, the counts and the ticks whole; the save name and failing clauses at
    # least their headers (whole in their tooltips).
    rows = [view.proxy.index(k, 0).data(CoverageModel.ROW_ROLE) for k in range(view.proxy.rowCount())]
    for col in (CoverageModel.LINE, CoverageModel.FIRED, CoverageModel.SAVES, CoverageModel.TICK):
        widest = max(metrics.horizontalAdvance(view.proxy.index(k, col).data() or "") for k in range(len(rows)))
        assert table.columnWidth(col) >= widest, (model.HEADERS[col], table.columnWidth(col), widest)
    for col in (CoverageModel.MISS, CoverageModel.FAILING):
        assert table.columnWidth(col) >= metrics.horizontalAdvance(model.HEADERS[col])
    # Room for ROWS rows, or all that the NPC dock above could give (it is at its minimum).
    npcs = w.docks["npcs"]
    assert view.rows_in_view() >= min(ROWS, len(rows)) - 0.25 or npcs.height() <= npcs.minimumSizeHint().height()
    assert view.rows_in_view() > 5  # about four before
    # A nearest miss opens with the Explain dock in front; the Coverage dock stays in view,
    # also when a save with error findings brings the Findings forward.
    row, _miss = _never_fired(view)
    with qtbot.waitSignal(w.session.explainRequested, timeout=60_000):
        view.activate_row(row)
    w.docks["findings"].raise_()
    QApplication.processEvents()
    coverage = w.docks["coverage"]
    for name in ("coverage", "explain", "findings"):
        dock = w.docks[name]
        assert dock.isVisible() and not dock.visibleRegion().isEmpty(), name
    assert not coverage.geometry().intersects(w.docks["explain"].geometry())
    assert not coverage.geometry().intersects(w.docks["findings"].geometry())
    assert not coverage.geometry().intersects(w.centralWidget().geometry())
    QApplication.processEvents()

"""Trial 51, N8: the Coverage dock shows a nearest miss's distance, and marks a save no
longer at its path as ``narrative-debugger coverage`` does (its summary said "1 save(s)"
where the command said the save was gone)."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest
from narrative_debugger.app.cli.main import main
from narrative_debugger.models.corpus import store
from narrative_debugger.models.corpus.coverage import NO_LONGER_THERE, coverage, line_files, missing_note
from narrative_debugger.widgets.docks.coverage import CoverageModel, CoverageView
from PySide6.QtCore import Qt
from tests.conftest import SAMPLES
from tests.support.content_lines import sample_content_plus

#: A line that cannot fire in the sample: 400 completed conversations with Kael (evening has 35).
FAR_LINE = """
- id: corpus-test_far_990
  text: "A line gated on four hundred finished talks with Kael."
  trigger: on_arrival
  prerequisites:
    interaction:
      target: "npc:kael-davan"
      state: completed
      min_count: 400
  tags: [test]
"""


@pytest.fixture()
def corpus(tmp_path) -> tuple[Path, Path, Path]:
    content = tmp_path / "content"
    sample_content_plus(content, FAR_LINE)
    saves = tmp_path / "saves"
    saves.mkdir()
    save = saves / "evening-copy.json"
    shutil.copy(SAMPLES / "evening.json", save)
    out = tmp_path / "corpus"
    assert main(["corpus", str(saves), "--content", str(content), "--out", str(out), "--no-prompts"]) == 0
    return out, content, save


def _shown(qtbot, folder: Path) -> tuple[CoverageView, dict]:
    con = store.connect(folder)
    try:
        doc, ids = coverage(con), line_files(con)
    finally:
        con.close()
    view = CoverageView()
    qtbot.addWidget(view)
    view.set_coverage(doc, str(folder), ids)
    return view, doc


def _row(view: CoverageView, line_id: str) -> int:
    return next(k for k in range(view.proxy.rowCount()) if view.proxy.index(k, CoverageModel.LINE).data() == line_id)


def test_the_dock_shows_the_nearest_miss_distance_and_marks_a_save_no_longer_there(qtbot, corpus, capsys):
    folder, _content, save = corpus
    view, doc = _shown(qtbot, folder)
    miss = doc["lines"]["corpus-test_far_990"]["nearest_miss"]
    assert miss["failing"] == ["35 completed interaction(s) with kael-davan, needs 400"] and miss["distance"] == 400 - 35
    row = _row(view, "corpus-test_far_990")
    assert view.model.headerData(CoverageModel.DISTANCE, Qt.Horizontal) == "Distance"
    cell = lambda col: view.proxy.index(row, col)  # noqa: E731
    assert cell(CoverageModel.DISTANCE).data() == "365"
    assert cell(CoverageModel.MISS).data() == "evening-copy.json" and NO_LONGER_THERE not in view.heading.text()
    assert "Double-click" in cell(CoverageModel.DISTANCE).data(Qt.ToolTipRole)
    # The save moves away: the dock says so in the command's words, and marks its row.
    save.rename(save.with_suffix(".moved"))
    view, doc = _shown(qtbot, folder)
    assert doc["missing_saves"] == [str(save)]
    heading = view.heading.text()
    assert missing_note([str(save)], "evening-copy.json") in heading and heading.startswith("corpus: 1 save(s);")
    assert str(save) in view.heading.toolTip()
    row = _row(view, "corpus-test_far_990")
    assert view.proxy.index(row, CoverageModel.MISS).data() == f"evening-copy.json ({NO_LONGER_THERE})"
    tip = view.proxy.index(row, CoverageModel.MISS).data(Qt.ToolTipRole)
    assert str(save) in tip and NO_LONGER_THERE in tip and "Double-click" not in tip
    assert view.proxy.index(row, CoverageModel.DISTANCE).data() == "365"
    # The same words as the command's text.
    assert main(["coverage", str(folder)]) == 0
    out = capsys.readouterr().out
    assert missing_note([str(save)]) in out and f"{save} ({NO_LONGER_THERE})" in out
    assert main(["coverage", str(folder), "--format", "json"]) == 0
    assert json.loads(capsys.readouterr().out)["missing_saves"] == [str(save)]

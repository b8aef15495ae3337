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


@pytest.fixture()
def corpus(tmp_path) -> tuple[Path, Path]:
    content = tmp_path / "content"
    shutil.copytree(CONTENT, content)
    pool = content / "monologues" / "harbor-nights.yaml"
    pool.write_text(pool.read_text(encoding="utf-8") + EXTRA_LINES, encoding="utf-8")
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

"""Every finding lands on its culprit (issue 12): for each code, a save that triggers it is
opened in the window, the finding is double-clicked, and the culprit is selected, in view
and highlighted in the dock that shows it, while the Findings dock stays in front.
The same through ``screenshot --finding`` (the view record's finding and selection).
"""

from __future__ import annotations

import copy
import json
import shutil
import subprocess
import sys
from pathlib import Path

import pytest
from narrative_debugger.models.report.meta import read_record
from narrative_debugger.models.rules.catalogue import RULES
from narrative_debugger.models.rules.snapshot_diff import target_path
from narrative_debugger.widgets.kit.culprit import CULPRIT_BG, row_visible
from narrative_debugger.widgets.landing import landing
from PySide6.QtCore import Qt
from tests.test_check_codes import BASE, CONTENT_FILES, MUTATIONS
from tests.test_widgets_panels import double_click_row

ROOT = Path(__file__).resolve().parent.parent
QA = ROOT / "sample_saves" / "qa-faults.json"

#: Content faults (file -> text) added to CONTENT_FILES, one or more per C code.
CONTENT_FAULTS = {
    "npcs/Bad_Name.yaml": "name: Bad Name\n",  # C002: not a kebab-case slug
    "monologues/broken.yaml": "- id: x\n  text: [unclosed\n",  # C001
    "monologues/rules.yaml": (
        "- id: after-kael\n  text: duplicate id\n"  # C005
        "- id: bad-count\n  text: t\n  prerequisites:\n    interaction: {target: 'npc:kael-davan', min_count: 0}\n"  # C003
        "- id: who\n  text: t\n  prerequisites:\n    interaction: {target: 'npc:nobody-here'}\n"  # C004
    ),
    "npcs/kael-davan.yml": "name: Kael Again\n",  # C007: a second profile for kael-davan
    "lore/more.yaml": "- id: dock-ward\n  keys: again\n",  # C008: dock.yaml has it already
}
#: Content codes that land in the Content dock (CONTENT_FAULTS has each).
CONTENT_CODES = {"C001", "C002", "C003", "C004", "C005", "C007", "C008"}
#: Codes about an entry that is not read (or the content folder that is missing): the
#: Findings dock only, like an unreadable save (README, "Where a finding lands").
FINDINGS_ONLY = {"C006", "C009", "C010", "C011", "C012"}
#: Codes whose save cannot be opened at all: they land on nothing but the Findings dock.
UNREADABLE = {"F001", "F003"}


def _write_content(root: Path, files: dict[str, str]) -> Path:
    for rel, text in files.items():
        path = root / rel
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text)
    return root


@pytest.fixture(scope="module")
def content_dir(tmp_path_factory) -> Path:
    return _write_content(tmp_path_factory.mktemp("content"), CONTENT_FILES)


@pytest.fixture(scope="module")
def faulty_content(tmp_path_factory) -> Path:
    return _write_content(tmp_path_factory.mktemp("faulty-content"), {**CONTENT_FILES, **CONTENT_FAULTS})


pytestmark = pytest.mark.window(save=None, size=(1440, 900), persist=False)


def _shown(dock) -> bool:
    """A dock is in front: visible and not hidden behind another tab."""
    return dock.isVisible() and not dock.visibleRegion().isEmpty()


def culprit_problems(window, finding) -> list[str]:
    """What is wrong with how the window shows ``finding``'s culprit ([] when all is right)."""
    play = window.session.playthrough
    land = landing(play, finding)
    t = finding.target
    problems = []
    if not _shown(window.docks["findings"]):
        problems.append("the Findings dock is not in front")
    for dock in land.docks:
        if not _shown(window.docks[dock]):
            problems.append(f"the {dock} dock is not in front")
    if land.tick is not None and window.session.tick != window.session.clamp(land.tick):
        problems.append(f"tick {window.session.tick}, not {land.tick}")
    if "snapshot" in land.docks:
        view = window.panels["snapshot"][0]
        row = view.culprit_row()
        if row < 0 or view.model.rows[row].path != target_path(t):
            problems.append(f"snapshot row of {target_path(t)} not shown")
        elif not view.view.selectionModel().isRowSelected(row) or not row_visible(view.view, row):
            problems.append("snapshot row not selected and in view")
        elif view.model.index(row, 0).data(Qt.BackgroundRole).color() != CULPRIT_BG:
            problems.append("snapshot row not highlighted")
    if "journal" in land.docks:
        view = window.panels["journal"][0]
        wanted = [i for i in (t.previous_journal_index, t.journal_index) if i is not None]
        for i in wanted:
            row = view.model.row_of(i)
            if row < 0 or not view.view.selectionModel().isRowSelected(row):
                problems.append(f"journal[{i}] not selected")
            elif view.model.index(row, 0).data(Qt.BackgroundRole).color() != CULPRIT_BG:
                problems.append(f"journal[{i}] not highlighted")
        if not row_visible(view.view, view.model.row_of(t.journal_index)):
            problems.append(f"journal[{t.journal_index}] not in view")
        if t.topic is not None and not any(row[-1] and row[1] == repr(t.topic) for row in view.detail_model.rows):
            problems.append(f"topic {t.topic!r} not marked in the entry")
        if finding.values and not all(any(value == row[1] for row in view.detail_model.rows) for _, value in finding.values):
            problems.append("the finding's values are not shown beside the entry")
    if "monologues" in land.docks:
        view = window.panels["monologues"][0]
        rows = view.culprit_rows()
        if not rows or not view.view.selectionModel().isRowSelected(rows[0]) or not row_visible(view.view, rows[0]):
            problems.append(f"monologue line {t.line_id} not selected and in view")
        elif view.model.index(rows[0], 0).data(Qt.BackgroundRole).color() != CULPRIT_BG:
            problems.append(f"monologue line {t.line_id} not highlighted")
    if "content" in land.docks:
        view = window.panels["content"][0]
        if view.path is None or Path(view.path).name != Path(t.file).name or view.selected_line() != t.line:
            problems.append(f"content {t.file}:{t.line} not selected (shows {view.path}:{view.selected_line()})")
        elif not view.text.viewport().rect().intersects(view.text.cursorRect()):
            problems.append("content line not in view")
    if not land.docks and finding.code not in ("F002", *FINDINGS_ONLY):
        problems.append("lands nowhere")
    return problems


def double_click_each(qtbot, window, codes=None) -> dict[str, list[str]]:
    """Double-click every finding (of ``codes``) in the Findings dock; problems per finding."""
    panel = window.panels["findings"][0]
    out = {}
    for k, finding in enumerate(window.session.playthrough.findings):
        if codes is not None and finding.code not in codes:
            continue
        row = panel.row_of(finding)
        assert row >= 0
        double_click_row(qtbot, panel.view, row, 1)
        try:  # the landing may finish in a later pass (a scroll, a dock brought to front)
            qtbot.waitUntil(lambda: not culprit_problems(window, finding), timeout=2000)
        except qtbot.TimeoutError:
            pass  # reported below
        out[f"{finding.code}#{k} {finding.location}"] = culprit_problems(window, finding)
    return out


def _open(window, tmp_path, doc, content) -> None:
    path = tmp_path / "save.json"
    path.write_text(json.dumps(doc))
    window.open_save(path, content, wait=True)
    assert window.session.ready


@pytest.mark.parametrize("code", sorted(MUTATIONS))
def test_each_code_lands_on_its_culprit(qtbot, window, tmp_path, content_dir, code):
    doc = copy.deepcopy(BASE)
    MUTATIONS[code](doc)
    _open(window, tmp_path, doc, content_dir)
    results = double_click_each(qtbot, window, {code})
    assert results, f"no {code} finding"
    assert not {k: v for k, v in results.items() if v}


def test_content_codes_land_on_their_file_and_line(qtbot, window, tmp_path, faulty_content):
    _open(window, tmp_path, BASE, faulty_content)
    results = double_click_each(qtbot, window, CONTENT_CODES)
    assert {key.split("#")[0] for key in results} == CONTENT_CODES
    assert not {k: v for k, v in results.items() if v}


def test_entries_not_read_land_in_the_findings_dock_only(qtbot, window, tmp_path):
    """C006, C009, C011 name an entry that is not read, C010 the content/ folder that is
    missing: nothing to open (the Content dock would follow C009's link out of the folder)."""
    root = _write_content(tmp_path / "odd-content", {**CONTENT_FILES, "npcs/notes.txt": "todo\n"})  # C011
    shutil.rmtree(root / "lore")
    (root / "lore").write_text("a file where a folder belongs\n")  # C006
    (tmp_path / "outside.yaml").write_text("name: Outsider\n")
    (root / "npcs" / "orrin-vask.yaml").symlink_to(tmp_path / "outside.yaml")  # C009
    (root / "prompt.yaml").unlink()  # C012
    shown_before = window.panels["content"][0].path
    _open(window, tmp_path, BASE, root)
    results = double_click_each(qtbot, window, FINDINGS_ONLY)
    assert {key.split("#")[0] for key in results} == {"C006", "C009", "C011", "C012"}
    assert not {k: v for k, v in results.items() if v}
    assert all(landing(window.session.playthrough, f).selection[0] == "file"
               for f in window.session.playthrough.findings if f.code in FINDINGS_ONLY)
    assert window.panels["content"][0].path == shown_before  # the link was not opened
    alone = tmp_path / "alone"
    alone.mkdir()
    (alone / "save.json").write_text(json.dumps(BASE))
    window.open_save(alone / "save.json", wait=True)  # no content/ beside it: C010
    results = double_click_each(qtbot, window, FINDINGS_ONLY)
    assert list(results) and all(key.startswith("C010") for key in results)
    assert not {k: v for k, v in results.items() if v}


def test_every_code_is_covered_here():
    assert set(RULES) == set(MUTATIONS) | CONTENT_CODES | FINDINGS_ONLY | UNREADABLE


def test_every_qa_faults_finding_lands_on_its_culprit(qtbot, window):
    window.open_save(QA, wait=True)
    results = double_click_each(qtbot, window)
    assert len(results) == len(window.session.playthrough.findings) >= 19
    assert not {k: v for k, v in results.items() if v}


def test_next_finding_walks_the_table_and_keeps_findings_in_front(qtbot, window):
    window.open_save(QA, wait=True)
    panel = window.panels["findings"][0]
    seen = []
    for _ in range(panel.proxy.rowCount()):
        panel.next_action.trigger()
        finding = panel.view.currentIndex().data(panel.model.FINDING_ROLE)
        seen.append(finding)
        assert not culprit_problems(window, finding), finding
    assert seen == window.session.playthrough.findings
    notices = []
    window.session.notice.connect(notices.append)
    panel.next_action.trigger()
    assert notices == ["No more findings"]
    go = next(a.menu() for a in window.menuBar().actions() if a.text() == "&Go")
    assert panel.next_action in go.actions() and panel.previous_action in go.actions()


def test_a_filter_hiding_the_culprit_is_cleared_with_a_notice(qtbot, window):
    window.open_save(QA, wait=True)
    journal = window.panels["journal"][0]
    journal.kind_filter.setCurrentIndex(journal.kind_filter.findData("DialogueLine"))
    notices = []
    window.session.notice.connect(notices.append)
    r002 = next(f for f in window.session.playthrough.findings if f.code == "R002")
    panel = window.panels["findings"][0]
    double_click_row(qtbot, panel.view, panel.row_of(r002), 1)
    assert journal.kind_filter.currentIndex() == 0
    assert notices and "Journal filter cleared" in notices[-1]
    assert not culprit_problems(window, r002)


@pytest.mark.parametrize("spec, kind, ident, view", [
    ("K003", "fact", "interaction.mira-holt_18", "knowledge"),
    ("R002", "journal", 2983, "timelines"),
    ("M002", "line", "harbor-nights_m_s_999", "knowledge"),
    ("J003:2", "npc", "lera-sessik", "knowledge"),
    ("I009:2", "journal", 1577, "interactions"),
])
def test_screenshot_finding_records_the_finding_and_selection(tmp_path, spec, kind, ident, view):
    """With no --view and no --size, --finding draws the view its culprit lands in at
    1440x900 (README: not --view all's 1920x1200)."""
    from PySide6.QtGui import QImage

    out = tmp_path / "shot.png"
    done = subprocess.run([sys.executable, "-m", "narrative_debugger.app", "screenshot", str(QA), "--finding", spec, "--out", str(out)],
                          capture_output=True, text=True, timeout=300, env={"QT_QPA_PLATFORM": "offscreen", **_env()})
    assert done.returncode == 0, done.stderr
    record = read_record(out.read_bytes())
    code = spec.split(":")[0]
    assert record.finding["code"] == code and record.finding["target"]["kind"]
    assert record.selection == {"kind": kind, "id": ident}
    assert record.view == view
    image = QImage(str(out))
    assert (image.width(), image.height()) == (1440, 900)


@pytest.mark.parametrize("spec", ["", ":2", "K003:0"])
def test_screenshot_finding_that_is_malformed_exits_2(tmp_path, spec):
    """``--finding ""`` drew the default view as if no finding had been asked for (trial)."""
    done = subprocess.run([sys.executable, "-m", "narrative_debugger.app", "screenshot", str(QA), "--finding", spec, "--out", str(tmp_path / "x.png")],
                          capture_output=True, text=True, timeout=300, env={"QT_QPA_PLATFORM": "offscreen", **_env()})
    assert done.returncode == 2 and "expected CODE or CODE:N" in done.stderr and not (tmp_path / "x.png").exists()


def test_screenshot_finding_that_does_not_exist_exits_2(tmp_path):
    done = subprocess.run([sys.executable, "-m", "narrative_debugger.app", "screenshot", str(QA), "--finding", "K003:5", "--out", str(tmp_path / "x.png")],
                          capture_output=True, text=True, timeout=300, env={"QT_QPA_PLATFORM": "offscreen", **_env()})
    assert done.returncode == 2 and "1 K003 finding" in done.stderr and "Traceback" not in done.stderr


def _env() -> dict:
    import os

    return {k: v for k, v in os.environ.items() if k != "QT_QPA_PLATFORM"}


def test_check_screenshots_one_png_per_finding_capped_with_a_note(qtbot, tmp_path, monkeypatch, capsys):
    from narrative_debugger.app.cli.main import main
    from narrative_debugger.app.cli.commands import check

    monkeypatch.setattr(check, "MAX_SCREENSHOTS", 5)
    status = main(["check", str(QA), "--format", "json", "--screenshots", str(tmp_path / "shots")])
    out, err = capsys.readouterr()
    assert status == 1 and json.loads(out)["files"][0]["findings"]  # stdout stays the JSON document
    pngs = sorted((tmp_path / "shots").glob("*.png"))
    assert len(pngs) == 5
    assert "wrote 5 screenshot(s)" in err and "the first 5 of 19 findings only" in err
    findings = json.loads(out)["files"][0]["findings"][:5]
    records = {read_record(p.read_bytes()).finding["location"]: read_record(p.read_bytes()) for p in pngs}
    assert set(records) == {f["location"] for f in findings}
    for f in findings:
        record = records[f["location"]]
        assert record.finding["code"] == f["code"] and record.finding["target"] == f["target"]
        assert record.selection and record.selection["kind"] in ("fact", "npc", "journal", "line", "entity", "content", "file")

"""Report evidence holds its view state (issue 35): every shot of ``check --screenshots``
starts from the clean state a single ``screenshot --finding`` starts from, and a report
reopens every part of the view it recorded; a tampered record opens nothing outside
the PNG's folder.
"""

from __future__ import annotations

from pathlib import Path

import pytest
from narrative_debugger.app.cli import main
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
    assert main(["check", str(QA), "--format", "json", "--screenshots", str(tmp_path / "batch")]) == 1
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
def test_a_tampered_save_name_opens_nothing_and_says_so(qtbot, tmp_path, message_boxes, name):
    from narrative_debugger.app.report import open_report

    from tests.conftest import open_window

    window = open_window(qtbot, SAMPLES / "walkaway-spiral.json", (1200, 800), persist=False)
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

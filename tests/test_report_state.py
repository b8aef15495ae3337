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

"""The README's words about colours and dragging hold the product's numbers (issue 35:
it called the culprit row pink and said the views update cheaply while dragging)."""

from __future__ import annotations

import re

from PySide6.QtGui import QColor, QPalette

from tests.conftest import ROOT

README = (ROOT / "README.md").read_text(encoding="utf-8")


def test_the_culprit_row_colours(qapp):
    from narrative_debugger.widgets.kit.culprit import CULPRIT_BG
    from narrative_debugger.widgets.kit.state_colors import row_tint

    dark = QPalette(QColor("#2b2b2b"))
    light = QPalette(QColor("#efefef"))
    assert row_tint(CULPRIT_BG, light).name() == "#ffd0c8"
    assert row_tint(CULPRIT_BG, dark).name() == "#5a2016"
    claim = re.search(r"highlights it: a bold row on salmon \(`(#\w{6})`;\s+`(#\w{6})` on a dark palette\)", README)
    assert claim and claim.groups() == (CULPRIT_BG.name(), row_tint(CULPRIT_BG, dark).name())
    assert "pink" not in README


def test_the_drag_pause():
    from narrative_debugger.widgets.kit.visibility import PAUSE_MS

    assert re.search(rf"the NPC list and the Journal follow\s+once the drag pauses for {PAUSE_MS} ms", README)

"""Trial 51 in the Timelines: the markers at a score of 0 whole (N6), and a readout
that keeps each label with its value while comparing (N7)."""

from __future__ import annotations

import re

import pytest

pytest.importorskip("pyqtgraph")

from narrative_debugger.models.compare.comparison import open_and_compare  # noqa: E402
from narrative_debugger.models.playthrough import Playthrough  # noqa: E402
from narrative_debugger.widgets.session import Session  # noqa: E402
from narrative_debugger.widgets.timelines.tracks import MARKERS, marker_reach  # noqa: E402
from narrative_debugger.widgets.timelines.view import TimelinesView, score_range  # noqa: E402
from PySide6.QtCore import QPointF, QRectF  # noqa: E402
from PySide6.QtGui import QFontMetrics, QTextDocument, QTextLayout  # noqa: E402
from PySide6.QtWidgets import QApplication  # noqa: E402
from tests.conftest import CONTENT, SAMPLES  # noqa: E402


def _view(qtbot, session, size) -> TimelinesView:
    view = TimelinesView(session)
    qtbot.addWidget(view)
    view.resize(*size)
    view.show()
    qtbot.waitExposed(view)
    for _ in range(3):
        QApplication.processEvents()
    return view


def _kael(playthrough) -> int:
    return playthrough.save.npc_by_slug("kael-davan").stable_id


@pytest.mark.parametrize("size", [(490, 320), (850, 460), (420, 260)])
def test_markers_at_a_score_of_0_are_drawn_whole_inside_the_score_plot(qtbot, size):
    """N6: at 1040x700 (a view ~490x320) Kael's walk-away penalty crosses at a score near 0
    (walkaway-spiral) were cut by the score plot's bottom edge. Every marker of his, its
    symbol at its size with its outline, is inside the plot; the level bands keep their
    bounds (the room is below 0 and above the top, outside them)."""
    pt = Playthrough.open(SAMPLES / "walkaway-spiral.json", CONTENT)
    session = Session()
    session.load(pt, tick=pt.last_tick, npc=_kael(pt))
    view = _view(qtbot, session, size)
    vb = view.score_plot.vb
    area = vb.sceneBoundingRect()
    drawn = 0
    for kind, (_label, item) in view.markers.items():
        xs, ys = item.getData()
        box = MARKERS[kind][1].boundingRect()
        scale = item.opts["size"]
        for x, y in zip(xs, ys):
            at = vb.mapViewToScene(QPointF(float(x), float(y)))
            shape = QRectF(at.x() + box.left() * scale, at.y() + box.top() * scale, box.width() * scale, box.height() * scale)
            shape.adjust(-0.5, -0.5, 0.5, 0.5)  # the outline
            # x: markers at the save's ends may sit in the x margin; y is what N6 is about.
            assert area.top() <= shape.top() and shape.bottom() <= area.bottom(), (kind, x, y, shape, area)
            drawn += 1
    penalties = view.markers["penalty"][1].getData()[1]
    assert drawn > 10 and len(penalties) and min(penalties) == 0.0  # the trial's: penalties at a score of 0
    low, high = vb.viewRange()[1]
    assert low < 0.0 and high > 20.0  # room both sides of 0 .. 20 (Kael's top band bound)
    assert [band.getRegion() for band in view.bands] == [(0.0, 20.0), (20.0, 40.0), (40.0, 60.0), (60.0, 80.0), (80.0, 100.0)]


def test_score_range_keeps_the_markers_room_and_the_old_padding_in_a_tall_plot():
    above, below = marker_reach()
    assert above > 10 and below > 10  # a walk-away's triangle above, a penalty's cross below
    # A tall plot: -5 % .. 103 % of the top, as before.
    assert score_range(100.0, 2000.0) == pytest.approx((-5.0, 103.0))
    for top in (20.0, 100.0):
        for height in (60.0, 100.0, 300.0):
            low, high = score_range(top, height)
            per_px = (high - low) / height
            assert -low / per_px >= below - 1e-6 and (high - top) / per_px >= above - 1e-6, (top, height)
    low, high = score_range(100.0, 30.0)  # a plot too short for both: the bands keep half of it
    assert (100.0 / (high - low)) == pytest.approx(0.5)


def _lines(html: str, font, width: float) -> list[str]:
    """The plain text of each line of rich ``html`` laid out in ``font`` at ``width`` px."""
    doc = QTextDocument()
    doc.setDocumentMargin(0)
    doc.setDefaultFont(font)
    doc.setHtml(html)
    doc.setTextWidth(width)
    doc.documentLayout().documentSize()
    out, block = [], doc.begin()
    while block.isValid():
        layout: QTextLayout = block.layout()
        for k in range(layout.lineCount()):
            line = layout.lineAt(k)
            out.append(block.text()[line.textStart():line.textStart() + line.textLength()])
        block = block.next()
    return out


def test_the_compared_readout_keeps_each_label_with_its_value(qtbot):
    """N7: comparing evening (A) with walkaway-spiral (B), the readout wrapped between
    "B ╍" and "score 1.39", and B's values began a line without their label. B's part is
    a line of its own, starting with "B ╍ score"; at any width no line ends in a label
    (score, stress, walk-aways, tick, B, its dash) or begins with a value without it."""
    a = Playthrough.open(SAMPLES / "evening.json", CONTENT)
    session = Session()
    session.load(a, npc=_kael(a))
    view = _view(qtbot, session, (490, 320))
    comparison = open_and_compare(a, SAMPLES / "walkaway-spiral.json", CONTENT)
    session.set_comparison(comparison)
    session.set_tick(comparison.b.last_tick * 3 // 4)
    QApplication.processEvents()
    text = view.readout.full_text()
    doc = QTextDocument()
    doc.setHtml(text)
    a_part, b_part = re.split("[\n\u2028]", doc.toRawText())
    assert a_part.startswith("Cursor tick") and "Kael Davan" in a_part and "walk-aways\u00a0" in a_part
    assert re.match("B\u00a0╍\u00a0score\u00a0[0-9.]+\u00a0\\(Stranger\\)", b_part), b_part
    font = view.readout.font()
    widest = max(QFontMetrics(font).horizontalAdvance(part) for part in (a_part + " · " + b_part).split(" · "))
    labels = ("score", "stress", "walk-aways", "tick", "B", "╍")
    for width in range(widest + 1, 4 * widest, 7):
        for line in _lines(text, font, width):
            words = line.replace("\u00a0", " ").split()
            assert words and words[-1] not in labels and not re.match(r"[0-9.,]+$", words[0]), (width, line)
    # Past B's end: the one B sentence, as its own line.
    session.set_tick(comparison.b.last_tick + 1)
    QApplication.processEvents()
    doc.setHtml(view.readout.full_text())
    assert re.split("[\n\u2028]", doc.toRawText())[1] == f"B\u00a0ended at tick\u00a0{comparison.b.last_tick:,}"

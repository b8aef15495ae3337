"""Text that reads on a dark palette too (issue 35): the state-machine diagram drew dark text
on dark fills, the Interactions heading wrote its numbers in a fixed near-black, and the
Snapshot, Monologues and Content docks painted the culprit on the light salmon under the
dark palette's light text. Every text the diagram draws on a fill now has a WCAG contrast
of at least 4.5 to 1 with it, for every state colour, in progress or not, light and dark.
"""

from __future__ import annotations

import re
from pathlib import Path

import pytest
from narrative_debugger.models.domain.types import InteractionState
from narrative_debugger.widgets.kit.culprit import CULPRIT_BG
from narrative_debugger.widgets.interactions.diagram import DiagramData, StateMachineDiagram
from narrative_debugger.widgets.landing import landing
from narrative_debugger.widgets.kit.state_colors import (
    FAULT_COLOR,
    INTERACTION_COLORS,
    MUTED_INK,
    SELECTION_COLOR,
    contrast_ratio,
    over,
    row_tint,
    text_on,
)
from PySide6.QtCore import Qt
from PySide6.QtGui import QColor, QPalette
from PySide6.QtWidgets import QApplication
from tests.test_dark_and_accessible import dark_palette

SAMPLES = Path(__file__).resolve().parent.parent / "sample_saves"
PALETTES = {"light": lambda: QPalette(QApplication.style().standardPalette()), "dark": dark_palette}


@pytest.fixture(params=sorted(PALETTES))
def palette(request, qtbot):
    app = QApplication.instance()
    before = QPalette(app.palette())
    app.setPalette(PALETTES[request.param]())
    QApplication.processEvents()
    yield request.param
    app.setPalette(before)
    QApplication.processEvents()


def test_contrast_ratio_is_wcag():
    assert contrast_ratio(QColor("#000000"), QColor("#ffffff")) == pytest.approx(21.0)
    assert contrast_ratio(QColor("#777777"), QColor("#ffffff")) == pytest.approx(4.48, abs=0.01)
    assert over(QColor(0, 0, 0, 0), QColor("#17181a")).name() == "#17181a"


@pytest.mark.parametrize("fill", [*INTERACTION_COLORS.values(), SELECTION_COLOR, FAULT_COLOR, MUTED_INK,
                                  QColor("#767676"), QColor("#808080"), QColor("#3b7dd8"), QColor("#ffffff"), QColor("#000000")])
@pytest.mark.parametrize("canvas", ["#fbfaf7", "#17181a"])
@pytest.mark.parametrize("alpha", [255, 60])
def test_text_on_any_fill_reaches_4_5(fill, canvas, alpha):
    fill = QColor(fill)
    fill.setAlpha(alpha)
    shown = over(fill, QColor(canvas))
    assert contrast_ratio(text_on(fill, QColor(canvas)), shown) >= 4.5


@pytest.mark.parametrize("state", list(InteractionState))
def test_every_text_of_the_diagram_reads_on_its_fill(qtbot, palette, state):
    """Each state filled (in progress) and pale (not), with counted, uncounted, selected and
    illegal edges: every label and badge reaches 4.5 to 1 on the fill it is drawn on."""
    diagram = StateMachineDiagram()
    qtbot.addWidget(diagram)
    for in_progress in (frozenset({state}), frozenset()):
        data = DiagramData(counts={(None, InteractionState.Active): 3}, states_now={state: 2}, in_progress=in_progress)
        diagram.show_data(data)
        labels = {text for text, _, _ in diagram.texts}
        assert "dialogue opens" in labels and "3" in labels and "0" in labels
        low = [(text, ink.name(), fill.name(), round(contrast_ratio(ink, fill), 2))
               for text, ink, fill in diagram.texts if contrast_ratio(ink, fill) < 4.5]
        assert not low, (palette, low)
    if palette == "dark":  # a pale node is a dark shade there, so its text is light
        diagram.show_data(DiagramData(states_now={state: 1}))
        ink = next(ink for text, ink, _ in diagram.texts if text == "1 here now")
        assert ink.lightnessF() > 0.5


def test_the_diagram_redraws_its_inks_when_the_palette_changes(qtbot):
    app = QApplication.instance()
    before = QPalette(app.palette())
    diagram = StateMachineDiagram()
    qtbot.addWidget(diagram)
    diagram.show_data(DiagramData(states_now={InteractionState.Completed: 1}))
    try:
        app.setPalette(PALETTES["light"]())
        QApplication.processEvents()
        light = next(ink for text, ink, _ in diagram.texts if text == "Completed")
        app.setPalette(dark_palette())
        QApplication.processEvents()
        dark = next(ink for text, ink, _ in diagram.texts if text == "Completed")
    finally:
        app.setPalette(before)
        QApplication.processEvents()
    assert light.lightnessF() < 0.5 < dark.lightnessF()


pytestmark = pytest.mark.window(save=None, size=(1440, 900), persist=False)


def _heading_colours(label) -> list[str]:
    return re.findall(r"color:\s*(#[0-9a-fA-F]{6})", label.text())


def test_interactions_heading_numbers_read_on_both_palettes(qtbot, window, palette):
    window.open_save(SAMPLES / "walkaway-spiral.json", wait=True)
    session = window.session
    session.set_npc(session.playthrough.save.npc_by_slug("lera-sessik").stable_id)
    session.set_view("interactions")
    view = window.views["interactions"]
    qtbot.waitUntil(lambda: "stress" in view.heading.text())
    background = view.heading.palette().color(QPalette.Window)
    colours = _heading_colours(view.heading)
    assert len(colours) >= 4  # stress, walk-aways and the muted words each name their colour
    low = [c for c in colours if contrast_ratio(QColor(c), background) < 4.5]
    assert not low, (palette, background.name(), low)


def test_each_state_reads_in_the_interactions_table(qtbot, window, palette):
    window.open_save(SAMPLES / "qa-faults.json", wait=True)
    session = window.session
    session.set_view("interactions")
    view = window.views["interactions"]
    base = view.table.palette().color(QPalette.Base)
    seen = set()
    for npc in session.playthrough.save.npcs:
        session.set_npc(npc)
        for row in range(view.model.rowCount()):
            state = view.model.meta(row).interaction_state
            ink = QColor(view.model.index(row, 3).data(Qt.ForegroundRole))
            assert contrast_ratio(ink, base) >= 4.5, (palette, state, ink.name(), base.name())
            seen.add(state)
    assert len(seen) >= 4


def test_culprit_rows_follow_the_dark_palette(qtbot, window, palette):
    """The Snapshot and Monologues docks' culprit rows use the palette's culprit shade,
    as the Journal's do: salmon on light, a dark shade (#5a2016) on dark."""
    window.open_save(SAMPLES / "qa-faults.json", wait=True)
    wanted = row_tint(CULPRIT_BG).name()
    assert wanted == ("#5a2016" if palette == "dark" else CULPRIT_BG.name())
    findings = window.session.playthrough.findings
    from narrative_debugger.widgets.docks.findings import activate_finding

    k004 = next(f for f in findings if f.code == "K004")
    activate_finding(window.session, k004)
    snapshot = window.panels["snapshot"][0]
    qtbot.waitUntil(lambda: snapshot.culprit_row() >= 0)
    assert snapshot.model.index(snapshot.culprit_row(), 0).data(Qt.BackgroundRole).color().name() == wanted
    m002 = next(f for f in findings if f.code == "M002")
    assert "monologues" in landing(window.session.playthrough, m002).docks
    activate_finding(window.session, m002)
    monologues = window.panels["monologues"][0]
    qtbot.waitUntil(lambda: bool(monologues.culprit_rows()))
    row = monologues.culprit_rows()[0]
    assert monologues.model.index(row, 0).data(Qt.BackgroundRole).color().name() == wanted


def test_compared_differences_follow_the_dark_palette(qtbot, window, palette, message_boxes):
    """The B columns' "differs" background was a fixed light orange under light text."""
    from narrative_debugger.widgets.kit.fact_model import COL_B, DIFFERS_BACKGROUND

    window.open_save(SAMPLES / "evening.json", wait=True)
    window.compare.compare_with(SAMPLES / "walkaway-spiral.json", wait=True)
    knowledge = window.views["knowledge"]
    window.session.set_view("knowledge")
    model = knowledge.model
    row = next(r for r in range(model.rowCount()) if model.index(r, COL_B).data(Qt.BackgroundRole) is not None)
    colour = model.index(row, COL_B).data(Qt.BackgroundRole).color()
    assert colour.name() == row_tint(QColor(DIFFERS_BACKGROUND)).name()
    assert (colour.lightnessF() < 0.35) == (palette == "dark")
    text = knowledge.table.palette().color(QPalette.Text)
    assert contrast_ratio(text, colour) >= 4.5

"""Dark mode and accessible names (pytest-qt, offscreen): with a dark application palette
the plots, the knowledge graph and the tinted table rows follow it (and come back with
the light one); the tick bar, views, docks, tables and their controls have names."""

from __future__ import annotations

from pathlib import Path

import pytest
from narrative_debugger.app.window.accessibility import CONTROLS
from narrative_debugger.widgets.registry import DOCKS, VIEWS
from PySide6.QtCore import Qt
from PySide6.QtGui import QColor, QPalette
from PySide6.QtWidgets import QAbstractItemView, QApplication, QWidget

SAMPLES = Path(__file__).resolve().parent.parent / "sample_saves"


def dark_palette() -> QPalette:
    pal = QPalette()
    for role, colour in ((QPalette.Window, "#202124"), (QPalette.WindowText, "#e8eaed"), (QPalette.Base, "#17181a"),
                         (QPalette.AlternateBase, "#26282b"), (QPalette.Text, "#e8eaed"), (QPalette.Button, "#2d2f33"),
                         (QPalette.ButtonText, "#e8eaed"), (QPalette.PlaceholderText, "#9aa0a6"), (QPalette.Mid, "#5f6368")):
        pal.setColor(role, QColor(colour))
    return pal


pytestmark = pytest.mark.window(save=SAMPLES / "evening.json", size=(1440, 900), persist=False)


@pytest.fixture()
def dark(qtbot):
    app = QApplication.instance()
    light = QPalette(app.palette())
    app.setPalette(dark_palette())
    QApplication.processEvents()
    yield app
    app.setPalette(light)
    QApplication.processEvents()


def _brush_colour(brush) -> str:
    return QColor(brush.color()).name()


def test_plots_graph_and_rows_follow_a_dark_palette_and_back(qtbot, window, dark):
    base = dark.palette().color(QPalette.Base).name()
    text = dark.palette().color(QPalette.Text).name()
    timelines = window.views["timelines"]
    assert _brush_colour(timelines.graphics.backgroundBrush()) == base
    axis = timelines.score_plot.getAxis("left")
    assert QColor(axis.textPen().color()).name() == text
    assert QColor(timelines.cursors[0].pen.color()).name() == text
    waterfall = window.panels["explain"][0].findChild(QWidget, "explainWaterfall")
    assert _brush_colour(waterfall.backgroundBrush()) == base
    graph = window.views["knowledge"].graph
    window.session.set_view("knowledge")
    window.views["knowledge"].tabs.setCurrentIndex(window.views["knowledge"].GRAPH_TAB)
    assert _brush_colour(graph.view.backgroundBrush()) == base
    diagram = window.views["interactions"].diagram
    assert _brush_colour(diagram.backgroundBrush()) == base
    monologues = window.panels["monologues"][0].model
    heading = monologues.index(0, 0)
    background = monologues.data(heading, Qt.BackgroundRole).color()
    assert background.lightnessF() < 0.35  # a dark shade: the palette's light text reads on it
    journal = window.docks["journal"].widget().model  # its current rows were pale yellow (trial)
    current = [journal.data(journal.index(r, 0), Qt.BackgroundRole) for r in range(journal.rowCount())]
    current = [brush.color() for brush in current if brush is not None]
    assert current and all(colour.lightnessF() < 0.35 for colour in current)
    prompt = window.views["prompt"]
    window.session.set_view("prompt")
    qtbot.waitUntil(lambda: prompt.current_preview is not None, timeout=30_000)
    QApplication.processEvents()
    first_body = prompt.text_view.document().firstBlock().next()
    assert first_body.blockFormat().background().color().lightnessF() < 0.35  # section tints darkened
    # Back to light: the plots follow again.
    dark.setPalette(QPalette(QApplication.style().standardPalette()))
    QApplication.processEvents()
    light_base = dark.palette().color(QPalette.Base).name()
    assert _brush_colour(timelines.graphics.backgroundBrush()) == light_base
    assert monologues.data(heading, Qt.BackgroundRole).color().lightnessF() > 0.8


def test_main_controls_have_accessible_names(window):
    assert window.tickbar.accessibleName() and window.tickbar.track.accessibleName()
    for spec in VIEWS:
        assert window.views[spec.name].accessibleName() == spec.title
        assert window.frames[spec.name].accessibleName()
    for spec in DOCKS:
        assert window.docks[spec.name].accessibleName() == f"{spec.title} panel"
        assert window.docks[spec.name].widget().accessibleName()
    unnamed = []
    for root in (window.tickbar, *window.views.values(), *(d.widget() for d in window.docks.values())):
        for widget in [root, *root.findChildren(QWidget)]:
            if isinstance(widget, CONTROLS) and not widget.accessibleName():
                unnamed.append(f"{type(widget).__name__} {widget.objectName()!r}")
    assert not unnamed, unnamed
    tables = [v for v in window.findChildren(QAbstractItemView) if v.isVisibleTo(window)]
    assert len(tables) >= 4 and all(t.accessibleName() for t in tables)

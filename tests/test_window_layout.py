"""The window's layout holds (pytest-qt, offscreen): docks and views keep their minimum
size through resizes, View › Reset layout restores the default arrangement, a saved
layout from another version or dock set is ignored, and at the default 1440x900 the
columns that carry the meaning are shown whole."""

from __future__ import annotations

from pathlib import Path

import pytest
from narrative_debugger.app.window import layout
from narrative_debugger.app.window.main_window import MainWindow
from narrative_debugger.widgets.docks.monologues import MonologueModel
from narrative_debugger.widgets.registry import DOCKS, VIEWS
from PySide6.QtCore import QEvent, QSettings, Qt, QTimer
from PySide6.QtWidgets import QApplication

SAMPLES = Path(__file__).resolve().parent.parent / "sample_saves"


@pytest.fixture()
def make_window(open_window):
    """``open_window`` at the size MainWindow chose (a saved layout's when there is one),
    with the evening sample unless ``open_save`` is False."""
    def make(open_save: bool = True) -> MainWindow:
        w = open_window(SAMPLES / "evening.json" if open_save else None, size=None)
        settle()
        return w

    return make


def settle() -> None:
    for _ in range(4):
        QApplication.processEvents()


def assert_minimums_hold(w: MainWindow) -> None:
    for spec in DOCKS:
        dock = w.docks[spec.name]
        if dock.isVisible() and not dock.visibleRegion().isEmpty():
            size = dock.widget().size()
            assert size.width() >= spec.min_size[0] and size.height() >= spec.min_size[1], (spec.name, size)
    for spec in VIEWS:
        size = w.views[spec.name].size()
        assert size.width() >= spec.min_size[0] and size.height() >= spec.min_size[1], (spec.name, size)


def test_docks_and_views_keep_their_minimum_through_resizes(make_window):
    w = make_window()
    assert (w.width(), w.height()) == (1440, 900)
    for size in ((600, 400), tuple(layout.MIN_WINDOW), (1440, 900), (1100, 720), (1440, 900)):
        w.resize(*size)
        settle()
        assert w.width() >= layout.MIN_WINDOW[0] and w.height() >= layout.MIN_WINDOW[1]
        assert_minimums_hold(w)
    w.set_grid(True)
    w.resize(*layout.MIN_WINDOW)
    settle()
    assert_minimums_hold(w)  # in the grid the views scroll rather than shrink


def test_reset_layout_restores_the_default_arrangement(make_window):
    w = make_window()
    default_npc_width = w.docks["npcs"].width()
    w.docks["npcs"].setFloating(True)
    w.docks["findings"].hide()
    w.addDockWidget(Qt.RightDockWidgetArea, w.docks["monologues"])
    w.resizeDocks([w.docks["journal"]], [400], Qt.Vertical)
    settle()
    w.findChild(type(w.grid_action), "action-reset-layout").trigger()
    settle()
    areas = layout.DOCK_AREAS
    for spec in DOCKS:
        dock = w.docks[spec.name]
        assert not dock.isFloating() and w.dockWidgetArea(dock) == areas[spec.area], spec.name
    assert w.docks["npcs"].isVisible() and w.docks["monologues"].isVisible() and w.docks["findings"].isVisible()
    assert w.tabifiedDockWidgets(w.docks["findings"]) == []  # a jump to a culprit never hides the Findings
    assert w.docks["journal"].x() > w.docks["findings"].x() and w.docks["journal"].y() == w.docks["findings"].y()
    assert set(w.tabifiedDockWidgets(w.docks["journal"])) == {w.docks[s.name] for s in DOCKS if s.tab_with == "journal" and not s.hidden}  # Qt lists shown docks only
    assert w.docks["monologues"].y() > w.docks["npcs"].y()  # stacked under the NPCs again
    assert abs(w.docks["npcs"].width() - default_npc_width) <= 8
    assert w.docks["findings"].height() < 300
    assert_minimums_hold(w)


def _saved_window(make_window, qtbot, *, version: int, docks: str | None = None) -> MainWindow:
    """A window restored from a saved layout with the NPC dock moved to the right."""
    w = make_window(open_save=False)
    w.addDockWidget(Qt.RightDockWidgetArea, w.docks["npcs"])
    state = w.saveState(version)
    w.close()  # writes its own layout; replaced below
    settings = QSettings()
    settings.setValue("window/state", state)
    settings.setValue("window/docks", docks if docks is not None else layout.dock_names())
    settings.sync()
    return make_window(open_save=False)


def test_a_saved_layout_of_this_version_is_restored(make_window, qtbot):
    w = _saved_window(make_window, qtbot, version=layout.LAYOUT_VERSION)
    assert w.dockWidgetArea(w.docks["npcs"]) == Qt.RightDockWidgetArea


def test_a_saved_layout_of_another_version_is_ignored(make_window, qtbot):
    w = _saved_window(make_window, qtbot, version=layout.LAYOUT_VERSION - 1)
    assert w.dockWidgetArea(w.docks["npcs"]) == Qt.LeftDockWidgetArea
    assert_minimums_hold(w)


def test_a_saved_layout_for_another_dock_set_is_ignored(make_window, qtbot):
    w = _saved_window(make_window, qtbot, version=layout.LAYOUT_VERSION, docks="npcs,monologues,findings")
    assert w.dockWidgetArea(w.docks["npcs"]) == Qt.LeftDockWidgetArea


def test_a_layout_saved_while_comparing_restores_without_the_differences_dock(make_window):
    """Trial defect: after a session that compared, the next start showed an empty
    Differences tab (sync_dock read isVisible, which is False before the first show)."""
    w = make_window(open_save=False)
    w.docks["differences"].show()
    settle()
    assert w.docks["differences"].isVisible()
    w.close()  # saves the layout with Differences shown
    w2 = make_window(open_save=False)
    assert w2.session.comparison is None
    assert w2.docks["differences"].isHidden() and not w2.docks["differences"].isVisible()
    assert w2.docks["journal"].isVisible()


def test_closing_saves_the_layout_with_its_version(make_window):
    w = make_window(open_save=False)
    w.close()
    settings = QSettings()
    assert settings.value("window/docks") == layout.dock_names()
    assert w.restoreState(settings.value("window/state"), layout.LAYOUT_VERSION)
    assert not w.restoreState(settings.value("window/state"), layout.LAYOUT_VERSION + 1)


def assert_whole(view, columns) -> None:
    """Each column is at least its header's size hint and lies inside the viewport."""
    header = view.horizontalHeader()
    width = view.viewport().width()
    for col in columns:
        title = view.model().headerData(col, Qt.Horizontal)
        assert not view.isColumnHidden(col), title
        assert header.sectionSize(col) >= header.sectionSizeHint(col), title
        assert header.sectionViewportPosition(col) >= 0, title
        assert header.sectionViewportPosition(col) + header.sectionSize(col) <= width, (title, width)


def test_meaningful_columns_are_whole_at_the_default_size(make_window):
    w = make_window()
    npcs = w.panels["npcs"][0]
    assert_whole(npcs.view, range(npcs.model.columnCount()))  # Stress / threshold, Walk-aways, In progress
    monologues = w.panels["monologues"][0]
    assert_whole(monologues.view, (MonologueModel.STATUS, MonologueModel.LINE, MonologueModel.WHY))
    # The widest status, M002's fired id that no pool defines, reads whole (was "fired · no …").
    status = monologues.view.columnWidth(MonologueModel.STATUS)
    assert status >= monologues.view.fontMetrics().horizontalAdvance("fired · no pool") + 8
    w.session.set_view("interactions")
    settle()
    table = w.views["interactions"].table
    assert_whole(table, range(5))  # FactId, Started, Ended, State, Topics
    # Long content is elided and its tooltip carries the whole text.
    index = table.model().index(1, 4)
    assert table.model().data(index, Qt.ToolTipRole) == table.model().data(index, Qt.DisplayRole)
    assert table.model().data(table.model().index(0, 0), Qt.ToolTipRole).startswith("interaction.")


def test_the_monologue_text_column_appears_when_the_dock_is_wide(make_window):
    w = make_window()
    monologues = w.panels["monologues"][0]
    assert monologues.view.isColumnHidden(MonologueModel.TEXT)
    w.resize(1600, 900)  # room for a 1 000 px dock beside the views' 480 px (and a scroll bar's)
    settle()
    w.resizeDocks([w.docks["monologues"]], [1000], Qt.Horizontal)
    settle()
    assert not monologues.view.isColumnHidden(MonologueModel.TEXT)
    assert_whole(monologues.view, (MonologueModel.STATUS, MonologueModel.LINE, MonologueModel.WHY))
    # The widest status, M002's fired id that no pool defines, reads whole (was "fired · no …").
    status = monologues.view.columnWidth(MonologueModel.STATUS)
    assert status >= monologues.view.fontMetrics().horizontalAdvance("fired · no pool") + 8


def test_screenshot_smaller_than_the_window_minimum_is_clamped(tmp_path):
    import subprocess
    import sys

    from PySide6.QtGui import QImage

    out = tmp_path / "small.png"
    env = {"QT_QPA_PLATFORM": "offscreen", "PATH": "/usr/bin:/bin", "HOME": str(tmp_path)}
    done = subprocess.run(
        [sys.executable, "-m", "narrative_debugger.app", "screenshot", str(SAMPLES / "evening.json"), "--out", str(out),
         "--view", "timelines", "--size", "800x600"], capture_output=True, text=True, env=env, timeout=300)
    assert done.returncode == 0, done.stderr
    assert f"at least {layout.MIN_WINDOW[0]}x{layout.MIN_WINDOW[1]}" in done.stderr
    image = QImage(str(out))
    assert (image.width(), image.height()) == layout.MIN_WINDOW


def test_explain_opens_beside_the_findings_without_squeezing_the_views(make_window, qtbot):
    # The Explain dock used to open on the right and squeeze the central view (knowledge
    # filters, tick bar and prompt header cut): now it is tabbed with the Journal.
    w = make_window()
    view_width = w.views["knowledge"].width()
    dock = w.docks["explain"]
    assert not dock.isVisible()
    w.session.explain("npc:kael-davan.score")
    explain = w.panels["explain"][0]
    qtbot.waitUntil(lambda: explain.explanation is not None, timeout=20000)
    settle()
    assert dock.isVisible() and not dock.visibleRegion().isEmpty()
    assert w.dockWidgetArea(dock) == Qt.BottomDockWidgetArea and dock in w.tabifiedDockWidgets(w.docks["journal"])
    assert w.views["knowledge"].width() == view_width
    assert not w.docks["findings"].visibleRegion().isEmpty()  # the Findings stay in sight
    # The long arithmetic is shown whole, wrapped, in the detail pane (no horizontal scroll).
    last = explain.explanation.steps[-1]
    assert last.detail in explain.detail.text() and explain.detail.wordWrap()
    table = explain.table
    assert table.horizontalScrollBar().maximum() == 0, "the steps table needs a horizontal scroll"
    row = explain.model.rowCount() - 2
    table.selectRow(row)
    assert explain.model.step_at(row).detail in explain.detail.text()


def visible_rows(table) -> int:
    return table.viewport().height() // table.verticalHeader().defaultSectionSize()


def test_bottom_docks_show_six_rows_on_first_start_and_after_reset(make_window):
    w = make_window()
    findings = w.panels["findings"][0].view
    assert visible_rows(findings) >= 6
    w.docks["findings"].setFloating(True)
    w.resizeDocks([w.docks["journal"]], [120], Qt.Vertical)
    settle()
    w.findChild(type(w.grid_action), "action-reset-layout").trigger()
    settle()
    assert visible_rows(findings) >= 6, findings.viewport().height()
    assert visible_rows(w.panels["journal"][0].view) >= 6


def test_prompt_header_never_overlaps_and_its_tables_fit(make_window, qtbot):
    # The title was cut ("Prompt for Kael Davan at ti…") under "counted in 5 ms", the
    # Copy prompt button cut to "opy", and the Section and card Name columns to "na…".
    w = make_window()
    w.session.set_view("prompt")
    w.session.set_npc(w.session.npc_by_slug("kael-davan"))
    prompt = w.views["prompt"]
    # Kael's own preview: the one the load asked for (the first NPC's) may land first.
    qtbot.waitUntil(lambda: prompt.current_preview is not None and prompt.current_preview.npc == "kael-davan", timeout=20000)
    settle()
    for explain_open in (False, True):
        if explain_open:
            w.session.explain("npc:kael-davan.score")
            settle()
        title, status, controls = prompt.title_label, prompt.status_label, prompt.header_controls
        assert title.full_text().startswith("Prompt for Kael Davan at tick")
        shown = [x.geometry() for x in (title, status, controls) if x.isVisible()]
        for i, a in enumerate(shown):
            for b in shown[i + 1:]:
                assert not a.intersects(b), (a, b)
        assert controls.width() >= controls.sizeHint().width()  # Copy prompt whole
        assert prompt.copy_button.width() >= prompt.copy_button.sizeHint().width()
        # The whole title shows, or is elided with the whole as its tooltip.
        assert title.text() == title.full_text() or title.toolTip()
        assert_whole(prompt.card_table, (0, 1))  # Card, Name
        assert prompt.section_table.horizontalHeader().sectionSize(0) >= prompt.section_table.sizeHintForColumn(0)
    w.resize(*layout.MIN_WINDOW)
    settle()
    assert controls.y() > title.y()  # narrow: the controls wrap to a second row
    button = prompt.copy_button
    assert button.width() >= button.sizeHint().width()
    assert button.mapTo(prompt, button.rect().topRight()).x() <= prompt.width()


def test_timelines_readout_wraps_beside_full_range_and_is_never_cut(make_window):
    # The readout ran under the Full range button ("… stress 4 / 60 · w") at 1040x700.
    from PySide6.QtGui import QTextDocument

    w = make_window()
    w.open_save(SAMPLES / "walkaway-spiral.json", wait=True)
    w.session.set_view("timelines")
    view = w.views["timelines"]
    readout, button = view.readout, view.full_button

    def check() -> None:
        settle()
        QApplication.sendEvent(view, QEvent(QEvent.Type.Leave))  # the cursor's readout (the mouse may hover the offscreen window)
        settle()
        r = readout.geometry()
        b = button.geometry()
        assert not r.intersects(b), (r, b)
        assert r.right() < b.left()
        assert button.width() >= button.sizeHint().width() and b.right() <= view.width()
        # The whole text shows: on one line, or wrapped with every line inside the label.
        assert plain_width() <= readout.width() or (readout.wordWrap() and readout.heightForWidth(readout.width()) <= readout.height())
        assert "walk-aways" in readout.text()

    def plain_width() -> int:
        doc = QTextDocument()
        doc.setHtml(readout.text())
        return readout.fontMetrics().horizontalAdvance(doc.toPlainText())

    check()
    w.resize(*layout.MIN_WINDOW)
    check()
    assert plain_width() > readout.width()  # the readout is longer than its row: it wraps, whole
    w.compare.compare_with(SAMPLES / "evening.json", wait=True)
    w.session.set_tick(30000)
    check()
    assert "<br><b>B</b>" in readout.text()  # B's values: a line of their own


@pytest.fixture()
def font_11pt(qtbot):
    """The application font at 11 points (a common desktop setting) for the test, then the
    one before: windows made meanwhile are laid out in it."""
    before = QApplication.font()
    bigger = QApplication.font()
    bigger.setPointSize(11)
    QApplication.setFont(bigger)
    yield
    QApplication.setFont(before)


def _compared_timelines_at_min(make_window):
    """A window at its smallest size comparing evening (A) with walkaway-spiral (B),
    timelines in front: what trial 50 saw at an 11 pt font."""
    w = make_window()
    w.resize(*layout.MIN_WINDOW)
    w.compare.compare_with(SAMPLES / "walkaway-spiral.json", wait=True)
    w.session.set_view("timelines")
    for _ in range(3):
        settle()
    return w, w.views["timelines"]


def _axis_texts(axis) -> list:
    """(text, box in scene pixels) of each label pyqtgraph draws on ``axis``, top to bottom."""
    from PySide6.QtGui import QImage, QPainter

    image = QImage(4, 4, QImage.Format_ARGB32)
    painter = QPainter(image)
    try:
        _, _, texts = axis.generateDrawSpecs(painter)
    finally:
        painter.end()
    return sorted(((text, axis.mapRectToScene(rect)) for rect, _, text in texts), key=lambda t: t[1].top())


def test_the_timelines_keep_room_for_their_labels_at_an_11pt_font(make_window, font_11pt):
    """Trial 50: at 1040x700, comparing, at an 11 pt font, the score plot was ~40 px and its
    level names were drawn over one another and over the tick labels ("Acquaintance", wider
    than its axis, not at all). Each plot keeps room for a line per label (a view less tall
    scrolls the plots): every level name shows, whole, a line from the next, and no two
    tick labels of a plot meet."""
    from narrative_debugger.models.domain.types import RelationshipLevel
    from PySide6.QtGui import QFontMetrics

    w, view = _compared_timelines_at_min(make_window)
    names = view.score_plot.getAxis("right")
    line = QFontMetrics(names.font()).lineSpacing()
    assert view.score_plot.vb.height() >= 108 / 20 * line - 1  # five bands of 20 points, each a line tall
    shown = _axis_texts(names)
    assert [text for text, _ in shown] == [level.display_name for level in reversed(RelationshipLevel)]
    scene = view.graphics.sceneRect()
    for (_, upper), (_, lower) in zip(shown, shown[1:]):
        assert lower.center().y() - upper.center().y() >= QFontMetrics(names.font()).height() - 1, (upper, lower)
    for text, box in shown:  # whole: inside the scene, right of the plot
        assert scene.contains(box) and box.left() >= view.score_plot.vb.sceneBoundingRect().right(), (text, box)
    for plot in (view.score_plot, view.stress_plot):
        ticks = _axis_texts(plot.getAxis("left"))
        assert len(ticks) >= 2
        assert not any(a.intersects(b) for (_, a), (_, b) in zip(ticks, ticks[1:])), ticks
    ticks = [box for _, box in _axis_texts(view.score_plot.getAxis("left"))]
    assert not any(box.intersects(name) for box in ticks for _, name in shown)
    # The view is less tall than the plots need: they scroll, and the window keeps its size.
    assert (w.width(), w.height()) == tuple(layout.MIN_WINDOW)
    bar = view.plot_scroll.verticalScrollBar()
    assert view.graphics.height() <= view.plot_scroll.viewport().height() or bar.maximum() > 0


def test_the_timelines_readout_is_never_cut_at_an_11pt_font(qtbot, make_window, font_11pt):
    """Trial 50: there, the readout of a hovered walk-away (A's and B's values) wrapped to
    more lines than it had, the last one cut in half. It shows at most three lines: whole,
    or ending in "…" with the whole text in its tooltip."""
    from PySide6.QtCore import QPointF
    from PySide6.QtGui import QTextDocument

    _, view = _compared_timelines_at_min(make_window)
    readout = view.readout
    track = view.tracks[view.session.npc]
    x = next(float(xs[0]) for xs in track.markers.values() if len(xs))
    scene = view.score_plot.vb.mapViewToScene(QPointF(x, max(3.0, track.score.at(x))))
    view.graphics.scene().sigMouseMoved.emit(scene)
    qtbot.waitUntil(lambda: "at tick" in readout.full_text(), timeout=2_000)  # the marker named: A, B and the marker
    settle()
    doc = QTextDocument()
    doc.setDocumentMargin(0)
    doc.setDefaultFont(readout.font())
    doc.setHtml(readout.text())
    doc.setTextWidth(readout.contentsRect().width())
    assert doc.size().height() <= readout.height(), (doc.size(), readout.height())
    assert readout.height() <= 3 * readout.fontMetrics().lineSpacing() + 2
    holder = readout.parentWidget()
    assert readout.geometry().bottom() <= holder.rect().bottom()
    if readout.text() != readout.full_text():
        assert doc.toPlainText().endswith("…") and readout.toolTip() == readout.full_text()
    else:
        assert readout.toolTip() == ""


def test_a_blocked_monologue_line_shows_every_failing_prerequisite_whole(make_window):
    # At tick 9,278 harbor-nights_m_s_060 is blocked for Lera Sessik by two prerequisites;
    # its row was one line high, the first reason cut ("needs knows_…").
    from PySide6.QtCore import QRect
    from PySide6.QtGui import QFontMetrics

    w = make_window()
    w.open_save(SAMPLES / "walkaway-spiral.json", wait=True)
    s = w.session
    s.set_npc(s.npc_by_slug("lera-sessik"))
    s.set_tick(9278)
    monologues = w.panels["monologues"][0]
    model, view = monologues.model, monologues.view
    for size in ((1440, 900), layout.MIN_WINDOW):
        w.resize(*size)
        settle()
        row = next(k for k, r in enumerate(model.rows) if r.kind == "line" and r.line_id == "harbor-nights_m_s_060")
        failing = model.rows[row].failing
        assert failing == ("family.cass_sessik_lost is knows_of, needs knows_details", "3 completed interaction(s) with lera-sessik, needs 10")
        text = model.data(model.index(row, MonologueModel.WHY), Qt.DisplayRole)
        assert text == "\n".join(failing)
        width = view.columnWidth(MonologueModel.WHY) - 4
        needed = QFontMetrics(view.font()).boundingRect(QRect(0, 0, width, 10000), Qt.TextWordWrap, text).height()
        assert view.rowHeight(row) >= needed >= 2 * view.fontMetrics().lineSpacing()
        # Eligible lines keep one line (elided, the tooltip holding the whole text).
        eligible = next(k for k, r in enumerate(model.rows) if r.kind == "line" and r.eligible)
        assert view.rowHeight(eligible) == view.verticalHeader().defaultSectionSize()
        tip = model.data(model.index(row, MonologueModel.WHY), Qt.ToolTipRole)
        assert all(reason in tip for reason in failing)
    # The height follows the column width: a wide dock puts the two reasons on two lines.
    narrow = view.rowHeight(row)
    w.resize(1440, 900)
    w.resizeDocks([w.docks["monologues"]], [1000], Qt.Horizontal)
    settle()
    assert view.rowHeight(row) < narrow
    assert view.rowHeight(row) >= 2 * view.fontMetrics().lineSpacing()


def tight_content(tmp_path: Path) -> Path:
    """A copy of the sample content with a 1200-token budget: Kael Davan's cards are dropped."""
    import shutil

    content = tmp_path / "tight"
    shutil.copytree(SAMPLES / "content", content)
    prompt = content / "prompt.yaml"
    text = prompt.read_text(encoding="utf-8")
    assert "context_token_budget: 8192" in text
    prompt.write_text(text.replace("context_token_budget: 8192", "context_token_budget: 1200"), encoding="utf-8")
    return content


def test_prompt_summary_wraps_and_its_tables_show_rows_and_the_card_status(make_window, qtbot, tmp_path):
    # New-user trial at 1440x900 with a tight budget: the budget line was cut ("… history
    # and lore may use 4"), the sections table showed ~2 rows, the card table ~1 and its
    # included / dropped column lay past the right edge (header "Toker").
    from PySide6.QtGui import QTextDocument

    w = make_window(open_save=False)
    assert (w.width(), w.height()) == (1440, 900)
    w.open_save(SAMPLES / "evening.json", tight_content(tmp_path), wait=True)
    s = w.session
    s.set_view("prompt")
    s.set_npc(s.npc_by_slug("kael-davan"))
    s.set_tick(s.playthrough.save.saved_at_tick)
    prompt = w.views["prompt"]
    qtbot.waitUntil(lambda: prompt.current_preview is not None and not prompt.busy, timeout=20000)
    settle()
    assert w.frames["prompt"].verticalScrollBar().maximum() == 0  # the view fits its tab
    label = prompt.budget_label
    doc = QTextDocument()
    doc.setHtml(label.text())
    assert doc.toPlainText().endswith(f"history and lore may use {prompt.current_preview.available:,}")
    assert label.fontMetrics().horizontalAdvance(doc.toPlainText()) > label.width()  # longer than its row...
    assert label.wordWrap() and label.height() >= label.heightForWidth(label.width())  # ...so wrapped, whole
    assert label.height() >= 2 * label.fontMetrics().lineSpacing()
    assert visible_rows(prompt.section_table) >= 4
    cards, table = prompt.card_model, prompt.card_table
    assert cards.rowCount() == 5 and any("dropped" in cards.data(cards.index(r, 4)) for r in range(5))
    assert visible_rows(table) >= cards.rowCount()
    assert table.horizontalScrollBar().maximum() == 0
    assert_whole(table, range(cards.columnCount()))  # every header readable, Status in view
    header = table.horizontalHeader()
    assert header.sectionSize(4) >= table.sizeHintForColumn(4)  # "dropped (budget)" whole
    # Id, name and key give way instead, elided; the tooltip holds them whole.
    for row in range(cards.rowCount()):
        card = cards.card_at(row)
        tip = cards.data(cards.index(row, 1), Qt.ToolTipRole)
        assert card.id in tip and card.name in tip and card.keyword in tip


def test_npc_columns_stay_readable_after_a_reset_at_the_smallest_size(make_window):
    # New-user trial: View › Reset layout at 1040x700 gave the NPC dock 40 % of the width
    # (416 px), which it then kept when the window grew or restarted: "Walk-aways /
    # tolerated" was cut, "In progress" behind a horizontal scroll bar, names wrapped.
    w = make_window()
    w.resize(*layout.MIN_WINDOW)
    settle()
    w.findChild(type(w.grid_action), "action-reset-layout").trigger()
    settle()
    npcs = w.panels["npcs"][0]
    view, model = npcs.view, npcs.model

    def check() -> None:
        settle()
        assert view.horizontalScrollBar().maximum() == 0
        assert_whole(view, range(model.columnCount()))  # every header whole, inside the viewport
        for col in (model.SCORE, model.STRESS, model.WALK_AWAYS, model.INTERACTION):
            assert view.columnWidth(col) >= view.sizeHintForColumn(col), model.HEADERS[col]  # values whole
        assert not view.wordWrap()  # a long name is elided on one line, never wrapped
        for row in range(model.rowCount()):  # name and level, when elided, are in the tooltip
            tip = model.data(model.index(row, model.NAME), Qt.ToolTipRole)
            assert model.data(model.index(row, model.NAME)) in tip and model.data(model.index(row, model.LEVEL)) in tip
        assert_minimums_hold(w)

    check()
    w.resize(1440, 900)  # the dock keeps its width
    check()
    w.resize(*layout.MIN_WINDOW)
    w.close()  # and a restart restores it
    w2 = make_window()
    npcs = w2.panels["npcs"][0]
    view, model, w = npcs.view, npcs.model, w2
    check()


def test_snapshot_caption_wraps_and_its_headers_are_whole(make_window):
    # New-user trial (qa-faults.json, F8 a few times): the caption was cut mid-word beside
    # "Differences only" ("…; 2 more value(s) a fi") and "Replayed to saved_at_tick" was cut.
    w = make_window(open_save=False)
    w.open_save(SAMPLES / "qa-faults.json", wait=True)
    settle()
    for _ in range(3):
        w.panels["findings"][0].next_action.trigger()
        settle()
    snapshot = w.panels["snapshot"][0]
    assert w.docks["snapshot"].isVisible() and not w.docks["snapshot"].visibleRegion().isEmpty()
    for size in ((1440, 900), layout.MIN_WINDOW):
        w.resize(*size)
        settle()
        caption = snapshot.caption
        text = caption.text()
        assert text.endswith("more value(s) a finding names")
        assert caption.fontMetrics().horizontalAdvance(text) > caption.width()  # longer than its room...
        assert caption.wordWrap() and caption.height() >= caption.heightForWidth(caption.width())  # ...wrapped, whole
        assert not caption.geometry().intersects(snapshot.differences_only.geometry())
        view = snapshot.view
        assert view.horizontalScrollBar().maximum() == 0
        assert_whole(view, range(view.model().columnCount()))  # "Replayed to saved_at_tick" whole, in view
        assert visible_rows(view) >= 3


def test_a_wrapped_label_is_as_tall_as_its_lines_at_each_width(qtbot):
    # Its minimum height follows its width both ways (QLabel's heightForWidth never goes
    # below the minimum height, so a label once narrow stayed tall), and it takes no
    # height-for-width part in its layout (a QScrollArea then grew the prompt view).
    from narrative_debugger.widgets.kit.plain_text import WrappedLabel
    from PySide6.QtWidgets import QVBoxLayout, QWidget

    box = QWidget()
    qtbot.addWidget(box)
    label = WrappedLabel("word " * 40)
    QVBoxLayout(box).addWidget(label)
    assert not box.layout().hasHeightForWidth()
    box.show()
    line = label.fontMetrics().lineSpacing()
    for width, lines in ((150, 3), (3000, 1), (150, 3)):
        box.resize(width, 400)
        settle()
        assert label.minimumHeight() >= lines * line if lines > 1 else label.minimumHeight() < 2 * line, (width, label.minimumHeight())
        assert label.height() >= label.minimumHeight()


def test_journal_event_filter_shows_its_choice_whole(make_window):
    # New-user trial: the Event combo was squeezed by the caption to "All events (3,800".
    from PySide6.QtWidgets import QStyle, QStyleOptionComboBox

    w = make_window()
    journal = w.panels["journal"][0]
    combo = journal.kind_filter
    for size in ((1440, 900), layout.MIN_WINDOW):
        w.resize(*size)
        settle()
        option = QStyleOptionComboBox()
        combo.initStyleOption(option)
        field = combo.style().subControlRect(QStyle.CC_ComboBox, option, QStyle.SC_ComboBoxEditField, combo)
        for i in range(combo.count()):  # whichever kind is chosen, it reads whole
            assert field.width() >= combo.fontMetrics().horizontalAdvance(combo.itemText(i)), combo.itemText(i)
        assert combo.currentText() == "All events (3,800)"
        caption = journal.caption  # short, whole or elided; the whole sentence is its tooltip
        assert caption.text() == caption.full_text() or caption.text().endswith("…")
        assert caption.full_text() == "3,800 of 3,800 applied"
        assert caption.toolTip().startswith("3,800 of 3,800 entries applied at tick ")
        bar = [combo.geometry(), journal.npc_filter.parentWidget().geometry(), caption.parentWidget().geometry()]  # SteadyLabel holders
        assert bar[0].right() < bar[1].left() and bar[1].right() < bar[2].left()
        assert journal.npc_filter.width() >= journal.npc_filter.sizeHint().width()


def test_an_npc_change_lays_out_neither_the_timelines_nor_the_journal_bar(make_window, qtbot):
    # Issue 10: the timelines legend (the selected name in bold) and the journal's
    # "Only NAME" box are rewritten at every NPC change; plain, each laid its view out
    # again (3-6 ms of a step that selects another NPC). Held, neither does.
    from PySide6.QtCore import QEvent, QObject
    from PySide6.QtGui import QCursor

    class Requests(QObject):
        def __init__(self) -> None:
            super().__init__()
            self.seen: list[str] = []

        def eventFilter(self, watched, event) -> bool:  # noqa: N802 (Qt override)
            if event.type() == QEvent.LayoutRequest:
                self.seen.append(f"{type(watched).__name__} {watched.objectName()!r}")
            return False

    w = make_window()
    s = w.session
    s.set_view("timelines")
    # One full run counted a request this test did not cause (it passed alone and in
    # the next full run). Rule out what can come late or from outside: sliced work of
    # the open, timers of the view switch (they fire within the wait), and hover
    # events from a pointer an earlier test left over the window.
    QCursor.setPos(w.screen().geometry().bottomRight())
    w.finish_background()
    # The view switch's own timers (single-shot, children of the window) have fired.
    qtbot.waitUntil(lambda: not any(t.isActive() and t.isSingleShot() for t in w.findChildren(QTimer)), timeout=5000)
    settle()
    assert not w.background_busy()
    timelines, journal = w.views["timelines"], w.panels["journal"][0]
    requests = Requests()
    for widget in (timelines, journal):
        widget.installEventFilter(requests)
    names = []
    for slug in ("kael-davan", "lera-sessik", "kael-davan"):
        s.set_npc(s.npc_by_slug(slug))
        settle()
        names.append(journal.npc_filter.text())
    assert requests.seen == []
    assert names[0] != names[1] and names[0] == names[2]  # the texts did change
    assert "<b>" in timelines.legend.text()


def test_a_window_shrunk_to_its_minimum_keeps_the_views_whole(make_window):
    """Shrinking a window to 1040 x 700 squeezed the central area under the views' 480
    px: the Knowledge view scrolled sideways, cut "288 facts" to "288 f" and hid the
    graph's Fit button (new-user trial). The views now keep their width, and the
    filter row fits with a search box one can type in."""
    w = make_window()
    w.resize(*layout.MIN_WINDOW)
    settle()
    knowledge = w.views["knowledge"]
    for spec in VIEWS:
        view = w.views[spec.name]
        assert view.parentWidget().width() >= view.minimumWidth(), spec.name  # the scroll area's viewport
    assert knowledge.count.text() == knowledge.count.full_text() == "288 facts"
    assert knowledge.search.width() >= knowledge.search.fontMetrics().horizontalAdvance("Filter Fa")
    row_end = max(x.geometry().right() for x in (knowledge.search, knowledge.category, knowledge.confidence,
                                                  knowledge.state_filter, knowledge.changed_only, knowledge.count))
    assert row_end < knowledge.width()


def _explained(qtbot, w, target: str = "npc:lera-sessik.score"):
    w.session.explain(target)
    explain = w.panels["explain"][0]
    qtbot.waitUntil(lambda: explain.explanation is not None and explain.model.rowCount() > 0, timeout=20000)
    settle()
    return explain


def _assert_explain_usable(explain) -> None:
    """The steps show two rows at least and Before → after without a horizontal scroll;
    the summary and the arithmetic keep every line (in the dock, or by its scroll)."""
    table = explain.table
    assert visible_rows(table) >= 2, table.viewport().height()
    assert table.horizontalScrollBar().maximum() == 0, "the steps table needs a horizontal scroll"
    assert_whole(table, [explain.model.HEADERS.index("Before → after")])
    body = explain.scroll.widget()
    for label in (explain.summary, explain.detail):
        lines = label.heightForWidth(label.width()) // label.fontMetrics().lineSpacing()
        assert label.height() >= lines * label.fontMetrics().lineSpacing(), (label.objectName(), label.height(), lines)
        assert label.geometry().bottom() <= body.height(), label.objectName()  # in the scrolled area, not past it
    assert body.height() <= explain.scroll.viewport().height() or explain.scroll.verticalScrollBar().maximum() > 0


def test_explain_keeps_its_steps_and_arithmetic_at_the_smallest_size(make_window, qtbot):
    # New-user trial at 1040x700: the steps table showed only its header, the arithmetic
    # was cut mid-line and Before → after lay behind a horizontal scroll bar.
    w = make_window()
    w.resize(*layout.MIN_WINDOW)
    settle()
    explain = _explained(qtbot, w)
    _assert_explain_usable(explain)
    w.resize(1440, 900)
    settle()
    _assert_explain_usable(explain)
    assert explain.scroll.verticalScrollBar().maximum() == 0  # at the default size all of it in sight


def test_docks_get_their_size_back_when_the_window_grows_again(make_window, qtbot):
    # New-user trial: shrunk to 1040x700 and back to 1440x900, the NPC and What if docks
    # stayed narrow (names elided) and the bottom docks short (Explain cut): QMainWindow
    # gives a growing window's room to the central area alone.
    w = make_window()
    explain = _explained(qtbot, w)
    w.whatif.open_action.trigger()
    settle()
    names = ("npcs", "whatif", "findings", "explain")
    before = {name: w.docks[name].size() for name in names}
    for size in (layout.MIN_WINDOW, (1200, 760), (1440, 900)):
        w.resize(*size)
        settle()
    assert {name: w.docks[name].size() for name in names} == before
    npcs = w.panels["npcs"][0]
    assert_whole(npcs.view, range(npcs.model.columnCount()))
    assert all(npcs.view.columnWidth(col) >= npcs.view.sizeHintForColumn(col) for col in range(npcs.model.columnCount()))
    _assert_explain_usable(explain)
    # A dock made narrower on purpose stays so: that is its size now.
    w.resizeDocks([w.docks["npcs"]], [before["npcs"].width() - 20], Qt.Horizontal)
    settle()
    narrower = w.docks["npcs"].width()
    assert narrower < before["npcs"].width()
    w.resize(1300, 900)
    settle()
    w.resize(1440, 900)
    settle()
    assert w.docks["npcs"].width() == narrower


class _TabbedWindow:
    """A stand-in for QMainWindow's ``resizeDocks``: each dock gets what it is asked less
    ``tab_bar`` pixels (a tabbed dock's size counts its tab bar), at most ``room`` in all."""

    def __init__(self, tab_bar: int, room: int) -> None:
        self.tab_bar, self.room, self.size, self.asks = tab_bar, room, {}, []

    def resizeDocks(self, docks, sizes, orientation) -> None:  # noqa: N802 (QMainWindow's name)
        self.asks.append(dict(zip(docks, sizes)))
        for dock, size in zip(docks, sizes):
            self.size[dock] = min(size - self.tab_bar, self.room - sum(v for d, v in self.size.items() if d != dock))

    def layout(self):
        return self

    def activate(self) -> None:
        pass


def test_resize_docks_closer_asks_again_for_what_a_tabbed_dock_lacks():
    """One helper serves the kept dock sizes and the Coverage dock's rows (trial 50 note):
    a dock given less than asked (its tab bar counted) is asked again, grown by what it
    lacks, at most ``tries`` times and only while it comes closer; a dock lacking nothing
    is not asked again."""
    from narrative_debugger.app.window.layout import resize_docks_closer

    def lacking_of(window, target):
        return lambda docks: [target[d] - window.size[d] if window.size[d] < target[d] else 0 for d in docks]

    window = _TabbedWindow(tab_bar=20, room=1000)
    window.size = {"explain": 0}
    resize_docks_closer(window, ["explain"], [300], Qt.Vertical, lacking_of(window, {"explain": 300}))
    assert window.asks == [{"explain": 300}, {"explain": 320}] and window.size["explain"] == 300
    # Room for less than asked: asked again while it helps, never past ``tries``.
    window = _TabbedWindow(tab_bar=20, room=290)
    window.size = {"explain": 0}
    resize_docks_closer(window, ["explain"], [300], Qt.Vertical, lacking_of(window, {"explain": 300}), tries=5)
    assert window.asks == [{"explain": 300}, {"explain": 320}, {"explain": 330}]  # 280, 290, 290: no closer, stops
    assert window.size["explain"] == 290
    # A dock giving (negative lack) is asked again with the one taking; one lacking nothing is not.
    window = _TabbedWindow(tab_bar=0, room=1000)
    window.size = {"npcs": 400, "coverage": 100, "other": 50}
    lack = iter([[-30, 30, 0], [0, 0, 0]])
    resize_docks_closer(window, ["npcs", "coverage", "other"], [350, 150, 50], Qt.Vertical, lambda docks: next(lack), tries=3)
    assert window.asks == [{"npcs": 350, "coverage": 150, "other": 50}, {"npcs": 320, "coverage": 180}]
    # What they lacked before the first ask bounds the first ask again.
    window = _TabbedWindow(tab_bar=0, room=1000)
    window.size = {"npcs": 400, "coverage": 100}
    resize_docks_closer(window, ["npcs", "coverage"], [350, 150], Qt.Vertical, lambda docks: [-50, 50], tries=3, lacked_before=50)
    assert window.asks == [{"npcs": 350, "coverage": 150}]

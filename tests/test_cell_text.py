"""StaticTextDelegate draws the same pixels as QStyledItemDelegate, from text kept between paints (issue 10).

Each comparison runs twice: with the default font (the machine's own fonts, whatever they are: the pixels
must hold with any), and with the fonts in tests/data/fonts, which every machine has. The
second makes "名前" come from a fallback font with a taller line than the text font's, as
a CJK font on a desktop does; the delegate once drew such a line 1 px off, and only
machines with a CJK font showed it (issue 35).
"""

from __future__ import annotations

import functools

import pytest
from PySide6.QtCore import QSortFilterProxyModel, Qt
from PySide6.QtGui import QBrush, QColor, QFont, QFontDatabase, QFontMetrics, QStandardItem, QStandardItemModel, QTextLayout
from PySide6.QtWidgets import QApplication, QStyledItemDelegate, QStyleOptionViewItem, QTableView

from narrative_debugger.widgets.kit.cell_text import StaticTextDelegate
from narrative_debugger.widgets.kit.tables import ElideDelegate, hot_table

from tests.conftest import DATA

TEXTS = ["plain", "interaction.kael-davan_001 a long one that elides", "<b>not bold</b>", "1,234,567",
         "Ünïcödé ✓ 名前", "", "Direct observation"]


SHIPPED = "Narrative Test Sans"
FALLBACK = "Narrative Test Fallback"


@functools.cache
def _load_shipped_fonts() -> None:
    for name in ("NarrativeTestSans.ttf", "NarrativeTestFallback.ttf"):
        if QFontDatabase.addApplicationFont(str(DATA / "fonts" / name)) < 0:
            raise RuntimeError(f"cannot load tests/data/fonts/{name}")


def _shipped_font() -> QFont:
    _load_shipped_fonts()
    font = QFont(SHIPPED)
    # A glyph the text font lacks comes from the next family, before any font the machine has.
    font.setFamilies([SHIPPED, FALLBACK])
    font.setPixelSize(13)
    return font


@pytest.fixture(params=["default font", "shipped fonts"])
def fonts(request, qapp):
    """The application font for one run: the default one, or the shipped one (restored after)."""
    if request.param == "default font":
        yield QApplication.font()
        return
    before = QApplication.font()
    font = _shipped_font()
    QApplication.setFont(font)
    try:
        yield font
    finally:
        QApplication.setFont(before)


def test_the_shipped_fonts_give_a_taller_line_to_the_fallback_glyphs(qapp):
    """The case the shipped fonts are there for: a line with "名前" is taller than the
    text font's own height, so a delegate that centres on ``QFontMetrics.height()`` fails."""
    fonts = _shipped_font()
    assert QFontDatabase.hasFamily(SHIPPED) and QFontDatabase.hasFamily(FALLBACK)

    def line_height(text):
        layout = QTextLayout(text, fonts)
        layout.beginLayout()
        line = layout.createLine()
        layout.endLayout()
        return line.height()

    assert line_height("Unicode") == pytest.approx(QFontMetrics(fonts).height(), abs=1)
    assert line_height("Ünïcödé ✓ 名前") >= QFontMetrics(fonts).height() + 2


def _model() -> QStandardItemModel:
    font = QApplication.font()
    bold, italic = QFont(font), QFont(font)
    bold.setBold(True)
    italic.setItalic(True)
    model = QStandardItemModel(len(TEXTS), 5)
    for row, text in enumerate(TEXTS):
        for col in range(5):
            item = QStandardItem(text)
            if col == 1:
                item.setTextAlignment(Qt.AlignRight | Qt.AlignVCenter)
            if col == 2:
                item.setFont(bold if row % 2 else italic)
            if col == 3:
                item.setForeground(QBrush(QColor("#c92a2a")))
            if col == 4:
                item.setBackground(QBrush(QColor("#fff3bf")))
                if row == 3:
                    item.setTextAlignment(Qt.AlignCenter)
            model.setItem(row, col, item)
    return model


def _grab(qtbot, model, delegate, *, wrap=False, elide=Qt.ElideRight, selected=None, focus=False, proxy=False):
    view = QTableView()
    qtbot.addWidget(view)
    if proxy:
        sorter = QSortFilterProxyModel(view)
        sorter.setSourceModel(model)
        view.setModel(sorter)
    else:
        view.setModel(model)
    view.resize(700, 260)
    view.setAlternatingRowColors(True)
    view.setWordWrap(wrap)
    view.setTextElideMode(elide)
    for col, width in enumerate((150, 90, 120, 110, 160)):
        view.setColumnWidth(col, width)
    made = delegate(view)
    view.setItemDelegate(made)
    view.show()
    qtbot.waitExposed(view)
    if selected is not None:
        view.selectRow(selected)
    if focus:
        view.setFocus()
        view.setCurrentIndex(view.model().index(1, 1))
    QApplication.processEvents()
    image = view.viewport().grab().toImage()
    if isinstance(made, StaticTextDelegate):
        assert made.kept, "the static path drew no cell"
    return image


@pytest.mark.parametrize("wrap", [False, True])
@pytest.mark.parametrize("elide", [Qt.ElideRight, Qt.ElideLeft, Qt.ElideMiddle])
@pytest.mark.parametrize("selected", [None, 2])
def test_the_same_pixels_as_the_styled_delegate(qtbot, fonts, wrap, elide, selected):
    model = _model()
    styled = _grab(qtbot, model, QStyledItemDelegate, wrap=wrap, elide=elide, selected=selected)
    static = _grab(qtbot, model, StaticTextDelegate, wrap=wrap, elide=elide, selected=selected)
    assert static == styled


def test_the_same_pixels_through_a_proxy_and_with_a_focused_cell(qtbot, fonts):
    model = _model()
    assert _grab(qtbot, model, StaticTextDelegate, proxy=True, selected=4) == _grab(qtbot, model, QStyledItemDelegate, proxy=True, selected=4)
    assert _grab(qtbot, model, StaticTextDelegate, focus=True) == _grab(qtbot, model, QStyledItemDelegate, focus=True)


def test_an_elide_delegate_keeps_its_mode_over_the_views(qtbot, fonts):
    model = _model()

    def left(view):
        return ElideDelegate(Qt.ElideLeft, view)

    def styled_left(view):
        view.setTextElideMode(Qt.ElideLeft)
        return QStyledItemDelegate(view)

    assert _grab(qtbot, model, left, wrap=True) == _grab(qtbot, model, styled_left, wrap=False)


def test_text_is_laid_out_once_and_forgotten_when_the_font_changes(qtbot, monkeypatch):
    from narrative_debugger.widgets.kit import cell_text

    made = []  # every text laid out
    real_static = cell_text.QStaticText
    monkeypatch.setattr(cell_text, "QStaticText", lambda *a: made.append(a) or real_static(*a))
    model = QStandardItemModel(3, 1)
    for row in range(3):
        model.setItem(row, 0, QStandardItem("same text"))
    view = hot_table(QTableView())
    qtbot.addWidget(view)
    view.setModel(model)
    view.resize(300, 150)
    view.show()
    qtbot.waitExposed(view)
    delegate = view.itemDelegate()
    assert isinstance(delegate, StaticTextDelegate)
    view.viewport().grab()
    assert delegate.kept == 1 and made == [("same text",)]  # three cells, one laid-out text
    view.viewport().grab()
    assert delegate.kept == 1 and len(made) == 1  # kept: not laid out again
    bigger = QFont(view.font())
    bigger.setPointSize(bigger.pointSize() + 4)
    view.setFont(bigger)
    QApplication.processEvents()
    view.viewport().grab()
    assert delegate.kept == 1 and len(made) == 2  # laid out again in the new font, the old one forgotten
    # The same window draws both, so focus and activation are the same.
    styled_delegate = QStyledItemDelegate(view)
    view.setItemDelegate(styled_delegate)
    styled = view.viewport().grab().toImage()
    view.setItemDelegate(delegate)
    static = view.viewport().grab().toImage()
    assert delegate.kept and static == styled


def test_the_cache_is_bounded(qtbot):
    model = QStandardItemModel(50, 1)
    for row in range(50):
        model.setItem(row, 0, QStandardItem(f"row {row}"))
    view = QTableView()
    qtbot.addWidget(view)
    view.setModel(model)
    view.resize(300, 2000)
    delegate = StaticTextDelegate(view, keep=10)
    view.setItemDelegate(delegate)
    view.show()
    qtbot.waitExposed(view)
    view.viewport().grab()
    assert delegate.kept == 10


def test_brush_of_hands_out_one_brush_per_colour():
    from narrative_debugger.widgets.kit.state_colors import brush_of

    red = brush_of(QColor("#c92a2a"))
    assert red is brush_of(QColor(201, 42, 42)) and red.color() == QColor("#c92a2a")
    assert brush_of(QColor("#2e7d32")) is not red


@pytest.mark.parametrize("save", ["walkaway-spiral.json", "qa-faults.json", "evening.json"])
def test_a_models_cell_answers_what_its_data_does(qtbot, open_window, isolated_settings, save):
    """``cell(index)`` (one call a cell for the delegate) equals ``data`` for each role it
    stands for, in every cell, at ticks through the save and while comparing (the B column)."""
    from narrative_debugger.widgets.kit.roles import ALIGN, BACKGROUND, DISPLAY, FONT, FOREGROUND
    from tests.conftest import SAMPLES

    window = open_window(SAMPLES / save)
    s = window.session
    models = [window.docks["npcs"].widget().model, window.views["interactions"].model]
    assert all(callable(getattr(m, "cell", None)) for m in models)

    def check() -> int:
        seen = 0
        for model in models:
            for row in range(model.rowCount()):
                for col in range(model.columnCount()):
                    index = model.index(row, col)
                    want = tuple(model.data(index, role) for role in (DISPLAY, FONT, ALIGN, BACKGROUND, FOREGROUND))
                    assert model.cell(index) == want, (type(model).__name__, row, col)
                    seen += 1
        return seen

    tables = [window.docks["npcs"].widget().view, window.views["interactions"].table]

    def same_sizes() -> None:
        """The delegate's measured sizes are the style's own (columns fit as before)."""
        for table in tables:
            delegate = table.itemDelegate()
            plain = QStyledItemDelegate(table)
            option = QStyleOptionViewItem()
            table.initViewItemOption(option)
            model = table.model()
            for row in range(min(model.rowCount(), 40)):
                for col in range(model.columnCount()):
                    index = model.index(row, col)
                    assert delegate.sizeHint(option, index) == plain.sizeHint(option, index), (row, col)

    seen = 0
    for npc in s.playthrough.save.npcs:
        s.set_npc(npc)
        for tick in (s.last_tick // 3, s.last_tick):
            s.set_tick(tick)
            s.set_view("interactions")
            seen += check()
        same_sizes()
    window.compare.compare_with(SAMPLES / "evening.json", None, wait=True, quiet=True)
    assert s.comparison is not None
    seen += check()
    assert seen > 100

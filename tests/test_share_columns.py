"""tables.ShareColumns refits on every model change (every tick step): it measures the
rows in view, never the whole table (a 300-NPC table cost ~150 ms a step)."""

from __future__ import annotations

from narrative_debugger.widgets.kit.tables import ShareColumns, repaint_columns_at_once, set_section_sizes
from PySide6.QtCore import QAbstractTableModel, QEvent, QModelIndex, QObject, Qt
from PySide6.QtWidgets import QApplication, QTableView


class CountingModel(QAbstractTableModel):
    def __init__(self, rows: int) -> None:
        super().__init__()
        self.rows = rows
        self.calls = 0

    def rowCount(self, parent=QModelIndex()) -> int:  # noqa: N802 (Qt override)
        return 0 if parent.isValid() else self.rows

    def columnCount(self, parent=QModelIndex()) -> int:  # noqa: N802 (Qt override)
        return 0 if parent.isValid() else 3

    def data(self, index, role=Qt.DisplayRole):
        if role == Qt.DisplayRole:
            self.calls += 1
            return f"row {index.row()} column {index.column()}"
        return None

    def headerData(self, section, orientation, role=Qt.DisplayRole):  # noqa: N802 (Qt override)
        return f"Column {section}" if role == Qt.DisplayRole and orientation == Qt.Horizontal else None


def shown_table(qtbot) -> tuple[CountingModel, QTableView, ShareColumns]:
    """A shown 600x300 table of 3 000 counted rows whose last column is elastic."""
    model = CountingModel(3000)
    view = QTableView()
    view.setModel(model)
    qtbot.addWidget(view)
    fit = ShareColumns(view, elastic=(2,))
    view.resize(600, 300)
    view.show()
    qtbot.waitExposed(view)
    return model, view, fit


def test_a_refit_measures_only_the_rows_in_view(qtbot):
    model, view, fit = shown_table(qtbot)
    shown = view.rowAt(view.viewport().height() - 1) - view.rowAt(0) + 1
    assert 0 < shown < 30
    model.calls = 0
    fit.remeasure()
    assert 0 < model.calls <= 3 * 2 * (shown + 2)  # each column, the rows in view (and a margin)
    assert view.horizontalHeader().resizeContentsPrecision() == 0


def test_a_data_change_remeasures_only_its_columns(qtbot):
    model, view, fit = shown_table(qtbot)
    widths = [view.columnWidth(c) for c in range(3)]
    model.calls = 0
    model.dataChanged.emit(model.index(0, 1), model.index(5, 1))
    shown = view.rowAt(view.viewport().height() - 1) - view.rowAt(0) + 1
    assert 0 < model.calls <= 2 * (shown + 2)  # column 1 only
    assert [view.columnWidth(c) for c in range(3)] == widths
    model.calls = 0
    fit.refit()
    assert model.calls == 0  # nothing changed: the widths measured are kept


def test_a_data_change_out_of_view_measures_nothing(qtbot):
    """A step that changes rows scrolled out of a 3 000-row table (NPCs far down the
    list) keeps the widths measured from the rows in view; a change in view, or in rows
    that come into view, is measured."""
    model, view, fit = shown_table(qtbot)
    widths = [view.columnWidth(c) for c in range(3)]
    model.calls = 0
    model.dataChanged.emit(model.index(2000, 0), model.index(2999, 2))
    assert model.calls == 0
    assert [view.columnWidth(c) for c in range(3)] == widths
    first = view.rowAt(0)
    last = view.rowAt(view.viewport().height() - 1)
    model.dataChanged.emit(model.index(last, 0), model.index(last + 40, 0))  # reaches the view
    assert model.calls > 0
    # A wider value in the last row in view widens its column.
    original = model.data
    model.data = lambda index, role=Qt.DisplayRole: ("W" * 60 if index.row() == last and index.column() == 0 and role == Qt.DisplayRole
                                                     else original(index, role))
    model.dataChanged.emit(model.index(last, 0), model.index(last, 0))
    assert view.columnWidth(0) > widths[0]
    assert view.rowAt(0) == first


class _Paints(QObject):
    """Counts the paint events a widget gets."""

    def __init__(self, widget) -> None:
        super().__init__()
        self.count = 0
        widget.installEventFilter(self)

    def eventFilter(self, watched, event) -> bool:  # noqa: N802 (Qt override)
        if event.type() == QEvent.Paint:
            self.count += 1
        return False


def _passes_painted(view, paints: _Paints, passes: int = 4) -> list[int]:
    counts = []
    for _ in range(passes):
        before = paints.count
        QApplication.processEvents()
        counts.append(paints.count - before)
    return counts


def test_resized_sections_paint_in_the_same_pass_once(qtbot):
    """QTableView repaints resized columns and rows from a zero timer, in the next pass:
    a table refitted in a step or a load was painted twice (issue 10). Through
    ``set_section_sizes`` the sizes change, the view repaints in the pass itself, and
    never again after it; sizes that do not change repaint nothing."""
    model, view, _fit = shown_table(qtbot)
    paints = _Paints(view.viewport())
    _passes_painted(view, paints)
    wider = view.columnWidth(0) + 30
    assert set_section_sizes(view, {0: wider}, {1: 40})
    assert view.columnWidth(0) == wider and view.rowHeight(1) == 40
    assert _passes_painted(view, paints) == [1, 0, 0, 0]
    assert not set_section_sizes(view, {0: view.columnWidth(0)}, {1: 40})
    assert _passes_painted(view, paints) == [0, 0, 0, 0]
    # Qt's own way, for comparison: the timer paints the table a second time.
    view.setColumnWidth(0, view.columnWidth(0) + 30)
    view.viewport().update()
    assert _passes_painted(view, paints)[:2] == [1, 1]


def test_a_stretched_column_narrowed_by_the_layout_paints_in_that_pass_once(qtbot):
    """Rows that bring the vertical scroll bar narrow a stretched last column in the
    layout just before the paint. QTableView then painted the whole viewport a second
    time in the next pass, from a zero timer: after a load, the fact table (12-14 ms,
    issue 10). A table set up with ``repaint_columns_at_once`` paints once."""
    counts = {}
    for fixed in (False, True):
        model = CountingModel(3)
        view = QTableView()
        if fixed:
            repaint_columns_at_once(view)
        view.setModel(model)
        view.horizontalHeader().setStretchLastSection(True)
        qtbot.addWidget(view)
        view.resize(600, 300)
        view.show()
        qtbot.waitExposed(view)
        paints = _Paints(view.viewport())
        _passes_painted(view, paints)
        narrow = view.columnWidth(2)
        model.beginResetModel()
        model.rows = 3000
        model.endResetModel()
        view.executeDelayedItemsLayout()  # as the app's tables do after a reset (ShareColumns)
        counts[fixed] = _passes_painted(view, paints, passes=6)
        assert view.verticalScrollBar().isVisible() and view.columnWidth(2) < narrow
    assert counts[False][:2] == [1, 1], counts  # Qt's own way: painted again in the next pass
    assert counts[True] == [1, 0, 0, 0, 0, 0], counts

"""Pieces every table view here shares: a model base with fixed column headers, and a
read-only, row-selecting QTableView."""

from __future__ import annotations

from collections.abc import Iterable

from narrative_debugger.widgets.kit.cell_text import StaticTextDelegate
from narrative_debugger.widgets.kit.roles import DISPLAY as _DISPLAY, HORIZONTAL as _HORIZONTAL, TOOLTIP as _TOOLTIP
from PySide6.QtCore import QAbstractTableModel, QEvent, QModelIndex, QObject, QSortFilterProxyModel, Qt
from PySide6.QtGui import QFont, QFontMetrics
from PySide6.QtWidgets import QAbstractItemView, QHeaderView, QLabel, QLineEdit, QTableView, QVBoxLayout, QWidget



class HeaderedTableModel(QAbstractTableModel):
    """A table model whose columns are the class attribute ``HEADERS`` (a tuple of titles),
    with ``TIPS`` (one per column) as the headers' tooltips when a subclass sets it.

    Subclasses provide ``rowCount`` and ``data``.
    """

    HEADERS: tuple[str, ...] = ()
    TIPS: tuple[str, ...] | None = None

    def columnCount(self, parent=QModelIndex()) -> int:  # noqa: N802 (Qt override)
        return 0 if parent.isValid() else len(self.HEADERS)

    def headerData(self, section, orientation, role=Qt.DisplayRole):  # noqa: N802 (Qt override)
        if orientation != _HORIZONTAL:
            return None
        role = int(role)
        if role == _DISPLAY:
            return self.HEADERS[section]
        if role == _TOOLTIP and self.TIPS is not None:
            return self.TIPS[section]
        return None


class RowsTableModel(HeaderedTableModel):
    """A ``HeaderedTableModel`` over a list of row objects (``rows``), replaced whole by
    ``set_rows`` (a model reset). Subclasses provide ``data``."""

    def __init__(self, parent=None) -> None:
        super().__init__(parent)
        self.rows: list = []

    def set_rows(self, rows: Iterable) -> None:
        """Show ``rows`` instead of the current ones."""
        self.beginResetModel()
        self.rows = list(rows)
        self.endResetModel()

    def rowCount(self, parent=QModelIndex()) -> int:  # noqa: N802 (Qt override)
        return 0 if parent.isValid() else len(self.rows)


#: More separate runs of changed rows than this, and ``signal_rows`` signals one span.
MAX_RUNS = 8


def signal_rows(model: QAbstractTableModel, rows) -> None:
    """``dataChanged`` over the ascending ``rows`` of ``model``, every column: one signal
    per run of consecutive rows, or one over the whole span when the runs are many (a
    far jump changes rows all over a table, and each signal makes every view refit)."""
    runs: list[list[int]] = []
    for row in rows:
        if runs and runs[-1][1] == row - 1:
            runs[-1][1] = row
        else:
            runs.append([row, row])
    if len(runs) > MAX_RUNS:
        runs = [[runs[0][0], runs[-1][1]]]
    last = model.columnCount() - 1
    for first, end in runs:
        model.dataChanged.emit(model.index(first, 0), model.index(end, last))


def signal_all(model: QAbstractTableModel) -> None:
    """One ``dataChanged`` over every cell of ``model`` (none when it has no rows)."""
    rows, columns = model.rowCount(), model.columnCount()
    if rows and columns:
        model.dataChanged.emit(model.index(0, 0), model.index(rows - 1, columns - 1))


def set_section_sizes(view: QTableView, widths: dict[int, int] | None = None, heights: dict[int, int] | None = None) -> bool:
    """Give columns of ``view`` these ``widths`` and rows these ``heights`` (pixels) and
    repaint it in the current pass of the event loop; True when a size changed.

    ``QTableView`` repaints resized sections from a zero-interval timer, that is in the
    next pass: after a refit in a step or a load, a table that had just been painted
    would be painted again (after a load, every table of the window, in one pass).
    Here a header resizes
    with its signals blocked, so that timer never starts, and the view lays itself out
    and marks its viewport at once; the pass's paint then draws the final sizes once.
    Only the header whose sections change is blocked, and its ``sectionResized`` is
    not emitted: the callers (``ShareColumns`` for widths, the monologue view for
    heights) have no other listener on it.
    """
    changed = False
    for header, sizes, size_of in ((view.horizontalHeader(), widths, view.columnWidth),
                                   (view.verticalHeader(), heights, view.rowHeight)):
        sizes = {k: v for k, v in (sizes or {}).items() if size_of(k) != v}
        if not sizes:
            continue
        changed = True
        was = header.blockSignals(True)
        try:
            for section, size in sizes.items():
                header.resizeSection(section, size)
        finally:
            header.blockSignals(was)
    if not changed:
        return False
    view.updateGeometries()
    view.viewport().update()
    return True


class _RepaintColumnsAtOnce(QObject):
    """Child of a table's horizontal header that repaints the table when a column's
    width changes, in the same pass; see ``repaint_columns_at_once``."""

    def __init__(self, header: QHeaderView) -> None:
        super().__init__(header)
        header.sectionResized.connect(self._resized)

    def _resized(self, _column: int, _old: int, _new: int) -> None:
        view = self.parent().parent()
        view.updateGeometries()
        view.viewport().update()


def repaint_columns_at_once(view: QTableView) -> None:
    """Make ``view`` repaint a resized column in the pass that resized it.

    ``QTableView.columnResized`` repaints from a zero-interval timer, in the next pass,
    and repaints the whole viewport when there is no horizontal scrolling. A stretched
    last column resizes whenever the vertical scroll bar comes or goes, which happens
    in the layout just before a paint: after a load, the fact table would be painted
    a second time in the next pass, the pass that paints the docks.
    Here that connection is replaced by one that lays the view out and marks its
    viewport at once, so the coming paint draws the final widths. The header's
    ``sectionResized`` has no other receiver when this is called (a new view)."""
    header = view.horizontalHeader()
    header.sectionResized.disconnect()
    _RepaintColumnsAtOnce(header)


def hot_table(view: QTableView) -> QTableView:
    """Set up a new table that repaints as a tick steps: resized columns repaint in the
    pass that resized them (``repaint_columns_at_once``) and cells draw their text from
    laid-out text kept between paints (``StaticTextDelegate``: a full repaint in about 60 %
    of the time, the same pixels).
    Column delegates set later should derive from ``StaticTextDelegate``. Returns ``view``."""
    repaint_columns_at_once(view)
    view.setItemDelegate(StaticTextDelegate(view))
    return view


def read_only_table(model, name: str, parent: QWidget | None = None) -> QTableView:
    """A QTableView over ``model`` that selects whole rows and never edits."""
    view = hot_table(QTableView(parent))
    view.setObjectName(name)
    view.setModel(model)
    view.setSelectionBehavior(QAbstractItemView.SelectRows)
    view.setEditTriggers(QAbstractItemView.NoEditTriggers)
    return view


def fit_columns(view: QTableView, samples: dict[int, str], stretch: int | None = None) -> int:
    """Size columns so that neither their header nor a typical value is cut off.

    Each column in ``samples`` gets the larger of its header's size hint (title and
    sort indicator) and the width of its sample text; ``stretch`` takes what is left.

    Args:
        view: the table.
        samples: column -> the widest value the column usually shows.
        stretch: the column that stretches to fill the view, if any.

    Returns:
        The width in pixels that shows every column whole (frame and scroll bar included).
    """
    header = view.horizontalHeader()
    metrics = view.fontMetrics()
    total = 0
    for col in range(header.count()):
        width = max(header.sectionSizeHint(col), metrics.horizontalAdvance(samples.get(col, "")) + 16)
        if col == stretch:
            header.setSectionResizeMode(col, QHeaderView.Stretch)
        else:
            header.setSectionResizeMode(col, QHeaderView.Interactive)
            view.setColumnWidth(col, width)
        total += width
    return total + 2 * view.frameWidth() + view.verticalScrollBar().sizeHint().width()


def show_column(view: QTableView, col: int, shown: bool, samples: Iterable[str] = ()) -> None:
    """Shows or hides a column that comes and goes (the B column while comparing).

    Shown, the column is at least as wide as its header and as the widest of
    ``samples`` in the view's font, bold too (a changed row is bold), with the padding
    ``fit_columns`` gives: the last column of a table whose other columns fill the
    viewport would get what is left, and the B column would show one letter.
    A width the user dragged wider is kept.

    Args:
        view: the table.
        col: the column (a logical index).
        shown: show it (True) or hide it.
        samples: every text the column may show (or the widest ones).
    """
    was_hidden = view.isColumnHidden(col)
    if was_hidden == shown:
        view.setColumnHidden(col, not shown)
    if not shown or not was_hidden:
        return
    bold = QFont(view.font())
    bold.setBold(True)
    width = column_width(view, col, samples, (view.font(), bold))
    if view.columnWidth(col) < width:
        view.setColumnWidth(col, width)


def column_width(view: QTableView, col: int, samples: Iterable[str], fonts: Iterable[QFont] = ()) -> int:
    """The width (pixels) that shows column ``col``'s header and each of ``samples``
    whole, in each of ``fonts`` (default: the view's), with ``fit_columns``'s padding."""
    fonts = tuple(fonts) or (view.font(),)
    widest = max((QFontMetrics(font).horizontalAdvance(text) for text in samples for font in fonts), default=0)
    return max(view.horizontalHeader().sectionSizeHint(col), widest + 16)


def widest_digits(text: str, font: QFont) -> str:
    """``text`` with every digit the widest digit of ``font``: a number's text that is at
    least as wide as any number with as many digits (and the same separators), in a font
    whose digits are not all as wide. Sizes a column for the largest value it holds."""
    metrics = QFontMetrics(font)
    digit = max("0123456789", key=metrics.horizontalAdvance)
    return "".join(digit if ch.isdigit() else ch for ch in text)


class ElideDelegate(StaticTextDelegate):
    """Draws a column's text on one line, elided at ``mode`` (``Qt.ElideLeft`` keeps an id's distinct end).

    The model's tooltip for the column should carry the whole text.
    """

    def __init__(self, mode: Qt.TextElideMode, parent: QWidget | None = None) -> None:
        super().__init__(parent, elide=mode, wrap=False)  # a wrapped line would be elided at its right


def rows_in_view(view: QTableView, first: int, last: int) -> bool:
    """Whether rows ``first..last`` of ``view``'s model are among those a shown table
    measures its columns from (precision 0): from the row at the top of the viewport to
    the one at its height, or to the last row when the rows do not fill it, the rows
    ``QTableView.sizeHintForColumn`` takes. True whenever that cannot be told (hidden
    table, moved rows)."""
    header = view.verticalHeader()
    if not view.isVisible() or header.sectionsMoved():
        return True
    top = max(0, header.visualIndexAt(0))
    bottom = header.visualIndexAt(view.viewport().height())
    if bottom == -1:
        bottom = view.model().rowCount() - 1
    return first <= bottom and last >= top


class RowsInViewWatch:
    """Notes whether ``view``'s model changes a row in view while it watches: a context
    manager whose ``touched`` is True once the model signals a change of a row in view
    (``rows_in_view``), rows inserted or removed at or above the last row in view (the
    rows below them move), a reset or a new layout, or once the view has another model.

    A table that refits its columns after a tick step (the Knowledge table's, whose model
    moves in place and signals only what differs) measures its rows in view again only
    when ``touched``: each measure asks the delegate for every cell in view (~5 ms a step).
    """

    def __init__(self, view: QTableView) -> None:
        self._view = view
        self.touched = False

    def __enter__(self) -> RowsInViewWatch:
        self.touched = False
        self._model = model = self._view.model()
        # Removed rows are told before they go: the last row in view is still theirs then.
        self._links = [(model.dataChanged, self._changed), (model.rowsInserted, self._moved),
                       (model.rowsAboutToBeRemoved, self._moved), (model.modelReset, self._all), (model.layoutChanged, self._all)]
        for signal, slot in self._links:
            signal.connect(slot)
        return self

    def __exit__(self, *_exc) -> None:
        for signal, slot in self._links:
            signal.disconnect(slot)
        self._links = []
        if self._view.model() is not self._model:
            self.touched = True

    def _changed(self, top_left, bottom_right, *_roles) -> None:
        if not self.touched:
            self.touched = rows_in_view(self._view, top_left.row(), bottom_right.row())

    def _moved(self, _parent, first: int, _last: int) -> None:
        # Rows came or went at ``first``: every row from there down now shows another
        # (above the top of the view too: the view keeps its scroll position, in rows).
        if not self.touched:
            self.touched = rows_in_view(self._view, first, 1 << 62)

    def _all(self, *_args) -> None:
        self.touched = True


class ShareColumns(QObject):
    """Keeps a table's columns inside its viewport: the ``elastic`` ones share the width
    the others leave, eliding their text rather than pushing a column past the right edge.

    Every other column is as wide as its header and its widest value. Each elastic
    column gets its whole width when there is room (``stretch`` then takes the rest);
    when there is not, each keeps at least its header's width and the rest is shared
    fairly: a column that needs less than an equal part is shown whole, the others
    split what remains. The model's tooltips should carry the whole
    text of the elastic columns. Refits when the viewport resizes or the model changes.

    Args:
        view: the table (its parent owns this object).
        elastic: the columns that may be elided.
        stretch: the column that takes the width left over (default: the last elastic).
        arrow_once: a header's width leaves room for the sort arrow only where it is
            drawn (the sorted column). Qt's size hint keeps that room in every header of
            a sortable table (~25 px each): seven headers then needed more than a
            1040 px window gives the Knowledge table.
        keep: columns whose width is left as it was set (``show_column``: B, as wide as
            every text it may show), counted as they are.
        follow_model: refit on the model's own signals. False for a model whose rows
            are read only once it is whole again (the Knowledge table's, between the
            steps of a tick: its rows named facts the state did not hold yet); its view
            calls ``remeasure`` then.
    """

    def __init__(self, view: QTableView, elastic: tuple[int, ...], stretch: int | None = None, *,
                 arrow_once: bool = False, keep: tuple[int, ...] = (), follow_model: bool = True) -> None:
        super().__init__(view)
        self._view = view
        self._elastic = tuple(elastic)
        self._stretch = self._elastic[-1] if stretch is None else stretch
        self._arrow_once = arrow_once
        self._keep = tuple(keep)
        header = view.horizontalHeader()
        header.setStretchLastSection(False)
        header.setSectionResizeMode(QHeaderView.Interactive)
        # sizeHintForColumn measures the rows in view only (Qt's default is up to 1 000
        # rows): a refit runs on every dataChanged, i.e. on every tick step, and the NPC
        # table of a large save would measure all of its rows at every step.
        header.setResizeContentsPrecision(0)
        view.setTextElideMode(Qt.ElideRight)
        view.viewport().installEventFilter(self)
        # Measured widths by column (values in view, and headers), kept until what they
        # measured changes: a dataChanged re-measures only the columns it names.
        self._values: dict[int, int] = {}
        self._headers: dict[int, int] = {}
        model = view.model()
        if follow_model:
            for signal in (model.modelReset, model.layoutChanged, model.rowsInserted, model.rowsRemoved):
                signal.connect(self.remeasure)
            model.dataChanged.connect(self._on_data_changed)
            model.headerDataChanged.connect(self.remeasure)
        if arrow_once:
            header.sortIndicatorChanged.connect(self.remeasure)  # the arrow moved to another header
        # Scrolling brings other rows into view: the next refit measures them.
        view.verticalScrollBar().valueChanged.connect(self._forget_values)
        self.refit()

    def set_elastic(self, elastic: tuple[int, ...]) -> None:
        """Change which columns may be elided (a narrow view lets one more give way), and refit."""
        self._elastic = tuple(elastic)
        self.refit()

    def eventFilter(self, watched, event) -> bool:  # noqa: N802 (Qt override)
        kind = event.type()
        if kind == QEvent.Resize and event.size().height() == event.oldSize().height():
            # Narrower or wider only (a scroll bar came or went, often in this refit's own
            # layout): the same rows are in view, so their measured widths hold. Measuring
            # them again would be half of a large NPC table's set-up at an open.
            self.refit()
        elif kind in (QEvent.Resize, QEvent.Show):
            self.remeasure()  # other rows may be in view
        return False

    def remeasure(self, *_args) -> None:
        """Forget every measured width and refit (after laying out rows the model inserted,
        removed or reset: Qt does it from a zero timer, and painted the table twice)."""
        self._values.clear()
        self._headers.clear()
        if self._view.isVisible():
            self._view.executeDelayedItemsLayout()
        self.refit()

    def _forget_values(self, *_args) -> None:
        self._values.clear()

    def forget(self) -> None:
        """Forget the measured widths (the next refit measures the rows in view again)
        without refitting now."""
        self._values.clear()
        self._headers.clear()

    def _on_data_changed(self, top_left, bottom_right, *_roles) -> None:
        if not self._measured_rows(top_left.row(), bottom_right.row()):
            return  # the widths were measured from the rows in view, and those did not change
        for col in range(top_left.column(), bottom_right.column() + 1):
            self._values.pop(col, None)
        self.refit()

    def _measured_rows(self, first: int, last: int) -> bool:
        """Whether model rows ``first..last`` hold a value ``_wanted`` measured
        (``rows_in_view``): a step that changes rows scrolled out of a 3 000-NPC table
        re-measures nothing."""
        return rows_in_view(self._view, first, last)

    def minimum_width(self) -> int:
        """The narrowest table (frame and vertical scroll bar included) that shows every
        header whole: the elastic columns at their floor, the others whole."""
        view = self._view
        header = view.horizontalHeader()
        total = 0
        for col in range(header.count()):
            if not view.isColumnHidden(col):
                total += self._header(col) if col in self._elastic else self._wanted(col)
        return total + 2 * view.frameWidth() + view.verticalScrollBar().sizeHint().width()

    def _header(self, col: int) -> int:
        width = self._headers.get(col)
        if width is None:
            header = self._view.horizontalHeader()
            arrowless = self._arrow_once and header.isSortIndicatorShown() and col != header.sortIndicatorSection()
            if arrowless:  # Qt's hint without the arrow's room, whatever the style makes of it
                header.setSortIndicatorShown(False)
            width = self._headers[col] = header.sectionSizeHint(col)
            if arrowless:
                header.setSortIndicatorShown(True)
        return width

    def wanted(self, col: int) -> int:
        """The width (pixels) that shows column ``col``'s header and its values in view
        whole (a ``keep`` column: its width)."""
        return self._view.columnWidth(col) if col in self._keep else self._wanted(col)

    def _wanted(self, col: int) -> int:
        width = self._values.get(col)
        if width is None:
            width = self._values[col] = self._view.sizeHintForColumn(col)
        return max(self._header(col), width)

    def refit(self, *_args) -> None:
        """Size the columns for the viewport's current width (when shown: a hidden table
        measures every row, a shown one only the rows in view)."""
        view = self._view
        if not view.isVisible():
            return  # refits when shown
        header = view.horizontalHeader()
        columns = [c for c in range(header.count()) if not view.isColumnHidden(c)]
        fixed = [c for c in columns if c not in self._elastic]
        elastic = [c for c in columns if c in self._elastic]
        fixed_widths = {col: self.wanted(col) for col in fixed}
        room = view.viewport().width() - sum(fixed_widths.values())
        want = {c: self._wanted(c) for c in elastic}
        floor = {c: min(want[c], self._header(c)) for c in elastic}
        if sum(want.values()) <= room:
            widths = dict(want)
            if self._stretch in widths:
                widths[self._stretch] += room - sum(want.values())
        else:  # share fairly: a short value whole, the long ones the rest in equal parts
            widths = dict(floor)
            spare = max(0, room - sum(floor.values()))
            pending = sorted(elastic, key=lambda c: want[c] - floor[c])
            while pending and spare > 0:
                share = spare // len(pending)
                need = want[pending[0]] - widths[pending[0]]
                if need > share:
                    for col in pending:
                        widths[col] += share
                    break
                widths[pending.pop(0)] += need
                spare -= need
        set_section_sizes(view, {col: width for col, width in {**fixed_widths, **widths}.items() if col not in self._keep})


def filtered_table(panel: QWidget, model, name: str, widths: dict[int, int], placeholder: str):
    """A dock's read-only table of ``model`` under a plain-text heading and a search field
    that filters every column, case-insensitively, laid out in ``panel``.

    ``name`` prefixes the object names (``<name>Table``, ``<name>Heading``, ``<name>Search``);
    ``widths``: column -> starting width in pixels; the column after the last of them is
    resizable and the last column stretches. Returns ``(proxy, view, heading, search)``.
    """
    proxy = QSortFilterProxyModel(panel)
    proxy.setSourceModel(model)
    proxy.setFilterKeyColumn(-1)
    proxy.setFilterCaseSensitivity(Qt.CaseInsensitive)
    view = read_only_table(proxy, f"{name}Table", panel)
    view.setWordWrap(False)
    view.verticalHeader().hide()
    view.verticalHeader().setDefaultSectionSize(panel.fontMetrics().height() + 6)
    header = view.horizontalHeader()
    header.setStretchLastSection(True)
    for col, width in widths.items():
        view.setColumnWidth(col, width)
    header.setSectionResizeMode(max(widths) + 1, QHeaderView.Interactive)
    heading = QLabel(panel)
    heading.setObjectName(f"{name}Heading")
    heading.setTextFormat(Qt.PlainText)
    heading.setWordWrap(True)
    search = QLineEdit(panel)
    search.setObjectName(f"{name}Search")
    search.setPlaceholderText(placeholder)
    search.setClearButtonEnabled(True)
    search.textChanged.connect(proxy.setFilterFixedString)
    layout = QVBoxLayout(panel)
    layout.setContentsMargins(2, 2, 2, 2)
    layout.addWidget(heading)
    layout.addWidget(search)
    layout.addWidget(view)
    return proxy, view, heading, search

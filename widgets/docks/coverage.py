"""The Coverage dock (issue 39): what of the content fired across a corpus of playtests.

It shows ``models.corpus.coverage``'s document: one row per monologue line (fired,
in how many saves, and for a line that never fired its nearest miss: save, tick,
distance and failing clauses), never-fired lines first. A save of the corpus no longer
at its path (``missing_saves``) is said so in the heading (``missing_note``) and marked
where it is a nearest miss (``NO_LONGER_THERE``), as ``narrative-debugger coverage`` does.
A double-click (or Enter) on a line with a nearest miss emits ``missRequested(save,
tick, line_id)``; the window opens that save at that tick with the Explain dock on the
line. Hidden until File › Open corpus….
"""

from __future__ import annotations

from pathlib import PurePath

from narrative_debugger.models.corpus.coverage import MISSING_NAMED, NO_LONGER_THERE, failing_clauses, line_tally, missing_note
from narrative_debugger.models.report.plain_text import one_line, some_named
from narrative_debugger.widgets.kit.plain_text import plain_tip
from narrative_debugger.widgets.kit.roles import DISPLAY as _DISPLAY, FONT as _FONT, TOOLTIP as _TOOLTIP, USER as _USER
from narrative_debugger.widgets.kit.tables import ElideDelegate, RowsTableModel, ShareColumns, filtered_table
from PySide6.QtCore import QModelIndex, Qt, Signal
from PySide6.QtGui import QFont
from PySide6.QtWidgets import QWidget

#: The font of a nearest miss whose save is no longer at its path.
_ITALIC = QFont()
_ITALIC.setItalic(True)


class CoverageRow:
    """One line of the table: its id, counts and nearest miss (or None); ``gone``: the
    nearest miss's save is no longer at its path (one of ``missing_saves``)."""

    __slots__ = ("line_id", "fired", "saves", "miss", "gone")

    def __init__(self, line_id: str, fired: int, saves: int, miss: dict | None, gone: bool = False) -> None:
        self.line_id, self.fired, self.saves, self.miss, self.gone = line_id, fired, saves, miss, gone


def coverage_rows(doc: dict) -> list[CoverageRow]:
    """The lines of a coverage document, never-fired first, then by id."""
    gone = set(doc.get("missing_saves", ()))
    rows = [CoverageRow(k, e["fired"], e["saves"], e["nearest_miss"], e["nearest_miss"] is not None and e["nearest_miss"]["save"] in gone)
            for k, e in doc.get("lines", {}).items()]
    rows.sort(key=lambda r: (r.fired > 0, r.line_id))
    return rows


class CoverageModel(RowsTableModel):
    """Rows: line, fired, saves, nearest-miss save, tick, distance, failing clauses."""

    HEADERS = ("Line", "Fired", "Saves", "Nearest miss", "Tick", "Distance", "Failing")
    TIPS = ("The monologue line's id", "How many times it fired, across the saves", "In how many saves it fired",
            "A line that never fired: the save where it came nearest (fewest failing clauses, then the least distance). Double-click to open it there.",
            "The tick of the nearest miss",
            "How far the failing clauses were from holding at the nearest miss, summed in each clause's own units: the confidence "
            "steps a fact lacks, the interactions short of a min_count (0: every prerequisite held)",
            "The prerequisites that failed at the nearest miss")
    LINE, FIRED, SAVES, MISS, TICK, DISTANCE, FAILING = range(7)
    ROW_ROLE = _USER + 1

    def data(self, index: QModelIndex, role=Qt.DisplayRole):
        if not index.isValid():
            return None
        r = self.rows[index.row()]
        role = int(role)
        col = index.column()
        if role == _DISPLAY:
            if col == self.LINE:
                return one_line(r.line_id)
            if col == self.FIRED:
                return f"{r.fired:,}"
            if col == self.SAVES:
                return f"{r.saves:,}"
            if r.miss is None:
                return "" if r.fired or col != self.MISS else "—"
            if col == self.MISS:  # the file's name; the tooltip has the whole path
                name = one_line(PurePath(r.miss["save"]).name)
                return f"{name} ({NO_LONGER_THERE})" if r.gone else name
            if col == self.TICK:
                return f"{r.miss['tick']:,}"
            if col == self.DISTANCE:
                return f"{r.miss['distance']:,}"
            return one_line(failing_clauses(r.miss))
        if role == _TOOLTIP and r.miss is not None and col >= self.MISS:
            where = f"{r.miss['save']} ({NO_LONGER_THERE}: it cannot be opened)" if r.gone else r.miss["save"]
            return plain_tip(f"{where} at tick {r.miss['tick']}, distance {r.miss['distance']:,}\n" + "\n".join(r.miss["failing"])
                             + ("" if r.gone else "\n\nDouble-click to open it there."))
        if role == _FONT and r.gone and col == self.MISS:
            return _ITALIC
        if role == self.ROW_ROLE:
            return r
        return None


class CoverageView(QWidget):
    """The coverage table with a filter and a heading (corpus, lines fired).

    Signals:
        missRequested(str, object, str): save path, tick (u64), line id of a nearest
            miss the user activated.
    """

    missRequested = Signal(str, object, str)

    def __init__(self, session=None, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.setObjectName("coverageView")
        self.model = CoverageModel(self)
        self.proxy, self.view, self.heading, self.search = filtered_table(
            self, self.model, "coverage", {0: 200, 1: 60, 2: 60, 3: 220, 4: 80, 5: 70}, "Filter lines (e.g. harbor-nights, kael-davan)")
        # Every column in view in a dock half of a 1040-pixel window (the Tick and Failing
        # columns were past the right edge): the line, counts and tick whole; the save's
        # name (its middle) and the failing clauses give way, whole in their tooltips.
        self.view.setItemDelegateForColumn(CoverageModel.MISS, ElideDelegate(Qt.ElideMiddle, self.view))
        self.columns = ShareColumns(self.view, (CoverageModel.MISS, CoverageModel.FAILING), stretch=CoverageModel.FAILING)
        self.view.activated.connect(lambda index: self.activate_row(index.row()))
        self.set_coverage(None)

    def set_coverage(self, doc: dict | None, corpus: str = "", content_ids=()) -> None:
        """Show a coverage document (None: no corpus open); ``content_ids``: the line ids its
        content folders define (``coverage.line_files``), which the heading counts: a line
        fired that no folder defines (M002) is named apart, and the saves no longer at their
        path (``missing_saves``) in ``missing_note``'s words, by file name (the whole paths
        in the heading's tooltip)."""
        if doc is None:
            self.model.set_rows([])
            self.heading.setText("No corpus open. File › Open corpus… shows one made by 'narrative-debugger corpus'.")
            self.heading.setToolTip("")
            return
        rows = coverage_rows(doc)
        self.model.set_rows(rows)
        tally = line_tally(doc, content_ids)
        unknown = f" Fired but in no content folder (M002): {', '.join(tally.not_in_content)}." if tally.not_in_content else ""
        # The corpus by its folder's name (the whole path in the tooltip): a long path took a
        # line of its own, one row fewer in a dock a few rows high at 1040x700.
        name = PurePath(corpus).name or corpus
        gone = doc.get("missing_saves") or []
        missing = f" {missing_note(gone, some_named([PurePath(p).name for p in gone], MISSING_NAMED))}." if gone else ""
        self.heading.setText(one_line(f"{name}: {doc['saves']:,} save(s); {tally.fired} of {tally.total} lines fired, {tally.never} never.{unknown}{missing} "
                                      "Double-click a never-fired line to open its nearest miss."))
        self.heading.setToolTip(plain_tip(f"Corpus: {corpus}" + (f"\n\n{missing_note(gone)}" if gone else "")))

    def rows_in_view(self) -> float:
        """How many rows the table's viewport has room for now (fractional)."""
        return self.view.viewport().height() / max(1, self.view.verticalHeader().defaultSectionSize())

    def height_short_of(self, rows: int) -> int:
        """The pixels the table lacks to show ``rows`` rows (fewer when it has fewer), 0 when it has room."""
        rows = min(rows, self.proxy.rowCount())
        return max(0, rows * self.view.verticalHeader().defaultSectionSize() - self.view.viewport().height())

    def activate_row(self, row: int) -> CoverageRow | None:
        """Ask for the nearest miss shown at ``row`` (as a double-click would); returns its row."""
        r = self.proxy.index(row, 0).data(CoverageModel.ROW_ROLE)
        if r is None or r.miss is None:
            return None
        self.missRequested.emit(r.miss["save"], r.miss["tick"], r.line_id)
        return r

"""The findings panel: every problem the checks found, sortable and filterable.

Activating a finding (double-click, Enter, or Go › Next finding) moves the session to
its culprit: the tick, the NPC, the view and the docks that show it, each selecting
it. Where it lands is the pure function ``widgets.landing.landing`` of the finding's
structured target, tested without a window.
"""

from __future__ import annotations

from narrative_debugger.models.rules.catalogue import RULES
from narrative_debugger.models.rules.findings import Finding, Severity
from narrative_debugger.widgets.landing import Landing, landing
from narrative_debugger.widgets.session import Session
from narrative_debugger.widgets.kit.tables import ElideDelegate, HeaderedTableModel, hot_table
from narrative_debugger.widgets.kit.plain_text import plain_tip
from narrative_debugger.widgets.kit.roles import ALIGN as _ALIGN, DECORATION as _DECORATION, DISPLAY as _DISPLAY
from narrative_debugger.widgets.kit.roles import FOREGROUND as _FOREGROUND, RIGHT as _RIGHT, TOOLTIP as _TOOLTIP, USER as _USER
from PySide6.QtCore import QModelIndex, QPointF, QSortFilterProxyModel, Qt
from PySide6.QtGui import QAction, QBrush, QColor, QIcon, QKeySequence, QPainter, QPixmap, QPolygonF
from PySide6.QtWidgets import (
    QAbstractItemView,
    QHBoxLayout,
    QHeaderView,
    QLabel,
    QLineEdit,
    QTableView,
    QToolButton,
    QVBoxLayout,
    QWidget,
)

def activate_finding(session: Session, finding: Finding) -> Landing:
    """Move the session to a finding's culprit (``landing``): NPC, fact, tick, view, the
    docks that show it (front first), then the culprit itself, which those views select.

    The Findings dock is never switched away: the docks raised are in other dock areas or
    tabbed with each other, never with it (widgets.registry.DOCKS).
    """
    land = landing(session.playthrough, finding)
    if land.npc is not None:
        session.set_npc(land.npc)
    if land.fact is not None:
        session.set_fact(land.fact)
    if land.tick is not None:
        session.set_tick(land.tick)
    if land.view is not None:
        session.set_view(land.view)
    for dock in reversed(land.docks):
        session.request_dock(dock)
    session.set_culprit(finding)
    return land


_ERROR_INK = QBrush(QColor("#c62828"))
_WARNING_INK = QBrush(QColor("#a86b00"))
#: The roles FindingsModel sets (its sort and finding roles last); Qt asks a dozen a
#: cell at every repaint.
_ROLES = frozenset({_DISPLAY, _DECORATION, _FOREGROUND, _TOOLTIP, _ALIGN, _USER + 1, _USER + 2})


def severity_icon(severity: Severity, size: int = 14) -> QIcon:
    """A red disc for errors, an amber triangle for warnings, each with a white mark."""
    pixmap = QPixmap(size, size)
    pixmap.fill(Qt.transparent)
    p = QPainter(pixmap)
    p.setRenderHint(QPainter.Antialiasing)
    p.setPen(Qt.NoPen)
    if severity is Severity.ERROR:
        p.setBrush(QColor("#c62828"))
        p.drawEllipse(1, 1, size - 2, size - 2)
    else:
        p.setBrush(QColor("#e0a030"))
        p.drawPolygon(QPolygonF([QPointF(size / 2, 1), QPointF(size - 1, size - 1), QPointF(1, size - 1)]))
    p.setPen(QColor("white"))
    font = p.font()
    font.setBold(True)
    font.setPixelSize(int(size * 0.7))
    p.setFont(font)
    p.drawText(pixmap.rect().adjusted(0, 2 if severity is Severity.WARNING else 0, 0, 0), Qt.AlignCenter, "!")
    p.end()
    return QIcon(pixmap)


class FindingsModel(HeaderedTableModel):
    """The findings of a playthrough as a table: severity, code, tick, location, message."""

    #: The roles ``data`` answers (``StaticTextDelegate`` asks no others).
    CELL_ROLES = _ROLES

    SEVERITY, CODE, TICK, LOCATION, MESSAGE = range(5)
    HEADERS = ("Severity", "Code", "Tick", "Location", "Message")
    #: Role carrying a sort key; role carrying the Finding itself.
    SORT_ROLE = _USER + 1
    FINDING_ROLE = _USER + 2

    def __init__(self, parent=None) -> None:
        super().__init__(parent)
        self.findings: list[Finding] = []
        self._icons = {s: severity_icon(s) for s in Severity}

    def set_findings(self, findings: list[Finding]) -> None:
        """Show another list of findings."""
        self.beginResetModel()
        self.findings = list(findings)
        self.endResetModel()

    def rowCount(self, parent=QModelIndex()) -> int:
        return 0 if parent.isValid() else len(self.findings)

    def data(self, index: QModelIndex, role=Qt.DisplayRole):
        role = int(role)  # plain ints: comparing Qt enums costs µs a call, a dozen calls a cell
        if role not in _ROLES or not index.isValid():
            return None
        f = self.findings[index.row()]
        col = index.column()
        if role == self.FINDING_ROLE:
            return f
        if role == _DISPLAY:
            if col == self.SEVERITY:
                return f.severity.value
            if col == self.CODE:
                return f.code
            if col == self.TICK:
                return f"{f.tick:,}" if f.tick is not None else ""
            if col == self.LOCATION:
                return f.location
            return f.message
        if role == self.SORT_ROLE:
            if col == self.SEVERITY:
                return ("0" if f.severity is Severity.ERROR else "1") + f.code  # errors first
            if col == self.TICK:  # u64 ticks do not fit a QVariant int: sort zero-padded text
                return f"{f.tick:020d}" if f.tick is not None else ""
            return self.data(index, _DISPLAY)
        if role == _DECORATION:
            return self._icons[f.severity] if col == self.SEVERITY else None
        if role == _FOREGROUND:
            return (_ERROR_INK if f.severity is Severity.ERROR else _WARNING_INK) if col in (self.SEVERITY, self.CODE) else None
        if role == _TOOLTIP:
            title = RULES[f.code].title if f.code in RULES else ""
            when = f" at tick {f.tick:,}" if f.tick is not None else ""
            return plain_tip(f"{f.code} ({f.severity.value}): {title}\n{f.location}{when}\n\n{f.message}")
        if role == _ALIGN and col == self.TICK:
            return _RIGHT
        return None


class FindingsFilter(QSortFilterProxyModel):
    """Keeps findings of the shown severities whose code, location or message contain the text.

    Text is matched case-insensitively; several words must all match (``T004 kael``).
    """

    def __init__(self, parent=None) -> None:
        super().__init__(parent)
        self.severities = set(Severity)
        self.words: list[str] = []
        self.setSortRole(FindingsModel.SORT_ROLE)

    def set_text(self, text: str) -> None:
        """Filter by words (all must appear in the code, location or message)."""
        self._change(lambda: setattr(self, "words", text.lower().split()))

    def set_severity(self, severity: Severity, shown: bool) -> None:
        """Show or hide one severity."""
        self._change(lambda: (self.severities.add if shown else self.severities.discard)(severity))

    def _change(self, apply) -> None:
        if hasattr(self, "beginFilterChange"):  # Qt >= 6.9
            self.beginFilterChange()
            apply()
            self.endFilterChange(QSortFilterProxyModel.Direction.Rows)
        else:
            apply()
            self.invalidateRowsFilter()

    def filterAcceptsRow(self, row: int, parent: QModelIndex) -> bool:
        f = self.sourceModel().findings[row]
        if f.severity not in self.severities:
            return False
        if not self.words:
            return True
        hay = f"{f.code} {f.location} {f.message}".lower()
        return all(w in hay for w in self.words)


class FindingsView(QWidget):
    """The findings table with a text filter, severity toggles and counts.

    Activating a row (double-click or Enter) calls ``activate_finding``.

    Attributes:
        model, proxy, view: the table's model, filter proxy and view.
        search: the filter box; errors, warnings: the severity toggles; counts: the header label.
    """

    def __init__(self, session: Session, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.setObjectName("findingsView")
        self.session = session
        self.model = FindingsModel(self)
        self.proxy = FindingsFilter(self)
        self.proxy.setSourceModel(self.model)
        self.view = QTableView(self)
        hot_table(self.view)
        self.view.setObjectName("findingsTable")
        self.view.setModel(self.proxy)
        self.view.setSortingEnabled(True)
        self.view.sortByColumn(-1, Qt.AscendingOrder)
        self.view.setSelectionBehavior(QAbstractItemView.SelectRows)
        self.view.setSelectionMode(QAbstractItemView.SingleSelection)
        self.view.setEditTriggers(QAbstractItemView.NoEditTriggers)
        self.view.setWordWrap(False)
        self.view.setAlternatingRowColors(True)
        self.view.verticalHeader().hide()
        self.view.verticalHeader().setDefaultSectionSize(self.fontMetrics().height() + 6)
        hh = self.view.horizontalHeader()
        hh.setStretchLastSection(True)
        for col, width in ((0, 82), (1, 54), (2, 80), (3, 280)):
            self.view.setColumnWidth(col, width)
        hh.setSectionResizeMode(FindingsModel.LOCATION, QHeaderView.Interactive)
        self.view.setItemDelegateForColumn(FindingsModel.LOCATION, ElideDelegate(Qt.ElideMiddle, self.view))  # keeps a JSON path's start and field name

        self.counts = QLabel(self)
        self.counts.setObjectName("findingsCounts")
        self.search = QLineEdit(self)
        self.search.setObjectName("findingsSearch")
        self.search.setPlaceholderText("Filter by code, location or message (e.g. T004 kael-davan)")
        self.search.setClearButtonEnabled(True)
        self.errors = self._toggle("Errors", Severity.ERROR)
        self.warnings = self._toggle("Warnings", Severity.WARNING)
        bar = QHBoxLayout()
        bar.addWidget(self.search, 1)
        bar.addWidget(self.errors)
        bar.addWidget(self.warnings)
        layout = QVBoxLayout(self)
        layout.setContentsMargins(2, 2, 2, 2)
        layout.addWidget(self.counts)
        layout.addLayout(bar)
        layout.addWidget(self.view)

        self.search.textChanged.connect(self._on_text)
        self.view.activated.connect(self._on_activated)
        self.proxy.rowsInserted.connect(self._update_counts)
        self.proxy.rowsRemoved.connect(self._update_counts)
        self.proxy.modelReset.connect(self._update_counts)
        self.proxy.layoutChanged.connect(self._update_counts)
        session.loaded.connect(self._on_loaded)
        session.findingsChanged.connect(self._on_findings)
        self.next_action = self._action("Next finding", "F8", lambda: self.step(True))
        self.previous_action = self._action("Previous finding", "Shift+F8", lambda: self.step(False))
        self._on_loaded()

    def _action(self, text: str, shortcut: str, slot) -> QAction:
        action = QAction(text, self)
        action.setObjectName("action-" + text.lower().replace(" ", "-"))
        action.setShortcut(QKeySequence(shortcut))
        action.setToolTip(f"{text}: go to its culprit ({shortcut})")
        action.triggered.connect(slot)
        self.addAction(action)
        return action

    def _toggle(self, text: str, severity: Severity) -> QToolButton:
        button = QToolButton(self)
        button.setObjectName(f"findings{text}")
        button.setText(text)
        button.setIcon(severity_icon(severity))
        button.setToolButtonStyle(Qt.ToolButtonTextBesideIcon)
        button.setCheckable(True)
        button.setChecked(True)
        button.setToolTip(f"Show {text.lower()}")
        button.toggled.connect(lambda on, s=severity: self._on_severity(s, on))
        return button

    # ----- session -> view -----
    def _on_loaded(self) -> None:
        playthrough = self.session.playthrough
        self.model.set_findings(playthrough.findings if playthrough is not None else [])
        self._update_counts()

    def _on_findings(self) -> None:
        """The whole findings arrived (the save was checked after it was shown): the
        finding the user had selected stays selected and current, so F8 goes on from it."""
        kept = self.view.currentIndex().data(FindingsModel.FINDING_ROLE)
        self._on_loaded()
        row = self.row_of(kept) if kept is not None else -1
        if row >= 0:
            index = self.proxy.index(row, 0)
            self.view.setCurrentIndex(index)
            self.view.selectRow(row)
            self.view.scrollTo(index)

    def _on_text(self, text: str) -> None:
        self.proxy.set_text(text)
        self._update_counts()

    def _on_severity(self, severity: Severity, shown: bool) -> None:
        self.proxy.set_severity(severity, shown)
        self._update_counts()

    def _update_counts(self, *_args) -> None:
        findings = self.model.findings
        errors = sum(1 for f in findings if f.severity is Severity.ERROR)
        warnings = len(findings) - errors
        if not findings:
            text = "No findings: the save and content pass every check" if self.session.playthrough else "No save open"
        else:
            text = f"<b style='color:#c62828'>{errors:,} error{'s' * (errors != 1)}</b> · " \
                   f"<b style='color:#a86b00'>{warnings:,} warning{'s' * (warnings != 1)}</b>"
            shown = self.proxy.rowCount()
            if shown != len(findings):
                text += f" · showing {shown:,}"
            text += " — double-click a finding to go to it"
        self.counts.setText(text)

    # ----- view -> session -----
    def _on_activated(self, index: QModelIndex) -> None:
        finding = index.data(FindingsModel.FINDING_ROLE)
        if finding is not None and self.session.playthrough is not None:
            activate_finding(self.session, finding)

    def activate_row(self, row: int) -> Landing | None:
        """Select and activate the finding shown at ``row`` (as a double-click would); returns where it landed."""
        index = self.proxy.index(row, 0)
        finding = index.data(FindingsModel.FINDING_ROLE)
        if finding is None or self.session.playthrough is None:
            return None
        self.view.selectRow(row)
        self.view.scrollTo(index)
        return activate_finding(self.session, finding)

    def step(self, forward: bool = True) -> Landing | None:
        """Go › Next (or Previous) finding: the row after (before) the current one, in the
        table's order and filter, activated."""
        rows = self.proxy.rowCount()
        if not rows:
            return None
        current = self.view.currentIndex().row()
        row = (current + 1 if forward else current - 1) if current >= 0 else (0 if forward else rows - 1)
        if not 0 <= row < rows:
            self.session.notify("No more findings" if forward else "This is the first finding")
            return None
        return self.activate_row(row)

    def row_of(self, finding: Finding) -> int:
        """The table row showing ``finding`` (-1 when the filter hides it)."""
        try:
            source = self.model.findings.index(finding)
        except ValueError:
            return -1
        return self.proxy.mapFromSource(self.model.index(source, 0)).row()

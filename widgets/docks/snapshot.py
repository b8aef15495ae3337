"""The Snapshot dock: the saved snapshot beside the state the journal replays to at ``saved_at_tick``.

Rows are every difference (``snapshot_diff.differences``: all of them, not only the
first of each map as J003 reports), plus, for each finding about the snapshot, the
value it names as saved beside the replayed value (``snapshot_diff.value_pair``), equal
or not: K003's malformed fact, I008's confidence, K004's future tick, R004's
references, the stress and tolerance behind T001 and T002, a value F002 found
unreadable (its problem in the saved column). A finding's culprit row is
selected, centred and highlighted. Text from the save is shown as plain text.
"""

from __future__ import annotations

from dataclasses import dataclass

from narrative_debugger.widgets.kit.prepared import Prepared
from narrative_debugger.widgets.kit.state_colors import brush_of, row_tint
from narrative_debugger.models.rules.findings import Finding
from narrative_debugger.models.rules.snapshot_diff import saved_differences, target_path, value_pair
from narrative_debugger.widgets.kit.culprit import CULPRIT_BG, select_rows
from narrative_debugger.widgets.kit.plain_text import WrappedLabel, plain_tip
from narrative_debugger.widgets.session import Session
from narrative_debugger.widgets.kit.tables import HeaderedTableModel, ShareColumns, read_only_table, signal_all
from narrative_debugger.widgets.kit.roles import BACKGROUND as _BACKGROUND, DISPLAY as _DISPLAY, FONT as _FONT
from narrative_debugger.widgets.kit.roles import FOREGROUND as _FOREGROUND, TOOLTIP as _TOOLTIP
from PySide6.QtCore import QModelIndex, Qt
from PySide6.QtGui import QColor, QFont
from PySide6.QtWidgets import QAbstractItemView, QCheckBox, QHBoxLayout, QLabel, QVBoxLayout, QWidget

_DIFFERENT = QColor("#b71c1c")


class SnapshotRow:
    """One path: saved and replayed values (text), whether they differ, and the codes that name it."""

    __slots__ = ("codes", "differs", "path", "replayed", "saved")

    def __init__(self, path: str, saved: str, replayed: str, differs: bool) -> None:
        self.path, self.saved, self.replayed, self.differs = path, saved, replayed, differs
        self.codes: list[str] = []


def snapshot_rows(playthrough) -> list[SnapshotRow]:
    """Every difference and every snapshot value a finding names, in path order (pure)."""
    save = playthrough.save
    state = playthrough.state_at(save.saved_at_tick)
    rows = {d.path: SnapshotRow(d.path, d.saved, d.replayed, True) for d in saved_differences(save, playthrough.index)}
    for f in playthrough.findings:
        t = f.target
        if t is None or not t.snapshot:
            continue
        path = target_path(t)
        pair = value_pair(save, state, t) if path else None
        if pair is None:
            continue
        row = rows.get(path)
        if row is None:
            problem = dict(f.values).get("problem") if f.code == "F002" else None
            if problem:  # the value could not be read: say why, not the stand-in it got (nothing to compare)
                row = rows[path] = SnapshotRow(path, f"unreadable: {problem}", pair[1], False)
            else:
                row = rows[path] = SnapshotRow(path, pair[0], pair[1], pair[0] != pair[1])
        if f.code not in row.codes:
            row.codes.append(f.code)
    return sorted(rows.values(), key=lambda r: r.path)


@dataclass(frozen=True)
class SnapshotRows:
    """``rows``: the ``snapshot_rows`` of a playthrough, once it is checked (``prepare``)."""

    rows: list[SnapshotRow]


def prepare(playthrough, prepared: Prepared | None = None) -> SnapshotRows:
    """The ``SnapshotRows`` of a checked playthrough, made by the loader off the GUI
    thread (a comparison of every snapshot fact with the replay: seconds on 1 000 000
    entries)."""
    return SnapshotRows(snapshot_rows(playthrough))


class SnapshotModel(HeaderedTableModel):
    """The snapshot rows as a table: path, saved, replayed, findings."""

    PATH, SAVED, REPLAYED, CODES = range(4)
    HEADERS = ("Path", "Saved (snapshot)", "Replayed to saved_at_tick", "Findings")

    def __init__(self, parent=None) -> None:
        super().__init__(parent)
        self.rows: list[SnapshotRow] = []
        self.culprit: str | None = None
        self.differences_only = False
        self._all: list[SnapshotRow] = []
        self._bold = QFont()
        self._bold.setBold(True)

    def set_rows(self, rows: list[SnapshotRow]) -> None:
        self._all = rows
        self._refilter()

    def set_differences_only(self, on: bool) -> None:
        self.differences_only = on
        self._refilter()

    def _refilter(self) -> None:
        self.beginResetModel()
        self.rows = [r for r in self._all if r.differs or not self.differences_only]
        self.endResetModel()

    def set_culprit(self, path: str | None) -> None:
        self.culprit = path
        signal_all(self)

    def row_of(self, path: str | None) -> int:
        return next((k for k, r in enumerate(self.rows) if r.path == path), -1)

    def hides(self, path: str | None) -> bool:
        return self.row_of(path) < 0 and any(r.path == path for r in self._all)

    def rowCount(self, parent=QModelIndex()) -> int:  # noqa: N802 (Qt override)
        return 0 if parent.isValid() else len(self.rows)

    def data(self, index: QModelIndex, role=Qt.DisplayRole):
        if not index.isValid():
            return None
        r = self.rows[index.row()]
        col = index.column()
        role = int(role)
        if role == _DISPLAY:
            return (r.path, r.saved, r.replayed, " ".join(r.codes))[col]
        if role == _TOOLTIP:
            return plain_tip((r.path, r.saved, r.replayed, " ".join(r.codes))[col])
        if role == _BACKGROUND and r.path == self.culprit:
            return brush_of(row_tint(CULPRIT_BG))  # the dark palette's shade keeps its light text readable
        if role == _FONT and r.path == self.culprit:
            return self._bold
        if role == _FOREGROUND and r.differs and col in (self.SAVED, self.REPLAYED):
            return brush_of(_DIFFERENT)
        return None


class SnapshotView(QWidget):
    """The Snapshot dock (registry name ``snapshot``): saved beside replayed, every difference.

    Built lazily (one replayed state and one pass over the snapshot's maps) when first
    shown after a load, or when a finding about the snapshot asks for its row.

    Attributes:
        model, view: the table; caption: counts; differences_only: hides equal rows.
    """

    def __init__(self, session: Session, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.setObjectName("snapshotView")
        self.session = session
        self.model = SnapshotModel(self)
        self.view = read_only_table(self.model, "snapshotTable", self)
        self.view.setSelectionMode(QAbstractItemView.SingleSelection)
        self.view.setWordWrap(False)
        self.view.verticalHeader().hide()
        # Path and values share the width and elide (their tooltips hold them whole), never
        # narrower than their header ("Replayed to saved_at_tick" is not cut at the right edge).
        self.columns = ShareColumns(self.view, (SnapshotModel.PATH, SnapshotModel.SAVED, SnapshotModel.REPLAYED),
                                    stretch=SnapshotModel.PATH)
        # Wraps beside the checkbox, so that it is never cut mid-word.
        self.caption = WrappedLabel("", self)
        self.caption.setObjectName("snapshotCaption")
        self.caption.setTextFormat(Qt.PlainText)
        self.caption.setAlignment(Qt.AlignLeft | Qt.AlignTop)
        self.differences_only = QCheckBox("Differences only", self)
        self.differences_only.setObjectName("snapshotDifferencesOnly")
        self.differences_only.toggled.connect(self._on_differences_only)
        bar = QHBoxLayout()
        bar.addWidget(self.caption, 1)
        bar.addWidget(self.differences_only, 0, Qt.AlignTop)
        layout = QVBoxLayout(self)
        layout.setContentsMargins(2, 2, 2, 2)
        layout.addLayout(bar)
        layout.addWidget(self.view, 1)
        # The culprit's values in full (a list of references does not fit a cell).
        self.detail = QLabel(self)
        self.detail.setObjectName("snapshotDetail")
        self.detail.setTextFormat(Qt.PlainText)
        self.detail.setWordWrap(True)
        self.detail.setTextInteractionFlags(Qt.TextSelectableByMouse)
        self.detail.hide()
        layout.addWidget(self.detail)
        self._stale = True
        session.loaded.connect(self._on_loaded)
        session.findingsChanged.connect(self._on_loaded)
        session.culpritChanged.connect(self._on_culprit)
        self._on_loaded()

    def _on_loaded(self) -> None:
        self._stale = True
        self.model.set_rows([])
        if self.isVisible():
            self._build()

    def showEvent(self, event) -> None:  # noqa: N802 (Qt override)
        super().showEvent(event)
        if self._stale:
            self._build()

    def _build(self) -> None:
        self._stale = False
        play = self.session.playthrough if self.session.ready else None
        rows = []
        if play is not None:
            made = self.session.prepared.get(SnapshotRows)
            rows = made.rows if made is not None else None
        checking = play is not None and play.checks_pending
        if rows is None and not checking:
            rows = snapshot_rows(play)
        rows = rows or []
        self.model.set_rows(rows)
        self.model.set_culprit(None)
        differ = sum(r.differs for r in rows)
        if play is None:
            self.caption.setText("No save open")
        elif checking:  # the loader compares them next; findingsChanged brings the rows
            self.caption.setText("Comparing the snapshot with the replay…")
        elif not rows:
            self.caption.setText(f"The snapshot equals the journal replayed to saved_at_tick {play.save.saved_at_tick:,}")
        else:
            self.caption.setText(f"{differ:,} difference{'s' * (differ != 1)} between the snapshot and the replay at "
                                 f"saved_at_tick {play.save.saved_at_tick:,}; {len(rows) - differ:,} more value(s) a finding names")
        if rows and self.session.culprit is not None:
            # The rows came after the finding was chosen (its checks ended since): mark it.
            self._on_culprit(self.session.culprit)

    def _on_differences_only(self, on: bool) -> None:
        self.model.set_differences_only(on)
        if self.model.culprit is not None:
            select_rows(self.view, [self.model.row_of(self.model.culprit)])

    def _on_culprit(self, finding: Finding | None) -> None:
        t = finding.target if finding is not None else None
        path = target_path(t) if t is not None and t.snapshot else None
        self.model.set_culprit(path)
        self.detail.hide()
        if path is None:
            return
        if self._stale:
            self._build()
            self.model.set_culprit(path)
        if self.model.hides(path):
            self.differences_only.setChecked(False)
            self.session.notify(f"Snapshot filter cleared to show {path} ({finding.code})")
        row = self.model.row_of(path)
        select_rows(self.view, [row])
        if row >= 0:
            r = self.model.rows[row]
            self.detail.setText(f"{finding.code} at {r.path}\nsaved:    {r.saved}\nreplayed: {r.replayed}")
            self.detail.show()

    def culprit_row(self) -> int:
        """The row of the culprit shown (-1 for none)."""
        return self.model.row_of(self.model.culprit)

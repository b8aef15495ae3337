"""The journal: every entry of the save in file order, tied to the current tick.

``JournalModel`` reads the save's parallel journal lists lazily, so a million-entry
journal costs nothing until a row is drawn. Filtering (by event kind, by the NPC an
entry names, or entries with findings) is an index list held by the model itself:
a ``QSortFilterProxyModel`` would call Python once per row, seconds for 1M rows.

Entries applied at the current tick are marked, the last one with a ▶; entries
after the tick are greyed. Ticks are game ticks.
"""

from __future__ import annotations

from bisect import bisect_left, bisect_right
from collections import Counter
from dataclasses import dataclass
from operator import attrgetter

import numpy as np

from narrative_debugger.models.domain.types import InteractionState, StableId
from narrative_debugger.models.playthrough import Playthrough
from narrative_debugger.models.rules.findings import Finding, Severity
from narrative_debugger.models.rules.snapshot_diff import show
from narrative_debugger.models.timeline.event_kinds import variant_positions
from narrative_debugger.widgets.kit.prepared import Prepared
from narrative_debugger.widgets.kit.steady import SteadyLabel
from narrative_debugger.widgets.kit.visibility import after_pause
from narrative_debugger.widgets.kit.culprit import CULPRIT_BG, PairsModel, row_visible, select_rows
from narrative_debugger.models.report.plain_text import counted
from narrative_debugger.widgets.kit.plain_text import ElidedLabel, name_text, plain_tip
from narrative_debugger.widgets.session import Session
from narrative_debugger.widgets.kit.state_colors import INTERACTION_COLORS, brush_of, row_tint
from narrative_debugger.widgets.kit.tables import ElideDelegate, HeaderedTableModel, read_only_table, signal_all
from narrative_debugger.widgets.kit.roles import ALIGN as _ALIGNMENT, BACKGROUND as _BACKGROUND, DECORATION as _DECORATION
from narrative_debugger.widgets.kit.roles import DISPLAY as _DISPLAY, FONT as _FONT, FOREGROUND as _FOREGROUND, RIGHT as _RIGHT
from narrative_debugger.widgets.kit.roles import TOOLTIP as _TOOLTIP, USER as _USER
from narrative_debugger.widgets.kit.entry_edit import EntryEditDialog, open_entry_dialog
from PySide6.QtCore import QModelIndex, Qt, Signal
from PySide6.QtGui import QAction, QColor, QFont
from PySide6.QtWidgets import (
    QAbstractItemView,
    QApplication,
    QCheckBox,
    QComboBox,
    QHBoxLayout,
    QHeaderView,
    QLabel,
    QSplitter,
    QStyle,
    QVBoxLayout,
    QWidget,
)

#: Role carrying the journal index of a row.
JOURNAL_INDEX_ROLE = _USER + 1
#: The roles the journal model sets; Qt asks for a dozen a cell on every repaint.
_ROLES = frozenset({_DISPLAY, _FOREGROUND, _BACKGROUND, _FONT, _DECORATION, _TOOLTIP, _ALIGNMENT, JOURNAL_INDEX_ROLE})
#: Combo data for "entries with findings" and "unreadable entries".
WITH_FINDINGS = "__findings__"
INVALID = "__invalid__"

_GREY = QColor("#9a9a9a")
_CURRENT = QColor("#fff3c4")
_CURRENT_LAST = QColor("#ffe08a")
#: Event kinds drawn in the colour of the interaction state they lead to (state_colors).
_KIND_COLOURS = {
    "InteractionStarted": INTERACTION_COLORS[InteractionState.Active],
    "InteractionCompleted": INTERACTION_COLORS[InteractionState.Completed],
    "InteractionWalkedAway": INTERACTION_COLORS[InteractionState.WalkedAway],
    "WalkAwayPenalty": INTERACTION_COLORS[InteractionState.WalkedAway],
    "InteractionConfrontation": INTERACTION_COLORS[InteractionState.Confrontation],
    "InteractionConflictAbandoned": INTERACTION_COLORS[InteractionState.ConflictAbandoned],
    "FactLearned": QColor("#1f4e8c"),
    "FactUpdated": QColor("#1f4e8c"),
    "MonologueFired": QColor("#00838f"),
}


def summarize(playthrough: Playthrough, kind: str | None, d: dict | None) -> str:
    """One line saying what an entry did, in a designer's words."""
    if kind is None or d is None:
        return "unreadable entry (see its F002 finding)"
    if kind == "InteractionStarted":
        who = "player approaches" if d["player_initiated"] else "NPC approaches"
        return f"conversation opens: {who}, at {d['location']}"
    if kind == "InteractionConfrontation":
        return "conversation escalates to a confrontation"
    if kind == "InteractionCompleted":
        topics = ", ".join(d["topics"]) or "no topics"
        return f"conversation completed ({topics})"
    if kind == "InteractionWalkedAway":
        return "player walked away"
    if kind == "InteractionConflictAbandoned":
        return "player abandoned the confrontation"
    if kind == "FactLearned":
        return f"learned {d['fact_id']}: {d['confidence'].name}, {d['source'].name}"
    if kind == "FactUpdated":
        parts = [p.name for p in (d.get("confidence"), d.get("state")) if p is not None]
        return f"updated {d['fact_id']} → {', '.join(parts) or 'no change'}"
    if kind == "EntityObserved":
        name = name_text(playthrough, d["entity"])
        return f"observed {name}: {d['confidence'].name}, {d['relationship'].name} ({d['source'].name})"
    if kind == "RelationshipInteraction":
        return (
            f"score {d['delta']:+.3f} → {d['score_after']:.2f}  (sentiment {d['sentiment']:+.2f}, "
            f"{d['message_length']} chars, {d['conversation_turns']} turns)"
        )
    if kind == "WalkAwayPenalty":
        return f"walk-away penalty −{d['penalty']:g} → score {d['score_after']:.2f}"
    if kind == "StressChanged":
        return f"stress {d['delta']:+d} → {d['current_stress']} ({d['cause']})"
    if kind == "SharedReferenceAdded":
        return f"shared {d['kind']}: {d['content']}"
    if kind == "DialogueLine":
        return f"“{d['text']}”"
    if kind == "MonologueFired":
        line = playthrough.content.monologues.get(d["line_id"])
        return f"{d['line_id']}: {line.text}" if line is not None else f"{d['line_id']} (not in any pool)"
    return ", ".join(f"{k}={v}" for k, v in d.items())


@dataclass(frozen=True)
class JournalKinds:
    """What the journal's event filter reads, made off the GUI thread (``prepare``).

    Attributes:
        counts: journal entries of each variant (None for unreadable ones).
        rows_of_kind: the same keys -> the journal indices of those entries, ascending
            (int64 array).
    """

    counts: Counter
    rows_of_kind: dict


@dataclass(frozen=True)
class JournalNpcRows:
    """What the journal's NPC filter reads (``prepare_npc_rows``): StableId of each NPC
    of the save -> the journal indices of the entries naming it (``target``,
    ``speaker`` or ``entity`` equal to it, or a ``fact_id`` of its interactions),
    ascending (int64 array; NPCs no entry names are left out)."""

    rows_of_npc: dict


#: The fields of an event that name an NPC by its StableId.
_NAMING_FIELDS = ("target", "speaker", "entity")


def prepare(playthrough, prepared: Prepared | None = None) -> JournalKinds:
    """The ``JournalKinds`` of a playthrough: O(N) entries, made in the open's child
    process (a kind chosen in the window then reads one array, whatever N)."""
    rows_of_kind = variant_positions(playthrough.save.journal.kinds)
    return JournalKinds(Counter({kind: len(rows) for kind, rows in rows_of_kind.items()}), rows_of_kind)


def prepare_npc_rows(playthrough, prepared: Prepared | None = None) -> JournalNpcRows:
    """The ``JournalNpcRows`` of a playthrough: one pass over the journal (~0.5 s at
    1 000 000 entries), so the open's child makes it after the first paint, with the
    checks (``registry.PREPARES_AFTER``)."""
    save = playthrough.save
    made = prepared.get(JournalKinds) if prepared is not None else None
    rows_of_kind = made.rows_of_kind if made is not None else variant_positions(save.journal.kinds)
    data, npcs = list(save.journal.data), save.npcs  # one pass in file order (a mapped column's chunks once)
    prefixes = {f"interaction.{npc.slug}_": sid for sid, npc in npcs.items()}
    found: dict = {}
    for kind, rows in rows_of_kind.items():
        if kind is None or not len(rows):
            continue
        at = rows.tolist()
        entries = list(map(data.__getitem__, at))
        fields = type(entries[0]).__struct_fields__
        for name in _NAMING_FIELDS:
            if name in fields:
                for i, value in zip(at, map(attrgetter(name), entries)):
                    if value in npcs:
                        found.setdefault(value, []).append(i)
        if "fact_id" in fields:
            for i, fact_id in zip(at, map(attrgetter("fact_id"), entries)):
                # Every NPC whose "interaction.<slug>_" the id starts with.
                cut = fact_id.find("_") if fact_id.startswith("interaction.") else -1
                while cut >= 0:
                    sid = prefixes.get(fact_id[: cut + 1])
                    if sid is not None:
                        found.setdefault(sid, []).append(i)
                    cut = fact_id.find("_", cut + 1)
    return JournalNpcRows({sid: np.unique(np.array(rows, dtype=np.int64)) for sid, rows in found.items()})


class JournalModel(HeaderedTableModel):
    """A lazy table over ``save.journal``, filtered by an index list.

    Rows are journal entries (all of them, or those passing the filter); columns
    are the entry number, tick, event kind, the NPC it names and a summary.
    ``set_position`` says how many entries have applied at the session's tick.
    """

    #: The roles ``data`` answers (``StaticTextDelegate`` asks no others).
    CELL_ROLES = _ROLES

    NUMBER, TICK, KIND, NPC, SUMMARY = range(5)
    HEADERS = ("#", "Tick", "Event", "NPC", "Summary")

    def __init__(self, parent=None) -> None:
        super().__init__(parent)
        self.playthrough: Playthrough | None = None
        self._prepared: Prepared | None = None
        self._rows: np.ndarray | None = None  # journal indices shown (ascending); None = every entry
        self._position = 0
        self._current_tick: int | None = None
        self._names: dict[StableId, str] = {}
        self._findings: dict[int, list[Finding]] = {}
        self._culprit: frozenset[int] = frozenset()
        self._kind: str | None = None
        self._npc: StableId | None = None
        self._bold = QFont()
        self._bold.setBold(True)
        self._icons = {}

    # ----- feeding -----
    def set_playthrough(self, playthrough: Playthrough | None, prepared: Prepared | None = None) -> None:
        """Show another playthrough's journal, with what the loader ``prepared`` for it
        (its ``JournalKinds``); filters are cleared."""
        self.beginResetModel()
        self.playthrough = playthrough
        self._prepared = prepared
        self._rows = None
        self._kind = self._npc = None
        self._names = {}
        self._findings = {}
        self._position = 0
        self._current_tick = None
        self._culprit = frozenset()
        self._findings = self._by_entry(playthrough)
        self.endResetModel()

    @staticmethod
    def _by_entry(playthrough: Playthrough | None) -> dict[int, list[Finding]]:
        out: dict[int, list[Finding]] = {}
        for f in playthrough.findings if playthrough is not None else ():
            if f.target is not None and f.target.journal_index is not None:
                out.setdefault(f.target.journal_index, []).append(f)
        return out

    def refresh_findings(self) -> None:
        """The playthrough's findings are whole now: the entries' marks follow, and the
        rows when they are the entries with findings."""
        self._findings = self._by_entry(self.playthrough)
        if self._kind == WITH_FINDINGS:
            self.set_filter(self._kind, self._npc)
        else:
            signal_all(self)

    def set_culprit(self, indices) -> None:
        """Highlight the journal entries a finding names (``CULPRIT_BG``)."""
        self._culprit = frozenset(indices)
        signal_all(self)

    @property
    def culprit(self) -> frozenset[int]:
        """The journal indices highlighted as a finding's culprit."""
        return self._culprit

    @property
    def journal_length(self) -> int:
        """Entries in the whole journal."""
        return len(self.playthrough.save.journal) if self.playthrough is not None else 0

    def kind_counts(self) -> Counter:
        """Entries of each variant (None for unreadable entries): the loader's ``prepare``
        count when it made one for this playthrough, else counted now."""
        if self.playthrough is None:
            return Counter()
        return self._kinds().counts

    def finding_count(self) -> int:
        """Entries that carry at least one finding."""
        return len(self._findings)

    def set_filter(self, kind: str | None = None, npc: StableId | None = None) -> None:
        """Show only entries of ``kind`` (a variant, WITH_FINDINGS or INVALID) naming ``npc``."""
        self.beginResetModel()
        self._kind, self._npc = kind, npc
        self._rows = self._filtered(kind, npc)
        self.endResetModel()

    def _filtered(self, kind, npc) -> np.ndarray | None:
        """The journal indices a filter shows, ascending (int64 array), from the
        ``JournalKinds`` arrays: no pass over the journal here, on the GUI thread."""
        if self.playthrough is None or (kind is None and npc is None):
            return None
        base = self._made(JournalNpcRows, prepare_npc_rows).rows_of_npc.get(npc, _NONE) if npc is not None else None
        if kind is None:
            return base
        if kind == WITH_FINDINGS:
            wanted = np.array(sorted(self._findings), dtype=np.int64)
        else:
            wanted = self._kinds().rows_of_kind.get(None if kind == INVALID else kind, _NONE)
        return wanted if base is None else np.intersect1d(base, wanted, assume_unique=True)

    def _kinds(self) -> JournalKinds:
        return self._made(JournalKinds, prepare)

    def _made(self, kind, make):
        """The loader's ``kind`` for this playthrough; made now (once, then kept) for a
        playthrough it did not prepare, or before its after-paint work arrived."""
        if self._prepared is None:
            self._prepared = Prepared()
        made = self._prepared.get(kind)
        if made is None:
            made = make(self.playthrough, self._prepared)
            self._prepared.add(made)
        return made

    def set_position(self, position: int) -> None:
        """Mark the entries applied at the tick: ``position`` entries have applied."""
        index = self.playthrough.index if self.playthrough is not None else None
        position = max(0, min(position, self.journal_length))
        current_tick = index.ticks[position - 1] if index is not None and position > 0 else None
        if position == self._position and current_tick == self._current_tick:
            return
        old = self._position
        self._position, self._current_tick = position, current_tick
        # What the position changes: grey past it, the bold "▶" row, and the tinted rows
        # of the current tick (the run of equal ticks ending there), at the old position
        # and at the new one. Signalling that span only repaints what a step changed
        # (the whole table was ~300 data() calls a step).
        ticks = index.ticks if index is not None else ()
        lo, hi = min(old, position), max(old, position) - 1
        for p in (old, position):
            if 0 < p <= len(ticks):
                lo = min(lo, bisect_left(ticks, ticks[p - 1]))
        self._signal_entries(max(0, lo), hi)

    def _signal_entries(self, first: int, last: int) -> None:
        """dataChanged over the rows showing journal entries ``first..last``."""
        if self._rows is None:
            top, bottom = first, min(last, self.journal_length - 1)
        else:
            top, bottom = bisect_left(self._rows, first), bisect_right(self._rows, last) - 1
        if top <= bottom:
            self.dataChanged.emit(self.index(top, 0), self.index(bottom, len(self.HEADERS) - 1))

    @property
    def position(self) -> int:
        """Entries applied at the tick shown."""
        return self._position

    # ----- lookups -----
    def journal_index(self, row: int) -> int:
        """The journal index shown at ``row``."""
        return int(self._rows[row]) if self._rows is not None else row

    def row_of(self, journal_index: int) -> int:
        """The row of a journal entry, or -1 when the filter hides it."""
        if self._rows is None:
            return journal_index if 0 <= journal_index < self.journal_length else -1
        k = bisect_left(self._rows, journal_index)
        return k if k < len(self._rows) and self._rows[k] == journal_index else -1

    def current_row(self) -> int:
        """The row of the last entry applied at the tick (or the last shown before it); -1 if none."""
        if self._position <= 0:
            return -1
        if self._rows is None:
            return self._position - 1
        return bisect_left(self._rows, self._position) - 1

    def entry_tick(self, journal_index: int) -> int:
        """The tick an entry applies at (the running tick of the timeline)."""
        index = self.playthrough.index
        if index is not None and journal_index < len(index.ticks):
            return index.ticks[journal_index]
        return self.playthrough.save.journal.ticks[journal_index] or 0

    def name(self, sid: StableId) -> str:
        """Display name of an NPC or the player (cached)."""
        name = self._names.get(sid)
        if name is None:
            name = self._names[sid] = name_text(self.playthrough, sid)
        return name

    # ----- QAbstractTableModel -----
    def rowCount(self, parent=QModelIndex()) -> int:
        if parent.isValid():
            return 0
        return len(self._rows) if self._rows is not None else self.journal_length

    def data(self, index: QModelIndex, role=_DISPLAY):
        role = int(role)
        if role not in _ROLES or not index.isValid() or self.playthrough is None:
            return None
        i = self.journal_index(index.row())
        col = index.column()
        if role == _DISPLAY:
            return self._display(i, col)
        if role == JOURNAL_INDEX_ROLE:
            return i
        if role == _FOREGROUND:
            if i >= self._position:
                return brush_of(_GREY)
            if col == self.KIND:
                colour = _KIND_COLOURS.get(self.playthrough.save.journal.kinds[i])
                return brush_of(colour) if colour is not None else None
            return None
        if role == _BACKGROUND and i in self._culprit:
            return brush_of(row_tint(CULPRIT_BG))
        if role == _BACKGROUND and self._is_current(i):  # tinted for the palette: light text stays readable
            return brush_of(row_tint(_CURRENT_LAST if i == self._position - 1 else _CURRENT))
        if role == _FONT and i == self._position - 1:
            return self._bold
        if role == _DECORATION and col == self.NUMBER and i in self._findings:
            return self._finding_icon(self._findings[i])
        if role == _TOOLTIP:
            return self._tooltip(i)
        if role == _ALIGNMENT and col in (self.NUMBER, self.TICK):
            return _RIGHT
        return None

    def _is_current(self, i: int) -> bool:
        if i >= self._position or self._current_tick is None:
            return False
        return self.playthrough.index.ticks[i] == self._current_tick

    def _display(self, i: int, col: int):
        journal = self.playthrough.save.journal
        if col == self.NUMBER:
            return f"▶ {i}" if i == self._position - 1 else str(i)
        if col == self.TICK:
            tick = journal.ticks[i]
            return f"{tick:,}" if tick is not None else "—"
        if col == self.KIND:
            return journal.kinds[i] or "(unreadable)"
        if col == self.NPC:
            data = journal.data[i]
            if not data:
                return ""
            sid = next((data[k] for k in ("target", "speaker", "entity") if k in data), None)
            if sid is not None:
                return self.name(sid)
            sid = self.playthrough.save.npc_of_entry(i)
            return self.name(sid) if sid is not None else ""
        if col == self.SUMMARY:
            return summarize(self.playthrough, journal.kinds[i], journal.data[i])
        return None

    def _tooltip(self, i: int) -> str:
        save = self.playthrough.save
        tick = save.journal.ticks[i]
        when = f"tick {tick:,} ({save.game_time(tick)})" if tick is not None else "no valid tick"
        lines = [f"journal[{i}] · {when}", summarize(self.playthrough, save.journal.kinds[i], save.journal.data[i])]
        for f in self._findings.get(i, ()):
            lines.append(f"{f.code} {f.severity.value}: {f.message}")
        return plain_tip("\n".join(lines))

    def _finding_icon(self, findings: list[Finding]):
        worst = QStyle.SP_MessageBoxCritical if any(f.severity is Severity.ERROR for f in findings) else QStyle.SP_MessageBoxWarning
        if worst not in self._icons:
            self._icons[worst] = QApplication.style().standardIcon(worst)
        return self._icons[worst]


_NONE = np.empty(0, dtype=np.int64)


class JournalView(QWidget):
    """The journal table with its filters; follows the session's tick and NPC.

    Double-clicking a row moves the session to the entry's tick and selects the NPC
    it names. The row of the current tick is kept in view while the tick moves.

    Attributes:
        model: the JournalModel.
        view: the QTableView.
        kind_filter: combo of event kinds (data: variant name, WITH_FINDINGS, INVALID or None).
        npc_filter: checkbox "only entries naming the selected NPC".
        whatif_action: "What if… edit this entry" (the table's context menu, issue 38).

    Signals:
        whatIfRequested(str, object): a JSON pointer into the save and the value the user
            says it should have had (``EntryEditDialog``), for the app's what-if.
    """

    whatIfRequested = Signal(str, object)

    def __init__(self, session: Session, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.setObjectName("journalView")
        self.session = session
        self.model = JournalModel(self)
        self.view = read_only_table(self.model, "journalTable", self)
        self.view.setSelectionMode(QAbstractItemView.ExtendedSelection)
        self.view.setWordWrap(False)
        self.view.setHorizontalScrollMode(QAbstractItemView.ScrollPerPixel)
        vh = self.view.verticalHeader()
        vh.hide()
        vh.setSectionResizeMode(QHeaderView.Fixed)
        vh.setDefaultSectionSize(self.fontMetrics().height() + 6)
        hh = self.view.horizontalHeader()
        hh.setStretchLastSection(True)
        for col, width in ((JournalModel.NUMBER, 84), (JournalModel.TICK, 96), (JournalModel.KIND, 196), (JournalModel.NPC, 120)):
            self.view.setColumnWidth(col, width)
        # A tick past the column's width keeps its last digits, which differ from row to
        # row (trial 48: ticks near 2^64 all read "18,446,744,0…").
        self.view.setItemDelegateForColumn(JournalModel.TICK, ElideDelegate(Qt.ElideLeft, self.view))

        self.kind_filter = QComboBox(self)
        self.kind_filter.setObjectName("journalKindFilter")
        # As wide as its longest choice: squeezed by the caption it read "All events (3,800".
        self.kind_filter.setSizeAdjustPolicy(QComboBox.AdjustToContents)
        self.kind_filter.setToolTip("Show only entries of one event kind")
        self.npc_filter = QCheckBox("Selected NPC only", self)
        self.npc_filter.setObjectName("journalNpcFilter")
        self.npc_filter.setToolTip("Show only entries that name the NPC selected in the session")
        # The caption gives way instead, elided with the whole as its tooltip.
        self.caption = ElidedLabel("", self, mode=Qt.ElideRight)
        self.caption.setObjectName("journalCaption")
        self.caption.setAlignment(Qt.AlignRight | Qt.AlignVCenter)
        bar = QHBoxLayout()
        bar.addWidget(QLabel("Event:", self))
        bar.addWidget(self.kind_filter)
        # Renamed at every NPC change ("Only Mara"): held, so the bar is laid out again
        # only when the new name is wider than the room it has.
        bar.addWidget(SteadyLabel(self.npc_filter))
        bar.addWidget(SteadyLabel(self.caption), 1)
        # The entry a finding names, field by field, its culprit field marked.
        self.detail_model = PairsModel(("Field", "Value"), self)
        self.detail = read_only_table(self.detail_model, "journalDetail", self)
        self.detail.verticalHeader().hide()
        self.detail.horizontalHeader().setStretchLastSection(True)
        self.detail.setColumnWidth(0, 150)
        self.detail.setWordWrap(False)
        self.detail.hide()
        self.split = QSplitter(Qt.Horizontal, self)
        self.split.setObjectName("journalSplit")
        self.split.addWidget(self.view)
        self.split.addWidget(self.detail)
        self.split.setStretchFactor(0, 3)
        self.split.setStretchFactor(1, 2)
        layout = QVBoxLayout(self)
        layout.setContentsMargins(2, 2, 2, 2)
        layout.addLayout(bar)
        layout.addWidget(self.split)

        self.kind_filter.currentIndexChanged.connect(self._apply_filter)
        self.npc_filter.toggled.connect(self._apply_filter)
        self.view.doubleClicked.connect(self._on_double_click)
        self.whatif_action = QAction("What if… edit this entry", self.view)
        self.whatif_action.setObjectName("action-whatif-entry")
        self.whatif_action.triggered.connect(lambda: self.edit_entry())
        self.view.setContextMenuPolicy(Qt.ActionsContextMenu)
        self.view.addAction(self.whatif_action)
        session.loaded.connect(self._on_loaded)
        session.findingsChanged.connect(self._on_findings)
        # While the tick is dragged the table follows once the drag pauses: each far frame
        # changes every row in view (a full repaint).
        self._preview = after_pause(self._on_tick, self)
        session.tickChanged.connect(self._on_committed)
        session.tickPreview.connect(self._preview)
        session.npcChanged.connect(self._on_npc)
        session.journalIndexChanged.connect(self.select_entry)
        session.culpritChanged.connect(self._on_culprit)
        if session.ready:
            self._on_loaded()

    # ----- session -> view -----
    def _on_loaded(self) -> None:
        playthrough = self.session.playthrough if self.session.ready else None
        self.model.set_playthrough(playthrough, self.session.prepared)
        self.detail_model.set_rows([])
        self.detail.hide()
        self._fill_kinds()
        self._on_npc(self.session.npc)
        self._on_tick(self.session.tick)

    def _on_findings(self) -> None:
        self.model.refresh_findings()
        kept = self.kind_filter.currentData()
        self._fill_kinds()
        at = self.kind_filter.findData(kept)
        self.kind_filter.setCurrentIndex(at if at >= 0 else 0)
        if at < 0:
            self._apply_filter()
        self._update_caption()

    def _fill_kinds(self) -> None:
        self.kind_filter.blockSignals(True)
        self.kind_filter.clear()
        counts = self.model.kind_counts()
        self.kind_filter.addItem(f"All events ({self.model.journal_length:,})", None)
        if self.model.finding_count():
            self.kind_filter.addItem(f"Entries with findings ({self.model.finding_count():,})", WITH_FINDINGS)
        for kind in sorted(k for k in counts if k is not None):
            self.kind_filter.addItem(f"{kind} ({counts[kind]:,})", kind)
        if counts.get(None):
            self.kind_filter.addItem(f"(unreadable) ({counts[None]:,})", INVALID)
        self.kind_filter.blockSignals(False)

    def _on_committed(self, tick: int) -> None:
        self._preview.cancel()
        self._on_tick(tick)

    def _on_tick(self, tick: int) -> None:
        index = self.model.playthrough.index if self.model.playthrough is not None else None
        self.model.set_position(index.position_for_tick(tick) if index is not None else 0)
        self._update_caption()
        self.scroll_to_current()

    def _on_npc(self, sid) -> None:
        name = self.model.name(sid) if sid is not None and self.model.playthrough is not None else "selected NPC"
        self.npc_filter.setText(f"Only {name}")
        if self.npc_filter.isChecked():
            self._apply_filter()

    def _apply_filter(self, *_args) -> None:
        npc = self.session.npc if self.npc_filter.isChecked() else None
        self.model.set_filter(self.kind_filter.currentData(), npc)
        self._update_caption()
        self.scroll_to_current(force=True)

    def _update_caption(self) -> None:
        total, shown = self.model.journal_length, self.model.rowCount()
        applied = self.model.position
        # Short, beside the filters in a narrow dock (at 1040 px it read "3,800 of 3,800 en…");
        # the whole sentence is its tooltip.
        text = f"{applied:,} of {total:,} applied"
        whole = f"{applied:,} of {counted(total, 'entry', 'entries')} applied at tick {self.session.tick:,}"
        if shown != total:
            text += f" · {shown:,} shown"
            whole += f" · {shown:,} shown"
        self.caption.setText(text, tooltip=whole)

    def scroll_to_current(self, force: bool = False) -> None:
        """Bring the row of the current tick into view (centred when it was far away)."""
        row = self.model.current_row()
        if row < 0:
            if self.model.rowCount():
                self.view.scrollToTop()
            return
        index = self.model.index(row, 0)
        top = self.view.rowAt(0)
        bottom = self.view.rowAt(self.view.viewport().height() - 1)
        visible = top >= 0 and top <= row and (bottom < 0 or row <= bottom)
        if force or not visible:
            self.view.scrollTo(index, QAbstractItemView.PositionAtCenter)

    def select_entry(self, journal_index) -> None:
        """Select and show the row of one journal entry (when the filter shows it)."""
        row = self.model.row_of(journal_index) if journal_index is not None else -1
        if row < 0:
            self.view.clearSelection()
            return
        index = self.model.index(row, 0)
        self.view.setCurrentIndex(index)
        self.view.selectRow(row)
        # Centred when it was out of view; a row in view stays where it is: scrolling on
        # every tick step would repaint the whole table.
        if not row_visible(self.view, row, whole=True):
            self.view.scrollTo(index, QAbstractItemView.PositionAtCenter)

    # ----- view -> session -----
    def _on_double_click(self, index: QModelIndex) -> None:
        if not index.isValid() or self.model.playthrough is None:
            return
        i = self.model.journal_index(index.row())
        npc = self.model.playthrough.save.npc_of_entry(i)
        if npc is not None:
            self.session.set_npc(npc)
        self.session.set_tick(self.model.entry_tick(i))

    # ----- what if (issue 38) -----
    def edit_entry(self, journal_index: int | None = None) -> EntryEditDialog | None:
        """Open "What if… edit this entry" for ``journal_index`` (default: the current
        row's entry); on Replay, ``whatIfRequested`` carries the pointer and value.
        Returns the dialog (shown window-modal, not blocking), or None with no entry."""
        play = self.model.playthrough
        if journal_index is None:
            row = self.view.currentIndex().row()
            journal_index = self.model.journal_index(row) if row >= 0 else None
        if play is None or journal_index is None:
            return None
        return open_entry_dialog(play, journal_index, self, self.whatIfRequested)

    # ----- a finding's culprit -----
    def _on_culprit(self, finding) -> None:
        """Select, centre and highlight the entries a finding names (J001: both), and show
        the named entry field by field with the culprit field (and the finding's values) marked."""
        t = finding.target if finding is not None else None
        if t is None or t.journal_index is None or self.model.playthrough is None or t.journal_index >= self.model.journal_length:
            self.model.set_culprit(())
            self.detail.hide()
            return
        indices = [i for i in (t.previous_journal_index, t.journal_index) if i is not None]
        if any(self.model.row_of(i) < 0 for i in indices):
            self.kind_filter.blockSignals(True)
            self.npc_filter.blockSignals(True)
            self.kind_filter.setCurrentIndex(0)
            self.npc_filter.setChecked(False)
            self.kind_filter.blockSignals(False)
            self.npc_filter.blockSignals(False)
            self._apply_filter()
            self.session.notify(f"Journal filter cleared to show journal[{t.journal_index}] ({finding.code})")
        self.model.set_culprit(indices)
        select_rows(self.view, [self.model.row_of(i) for i in indices], self.model.row_of(t.journal_index))
        rows = entry_fields(self.model.playthrough, t.journal_index, t.field, t.topic)
        # The finding's own values (the formula's delta beside the recorded one, ...)
        # go right under the field they are about.
        at = next((k + 1 for k, row in enumerate(rows) if row[-1]), len(rows))
        rows[at:at] = [(f"{finding.code}: {label}", value, True) for label, value in finding.values]
        self.detail_model.set_rows(rows)
        self.detail.show()
        marked = self.detail_model.marked()
        select_rows(self.detail, marked)


def entry_fields(playthrough: Playthrough, i: int, field: str | None, topic: str | None = None) -> list[tuple[str, str, bool]]:
    """``(field, value, culprit)`` rows of journal entry ``i``: its tick, variant and each
    field (lists item by item, ``topics[2]``); the row ``field`` names (the target's
    ``event.<Variant>.<name>[k]`` or ``tick``) or the ``topic`` is marked."""
    journal = playthrough.save.journal
    kind = journal.kinds[i]
    data = journal.data[i] or {}
    leaf = (field or "").rsplit(".", 1)[-1] if field else ""
    rows = [("journal index", str(i), False), ("tick", "—" if journal.ticks[i] is None else f"{journal.ticks[i]:,}", leaf == "tick"),
            ("event", kind or "(unreadable)", bool(field) and field == f"event.{kind}")]
    for name, value in data.items():
        if isinstance(value, list | tuple):
            for k, item in enumerate(value):
                label = f"{name}[{k}]"
                rows.append((label, show(item), leaf == label or (topic is not None and name == "topics" and item == topic)))
            if not value:
                rows.append((name, "[]", leaf == name))
        else:
            shown = name_text(playthrough, value) if name in ("target", "speaker", "entity") and isinstance(value, int) else value
            text = f"{shown} ({value})" if shown != value else show(value)
            rows.append((name, text, leaf == name))
    return rows

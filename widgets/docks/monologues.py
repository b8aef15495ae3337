"""Monologue lines at the tick: which may fire, which may not and why, which fired.

Lines about the selected NPC come first (their interaction prerequisite targets the
NPC's slug, or a tag names the NPC), then the other lines; within each group the
eligible lines (green) come before the blocked ones, which say which prerequisite
fails. Last come the lines the journal shows fired up to the tick, newest first.
Eligibility follows schema §6 through ``models.monologue.evaluate``.
"""

from __future__ import annotations

import math
from bisect import bisect_right
from collections import OrderedDict
from dataclasses import dataclass

from narrative_debugger.models.content.monologue import MonologueLine
from narrative_debugger.models.content.monologue import evaluate
from narrative_debugger.models.domain.types import StableId
from narrative_debugger.models.playthrough import Playthrough
from narrative_debugger.models.timeline.state_view import StateAtTick
from narrative_debugger.widgets.kit.prepared import Prepared
from narrative_debugger.widgets.kit.steady import SteadyLabel
from narrative_debugger.widgets.kit.culprit import CULPRIT_BG, select_rows
from narrative_debugger.widgets.session import Session
from narrative_debugger.widgets.kit.state_colors import brush_of, ink_tint, row_tint
from narrative_debugger.widgets.kit.cell_text import StaticTextDelegate, draw_item
from narrative_debugger.widgets.kit.tables import HeaderedTableModel, fit_columns, read_only_table, set_section_sizes, signal_all, signal_rows
from narrative_debugger.widgets.kit.plain_text import esc, name_text, plain_tip
from narrative_debugger.widgets.kit.visibility import held
from narrative_debugger.widgets.kit.why import add_why_action
from narrative_debugger.widgets.kit.roles import BACKGROUND as _BACKGROUND, DISPLAY as _DISPLAY, FONT as _FONT
from narrative_debugger.widgets.kit.roles import FOREGROUND as _FOREGROUND, TOOLTIP as _TOOLTIP
from PySide6.QtCore import QModelIndex, Qt
from PySide6.QtGui import QColor, QFont, QTextLayout, QTextOption
from PySide6.QtWidgets import QLabel, QStyle, QVBoxLayout, QWidget

#: How many fired lines the history section lists (newest first).
FIRED_SHOWN = 200
#: Eligible lines whose "holds: …" text is kept (most recently painted first out last).
HOLDS_KEPT = 4096
#: (font, column width) pairs whose wrapped reason heights are kept.
WRAP_WIDTHS_KEPT = 8
#: The prerequisites column is never narrower than this (pixels) while Text or Fired show.
WHY_MIN = 240

_ELIGIBLE = QColor("#2e7d32")
_BLOCKED = QColor("#b23b3b")
_FIRED = QColor("#00838f")
_HEADING_BG = QColor("#e8eaf0")
_ELIGIBLE_BG = QColor("#eef7ee")

_ROLES = frozenset({_DISPLAY, _FONT, _BACKGROUND, _FOREGROUND, _TOOLTIP})


@dataclass(frozen=True)
class MonologueRow:
    """One row of the monologue table.

    Attributes:
        kind: ``heading``, ``line`` (a line of a pool judged at the tick) or ``fired``
            (a MonologueFired entry of the journal).
        title: the heading text (headings only).
        line: the monologue line (None for a fired id no pool defines).
        line_id: the line id.
        eligible: whether every prerequisite holds at the tick (``line`` rows).
        failing: the prerequisites that fail, in words.
        fired: how many times it fired up to the tick; tick: last (or this) firing tick.
    """

    kind: str
    title: str = ""
    line: MonologueLine | None = None
    line_id: str = ""
    eligible: bool = False
    failing: tuple[str, ...] = ()
    fired: int = 0
    tick: int | None = None


def describe_prerequisites(line: MonologueLine) -> list[str]:
    """The line's prerequisites in words (``interaction with sera-venn: 2× completed``)."""
    out = [f"{p.fact_id} at least {p.min_confidence.snake}" for p in line.facts]
    inter = line.interaction
    if inter is not None:
        state = f" {inter.state.snake}" if inter.state is not None else ""
        out.append(f"{inter.min_count}×{state} interaction with {inter.target_slug}")
    return out


def line_concerns(line: MonologueLine, slug: str, name: str = "") -> bool:
    """True when a line is about the NPC: its interaction prerequisite targets ``slug``,
    or a tag is the slug, a part of it, or a word of the NPC's display name."""
    if line.interaction is not None and line.interaction.target_slug == slug:
        return True
    words = {slug, *slug.split("-"), *(w.lower() for w in name.split())}
    return any(tag.lower() in words for tag in line.tags)


@dataclass(frozen=True)
class FiredByLine:
    """``by_line``: line id -> (journal indices, ticks) of its MonologueFired entries,
    in journal order (``prepare``)."""

    by_line: dict[str, tuple[list[int], list[int]]]


def prepare(playthrough: Playthrough, prepared: Prepared | None = None) -> FiredByLine:
    """The ``FiredByLine`` of a playthrough: O(F) in firings, so the loader makes it off
    the GUI thread."""
    by_line: dict[str, tuple[list[int], list[int]]] = {}
    index = playthrough.index
    for position, tick, line_id in index.monologues_fired if index is not None else ():
        indices, ticks = by_line.setdefault(line_id, ([], []))
        indices.append(position)
        ticks.append(tick)
    return FiredByLine(by_line)


def _fired_by_line(playthrough: Playthrough, prepared: Prepared | None) -> dict[str, tuple[list[int], list[int]]]:
    made = prepared.get(FiredByLine) if prepared is not None else None
    return (made if made is not None else prepare(playthrough)).by_line


def fired_count(state: StateAtTick) -> int:
    """How many MonologueFired entries have applied at ``state`` (O(log F))."""
    return bisect_right(state.index.monologues_fired, state.position - 1, key=lambda r: r[0])


def monologue_rows(playthrough: Playthrough, state: StateAtTick, npc: StableId | None, prepared: Prepared | None = None) -> list[MonologueRow]:
    """Every row the monologue view shows for ``npc`` at ``state``'s tick.

    O(L log F) for L lines of the pools and F firings in the journal: each line's
    firing count up to the tick is one bisection (``prepare``).

    Args:
        playthrough: the open playthrough (its content holds the pools).
        state: the narrative state at the tick.
        npc: the selected NPC, or None for one group of all lines.
        prepared: what the loader made for ``playthrough`` (its ``FiredByLine``), if anything.
    """
    knowledge = state.knowledge
    by_line = _fired_by_line(playthrough, prepared)
    applied = state.position - 1

    def judged(line: MonologueLine) -> MonologueRow:
        result = evaluate(line, knowledge)
        indices, ticks = by_line.get(line.id, ((), ()))
        count = bisect_right(indices, applied)
        return MonologueRow("line", line=line, line_id=line.id, eligible=result.eligible, failing=result.failing,
                            fired=count, tick=ticks[count - 1] if count else None)

    lines = list(playthrough.content.monologues.values())
    npc_state = playthrough.save.npcs.get(npc) if npc is not None else None
    groups: list[tuple[str, list[MonologueRow]]] = []
    if npc_state is not None:
        name = name_text(playthrough, npc)
        about = [judged(x) for x in lines if line_concerns(x, npc_state.slug, name)]
        ids = {r.line_id for r in about}
        groups.append((f"About {name}", about))
        groups.append(("Other lines", [judged(x) for x in lines if x.id not in ids]))
    else:
        groups.append(("All lines", [judged(x) for x in lines]))

    rows: list[MonologueRow] = []
    for title, group in groups:
        group.sort(key=lambda r: (not r.eligible, r.line_id))
        ok = sum(r.eligible for r in group)
        rows.append(MonologueRow("heading", title=f"{title}: {ok:,} of {len(group):,} eligible"))
        rows.extend(group)
    total = fired_count(state)
    shown = state.index.monologues_fired[max(0, total - FIRED_SHOWN) : total][::-1]
    more = f", newest {len(shown):,} shown" if len(shown) < total else ""
    rows.append(MonologueRow("heading", title=f"Fired up to the tick: {total:,}{more}"))
    for _, tick, line_id in shown:
        rows.append(MonologueRow("fired", line=playthrough.content.monologues.get(line_id), line_id=line_id, tick=tick))
    return rows


class MonologueModel(HeaderedTableModel):
    """The rows of ``monologue_rows`` as a table: status, line, prerequisites, text."""

    #: The roles ``data`` answers (``StaticTextDelegate`` asks no others).
    CELL_ROLES = _ROLES

    # Status, line id and the failing prerequisite first: they are what a narrow dock shows.
    STATUS, LINE, WHY, TEXT, FIRED = range(5)
    HEADERS = ("Status", "Line", "Prerequisites", "Text", "Fired")

    def __init__(self, parent=None) -> None:
        super().__init__(parent)
        self.rows: list[MonologueRow] = []
        self.culprit: str | None = None  # the line id a finding names
        self.culprit_defined = True  # False: the fired id no pool defines (M002)
        self._bold = QFont()
        self._bold.setBold(True)
        self._holds_text: OrderedDict[int, tuple[MonologueLine, str]] = OrderedDict()  # least recently used first

    def set_rows(self, rows: list[MonologueRow]) -> list[int] | None:
        """Show new rows.

        When every row keeps its kind (a tick step usually changes a few lines' status
        or counts), only the rows that differ are signalled and their numbers are
        returned; otherwise the model is reset and None is returned.
        """
        old = self.rows
        if len(old) == len(rows) and all(a.kind == b.kind for a, b in zip(old, rows)):
            self.rows = rows
            changed = [k for k, (a, b) in enumerate(zip(old, rows)) if a != b]
            signal_rows(self, changed)
            return changed
        self.beginResetModel()
        self.rows = rows
        self.endResetModel()
        return None

    def rowCount(self, parent=QModelIndex()) -> int:
        return 0 if parent.isValid() else len(self.rows)

    def data(self, index: QModelIndex, role=Qt.DisplayRole):
        if not index.isValid():
            return None
        role = int(role)  # plain ints: comparing Qt enums costs µs per call
        if role not in _ROLES:
            return None
        r = self.rows[index.row()]
        col = index.column()
        if r.kind == "heading":
            if role == _DISPLAY and col == 0:
                return r.title
            if role == _FONT:
                return self._bold
            if role == _BACKGROUND:
                return brush_of(row_tint(_HEADING_BG))
            return None
        if role == _DISPLAY:
            return self._display(r, col)
        if role == _FOREGROUND:
            if r.kind == "fired":
                return brush_of(ink_tint(_FIRED)) if col in (self.STATUS, self.FIRED) else None
            if col == self.STATUS or (col == self.WHY and not r.eligible):
                return brush_of(ink_tint(_ELIGIBLE if r.eligible else _BLOCKED))
            if col == self.FIRED:
                return brush_of(ink_tint(_FIRED))
            return None
        if role == _BACKGROUND and r.kind != "heading" and r.line_id == self.culprit and (r.kind == "line") == self.culprit_defined:
            return brush_of(row_tint(CULPRIT_BG))  # the dark palette's shade keeps its light text readable
        if role == _BACKGROUND and r.kind == "line" and r.eligible:
            return brush_of(row_tint(_ELIGIBLE_BG))
        if role == _FONT and col == self.STATUS and r.kind == "line" and r.eligible:
            return self._bold
        if role == _TOOLTIP:
            return plain_tip(self._tooltip(r))
        return None

    def _display(self, r: MonologueRow, col: int) -> str:
        line = r.line
        if col == self.LINE:
            return r.line_id
        if col == self.TEXT:
            return line.text if line is not None else "(no pool defines this line)"
        if r.kind == "fired":
            if col == self.STATUS:
                return "fired" if line is not None else "fired · no pool"
            if col == self.FIRED:
                return f"at {r.tick:,}"
            return f"pool {line.pool}" if line is not None else ""
        if col == self.STATUS:
            return "✔ eligible" if r.eligible else "✘ blocked"
        if col == self.FIRED:
            return f"{r.fired:,}× (last {r.tick:,})" if r.fired else ""
        if r.eligible:
            return self._holds(line)
        return "\n".join(r.failing)

    def _holds(self, line: MonologueLine) -> str:
        """``holds: …`` for an eligible line, kept per line (painted cells ask at every paint)."""
        cache = self._holds_text
        kept = cache.get(id(line))
        if kept is None or kept[0] is not line:
            prereqs = describe_prerequisites(line)
            kept = cache[id(line)] = (line, "holds: " + "; ".join(prereqs) if prereqs else "no prerequisites")
            if len(cache) > HOLDS_KEPT:
                cache.popitem(last=False)  # the least recently used: a content of more lines kept re-making them all
        cache.move_to_end(id(line))
        return kept[1]

    def _tooltip(self, r: MonologueRow) -> str:
        line = r.line
        if line is None:
            return f"{r.line_id}: no pool in monologues/ defines this line (M002)"
        parts = [f"{line.id} · pool {line.pool} · trigger {line.trigger or '—'}", line.text, ""]
        prereqs = describe_prerequisites(line)
        parts.append("Prerequisites: " + ("; ".join(prereqs) if prereqs else "none"))
        if r.failing:
            parts.append("Failing: " + "; ".join(r.failing))
        if line.tags:
            parts.append("Tags: " + ", ".join(line.tags))
        if r.fired:
            parts.append(f"Fired {r.fired:,}× so far, last at tick {r.tick:,}")
        return "\n".join(parts)


def wrapped_height(font: QFont, text: str, width: int) -> int:
    """Pixels ``text`` takes wrapped to ``width`` pixels as an item view wraps it (at word
    boundaries, else anywhere; each ``\n`` starts a line)."""
    option = QTextOption()
    option.setWrapMode(QTextOption.WrapAtWordBoundaryOrAnywhere)
    total = 0.0
    for paragraph in text.split("\n"):
        layout = QTextLayout(paragraph, font)
        layout.setTextOption(option)
        layout.beginLayout()
        while True:
            line = layout.createLine()
            if not line.isValid():
                break
            line.setLineWidth(max(1, width))
            total += line.height()
        layout.endLayout()
    return math.ceil(total)


class ReasonDelegate(StaticTextDelegate):
    """Draws a blocked line's failing prerequisites wrapped, every one whole (the view sizes
    those rows to fit); other cells are drawn as usual (one line, elided)."""

    def __init__(self, model: "MonologueModel", parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self._model = model

    def wraps(self, row: int) -> bool:
        """True for the rows whose Prerequisites cell is wrapped: blocked lines."""
        r = self._model.rows[row] if 0 <= row < len(self._model.rows) else None
        return r is not None and r.kind == "line" and not r.eligible

    def paint(self, painter, option, index) -> None:
        if not self.wraps(index.row()):
            super().paint(painter, option, index)
            return
        draw_item(self, painter, option, index, wrap=True)


class MonologueView(QWidget):
    """Monologue eligibility for the selected NPC at the committed tick.

    Refreshes on ``loaded``, ``tickChanged`` and ``npcChanged`` (not while a tick is
    dragged). Read-only: it emits no intents.

    Attributes:
        model: the MonologueModel; view: its QTableView; caption: the summary label.
    """

    def __init__(self, session: Session, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.setObjectName("monologueView")
        self.session = session
        self.model = MonologueModel(self)
        self.view = read_only_table(self.model, "monologueTable", self)
        self.view.setWordWrap(False)  # one line a row, but a blocked line's reasons wrap (ReasonDelegate); the tooltip holds the whole text
        self.view.verticalHeader().hide()
        self.view.setShowGrid(False)
        self.view.setTextElideMode(Qt.ElideRight)  # the row tooltip carries the whole text
        fit_columns(self.view, {MonologueModel.STATUS: "fired · no pool", MonologueModel.LINE: "harbor-nights_m_s_060",
                                MonologueModel.TEXT: "x" * 40, MonologueModel.FIRED: "12× (last 302,029)"},
                    stretch=MonologueModel.WHY)
        self._optional = {col: self.view.columnWidth(col) for col in (MonologueModel.FIRED, MonologueModel.TEXT)}
        self.reasons = ReasonDelegate(self.model, self.view)
        # (font key, width) -> text -> wrapped pixels, least recently used width first.
        self._wrapped: OrderedDict[tuple[str, int], dict[str, int]] = OrderedDict()
        self.view.setItemDelegateForColumn(MonologueModel.WHY, self.reasons)
        self.view.horizontalHeader().sectionResized.connect(self._on_section_resized)
        self.caption = QLabel(self)
        self.caption.setObjectName("monologueCaption")
        self.caption.setWordWrap(True)
        layout = QVBoxLayout(self)
        layout.setContentsMargins(2, 2, 2, 2)
        layout.addWidget(SteadyLabel(self.caption))
        layout.addWidget(self.view)

        self._shown: tuple | None = None  # (playthrough, position, tick, NPC) the rows show
        # ((playthrough, timeline, NPC, firings), position) the rows were made for
        self._rows_of: tuple | None = None
        self.why_action = add_why_action(self.view, session, self.why_target)
        self._stale = False  # a load put the refresh off (visibility.held) until catch_up
        session.loaded.connect(self._on_loaded)
        session.tickChanged.connect(self.refresh)
        session.npcChanged.connect(self.refresh)
        session.culpritChanged.connect(self._on_culprit)
        session.lineRequested.connect(self._on_line_requested)
        self.refresh()

    def _on_loaded(self) -> None:
        self._shown = self._rows_of = None  # the content may differ though the positions do not
        self.refresh()

    def catch_up(self) -> None:
        """Show what a load put off (``visibility.held``)."""
        if self._stale:
            self.refresh()

    def why_target(self) -> str | None:
        """``line:LINE_ID`` of the current row (why it can or cannot fire), or None on a heading."""
        row = self.view.currentIndex().row()
        r = self.model.rows[row] if 0 <= row < len(self.model.rows) else None
        return f"line:{r.line_id}" if r is not None and r.line_id and r.line is not None else None

    def resizeEvent(self, event) -> None:
        super().resizeEvent(event)
        self._fit_to_width()

    def _fit_to_width(self) -> None:
        """Show Text and Fired only where they leave the prerequisites ``WHY_MIN`` pixels.

        In a narrow dock the reason a line is blocked matters most; the row's tooltip
        still carries the text and the firing count.
        """
        view = self.view
        free = view.viewport().width() - view.columnWidth(MonologueModel.STATUS) - view.columnWidth(MonologueModel.LINE) - WHY_MIN
        for col, width in self._optional.items():
            show = free >= width
            if view.isColumnHidden(col) == show:
                view.setColumnHidden(col, not show)
                if show:
                    view.setColumnWidth(col, width)
            if show:
                free -= width

    def _on_section_resized(self, column: int, _old: int, _new: int) -> None:
        if column == MonologueModel.WHY:
            self.fit_reason_rows()

    def fit_reason_rows(self, rows: list[int] | None = None) -> None:
        """Size each blocked line's row to its failing prerequisites wrapped to the column width
        (two reasons are two lines or more, never cut); other rows keep one line.

        Args:
            rows: only these rows (those a tick step changed); None for every row.
        """
        view = self.view
        header = view.verticalHeader()
        one_line = header.defaultSectionSize()
        pad = max(0, one_line - view.fontMetrics().height())
        margin = view.style().pixelMetric(QStyle.PM_FocusFrameHMargin, None, view) + 1
        width = view.columnWidth(MonologueModel.WHY) - 2 * margin
        font = view.font()
        key = (font.key(), width)
        if key not in self._wrapped and len(self._wrapped) >= WRAP_WIDTHS_KEPT:
            self._wrapped.popitem(last=False)
        kept = self._wrapped.setdefault(key, {})  # text -> pixels, per font and width
        self._wrapped.move_to_end(key)
        heights = {}
        for k in range(len(self.model.rows)) if rows is None else rows:
            height = one_line
            if self.reasons.wraps(k):
                text = self.model.data(self.model.index(k, MonologueModel.WHY), Qt.DisplayRole) or ""
                wrapped = kept.get(text)
                if wrapped is None:
                    wrapped = kept[text] = wrapped_height(font, text, width)
                height = max(one_line, wrapped + pad)
            heights[k] = height
        set_section_sizes(view, heights=heights)  # repainted in this pass, not again in the next

    def refresh(self, *_args) -> None:
        """Rebuild the rows for the session's tick and NPC (once when a step selects the
        NPC and moves the tick, and once for the loaded, npcChanged and tickChanged of a load)."""
        self._stale = held(self)
        if self._stale:
            return  # refreshed in this dock's own pass, just before it paints
        state = self.session.state
        if state is None:
            self._shown = self._rows_of = None
            self.model.set_rows([])
            self.caption.setText("No save open")
            return
        playthrough = self.session.playthrough
        shown = (id(playthrough), state.position, state.tick, self.session.npc)
        if shown == self._shown:
            return  # a step that selects the NPC and then moves the tick: drawn once
        self._shown = shown
        fired = fired_count(state)
        # The rows are made of the facts (interactions included) and the firings up to
        # the position: a step that changed neither (a dialogue line, mostly) keeps them.
        rows_of = (id(playthrough), id(state.index), self.session.npc, fired)
        kept = self._rows_of
        if kept is not None and kept[0] == rows_of and not state.knowledge.changes_since(kept[1]):
            rows = self.model.rows
        else:
            rows = monologue_rows(playthrough, state, self.session.npc, self.session.prepared)
            changed = self.model.set_rows(rows)
            if changed is None:
                self.view.clearSpans()
                for k, r in enumerate(rows):
                    if r.kind == "heading":
                        self.view.setSpan(k, 0, 1, len(MonologueModel.HEADERS))
            self.fit_reason_rows(changed)
        self._rows_of = (rows_of, state.position)
        judged = [r for r in rows if r.kind == "line"]
        eligible = sum(r.eligible for r in judged)
        who = esc(name_text(playthrough, self.session.npc)) if self.session.npc is not None else "no NPC selected"
        caption = (
            f"<b>Monologues at tick {state.tick:,}</b> ({who}): "
            f"<span style='color:#2e7d32'>{eligible:,} eligible</span> · "
            f"<span style='color:#b23b3b'>{len(judged) - eligible:,} blocked</span> · "
            f"<span style='color:#00838f'>{fired:,} fired so far</span>"
        )
        if caption != self.caption.text():
            self.caption.setText(caption)
        self._select_culprit(repaint=False)

    # ----- a finding's culprit -----
    def _on_culprit(self, finding) -> None:
        """M001, M002, C004: select, centre and highlight the line (M002: the fired row of
        the id no pool defines, marked "fired · no pool")."""
        t = finding.target if finding is not None else None
        line_id = t.line_id if t is not None else None
        play = self.session.playthrough
        self.model.culprit = line_id
        self.model.culprit_defined = bool(line_id and play is not None and line_id in play.content.monologues)
        self._select_culprit()

    def _on_line_requested(self, line_id: str) -> None:
        """A Differences jump: select, centre and highlight the line as a culprit (the
        fired row when no pool of A's content defines it)."""
        play = self.session.playthrough
        self.model.culprit = line_id
        self.model.culprit_defined = play is not None and line_id in play.content.monologues
        self._select_culprit()

    def culprit_rows(self) -> list[int]:
        """The rows showing the culprit line (the judged line, or the fired id no pool defines)."""
        m = self.model
        if m.culprit is None:
            return []
        return [k for k, r in enumerate(m.rows) if r.kind != "heading" and r.line_id == m.culprit and (r.kind == "line") == m.culprit_defined]

    def _select_culprit(self, repaint: bool = True) -> None:
        """Select and centre the culprit's row; ``repaint`` the rows when the culprit itself
        changed (its pink tint moves), not on a refresh that signalled its own rows."""
        rows = self.culprit_rows()
        if rows:
            select_rows(self.view, rows[:1])
        if repaint:
            signal_all(self.model)

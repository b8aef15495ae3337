"""Pieces of the prompt preview: section colours, table models, the budget bar, the worker.

``PromptView`` (``widgets/prompt/view.py``) puts these together. Counting tokens
loads a tiktoken table (a fraction of a second) and encodes the whole prompt, so previews are
built by :func:`build_result` as a ``kit.jobs`` job, whose result comes back to the
GUI thread (style.md rule 5). All counts are
tokens of one encoding; ticks are game ticks.
"""

from __future__ import annotations

import threading
import time
from dataclasses import dataclass

from narrative_debugger.models.playthrough import Playthrough
from narrative_debugger.models.prompt.builder import PromptBuilder, PromptDiff, PromptPreview, compare
from narrative_debugger.models.prompt.sections import BY_LABEL
from narrative_debugger.widgets.kit.plain_text import esc, plain_tip
from narrative_debugger.widgets.kit.roles import ALIGN as _ALIGN, DECORATION as _DECORATION, DISPLAY as _DISPLAY
from narrative_debugger.widgets.kit.roles import FONT as _FONT, FOREGROUND as _FOREGROUND, RIGHT as _RIGHT
from narrative_debugger.widgets.kit.roles import TOOLTIP as _TOOLTIP
from narrative_debugger.widgets.kit.tables import HeaderedTableModel, signal_all
from PySide6.QtCore import QModelIndex, QObject, QPointF, QRectF, QSize, Qt
from PySide6.QtGui import QBrush, QColor, QFont, QPainter, QPalette, QPen
from PySide6.QtWidgets import QSizePolicy, QToolTip, QWidget

_FALLBACK_COLOUR = "#b8b8b8"
OVERFLOW_COLOUR = QColor("#d32f2f")


def section_colour(label: str) -> QColor:
    """The base colour of a section (``models.prompt.sections.SECTIONS``; grey for an unknown label)."""
    spec = BY_LABEL.get(label)
    return QColor(spec.colour if spec is not None else _FALLBACK_COLOUR)


def section_tint(label: str, strength: float = 0.22) -> QColor:
    """A light tint of the section colour, for text backgrounds (``strength`` 0..1 of colour)."""
    base = section_colour(label)
    mix = lambda c: round(255 + (c - 255) * strength)  # noqa: E731 - blend towards white
    return QColor(mix(base.red()), mix(base.green()), mix(base.blue()))


def legend_html(labels: list[str]) -> str:
    """Rich text with a colour swatch before each label (the legend of the text view)."""
    chips = [
        f'<span style="background-color:{section_colour(label).name()}">&nbsp;&nbsp;&nbsp;&nbsp;</span>'
        f"&nbsp;{esc(label)}"
        for label in labels
    ]
    return "&nbsp;&nbsp;&nbsp; ".join(chips)


# ----- table models -----

#: The roles each model answers; Qt asks for a dozen more on every cell of a repaint.
_SECTION_ROLES = frozenset({_DISPLAY, _DECORATION, _FONT, _ALIGN, _TOOLTIP})
_CARD_ROLES = frozenset({_DISPLAY, _FOREGROUND, _ALIGN, _TOOLTIP})
_INCLUDED_INK = QBrush(QColor("#2e7d32"))
_DROPPED_INK = QBrush(OVERFLOW_COLOUR)


class SectionTableModel(HeaderedTableModel):
    """Tokens per section, then two summary rows: the sum of sections and the whole prompt.

    The two totals differ where the blank-line joins merge with (or add to) the
    tokens around them. Column ``Δ`` is the change against the comparison preview.
    The tokens column's display value is an ``int``.
    """

    #: The roles ``data`` answers (``StaticTextDelegate`` asks no others).
    CELL_ROLES = _SECTION_ROLES

    HEADERS = COLUMNS = ("Section", "Tokens", "Share", "Δ")
    TIPS = ("Prompt section", "Tokens of the section alone", "Share of the sum of sections", "Change in tokens against the compared preview")
    SUM_LABEL = "sum of sections"
    TOTAL_LABEL = "whole prompt"

    def __init__(self, parent: QObject | None = None) -> None:
        super().__init__(parent)
        self._preview: PromptPreview | None = None
        self._before: dict[str, int] | None = None
        self._before_total = 0
        self._changed: set[str] = set()
        self._cells: list[tuple[tuple, QColor | None, QFont | None]] = []

    def set_preview(self, preview: PromptPreview | None, before: PromptPreview | None = None, diff: PromptDiff | None = None) -> None:
        """Show ``preview``; ``before``/``diff`` fill the Δ column and mark changed rows.

        The same sections as before (each tick step, usually) change the cells in place:
        a reset made the table measure its headers and every cell again. The cells are
        worked out here, once a preview: ``data`` is asked ~170 times a repaint.
        """
        old_sections = [s.label for s in self._preview.sections] if self._preview is not None else None
        same = preview is not None and old_sections == [s.label for s in preview.sections]
        if not same:
            self.beginResetModel()
        self._preview = preview
        self._before = {s.label: s.tokens for s in before.sections} if before else None
        self._before_total = before.total_tokens if before else 0
        self._changed = set(diff.changed) if diff else set()
        self._cells = [self._cells_of(row) for row in range(self.rowCount())]
        if same:
            signal_all(self)
        else:
            self.endResetModel()

    def rowCount(self, parent: QModelIndex = QModelIndex()) -> int:  # noqa: B008 - Qt signature
        if parent.isValid() or self._preview is None:
            return 0
        return len(self._preview.sections) + 2

    def _row(self, row: int) -> tuple[str, int, int | None]:
        """(label, tokens, tokens before or None) of a row; the last two rows are the totals."""
        p = self._preview
        n = len(p.sections)
        if row < n:
            s = p.sections[row]
            before = None if self._before is None else self._before.get(s.label, 0)
            return s.label, s.tokens, before
        if row == n:
            before = None if self._before is None else sum(self._before.values())
            return self.SUM_LABEL, p.section_sum, before
        return self.TOTAL_LABEL, p.total_tokens, None if self._before is None else self._before_total

    def _cells_of(self, row: int) -> tuple[tuple, QColor | None, QFont | None]:
        """(the four display values, the swatch, the font) of a row."""
        p = self._preview
        label, tokens, before = self._row(row)
        is_total = row >= len(p.sections)
        if row == len(p.sections) + 1:
            share = f"joins {p.total_tokens - p.section_sum:+d}"
        else:
            share = f"{100 * tokens / max(1, p.section_sum):.1f} %"
        delta = "" if before is None or before == tokens else f"{tokens - before:+d}"
        font = None
        if is_total or label in self._changed:
            font = QFont()
            font.setBold(is_total)
            font.setItalic(label in self._changed)
        return (label, tokens, share, delta), (None if is_total else section_colour(label)), font

    def data(self, index: QModelIndex, role: int = Qt.DisplayRole):
        role = int(role)
        if role not in _SECTION_ROLES or not index.isValid() or self._preview is None:
            return None
        row, col = index.row(), index.column()
        display, swatch, font = self._cells[row]
        if role == _DISPLAY:
            return display[col]
        if role == _DECORATION:
            return swatch if col == 0 else None
        if role == _FONT:
            return font
        if role == _ALIGN:
            return _RIGHT if col > 0 else None
        p = self._preview  # the tooltip
        if row < len(p.sections):
            label, tokens = display[0], display[1]
            text = p.sections[row].text
            note = " (changed)" if label in self._changed else ""
            return plain_tip(f"{label}{note}: {tokens} tokens\n\n{text[:400]}{'…' if len(text) > 400 else ''}")
        if row == len(p.sections) + 1:
            return "Tokens of the whole assembled prompt; sections are joined by a blank line."
        return None


class CardTableModel(HeaderedTableModel):
    """Story cards whose keys occur in the history: included, or dropped with the reason."""

    #: The roles ``data`` answers (``StaticTextDelegate`` asks no others).
    CELL_ROLES = _CARD_ROLES

    HEADERS = COLUMNS = ("Card", "Name", "Key", "Tokens", "Status")
    TIPS = ("The card's id", "The card's name", "The card key found in the history that fits",
            "Tokens of the card's text", "Included in the prompt, or dropped (and why)")

    def __init__(self, parent: QObject | None = None) -> None:
        super().__init__(parent)
        self._cards = []

    def card_at(self, row: int):
        """The ``CardRecord`` of ``row``, or None."""
        return self._cards[row] if 0 <= row < len(self._cards) else None

    def set_cards(self, cards) -> None:
        """Show these ``CardRecord``s (in place when the cards are the same ones)."""
        cards = list(cards)
        if cards == self._cards:
            return
        if len(cards) == len(self._cards) and cards:
            self._cards = cards
            signal_all(self)
            return
        self.beginResetModel()
        self._cards = cards
        self.endResetModel()

    def rowCount(self, parent: QModelIndex = QModelIndex()) -> int:  # noqa: B008 - Qt signature
        return 0 if parent.isValid() else len(self._cards)

    def data(self, index: QModelIndex, role: int = Qt.DisplayRole):
        role = int(role)
        if role not in _CARD_ROLES or not index.isValid():
            return None
        card = self._cards[index.row()]
        col = index.column()
        if role == _DISPLAY:
            status = "included" if card.included else f"dropped ({card.reason or 'budget'})"
            return (card.id, card.name, card.keyword, card.tokens, status)[col]
        if role == _FOREGROUND:
            return (_INCLUDED_INK if card.included else _DROPPED_INK) if col == 4 else None
        if role == _ALIGN:
            return _RIGHT if col == 3 else None
        if role == _TOOLTIP:
            why = "fits the lore budget (40 % of the available tokens)" if card.included else "over the lore budget (40 % of the available tokens)"
            # The whole id, name and key: the table elides them when narrow.
            return plain_tip(f"{card.id} · {card.name}: key {card.keyword!r} occurs in the history; {why}")
        return None


# ----- budget bar -----


class BudgetBar(QWidget):
    """A stacked horizontal bar: each section's tokens as a coloured segment over the budget.

    The part of the budget left free is drawn empty; tokens beyond the budget are
    hatched red behind a red budget line. A thin strip under the bar marks the
    leading tokens a prompt cache can reuse (``set_prefix``).
    """

    BAR_HEIGHT = 26
    STRIP_HEIGHT = 6

    def __init__(self, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self._preview: PromptPreview | None = None
        self._prefix: int | None = None
        self.setMouseTracking(True)
        self.setSizePolicy(QSizePolicy.Expanding, QSizePolicy.Fixed)
        self.setMinimumHeight(self.BAR_HEIGHT + self.STRIP_HEIGHT + 6)

    def sizeHint(self) -> QSize:
        return QSize(600, self.BAR_HEIGHT + self.STRIP_HEIGHT + 6)

    def set_preview(self, preview: PromptPreview | None, prefix_tokens: int | None = None) -> None:
        """Draw ``preview``; ``prefix_tokens`` is the cache-reusable prefix (None: no strip)."""
        self._preview = preview
        self._prefix = prefix_tokens
        self.update()

    def _scale(self) -> float:
        p = self._preview
        return max(p.budget, p.total_tokens, p.section_sum, 1)

    def _bar_rect(self) -> QRectF:
        return QRectF(1, 1, self.width() - 2, self.BAR_HEIGHT)

    def segments(self) -> list[tuple[str, int, QRectF]]:
        """(label, tokens, rectangle) of each section's segment, left to right."""
        if self._preview is None:
            return []
        bar = self._bar_rect()
        per_token = bar.width() / self._scale()
        out, x = [], bar.left()
        for s in self._preview.sections:
            w = s.tokens * per_token
            out.append((s.label, s.tokens, QRectF(x, bar.top(), w, bar.height())))
            x += w
        return out

    def paintEvent(self, event) -> None:  # noqa: N802 - Qt override
        painter = QPainter(self)
        painter.setRenderHint(QPainter.Antialiasing, False)
        bar = self._bar_rect()
        painter.fillRect(bar, self.palette().color(QPalette.Base))  # white, or the dark palette's base
        p = self._preview
        if p is None:
            painter.setPen(QColor("#888888"))
            painter.drawText(bar, Qt.AlignCenter, "no preview")
            painter.setPen(QColor("#999999"))
            painter.drawRect(bar)
            return
        per_token = bar.width() / self._scale()
        metrics = painter.fontMetrics()
        for label, tokens, rect in self.segments():
            painter.fillRect(rect, section_colour(label))
            if rect.width() > 2:
                painter.setPen(QPen(QColor(255, 255, 255, 170), 1))
                painter.drawLine(QPointF(rect.right(), rect.top()), QPointF(rect.right(), rect.bottom()))
            text = label if metrics.horizontalAdvance(label) + 8 < rect.width() else ""
            if text:
                painter.setPen(QColor("#ffffff"))
                painter.drawText(rect, Qt.AlignCenter, text)
        budget_x = bar.left() + p.budget * per_token
        used_x = bar.left() + max(p.total_tokens, p.section_sum) * per_token
        if p.total_tokens > p.budget:
            over = QRectF(budget_x, bar.top(), used_x - budget_x, bar.height())
            painter.fillRect(over, QBrush(QColor(211, 47, 47, 150), Qt.BDiagPattern))
            painter.setPen(QPen(OVERFLOW_COLOUR, 3))
            painter.drawLine(QPointF(budget_x, 0), QPointF(budget_x, bar.bottom() + self.STRIP_HEIGHT + 4))
        else:
            free = QRectF(used_x, bar.top(), budget_x - used_x, bar.height())
            text = f"{p.budget - p.total_tokens:,} free"
            if metrics.horizontalAdvance(text) + 12 < free.width():
                painter.setPen(QColor("#777777"))
                painter.drawText(free, Qt.AlignCenter, text)
        painter.setPen(QPen(QColor("#888888"), 1))
        painter.setBrush(Qt.NoBrush)
        painter.drawRect(bar)
        if self._prefix is not None:
            strip = QRectF(bar.left(), bar.bottom() + 3, self._prefix * per_token, self.STRIP_HEIGHT)
            painter.fillRect(strip, QColor("#1565c0"))

    def event(self, event) -> bool:
        if event.type() == event.Type.ToolTip and self._preview is not None:
            pos = event.position() if hasattr(event, "position") else event.pos()
            for label, tokens, rect in self.segments():
                if rect.left() <= pos.x() <= rect.right():
                    share = 100 * tokens / max(1, self._preview.budget)
                    QToolTip.showText(event.globalPos(), f"{label}: {tokens:,} tokens ({share:.1f} % of the budget)", self)
                    return True
            p = self._preview
            tip = f"{p.total_tokens:,} of {p.budget:,} tokens"
            if self._prefix is not None:
                tip += f"\nblue strip: {self._prefix:,} leading tokens reusable by a prompt cache"
            QToolTip.showText(event.globalPos(), tip, self)
            return True
        return super().event(event)


# ----- the worker -----


@dataclass(frozen=True)
class PreviewRequest:
    """What to build: one NPC at one tick in one encoding, and what to compare it with.

    Attributes:
        id: increasing request number; results of older ids are dropped.
        playthrough: the open playthrough (read-only).
        npc: the NPC's StableId.
        npc_slug: the NPC's slug.
        tick: the tick to preview (game ticks).
        encoding: tiktoken encoding name.
        compare: ``"tick"`` (with ``previous_tick``) or ``"turn"`` (the NPC's previous line).
        previous_tick: the session's previous tick.
    """

    id: int
    playthrough: Playthrough
    npc: int
    npc_slug: str
    tick: int
    encoding: str
    compare: str
    previous_tick: int


@dataclass(frozen=True)
class PreviewResult:
    """A built preview, the one it was compared with (if any) and their difference."""

    request: PreviewRequest
    preview: PromptPreview
    before: PromptPreview | None
    before_tick: int | None
    diff: PromptDiff | None
    seconds: float


def previous_turn_tick(playthrough: Playthrough, npc: int, tick: int) -> int | None:
    """Tick of the NPC's last ``DialogueLine`` before ``tick`` (its previous turn), or None."""
    if tick <= 0:
        return None
    for record in playthrough.index.dialogue_newest_first(npc, tick - 1):
        if record.speaker == npc:
            return record.tick
    return None


class BuilderCache:
    """One ``PromptBuilder`` per (playthrough, encoding), kept for reuse (it caches line counts).

    Used only from worker threads; a lock makes it safe if jobs ever overlap.
    """

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._playthrough: Playthrough | None = None
        self._builders: dict[str, PromptBuilder] = {}

    def get(self, playthrough: Playthrough, encoding: str) -> PromptBuilder:
        """The builder for this playthrough and encoding (loads the encoding on first use)."""
        with self._lock:
            if playthrough is not self._playthrough:
                self._playthrough, self._builders = playthrough, {}
            builder = self._builders.get(encoding)
            if builder is None:
                builder = self._builders[encoding] = PromptBuilder(playthrough, encoding=encoding)
            return builder


def build_result(request: PreviewRequest, builders: BuilderCache) -> PreviewResult:
    """Build the preview of ``request`` and its comparison (runs on a worker thread)."""
    start = time.perf_counter()
    builder = builders.get(request.playthrough, request.encoding)
    preview = builder.build(request.npc_slug, request.tick)
    if request.compare == "turn":
        before_tick = previous_turn_tick(request.playthrough, request.npc, request.tick)
    else:
        before_tick = request.previous_tick if request.previous_tick != request.tick else None
    before = builder.build(request.npc_slug, before_tick) if before_tick is not None else None
    diff = compare(before, preview) if before is not None else None
    return PreviewResult(request, preview, before, before_tick, diff, time.perf_counter() - start)

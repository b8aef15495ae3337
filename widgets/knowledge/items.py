"""Graphics items of the knowledge graph that draw a whole group of facts at once.

An expanded group can hold tens of thousands of facts (an NPC the player talked to
29 000 times), so it is one item, not one item per fact: ``FactRows`` (a category as
a list of rows) and ``ConversationGrid`` (an NPC's conversations as a grid of cells,
in sequence order). Each paints only the rows or cells inside the exposed rectangle
and reads a fact the first time it is painted (level of detail: no text when a row
is under a few pixels high on screen), answers hit tests (``fact_at``), gives the
scene rectangle of a fact (``rect_of``, for search) and shows a tooltip per fact.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Sequence

from narrative_debugger.models.domain.knowledge import parse_interaction_id
from narrative_debugger.models.domain.types import FactId, KnowledgeState
from narrative_debugger.widgets.kit.state_colors import (
    CHANGED_COLOR,
    FAULT_COLOR,
    INTERACTION_COLORS,
    SELECTION_COLOR,
)
from PySide6.QtCore import QPointF, QRectF, Qt
from PySide6.QtGui import QColor, QFont, QPainter, QPen
from PySide6.QtWidgets import QGraphicsItem, QStyleOptionGraphicsItem

#: QGraphicsItem.data keys used by every item of the graph: ("npc" | "fact" | "group" | "facts", payload).
KIND, PAYLOAD = 0, 1
ROW_H = 17.0
CELL = 14.0
#: A row or cell smaller than this on screen (pixels) is drawn without text.
TEXT_MIN_PX = 7.0

# Read once: each ``Qt.X`` costs microseconds through the namespace, and paint reads
# them for every fact row (see widgets/kit/roles.py).
_NO_BRUSH = Qt.NoBrush
_ELIDE_RIGHT = Qt.ElideRight
_LEFT_MIDDLE = Qt.AlignVCenter | Qt.AlignLeft
_CENTRE = Qt.AlignCenter


class _GroupItem(QGraphicsItem):
    """Shared parts: geometry, the lazily read facts, selection, tooltips, hit tests."""

    def __init__(self, ids: Sequence[FactId], facts, changed: frozenset[FactId], tip: Callable[[FactId], str]) -> None:
        super().__init__()
        self.ids = ids
        self._facts = facts
        self._changed = changed
        self._tip = tip
        self._read: dict[int, object] = {}
        self._row_of = {fid: k for k, fid in enumerate(ids)}
        self.selected: FactId | None = None
        self.setData(KIND, "facts")
        self.setAcceptHoverEvents(True)
        self.setFlag(QGraphicsItem.ItemUsesExtendedStyleOption, True)
        self.setCursor(Qt.PointingHandCursor)
        self.setZValue(4)

    def fact(self, k: int):
        """The FactKnowledge of the k-th fact (read once, on first paint)."""
        fact = self._read.get(k)
        if fact is None:
            fact = self._read[k] = self._facts[self.ids[k]]
        return fact

    def index_at(self, pos: QPointF) -> int | None:  # pragma: no cover - abstract
        raise NotImplementedError

    def local_rect(self, k: int) -> QRectF:  # pragma: no cover - abstract
        raise NotImplementedError

    def fact_at(self, scene_pos: QPointF) -> FactId | None:
        """The FactId under a scene point, or None."""
        k = self.index_at(self.mapFromScene(scene_pos))
        return self.ids[k] if k is not None else None

    def rect_of(self, fact_id: FactId) -> QRectF | None:
        """The scene rectangle of ``fact_id``'s row or cell, or None when it is not here."""
        k = self._row_of.get(fact_id)
        return self.mapRectToScene(self.local_rect(k)) if k is not None else None

    def contains_fact(self, fact_id: FactId) -> bool:
        return fact_id in self._row_of

    def set_selected(self, fact_id: FactId | None) -> None:
        """Ring the selected fact (if it is in this group)."""
        old = self._row_of.get(self.selected) if self.selected is not None else None
        self.selected = fact_id
        for k in (old, self._row_of.get(fact_id) if fact_id is not None else None):
            if k is not None:
                self.update(self.local_rect(k).adjusted(-4, -4, 4, 4))

    def hoverMoveEvent(self, event) -> None:
        k = self.index_at(event.pos())
        self.setToolTip(self._tip(self.ids[k]) if k is not None else "")
        super().hoverMoveEvent(event)

    @staticmethod
    def _visible(option: QStyleOptionGraphicsItem, painter: QPainter, size: float) -> tuple[QRectF, float]:
        lod = QStyleOptionGraphicsItem.levelOfDetailFromTransform(painter.worldTransform())
        return option.exposedRect, lod * size


class FactRows(_GroupItem):
    """A category's facts as rows (dot and topic), all of them, painted lazily.

    Args:
        ids: the FactIds, in the order shown.
        facts: FactId -> FactKnowledge at the tick (read per painted row).
        changed: FactIds changed since the previous step (bold, ringed).
        tip: FactId -> tooltip text.
        width: row width in scene units.
        dot: the category colour; ink, muted: text colours of the palette.
        whole_ids: label rows with the whole FactId (malformed ids), not the topic.
    """

    def __init__(self, ids, facts, changed, tip, *, width: float, dot: QColor, ink: QColor, muted: QColor,
                 whole_ids: bool = False) -> None:
        super().__init__(ids, facts, changed, tip)
        self._whole_ids = whole_ids
        self._width = width
        self._dot, self._ink, self._muted = dot, ink, muted

    def boundingRect(self) -> QRectF:
        return QRectF(0, 0, self._width, len(self.ids) * ROW_H)

    def local_rect(self, k: int) -> QRectF:
        return QRectF(0, k * ROW_H, self._width, ROW_H)

    def dot_center(self, k: int) -> QPointF:
        return QPointF(12, k * ROW_H + ROW_H / 2)

    def index_at(self, pos: QPointF) -> int | None:
        k = math.floor(pos.y() / ROW_H)
        return k if 0 <= k < len(self.ids) and 0 <= pos.x() <= self._width else None

    def paint(self, painter: QPainter, option, widget=None) -> None:
        exposed, px = self._visible(option, painter, ROW_H)
        first = max(0, math.floor(exposed.top() / ROW_H))
        last = min(len(self.ids), math.ceil(exposed.bottom() / ROW_H))
        font = QFont()
        font.setPointSizeF(9)
        for k in range(first, last):
            fact_id = self.ids[k]
            fact = self.fact(k)
            center = self.dot_center(k)
            stale = fact.state is KnowledgeState.Stale
            color = QColor("#c8ccd0") if stale else self._dot.darker(115)
            painter.setPen(QPen(color.darker(140), 1))
            painter.setBrush(color)
            painter.drawEllipse(center, 5, 5)
            if fact_id in self._changed:
                painter.setPen(QPen(CHANGED_COLOR, 2.5))
                painter.setBrush(_NO_BRUSH)
                painter.drawEllipse(center, 8, 8)
            if fact_id == self.selected:
                painter.setPen(QPen(SELECTION_COLOR, 2.5))
                painter.setBrush(_NO_BRUSH)
                painter.drawEllipse(center, 9.5, 9.5)
            if px < TEXT_MIN_PX:
                continue
            contradicted = fact.state is KnowledgeState.Contradicted
            font.setBold(fact_id in self._changed)
            font.setItalic(stale)
            font.setStrikeOut(contradicted)
            painter.setFont(font)
            painter.setPen(FAULT_COLOR if contradicted else self._muted if stale else self._ink)
            topic = fact_id.split(".", 1)[1] if "." in fact_id and not self._whole_ids else fact_id
            text = painter.fontMetrics().elidedText(topic, _ELIDE_RIGHT, int(self._width - 28))
            painter.drawText(QRectF(24, k * ROW_H, self._width - 28, ROW_H), _LEFT_MIDDLE, text)


class ConversationGrid(_GroupItem):
    """An NPC's conversations as a grid of cells in sequence order, filled by outcome.

    A cell shows its sequence number when it is big enough on screen; the tooltip
    names the FactId, state, ticks and topics.

    Args:
        ids: interaction FactIds with one NPC, in sequence order.
        facts, changed, tip: as for ``FactRows``.
        columns: cells per row.
    """

    def __init__(self, ids, facts, changed, tip, *, columns: int, ink: QColor) -> None:
        super().__init__(ids, facts, changed, tip)
        self.columns = max(1, columns)
        self._ink = ink

    def boundingRect(self) -> QRectF:
        rows = math.ceil(len(self.ids) / self.columns)
        return QRectF(0, 0, self.columns * CELL, rows * CELL)

    def local_rect(self, k: int) -> QRectF:
        return QRectF((k % self.columns) * CELL, (k // self.columns) * CELL, CELL, CELL)

    def index_at(self, pos: QPointF) -> int | None:
        col, row = math.floor(pos.x() / CELL), math.floor(pos.y() / CELL)
        if not (0 <= col < self.columns and row >= 0):
            return None
        k = row * self.columns + col
        return k if k < len(self.ids) else None

    def paint(self, painter: QPainter, option, widget=None) -> None:
        exposed, px = self._visible(option, painter, CELL)
        first_row = max(0, math.floor(exposed.top() / CELL))
        last_row = math.ceil(exposed.bottom() / CELL)
        first_col = max(0, math.floor(exposed.left() / CELL))
        last_col = min(self.columns, math.ceil(exposed.right() / CELL))
        font = QFont()
        font.setPointSizeF(3.2)
        painter.setFont(font)
        n = len(self.ids)
        for row in range(first_row, last_row):
            for col in range(first_col, last_col):
                k = row * self.columns + col
                if k >= n:
                    break
                meta = self.fact(k).interaction
                rect = QRectF(col * CELL + 1, row * CELL + 1, CELL - 2, CELL - 2)
                color = INTERACTION_COLORS[meta.interaction_state] if meta is not None else FAULT_COLOR
                painter.fillRect(rect, color)
                fact_id = self.ids[k]
                if fact_id in self._changed or fact_id == self.selected:
                    painter.setPen(QPen(SELECTION_COLOR if fact_id == self.selected else CHANGED_COLOR, 2))
                    painter.setBrush(_NO_BRUSH)
                    painter.drawRect(rect.adjusted(-1, -1, 1, 1))
                if px >= 3 * TEXT_MIN_PX:
                    parsed = parse_interaction_id(fact_id)
                    painter.setPen(QColor("white"))
                    painter.drawText(rect, _CENTRE, str(parsed[1]) if parsed else "?")

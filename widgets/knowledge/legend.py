"""The key to the knowledge graph: edge styles, NPC colours, outcome colours, fact marks,
and how to move around the graph.

Painted in widget coordinates (not in the graph's scene) so it stays crisp and
readable whatever the graph's zoom; its background and text follow the palette.
"""

from __future__ import annotations

from narrative_debugger.models.domain.types import InteractionState, KnowledgeConfidence, RelationshipState
from narrative_debugger.widgets.kit.state_colors import (
    CHANGED_COLOR,
    FAULT_COLOR,
    INTERACTION_COLORS,
    RELATIONSHIP_COLORS,
    SELECTION_COLOR,
    confidence_label,
    confidence_pen,
    palette_colors,
    state_label,
)
from PySide6.QtCore import QPointF, QSize, Qt
from PySide6.QtGui import QFont, QPainter, QPen, QPolygonF
from PySide6.QtWidgets import QWidget


def _font(size: float, bold: bool = False, italic: bool = False) -> QFont:
    font = QFont()
    font.setPointSizeF(size)
    font.setBold(bold)
    font.setItalic(italic)
    return font


class GraphLegend(QWidget):
    """A painted key to the graph's colours and line styles."""

    def __init__(self, parent=None) -> None:
        super().__init__(parent)
        self.setAccessibleName("Knowledge graph legend")

    def sizeHint(self) -> QSize:
        return QSize(190, 640)

    def _entries(self):
        yield "title", "Player knows (edges)"
        for conf in reversed(KnowledgeConfidence):
            yield "pen", (confidence_pen(conf), confidence_label(conf))
        yield "title", "NPC (player's view)"
        for rel in RelationshipState:
            yield "disc", (RELATIONSHIP_COLORS[rel], state_label(rel))
        yield "title", "Conversation outcome"
        for state in InteractionState:
            yield "diamond", (INTERACTION_COLORS[state], state_label(state))
        yield "title", "Fact"
        yield "ring", (CHANGED_COLOR, "changed last step")
        yield "ring", (SELECTION_COLOR, "selected")
        yield "text", (FAULT_COLOR, "contradicted", True)
        yield "text", (None, "stale", False)
        yield "malformed", (FAULT_COLOR, "malformed FactId")
        yield "title", "Moving around"
        for hint in ("wheel: zoom at the mouse", "drag: pan", "click ▸ a title: show all", "Fit: the whole graph"):
            yield "hint", hint

    def paintEvent(self, event) -> None:
        p = QPainter(self)
        p.setRenderHint(QPainter.Antialiasing)
        colors = palette_colors(self.palette())
        p.fillRect(self.rect(), colors.panel)
        y = 10.0
        for kind, value in self._entries():
            if kind == "title":
                y += 8
                p.setFont(_font(9, bold=True))
                p.setPen(colors.ink)
                p.drawText(QPointF(10, y + 10), value)
                y += 18
                continue
            if kind == "hint":
                p.setFont(_font(8.5))
                p.setPen(colors.muted)
                p.drawText(QPointF(12, y + 11), value)
                y += 16
                continue
            p.setFont(_font(9))
            mid = y + 7
            if kind == "pen":
                pen, label = value
                p.setPen(pen)
                p.drawLine(QPointF(12, mid), QPointF(44, mid))
            elif kind == "disc":
                color, label = value
                p.setPen(QPen(color.darker(140), 1))
                p.setBrush(color)
                p.drawEllipse(QPointF(28, mid), 6, 6)
            elif kind == "diamond":
                color, label = value
                p.setPen(QPen(color.darker(140), 1))
                p.setBrush(color)
                p.drawPolygon(QPolygonF([QPointF(28, mid - 6), QPointF(34, mid),
                                         QPointF(28, mid + 6), QPointF(22, mid)]))
            elif kind == "ring":
                color, label = value
                p.setPen(QPen(color, 2.5))
                p.setBrush(Qt.NoBrush)
                p.drawEllipse(QPointF(28, mid), 6, 6)
            elif kind == "malformed":
                color, label = value
                p.setPen(QPen(color, 2))
                p.setBrush(Qt.NoBrush)
                p.drawRect(16, int(mid - 6), 24, 12)
                p.setPen(color)
                p.setFont(_font(8, bold=True))
                p.drawText(QPointF(24, mid + 4), "⚠")
                p.setFont(_font(9))
            else:
                color, label, strike = value
                color = color if color is not None else colors.muted
                font = _font(9, italic=not strike)
                font.setStrikeOut(strike)
                p.setFont(font)
                p.setPen(color)
                p.drawText(QPointF(14, mid + 4), "topic")
                p.setFont(_font(9))
            p.setPen(colors.ink)
            p.drawText(QPointF(54, mid + 4), label)
            y += 18
        p.end()

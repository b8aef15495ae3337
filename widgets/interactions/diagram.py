"""The InteractionState machine of schema §3.2, drawn with one NPC's history on it.

Nodes and legal edges are laid out like the schema's drawing: Active on top with
"dialogue opens" beside it, Completed / WalkedAway / Confrontation below, and
ConflictAbandoned under Confrontation. Completed is drawn once; the
Confrontation → Completed edge curves under WalkedAway. Each edge carries a badge
with how many of the NPC's interactions took it up to the tick. Moves the schema
forbids (``TransitionRecord.legal`` False) are drawn as bent red edges whose
badge and tooltip give their I001 finding.
"""

from __future__ import annotations

import math
from collections import Counter
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field

from narrative_debugger.models.domain.types import TRANSITIONS, InteractionState
from narrative_debugger.models.rules.findings import Finding
from narrative_debugger.models.timeline.index import TransitionRecord
from narrative_debugger.widgets.kit.state_colors import (
    FAULT_COLOR,
    INK,
    INTERACTION_COLORS,
    MUTED_INK,
    SELECTION_COLOR,
    ink_tint,
    over,
    palette_colors,
    row_tint,
    state_label,
    text_on,
)
from narrative_debugger.widgets.kit.plain_text import esc
from PySide6.QtCore import QEvent, QPointF, QRectF, Qt
from PySide6.QtGui import QBrush, QColor, QFont, QPainter, QPainterPath, QPen, QPolygonF
from PySide6.QtWidgets import QGraphicsItem, QGraphicsScene, QGraphicsView

S = InteractionState
NODE_W, NODE_H = 166.0, 50.0
#: Node centres, following the drawing of schema §3.2 (None is "dialogue opens").
POSITIONS: dict[InteractionState | None, QPointF] = {
    None: QPointF(215, 0),
    S.Active: QPointF(0, 0),
    S.Completed: QPointF(-205, 150),
    S.WalkedAway: QPointF(0, 150),
    S.Confrontation: QPointF(205, 150),
    S.ConflictAbandoned: QPointF(205, 290),
}
#: How each legal edge is routed: (start side, end side, control points or None for straight).
ROUTES = {
    (None, S.Active): ("left", "right", None),
    (S.Active, S.Completed): ("bottom", "top", None),
    (S.Active, S.WalkedAway): ("bottom", "top", None),
    (S.Active, S.Confrontation): ("bottom", "top", None),
    (S.Confrontation, S.Completed): ("bottom", "bottom", (QPointF(165, 300), QPointF(-205, 300))),
    (S.Confrontation, S.ConflictAbandoned): ("bottom", "top", None),
}
assert set(ROUTES) == set(TRANSITIONS)


@dataclass
class DiagramData:
    """What the diagram shows for one NPC at one tick.

    Attributes:
        counts: (source, target) -> legal moves taken so far.
        illegal: (source, target) -> the forbidden moves and their I001 findings.
        states_now: InteractionState -> how many of the NPC's interactions are in it now.
        in_progress: states of the NPC's interactions still in progress (highlighted).
        path: (source, target) moves of the selected interaction (drawn in blue).
    """

    counts: Counter = field(default_factory=Counter)
    illegal: dict = field(default_factory=dict)
    states_now: Counter = field(default_factory=Counter)
    in_progress: set = field(default_factory=set)
    path: set = field(default_factory=set)


def diagram_data(counts: Mapping[tuple, int], illegal: Sequence[TransitionRecord],
                 path: Sequence[TransitionRecord], findings_by_tick: dict[int, list[Finding]],
                 states_now: Counter, in_progress: set) -> DiagramData:
    """Assemble what the diagram shows from precomputed per-NPC aggregates.

    Nothing here is proportional to the NPC's interaction count: the legal-edge
    counts come from the timeline's per-kind indices, and only the (few) forbidden
    moves are matched to their I001 findings.

    Args:
        counts: (source, target) -> legal moves taken up to the tick
            (``StateAtTick.transition_counts(npc)``).
        illegal: the NPC's forbidden moves up to the tick, in journal order
            (``StateAtTick.illegal_transitions(npc)``).
        path: the selected interaction's moves up to the tick
            (``StateAtTick.fact_transitions(fact)``, empty when none is selected).
        findings_by_tick: I001 findings of the playthrough by tick.
        states_now: current state counts of the NPC's interactions.
        in_progress: states to highlight.
    """
    data = DiagramData(states_now=states_now, in_progress=in_progress)
    data.counts.update({key: n for key, n in counts.items() if n})
    for rec in illegal:
        candidates = findings_by_tick.get(rec.tick, [])
        entry = f"journal[{rec.index}]"  # the replay locates I001 at the journal entry of the move
        match = next((f for f in candidates if f.location.startswith(entry + ".") or f.location == entry),
                     next((f for f in candidates if rec.fact_id in f.message), None))
        data.illegal.setdefault((rec.source, rec.target), []).append((rec, match))
    data.path.update((rec.source, rec.target) for rec in path)
    return data


def _anchor(state, side: str) -> QPointF:
    c = POSITIONS[state]
    w, h = (120.0, 34.0) if state is None else (NODE_W, NODE_H)
    return {"left": QPointF(c.x() - w / 2, c.y()), "right": QPointF(c.x() + w / 2, c.y()),
            "top": QPointF(c.x(), c.y() - h / 2), "bottom": QPointF(c.x(), c.y() + h / 2)}[side]


def _arrow_head(path: QPainterPath, size: float = 10.0) -> QPolygonF:
    end = path.pointAtPercent(1.0)
    before = path.pointAtPercent(0.97)
    angle = math.atan2(end.y() - before.y(), end.x() - before.x())
    left = QPointF(end.x() - size * math.cos(angle - 0.42), end.y() - size * math.sin(angle - 0.42))
    right = QPointF(end.x() - size * math.cos(angle + 0.42), end.y() - size * math.sin(angle + 0.42))
    return QPolygonF([end, left, right])


def _node_rect(state) -> QRectF:
    c = POSITIONS[state]
    w, h = (120.0, 34.0) if state is None else (NODE_W, NODE_H)
    return QRectF(c.x() - w / 2, c.y() - h / 2, w, h)


def _detour(source, target, n: int) -> QPainterPath:
    """A bent path for a forbidden move that misses every other node (tries growing bends)."""
    a, b = POSITIONS[source], POSITIONS[target]
    dx, dy = b.x() - a.x(), b.y() - a.y()
    length = math.hypot(dx, dy) or 1.0
    nx, ny = -dy / length, dx / length
    others = [_node_rect(st).adjusted(-6, -6, 6, 6) for st in POSITIONS if st not in (source, target)]
    ends = (_node_rect(source).adjusted(-2, -2, 2, 2), _node_rect(target).adjusted(-2, -2, 2, 2))
    fallback = None
    for bend in (50.0, 80.0, 110.0, 140.0, 170.0, 200.0):
        for side in (1.0, -1.0):
            k = side * (bend + 20.0 * n)
            mid = QPointF((a.x() + b.x()) / 2 + nx * k, (a.y() + b.y()) / 2 + ny * k)
            path = QPainterPath(a)
            path.quadTo(mid, b)
            points = [path.pointAtPercent(t / 60) for t in range(61)]
            outside = [p for p in points if not any(r.contains(p) for r in ends)]
            if len(outside) < 2:
                continue
            trimmed = QPainterPath(outside[0])
            for p in outside[1:]:
                trimmed.lineTo(p)
            if fallback is None:
                fallback = trimmed
            if not any(r.contains(p) for r in others for p in outside):
                return trimmed
    return fallback if fallback is not None else QPainterPath(a)


def _font(size: float, bold: bool = False) -> QFont:
    font = QFont()
    font.setPointSizeF(size)
    font.setBold(bold)
    return font


class StateMachineDiagram(QGraphicsView):
    """A view of the §3.2 state machine; call ``show_data`` to redraw."""

    def __init__(self, parent=None) -> None:
        super().__init__(parent)
        self.setScene(QGraphicsScene(self))
        self._shown: DiagramData | None = None
        self.setRenderHints(QPainter.Antialiasing | QPainter.TextAntialiasing)
        self._paint_background()
        self.setFrameShape(QGraphicsView.NoFrame)
        self.setHorizontalScrollBarPolicy(Qt.ScrollBarAlwaysOff)
        self.setVerticalScrollBarPolicy(Qt.ScrollBarAlwaysOff)
        #: (source, target, legal) -> the badge text drawn on that edge (for tests).
        self.edge_labels: dict[tuple, str] = {}
        #: States drawn as "in progress now".
        self.highlighted: set[InteractionState] = set()
        #: Each text drawn on a fill: ``(text, ink, fill as shown)``, opaque colours (for tests:
        #: the ink is chosen by contrast with the fill, ``state_colors.text_on``).
        self.texts: list[tuple[str, QColor, QColor]] = []
        self.show_data(DiagramData())

    def resizeEvent(self, event) -> None:
        super().resizeEvent(event)
        self.refit()

    def refit(self) -> None:
        """Scale the drawing to the view (never magnified past 1.3)."""
        rect = self.sceneRect()
        self.fitInView(rect, Qt.KeepAspectRatio)
        if self.transform().m11() > 1.3:
            self.resetTransform()
            self.scale(1.3, 1.3)
            self.centerOn(rect.center())

    # ----- drawing -----
    def _paint_background(self) -> None:
        """Warm paper on a light palette; the palette's own base on a dark one."""
        self.setBackgroundBrush(self._canvas())

    def _canvas(self) -> QColor:
        colors = palette_colors(self.palette())
        return colors.canvas if colors.dark else QColor("#fbfaf7")

    def changeEvent(self, event) -> None:  # noqa: N802 (Qt override)
        super().changeEvent(event)
        if event.type() in (QEvent.PaletteChange, QEvent.ApplicationPaletteChange):
            self._paint_background()
            data, self._shown = self._shown, None
            if data is not None:  # the inks follow the palette's canvas
                self.show_data(data)

    def show_data(self, data: DiagramData) -> None:
        """Redraw nodes, legal edges with counts, illegal edges and highlights (nothing to
        do when ``data`` is what is drawn: a step that selects another NPC with the same
        counts, or the same NPC again)."""
        if data == self._shown:
            return
        self._shown = data
        scene = self.scene()
        scene.clear()
        self.edge_labels = {}
        self.texts = []
        dark = palette_colors(self.palette()).dark
        ink = ink_tint(INK, self.palette())
        unused = palette_colors(self.palette()).grid if dark else QColor("#c3c8ce")
        self.highlighted = set(data.in_progress)
        for key, (start, end, controls) in ROUTES.items():
            path = QPainterPath(_anchor(key[0], start))
            if controls is None:
                path.lineTo(_anchor(key[1], end))
            else:
                path.cubicTo(controls[0], controls[1], _anchor(key[1], end))
            count = data.counts.get(key, 0)
            selected = key in data.path
            color = SELECTION_COLOR if selected else (ink if count else unused)
            width = 3.2 if selected else (1.4 + min(count, 24) * 0.12 if count else 1.2)
            self._edge(path, QPen(color, width), color)
            mid = path.pointAtPercent(0.5 if controls else 0.45)
            tip = f"{state_label(key[0]) if key[0] else 'dialogue opens'} → {state_label(key[1])}: taken {count:,}×"
            self._badge(mid, f"{count:,}", color if count else MUTED_INK, tip)
            self.edge_labels[(key[0], key[1], True)] = f"{count:,}"
        for n, (key, items) in enumerate(sorted(data.illegal.items(), key=lambda kv: str(kv[0]))):
            self._illegal_edge(key, items, n)
        for state in (None, *InteractionState):
            self._node(state, data)
        scene.setSceneRect(scene.itemsBoundingRect().adjusted(-14, -14, 14, 14))
        self.refit()

    def _edge(self, path: QPainterPath, pen: QPen, color: QColor, z: float = 1) -> None:
        pen.setCapStyle(Qt.RoundCap)
        item = self.scene().addPath(path, pen)
        item.setZValue(z)
        head = self.scene().addPolygon(_arrow_head(path, 9 + pen.widthF()), QPen(color, 1), QBrush(color))
        head.setZValue(z + 0.1)

    def _badge(self, at: QPointF, text: str, fill: QColor, tooltip: str, z: float = 6) -> None:
        label = self.scene().addSimpleText(text, _font(9, bold=True))
        r = label.boundingRect()
        w, h = max(r.width() + 12, 22), r.height() + 4
        box = self.scene().addRect(QRectF(at.x() - w / 2, at.y() - h / 2, w, h), QPen(fill.darker(120), 1),
                                   QBrush(fill))
        box.setZValue(z)
        box.setToolTip(tooltip)
        ink = text_on(fill)
        self.texts.append((text, ink, QColor(fill.rgb())))
        label.setBrush(ink)
        label.setPos(at.x() - r.width() / 2, at.y() - r.height() / 2)
        label.setZValue(z + 0.1)
        label.setToolTip(tooltip)

    def _illegal_edge(self, key, items, n: int) -> None:
        source, target = key
        a = POSITIONS[source]
        pen = QPen(FAULT_COLOR, 2.6, Qt.DashLine)
        if source == target:
            top = QPointF(a.x() + NODE_W / 2 - 20, a.y() - NODE_H / 2)
            path = QPainterPath(top)
            path.cubicTo(QPointF(top.x() + 10, top.y() - 60), QPointF(top.x() + 70, top.y() - 20),
                         QPointF(a.x() + NODE_W / 2, a.y() - 6))
        else:
            path = _detour(source, target, n)
        self._edge(path, pen, FAULT_COLOR, z=3)
        codes = sorted({f.code for _, f in items if f is not None}) or ["I001"]
        text = f"{'/'.join(codes)} ×{len(items):,}" if len(items) > 1 else codes[0]
        lines = [f"<b>Illegal: {state_label(source) if source else 'nothing'} → {state_label(target)}</b> "
                 "(schema §3.2 forbids it)"]
        for rec, finding in items[:12]:
            detail = f"{finding.code}: {finding.message}" if finding else "no finding recorded"
            lines.append(esc(f"tick {rec.tick:,}, {rec.fact_id} — {detail}"))
        if len(items) > 12:
            lines.append(f"… and {len(items) - 12:,} more")
        self._badge(path.pointAtPercent(0.5), text, FAULT_COLOR, "<br>".join(lines), z=7)
        self.edge_labels[(source, target, False)] = text

    def _node(self, state, data: DiagramData) -> None:
        scene = self.scene()
        c = POSITIONS[state]
        if state is None:
            w, h = 120.0, 34.0
            fill = row_tint(QColor("#f1efe9"), self.palette())
            box = scene.addRect(QRectF(c.x() - w / 2, c.y() - h / 2, w, h), QPen(MUTED_INK, 1, Qt.DashLine), QBrush(fill))
            box.setZValue(4)
            box.setToolTip("InteractionStarted: the dialogue box opens")
            self._label("dialogue opens", c, 9.5, False, fill)
            return
        color = INTERACTION_COLORS[state]
        now = state in data.in_progress
        fill = QColor(color)
        fill.setAlpha(255 if now else 60)
        pen = QPen(color.darker(130), 4 if now else 1.6)
        rect = QRectF(c.x() - NODE_W / 2, c.y() - NODE_H / 2, NODE_W, NODE_H)
        if now:
            halo = QColor(color)
            halo.setAlpha(90)
            glow = scene.addRect(rect.adjusted(-7, -7, 7, 7), QPen(halo, 6), QBrush(Qt.NoBrush))
            glow.setZValue(3.5)
        path = QPainterPath()
        path.addRoundedRect(rect, 10, 10)
        node = scene.addPath(path, pen, QBrush(fill))
        node.setZValue(4)
        terminal = "terminal" if not state.in_progress else "in progress"
        node.setToolTip(f"<b>{state_label(state)}</b> ({terminal})<br>{data.states_now.get(state, 0):,} of this NPC's "
                        "interactions are in this state now"
                        + ("<br><b>an interaction is in progress here</b>" if now else ""))
        self._label(state_label(state), QPointF(c.x(), c.y() - 8), 10.5, True, fill)
        held = data.states_now.get(state, 0)
        sub = ("● in progress now" if now else f"{held:,} here now" if held else "none here")
        self._label(sub, QPointF(c.x(), c.y() + 10), 8.5, False, fill)

    def _label(self, text: str, center: QPointF, size: float, bold: bool, fill: QColor) -> QGraphicsItem:
        """``text`` centred on a node of ``fill`` (translucent fills as shown on the canvas),
        in the near-black or white that contrasts more with it (``text_on``)."""
        canvas = self._canvas()
        ink = text_on(fill, canvas)
        self.texts.append((text, ink, over(fill, canvas)))
        item = self.scene().addSimpleText(text, _font(size, bold))
        item.setBrush(ink)
        r = item.boundingRect()
        item.setPos(center.x() - r.width() / 2, center.y() - r.height() / 2)
        item.setZValue(5)
        return item

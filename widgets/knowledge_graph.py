"""The knowledge graph tab: the player in the centre, NPCs to the left, facts to the right.

Reading the picture:

* the player is the dark disc in the middle;
* NPCs sit on an arc to the left, filled with the colour of what the player thinks of
  them (``RelationshipState`` from the player's entity knowledge; grey when the
  player has no entry), labelled with their name, relationship level and score;
* each NPC's most recent conversations (interaction facts) are small diamonds
  between the player and that NPC, filled with their ``InteractionState`` colour and
  tied to the NPC by a thin line;
* ordinary facts are grouped by category in cards on the right, each card showing
  its count and only its most recent facts;
* every edge from the player to a fact is drawn by confidence: Direct solid thick,
  KnowsDetails solid, KnowsOf dashed, Suspects dotted.

Clicking an NPC selects it in the session; clicking a fact selects the fact.
"""

from __future__ import annotations

import heapq
import math
from bisect import bisect_left
from collections.abc import Sequence

from narrative_debugger.models.domain.knowledge import interaction_prefix, parse_interaction_id
from narrative_debugger.models.domain.types import FactId, KnowledgeState, RelationshipState
from narrative_debugger.models.timeline.state_view import StateAtTick
from narrative_debugger.widgets.plain_text import counted, plain_tip
from narrative_debugger.widgets.fact_model import categories_in
from narrative_debugger.widgets.knowledge_legend import GraphLegend
from narrative_debugger.widgets.state_colors import (
    CHANGED_COLOR,
    FAULT_COLOR,
    INK,
    INTERACTION_COLORS,
    MUTED_INK,
    RELATIONSHIP_COLORS,
    SELECTION_COLOR,
    category_color,
    confidence_label,
    confidence_pen,
    readable_text,
    source_label,
    state_label,
)
from narrative_debugger.widgets.why import add_why_action
from PySide6.QtCore import QPointF, QRectF, Qt
from PySide6.QtGui import QBrush, QColor, QFont, QPainter, QPainterPath, QPen, QPolygonF
from PySide6.QtWidgets import (
    QGraphicsEllipseItem,
    QGraphicsItem,
    QGraphicsPathItem,
    QGraphicsScene,
    QGraphicsSimpleTextItem,
    QGraphicsView,
    QHBoxLayout,
    QLabel,
    QSpinBox,
    QVBoxLayout,
    QWidget,
)

KIND, PAYLOAD = 0, 1  # QGraphicsItem.data keys: ("npc" | "fact", StableId | FactId)
NPC_RADIUS, PLAYER_RADIUS = 30.0, 40.0
NPC_RING = 300.0
#: NPCs drawn at most (the game has 30-80 Active NPCs, D-026); the selected one is always drawn.
MAX_NPCS = 12
#: Above this many NPCs, nodes shrink and fewer conversations are drawn per NPC.
COMPACT_NPCS = 7
CARD_X, CARD_W, CARD_GAP, ROW_H, TITLE_H = 250.0, 220.0, 10.0, 17.0, 24.0
HEIGHT = 720.0
CONVERSATION_INK = QColor(74, 85, 98, 150)


def _font(size: float, bold: bool = False, italic: bool = False) -> QFont:
    font = QFont()
    font.setPointSizeF(size)
    font.setBold(bold)
    font.setItalic(italic)
    return font


def _text(scene: QGraphicsScene, text: str, x: float, y: float, *, size=9.5, bold=False, italic=False,
          color: QColor = INK, anchor: str = "left") -> QGraphicsSimpleTextItem:
    item = scene.addSimpleText(text, _font(size, bold, italic))
    item.setBrush(color)
    w = item.boundingRect().width()
    dx = {"left": 0.0, "center": -w / 2, "right": -w}[anchor]
    item.setPos(x + dx, y)
    item.setZValue(5)
    return item


def _tag(item: QGraphicsItem, kind: str, payload, tooltip: str) -> QGraphicsItem:
    item.setData(KIND, kind)
    item.setData(PAYLOAD, payload)
    item.setToolTip(plain_tip(tooltip))
    item.setCursor(Qt.PointingHandCursor)
    return item


def _ring(scene: QGraphicsScene, center: QPointF, radius: float, color: QColor, width: float) -> QGraphicsEllipseItem:
    ring = scene.addEllipse(QRectF(center.x() - radius, center.y() - radius, 2 * radius, 2 * radius),
                            QPen(color, width), QBrush(Qt.NoBrush))
    ring.setZValue(3)
    return ring


def recent_in_range(keys: Sequence[FactId], lo: int, hi: int, limit: int, facts) -> list[FactId]:
    """The ``limit`` most recently learned FactIds among ``keys[lo:hi]`` (by acquired tick)."""
    if hi - lo <= limit:
        return list(keys[lo:hi])
    picked = heapq.nlargest(limit, range(lo, hi), key=lambda k: (facts[keys[k]].acquired_tick, k))
    return [keys[k] for k in sorted(picked)]


def pick_npcs(state: StateAtTick, keys: Sequence[FactId], selected: int | None, most: int = MAX_NPCS):
    """The NPCs worth drawing and how many are left out.

    All of them when there are at most ``most``; else the selected NPC and those the
    player talked to most recently (then saw most recently), in StableId order so
    that nodes keep their places from tick to tick.
    """
    npcs = state.npcs
    if len(npcs) <= most:
        return list(npcs.values()), 0
    facts = state.knowledge.facts
    entities = state.knowledge.entities

    def recency(npc) -> tuple:
        last, _ = recent_interactions(keys, npc.slug, 1)
        talked = facts[last[0]].interaction.started_tick if last else -1
        entity = entities.get(npc.stable_id)
        return (npc.stable_id == selected, talked, entity.last_seen_tick if entity else -1)

    chosen = heapq.nlargest(most, npcs.values(), key=recency)
    return sorted(chosen, key=lambda npc: npc.stable_id), len(npcs) - most


def recent_interactions(keys: Sequence[FactId], slug: str, limit: int) -> tuple[list[FactId], int]:
    """The ``limit`` highest-sequence interaction FactIds with ``slug`` and how many there are.

    Sequence numbers grow with time (schema §7.3), so they give recency without
    reading the facts; ``_1000`` sorts before ``_999`` as text, hence the parse.
    """
    prefix = interaction_prefix(slug)
    lo = bisect_left(keys, prefix)
    hi = bisect_left(keys, prefix[:-1] + chr(ord("_") + 1), lo)
    ids = [fid for fid in keys[lo:hi] if parse_interaction_id(fid) is not None]
    best = heapq.nlargest(limit, ids, key=lambda fid: parse_interaction_id(fid)[1])
    best.sort(key=lambda fid: parse_interaction_id(fid)[1])
    return best, len(ids)


class _GraphicsView(QGraphicsView):
    """Fits the scene on resize and turns a click on a tagged item into a callback."""

    def __init__(self, scene: QGraphicsScene, on_click, parent=None) -> None:
        super().__init__(scene, parent)
        self._on_click = on_click
        self.setRenderHints(QPainter.Antialiasing | QPainter.TextAntialiasing)
        self.setBackgroundBrush(QColor("#fbfaf7"))
        self.setFrameShape(QGraphicsView.NoFrame)
        self.setHorizontalScrollBarPolicy(Qt.ScrollBarAlwaysOff)
        self.setVerticalScrollBarPolicy(Qt.ScrollBarAlwaysOff)

    def refit(self) -> None:
        """Scale the scene to the view (never magnified past 1.25)."""
        rect = self.sceneRect()
        if rect.isEmpty():
            return
        self.fitInView(rect, Qt.KeepAspectRatio)
        if self.transform().m11() > 1.25:
            self.resetTransform()
            self.scale(1.25, 1.25)
            self.centerOn(rect.center())

    def resizeEvent(self, event) -> None:
        super().resizeEvent(event)
        self.refit()

    def mousePressEvent(self, event) -> None:
        item = next((it for it in self.items(event.position().toPoint()) if it.data(KIND) is not None), None)
        if item is not None and event.button() == Qt.LeftButton:
            self._on_click(item.data(KIND), item.data(PAYLOAD))
            return
        super().mousePressEvent(event)


class KnowledgeGraph(QWidget):
    """The graph tab of ``KnowledgeView``: draws one tick, highlights the selection.

    The owner calls ``show_state`` on a committed tick and ``set_selection`` when the
    selected NPC or fact changes; clicks go back to the session as intents.

    Args:
        session: the app session (``set_npc`` / ``set_fact`` receive the clicks).
        parent: optional parent widget.
    """

    def __init__(self, session, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.session = session
        self.scene = QGraphicsScene(self)
        self.view = _GraphicsView(self.scene, self._clicked)
        self.legend = GraphLegend()
        self.legend.setFixedWidth(190)
        self.per_category = QSpinBox()
        self.per_category.setRange(1, 20)
        self.per_category.setValue(6)
        self.per_category.setToolTip("How many of the most recent facts each category card (and each NPC) shows")
        self.summary = QLabel()
        self.summary.setStyleSheet("color: #5f6b78;")
        bar = QHBoxLayout()
        bar.addWidget(QLabel("Most recent facts per category:"))
        bar.addWidget(self.per_category)
        bar.addStretch(1)
        bar.addWidget(self.summary)
        body = QHBoxLayout()
        body.setSpacing(0)
        body.addWidget(self.view, 1)
        body.addWidget(self.legend)
        layout = QVBoxLayout(self)
        layout.setContentsMargins(4, 4, 4, 4)
        layout.addLayout(bar)
        layout.addLayout(body, 1)
        self._halos: dict[tuple[str, object], QGraphicsItem] = {}
        self._last: tuple | None = None
        self._left_out = 0
        self.per_category.valueChanged.connect(self._redraw)
        self._why: tuple[str, object] | None = None
        self.why_action = add_why_action(self.view, session, self.why_target)
        self._empty("Open a save to see what the player knows.")

    # ----- owner API -----
    def show_state(self, state: StateAtTick | None, keys: Sequence[FactId], changed: frozenset[FactId]) -> None:
        """Draw the knowledge at ``state`` (keys: its FactIds in BTreeMap order)."""
        self._last = (state, keys, changed)
        self._redraw()

    def set_selection(self, npc: int | None, fact: FactId | None) -> None:
        """Show which NPC and fact are selected (cheap: toggles existing rings).

        Redraws only when the selected NPC is one of those left out of a crowded graph.
        """
        state = self._last[0] if self._last else None
        if (self._left_out and npc is not None and ("npc", npc) not in self._halos
                and state is not None and npc in state.index.npcs):
            self._redraw()
            return
        for (kind, payload), halo in self._halos.items():
            halo.setVisible((kind == "npc" and payload == npc) or (kind == "fact" and payload == fact))

    def node_ids(self, kind: str) -> list:
        """StableIds (``"npc"``) or FactIds (``"fact"``) drawn now, for tests and tools."""
        return [payload for (k, payload) in self._halos if k == kind]

    # ----- drawing -----
    def _empty(self, message: str) -> None:
        self.scene.clear()
        self._halos = {}
        _text(self.scene, message, 0, 0, size=12, color=MUTED_INK, anchor="center")
        self.scene.setSceneRect(QRectF(-300, -100, 600, 200))
        self.summary.setText("")
        self.view.refit()

    def _redraw(self) -> None:
        if self._last is None or self._last[0] is None or self.session.playthrough is None:
            self._empty("Open a save to see what the player knows.")
            return
        state, keys, changed = self._last
        self.scene.clear()
        self._halos = {}
        limit = self.per_category.value()
        knowledge = state.knowledge
        facts = knowledge.facts
        self._draw_player()
        npcs, self._left_out = pick_npcs(state, keys, self.session.npc)
        self._draw_npcs(state, npcs, keys, changed, limit)
        all_categories = categories_in(keys)
        categories = [(c, n) for c, n in all_categories if c != "interaction"]
        conversations = sum(n for c, n in all_categories if c == "interaction")
        self._draw_categories(keys, facts, categories, changed, limit)
        self.scene.setSceneRect(self.scene.itemsBoundingRect().adjusted(-16, -16, 16, 16))
        self.set_selection(self.session.npc, self.session.fact)
        shown = f"{len(npcs)} of {counted(len(npcs) + self._left_out, 'NPC')}" if self._left_out else counted(len(npcs), "NPC")
        self.summary.setText(f"tick {state.tick:,} · {counted(len(keys), 'fact')} ({counted(conversations, 'conversation')}) · "
                             f"{shown} · {len(changed):,} changed since last step")
        if self._left_out:
            bottom = self.scene.itemsBoundingRect().bottom()
            _text(self.scene, f"{self._left_out} more NPCs not drawn: the selected NPC and the most recently met "
                  "are shown; pick another NPC in the NPC list to draw it", -NPC_RING - 200, bottom + 8,
                  size=9, italic=True, color=MUTED_INK)
            self.scene.setSceneRect(self.scene.itemsBoundingRect().adjusted(-16, -16, 16, 16))
        self.view.refit()

    def _draw_player(self) -> None:
        player = self.session.playthrough.save.player
        r = PLAYER_RADIUS
        disc = self.scene.addEllipse(QRectF(-r, -r, 2 * r, 2 * r), QPen(QColor("#1f2933"), 2),
                                     QBrush(QColor("#34404c")))
        disc.setZValue(4)
        disc.setToolTip(plain_tip(f"{player.name or 'Player'} — the player character"))
        name = player.name or "Player"
        first = name.split(" ")[0]
        _text(self.scene, first, 0, -9, size=10, bold=True, color=QColor("white"), anchor="center")

    def _draw_npcs(self, state: StateAtTick, npcs, keys, changed, limit: int) -> None:
        knowledge = state.knowledge
        entities = knowledge.entities
        facts = knowledge.facts
        playthrough = self.session.playthrough
        n = len(npcs)
        compact = n > COMPACT_NPCS
        first, last = 112.0, 248.0
        step = (last - first) / (n - 1) if n > 1 else 0.0
        r = 22.0 if compact else NPC_RADIUS
        spacing = min(62.0, HEIGHT / max(n - 1, 1))
        for k, npc in enumerate(npcs):
            if compact:  # a column: an arc this crowded would stack the labels at its ends
                y = (k - (n - 1) / 2) * spacing
                center = QPointF(-NPC_RING - 40.0 * (y / (HEIGHT / 2)) ** 2, y)
                angle = math.atan2(-center.y(), center.x())
            else:
                angle = math.radians(first + k * step if n > 1 else 180.0)
                center = QPointF(NPC_RING * math.cos(angle), -NPC_RING * math.sin(angle))
            entity = entities.get(npc.stable_id)
            rel = entity.relationship if entity is not None else RelationshipState.Unknown
            color = RELATIONSHIP_COLORS[rel]
            name = playthrough.npc_name(npc.stable_id)
            if entity is not None:
                pen = confidence_pen(entity.confidence, QColor(150, 160, 170, 90))
                edge = self.scene.addLine(0, 0, center.x(), center.y(), pen)
                edge.setZValue(0)
            node = self.scene.addEllipse(QRectF(center.x() - r, center.y() - r, 2 * r, 2 * r),
                                         QPen(color.darker(150), 1.5), QBrush(color))
            node.setZValue(4)
            seen = (f"{confidence_label(entity.confidence)} ({source_label(entity.source)}), last seen at tick "
                    f"{entity.last_seen_tick}") if entity else "not in the player's knowledge"
            tol = npc.tolerance
            _tag(node, "npc", npc.stable_id,
                 f"<b>{name}</b><br>player thinks: {state_label(rel)} — {seen}<br>"
                 f"{npc.level.display_name}, score {npc.relationship.score:.1f}<br>"
                 f"stress {tol.current_stress}/{tol.threshold} · walk-aways {npc.walk_aways}")
            initials = "".join(part[0] for part in name.split()[:2]).upper()
            _text(self.scene, initials, center.x(), center.y() - (8 if compact else 9), size=9.5 if compact else 11,
                  bold=True, color=readable_text(color), anchor="center")
            self._halos[("npc", npc.stable_id)] = _ring(self.scene, center, r + 6, SELECTION_COLOR, 4)
            gap = r + (32 if compact else 36)
            total, shown = self._draw_conversations(npc, angle, keys, facts, changed, min(limit, 5 if compact else 8),
                                                    center, gap)
            lx = center.x() - r - 10
            talks = f"{total} conversation{'s' if total != 1 else ''}" + (f" ({shown} shown)" if total > shown else "")
            if compact:
                ly = center.y() - 16
                _text(self.scene, name, lx, ly, size=9.5, bold=True, anchor="right")
                level = f"{npc.level.display_name} · {total} talk{'s' if total != 1 else ''}"
                _text(self.scene, level, lx, ly + 15, size=8, color=MUTED_INK, anchor="right")
                continue
            ly = center.y() - 24
            _text(self.scene, name, lx, ly, size=10, bold=True, anchor="right")
            _text(self.scene, f"{npc.level.display_name} · score {npc.relationship.score:.0f}", lx, ly + 16,
                  size=8.5, color=MUTED_INK, anchor="right")
            _text(self.scene, talks, lx, ly + 30, size=8.5, color=MUTED_INK, anchor="right")

    def _draw_conversations(self, npc, angle, keys, facts, changed, limit, npc_center, gap) -> tuple[int, int]:
        ids, total = recent_interactions(keys, npc.slug, limit)
        count = len(ids)
        inward = angle + math.pi  # from the NPC towards the player
        spread = math.radians(min(18.0, 120.0 / max(count - 1, 1)))
        for j, fact_id in enumerate(ids):
            a = inward + (j - (count - 1) / 2) * spread
            pos = QPointF(npc_center.x() + gap * math.cos(a), npc_center.y() - gap * math.sin(a))
            fact = facts[fact_id]
            meta = fact.interaction
            color = INTERACTION_COLORS[meta.interaction_state]
            link = self.scene.addLine(pos.x(), pos.y(), npc_center.x(), npc_center.y(), QPen(color, 1.6))
            link.setZValue(1)
            edge = self.scene.addLine(0, 0, pos.x(), pos.y(), confidence_pen(fact.confidence, CONVERSATION_INK))
            edge.setZValue(1)
            s = 8.0
            diamond = self.scene.addPolygon(
                QPolygonF([QPointF(pos.x(), pos.y() - s), QPointF(pos.x() + s, pos.y()),
                           QPointF(pos.x(), pos.y() + s), QPointF(pos.x() - s, pos.y())]),
                QPen(color.darker(150), 1), QBrush(color))
            diamond.setZValue(4)
            ended = "in progress" if meta.ended_tick is None else f"ended at tick {meta.ended_tick}"
            topics = ", ".join(meta.topics) or "no topic"
            _tag(diamond, "fact", fact_id,
                 f"<b>{fact_id}</b><br>{state_label(meta.interaction_state)} — started at tick {meta.started_tick}, "
                 f"{ended}<br>{topics} · {meta.location}<br>confidence {confidence_label(fact.confidence)}")
            if fact_id in changed:
                _ring(self.scene, pos, 11, CHANGED_COLOR, 2.5)
            self._halos[("fact", fact_id)] = _ring(self.scene, pos, 13, SELECTION_COLOR, 3)
        return total, count

    def _draw_categories(self, keys, facts, categories, changed, limit: int) -> None:
        if not categories:
            _text(self.scene, "no facts learned yet", CARD_X, -8, size=10, italic=True, color=MUTED_INK)
            return
        def tallest(columns: int, rows: int) -> float:
            per = math.ceil(len(categories) / columns)
            return max(sum(TITLE_H + min(rows, n) * ROW_H + (ROW_H if n > rows else 0) + 8 + CARD_GAP
                           for _, n in categories[c * per:(c + 1) * per]) for c in range(columns))

        columns, rows = 1, limit
        while rows > 1 and tallest(columns, rows) > HEIGHT:
            rows -= 1
            if columns == 1 and rows < min(limit, 3):
                columns, rows = 2, limit
        per_column = math.ceil(len(categories) / columns)
        for c in range(columns):
            chunk = categories[c * per_column:(c + 1) * per_column]
            heights = [TITLE_H + min(rows, n) * ROW_H + (ROW_H if n > rows else 0) + 8 for _, n in chunk]
            y = -(sum(heights) + CARD_GAP * (len(chunk) - 1)) / 2
            x = CARD_X + c * (CARD_W + 30)
            for (category, n), h in zip(chunk, heights):
                self._draw_card(keys, facts, category, n, rows, changed, x, y, h)
                y += h + CARD_GAP

    def _draw_card(self, keys, facts, category, count, rows, changed, x, y, h) -> None:
        color = category_color(category)
        fill = QColor(color)
        fill.setAlpha(235)
        card = self.scene.addRect(QRectF(x, y, CARD_W, h), QPen(color.darker(125), 1.2),
                                  QBrush(QColor("#ffffff")))
        card.setZValue(2)
        band = self.scene.addRect(QRectF(x, y, CARD_W, TITLE_H - 4), QPen(Qt.NoPen), QBrush(fill))
        band.setZValue(2)
        title = category if len(category) <= 18 else category[:17] + "…"
        _text(self.scene, title, x + 8, y + 3, size=10, bold=True, color=readable_text(color)).setToolTip(plain_tip(category))
        _text(self.scene, f"{count} fact{'s' if count != 1 else ''}", x + CARD_W - 8, y + 4, size=8.5,
              color=readable_text(color), anchor="right")
        lo = bisect_left(keys, category + ".")
        shown = recent_in_range(keys, lo, lo + count, rows, facts)
        for j, fact_id in enumerate(shown):
            fact = facts[fact_id]
            cy = y + TITLE_H + j * ROW_H + ROW_H / 2
            dot = QPointF(x + 12, cy)
            path = QPainterPath(QPointF(0, 0))
            path.cubicTo(QPointF(110, 0.15 * cy), QPointF(dot.x() - 90, cy), dot)
            edge = QGraphicsPathItem(path)
            edge.setPen(confidence_pen(fact.confidence, QColor(INK)))
            edge.setZValue(1 if fact_id not in changed else 1.5)
            self.scene.addItem(edge)
            stale = fact.state is KnowledgeState.Stale
            contradicted = fact.state is KnowledgeState.Contradicted
            dot_color = QColor("#c8ccd0") if stale else color.darker(115)
            node = self.scene.addEllipse(QRectF(dot.x() - 5, cy - 5, 10, 10), QPen(dot_color.darker(140), 1),
                                         QBrush(dot_color))
            node.setZValue(4)
            topic = fact_id.split(".", 1)[1] if "." in fact_id else fact_id
            label = _text(self.scene, topic if len(topic) <= 26 else topic[:25] + "…", x + 24, cy - 8, size=9,
                          bold=fact_id in changed, italic=stale,
                          color=FAULT_COLOR if contradicted else MUTED_INK if stale else INK)
            if contradicted:
                font = label.font()
                font.setStrikeOut(True)
                label.setFont(font)
            tip = (f"<b>{fact_id}</b><br>{confidence_label(fact.confidence)} · {source_label(fact.source)} · "
                   f"{state_label(fact.state)}<br>learned at tick {fact.acquired_tick}"
                   + ("<br><i>changed since the previous step</i>" if fact_id in changed else ""))
            _tag(node, "fact", fact_id, tip)
            _tag(label, "fact", fact_id, tip)
            if fact_id in changed:
                _ring(self.scene, dot, 8, CHANGED_COLOR, 2.5)
            self._halos[("fact", fact_id)] = _ring(self.scene, dot, 9.5, SELECTION_COLOR, 2.5)
        if count > len(shown):
            _text(self.scene, f"+ {count - len(shown)} older", x + 24, y + TITLE_H + len(shown) * ROW_H, size=8.5,
                  italic=True, color=MUTED_INK)

    # ----- intents -----
    def why_target(self) -> str | None:
        """The node clicked last: ``fact:FACT_ID``, or for an NPC what the player knows of it
        (``entity:STABLE_ID``; its score when never observed)."""
        if self._why is None or not self.session.ready:
            return None
        kind, payload = self._why
        if kind == "fact":
            return f"fact:{payload}"
        play = self.session.playthrough
        if payload in play.index.entities:
            return f"entity:{payload}"
        npc = play.save.npcs.get(payload)
        return f"npc:{npc.slug}.score" if npc is not None else None

    def _clicked(self, kind: str, payload) -> None:
        self._why = (kind, payload)
        if kind == "npc":
            self.session.set_npc(payload)
            return
        self.session.set_fact(payload)
        state = self._last[0] if self._last else None
        fact = state.knowledge.fact(payload) if state is not None else None
        if fact is not None and fact.interaction is not None:
            self.session.set_npc(fact.interaction.target_entity)

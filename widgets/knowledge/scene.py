"""The drawing of the knowledge graph: the player in the centre, NPCs to the left, facts to the right.

Reading the picture:

* the player is the dark disc in the middle;
* NPCs sit on an arc (a column when crowded) to the left, filled with the colour of
  what the player thinks of them (``RelationshipState`` from the player's entity
  knowledge; grey when the player has no entry), labelled with their name,
  relationship level and score and their number of conversations;
* each NPC's most recent conversations (interaction facts) are small diamonds
  between the player and that NPC, filled with their ``InteractionState`` colour;
  an expanded NPC shows all of them as a grid of cells left of its label;
* ordinary facts are grouped by category in cards on the right, each card showing
  its count and its most recent facts; an expanded card lists all of them;
* malformed FactIds (K001, K003) have a card of their own, marked in red;
* every edge from the player to a fact is drawn by confidence: Direct solid thick,
  KnowsDetails solid, KnowsOf dashed, Suspects dotted.

Level of detail: only what is drawn gets items. Collapsed groups cost a few items
each; an expanded group is one item (``knowledge_items``) that paints only what is
on screen, so a 66 000-fact save draws as fast as a small one.
"""

from __future__ import annotations

import math
from bisect import bisect_left

from narrative_debugger.widgets.kit.plain_text import name_text
from narrative_debugger.models.domain.types import FactId, KnowledgeState, RelationshipState
from narrative_debugger.models.explain.chain import fmt_num
from narrative_debugger.models.rules.catalogue import rule
from narrative_debugger.models.timeline.state_view import StateAtTick
from narrative_debugger.widgets.knowledge.groups import (
    FactGroup,
    conversation_ids,
    recent_in_range,
    recent_interactions,
)
from narrative_debugger.widgets.knowledge.items import KIND, PAYLOAD, ROW_H, ConversationGrid, FactRows, _GroupItem
from narrative_debugger.models.report.plain_text import counted
from narrative_debugger.models.report.sinks import html as escape
from narrative_debugger.widgets.kit.state_colors import (
    CHANGED_COLOR,
    FAULT_COLOR,
    INTERACTION_COLORS,
    RELATIONSHIP_COLORS,
    SELECTION_COLOR,
    PaletteColors,
    category_color,
    confidence_label,
    confidence_pen,
    readable_text,
    source_label,
    state_label,
)
from PySide6.QtCore import QPointF, QRectF, Qt
from PySide6.QtGui import QBrush, QColor, QFont, QPainterPath, QPen, QPolygonF
from PySide6.QtWidgets import QGraphicsItem, QGraphicsPathItem, QGraphicsScene, QGraphicsSimpleTextItem

NPC_RADIUS, PLAYER_RADIUS = 30.0, 40.0
NPC_RING = 300.0
#: Above this many NPCs, nodes shrink and fewer conversations are drawn per NPC.
COMPACT_NPCS = 7
CARD_X, CARD_W, CARD_GAP, TITLE_H = 250.0, 220.0, 10.0, 24.0
HEIGHT = 720.0
#: Cells per row of an expanded NPC's conversation grid, and the gap between grids.
GRID_COLUMNS, GRID_GAP = 25, 40.0
#: Per-fact edges drawn into an expanded card at most (the rest share the card's edge).
EDGE_LIMIT = 40


def _font(size: float, bold: bool = False, italic: bool = False) -> QFont:
    font = QFont()
    font.setPointSizeF(size)
    font.setBold(bold)
    font.setItalic(italic)
    return font


def _tag(item: QGraphicsItem, kind: str, payload, tooltip: str) -> QGraphicsItem:
    item.setData(KIND, kind)
    item.setData(PAYLOAD, payload)
    item.setToolTip(tooltip)
    item.setCursor(Qt.PointingHandCursor)
    return item


def fact_tip(fact_id: FactId, fact, changed: bool, fault: str | None = None) -> str:
    """The tooltip of a fact (rich text; every value from the save is escaped)."""
    lines = [f"<b>{escape(fact_id)}</b>"]
    if fault is not None:
        lines.append(f"<span style='color:{FAULT_COLOR.name()}'>{fault}: {escape(rule(fault).title)}</span>")
    meta = fact.interaction
    if meta is not None:
        ended = "in progress" if meta.ended_tick is None else f"ended at tick {meta.ended_tick:,}"
        topics = escape(", ".join(meta.topics)) or "no topic"
        lines.append(f"{state_label(meta.interaction_state)} — started at tick {meta.started_tick:,}, {ended}")
        lines.append(f"{topics} · {escape(meta.location)}")
    lines.append(f"{confidence_label(fact.confidence)} · {source_label(fact.source)} · {state_label(fact.state)}")
    lines.append(f"learned at tick {fact.acquired_tick:,}")
    if changed:
        lines.append("<i>changed since the previous step</i>")
    return "<br>".join(lines)


class GraphScene(QGraphicsScene):
    """The scene of one tick, with what the widget needs to select, find and fit.

    Attributes:
        halos: (``"npc"``, StableId) or (``"fact"``, FactId) -> its selection ring.
        group_items: the expanded groups' items (``FactRows``, ``ConversationGrid``).
        group_of: FactId -> title of the group it is drawn in (drawn facts only).
        overview: the rectangle ``fit`` shows (an expanded group counts at most
            ``HEIGHT`` tall, so a huge one does not shrink the rest to dots).
    """

    def __init__(self, parent=None) -> None:
        super().__init__(parent)
        self.halos: dict[tuple[str, object], QGraphicsItem] = {}
        self.group_items: list[_GroupItem] = []
        self.group_of: dict[FactId, str] = {}
        self.overview = QRectF()
        self.colors: PaletteColors | None = None
        self._faults: dict[FactId, str] = {}

    # ----- queries -----
    def fact_rect(self, fact_id: FactId) -> QRectF | None:
        """Scene rectangle of a drawn fact, or None when it is not drawn."""
        halo = self.halos.get(("fact", fact_id))
        if halo is not None:
            return halo.sceneBoundingRect()
        for item in self.group_items:
            rect = item.rect_of(fact_id)
            if rect is not None:
                return rect
        return None

    def npc_rect(self, sid: int) -> QRectF | None:
        halo = self.halos.get(("npc", sid))
        return halo.sceneBoundingRect() if halo is not None else None

    def set_selection(self, npc: int | None, fact: FactId | None) -> None:
        for (kind, payload), halo in self.halos.items():
            halo.setVisible((kind == "npc" and payload == npc) or (kind == "fact" and payload == fact))
        for item in self.group_items:
            item.set_selected(fact if fact is not None and item.contains_fact(fact) else None)

    # ----- primitives -----
    def _text(self, text: str, x: float, y: float, *, size=9.5, bold=False, italic=False, color: QColor | None = None,
              anchor: str = "left") -> QGraphicsSimpleTextItem:
        item = self.addSimpleText(text, _font(size, bold, italic))  # plain text: never markup
        item.setBrush(color if color is not None else self.colors.ink)
        w = item.boundingRect().width()
        item.setPos(x + {"left": 0.0, "center": -w / 2, "right": -w}[anchor], y)
        item.setZValue(5)
        return item

    def _ring(self, center: QPointF, radius: float, color: QColor, width: float):
        ring = self.addEllipse(QRectF(center.x() - radius, center.y() - radius, 2 * radius, 2 * radius),
                               QPen(color, width), QBrush(Qt.NoBrush))
        ring.setZValue(3)
        return ring

    def _toggle(self, item: QGraphicsItem, key: tuple, expanded: bool, what: str) -> None:
        _tag(item, "group", key, f"Click to {'collapse' if expanded else 'show all of'} {escape(what)}")

    # ----- the drawing -----
    def empty(self, message: str, colors: PaletteColors) -> None:
        """A scene with one message (no save, or nothing at this tick)."""
        self.clear()
        self.colors = colors
        self.halos, self.group_items, self.group_of = {}, [], {}
        self._text(message, 0, 0, size=12, color=colors.muted, anchor="center")
        self.overview = QRectF(-300, -100, 600, 200)

    def build(self, playthrough, state: StateAtTick, keys, changed: frozenset[FactId], *, npcs, groups: list[FactGroup],
              faults, limit: int, expanded: set, colors: PaletteColors) -> None:
        """Draw one tick.

        Args:
            playthrough: names and the player.
            state: the narrative state at the tick; keys: its FactIds in key order.
            changed: FactIds changed since the previous step.
            npcs: the NPCs to draw (``pick_npcs``); groups: the fact cards (``fact_groups``).
            faults: malformed FactId -> code; limit: recent facts per collapsed group.
            expanded: keys of expanded groups (``("category", name)``, ``("npc", sid)``, ``("malformed",)``).
            colors: the palette's colours.
        """
        self.clear()
        self.colors = colors
        self.halos, self.group_items, self.group_of = {}, [], {}
        self._tall: list[QRectF] = []
        self._draw_player(playthrough)
        self._faults = faults
        self._draw_npcs(playthrough, state, npcs, keys, changed, limit, expanded)
        self._draw_cards(state.knowledge.facts, groups, changed, faults, limit, expanded)
        self.overview = self._overview()

    def _overview(self) -> QRectF:
        rect = QRectF()
        # Every item here is top-level (never call parentItem(): in PySide6 a None parent
        # hands the C++ item to Python, which deletes it).
        for item in self.items():
            if not isinstance(item, _GroupItem):
                rect = rect.united(item.sceneBoundingRect())
        for item in self.group_items:
            box = item.sceneBoundingRect()
            rect = rect.united(QRectF(box.left(), box.top(), box.width(), min(box.height(), HEIGHT)))
        return rect.adjusted(-16, -16, 16, 16)

    def _draw_player(self, playthrough) -> None:
        player = playthrough.save.player
        r = PLAYER_RADIUS
        disc = self.addEllipse(QRectF(-r, -r, 2 * r, 2 * r), QPen(QColor("#1f2933"), 2), QBrush(QColor("#34404c")))
        disc.setZValue(4)
        name = player.name or "Player"
        disc.setToolTip(f"{escape(name)} — the player character")
        self._text(name.split(" ")[0], 0, -9, size=10, bold=True, color=QColor("white"), anchor="center")

    def _draw_npcs(self, playthrough, state, npcs, keys, changed, limit, expanded) -> None:
        entities = state.knowledge.entities
        facts = state.knowledge.facts
        n = len(npcs)
        compact = n > COMPACT_NPCS
        first, last = 112.0, 248.0
        step = (last - first) / (n - 1) if n > 1 else 0.0
        r = 22.0 if compact else NPC_RADIUS
        spacing = min(62.0, HEIGHT / max(n - 1, 1))
        grid_x = -NPC_RING - 260.0
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
            name = name_text(playthrough, npc.stable_id)
            if entity is not None:
                edge = self.addLine(0, 0, center.x(), center.y(), confidence_pen(entity.confidence, QColor(150, 160, 170, 90)))
                edge.setZValue(0)
            node = self.addEllipse(QRectF(center.x() - r, center.y() - r, 2 * r, 2 * r),
                                   QPen(color.darker(150), 1.5), QBrush(color))
            node.setZValue(4)
            seen = (f"{confidence_label(entity.confidence)} ({source_label(entity.source)}), last seen at tick "
                    f"{entity.last_seen_tick}") if entity else "not in the player's knowledge"
            tol = npc.tolerance
            _tag(node, "npc", npc.stable_id,
                 f"<b>{escape(name)}</b><br>player thinks: {state_label(rel)} — {seen}<br>"
                 f"{npc.level.display_name}, score {fmt_num(npc.relationship.score)}<br>"
                 f"stress {tol.current_stress}/{tol.threshold} · walk-aways {npc.walk_aways}")
            initials = "".join(part[0] for part in name.split()[:2]).upper()
            self._text(initials, center.x(), center.y() - (8 if compact else 9), size=9.5 if compact else 11,
                       bold=True, color=readable_text(color), anchor="center")
            self.halos[("npc", npc.stable_id)] = self._ring(center, r + 6, SELECTION_COLOR, 4)
            gap = r + (32 if compact else 36)
            total, shown = self._draw_conversations(npc, name, angle, keys, facts, changed,
                                                    min(limit, 5 if compact else 8), center, gap)
            is_open = ("npc", npc.stable_id) in expanded
            lx = center.x() - r - 10
            more = "▾ all shown" if is_open else (f"▸ {shown} shown, click for all" if total > shown else "")
            talks = counted(total, "conversation") + (f" ({more})" if more else "")
            if compact:
                ly = center.y() - 16
                self._text(name, lx, ly, size=9.5, bold=True, anchor="right")
                label = self._text(f"{npc.level.display_name} · {talks}", lx, ly + 15, size=8, color=self.colors.muted,
                                   anchor="right")
            else:
                ly = center.y() - 24
                self._text(name, lx, ly, size=10, bold=True, anchor="right")
                self._text(f"{npc.level.display_name} · score {npc.relationship.score:.0f}", lx, ly + 16, size=8.5,
                           color=self.colors.muted, anchor="right")
                label = self._text(talks, lx, ly + 30, size=8.5, color=self.colors.muted, anchor="right")
            if total:
                self._toggle(label, ("npc", npc.stable_id), is_open, f"{name}'s conversations")
            if is_open and total:
                grid_x = self._draw_grid(npc, name, keys, facts, changed, grid_x, center.y())

    def _draw_grid(self, npc, name, keys, facts, changed, right: float, top: float) -> float:
        ids = conversation_ids(keys, npc.slug, self._faults)
        grid = ConversationGrid(ids, facts, changed, lambda fid: fact_tip(fid, facts[fid], fid in changed),
                                columns=GRID_COLUMNS, ink=self.colors.ink)
        width = grid.boundingRect().width()
        grid.setPos(right - width, top)
        self.addItem(grid)
        self.group_items.append(grid)
        for fid in ids:
            self.group_of[fid] = name
        title = self._text(f"▾ {name}: {counted(len(ids), 'conversation')}", right - width, top - 20, size=9, bold=True)
        self._toggle(title, ("npc", npc.stable_id), True, f"{name}'s conversations")
        return right - width - GRID_GAP

    def _draw_conversations(self, npc, name, angle, keys, facts, changed, limit, npc_center, gap) -> tuple[int, int]:
        ids, total = recent_interactions(keys, npc.slug, limit, self._faults)
        count = len(ids)
        inward = angle + math.pi  # from the NPC towards the player
        spread = math.radians(min(18.0, 120.0 / max(count - 1, 1)))
        for j, fact_id in enumerate(ids):
            a = inward + (j - (count - 1) / 2) * spread
            pos = QPointF(npc_center.x() + gap * math.cos(a), npc_center.y() - gap * math.sin(a))
            fact = facts[fact_id]
            color = INTERACTION_COLORS[fact.interaction.interaction_state]
            link = self.addLine(pos.x(), pos.y(), npc_center.x(), npc_center.y(), QPen(color, 1.6))
            link.setZValue(1)
            ink = QColor(self.colors.ink)
            ink.setAlpha(150)
            edge = self.addLine(0, 0, pos.x(), pos.y(), confidence_pen(fact.confidence, ink))
            edge.setZValue(1)
            s = 8.0
            diamond = self.addPolygon(
                QPolygonF([QPointF(pos.x(), pos.y() - s), QPointF(pos.x() + s, pos.y()),
                           QPointF(pos.x(), pos.y() + s), QPointF(pos.x() - s, pos.y())]),
                QPen(color.darker(150), 1), QBrush(color))
            diamond.setZValue(4)
            _tag(diamond, "fact", fact_id, fact_tip(fact_id, fact, fact_id in changed))
            if fact_id in changed:
                self._ring(pos, 11, CHANGED_COLOR, 2.5)
            self.halos[("fact", fact_id)] = self._ring(pos, 13, SELECTION_COLOR, 3)
            self.group_of[fact_id] = name
        return total, count

    # ----- cards -----
    def _card_height(self, group: FactGroup, limit: int, expanded: set) -> float:
        n = len(group.ids)
        if group.key in expanded:
            return TITLE_H + n * ROW_H + 8
        return TITLE_H + min(limit, n) * ROW_H + (ROW_H if n > limit else 0) + 8

    def _draw_cards(self, facts, groups: list[FactGroup], changed, faults, limit: int, expanded: set) -> None:
        if not groups:
            self._text("no facts learned yet", CARD_X, -8, size=10, italic=True, color=self.colors.muted)
            return
        rows = limit
        # Fit the collapsed cards in HEIGHT: fewer rows, then two columns (expanded cards keep all rows).
        columns = 1

        def tallest() -> float:
            per = math.ceil(len(groups) / columns)
            return max(sum(self._card_height(g, rows, expanded) + CARD_GAP for g in groups[c * per:(c + 1) * per])
                       for c in range(columns))

        while rows > 1 and tallest() > HEIGHT:
            rows -= 1
            if columns == 1 and rows < min(limit, 3):
                columns, rows = 2, limit
        per_column = math.ceil(len(groups) / columns)
        for c in range(columns):
            chunk = groups[c * per_column:(c + 1) * per_column]
            heights = [self._card_height(g, rows, expanded) for g in chunk]
            collapsed = [h for g, h in zip(chunk, heights) if g.key not in expanded]
            y = -(sum(collapsed) + CARD_GAP * (len(chunk) - 1)) / 2 if len(collapsed) == len(chunk) else -HEIGHT / 2
            x = CARD_X + c * (CARD_W + 30)
            for group, h in zip(chunk, heights):
                self._draw_card(facts, group, rows, changed, faults, expanded, x, y, h)
                y += h + CARD_GAP

    def _draw_card(self, facts, group: FactGroup, rows: int, changed, faults, expanded, x, y, h) -> None:
        color = FAULT_COLOR if group.malformed else category_color(group.title)
        is_open = group.key in expanded
        card = self.addRect(QRectF(x, y, CARD_W, h), QPen(color.darker(125), 2.0 if group.malformed else 1.2),
                            QBrush(self.colors.canvas))
        card.setZValue(2)
        band = self.addRect(QRectF(x, y, CARD_W, TITLE_H - 4), QPen(Qt.NoPen), QBrush(color))
        band.setZValue(2)
        count = len(group.ids)
        mark = "▾ " if is_open else ("▸ " if count > rows else "")
        title = ("⚠ " if group.malformed else "") + group.title
        shown_title = title if len(title) <= 18 else title[:17] + "…"
        head = self._text(mark + shown_title, x + 8, y + 3, size=10, bold=True, color=readable_text(color))
        self._text(counted(count, "fact"), x + CARD_W - 8, y + 4, size=8.5,
                   color=readable_text(color), anchor="right")
        if count > rows or is_open:
            self._toggle(head, group.key, is_open, f"the {title} facts")
            self._toggle(band, group.key, is_open, f"the {title} facts")
        else:
            head.setToolTip(escape(title))
        if group.malformed:
            band.setToolTip("FactIds that break the FactId grammar (K001: not category.topic; "
                            "K003: not interaction.{slug}_{NNN}); see the Findings panel")
        for fid in group.ids if is_open else ():
            self.group_of[fid] = group.title
        if is_open:
            self._draw_open_card(facts, group, rows, changed, faults, x, y)
            return
        shown = recent_in_range(group.ids, 0, count, rows, facts)
        for j, fact_id in enumerate(shown):
            self._draw_fact_row(facts[fact_id], fact_id, group, changed, faults,
                                x, y + TITLE_H + j * ROW_H + ROW_H / 2, color)
        if count > len(shown):
            more = self._text(f"+ {count - len(shown)} older — click to show all", x + 24, y + TITLE_H + len(shown) * ROW_H,
                              size=8.5, italic=True, color=self.colors.muted)
            self._toggle(more, group.key, False, f"the {title} facts")

    def _edge(self, fact, dot: QPointF, emphasise: bool) -> None:
        path = QPainterPath(QPointF(0, 0))
        path.cubicTo(QPointF(110, 0.15 * dot.y()), QPointF(dot.x() - 90, dot.y()), dot)
        edge = QGraphicsPathItem(path)
        edge.setPen(confidence_pen(fact.confidence, QColor(self.colors.ink)))
        edge.setZValue(1.5 if emphasise else 1)
        self.addItem(edge)

    def _draw_fact_row(self, fact, fact_id, group: FactGroup, changed, faults, x, cy, color) -> None:
        dot = QPointF(x + 12, cy)
        self._edge(fact, dot, fact_id in changed)
        stale = fact.state is KnowledgeState.Stale
        contradicted = fact.state is KnowledgeState.Contradicted
        dot_color = QColor("#c8ccd0") if stale else color.darker(115)
        node = self.addEllipse(QRectF(dot.x() - 5, cy - 5, 10, 10), QPen(dot_color.darker(140), 1), QBrush(dot_color))
        node.setZValue(4)
        topic = fact_id if group.malformed else (fact_id.split(".", 1)[1] if "." in fact_id else fact_id)
        label = self._text(topic if len(topic) <= 26 else topic[:25] + "…", x + 24, cy - 8, size=9,
                           bold=fact_id in changed, italic=stale,
                           color=FAULT_COLOR if contradicted else self.colors.muted if stale else self.colors.ink)
        if contradicted:
            font = label.font()
            font.setStrikeOut(True)
            label.setFont(font)
        tip = fact_tip(fact_id, fact, fact_id in changed, faults.get(fact_id))
        _tag(node, "fact", fact_id, tip)
        _tag(label, "fact", fact_id, tip)
        if fact_id in changed:
            self._ring(dot, 8, CHANGED_COLOR, 2.5)
        self.halos[("fact", fact_id)] = self._ring(dot, 9.5, SELECTION_COLOR, 2.5)
        self.group_of[fact_id] = group.title

    def _draw_open_card(self, facts, group: FactGroup, rows: int, changed, faults, x, y) -> None:
        color = FAULT_COLOR if group.malformed else category_color(group.title)
        ids = group.ids
        items = FactRows(ids, facts, changed, lambda fid: fact_tip(fid, facts[fid], fid in changed, faults.get(fid)),
                         width=CARD_W, dot=color, ink=self.colors.ink, muted=self.colors.muted, whole_ids=group.malformed)
        items.setPos(x, y + TITLE_H)
        self.addItem(items)
        self.group_items.append(items)
        # Edges to the most recent facts (as when collapsed), the rest share the card's edge.
        for fact_id in recent_in_range(ids, 0, len(ids), min(rows, EDGE_LIMIT), facts):
            k = bisect_left(ids, fact_id)  # group ids are in key order
            self._edge(facts[fact_id], items.mapToScene(items.dot_center(k)), fact_id in changed)

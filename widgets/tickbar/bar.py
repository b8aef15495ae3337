"""The tick bar: a timeline slider with event markers, stepping and playback.

The bar follows the session (``loaded``, ``tickPreview``, ``tickChanged``) and sends
user intents back to it: dragging the slider previews ticks with
``set_tick(t, live=True)`` and commits with ``set_tick(t)`` on release; buttons and
keys step to the previous/next event of the chosen kind. Its keyboard commands are
QActions (see ``TickBar.actions``) so the main window can list them in a menu.

Ticks are game ticks (u64, kept as Python ``int``: no Qt signal or widget here holds
one in 32 bits); game time is ``save.game_time(tick)``. The track spans the
session's ``view_start`` .. last tick; when that starts past 0 (ticks near 1e15 or
2^64), a short lead-in at its left holds the ticks before it, tick 0 among them, so
tick 0 is never drawn where the first event is.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from fractions import Fraction

import numpy as np
import numpy.ma  # noqa: F401 - np.unique (the marker painting) imports it on first use, which would stall the first paint after a load
from PySide6.QtCore import QEvent, QLineF, QPointF, QRectF, QSize, Qt, QTimer, Signal
from PySide6.QtGui import QAction, QColor, QIcon, QKeySequence, QPainter, QPen, QPixmap, QPolygonF
from PySide6.QtWidgets import (
    QAbstractItemView,
    QAbstractSpinBox,
    QApplication,
    QComboBox,
    QHBoxLayout,
    QLabel,
    QLineEdit,
    QPlainTextEdit,
    QStyle,
    QTextEdit,
    QToolButton,
    QToolTip,
    QVBoxLayout,
    QWidget,
)

from narrative_debugger.models.session import Stepping
from narrative_debugger.models.timeline.event_kinds import DERIVED_KINDS, tick_array
from narrative_debugger.widgets.kit.prepared import Prepared
from narrative_debugger.widgets.kit.plain_text import ElidingComboBox
from narrative_debugger.widgets.kit.steady import SteadyLabel
from narrative_debugger.widgets.session import prepare as session_prepare
from narrative_debugger.widgets.kit.slices import SlicedWork
from narrative_debugger.widgets.kit.state_colors import KIND_STYLE
from narrative_debugger.widgets.tickbar.field import TickField, ask_tick


#: Colour of the mark where compared journals part (issue 13).
MARK_COLOUR = "#c2185b"

#: Kinds the selector also steps between, without a lane of markers (read from the replayed state).
STEP_ONLY_KINDS: dict[str, tuple[str, str]] = {
    "threshold": (DERIVED_KINDS["threshold"], "#ad1457"),
    "level": (DERIVED_KINDS["level"], "#2e7d32"),
    "first-meeting": (DERIVED_KINDS["first-meeting"], "#00838f"),
}

#: Entries of the speed combo: label -> ticks per step at 1x game speed (None = event by event).
SPEEDS: tuple[tuple[str, int | None], ...] = (("Events", None), ("1×", 1), ("4×", 4), ("16×", 16), ("64×", 64), ("256×", 256))

FRAME_MS = 100
"""Playback timer interval in tick mode (ms)."""
EVENT_FRAME_MS = 400
"""Playback timer interval in event-by-event mode (ms)."""
BIG_STEP = 100
"""Ticks moved by Shift+Left / Shift+Right."""
#: Widgets that use arrows, Home/End, Space themselves: while one of them outside the
#: bar has focus, the bar's bare-key shortcuts step back (see TickBar._on_focus_changed).
_KEY_USERS = (QAbstractItemView, QAbstractSpinBox, QComboBox, QLineEdit, QTextEdit, QPlainTextEdit)


def bin_ticks(ticks: np.ndarray, last_tick: int, columns: int, first_tick: int = 0) -> tuple[np.ndarray, np.ndarray]:
    """Bins event ticks into pixel columns.

    Args:
        ticks: event ticks (any order, uint64: any u64 tick).
        last_tick: the tick mapped to the last column (``first_tick`` maps everything to column 0).
        columns: number of pixel columns (>= 1).
        first_tick: the tick mapped to column 0; earlier ticks go to column 0.

    Returns:
        (columns that hold at least one event, event count of each of them).
    """
    if len(ticks) == 0 or columns <= 0:
        return np.empty(0, dtype=np.int64), np.empty(0, dtype=np.int64)
    counts = np.zeros(columns, dtype=np.int64)
    for _ in bin_into(counts, np.asarray(ticks, dtype=np.uint64), last_tick, first_tick, max(1, len(ticks))):
        pass
    where = np.flatnonzero(counts)
    return where, counts[where]


#: Ticks binned in one step of the tick bar's sliced marker job (a few ms).
BIN_STEP = 1 << 17


def bin_into(counts: np.ndarray, ticks: np.ndarray, last_tick: int, first_tick: int, step: int | None = None):
    """Adds the ``bin_ticks`` column counts of uint64 ``ticks`` into ``counts`` (one
    column per entry), ``step`` (default ``BIN_STEP``) ticks at a time; yields after each
    step. The tick bar draws its markers with it in slices (``widgets.kit.slices``);
    run to its end, ``counts`` holds what ``bin_ticks`` gives in one call."""
    step = step or BIN_STEP
    columns = len(counts)
    first = np.uint64(first_tick)
    scale = (columns - 1) / (last_tick - first_tick) if last_tick > first_tick else 0.0
    for start in range(0, len(ticks), step):
        part = ticks[start : start + step]
        offset = np.where(part > first, part - first, np.uint64(0))  # exact in u64, then scaled
        cols = np.clip((offset.astype(np.float64) * scale).round().astype(np.int64), 0, columns - 1)
        counts += np.bincount(cols, minlength=columns)
        yield


@dataclass(frozen=True)
class TickLanes:
    """``lanes``: event kind -> the sorted uint64 ticks of its markers (``prepare``)."""

    lanes: dict[str, np.ndarray]


def prepare(playthrough, prepared: Prepared | None = None) -> TickLanes:
    """The marker lanes' ticks of a playthrough (O(N) in events), made by the loader off
    the GUI thread from the session's ``Stepping`` in ``prepared`` (made now when it is
    not there). Findings' ticks are the session's (``Session.event_ticks("finding")``)
    and are not here."""
    stepping = prepared.get(Stepping) if prepared is not None else None
    event_ticks = (stepping if stepping is not None else session_prepare(playthrough)).ticks
    return TickLanes({kind: np.sort(tick_array(event_ticks.get(kind, []))) for kind in KIND_STYLE if kind != "finding"})


def swatch(colour: str, size: int = 12) -> QIcon:
    """A square colour swatch icon (used as the kind legend in the combo)."""
    pix = QPixmap(size, size)
    pix.fill(QColor(colour))
    return QIcon(pix)


class _Track(QWidget):
    """The slider proper: a groove with one marker lane per event kind and a handle.

    Markers are binned into pixel columns once per width and cached in a pixmap,
    so a million events cost nothing per repaint. The binning and drawing run as a
    sliced job (``widgets.kit.slices``) after new data or a resize: until it ends the bar
    shows the last picture stretched to the new width (or no markers after a load).
    Emits ``dragged`` while the mouse moves with the button held and ``released``
    when it is let go.

    Ticks ``first_tick`` .. ``last_tick`` lie in proportion along the groove. When
    ``first_tick`` is past 0 (the session's ``view_start``: the first event of a save whose
    ticks start far from 0), the ``LEAD_PX`` at the groove's left, cut off from the rest by a
    break, stand for the ticks before it: tick 0 and the others there (which all show the
    state before the first event) are drawn at the groove's left end, and a click there goes
    to tick 0. ``x_for`` and ``tick_at`` map one way and back.
    """

    dragged = Signal(object)  # a tick: u64, never Signal(int) (32-bit in PySide6)
    released = Signal(object)

    MARGIN = 7
    LEAD_PX = 12
    """Width of the lead-in that stands for the ticks before ``first_tick`` (when past 0)."""
    BREAK_PX = 3
    """Width of the break that ends the lead-in."""
    LANE_H = 4
    LANE_GAP = 1
    TOP = 4

    def __init__(self, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.setMouseTracking(True)
        self.setMinimumWidth(120)
        self.first_tick = 0
        self.last_tick = 0
        self.tick = 0
        self.lanes: list[tuple[str, QColor, np.ndarray]] = []
        self.game_time = str
        self._cache: QPixmap | None = None
        self._cache_key: tuple | None = None
        self._building: tuple | None = None  # the key the marker job is drawing for
        self._work = SlicedWork(self)
        self._dragging = False
        self.mark: int | None = None
        h = self.TOP + len(KIND_STYLE) * (self.LANE_H + self.LANE_GAP) + 14
        self.setFixedHeight(h)

    def set_data(self, last_tick: int, lanes: list[tuple[str, QColor, np.ndarray]], game_time, first_tick: int = 0) -> None:
        """Replaces the markers (one lane per kind, uint64 ticks) and the tick range first..last."""
        self.last_tick = max(0, int(last_tick))
        self.first_tick = min(max(0, int(first_tick)), self.last_tick)
        self.lanes = lanes
        self.game_time = game_time
        self._cache = self._cache_key = self._building = None
        self._work.cancel()
        self.update()

    def set_mark(self, tick: int | None) -> None:
        """Marks the tick where compared journals part (None removes the mark)."""
        if tick != self.mark:
            self.mark = tick
            self.update()

    def set_tick(self, tick: int) -> None:
        """Moves the handle."""
        if tick != self.tick:
            self.tick = tick
            self.update()

    @property
    def markers_drawn(self) -> bool:
        """True when the markers' picture for the current size is drawn; False after new
        data or a resize until the sliced job that draws it ends (the bar then shows the
        last picture stretched, or none after new data)."""
        return self._cache is not None and self._cache_key == self._marker_key()

    # ----- geometry -----
    @property
    def lead(self) -> int:
        """Pixels of the lead-in before ``first_tick`` (0 when the track starts at tick 0)."""
        return self.LEAD_PX if self.first_tick > 0 else 0

    def _span(self) -> int:
        """Pixels over which ``first_tick`` .. ``last_tick`` lie in proportion (at least 1)."""
        return max(1, self.width() - 2 * self.MARGIN - self.lead)

    def x_for(self, tick: int) -> float:
        """The pixel column where ``tick`` is drawn: a tick before ``first_tick`` (tick 0 of a
        save whose ticks start far from 0) at the lead-in's left end, the others in
        proportion from the lead-in's right end on (exact integer arithmetic)."""
        tick = int(tick)
        if tick < self.first_tick:
            return float(self.MARGIN)
        width = self.last_tick - self.first_tick
        offset = min(tick, self.last_tick) - self.first_tick
        return self.MARGIN + self.lead + (offset / width * self._span() if width else 0.0)  # int / int: correctly rounded

    def tick_at(self, x: float) -> int:
        """The tick under pixel column ``x`` (clamped to 0..last; exact integer arithmetic):
        the left half of the lead-in is tick 0, the rest first..last in proportion."""
        lead = self.lead
        if lead and x < self.MARGIN + lead / 2:
            return 0
        offset = round(Fraction(x - self.MARGIN - lead) * (self.last_tick - self.first_tick) / self._span())
        return max(self.first_tick, min(self.last_tick, self.first_tick + offset))

    def _pieces(self, span: int) -> list[tuple[int, int]]:
        """The groove's pieces (left, right pixel): the lead-in and first..last with a
        ``BREAK_PX`` gap between them, or one piece when there is no lead-in."""
        lead = self.lead
        if not lead:
            return [(self.MARGIN, self.MARGIN + span)]
        return [(self.MARGIN, self.MARGIN + lead - self.BREAK_PX), (self.MARGIN + lead, self.MARGIN + span)]

    def _lane_top(self, lane: int) -> int:
        return self.TOP + lane * (self.LANE_H + self.LANE_GAP)

    # ----- painting -----
    def _marker_key(self) -> tuple:
        return self.width(), self.height(), self.devicePixelRatioF()

    def _markers(self) -> QPixmap | None:
        """The markers' pixmap for the current size, or the last one while the job draws
        the new one (started here when it is not running); None after new data."""
        key = self._marker_key()
        if self._cache is not None and self._cache_key == key:
            return self._cache
        if self._building != key:
            self._building = key
            self._work.start(self._draw_markers(key))
        return self._cache

    def _draw_markers(self, key: tuple):
        """The sliced job: bins each lane (``BIN_STEP`` ticks a step), then draws one
        lane a step into a new pixmap, which replaces the cache when it is done."""
        width, height, dpr = key
        lead = self.lead
        span = width - 2 * self.MARGIN
        columns = max(1, span - lead)
        binned = []
        for _, colour, ticks in self.lanes:
            counts = np.zeros(columns, dtype=np.int64)
            # Ticks before first_tick (a finding's, say) are drawn where tick 0 is: at the lead-in's left end.
            before = int(np.searchsorted(ticks, np.uint64(self.first_tick))) if lead else 0
            if len(ticks) > before:
                yield from bin_into(counts, ticks[before:], self.last_tick, self.first_tick)
            cols = np.flatnonzero(counts)
            xs, counts = cols + lead, counts[cols]
            if before:
                xs, counts = np.r_[0, xs], np.r_[before, counts]
            binned.append((colour, xs, counts))
        pix = QPixmap(int(width * dpr), int(height * dpr))
        pix.setDevicePixelRatio(dpr)
        pix.fill(Qt.transparent)
        p = QPainter(pix)
        groove = self.palette().color(self.palette().ColorRole.AlternateBase).darker(104)
        for left, right in self._pieces(span):  # the lead-in and first..last, a break between them
            p.fillRect(QRectF(left, self.TOP - 1, right - left, len(KIND_STYLE) * (self.LANE_H + self.LANE_GAP) + 1), groove)
        p.end()
        for lane, (colour, cols, counts) in enumerate(binned):
            if len(cols) == 0:
                continue
            yield
            top = self._lane_top(lane)
            weight = np.log1p(counts) / math.log1p(max(int(counts.max()), 1))
            alphas = (120 + 135 * weight).astype(int)
            p = QPainter(pix)
            for alpha in np.unique(alphas):
                c = QColor(colour)
                c.setAlpha(int(alpha))
                p.setPen(QPen(c, 1))
                xs = cols[alphas == alpha] + self.MARGIN + 0.5
                p.drawLines([QLineF(x, top, x, top + self.LANE_H) for x in xs.tolist()])
            p.end()
        self._cache, self._cache_key, self._building = pix, key, None
        self.update()

    def paintEvent(self, event) -> None:  # noqa: N802 (Qt override)
        p = QPainter(self)
        markers = self._markers()
        if markers is not None:  # stretched to the new size while the job draws it anew
            p.drawPixmap(QRectF(0, 0, self.width(), self.height()), markers, QRectF(markers.rect()))
        p.setRenderHint(QPainter.Antialiasing)
        base_y = self._lane_top(len(KIND_STYLE)) + 3
        span = self.width() - 2 * self.MARGIN
        pal = self.palette()
        p.setPen(Qt.NoPen)
        p.setBrush(pal.color(pal.ColorRole.Mid))
        pieces = self._pieces(span)
        for left, right in pieces:
            p.drawRoundedRect(QRectF(left, base_y, right - left, 4), 2, 2)
        if self.mark is not None and self.last_tick:
            mx = self.x_for(min(self.mark, self.last_tick))
            p.setPen(QPen(QColor(MARK_COLOUR), 2))
            p.drawLine(QPointF(mx, 0), QPointF(mx, base_y + 4))
            p.setPen(Qt.NoPen)
            p.setBrush(QColor(MARK_COLOUR))
            p.drawPolygon(QPolygonF([QPointF(mx - 4, 0), QPointF(mx + 4, 0), QPointF(mx, 5)]))
        x = self.x_for(self.tick)
        accent = pal.color(pal.ColorRole.Highlight)
        p.setBrush(accent)
        for left, right in pieces:
            if x > left:
                p.drawRoundedRect(QRectF(left, base_y, min(x, right) - left, 4), 2, 2)
        p.setPen(QPen(QColor(30, 30, 30), 1.5))
        p.drawLine(QPointF(x, 1), QPointF(x, base_y + 4))
        p.setPen(QPen(QColor(30, 30, 30), 1))
        p.drawPolygon(QPolygonF([QPointF(x - 6, self.height() - 1), QPointF(x + 6, self.height() - 1), QPointF(x, base_y + 1)]))
        p.end()


    # ----- mouse -----
    def mousePressEvent(self, event) -> None:  # noqa: N802 (Qt override)
        if event.button() == Qt.LeftButton and self.last_tick > 0:
            self._dragging = True
            self.dragged.emit(self.tick_at(event.position().x()))
            event.accept()
        else:
            super().mousePressEvent(event)

    def mouseMoveEvent(self, event) -> None:  # noqa: N802 (Qt override)
        if self._dragging:
            self.dragged.emit(self.tick_at(event.position().x()))

    def mouseReleaseEvent(self, event) -> None:  # noqa: N802 (Qt override)
        if self._dragging and event.button() == Qt.LeftButton:
            self._dragging = False
            self.released.emit(self.tick_at(event.position().x()))

    def event(self, event) -> bool:  # noqa: D401 (Qt override)
        if event.type() == QEvent.ToolTip:
            QToolTip.showText(event.globalPos(), self._tooltip(event.pos().x(), event.pos().y()), self)
            return True
        return super().event(event)

    def _tooltip(self, x: float, y: float) -> str:
        """Names the nearest event (within 4 px) of the lane under the mouse, else the tick."""
        tick = self.tick_at(x)
        if self.mark is not None and self.last_tick and abs(self.x_for(self.mark) - x) <= 4:
            return f"A and B part here: tick {self.mark:,} ({self.game_time(self.mark)})"
        lane = int((y - self.TOP) // (self.LANE_H + self.LANE_GAP))
        if 0 <= lane < len(self.lanes) and self.last_tick:
            label, _, ticks = self.lanes[lane]
            if len(ticks):
                k = int(np.searchsorted(ticks, np.uint64(tick)))
                near = [int(ticks[i]) for i in (k - 1, k) if 0 <= i < len(ticks)]
                best = min(near, key=lambda t: abs(t - tick))
                px = abs(self.x_for(best) - x)
                if px <= 4:
                    count = int(np.count_nonzero(ticks == np.uint64(best)))
                    many = f" ×{count}" if count > 1 else ""
                    return f"{label}{many} at tick {best:,} ({self.game_time(best)})"
        if tick < self.first_tick:
            return f"tick {tick:,} ({self.game_time(tick)}), before the first event at tick {self.first_tick:,}"
        return f"tick {tick:,} ({self.game_time(tick)})"


class GameTimeLabel(QLabel):
    """The game time at the tick shown and at the last tick, "h:mm:ss.s / h:mm:ss.s".

    Plain text (a rich-text label lays a QTextDocument out for its size hint at every
    step). Its size hint is the widest pair the save can give, set once per
    load (``set_widest``), so a step never lays the bar out again. Its minimum is one
    time: where the bar is narrower than the pair (a 1040 x 700 window cut the pair off
    at the edge) it shows the tick's time alone; the tooltip keeps both.
    """

    PAD_PX = 8
    """Room (pixels) beside the text, for the italic of a drag preview."""

    MIN_TIME = "00:00:00.0"
    """The widest time the label always has room for; a longer one (a save whose ticks
    near 2^64 are 512409557603043:06:01.5) ends in "…" where the bar is narrow, and the
    tooltip keeps it whole. (At 1040 x 700 it overlapped the tick field.)"""

    def __init__(self, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.setTextFormat(Qt.PlainText)
        self._times: tuple[str, str | None] = ("no save open", None)
        self.set_widest(None)  # sets _one_px, _pair_px, _min_px

    def set_widest(self, last_time: str | None) -> None:
        """Size for times as wide as ``last_time`` (the last tick's; None: no save)."""
        metrics = self.fontMetrics()
        blank = metrics.horizontalAdvance("no save open")
        one = metrics.horizontalAdvance(last_time) if last_time else blank
        pair = metrics.horizontalAdvance(f"{last_time} / {last_time}") if last_time else blank
        self._one_px, self._pair_px = one + self.PAD_PX, max(pair, blank) + self.PAD_PX
        self._min_px = min(self._one_px, metrics.horizontalAdvance(self.MIN_TIME + "…") + self.PAD_PX)
        self.updateGeometry()
        holder = self.parentWidget()
        if holder is not None:  # a SteadyLabel lays out again only for a wider minimum: a new save, a new hint
            holder.updateGeometry()
        self._fit()

    def show_times(self, current: str, last: str | None = None) -> None:
        """Show ``current`` and, where there is room, `` / last``."""
        self._times = (current, last)
        self._fit()

    def sizeHint(self) -> QSize:  # noqa: N802 (Qt override)
        return QSize(self._pair_px, super().sizeHint().height())

    def minimumSizeHint(self) -> QSize:  # noqa: N802 (Qt override)
        # A time longer than MIN_TIME (ticks near 2^64 are 512409557603043:06:01.5) is cut
        # anyway: it gives way down to nothing, so the layout never paints it over the tick
        # field that a u64 tick widens (1040 x 700, trial 47); the tooltip keeps both times.
        width = 0 if self._one_px > self._min_px else self._min_px
        return QSize(width, super().minimumSizeHint().height())

    def resizeEvent(self, event) -> None:  # noqa: N802 (Qt override)
        super().resizeEvent(event)
        self._fit()

    def _fit(self) -> None:
        current, last = self._times
        shown = self.isVisible()  # a hidden label is sized when shown (a resize event)
        if shown and self.width() < self._one_px:
            text = self.fontMetrics().elidedText(current, Qt.ElideRight, max(0, self.width() - self.PAD_PX))
        elif last is not None and (not shown or self.width() >= self._pair_px):
            text = f"{current} / {last}"
        else:
            text = current
        if text != self.text():
            self.setText(text)


class TickBar(QWidget):
    """Slider over 0..last tick with event markers, stepping, go-to and playback.

    Args:
        session: the app ``Session``; the bar follows it and calls its ``set_tick``
            and ``step_event``.
        parent: optional parent widget.

    The keyboard commands are the QActions returned by ``actions()`` (object names
    ``actionPreviousEvent``, ``actionNextEvent``, ``actionBack100``,
    ``actionForward100``, ``actionFirstTick``, ``actionLastTick``,
    ``actionGoToTick``, ``actionPlayPause``), shortcut context WindowShortcut.
    """

    def __init__(self, session, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.setObjectName("tickBar")
        self.session = session
        self.setFocusPolicy(Qt.StrongFocus)
        self._timer = QTimer(self)
        self._timer.timeout.connect(self._on_frame)

        self._make_actions()
        self.track = _Track(self)
        self.track.dragged.connect(self._on_dragged)
        self.track.released.connect(self._on_released)

        # May shrink to "Any…" in a small window (1040 x 700 cut the bar's row off).
        self.kind_combo = ElidingComboBox(self, min_text="Any…")
        self.kind_combo.setObjectName("tickBarKind")
        self.kind_combo.setToolTip("Kind of event that previous/next event and event playback step to")
        self.kind_combo.addItem("Any event", None)
        for kind, (label, colour) in (*KIND_STYLE.items(), *STEP_ONLY_KINDS.items()):
            self.kind_combo.addItem(swatch(colour), label, kind)
        self.kind_combo.currentIndexChanged.connect(self._update_actions)

        self.speed_combo = QComboBox(self)
        self.speed_combo.setObjectName("tickBarSpeed")
        self.speed_combo.setToolTip("Playback speed: one event of the chosen kind at a time, or game ticks at N× real time")
        for label, speed in SPEEDS:
            self.speed_combo.addItem(label, speed)
        self.speed_combo.setCurrentIndex(1)
        self.speed_combo.currentIndexChanged.connect(self._restart_timer)

        self.tick_field = TickField(self)
        self.tick_field.setObjectName("tickBarTick")
        self.tick_field.setToolTip("Current tick (type a tick and press Enter; Up/Down step by one)")
        self.tick_field.valueChanged.connect(self._on_tick_field)
        self.tick_field.said.connect(lambda text: self.session.notify(text))
        self.time_label = GameTimeLabel(self)
        self.time_label.setObjectName("tickBarTime")

        row = QHBoxLayout()
        row.setContentsMargins(0, 0, 0, 0)
        for action in (self.first_action, self.prev_action, self.play_action, self.next_action, self.last_action):
            button = QToolButton(self)
            button.setDefaultAction(action)
            button.setFocusPolicy(Qt.NoFocus)
            button.setAutoRaise(True)
            row.addWidget(button)
        row.addWidget(self.kind_combo)
        row.addWidget(self.speed_combo)
        row.addStretch(1)
        row.addWidget(QLabel("tick", self))
        row.addWidget(self.tick_field)
        row.addWidget(SteadyLabel(self.time_label))

        layout = QVBoxLayout(self)
        layout.setContentsMargins(6, 4, 6, 4)
        layout.setSpacing(2)
        layout.addWidget(self.track)
        layout.addLayout(row)

        session.loaded.connect(self._on_loaded)
        session.findingsChanged.connect(self._set_lanes)  # the findings' lane
        session.comparisonChanged.connect(self._on_loaded)  # the range may grow to B's; the divergence mark
        session.tickChanged.connect(self._on_tick)
        session.tickPreview.connect(self._on_preview)
        app = QApplication.instance()
        app.focusChanged.connect(self._on_focus_changed)
        self._on_focus_changed(None, app.focusWidget())
        self._on_loaded()

    # ----- actions -----
    def _make_actions(self) -> None:
        style = self.style()
        key = QKeySequence
        specs = (  # attribute, object name, text, shortcut, icon, slot
            ("prev_action", "actionPreviousEvent", "Previous event", key(Qt.Key_Left),
             QStyle.SP_MediaSeekBackward, self.previous_event),
            ("next_action", "actionNextEvent", "Next event", key(Qt.Key_Right),
             QStyle.SP_MediaSeekForward, self.next_event),
            ("back_action", "actionBack100", f"Back {BIG_STEP} ticks", key(Qt.SHIFT | Qt.Key_Left),
             None, self.back_big_step),
            ("forward_action", "actionForward100", f"Forward {BIG_STEP} ticks", key(Qt.SHIFT | Qt.Key_Right),
             None, self.forward_big_step),
            ("first_action", "actionFirstTick", "First tick", key(Qt.Key_Home),
             QStyle.SP_MediaSkipBackward, self.go_first),
            ("last_action", "actionLastTick", "Last tick", key(Qt.Key_End),
             QStyle.SP_MediaSkipForward, self.go_last),
            ("goto_action", "actionGoToTick", "Go to tick…", key(Qt.CTRL | Qt.Key_G), None, self.go_to_tick),
            ("play_action", "actionPlayPause", "Play", key(Qt.Key_Space), QStyle.SP_MediaPlay, None),
        )
        self._actions: list[QAction] = []
        for attr, name, text, keys, icon, slot in specs:
            action = QAction(text, self)
            action.setObjectName(name)
            action.setShortcut(keys)
            action.setShortcutContext(Qt.WindowShortcut)
            action.setToolTip(f"{text} ({keys.toString(QKeySequence.NativeText)})")
            if icon is not None:
                action.setIcon(style.standardIcon(icon))
            if slot is not None:
                action.triggered.connect(slot)
            self.addAction(action)
            setattr(self, attr, action)
            self._actions.append(action)
        self.play_action.setCheckable(True)
        self.play_action.toggled.connect(self._on_play_toggled)

    def actions(self) -> list[QAction]:  # noqa: D401 (QWidget override)
        """The bar's commands (for a menu), in display order."""
        return list(self._actions)

    def _on_focus_changed(self, _old, new) -> None:
        """Lets a focused table, list, text field or button elsewhere keep its own keys.

        WindowShortcut would take Left/Right from a table of the same window, so while
        such a widget outside the bar has focus the bare-key actions (all but Ctrl+G)
        narrow to WidgetWithChildrenShortcut; everywhere else they work window-wide.
        """
        outside_user = isinstance(new, _KEY_USERS) and not self.isAncestorOf(new)
        context = Qt.WidgetWithChildrenShortcut if outside_user else Qt.WindowShortcut
        for action in self._actions:
            if action is not self.goto_action:
                action.setShortcutContext(context)

    def keyPressEvent(self, event) -> None:  # noqa: N802 (Qt override)
        """Runs an action whose shortcut matches when the key reaches the bar itself.

        WindowShortcut handles keys in a window; this covers keys sent straight to
        the bar (a focused bar outside an active window, or ``QTest.keyClick``).
        """
        pressed = QKeySequence(event.keyCombination())
        for action in self._actions:
            if action.isEnabled() and action.shortcut() == pressed:
                action.trigger()
                event.accept()
                return
        super().keyPressEvent(event)

    def _update_actions(self) -> None:
        s = self.session
        ready = s.ready and s.last_tick > 0
        kind = self.current_kind()
        self.prev_action.setEnabled(ready and s.next_event_tick(kind, False) is not None)
        self.next_action.setEnabled(ready and s.next_event_tick(kind, True) is not None)
        for action in (self.back_action, self.forward_action, self.first_action, self.last_action,
                       self.goto_action, self.play_action):
            action.setEnabled(ready)

    # ----- intents -----
    def current_kind(self) -> str | None:
        """The event kind chosen in the kind combo (None for any event)."""
        return self.kind_combo.currentData()

    def step_event(self, forward: bool) -> None:
        """Moves the session to the previous/next event of the chosen kind."""
        self.session.step_event(self.current_kind(), forward)

    def previous_event(self) -> None:
        """Moves to the previous event of the chosen kind."""
        self.step_event(False)

    def next_event(self) -> None:
        """Moves to the next event of the chosen kind."""
        self.step_event(True)

    def step_ticks(self, delta: int) -> None:
        """Moves the session ``delta`` ticks (clamped)."""
        self.session.set_tick(self.session.tick + delta)

    def back_big_step(self) -> None:
        """Moves BIG_STEP ticks back."""
        self.step_ticks(-BIG_STEP)

    def forward_big_step(self) -> None:
        """Moves BIG_STEP ticks forward."""
        self.step_ticks(BIG_STEP)

    def go_first(self) -> None:
        """Moves to the first tick."""
        self.session.set_tick(self.session.first_tick)

    def go_last(self) -> None:
        """Moves to the last tick."""
        self.session.set_tick(self.session.last_tick)

    def go_to_tick(self) -> None:
        """Asks for a tick and moves there; a tick past the end goes to the end and the
        status bar says so."""
        s = self.session
        tick = ask_tick(self, s.tick, s.last_tick, notify=s.notify)
        if tick is not None:
            s.set_tick(tick)

    def _on_dragged(self, tick: int) -> None:
        self.session.set_tick(tick, live=True)

    def _on_released(self, tick: int) -> None:
        self.session.set_tick(tick)
        self._show_tick(self.session.tick)  # the commit may be a no-op after a preview

    def _on_tick_field(self, tick: int) -> None:
        self.session.set_tick(tick)

    # ----- playback -----
    @property
    def playing(self) -> bool:
        """True while playback runs."""
        return self._timer.isActive()

    def set_playing(self, playing: bool) -> None:
        """Starts or stops playback."""
        self.play_action.setChecked(playing)

    def _on_play_toggled(self, playing: bool) -> None:
        icon = QStyle.SP_MediaPause if playing else QStyle.SP_MediaPlay
        self.play_action.setIcon(self.style().standardIcon(icon))
        self.play_action.setText("Pause" if playing else "Play")
        if playing:
            s = self.session
            if s.tick >= s.last_tick:
                s.set_tick(s.first_tick)
            self._restart_timer()
        else:
            self._timer.stop()

    def _restart_timer(self) -> None:
        if not self.play_action.isChecked():
            return
        self._timer.start(EVENT_FRAME_MS if self.speed_combo.currentData() is None else FRAME_MS)

    def ticks_per_frame(self) -> int | None:
        """Ticks moved per playback frame (None in event-by-event mode)."""
        speed = self.speed_combo.currentData()
        if speed is None:
            return None
        s = self.session
        tps = s.playthrough.save.ticks_per_second if s.playthrough else 10
        return max(1, round(speed * (tps or 10) * FRAME_MS / 1000))

    def _on_frame(self) -> None:
        s = self.session
        step = self.ticks_per_frame()
        if step is None:
            tick = s.next_event_tick(self.current_kind(), True)
        else:
            tick = s.tick + step if s.tick < s.last_tick else None
        if tick is None:
            self.set_playing(False)
            return
        s.set_tick(tick)
        if s.tick >= s.last_tick:
            self.set_playing(False)

    # ----- following the session -----
    def _on_loaded(self) -> None:
        self.set_playing(False)
        s = self.session
        self._set_lanes()
        game_time = s.playthrough.save.game_time if s.playthrough else str
        self.tick_field.setRange(0, s.last_tick)
        c = s.comparison
        self.track.set_mark(c.divergence.tick if c is not None and c.divergence is not None else None)
        self.time_label.set_widest(game_time(s.last_tick))
        self.setEnabled(s.ready)
        self._show_tick(s.tick)

    def _set_lanes(self) -> None:
        """The marker lanes of the open playthrough (its findings' lane as they are now)."""
        s = self.session
        prepared = s.prepared.get(TickLanes) if s.ready else None
        lanes = []
        for kind, (label, colour) in KIND_STYLE.items():
            ticks = prepared.lanes.get(kind) if prepared is not None and kind != "finding" else None
            if ticks is None:  # findings are few (and known to the session only); or not prepared
                ticks = np.sort(np.asarray(s.event_ticks(kind), dtype=np.uint64)) if s.ready else np.empty(0, np.uint64)
            lanes.append((label, QColor(colour), ticks))
        game_time = s.playthrough.save.game_time if s.playthrough else str
        self.track.set_data(s.last_tick, lanes, game_time, s.view_start)

    def _on_tick(self, tick: int) -> None:
        self._show_tick(tick)

    def _on_preview(self, tick: int) -> None:
        self._show_tick(tick, preview=True)

    def _show_tick(self, tick: int, preview: bool = False) -> None:
        """Shows ``tick`` (a preview while dragging: italic time, actions unchanged)."""
        self.track.set_tick(tick)
        self.tick_field.setValue(tick)
        if not preview:
            self._update_actions()
        s = self.session
        if not s.playthrough:
            self.time_label.show_times("no save open")
            return
        game_time = s.playthrough.save.game_time
        if self.time_label.font().italic() != preview:
            font = self.time_label.font()
            font.setItalic(preview)
            self.time_label.setFont(font)
        self.time_label.show_times(game_time(tick), game_time(s.last_tick))
        self.time_label.setToolTip(f"Game time at tick {tick:,} / at the last tick {s.last_tick:,}")

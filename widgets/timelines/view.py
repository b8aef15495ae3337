"""Relationship and stress timelines of the open playthrough (pyqtgraph).

Two x-linked plots over game ticks:

* **Relationship**: every NPC's score (0..100 score points) as a step curve, the
  selected NPC emphasised, the level bands (relationship seed: <= 20 Stranger,
  <= 40 Acquaintance, <= 60 Friend, <= 80 Good Friend, above Close Friend) shaded
  and named on the right axis, and the selected NPC's walk-aways, confrontations
  and walk-away penalties as markers.
* **Stress**: the selected NPC's stress against its threshold (dashed), the part
  over the threshold filled red (schema §8.1).

A movable tick cursor in both plots follows the session and drives it: dragging
previews (``set_tick(t, live=True)``, rate-limited), releasing commits. The numpy
arrays are built once per load; a tick change only moves two lines.

Ticks are u64. The plots' x is ``tick - origin`` in float64, where ``origin`` is 0 for a
save whose ticks fit in 2^53 (floats hold them exactly) and the first journal tick
otherwise, so ticks past 2^53 still plot, seek and read back exactly
(``TickAxis``, ``tick_of``/``x_of``); every tick shown is a Python ``int``. When the
axis starts at the first event (the session's ``view_start``, past 0 for ticks that
start far from 0), the margin left of it stands for the ticks before it: a cursor at
tick 0 is drawn there, and a click there goes to tick 0.
"""

from __future__ import annotations

import math
from collections import OrderedDict
from collections.abc import Mapping
from html import escape
from types import MappingProxyType

import numpy as np
import pyqtgraph as pg
from narrative_debugger.models.domain.types import LEVEL_BOUNDS, RelationshipLevel
from narrative_debugger.models.explain.chain import apart_places, fmt_places
from narrative_debugger.widgets.kit.plain_text import NBSP, LinesLabel
from narrative_debugger.widgets.kit.steady import SteadyLabel
from narrative_debugger.widgets.kit.plot_palette import PlotPalette
from narrative_debugger.widgets.timelines.axis import LevelAxis, TickAxis, TickViewBox
from narrative_debugger.widgets.timelines.grid import GridLines
from narrative_debugger.widgets.kit.state_colors import KIND_STYLE
from narrative_debugger.widgets.timelines.layer import OVER_BRUSH, NpcLayer
from narrative_debugger.widgets.timelines.tracks import (
    BAND_FILLS,
    OTHER_WIDTH,
    NpcTrack,
    PassiveScatter,
    FirstTracks,
    SELECTED_WIDTH,
    Step,
    StepCurve,
    build_tracks,
    cache_drawing,
    drop_drawings,
    faded,
    marker_reach,
    prepare,
    tune_curve,
)
from narrative_debugger.widgets.kit import slices
from narrative_debugger.widgets.kit.slices import SlicedWork
from narrative_debugger.widgets.timelines.compare import ComparisonOverlay
from narrative_debugger.widgets.kit.visibility import obscured
from narrative_debugger.widgets.kit.why import add_why_action
from PySide6.QtCore import QEvent, QTimer, Qt
from PySide6.QtGui import QColor, QFontMetrics, QPalette
from PySide6.QtWidgets import QFrame, QHBoxLayout, QLabel, QScrollArea, QSizePolicy, QToolButton, QVBoxLayout, QWidget

HOVER_RATE = 30
"""Hover and cursor-drag updates per second (SignalProxy rate limit)."""

FULL_PADDING = 0.01
"""The margin the full range shows on each side, as a fraction of the save's width. When
the axis starts at the first event, the left margin is twice that, and tick 0 is drawn in
its middle (``TimelinesView.cursor_x``)."""

WARM_OPACITY = 1 / 255
"""Opacity at which a prefilled layer is painted once into its pixmaps: at most one
step of 255 in any pixel, and Qt paints (and caches) an item only when its opacity is
not 0."""

AHEAD_AFTER_MS = 5
"""How long after a committed tick or NPC change the timelines make the layers of the
NPCs the next and the previous event concern (``_ahead_steps``)."""

LAYERS_KEPT = 8
"""How many NPCs' layers (``NpcLayer``: emphasised curve, stress and markers) the
timelines keep, hidden, for when they are selected again."""



#: Where the cursor label sits along the score plot's cursor (0: bottom, 1: top) when the
#: plot is tall enough to hold it whole there.
CURSOR_LABEL_POSITION = 0.96

#: The longest NPC name the legend shows whole; a longer one ends in "…" (a 200-character
#: name ran off the legend's edge and pushed the next NPC out of it: trial 47).
LEGEND_NAME_CHARS = 40

#: The most lines the readout takes; a longer text ends in "…" and shows whole in its tooltip.
READOUT_LINES = 3

#: The least room the score plot keeps below 0 and above its top, as fractions of the
#: range shown: 0 .. top is drawn as -5 % .. 103 % of top when the plot is tall enough.
SCORE_PADDING = (0.05 / 1.08, 0.03 / 1.08)


def score_range(top: float, height: float) -> tuple[float, float]:
    """The score plot's y range (score points) for scores 0 .. ``top`` in a plot ``height``
    pixels tall: room below 0 and above ``top`` for the selected NPC's markers drawn whole
    there (``marker_reach``: a walk-away penalty's ✕ at a score of 0 hangs ~12 px below
    it, and was cut by the plot's bottom edge at 1040x700), and at least ``SCORE_PADDING``.
    The level bands keep their bounds (0, 20, .., 100); the room is outside them. A plot
    not laid out yet (``height`` <= 0) gets ``SCORE_PADDING`` alone, and the room never
    takes more than half the plot."""
    above, below = marker_reach()
    low, high = SCORE_PADDING
    if height > 0:
        low, high = max(low, below / height), max(high, above / height)
        if low + high > 0.5:
            low, high = 0.5 * low / (low + high), 0.5 * high / (low + high)
    span = top / (1.0 - low - high)
    return -low * span, top + high * span


class _CursorLabel:
    """The cursor label's format: pyqtgraph calls ``format(value=x)``; this writes the exact tick."""

    def __init__(self, view: "TimelinesView") -> None:
        self.view = view

    def format(self, value: float) -> str:  # noqa: A003 (pyqtgraph's format-string protocol)
        return f"{self.view.tick_of(value):,}"


class TimelinesView(QWidget):
    """Relationship score and stress over time, with a tick cursor and hover values.

    Args:
        session: the app ``Session``; the view follows ``loaded``, ``tickPreview``,
            ``tickChanged`` and ``npcChanged`` and calls ``set_tick``/``set_npc``.
        parent: optional parent widget.

    Attributes:
        score_plot, stress_plot: the two x-linked ``pg.PlotItem``.
        cursors: the movable tick lines (score plot, stress plot).
        curves: StableId -> score curve (``pg.PlotDataItem``).
        readout: label with the values under the mouse (or at the cursor): a ``LinesLabel``
            of at most ``READOUT_LINES`` lines (``full_text()`` is the whole text).
        plot_scroll: the scroll area holding ``graphics``, the plots, which scroll when the
            view is less tall than their labels need (``_fit_to_font``).
    """

    def __init__(self, session, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.setObjectName("timelinesView")
        self.session = session
        self.tracks: dict[int, NpcTrack] = {}
        self.curves: dict[int, pg.PlotDataItem] = {}
        self._behind = False  # a tick or NPC came while another tab was in front
        self.origin = 0
        self._view_start = 0  # the session's view_start at the load
        self._before_x: float | None = None  # where ticks before a view_start past 0 are drawn
        self.npc_count = 0
        self._prepared: FirstTracks | None = None
        self._drawn = False  # the curves and selected NPC of the load are drawn
        self._work = SlicedWork(self)
        self._ahead = SlicedWork(self)  # the neighbouring events' NPCs' layers (``_ahead_steps``)
        self._ahead_timer = QTimer(self)
        self._ahead_timer.setSingleShot(True)
        self._ahead_timer.setInterval(AHEAD_AFTER_MS)
        self._ahead_timer.timeout.connect(self._start_ahead)

        # Long text never widens the dock: it wraps beside the Full range button instead of
        # running under it; two lines are kept so hovering does not make the plots jump,
        # and at most three are shown (a longer text ends in "…", whole in the tooltip), so
        # the plots keep their room and no line is cut (trial 50).
        self.readout = LinesLabel(self, min_lines=2, max_lines=READOUT_LINES)
        self.readout.setObjectName("timelinesReadout")
        self.readout.setSizePolicy(QSizePolicy.Ignored, QSizePolicy.Minimum)
        self.readout.setAlignment(Qt.AlignLeft | Qt.AlignTop)
        self.graphics = pg.GraphicsLayoutWidget(self)
        self.graphics.setBackground("w")
        layout = QVBoxLayout(self)
        layout.setContentsMargins(4, 4, 4, 4)
        layout.setSpacing(2)
        self.full_button = QToolButton(self)
        self.full_button.setObjectName("timelinesFullRange")
        self.full_button.setText("Full range")
        self.full_button.setToolTip("Show the whole save again (or double-click the plot)")
        self.full_button.clicked.connect(self.show_full_range)
        top = QHBoxLayout()
        top.setContentsMargins(0, 0, 0, 0)
        top.addWidget(SteadyLabel(self.readout), 1)
        top.addWidget(self.full_button, 0, Qt.AlignTop)
        layout.addLayout(top)
        self.legend = QLabel(self)
        self.legend.setObjectName("timelinesLegend")
        self.legend.setTextFormat(Qt.RichText)
        self.legend.setWordWrap(True)
        self.legend.setToolTip("Click a name to select that NPC")
        self.legend.linkActivated.connect(self._on_legend_link)
        # Rewritten at every NPC change (the selected name turns bold): held, so the
        # view is laid out again only when the legend needs another height.
        layout.addWidget(SteadyLabel(self.legend))
        # The plots keep room for their labels (``_fit_to_font``); a view less tall
        # scrolls them rather than drawing the labels over one another.
        self.plot_scroll = QScrollArea(self)
        self.plot_scroll.setObjectName("timelinesPlots")
        self.plot_scroll.setFrameShape(QFrame.NoFrame)
        self.plot_scroll.setWidgetResizable(True)
        self.plot_scroll.setHorizontalScrollBarPolicy(Qt.ScrollBarAlwaysOff)
        self.plot_scroll.setWidget(self.graphics)
        layout.addWidget(self.plot_scroll, 1)
        self._build_plots()
        self._fit_to_font()

        self._hover_proxy = pg.SignalProxy(self.graphics.scene().sigMouseMoved, rateLimit=HOVER_RATE, slot=self._on_mouse_moved)
        self.graphics.scene().sigMouseClicked.connect(self._on_scene_clicked)
        self._full_range = (0.0, 10.0)
        self._drag_proxies = [
            pg.SignalProxy(line.sigPositionChanged, rateLimit=HOVER_RATE, slot=self._on_cursor_dragged) for line in self.cursors
        ]
        for line in self.cursors:
            line.sigPositionChangeFinished.connect(self._on_cursor_released)

        self._why_plot = "score"
        #: Where along its line (0: bottom, 1: top) the cursor label sits when no curve
        #: ends beside it (``_place_labels``); the comparison's label takes the row below.
        self.cursor_label_top = CURSOR_LABEL_POSITION
        self.why_action = add_why_action(self, session, self.why_target)
        for plot, value in ((self.score_plot, "score"), (self.stress_plot, "stress")):
            if plot.vb.menu is not None:  # pyqtgraph's own menu, when enabled, gains the entry too
                plot.vb.menu.addAction(f"Why? ({value} at the cursor)", lambda v=value: session.explain(self.why_target(v)))
        session.loaded.connect(self._on_loaded)
        session.tickPreview.connect(self._on_tick)  # cheap: two lines and a few bisections
        session.tickChanged.connect(self._on_tick)
        session.npcChanged.connect(self._on_npc)
        session.tickChanged.connect(self._plan_ahead)  # a committed tick; not while dragged
        session.npcChanged.connect(self._plan_ahead)
        session.comparisonChanged.connect(self._catch_up)  # before the overlay reads the curves
        self.overlay = ComparisonOverlay(self)  # side B while comparing (issue 13)
        self.score_plot.vb.sigResized.connect(self._place_labels)
        self.score_plot.vb.sigRangeChanged.connect(self._follow_curve_ends)
        self._on_loaded()

    #: Each plot's y-axis title, and the shorter one used when the plot is less tall
    #: than the title is long (a vertical title longer than its plot ran into the
    #: other plot's: "Stress Relationship scor" at 1040x700).
    AXIS_TITLES = (("score_plot", "Relationship score", "Score"), ("stress_plot", "Stress", "Stress"))

    def _fit_axis_titles(self, *_args) -> None:
        """Each plot's left title: the full one, else the short one, else none, whichever
        fits inside its own plot's height with a quarter of a line of room at each end.

        pyqtgraph centres a vertical title on its axis and lets a longer one run past
        it. The short titles alone were always shown: in a plot shorter than "Score" (a
        1040x700 window at an 11 pt desktop font, comparing: plots of ~40 px) the two
        titles met and read "StressScore". Kept inside their plots, with that room, two
        titles stand at least half a line apart (two spaces' width and more). A title
        left out is still the axis's tooltip."""
        ink = self.plot_palette.colors.ink.name() if getattr(self, "plot_palette", None) and self.plot_palette.colors else None
        for name, full, short in self.AXIS_TITLES:
            axis = getattr(self, name).getAxis("left")
            metrics = QFontMetrics(axis.label.font())
            room = axis.geometry().height() - metrics.height() / 2
            text = next((t for t in (full, short) if metrics.horizontalAdvance(t) <= room), "")
            axis.setToolTip(full)
            if axis.labelText != text:
                style = dict(axis.labelStyle, **({"color": ink} if ink else {}))
                axis.setLabel(text, **style)
                axis.resizeEvent()  # pyqtgraph places a title at a resize only: centre the new one

    #: The least height of each plot's data area, in lines of its axes' font: the score
    #: plot's five level names (a band is 20 of the 108 score points shown) and its tick
    #: labels each a line apart, the stress plot's labels four lines. The score plot has
    #: at least the markers' room (``score_range``) more than its five bands' lines.
    PLOT_ROOM_LINES = (("score_plot", 108 / 20), ("stress_plot", 4.0))

    #: The right axes' least width (px): the level names at the app's usual font.
    LEVEL_AXIS_WIDTH = 104

    def _fit_to_font(self) -> None:
        """Sizes the plots to their axes' font: each plot's data area at least
        ``PLOT_ROOM_LINES`` tall, the plots (``graphics``) as tall as that takes (a view
        less tall scrolls them), and the right axes wide enough for the widest level name.

        Trial 50: at 1040x700, comparing, at an 11 pt font, the score plot was ~40 px and
        its level names and tick labels were drawn over one another, and "Acquaintance",
        wider than its axis, was not drawn at all."""
        for name, lines in self.PLOT_ROOM_LINES:
            plot = getattr(self, name)
            axis = plot.getAxis("left")
            line = QFontMetrics(axis.style.get("tickFont") or axis.font()).lineSpacing()
            room = lines * line
            if plot is self.score_plot:  # the bands a line each, besides the markers' room
                room = max(room, len(RelationshipLevel) * line + sum(marker_reach()) + 1)
            plot.vb.setMinimumHeight(math.ceil(room))
        width = max(self.LEVEL_AXIS_WIDTH, self.score_plot.getAxis("right").names_width())
        for plot in (self.score_plot, self.stress_plot):  # the same in both plots keeps x aligned
            plot.getAxis("right").setWidth(width)
        needed = math.ceil(self.graphics.ci.effectiveSizeHint(Qt.MinimumSize).height())
        self.graphics.setMinimumHeight(needed + 2 * self.graphics.frameWidth())

    # ----- construction -----
    def _build_plots(self) -> None:
        g = self.graphics
        self.score_plot = g.addPlot(row=0, col=0, axisItems={"right": LevelAxis()}, viewBox=TickViewBox())
        self.tick_axis = TickAxis()
        self.stress_plot = g.addPlot(row=1, col=0, axisItems={"bottom": self.tick_axis}, viewBox=TickViewBox())
        g.ci.layout.setRowStretchFactor(0, 3)
        g.ci.layout.setRowStretchFactor(1, 2)
        self.stress_plot.setXLink(self.score_plot)
        for plot, title in ((self.score_plot, "Relationship score"), (self.stress_plot, "Stress")):
            plot.setMouseEnabled(x=True, y=False)
            plot.setMenuEnabled(False)
            plot.hideButtons()
            plot.setLabel("left", title, color="#333")
            plot.showAxis("right")
            for name in ("left", "bottom", "right"):
                plot.getAxis(name).setPen(pg.mkPen("#555"))
                plot.getAxis(name).setTextPen(pg.mkPen("#333"))
            plot.getAxis("left").setWidth(58)
            plot.getAxis("left").enableAutoSIPrefix(False)
            plot.getAxis("right").setWidth(self.LEVEL_AXIS_WIDTH)  # level names (``_fit_to_font``)
        # The x grid is an item of each view, not long ticks of the bottom axes (timeline_grid).
        # Both at the labelled ticks (the plots share x and width).
        self.grids = [GridLines(plot, self.tick_axis, alpha=0.15) for plot in (self.score_plot, self.stress_plot)]
        self.score_plot.getAxis("bottom").setStyle(showValues=False)
        self.score_plot.getAxis("bottom").setTicks([[], []])  # the grid marks the ticks
        self.stress_plot.getAxis("right").setStyle(showValues=False)
        self.stress_plot.getAxis("right").setTicks([[], []])  # it keeps both plots' x aligned; its ticks were a ruler of noise
        self.stress_plot.setLabel("bottom", "tick", color="#333")
        for plot in (self.score_plot, self.stress_plot):
            plot.getViewBox().sigResized.connect(self._fit_axis_titles)
            # Not the bottom axes: cached while they drew the grid, they made steps
            # slower. GridLines draws it now; caching them is left until measured again.
            for name in ("left", "right"):
                cache_drawing(plot.getAxis(name))
            plot.getViewBox().sigXRangeChanged.connect(drop_drawings)
        self._build_score_plot()
        self._build_stress_plot()
        self._build_cursors()
        # Background, axes, labels, cursors and bands in the palette's colours, light or dark.
        self.plot_palette = PlotPalette(self.graphics, (self.score_plot, self.stress_plot), self.cursors, self.bands,
                                        self._threshold_curves, self.grids)

    def _build_score_plot(self) -> None:
        plot = self.score_plot
        self._score_top = 100.0  # the highest score bound shown (``fit_scores``)
        self._frame_scores()
        plot.vb.sigResized.connect(self._frame_scores)
        plot.getAxis("left").setTicks([[(v, str(v)) for v in (0, 20, 40, 60, 80, 100)], [(v, str(v)) for v in range(5, 100, 5) if v % 20]])
        bounds = [0.0] + [b for b, _ in LEVEL_BOUNDS] + [100.0]
        self.bands = []
        for lo, hi, fill in zip(bounds, bounds[1:], BAND_FILLS):
            band = pg.LinearRegionItem((lo, hi), orientation="horizontal", movable=False,
                                       brush=pg.mkBrush(fill), pen=pg.mkPen(None))
            band.setZValue(-100)
            cache_drawing(band)
            plot.addItem(band, ignoreBounds=True)
            self.bands.append(band)
        for bound, _ in LEVEL_BOUNDS:
            line = pg.InfiniteLine(bound, angle=0, pen=pg.mkPen("#b8b8b8", width=1, style=Qt.DashLine))
            line.setZValue(-90)
            plot.addItem(line, ignoreBounds=True)
        self.hover_dot = PassiveScatter(size=9, pen=pg.mkPen("#202020", width=1.5), brush=pg.mkBrush(255, 255, 255))
        self.hover_dot.setZValue(90)
        plot.addItem(self.hover_dot, ignoreBounds=True)

    def _build_stress_plot(self) -> None:
        """The stress plot's frame: every NPC's stress is drawn in its own units
        (``timeline_layer.stress_frame``), so the y range changes only for an NPC whose
        stress or threshold falls below 0, and the left axis scales its labels."""
        self.stress_plot.setYRange(0.0, 1.0, padding=0.02)
        # The selected NPC's layer, and the layers of the NPCs selected last, hidden
        # (``_show_layer``): selecting one of them again shows its items, each with
        # the pixmap it was drawn into, instead of drawing them anew.
        self._layers: OrderedDict[object, NpcLayer] = OrderedDict()
        self._spare_layers: list[NpcLayer] = []  # hidden, to be given another NPC's data
        self.layer = self._empty_layer = NpcLayer(self.score_plot, self.stress_plot)

    def _threshold_curves(self) -> list:
        """Every layer's threshold curve (drawn in the palette's ink)."""
        return [layer.threshold for layer in (self._empty_layer, *self._layers.values(), *self._spare_layers)]

    def _new_layer(self) -> NpcLayer:
        layer = NpcLayer(self.score_plot, self.stress_plot)
        self.plot_palette.apply_ink(layer.threshold)
        return layer

    @property
    def layers(self) -> Mapping[object, NpcLayer]:
        """The NPCs' kept layers, read-only: StableId -> ``NpcLayer``, the least recently
        shown first. The selected NPC's is ``layer`` and is the only one shown; the others
        are hidden and shown again, with their drawings, when their NPC is selected. At
        most ``LAYERS_KEPT``. Empty while no NPC was drawn (no NPC: ``layer`` is an empty one)."""
        return MappingProxyType(self._layers)

    @property
    def drawn(self) -> bool:
        """True once a load is drawn to the end: every curve, the selected NPC, and the
        kept layers made ready. Drawn at once in a window not shown; in slices from the
        event loop in a shown one; when it is first shown while it was behind another tab."""
        return self._drawn and not self._work.busy

    @property
    def drawing_ahead(self) -> bool:
        """True from a committed tick or NPC change until the layers of the NPCs that a
        step to the next or the previous event would select are drawn (``AHEAD_AFTER_MS``
        after the last change, then one layer a slice)."""
        return self._ahead_timer.isActive() or self._ahead.busy

    @property
    def markers(self) -> dict:
        """The markers shown: session event kind -> (label, ``pg.ScatterPlotItem``)."""
        return self.layer.markers

    @property
    def stress_curve(self) -> StepCurve:
        """The selected NPC's stress (in its frame's units: ``layer.frame``)."""
        return self.layer.stress

    @property
    def threshold_curve(self) -> StepCurve:
        return self.layer.threshold

    @property
    def excess_curve(self) -> StepCurve:
        return self.layer.excess

    def _forget_layers(self) -> None:
        """Show the empty layer and make every NPC's layer a spare, hidden (a new save:
        ``_draw_steps`` empties them)."""
        self._set_layer(self._empty_layer)
        for layer in self._layers.values():
            layer.npc = None
            self._spare_layers.append(layer)
        self._layers.clear()

    def _set_layer(self, layer: NpcLayer) -> None:
        if layer is not self.layer:
            self.layer.set_visible(False)
            layer.set_visible(True)
            self.layer = layer
        self.fit_stress_range()

    def fit_stress_range(self) -> None:
        """The stress plot's y range and axis scale: the shown layer's frame (0 .. 1 for
        an NPC whose stress never falls below 0), widened to side B's stress of the NPC
        while comparing (``ComparisonOverlay.stress_extent``, in the same units). Set only
        when it changes: a new range draws every item of the plot again."""
        bottom, span = self.layer.frame
        axis = self.stress_plot.getAxis("left")
        if axis.scale != span:
            axis.setScale(span)
        low, high = bottom / span, bottom / span + 1.0
        extent = self.overlay.stress_extent()
        if extent is not None:
            low, high = min(low, extent[0]), max(high, extent[1])
        pad = 0.02 * (high - low)
        shown = self.stress_plot.viewRange()[1]
        if abs(shown[0] - (low - pad)) > 1e-9 or abs(shown[1] - (high + pad)) > 1e-9:
            self.stress_plot.setYRange(low, high, padding=0.02)

    def _show_layer(self, npc):
        """Shows the layer of ``npc`` (a generator: a step before each part of a layer
        drawn anew). The layers of the last ``LAYERS_KEPT`` NPCs shown are kept, hidden,
        and shown again when the NPC is; an older NPC's layer is given the data of the
        next NPC not kept."""
        track = self._track(npc) if npc is not None else None
        if track is None:
            self._set_layer(self._empty_layer)
            return
        layer = self._layers.get(npc)
        if layer is not None:
            self._layers.move_to_end(npc)
            self._set_layer(layer)
            return
        self._make_room()
        self._set_layer((yield from self._fill_layer(npc, track)))

    def _make_room(self) -> None:
        """Makes the least recently shown kept layers spares until one more fits in
        ``LAYERS_KEPT``; the layer shown stays kept."""
        while len(self._layers) >= LAYERS_KEPT:
            oldest = next((npc for npc, layer in self._layers.items() if layer is not self.layer), None)
            if oldest is None:
                return
            self._spare_layers.append(self._layers.pop(oldest))

    def _fill_layer(self, npc, track: NpcTrack):
        """A spare layer (or a new one) given ``npc``'s data and kept, hidden; returns
        it (a generator: ``NpcLayer.draw_steps``). A layer that left the kept ones gets
        the new data: adding and removing items to the plots at every step of a crowd
        cost more than the data."""
        layer = self._spare_layers.pop() if self._spare_layers else self._new_layer()
        done = False
        try:
            yield from layer.draw_steps(npc, track)
            done = True
        finally:
            if not done:  # the drawing was cancelled: the layer waits, hidden, for another NPC
                self._spare_layers.append(layer)
        kept = self._layers.get(npc)
        if kept is not None:  # drawn meanwhile (selected while this one was prefilled)
            self._spare_layers.append(layer)
            return kept
        self._layers[npc] = layer
        return layer

    def _prefill_steps(self):
        """When every drawn NPC fits in the kept layers (a save of a few NPCs), draws the
        layer of each and has it painted once, barely opaque, into its pixmaps: then no
        step that selects another NPC draws anything anew (a generator, ``widgets.kit.slices``)."""
        npcs = list(self._prepared.tracks if self._prepared is not None else ())
        if len(npcs) > LAYERS_KEPT:
            return
        for sid in npcs:
            if sid not in self._layers:
                yield from self._warm(sid)

    def _warm(self, npc):
        """Fills ``npc``'s layer and has the plots paint it once at ``WARM_OPACITY``, so
        its items hold their pixmaps when it is shown (a generator, ``widgets.kit.slices``)."""
        layer = yield from self._fill_layer(npc, self.tracks[npc])
        if layer is self.layer or obscured(self):
            return
        layer.set_opacity(WARM_OPACITY)
        try:
            yield slices.END_SLICE  # the plots paint it, and its items keep the pixmaps
        finally:  # also when the job is dropped for a newer one
            if layer is not self.layer and layer.alive:  # not once the view's items are gone
                layer.set_visible(False)

    def _plan_ahead(self, *_args) -> None:
        if self._drawn and not obscured(self):
            self._ahead_timer.start()  # again at each change: only once the steps pause

    def _start_ahead(self) -> None:
        if self._drawn and not self._work.busy and not obscured(self):
            self._ahead.start(self._ahead_steps())

    def _ahead_steps(self):
        """Makes ready the layers of the NPCs that a step to the next or the previous
        event would select, a few milliseconds after a step (``AHEAD_AFTER_MS``): in a
        crowd, most steps that select another NPC select one whose layer was not kept,
        and drawing it in the step would cost most of a frame. The current NPC's layer and
        the nearest ones stay kept. One layer is made a pause, the one in the direction
        of the last step first: a key held down steps every ~33 ms."""
        s = self.session
        npcs = s.neighbour_npcs()
        if s.tick < s.previous_tick:
            npcs.reverse()
        for npc in npcs:
            if npc in self._layers:
                self._layers.move_to_end(npc)  # among the last to go
                continue
            if self._track(npc) is None:
                continue
            self._make_room()
            yield
            yield from self._warm(npc)
            return

    def _build_cursors(self) -> None:
        pen, hover_pen = pg.mkPen("#202020", width=2), pg.mkPen("#1f77b4", width=3)
        label = {"position": CURSOR_LABEL_POSITION, "color": "#202020", "fill": (255, 255, 255, 220)}
        self.cursors = (
            pg.InfiniteLine(0, angle=90, movable=True, pen=pen, hoverPen=hover_pen, label="0", labelOpts=label),
            pg.InfiniteLine(0, angle=90, movable=True, pen=pen, hoverPen=hover_pen),
        )
        self.cursors[0].label.setFormat(_CursorLabel(self))
        for plot, line in zip((self.score_plot, self.stress_plot), self.cursors):
            line.setZValue(100)
            plot.addItem(line, ignoreBounds=True)

    def _place_labels(self, *_args) -> None:
        """The cursor label near the top of the score plot, whole inside it (at
        ``CURSOR_LABEL_POSITION`` of a plot of ~95 px, its top 7 px were cut off: the
        digits' tops at 1040x700), lower where a curve ends beside it
        (``_clear_of_curve_ends``); then the comparison's label in the row below it."""
        self._place_cursor_label()
        self.overlay.place_label()

    def _place_cursor_label(self, *_args) -> bool:
        """Moves the cursor label along its line to where ``_place_labels`` says; True
        when it moved (the comparison's label then follows it)."""
        label = self.cursors[0].label
        height = self.score_plot.vb.sceneBoundingRect().height()
        if height <= 0:
            return False
        box = label.textItem.boundingRect()
        middle = box.height() / 2 + 1  # pixels below the plot's top
        top = self.cursor_label_top = max(0.0, min(CURSOR_LABEL_POSITION, 1 - middle / height))
        position = self._clear_of_curve_ends(top, box.width(), box.height(), height)
        if position == label.orthoPos:
            return False
        label.setPosition(position)
        return True

    def _follow_curve_ends(self, *_args) -> None:
        """The cursor label moved clear of the curves' ends after a tick, an NPC, a zoom."""
        if self._place_cursor_label():
            self.overlay.place_label()

    def _score_steps(self) -> list[Step]:
        """The score polylines drawn: every NPC's curve shown, the selected NPC's, side B's."""
        steps = [self.tracks[sid].score for sid, curve in self.curves.items() if curve.isVisible() and sid in self.tracks]
        selected = self.tracks.get(self.layer.npc) if self.layer.npc is not None else None
        if selected is not None and self.layer.npc not in self.curves:
            steps.append(selected.score)
        steps.extend(track.score for track in self.overlay.tracks.values())
        return steps

    def _clear_of_curve_ends(self, top: float, width: float, height: float, plot_height: float) -> float:
        """Where along the score cursor (0: bottom .. ``top``) its label, ``width`` x
        ``height`` pixels in a plot ``plot_height`` pixels tall, covers no curve's end.

        pyqtgraph puts the label right of the cursor in the plot's left half and left of
        it in the right half. At the last tick every curve ends at the cursor: the label,
        left of it at the top, covered the selected NPC's end at a score near 100 (trial:
        "302,029" over the end of Lera Sessik's curve). Where a curve ends beside the
        label (within its width, on its side), it goes down, a quarter of its height a step
        (half its height skipped a gap between two curves that had room for it once the
        score axis kept room for the markers, ``score_range``), to
        the highest place beside no curve's end (the curve's last ``height`` pixels) and
        then beside the fewest curves (each curve's values across the label, a pen's
        width apart): a long label in a short plot (a u64 tick, ~170 px) may have no place
        clear of every curve, but has one clear of their ends. Elsewhere (no curve ends
        beside it) it stays at ``top``, so it does not jump about as the cursor steps."""
        line, vb = self.cursors[0], self.score_plot.vb
        per_px = vb.viewPixelSize()[0]
        (x_lo, x_hi), (y_lo, y_hi) = vb.viewRange()
        if not (per_px > 0 and y_hi > y_lo and plot_height > height):
            return top
        x = line.value()
        left = x > (x_lo + x_hi) / 2  # pyqtgraph's side (InfLineLabel.updatePosition)
        x0, x1 = (x - width * per_px, x) if left else (x, x + width * per_px)
        steps = self._score_steps()
        ending = [step for step in steps if step.end is not None and x0 <= step.end <= x1]
        if not ending:
            return top
        units = (y_hi - y_lo) / plot_height  # score points a pixel
        reach = (height / 2 + SELECTED_WIDTH) * units  # a curve this close to the label's middle is under it
        bands = [band for band in (step.extent(x0, x1) for step in steps) if band is not None]
        ends = [band for band in (step.extent(max(x0, step.end - height * per_px), step.end) for step in ending)
                if band is not None]
        bottom = (height / 2 + 1) / plot_height
        best, fewest = top, None
        position = top
        while position >= bottom - 1e-9:
            middle = y_lo + position * (y_hi - y_lo)
            under = (sum(1 for lo, hi in ends if lo - reach <= middle <= hi + reach),
                     sum(1 for lo, hi in bands if lo - reach <= middle <= hi + reach))
            if under == (0, 0):
                return position
            if fewest is None or under < fewest:
                best, fewest = position, under
            position -= height / 4 / plot_height
        return best

    _tune = staticmethod(tune_curve)

    # ----- following the session -----
    def _on_loaded(self) -> None:
        """A new save: axes, ranges and cursors now; the curves and the selected NPC's
        series and markers by ``_draw`` (in slices, or once the view is shown)."""
        self._work.cancel()
        self._ahead.cancel()
        self._ahead_timer.stop()
        for curve in self.curves.values():
            self.score_plot.removeItem(curve)
        self.curves.clear()
        self._forget_layers()
        s = self.session
        end = s.last_tick
        prepared = None
        if s.ready:
            prepared = s.prepared.get(FirstTracks)
            if prepared is None or prepared.end != end:
                prepared = prepare(s.playthrough)
        self.origin = prepared.origin if prepared is not None else 0
        self.tick_axis.origin = self.origin
        self._prepared = prepared
        self.tracks = dict(prepared.tracks) if prepared is not None else {}
        self.npc_count = len(s.playthrough.index.npcs) if s.ready else 0
        for line in self.cursors:
            line.setVisible(s.ready)
        # Fit the score axis to the highest score, rounded up to a level bound, so a
        # save whose NPCs never leave Stranger is not a flat line at the bottom.
        self.fit_scores(self.tracks.values())
        self.frame_x()
        self._drawn = False
        self._behind = False
        self._draw()
        self._on_tick(s.tick)

    def _draw(self) -> None:
        """Start drawing what ``_on_loaded`` left: at once in a window not shown, in
        slices in a shown one, and not while the view is behind another tab (its
        ``showEvent`` draws it then). Until it is done, NPC changes wait for it."""
        if obscured(self):
            return
        self._work.start(self._draw_steps())

    def _draw_steps(self):
        """The drawing of a load, one curve or marker kind a step (``widgets.kit.slices``);
        then the spare layers, each emptied of the last save's data, and new ones until
        ``LAYERS_KEPT`` are made: the first NPCs selected would each make one in a step."""
        for sid in list(self._prepared.tracks if self._prepared is not None else ()):
            if sid not in self.curves:
                self._add_curve(sid)
                yield
        yield from self._npc_steps(self.session.npc)
        self._drawn = True
        for layer in list(self._spare_layers):
            if layer.npc is None:
                layer.clear()
                yield
        while len(self._layers) + len(self._spare_layers) < LAYERS_KEPT:
            self._spare_layers.append(self._new_layer())
            yield
        yield from self._prefill_steps()

    def _track(self, sid) -> NpcTrack | None:
        """The NPC's track, built now (one NPC: milliseconds) when it was not drawn yet."""
        track = self.tracks.get(sid)
        if track is None and self._prepared is not None and sid in self.session.playthrough.index.npcs:
            p = self._prepared
            (track,) = build_tracks(self.session.playthrough, p.end, p.origin, [sid], p.markers)
            self.tracks[sid] = track
        return track

    def _add_curve(self, sid) -> None:
        """Draws the score curve of ``sid`` faded (its layer draws it emphasised when selected)."""
        track = self.tracks[sid]
        curve = StepCurve(track.score.x, track.score.y, connect="finite", name=track.name,
                          pen=pg.mkPen(faded(track.colour), width=OTHER_WIDTH))
        curve.setCurveClickable(True, width=8)
        curve.sigClicked.connect(self._on_curve_clicked)
        self.score_plot.addItem(curve)
        self._tune(curve)
        self.curves[sid] = curve

    def showEvent(self, event) -> None:  # noqa: N802 (Qt override)
        super().showEvent(event)
        if not self._drawn and not self._work.busy:
            self._draw()
        self._catch_up()

    def _catch_up(self, *_args) -> None:
        """Draw the NPC and tick that came while the view was behind another tab (the
        NPC is drawn by the load's drawing when that has not ended yet)."""
        if self._behind:
            self._behind = False
            if self._drawn:
                self._draw_npc(self.session.npc)
            self._move_cursors(self.session.tick)
            self._show_values(self.session.tick, self.session.npc)

    def _deferred(self) -> bool:
        """True (and remembered) when a tick or NPC need not be drawn now: the view is
        behind another tab (its showEvent catches up). While comparing it follows at
        once, as the overlay draws beside it."""
        if obscured(self) and self.session.comparison is None:
            self._behind = True
            return True
        return False

    def _on_npc(self, npc) -> None:
        if not self._drawn:
            return  # the drawing of the load shows the NPC selected when it ends
        if not self._deferred():
            self._draw_npc(npc)

    def _draw_npc(self, npc) -> None:
        """Show ``npc`` as selected now (every step of ``_npc_steps`` at once)."""
        for _ in self._npc_steps(npc):
            pass

    def _npc_steps(self, npc):
        """Shows ``npc`` as selected: its layer (emphasised score curve, stress and
        markers) over the faded curves (a generator: ``_show_layer``'s steps)."""
        self._update_legend(npc)
        yield from self._show_layer(npc)
        self._show_values(self.session.tick, npc)
        self._settle_ranges()
        self._follow_curve_ends()

    def _settle_ranges(self) -> None:
        """Apply the plots' new ranges now, not in their paint: a ViewBox applies a range
        change in ``prepareForPaint``, at the start of the view's paint, and the moved
        items then ask for a second paint of the whole view, on every step that selects
        another NPC."""
        for plot in (self.score_plot, self.stress_plot):
            plot.getViewBox().prepareForPaint()

    # ----- ticks and x -----
    def x_of(self, tick: int) -> float:
        """The plot x of a tick: ``tick - origin`` (exact integer subtraction, then float)."""
        return float(int(tick) - self.origin)

    def cursor_x(self, tick: int) -> float:
        """Where the cursors stand at ``tick``: ``x_of(tick)``, but when the axis starts at
        the first event (``view_start`` past 0) a tick before it (tick 0, the state before
        any event) is in the margin left of the first event, where the curves hold that
        state: at ``x_of(0)``, far off the axis, the cursor was never drawn."""
        if self._before_x is not None and int(tick) < self._view_start:
            return self._before_x
        return self.x_of(tick)

    def tick_of(self, x: float) -> int:
        """The tick at plot x (nearest, clamped to the save's ticks); left of the first
        event of an axis that starts there (``cursor_x``), tick 0."""
        if self._before_x is not None and x < self.x_of(self._view_start) - 0.5:
            return 0
        return self.session.clamp(self.origin + round(x))

    def _on_tick(self, tick: int) -> None:
        if self._deferred():
            return
        self._move_cursors(tick)
        self._show_values(tick, self.session.npc)

    def _move_cursors(self, tick: int) -> None:
        x = self.cursor_x(tick)
        for line in self.cursors:
            if not line.moving and line.value() != x:
                line.setValue(x)
        self._follow(x)
        self._follow_curve_ends()

    def _follow(self, x: float) -> None:
        """Keep the cursor in a zoomed range: shift the range (same width) to centre it."""
        lo, hi = self.score_plot.vb.viewRange()[0]
        if lo <= x <= hi or any(line.moving for line in self.cursors):
            return
        width = hi - lo
        full_lo, full_hi = self._full_range
        start = min(max(x - width / 2, full_lo), max(full_lo, full_hi - width))
        self.score_plot.setXRange(start, start + width, padding=0)

    def fit_scores(self, tracks) -> None:
        """Fit the score axis to the highest score of ``tracks``, rounded up to a level
        bound, so a save whose NPCs never leave Stranger is not a flat line at the bottom;
        with room below 0 and above that bound for the markers (``score_range``)."""
        scores = [float(np.nanmax(t.score.y)) for t in tracks if len(t.score.y) and np.isfinite(t.score.y).any()]
        self._score_top = min(100.0, 20.0 * math.ceil((max(scores, default=0.0) + 0.5) / 20.0))
        self._frame_scores()

    def _frame_scores(self, *_args) -> None:
        """The score plot's y range (and its limits) for its top (``fit_scores``) at the
        plot's height now: again when the plot is resized, as the markers' room is pixels."""
        low, high = score_range(self._score_top, self.score_plot.vb.sceneBoundingRect().height())
        if self.score_plot.vb.viewRange()[1] == [low, high]:
            return
        self.score_plot.setLimits(yMin=low, yMax=high)
        self.score_plot.setYRange(low, high, padding=0)

    def limit_x(self, stop: float) -> float:
        """Let both plots zoom out no further than the axis's first tick (``view_start``: 0,
        or the first event when the ticks start far from 0; a save near 2^64 zoomed out to
        tick 0 and showed itself as a 1 px sliver at the right edge) .. ``stop`` (an x),
        with a margin; returns that width (x units, at least 10)."""
        start = self.x_of(self._view_start)
        span = max(stop - start, 10.0)
        for plot in (self.score_plot, self.stress_plot):
            plot.setLimits(xMin=start - 0.02 * span, xMax=stop + 0.02 * span)
        return span

    def frame_x(self) -> None:
        """Frame the x axis on the session's ticks and show them whole: the axis's first
        tick (``view_start``, and where tick 0 is drawn when that is past 0), the zoom
        limits and the full range (``show_full_range``), both up to the session's last
        tick. A load frames A's ticks; a comparison (``ComparisonOverlay``) both sides'
        ticks, which Full range then shows (it went back to A's and cut B's curves off),
        from the first event of either side. The cursors move to where the tick is drawn
        in the new frame (tick 0's place moves with the first tick)."""
        s = self.session
        self._view_start, self._before_x = s.view_start, None
        start, stop = self.x_of(s.view_start), self.x_of(s.last_tick)
        span = self.limit_x(stop)
        if s.view_start > 0:  # tick 0 and the ticks up to the first event: in the margin left of it
            self._before_x = start - FULL_PADDING * span
        self._full_range = self.full_range_to(stop)
        self.score_plot.setXRange(*self._full_range, padding=0)
        self._move_cursors(s.tick)

    def full_range_to(self, stop: float) -> tuple[float, float]:
        """The x range that shows the axis's first tick (``view_start``) .. ``stop`` (an x)
        whole: a margin of ``FULL_PADDING`` of its width each side, twice that on the left
        when the axis starts at the first event, where tick 0 is drawn (``cursor_x``)."""
        start = self.x_of(self._view_start)
        span = max(stop - start, 10.0)
        left = 2 * FULL_PADDING if self._before_x is not None else FULL_PADDING
        return start - left * span, start + span + FULL_PADDING * span

    def show_full_range(self) -> None:
        """Zoom out to the whole save (the button, or a double-click on a plot)."""
        self.score_plot.setXRange(*self._full_range, padding=0)

    def _on_scene_clicked(self, event) -> None:
        """A click on a plot seeks to its tick; a double-click restores the full range."""
        if event.button() != Qt.LeftButton:
            return
        if event.double():
            self.show_full_range()
            return
        pos = event.scenePos()
        for plot in (self.score_plot, self.stress_plot):
            if plot.vb.sceneBoundingRect().contains(pos):
                self.session.set_tick(self.tick_of(plot.vb.mapSceneToView(pos).x()))
                return

    # ----- intents -----
    def _on_cursor_dragged(self, args) -> None:
        line = args[0]
        if not line.moving:
            return  # moved by the session, not by the user
        tick = self.tick_of(line.value())
        for other in self.cursors:
            if other is not line:
                other.setValue(self.cursor_x(tick))
        self.session.set_tick(tick, live=True)

    def why_target(self, value: str | None = None) -> str | None:
        """``npc:SLUG.score`` or ``.stress`` of the selected NPC (the plot last under the mouse)."""
        s = self.session
        npc = s.playthrough.save.npcs.get(s.npc) if s.ready and s.npc is not None else None
        return f"npc:{npc.slug}.{value or self._why_plot}" if npc is not None else None

    def _on_curve_clicked(self, item, _event) -> None:
        """A click on an NPC's score curve selects the NPC. pyqtgraph 0.14 sends the
        PlotDataItem's inner PlotCurveItem, 0.13 the PlotDataItem itself."""
        for sid, curve in self.curves.items():
            if item is curve or item is curve.curve:
                self.session.set_npc(sid)
                return

    def _on_legend_link(self, link: str) -> None:
        self.session.set_npc(int(link.removeprefix("npc:")))

    def _update_legend(self, npc) -> None:
        """Writes the legend: NPC names (links that select; the selected one bold, also
        when its curve is drawn only while it is selected), markers, stress."""
        if not self.tracks:
            self.legend.setText("")
            return
        listed = list(self.curves)
        if npc is not None and npc not in self.curves and self._track(npc) is not None:
            listed.append(npc)
        ink, over = self._legend_inks()
        parts = []
        for sid in listed:
            track = self.tracks[sid]
            colour = track.colour.name() if sid == npc else faded(track.colour).name()
            shown = track.name if len(track.name) <= LEGEND_NAME_CHARS else track.name[:LEGEND_NAME_CHARS - 1] + "…"
            name = f"<b>{escape(shown)}</b>" if sid == npc else escape(shown)
            parts.append(f"<span style='color:{colour}'>━━</span>&nbsp;<a href='npc:{sid}' "
                         f"style='color:{ink}; text-decoration:none'>{name}</a>")
        hidden = self.npc_count - len(listed)
        if hidden > 0:
            parts.append(f"<i>and {hidden:,} more NPCs (select one in the NPC list to draw it)</i>")
        for kind, glyph in (("walk-away", "▼"), ("confrontation", "◆"), ("penalty", "✕")):
            label, colour = KIND_STYLE[kind]
            nobreak = label.replace("-", "\u2011")  # non-breaking hyphen: "Walk-away" stays whole
            parts.append(f"<span style='color:{colour}'>{glyph}</span>&nbsp;{nobreak}")
        selected = self.tracks.get(npc)
        stress_colour = selected.colour.darker(115).name() if selected else "#555"
        parts.append(f"<span style='color:{stress_colour}'>━━</span>&nbsp;stress")
        parts.append(f"<span style='color:{ink}'>╍╍</span>&nbsp;threshold")
        parts.append(f"<span style='background:{over}'>&nbsp;&nbsp;&nbsp;</span>&nbsp;over threshold")
        if self.overlay.legend(ink):
            parts.append(self.overlay.legend(ink))
        self.legend.setText("&nbsp;&nbsp; ".join(parts))

    def _legend_inks(self) -> tuple[str, str]:
        """The legend's text colour (the palette's, light or dark: a fixed #222 could not
        be read on a dark one) and its over-threshold swatch: the fill's colour over the
        plots' background, as the plot shows it."""
        palette = self.palette()  # the view's: at its PaletteChange its children may not have it yet
        ink, canvas = palette.color(QPalette.WindowText), palette.color(QPalette.Base)  # PlotPalette's canvas
        r, g, b, a = OVER_BRUSH
        t = a / 255
        over = QColor(round(canvas.red() * (1 - t) + r * t), round(canvas.green() * (1 - t) + g * t),
                      round(canvas.blue() * (1 - t) + b * t))
        return ink.name(), over.name()

    def changeEvent(self, event) -> None:  # noqa: N802 (Qt override)
        super().changeEvent(event)
        if event.type() == QEvent.PaletteChange:
            self._update_legend(self.session.npc)
        elif event.type() == QEvent.FontChange:
            self._fit_to_font()

    def _on_cursor_released(self, line) -> None:
        self.session.set_tick(self.tick_of(line.value()))
        self._on_tick(self.session.tick)  # the commit may be a no-op after a preview

    # ----- hover -----
    def _on_mouse_moved(self, args) -> None:
        pos = args[0]
        for plot in (self.score_plot, self.stress_plot):
            if plot.sceneBoundingRect().contains(pos) and plot.vb.sceneBoundingRect().contains(pos):
                point = plot.vb.mapSceneToView(pos)
                self._why_plot = "score" if plot is self.score_plot else "stress"
                tick = self.tick_of(point.x())
                npc = self._nearest_npc(tick, point.y(), plot) if plot is self.score_plot else self.session.npc
                # The markers are the selected NPC's: named only while the readout is about it.
                marker = self.marker_near(point.x(), plot) if plot is self.score_plot and npc == self.session.npc else None
                self._show_values(tick, npc, hover=True, marker=marker)
                return
        self.hover_dot.setData([], [])
        self._show_values(self.session.tick, self.session.npc)

    def marker_near(self, x: float, plot=None, pixels: float = 6.0) -> tuple[str, int] | None:
        """(event label, tick) of the selected NPC's marker nearest plot x within ``pixels``, else None."""
        track = self.tracks.get(self.session.npc)
        if track is None:
            return None
        per_px = (plot or self.score_plot).vb.viewPixelSize()[0]
        best = None
        for kind, (label, _) in self.markers.items():
            xs = np.asarray(track.markers[kind], dtype=float)
            if not len(xs):
                continue
            k = int(np.argmin(np.abs(xs - x)))
            d = abs(xs[k] - x)
            if d <= pixels * per_px and (best is None or d < best[0]):
                best = (d, label, self.origin + int(round(xs[k])))
        return (best[1], best[2]) if best is not None else None

    def _nearest_npc(self, tick: int, score: float, plot) -> int | None:
        """The NPC whose curve passes within 8 px of the mouse, else the selected one."""
        per_px = plot.vb.viewPixelSize()[1]
        best, best_d = self.session.npc, 8 * per_px
        x = self.x_of(tick)
        for sid, curve in self.curves.items():
            d = abs(self.tracks[sid].score.at(x) - score)
            if d < best_d and curve.isVisible():
                best, best_d = sid, d
        return best

    def _show_values(self, tick: int, npc, hover: bool = False, marker: tuple[str, int] | None = None) -> None:
        """Writes tick, game time and the NPC's score, level and stress into the readout,
        then the hovered ``marker`` (``marker_near``) when given; while comparing, B's
        values on a line of their own. Each label is tied to its first value by a
        non-breaking space (``NBSP``): the readout wrapped between "B ╍" and "score 1.39",
        and B's values began the next line without their label (trial 51, 1040x700)."""
        s = self.session
        if not s.ready:
            self.readout.setText("<i>No save open.</i>")
            return
        where = "Mouse" if hover else "Cursor"
        text = f"<b>{where}</b> tick{NBSP}{tick:,} ({s.playthrough.save.game_time(tick)})"
        track = self.tracks.get(npc)
        x = self.x_of(tick)
        if track is not None:
            score = track.score.at(x)
            stress = track.stress.at(x)
            threshold = track.threshold.at(x)
            walk = track.walk_aways.at(x)
            colour = track.colour.name()
            # Scores as the rest of the app writes them (``fmt_num``: 2 decimals), A and B
            # with more where they differ but would read the same ("score 0.6 … B score 0.6").
            b_score = self.overlay.score_at(tick, npc)
            places = apart_places(score, b_score) if b_score is not None else 2
            text += f" · <b><span style='color:{colour}'>■</span>{NBSP}{escape(track.name)}</b>"
            if np.isfinite(score):
                level = RelationshipLevel.for_score(score).display_name
                over = " <span style='color:#c0392b'><b>over threshold</b></span>" if stress > threshold else ""
                text += (f" · score{NBSP}<b>{fmt_places(score, places)}</b>{NBSP}({level}) · stress{NBSP}<b>{stress:.0f}</b>{NBSP}/{NBSP}{threshold:.0f}{over}"
                         f" · walk-aways{NBSP}{walk:.0f}")
                if hover:
                    self.hover_dot.setData([x], [score], brush=pg.mkBrush(track.colour))
            else:
                text += " · no state at this tick"
        elif hover:
            self.hover_dot.setData([], [])
        if marker is not None:
            text += f" · <b>{escape(marker[0])}</b> at tick{NBSP}{marker[1]:,}"
        if track is not None:
            b_part = self.overlay.readout(tick, npc, places)
            if b_part:
                text += "<br>" + b_part
        self.readout.setText(text)

    def leaveEvent(self, event) -> None:  # noqa: N802 (Qt override)
        self.hover_dot.setData([], [])
        self._show_values(self.session.tick, self.session.npc)
        super().leaveEvent(event)


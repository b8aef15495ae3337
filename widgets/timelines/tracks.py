"""The timelines' data and curve items: each NPC's series as step polylines over game ticks.

``build_tracks`` reads a playthrough's NPC versions and marker events into numpy arrays
once per load (``NpcTrack`` of ``Step`` polylines, x = ``tick - origin``, see
``plot_origin``); ``StepCurve`` draws one without losing its last step when pyqtgraph
downsamples. ``prepare`` does this work off the GUI thread. ``TimelinesView`` (timelines.py) and
the comparison overlay (timelines_compare.py) both build on these.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import pyqtgraph as pg
from narrative_debugger.widgets.kit.plain_text import name_text
from narrative_debugger.models.timeline.event_kinds import tick_array
from PySide6.QtCore import QPointF, Qt
from PySide6.QtGui import QColor, QPainterPath, QPolygonF, QTransform
from PySide6.QtWidgets import QGraphicsItem

#: Ticks up to this are exact in float64; past it the plots draw relative to an origin.
FLOAT_EXACT = 2**53
#: Curves with more points than this are peak-downsampled when drawn.
DOWNSAMPLE_ABOVE = 4_000

def _marker(points: list[tuple[float, float]] | None = None, cross_at: float | None = None) -> QPainterPath:
    """A marker path in pyqtgraph's unit symbol box (-0.5..0.5, y down): a polygon, or an x at (0, cross_at)."""
    path = QPainterPath()
    if points:
        path.addPolygon(QPolygonF([QPointF(x, y) for x, y in points]))
        path.closeSubpath()
    if cross_at is not None:
        plus = QPainterPath()
        plus.setFillRule(Qt.WindingFill)
        plus.addRect(-0.17, -0.04, 0.34, 0.08)
        plus.addRect(-0.04, -0.17, 0.08, 0.34)
        path.addPath(QTransform().translate(0.0, cross_at).rotate(45).map(plus.simplified()))
    return path


#: Per-NPC markers: session event kind -> journal variants, symbol. Symbols are drawn
#: at MARKER_SIZE px with the shape off-centre so that markers of one tick do not
#: cover each other: walk-aways point down at the curve from above, penalties hang
#: below it, confrontations sit on it.
MARKERS: dict[str, tuple[frozenset[str], QPainterPath]] = {
    "walk-away": (frozenset({"InteractionWalkedAway", "InteractionConflictAbandoned"}),
                  _marker([(-0.22, -0.48), (0.22, -0.48), (0.0, -0.1)])),
    "confrontation": (frozenset({"InteractionConfrontation"}),
                      _marker([(0.0, -0.2), (0.2, 0.0), (0.0, 0.2), (-0.2, 0.0)])),
    "penalty": (frozenset({"WalkAwayPenalty"}), _marker(cross_at=0.3)),
}
MARKER_SIZE = 24
#: The markers' outline (``NpcLayer``: a white pen 0.8 px wide), rounded up, in pixels.
MARKER_PEN = 1.0


def marker_reach(size: float = MARKER_SIZE) -> tuple[float, float]:
    """(above, below): how many pixels the ``MARKERS`` drawn at ``size`` px reach above and
    below the point they mark, outline included (a walk-away's ~12 px above, a penalty's
    ~11 px below at 24 px). The score plot keeps that much room past the ends of its range,
    so a marker at a score of 0 (or at the top) is drawn whole."""
    top = min(path.boundingRect().top() for _, path in MARKERS.values())
    bottom = max(path.boundingRect().bottom() for _, path in MARKERS.values())
    return max(0.0, -top) * size + MARKER_PEN, max(0.0, bottom) * size + MARKER_PEN

#: Qualitative palette (Tableau 10) for NPC curves; more NPCs fall back to pg.intColor.
PALETTE = ("#4e79a7", "#59a14f", "#b07aa1", "#76b7b2", "#edc948", "#9c755f", "#ff9da7", "#bab0ac", "#e15759", "#f28e2b")
BAND_FILLS = ("#f3f3f3", "#eaf1f8", "#eaf5ea", "#f3ecf6", "#fbf3dc")
SELECTED_WIDTH = 3.0
OTHER_WIDTH = 1.5
MAX_CURVES = len(PALETTE)
"""Score curves drawn at once: the first NPCs in StableId order, plus the selected one.
A save with thousands of NPCs would otherwise build thousands of plot items."""


def step_xy(ticks, values, end: float) -> tuple[np.ndarray, np.ndarray]:
    """Turns values that hold from their tick on into a step polyline.

    Repeated ticks keep their last value and runs of an unchanged value become one
    step, so a threshold that never moves is two points whatever the journal size.

    Args:
        ticks: non-decreasing ticks where a value begins.
        values: the value from that tick on; NaN leaves a gap.
        end: tick where the last value stops (at least the last tick).

    Returns:
        (x, y) float64 arrays with two points per step, ready for ``connect='finite'``.
    """
    t = np.asarray(ticks, dtype=np.float64)
    v = np.asarray(values, dtype=np.float64)
    if len(t) == 0:
        return np.empty(0), np.empty(0)
    last_of_tick = np.r_[t[1:] != t[:-1], True]
    t, v = t[last_of_tick], v[last_of_tick]
    same = (v[1:] == v[:-1]) | (np.isnan(v[1:]) & np.isnan(v[:-1]))
    changed = np.r_[True, ~same]
    t, v = t[changed], v[changed]
    x = np.repeat(t, 2)
    x[1::2] = np.r_[t[1:], max(float(end), t[-1])]
    return x, np.repeat(v, 2)


@dataclass(frozen=True)
class Step:
    """A value that holds from each tick on, as a plottable polyline.

    Attributes:
        x, y: the ``step_xy`` polyline (two points per step).
    """

    x: np.ndarray
    y: np.ndarray

    @classmethod
    def build(cls, ticks, values, end: float) -> "Step":
        """See ``step_xy``."""
        return cls(*step_xy(ticks, values, end))

    def at(self, tick: float) -> float:
        """The value at ``tick`` (NaN before the first step)."""
        return float(self.at_many(np.asarray([tick], dtype=np.float64))[0])

    def at_many(self, ticks: np.ndarray) -> np.ndarray:
        """The values at many ticks at once."""
        out = np.full(len(ticks), np.nan)
        if len(self.x) == 0:
            return out
        k = np.searchsorted(self.x[0::2], ticks, side="right") - 1
        inside = k >= 0
        out[inside] = self.y[2 * k[inside]]
        return out

    @property
    def end(self) -> float | None:
        """The x where the polyline ends (its last point), or None when it is empty."""
        return float(self.x[-1]) if len(self.x) else None

    def extent(self, x0: float, x1: float) -> tuple[float, float] | None:
        """(lowest, highest) value the polyline holds anywhere in x ``x0`` .. ``x1``
        (NaN gaps left out), or None where it holds none there. Two bisections and the
        values of the steps in between."""
        if len(self.x) == 0 or x1 < x0:
            return None
        first = int(np.searchsorted(self.x[1::2], x0, side="left"))  # the first step ending at or after x0
        stop = int(np.searchsorted(self.x[0::2], x1, side="right"))  # the steps starting at or before x1
        values = self.y[0::2][first:stop]
        values = values[np.isfinite(values)]
        return (float(values.min()), float(values.max())) if len(values) else None


@dataclass
class NpcTrack:
    """One NPC's plotted series, built once per load; x is ``tick - origin`` (``plot_origin``).

    Attributes:
        stable_id, name: the NPC.
        colour: curve colour.
        score: relationship score points (0..100).
        stress, threshold: stress units (i16); ``excess`` is max(stress, threshold).
        walk_aways: walk-away count.
        markers: session event kind -> ticks of that kind aimed at this NPC.
    """

    stable_id: int
    name: str
    colour: QColor
    score: Step
    stress: Step
    threshold: Step
    excess: Step
    walk_aways: Step
    markers: dict[str, np.ndarray]


def plot_origin(playthrough) -> int:
    """The tick plotted at x = 0: 0 when every tick is below 2^53, else the first journal tick."""
    index = playthrough.index
    if index is None or not index.ticks or playthrough.last_tick < FLOAT_EXACT:
        return 0
    return int(index.ticks[0])


def relative_x(ticks, origin: int) -> np.ndarray:
    """``tick - origin`` of u64 ticks as float64, subtracted exactly before the conversion."""
    t = tick_array(ticks)
    o = np.uint64(origin)
    ahead = (t - np.where(t >= o, o, t)).astype(np.float64)  # ticks >= origin
    behind = (np.where(t < o, o, t) - t).astype(np.float64)  # ticks < origin (the initial state)
    return ahead - behind


def build_tracks(playthrough, end: int, origin: int = 0, npcs=None, markers=None) -> list[NpcTrack]:
    """Reads NPCs' versions and the marker events of a playthrough into arrays.

    Args:
        playthrough: a readable playthrough.
        end: the last tick (where the last steps stop).
        origin: the tick at x = 0 (see ``plot_origin``); x values are ``tick - origin``.
        npcs: the StableIds to build (default every NPC); colours follow each NPC's
            place among all NPCs in StableId order, so they do not depend on the subset.
        markers: ``_marker_ticks(playthrough)`` when already computed (it is O(N) in
            journal entries).
    """
    index = playthrough.index
    if index is None:
        return []
    entry_ticks = index.ticks
    by_target = _marker_ticks(playthrough) if markers is None else markers
    x_end = float(relative_x([end], origin)[0])
    order = sorted(index.npcs)
    wanted = None if npcs is None else set(npcs)
    tracks = []
    for n, sid in enumerate(order):
        if wanted is not None and sid not in wanted:
            continue
        versions = index.npcs[sid]
        # The tick of each version (0 for the initial state), converted for this NPC
        # only: converting every journal tick of a large save each time an NPC not
        # drawn yet is selected costs a frame or two.
        ticks = relative_x([entry_ticks[p - 1] if 0 < p <= len(entry_ticks) else 0 for p in versions.positions], origin)
        states = versions.values
        score = np.asarray([s.relationship.score for s in states], dtype=np.float64)
        stress = np.asarray([s.tolerance.current_stress for s in states], dtype=np.float64)
        threshold = np.asarray([s.tolerance.threshold for s in states], dtype=np.float64)
        walk_aways = np.asarray([s.walk_aways for s in states], dtype=np.float64)
        colour = QColor(PALETTE[n]) if n < len(PALETTE) else pg.intColor(n, hues=12)
        tracks.append(NpcTrack(
            sid, name_text(playthrough, sid), colour,
            score=Step.build(ticks, score, x_end),
            stress=Step.build(ticks, stress, x_end),
            threshold=Step.build(ticks, threshold, x_end),
            excess=Step.build(ticks, np.fmax(stress, threshold), x_end),
            walk_aways=Step.build(ticks, walk_aways, x_end),
            markers={kind: relative_x(by_target.get((kind, sid), ()), origin) for kind in MARKERS},
        ))
    return tracks


@dataclass(frozen=True)
class FirstTracks:
    """What the view needs on ``loaded``, computed once per playthrough (``prepare``).

    Attributes:
        end, origin: the last tick and the tick at x = 0.
        tracks: StableId -> NpcTrack for the NPCs drawn at first (``shown_npcs``);
            others are built when selected.
        markers: ``_marker_ticks`` of the playthrough.
    """

    end: int
    origin: int
    tracks: dict
    markers: dict


def shown_npcs(playthrough) -> list[int]:
    """The NPCs whose score curves are drawn from the start: the first ``MAX_CURVES``
    in StableId order (the selected NPC is drawn too, whoever it is)."""
    index = playthrough.index
    return sorted(index.npcs)[:MAX_CURVES] if index is not None else []


def prepare(playthrough, prepared=None) -> FirstTracks | None:
    """Build the first tracks and the markers of a playthrough (O(N) in journal entries;
    the loader runs this off the GUI thread and the view reads it from the session's
    ``prepared``). None for an unreadable save."""
    if playthrough.index is None:
        return None
    end = playthrough.last_tick
    origin = plot_origin(playthrough)
    markers = _marker_ticks(playthrough)
    tracks = {t.stable_id: t for t in build_tracks(playthrough, end, origin, shown_npcs(playthrough), markers)}
    return FirstTracks(end, origin, tracks, markers)


def _marker_ticks(playthrough) -> dict[tuple[str, int], list[int]]:
    """(kind, target StableId) -> ticks of the walk-away, confrontation and penalty entries."""
    index, data = playthrough.index, playthrough.save.journal.data
    kind_of = {variant: kind for kind, (variants, _) in MARKERS.items() for variant in variants}
    out: dict[tuple[str, int], list[int]] = {}
    for i, variant in enumerate(index.kinds):
        kind = kind_of.get(variant)
        if kind is None or i >= len(data) or data[i] is None:
            continue
        target = data[i].get("target")
        if target is not None:
            out.setdefault((kind, target), []).append(index.ticks[i])
    return out


def cache_drawing(item) -> None:
    """Keep what ``item`` draws as a pixmap until the item or the view changes.

    Moving the tick cursor repaints a strip of the plot; every item under it would be
    drawn again, whole (a curve's path, an axis's grid and labels). Cached, the
    strip is copied from the pixmaps. A pan or zoom redraws them as before.
    """
    if item is not None:
        item.setCacheMode(QGraphicsItem.DeviceCoordinateCache)


def drop_drawings(view_box) -> None:
    """Lets go of the pixmaps that ``cache_drawing`` keeps for the items of ``view_box``.

    Call it when the view's x range changes. Qt keeps a device-coordinate pixmap across a
    change of the view that only moves the items, and a clip-to-view curve drawn for the
    old range then shows its old points in the new one: after a zoom, a cursor that
    pulls the range along would draw flat lines and gaps that are not in the data.
    Setting the cache mode again empties the cache; the next paint draws the items anew,
    as any pan or zoom does.
    """
    stack = list(view_box.addedItems)
    while stack:
        item = stack.pop()
        stack.extend(item.childItems())
        mode = item.cacheMode()
        if mode != QGraphicsItem.NoCache:
            item.setCacheMode(mode)


def tune_curve(item: pg.PlotDataItem) -> None:
    """Settings that keep a million-point curve fast to draw and pan.

    Called after the item is in a plot: pyqtgraph 0.14 fails when clip-to-view
    is set on an item that is not in a ViewBox yet.
    """
    points = len(item.xData) if item.xData is not None else 0
    # Peak downsampling draws a step curve as min/max bars: only worth it when
    # the curve has far more points than a view has pixel columns.
    item.setDownsampling(auto=points > DOWNSAMPLE_ABOVE, method="peak")
    # One min/max pair per pixel column instead of pyqtgraph's default of five:
    # wide cosmetic pens make every drawn point expensive. (No setter exists.)
    item.opts["autoDownsampleFactor"] = 1.0
    item.setClipToView(True)
    for part in (item.curve, item.scatter):
        cache_drawing(part)


class PassiveScatter(pg.ScatterPlotItem):
    """A scatter item that lets clicks through to the items under it (a curve selects its
    NPC, the plot seeks its tick). The hover dot sits on the curve under the mouse, and
    markers lie on curves, hidden ones too (a kept layer is hidden by its opacity): a
    plain ScatterPlotItem took every click on one of its points."""

    def mouseClickEvent(self, ev) -> None:  # noqa: N802 (pyqtgraph override)
        ev.ignore()


class StepCurve(pg.PlotDataItem):
    """A PlotDataItem that keeps the end of a step curve that peak downsampling drops.

    pyqtgraph bins ``len // ds`` whole bins and drops the remainder; on a step
    curve the remainder can be a long last step, so the curve would stop short of
    the end of the data. The last step (its two points) is put back when it lies in
    view. Downsampled (max, min) pairs are also ordered along the trend
    (``_order_peaks``). Overrides pyqtgraph's private ``_getDisplayDataset``
    (checked with 0.13.7 and 0.14; pyproject.toml caps pyqtgraph below 0.15).

    The points drawn are also held within one view width of the view
    (``_near_the_view``): clip-to-view keeps one point beyond each edge, and the
    initial state's point sits at tick 0. A save whose ticks start near 2^53 would put
    it ~10^13 pixels off screen, and Qt then draws none of the curve.
    """

    def _getDisplayDataset(self):  # noqa: N802 (pyqtgraph override)
        cached = self._datasetDisplay
        shown = super()._getDisplayDataset()
        if shown is cached:
            # pyqtgraph's cached display data, already adjusted: putting the last step back
            # again would grow the curve by two points at each read.
            return shown
        full = self._dataset
        if shown is None or full is None or len(shown.x) == 0 or len(full.x) < 2:
            return shown
        if len(shown.x) < len(full.x):
            _order_peaks(shown)
        view = self.getViewBox()
        if shown.x[-1] < full.x[-1]:
            right = view.viewRect().right() if view is not None else full.x[-1]
            if full.x[-2] <= right:
                shown.x = np.concatenate([shown.x, full.x[-2:]])
                shown.y = np.concatenate([shown.y, full.y[-2:]])
        if isinstance(view, pg.ViewBox) and not view.autoRangeEnabled()[0]:  # as clip-to-view: an auto range fits the data
            _near_the_view(shown, view.viewRect())
        return shown


def _near_the_view(shown, rect) -> None:
    """Moves the points of a step curve that lie over one view width left or right of
    the view onto that bound. A step curve is horizontal runs and vertical jumps, so
    what the view shows is unchanged; only off-screen runs get shorter."""
    width = max(rect.width(), 1.0)
    low, high = rect.left() - width, rect.right() + width
    x = shown.x
    if len(x) and (x[0] < low or x[-1] > high):
        shown.x = np.clip(x, low, high)


def _order_peaks(shown) -> None:
    """Orders each downsampled (max, min) pair along the curve's trend.

    Peak downsampling writes every bin as max then min at one x. On a rising step
    curve that draws a drop in every bin and a diagonal climb to the next one: a
    sawtooth the data does not have. Putting min first where the curve rises (and
    max first where it falls) draws the same envelope without the false drops.
    """
    x, y = shown.x, shown.y
    n = len(y) // 2
    if n < 2 or len(x) < 2 * n or not np.array_equal(x[0 : 2 * n : 2], x[1 : 2 * n : 2]):
        return
    y = np.array(y, dtype=np.float64)
    hi, lo = y[0 : 2 * n : 2].copy(), y[1 : 2 * n : 2].copy()
    mid = (hi + lo) / 2
    rising = np.r_[mid[1:] >= mid[:-1], True]
    first = np.where(rising, np.minimum(hi, lo), np.maximum(hi, lo))
    second = np.where(rising, np.maximum(hi, lo), np.minimum(hi, lo))
    y[0 : 2 * n : 2], y[1 : 2 * n : 2] = first, second
    shown.y = y


def faded(colour: QColor, amount: float = 0.35) -> QColor:
    """``colour`` mixed with white, kept opaque (translucent wide pens are slow to draw)."""
    return QColor.fromRgbF(*(c + (1.0 - c) * amount for c in colour.getRgbF()[:3]))

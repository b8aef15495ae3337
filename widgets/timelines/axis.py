"""The timelines' axes: ``TickAxis`` labels game ticks (u64, drawn as ``tick - origin``
in float64, see ``view``) as whole round ticks that never overlap, ``TickViewBox`` zooms
by a dragged rectangle, and ``LevelAxis`` names the RelationshipLevel bands."""

from __future__ import annotations

import math

import pyqtgraph as pg
from narrative_debugger.models.domain.types import LEVEL_BOUNDS, RelationshipLevel
from narrative_debugger.models.save.saveshape import U64_MAX
from PySide6.QtGui import QFontMetrics


class TickAxis(pg.AxisItem):
    """Bottom axis writing ticks (``origin`` + x, exact integers) with thousands separators.

    The ticks themselves, never pyqtgraph's SI-prefixed short form ("2 (x1e+18)"): a
    tick is an id a user types into Go to tick. A tick label is cut to 0 .. 2^64 − 1,
    where float x past 2^53 rounds (a save that spans all of u64 ends at 2^64 − 1).
    """

    LABEL_GAP_PX = 16
    """Pixels kept free between two tick labels."""

    def __init__(self) -> None:
        super().__init__("bottom")
        self.enableAutoSIPrefix(False)
        self.origin = 0

    def tickSpacing(self, minVal, maxVal, size):  # noqa: N802 (pyqtgraph override)
        """pyqtgraph's spacing, with the labelled (major) level widened until the labels fit.

        pyqtgraph spaces ticks by the axis length alone and always draws the major
        level's text: near 2^64 a label is 26 characters ("18,446,744,073,709,551,615",
        ~170 px), and a 700 px axis wrote four of them over one another. The major
        spacing becomes the smallest step (``_nice_at_least``) that leaves each label its width
        and ``LABEL_GAP_PX``; pyqtgraph's major level then only marks ticks between them.
        Where no label of that spacing shows whole (an axis shorter than two labels),
        ``_one_label`` takes a smaller one that shows one.
        """
        levels = super().tickSpacing(minVal, maxVal, size)
        if not levels or size <= 0:
            return levels
        widest = f"{min(self.origin + max(0, int(max(abs(minVal), abs(maxVal)))), U64_MAX):,}"
        metrics = QFontMetrics(self.style.get("tickFont") or self.font())
        room = (metrics.horizontalAdvance(widest) + self.LABEL_GAP_PX) * abs(maxVal - minVal) / size
        major = levels[0][0]
        widened = major < room
        if widened:
            levels = [(_nice_at_least(room), 0), (major, 0)]
        levels = [(spacing, self._offset(spacing, offset)) for spacing, offset in levels]
        if widened and self._labels_shown(levels[0], minVal, maxVal, size, metrics) == 0:
            levels = self._one_label(levels, minVal, maxVal, size, metrics)
        return levels

    def _offset(self, spacing: float, offset: float) -> float:
        """Ticks at round ticks, not at round distances from the origin (a save whose ticks
        start at ...,253 was labelled 18,446,744,073,709,100,253): x = multiple - origin."""
        return float(-self.origin % step) if self.origin and (step := _whole_step(spacing)) else offset

    def _labels_shown(self, level: tuple[float, float], lo: float, hi: float, size: float, metrics: QFontMetrics) -> int | None:
        """How many labels of the tick ``level`` (spacing, offset) pyqtgraph draws on an axis
        of ``size`` pixels showing x ``lo`` .. ``hi``: those whole inside the axis (it leaves
        out the others); None when two of them would overlap (closer than ``LABEL_GAP_PX``)."""
        spacing, offset = level
        lo, hi = min(lo, hi), max(lo, hi)
        if spacing <= 0 or hi <= lo or (hi - lo) / spacing > size:
            return None
        start = math.ceil((lo - offset) / spacing) * spacing + offset
        values = [start + k * spacing for k in range(int((hi - start) / spacing) + 1)]
        scale = size / (hi - lo)
        spans = []
        for value, text in zip(values, self.tickStrings(values, 1.0, spacing)):
            middle, half = (value - lo) * scale, metrics.horizontalAdvance(text) / 2
            if text and middle - half >= 0 and middle + half <= size:
                spans.append((middle - half, middle + half))
        if any(left < right + self.LABEL_GAP_PX for (_, right), (left, _) in zip(spans, spans[1:])):
            return None
        return len(spans)

    def _one_label(self, levels: list, lo: float, hi: float, size: float, metrics: QFontMetrics) -> list:
        """``levels`` with a labelled level whose label shows, when the widened one had none.

        An axis shorter than two labels (a save spanning 0 .. 2^64 - 1 on a ~300 px axis:
        labels of ~170 px) got a labelled spacing wider than the range: its one tick, 0, sat
        at the axis's left end, where its label did not fit, and pyqtgraph drew no label at
        all. A smaller round spacing with a tick whose label shows whole, and none that
        overlaps it (1e19: "10,000,000,000,000,000,000" in the middle), labels the axis.
        """
        spacing = levels[0][0]
        for _ in range(12):  # down the 1-2-3-4-5-6-8 ladder, at most about two decades
            spacing = _nice_below(spacing)
            level = (spacing, self._offset(spacing, 0.0))
            shown = self._labels_shown(level, lo, hi, size, metrics)
            if shown is None:
                break  # smaller spacings crowd more
            if shown:
                return [level, *(lv for lv in levels[1:] if lv[0] < spacing)]
        return levels

    def tickStrings(self, values, scale, spacing):  # noqa: N802 (pyqtgraph override)
        """Each tick as its exact integer: a tick of a whole ``spacing`` is a multiple of
        it (``tickSpacing``'s offsets), so the label is snapped to the nearest multiple:
        past 2^53 a float x is off by up to its ulp ("6,000,000,000,000,000,253")."""
        step = _whole_step(spacing * scale) if spacing else 0
        out = []
        for v in values:
            x = float(v * scale)
            tick = self.origin + int(x) if x.is_integer() else -1
            if step > 1 and tick > 0:
                tick = (tick + step // 2) // step * step
            out.append(f"{min(tick, U64_MAX):,}" if tick >= 0 else "")
        return out


def _whole_step(spacing: float) -> int:
    """``spacing`` as an int when it is a whole number of ticks (1 or more), else 0: the
    spacings whose ticks ``TickAxis`` puts on, and snaps to, multiples of it."""
    return int(spacing) if spacing >= 1 and float(spacing).is_integer() else 0


def _nice_at_least(value: float) -> float:
    """The smallest 1, 2, 3, 4, 5, 6 or 8 x 10^k (k may be negative) that is at least
    ``value`` (> 0): the closest to ``value`` that still reads as a step."""
    power = 10.0 ** math.floor(math.log10(value))
    for factor in (1, 2, 3, 4, 5, 6, 8, 10):
        if factor * power >= value:
            return factor * power
    return 10 * power


def _nice_below(value: float) -> float:
    """The largest 1, 2, 3, 4, 5, 6 or 8 x 10^k that is less than ``value`` (> 0)."""
    power = 10.0 ** math.floor(math.log10(value))
    for factor in (8, 6, 5, 4, 3, 2, 1):
        if factor * power < value:
            return factor * power
    return 8 * power / 10


class TickViewBox(pg.ViewBox):
    """A plot's view box where a drag across the plot zooms to the ticks it spans (a
    rubber band), keeping the plot's y range: the score plot shows 0..100 score points
    and the stress plot its NPC's frame, whatever was dragged."""

    def __init__(self) -> None:
        super().__init__()
        self.setMouseMode(pg.ViewBox.RectMode)

    def showAxRect(self, ax, **kwargs) -> None:  # noqa: N802 (pyqtgraph override)
        rect = ax.normalized()
        if rect.width() > 0:
            self.setXRange(rect.left(), rect.right(), padding=0)
            self.sigRangeChangedManually.emit(self.state["mouseEnabled"])


class LevelAxis(pg.AxisItem):
    """Right axis naming the relationship level of each score band."""

    def __init__(self) -> None:
        super().__init__("right")
        bounds = [0.0] + [b for b, _ in LEVEL_BOUNDS] + [100.0]
        levels = [level for _, level in LEVEL_BOUNDS] + [RelationshipLevel.CLOSE_FRIEND]
        self.setTicks([[((lo + hi) / 2, level.display_name) for lo, hi, level in zip(bounds, bounds[1:], levels)], []])

    def names_width(self) -> int:
        """Pixels the axis takes to show its widest level name whole: the tick, the gap
        and the name (pyqtgraph leaves out a name wider than its axis: "Acquaintance" at
        an 11 pt font in the 104 px the axis had)."""
        metrics = QFontMetrics(self.style.get("tickFont") or self.font())
        widest = max(metrics.boundingRect(level.display_name).width() for level in RelationshipLevel)
        return widest + max(0, self.style["tickLength"]) + self.style["tickTextOffset"][0] + 4

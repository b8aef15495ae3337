"""What the timelines draw for the selected NPC, one set of items per NPC.

Selecting another NPC would otherwise re-pen two score curves, give the stress plot
new data, new markers and a new y range, each of which redraws whole plots: most of a
16 ms frame. ``NpcLayer`` holds one NPC's
emphasised score curve, stress, threshold, over-threshold fill and markers. The
``TimelinesView`` keeps the layers of the NPCs shown last, hidden, and selecting one
of them again only hides one layer and shows another: every item keeps the pixmap it
was drawn into (``cache_drawing``).

A kept stress layer stays valid only while the stress plot's transform does. So each
NPC's stress is plotted in its own frame (``stress_frame``): divided by its span, so
the plot's y range is 0..1 for every NPC whose stress never falls below 0. The left
axis writes stress units again (``AxisItem.setScale``).
"""

from __future__ import annotations

import numpy as np
import pyqtgraph as pg
from narrative_debugger.widgets.kit.state_colors import KIND_STYLE
from narrative_debugger.widgets.timelines.tracks import (
    MARKER_SIZE,
    MARKERS,
    SELECTED_WIDTH,
    NpcTrack,
    PassiveScatter,
    StepCurve,
    cache_drawing,
    tune_curve,
)
from PySide6.QtCore import Qt
from shiboken6 import isValid

#: The highest stress or threshold sits this far below the top of the stress plot.
STRESS_HEADROOM = 1.1
#: Brush of the part of the stress over the threshold (schema §8.1).
OVER_BRUSH = (214, 39, 40, 70)


def stress_frame(track: NpcTrack | None) -> tuple[float, float]:
    """``(bottom, span)`` of the stress plot for ``track``, in stress units.

    ``bottom`` is 0, or the lowest stress or threshold when one is below 0; ``span`` is
    from there to ``STRESS_HEADROOM`` x the highest, at least 1. The stress plot draws a
    value ``v`` at ``v / span``, over the y range ``bottom / span`` .. that + 1.
    """
    if track is None:
        return 0.0, 1.0
    values = np.concatenate([track.stress.y, track.threshold.y])
    values = values[np.isfinite(values)]
    if not len(values):
        return 0.0, 1.0
    top, bottom = float(values.max()), min(0.0, float(values.min()))
    return bottom, max(top * STRESS_HEADROOM, bottom + 1.0) - bottom


class NpcLayer:
    """One NPC's emphasised items in both plots.

    Attributes:
        npc: the StableId drawn, or None for the empty layer.
        markers: session event kind -> (label, ``pg.ScatterPlotItem``) in the score plot.
        score: the NPC's score curve with the selected pen, above the faded curves.
        stress, threshold, excess: the stress-plot step curves, in ``frame`` units
            (``excess`` = max(stress, threshold) is never drawn: the fill's upper edge).
        fill: the part of the stress over the threshold.
        frame: ``stress_frame`` of the NPC: (bottom, span) in stress units.
    """

    def __init__(self, score_plot, stress_plot) -> None:
        self.npc = None
        self.frame = (0.0, 1.0)
        self.markers = {}
        for kind, (_, symbol) in MARKERS.items():
            label, colour = KIND_STYLE[kind]
            item = PassiveScatter(symbol=symbol, size=MARKER_SIZE, brush=pg.mkBrush(colour), pen=pg.mkPen("#ffffff", width=0.8))
            item.setZValue(50)
            cache_drawing(item)
            score_plot.addItem(item)
            self.markers[kind] = (label, item)
        self.score = StepCurve()
        self.score.setZValue(10)
        score_plot.addItem(self.score)
        self.stress = StepCurve(pen=pg.mkPen("#c0392b", width=2), name="Stress")
        self.threshold = StepCurve(pen=pg.mkPen("#333", width=1.5, style=Qt.DashLine), name="Threshold")
        self.excess = StepCurve()
        self.fill = pg.FillBetweenItem(self.excess, self.threshold, brush=pg.mkBrush(*OVER_BRUSH), pen=pg.mkPen(None))
        cache_drawing(self.fill)
        for item in (self.fill, self.threshold, self.excess, self.stress):
            stress_plot.addItem(item)
        for item in (self.score, self.stress, self.threshold, self.excess):
            tune_curve(item)
        self.excess.setVisible(False)
        self.items = [item for _, item in self.markers.values()] + [self.score, self.fill, self.threshold, self.stress]

    def set_visible(self, shown: bool) -> None:
        """Shows or hides the layer by its opacity: Qt drops the pixmap of an item it
        hides with ``setVisible(False)``, so every item of a layer shown again would be
        drawn anew; a transparent item keeps its pixmap and is skipped when the plot paints."""
        self.set_opacity(1.0 if shown else 0.0)

    def set_opacity(self, opacity: float) -> None:
        for item in self.items:
            item.setOpacity(opacity)

    @property
    def alive(self) -> bool:
        """False once Qt deleted the layer's items (its view was destroyed)."""
        return all(map(isValid, self.items))

    @property
    def shown(self) -> bool:
        return self.score.opacity() >= 1.0

    def clear(self) -> None:
        """Lets go of the data drawn (hidden, for another NPC)."""
        empty = np.empty(0)
        for item in (self.score, self.stress, self.threshold, self.excess):
            item.setData(empty, empty)
        for _, item in self.markers.values():
            item.setData([], [])

    def draw_steps(self, npc, track: NpcTrack):
        """Gives the items ``track``'s data (a generator: a step before the stress curves
        and before each marker kind, ``widgets.kit.slices``). Hidden while it draws."""
        self.npc = None
        self.set_visible(False)
        self.score.setData(track.score.x, track.score.y, connect="finite")
        self.score.setPen(pg.mkPen(track.colour, width=SELECTED_WIDTH))
        yield
        self.frame = stress_frame(track)
        span = self.frame[1]
        for item, step in ((self.stress, track.stress), (self.threshold, track.threshold), (self.excess, track.excess)):
            item.setData(step.x, step.y / span, connect="finite")
        self.stress.setPen(pg.mkPen(track.colour.darker(115), width=2))
        for item in (self.score, self.stress, self.threshold, self.excess):
            tune_curve(item)
        for kind, (_, item) in self.markers.items():
            yield
            ticks = track.markers[kind]
            item.setData(ticks, track.score.at_many(ticks))
        self.npc = npc

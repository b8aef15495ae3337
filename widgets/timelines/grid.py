"""The timelines' vertical grid: one line per tick of the labelled tick axis.

pyqtgraph draws a plot's grid as long tick marks of its axis item, and the axis's
bounding rect then covers the whole plot. Every repaint of any strip of the plot
replays the axis's picture: a tick step (the cursor moves) and, worst, a change of
NPC, where both plots repaint whole (then it is about half of the paint).
``GridLines`` draws the same lines as an item of the view box's own coordinates
(pixels) with a cached drawing: a y-range change (another NPC's stress) keeps the
pixmap, a repaint copies from it, and only an x-range change or a resize draws again.
"""

from __future__ import annotations

import pyqtgraph as pg
from PySide6.QtCore import QLineF, QRectF
from PySide6.QtGui import QColor, QPen
from PySide6.QtWidgets import QGraphicsItem

#: Above the data, as pyqtgraph's grid (drawn by the axes, which sit above the view) is.
GRID_Z = 500


class GridLines(pg.GraphicsObject):
    """Vertical lines across ``plot``'s view at the ticks of ``axis`` (an x axis linked
    to the plot's x range: the timelines give both plots the labelled tick axis).

    The lines are pyqtgraph's own grid: the same tick values (``axis.tickValues``),
    the axis's tick pen, and per tick level k (0 = major) the alpha
    ``255 / (k + 1) * grid / 255 * clip(0.05 * width / (ticks + 1), 0, 1)`` with
    ``grid`` = ``alpha`` * 255 and ``width`` the view's width in pixels.

    Args:
        plot: a pyqtgraph PlotItem; the item becomes a child of its ViewBox.
        axis: the AxisItem whose ticks the lines follow (linked to the same x range).
        alpha: the grid's opacity, 0..1 (pyqtgraph's ``showGrid(alpha=...)``).
    """

    def __init__(self, plot, axis: pg.AxisItem, alpha: float = 0.15) -> None:
        super().__init__()
        self._view = plot.getViewBox()
        self._axis = axis
        self._grid = int(alpha * 255)
        self.setParentItem(self._view)
        self.setZValue(GRID_Z)
        self.setCacheMode(QGraphicsItem.DeviceCoordinateCache)
        self._rect = QRectF(self._view.boundingRect())
        self._view.sigXRangeChanged.connect(self.refresh)
        self._view.sigResized.connect(self.refresh)

    def refresh(self, *_args) -> None:
        """Draw again: the x range, the view's size or the axis pen changed."""
        rect = QRectF(self._view.boundingRect())
        if rect != self._rect:
            self.prepareGeometryChange()
            self._rect = rect
        self.update()

    def boundingRect(self) -> QRectF:  # noqa: N802 (Qt override)
        return QRectF(self._rect)

    def lines(self) -> list[tuple[int, list[float]]]:
        """(alpha 0..255, x positions in the view's pixels) per tick level, as drawn."""
        width = self._rect.width()
        lo, hi = self._view.viewRange()[0]
        if width <= 0 or not hi > lo:
            return []
        scale = width / (hi - lo)
        out = []
        for level, (_spacing, values) in enumerate(self._axis.tickValues(lo, hi, width)):
            alpha = 255 / (level + 1) * self._grid / 255 * min(1.0, max(0.0, 0.05 * width / (len(values) + 1)))
            xs = [(v - lo) * scale for v in values if lo <= v <= hi]
            out.append((int(alpha), xs))
        return out

    def paint(self, painter, *_args) -> None:
        top, bottom = self._rect.top(), self._rect.bottom()
        for alpha, xs in self.lines():
            pen = QPen(self._axis.tickPen())
            colour = QColor(pen.color())
            colour.setAlpha(alpha)
            pen.setColor(colour)
            pen.setCosmetic(True)
            painter.setPen(pen)
            painter.drawLines([QLineF(x, top, x, bottom) for x in xs])

"""pyqtgraph plots that follow the application palette (light or dark).

pyqtgraph draws with its own colours (a background, axis pens and label colours set
once). ``PlotPalette`` gives a ``GraphicsLayoutWidget`` and its plots the palette's
colours (``state_colors.palette_colors``): the background is ``QPalette.Base``,
axes, tick labels and axis titles are ``QPalette.Text``, the cursor lines and their
label follow the text colour, and the level bands are toned down on a dark palette.
It listens for ``QEvent.PaletteChange`` and ``QEvent.ApplicationPaletteChange`` on the
widget and applies the new colours at once.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Sequence

import pyqtgraph as pg
from narrative_debugger.widgets.kit.state_colors import PaletteColors, palette_colors
from PySide6.QtCore import QEvent, QObject
from PySide6.QtGui import QColor

#: Alpha of the level bands on a dark palette (their light fills would glare).
DARK_BAND_ALPHA = 40


class PlotPalette(QObject):
    """Keeps ``graphics`` and ``plots`` in the colours of the palette.

    Args:
        graphics: the ``pg.GraphicsLayoutWidget`` (its background and its events).
        plots: the ``pg.PlotItem`` s whose axes and labels follow the text colour.
        cursors: ``pg.InfiniteLine`` s drawn in the text colour.
        bands: ``pg.LinearRegionItem`` s toned down on a dark palette.
        ink_curves: ``pg.PlotDataItem`` s (a threshold line) drawn in the text colour,
            keeping their width and dash; or a function that returns them when the
            curves come and go (each new one is given ``apply_ink``).
        grids: ``timeline_grid.GridLines`` drawn again in the axes' new pen.

    Attributes:
        colors: the ``PaletteColors`` applied last.
    """

    def __init__(self, graphics, plots: Sequence, cursors: Sequence = (), bands: Sequence = (),
                 ink_curves: Sequence | Callable[[], Iterable] = (), grids: Sequence = ()) -> None:
        super().__init__(graphics)
        self._graphics = graphics
        self._plots = tuple(plots)
        self._cursors = tuple(cursors)
        self._bands = [(band, QColor(band.brush.color())) for band in bands]
        self._ink_curves = ink_curves if callable(ink_curves) else (lambda curves=tuple(ink_curves): curves)
        self._grids = tuple(grids)
        self.colors: PaletteColors | None = None
        graphics.installEventFilter(self)
        self.apply()

    def apply(self) -> None:
        """Colour the background, axes, labels, cursors and bands from the widget's palette."""
        colors = palette_colors(self._graphics.palette())
        self.colors = colors
        self._graphics.setBackground(colors.canvas)
        ink, axis = colors.ink, QColor(colors.ink)
        axis.setAlpha(200)
        for plot in self._plots:
            for name in ("left", "bottom", "right", "top"):
                item = plot.getAxis(name)
                item.setPen(pg.mkPen(axis))
                item.setTextPen(pg.mkPen(ink))
                if item.labelText:
                    item.setLabel(item.labelText, units=item.labelUnits or None, color=ink.name())
        for line in self._cursors:
            line.setPen(pg.mkPen(ink, width=2))
            label = getattr(line, "label", None)
            if label is not None:
                label.setColor(ink)
                fill = QColor(colors.canvas)
                fill.setAlpha(220)
                label.fill = pg.mkBrush(fill)
                label.update()
        for curve in self._ink_curves():
            self.apply_ink(curve)
        for grid in self._grids:  # drawn with the axes' pen (timeline_grid.GridLines)
            grid.refresh()
        for band, light in self._bands:
            fill = QColor(light)
            if colors.dark:
                fill.setAlpha(DARK_BAND_ALPHA)
            band.setBrush(pg.mkBrush(fill))

    def apply_ink(self, curve) -> None:
        """Draws ``curve`` in the text colour of the palette applied last, keeping its width and dash."""
        if self.colors is not None:
            pen = pg.mkPen(curve.opts["pen"])
            pen.setColor(self.colors.ink)
            curve.setPen(pen)

    def eventFilter(self, watched, event) -> bool:
        if watched is self._graphics and event.type() in (QEvent.PaletteChange, QEvent.ApplicationPaletteChange):
            self.apply()
        return False

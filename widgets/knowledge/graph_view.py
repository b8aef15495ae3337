"""A QGraphicsView that zooms with the wheel under the mouse, pans by dragging and fits.

Used by the knowledge graph. Until the user zooms or pans, the view keeps the
drawing fitted to the widget (``auto_fit``); afterwards it keeps the user's zoom and
centre across redraws until ``fit`` is asked for again.
"""

from __future__ import annotations

from collections.abc import Callable

from PySide6.QtCore import QPointF, QRectF, Qt, Signal
from PySide6.QtGui import QPainter
from PySide6.QtWidgets import QGraphicsScene, QGraphicsView

#: Zoom limits (scene units to pixels).
MIN_SCALE, MAX_SCALE = 0.02, 12.0
#: A fitted drawing is never magnified past this.
FIT_MAX_SCALE = 1.25
#: Zoom factor per wheel step (120 units of angle delta).
WHEEL_STEP = 1.2


class ZoomView(QGraphicsView):
    """Wheel zoom anchored under the mouse, drag to pan, click tagged items.

    Args:
        scene: the scene shown.
        on_click: called with (item, scene position) for a left click on an item whose
            ``data(0)`` is set; a click elsewhere starts a pan.
        kind_key: the ``QGraphicsItem.data`` key that marks clickable items.

    Attributes:
        content: the scene rectangle ``fit`` shows (set by the owner after drawing).
        auto_fit: True until the user zooms or pans.
    """

    zoomed = Signal(float)

    def __init__(self, scene: QGraphicsScene, on_click: Callable, kind_key: int = 0, parent=None) -> None:
        super().__init__(scene, parent)
        self._on_click = on_click
        self._kind_key = kind_key
        self.content = QRectF()
        self.auto_fit = True
        self.setRenderHints(QPainter.Antialiasing | QPainter.TextAntialiasing)
        self.setFrameShape(QGraphicsView.NoFrame)
        self.setHorizontalScrollBarPolicy(Qt.ScrollBarAlwaysOff)
        self.setVerticalScrollBarPolicy(Qt.ScrollBarAlwaysOff)
        self.setTransformationAnchor(QGraphicsView.AnchorUnderMouse)
        self.setResizeAnchor(QGraphicsView.AnchorViewCenter)
        self.setDragMode(QGraphicsView.ScrollHandDrag)
        self.setViewportUpdateMode(QGraphicsView.SmartViewportUpdate)

    # ----- geometry -----
    def set_content(self, rect: QRectF, extent: QRectF | None = None) -> None:
        """Set what ``fit`` shows.

        Args:
            rect: the rectangle ``fit`` shows.
            extent: everything drawn (``rect`` when None); the view can pan over it
                and a margin around it.
        """
        self.content = QRectF(rect)
        whole = rect.united(extent) if extent is not None else QRectF(rect)
        margin = max(rect.width(), rect.height(), 400.0)
        self.setSceneRect(whole.adjusted(-margin, -margin, margin, margin))
        if self.auto_fit:
            self.fit()

    def fit(self) -> None:
        """Show ``content`` whole (never magnified past ``FIT_MAX_SCALE``) and follow resizes again."""
        self.auto_fit = True
        if self.content.isEmpty():
            return
        self.fitInView(self.content, Qt.KeepAspectRatio)
        if self.scale_factor() > FIT_MAX_SCALE:
            self.resetTransform()
            self.scale(FIT_MAX_SCALE, FIT_MAX_SCALE)
        self.centerOn(self.content.center())
        self.zoomed.emit(self.scale_factor())

    def scale_factor(self) -> float:
        """Pixels per scene unit."""
        return self.transform().m11()

    def zoom_by(self, factor: float, anchor: QPointF | None = None) -> None:
        """Zoom by ``factor`` (clamped to the limits), keeping ``anchor`` (scene) under its pixel."""
        current = self.scale_factor()
        factor = max(MIN_SCALE / current, min(MAX_SCALE / current, factor))
        if abs(factor - 1.0) < 1e-9:
            return
        self.auto_fit = False
        if anchor is None:
            self.scale(factor, factor)
        else:
            before = self.mapFromScene(anchor)
            self.scale(factor, factor)
            after = self.mapFromScene(anchor)
            delta = after - before
            self.horizontalScrollBar().setValue(self.horizontalScrollBar().value() + delta.x())
            self.verticalScrollBar().setValue(self.verticalScrollBar().value() + delta.y())
        self.zoomed.emit(self.scale_factor())

    def show_rect(self, rect: QRectF, min_scale: float = 1.0) -> None:
        """Centre ``rect`` (scene) and zoom in to at least ``min_scale`` so it reads."""
        self.auto_fit = False
        if self.scale_factor() < min_scale:
            self.resetTransform()
            self.scale(min_scale, min_scale)
            self.zoomed.emit(self.scale_factor())
        self.centerOn(rect.center())

    def center(self) -> QPointF:
        """The scene point at the middle of the viewport."""
        return self.mapToScene(self.viewport().rect().center())

    # ----- events -----
    def resizeEvent(self, event) -> None:
        super().resizeEvent(event)
        if self.auto_fit:
            self.fit()

    def wheelEvent(self, event) -> None:
        steps = event.angleDelta().y() / 120.0
        if steps:
            self.setTransformationAnchor(QGraphicsView.NoAnchor)
            self.zoom_by(WHEEL_STEP ** steps, self.mapToScene(event.position().toPoint()))
            self.setTransformationAnchor(QGraphicsView.AnchorUnderMouse)
        event.accept()

    def mousePressEvent(self, event) -> None:
        if event.button() == Qt.LeftButton:
            item = next((it for it in self.items(event.position().toPoint()) if it.data(self._kind_key) is not None), None)
            if item is not None:
                self._on_click(item, self.mapToScene(event.position().toPoint()))
                return
            self.auto_fit = False  # a drag pans
        super().mousePressEvent(event)

"""A holder for a label (or check box) whose text changes at every tick step.

``QLabel.setText`` always calls ``updateGeometry``, which invalidates every layout up
to the window: a step that renamed the tick in six captions laid the whole window out
again, every dock included (Fusion loads the dock buttons' icons from disk to place
them), a large share of a step that keeps the NPC.

``SteadyLabel`` holds the label without a layout, so the label's ``updateGeometry``
stops at the holder, which asks its own layout again only when the new text no longer
fits: wider than the holder, or (word-wrapped) of another height. The label keeps its
own API (``text()``, ``setText``, rich or plain text, tooltips). A text that no longer
fits is laid out in the pass after the one that set it (the holder's request is posted).

It holds any widget whose text changes often and whose ``updateGeometry`` would
otherwise reach the window: a ``QLabel`` or a ``QCheckBox`` renamed at each NPC change
(the journal's "Only NAME").
"""

from __future__ import annotations

from PySide6.QtCore import QEvent, QSize
from PySide6.QtWidgets import QAbstractButton, QLabel, QWidget

_LAYOUT_REQUEST = QEvent.Type.LayoutRequest


class SteadyLabel(QWidget):
    """Holds ``label`` (reparented here) and sizes it to itself.

    Its size hints are the label's; a new text lays the window out again only when the
    label's minimum width is wider than the holder, or the height it needs for the
    holder's width differs from what the last layout saw (``fits``).

    Args:
        label: the label (or check box) whose text changes often.
        parent: the holder's parent (a layout reparents it anyway).
    """

    def __init__(self, label: QLabel | QAbstractButton, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.label = label
        label.setParent(self)
        self.setSizePolicy(label.sizePolicy())
        self.setObjectName(f"{label.objectName() or 'label'}Holder")
        self._needed = -1  # the label's height (for the holder's width) the last layout saw
        # Paints its own background: a new text repaints the holder, not the dock or view
        # behind it (a dock's paint places its title buttons, loading their icons).
        self.setAutoFillBackground(True)

    # ----- sizes follow the label -----
    def sizeHint(self) -> QSize:  # noqa: N802 (Qt override)
        return self.label.sizeHint()

    def minimumSizeHint(self) -> QSize:  # noqa: N802 (Qt override)
        return self.label.minimumSizeHint()

    def hasHeightForWidth(self) -> bool:  # noqa: N802 (Qt override)
        return self.label.hasHeightForWidth()

    def heightForWidth(self, width: int) -> int:  # noqa: N802 (Qt override)
        return self.label.heightForWidth(width)

    def resizeEvent(self, event) -> None:  # noqa: N802 (Qt override)
        self.label.setGeometry(self.rect())
        needed = self._height_needed()
        if needed != self._needed and _wraps_by_minimum(self.label):
            # Its height follows its width by its minimum height (``WrappedLabel``), which
            # the layout read at the old width: ask again (once per height) for this width's.
            self.updateGeometry()
        self._needed = needed
        super().resizeEvent(event)

    def showEvent(self, event) -> None:  # noqa: N802 (Qt override)
        # A text set while the holder was not visible (its view behind another tab) posted
        # no LayoutRequest here (Qt posts it to a visible parent only), and the layout kept
        # the old text's size hint: a two-line heading set behind a tab would show one
        # line high, cut to a sliver.
        super().showEvent(event)
        if not self.fits() or self.height() < self._height_needed():
            self._needed = self._height_needed()
            self.updateGeometry()

    # ----- a new text -----
    def _height_needed(self) -> int:
        label = self.label
        return label.heightForWidth(self.width()) if label.hasHeightForWidth() else label.sizeHint().height()

    def fits(self) -> bool:
        """True when the label's text needs no new layout: as high as the last layout saw
        and, unwrapped, no wider than the holder (its minimum: an eliding label is never too wide)."""
        label = self.label
        if not label.hasHeightForWidth() and label.minimumSizeHint().width() > self.width():
            return False
        return self._height_needed() == self._needed

    def event(self, event) -> bool:
        # The label's updateGeometry posts a LayoutRequest to its parent when the parent
        # has no layout; this is where a new text arrives.
        if event.type() == _LAYOUT_REQUEST:
            if not self.fits():
                self._needed = self._height_needed()  # asked once per need, even if the layout cannot give it
                self.updateGeometry()
            return True
        return super().event(event)


def _wraps_by_minimum(label: QLabel | QAbstractButton) -> bool:
    """Whether ``label`` wraps its text without height-for-width (a ``WrappedLabel``): a
    new width may need another height, which only its size hints tell the layout."""
    return isinstance(label, QLabel) and label.wordWrap() and not label.hasHeightForWidth()

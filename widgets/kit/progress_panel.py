"""A job's progress inside the main window: what it is doing, how far, and Cancel.

It sits in the window's status bar instead of a dialog of its own. A dialog is a
second top-level window: its first show (a window, a backing store, a style pass)
blocks the GUI thread while the worker reads the save, past the 50 ms the app allows
itself (issue 10). The panel is part of the window that is already
shown, and the save being replaced stays usable beside it.
"""

from __future__ import annotations

from narrative_debugger.widgets.kit.plain_text import ElidedLabel
from PySide6.QtCore import QTimer, Signal
from PySide6.QtWidgets import QHBoxLayout, QProgressBar, QToolButton, QWidget


class ProgressPanel(QWidget):
    """A hidden-until-slow row: a plain-text message, a 0..100 % bar and a Cancel button.

    ``cancelRequested`` is emitted on Cancel. ``begin(text, delay_ms)`` starts a job (the
    panel shows only if it is still running ``delay_ms`` later), ``report`` moves it on,
    ``end`` hides it. ``show_note`` puts a word of the window's in place of the job's
    message while the job runs (see there).
    """

    cancelRequested = Signal()

    BAR_WIDTH = 140
    """The bar's width (pixels): room for the percentage, little taken from the status bar."""

    def __init__(self, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.setObjectName("progressPanel")
        layout = QHBoxLayout(self)
        layout.setContentsMargins(0, 0, 6, 0)
        layout.setSpacing(6)
        self.message = ElidedLabel("")
        self.message.setObjectName("progressMessage")
        self.bar = QProgressBar()
        self.bar.setObjectName("progressBar")
        self.bar.setRange(0, 100)
        self.bar.setFixedWidth(self.BAR_WIDTH)
        self.bar.setAccessibleName("Progress")
        self.cancel_button = QToolButton()
        self.cancel_button.setObjectName("progressCancel")
        self.cancel_button.setText("Cancel")
        self.cancel_button.setToolTip("Stop this job; the window keeps what it shows")
        self.cancel_button.clicked.connect(self.cancelRequested)
        layout.addWidget(self.message, 1)
        layout.addWidget(self.bar)
        layout.addWidget(self.cancel_button)
        self._show_timer = QTimer(self)
        self._show_timer.setSingleShot(True)
        self._show_timer.timeout.connect(self.show)
        self._title = ""
        self._doing = ""  # the job's own message
        self._note = ""  # a status-bar message that came during the job
        self.hide()

    @property
    def running(self) -> bool:
        """True between ``begin`` and ``end``."""
        return bool(self._title)

    def begin(self, text: str, delay_ms: int) -> None:
        """Start a job described by ``text`` (plain text); show the panel after ``delay_ms``
        (milliseconds) if the job has not ended by then."""
        self._title = text or " "
        self._doing, self._note = text, ""  # a message from before the job is about an earlier state
        self._show_text()
        self.bar.setValue(0)
        self._show_timer.start(max(0, int(delay_ms)))

    def report(self, fraction: float, message: str) -> None:
        """Show ``fraction`` (0..1, clamped) done and what the job does now (plain text)."""
        if not self.running:
            return
        self.bar.setValue(int(round(min(1.0, max(0.0, fraction)) * 100)))
        self._doing = f"{self._title.rstrip('…')}: {message}" if message else self._title
        self._show_text()

    def show_note(self, text: str) -> None:
        """Show ``text`` (plain text; "" for none) instead of the job's message until it is
        cleared or the job ends; nothing when no job runs.

        Connected to the status bar's ``messageChanged``: the panel takes the room where
        the status bar draws its messages, so a message that came while it showed (a save
        gone from disk, a notice of a view) would not be seen at all. The bar and
        Cancel stay; the job's own message comes back when the note goes."""
        if self.running:
            self._note = text or ""
            self._show_text()

    def _show_text(self) -> None:
        self.message.setText(self._note or self._doing)

    def end(self) -> None:
        """The job has ended (done, failed or cancelled): hide the panel."""
        self._title = self._doing = self._note = ""
        self._show_timer.stop()
        self.hide()

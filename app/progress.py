"""The progress dialog shown while a worker opens or compares saves.

One owner (the main window, the compare controller) keeps one ``WorkProgress``; it
opens a cancellable dialog per job, follows the worker's ``progress(fraction,
message)`` signal and closes when the job ends.
"""

from __future__ import annotations

from PySide6.QtWidgets import QProgressDialog, QWidget

#: Jobs shorter than this (ms) never show the dialog.
SHOW_AFTER_MS = 400


class WorkProgress:
    """A cancellable progress dialog for one job at a time.

    It keeps no reference to its window (the dialog's Qt parent is enough), so it
    never holds a deleted window alive.
    """

    def __init__(self) -> None:
        self._dialog: QProgressDialog | None = None

    def start(self, parent: QWidget, title: str, label: str, on_cancel) -> None:
        """Open a dialog over ``parent`` for a new job (closing any earlier one);
        ``on_cancel()`` runs on Cancel."""
        self.close()
        dialog = QProgressDialog(label, "Cancel", 0, 100, parent)
        dialog.setWindowTitle(title)
        dialog.setMinimumDuration(SHOW_AFTER_MS)
        dialog.setAutoClose(False)
        dialog.canceled.connect(on_cancel)
        self._dialog = dialog

    def update(self, fraction: float, message: str) -> None:
        """Show ``fraction`` (0..1) done and what the worker is doing."""
        if self._dialog is not None:
            self._dialog.setLabelText(message)
            self._dialog.setValue(int(fraction * 100))

    def close(self) -> None:
        """Close the dialog, if one is open."""
        if self._dialog is not None:
            self._dialog.reset()
            self._dialog.deleteLater()
            self._dialog = None

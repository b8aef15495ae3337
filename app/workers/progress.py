"""The progress of a worker that opens or compares saves, shown in the window's status bar.

One owner (the main window, the compare controller) keeps one ``WorkProgress``; it
starts a job on a ``widgets.kit.progress_panel.ProgressPanel`` in the window's status bar,
follows the worker's ``progress(fraction, message)`` signal and ends when the job does.
A panel, not a progress dialog: a dialog's first show stalls the GUI thread past
the 50 ms an open may take of it (issue 10).
"""

from __future__ import annotations

from narrative_debugger.widgets.kit.progress_panel import ProgressPanel
from PySide6.QtCore import QObject, Qt
from PySide6.QtGui import QKeySequence, QShortcut
from PySide6.QtWidgets import QMainWindow

#: Jobs shorter than this (ms) never show the panel.
SHOW_AFTER_MS = 400


class EscapeCancels(QObject):
    """The one Escape shortcut of a window, shared by every ``WorkProgress`` on it.

    Each owner (the main window, the compare controller) once made its own. While an
    open and a comparison both ran, the window had two enabled Escape shortcuts: Qt
    calls that ambiguous and runs neither, so Escape cancelled nothing. Here Escape
    cancels the newest job still running; a second Escape the one before it.
    """

    OBJECT_NAME = "progressEscape"

    def __init__(self, window: QMainWindow) -> None:
        super().__init__(window)
        self.setObjectName(self.OBJECT_NAME)
        self._running: list[WorkProgress] = []  # oldest first
        self.shortcut = QShortcut(QKeySequence(Qt.Key_Escape), window)
        self.shortcut.setContext(Qt.WindowShortcut)
        self.shortcut.activated.connect(self._cancel_newest)
        self.shortcut.setEnabled(False)  # while a job runs only: Escape is the window's otherwise

    @classmethod
    def of(cls, window: QMainWindow) -> "EscapeCancels":
        """``window``'s shared instance, made on first use."""
        found = window.findChild(cls, cls.OBJECT_NAME)
        return found if found is not None else cls(window)

    def job_started(self, job: "WorkProgress") -> None:
        if job in self._running:
            self._running.remove(job)
        self._running.append(job)
        self.shortcut.setEnabled(True)

    def job_ended(self, job: "WorkProgress") -> None:
        if job in self._running:
            self._running.remove(job)
        self.shortcut.setEnabled(bool(self._running))

    def _cancel_newest(self) -> None:
        if self._running:
            self._running[-1]._cancel()


class WorkProgress:
    """A cancellable progress panel for one job at a time.

    The panel is made on the first ``start`` as a child of the window's status bar,
    so it never holds a deleted window alive.
    """

    def __init__(self) -> None:
        self._panel: ProgressPanel | None = None
        self._escape: EscapeCancels | None = None
        self._on_cancel = None

    @property
    def panel(self) -> ProgressPanel | None:
        """The panel (None before the first job)."""
        return self._panel

    def start(self, window: QMainWindow, title: str, label: str, on_cancel) -> None:
        """Show a new job on ``window``'s status bar (ending any earlier one): ``label``
        (plain text) until the worker reports; ``on_cancel()`` runs on Cancel.
        ``title`` names the job for assistive tools."""
        self.close()
        self.attach(window)
        self._panel.setAccessibleName(title)
        self._on_cancel = on_cancel
        self._escape.job_started(self)
        self._panel.begin(label, SHOW_AFTER_MS)

    def attach(self, window: QMainWindow) -> None:
        """Put the (hidden) panel into ``window``'s status bar now, if it is not there yet.

        The status bar takes the panel's height from then on. Made at the first
        ``start``, the panel would change that height during the first open, and the
        whole window would be laid out and repainted again, every dock, while the
        worker reads the save. The main window attaches it when it is built."""
        if self._panel is not None:
            return
        self._panel = ProgressPanel()
        window.statusBar().insertPermanentWidget(0, self._panel, 1)
        self._panel.cancelRequested.connect(self._cancel)
        # A message the status bar gets while the panel takes its room shows in the panel.
        window.statusBar().messageChanged.connect(self._panel.show_note)
        # Escape cancels too, while a job runs (the dialog's Escape did).
        self._escape = EscapeCancels.of(window)
        self._panel.cancel_button.setToolTip("Stop this job (Esc); the window keeps what it shows")

    def _cancel(self) -> None:
        on_cancel, self._on_cancel = self._on_cancel, None
        if self._escape is not None:
            self._escape.job_ended(self)
        if on_cancel is not None:
            on_cancel()

    def update(self, fraction: float, message: str) -> None:
        """Show ``fraction`` (0..1) done and what the worker is doing."""
        if self._panel is not None:
            self._panel.report(fraction, message)

    def close(self) -> None:
        """End the job shown, if one is."""
        self._on_cancel = None
        if self._panel is not None:
            self._panel.end()
            self._escape.job_ended(self)  # Escape is the window's again once no job runs

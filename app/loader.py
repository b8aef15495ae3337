"""Opening saves off the GUI thread (style.md rule 5).

``SaveLoader`` runs ``Playthrough.open`` in a QThread and reports progress, the result
or the cancellation back by signal; the GUI thread only ever touches widgets.
"""

from __future__ import annotations

import threading
from pathlib import Path

from narrative_debugger.models.playthrough import Cancelled, Playthrough
from PySide6.QtCore import QObject, QThread, Signal, Slot


class _Job(QObject):
    progress = Signal(float, str)
    finished = Signal(object)  # Playthrough
    cancelled = Signal()
    failed = Signal(str)

    def __init__(self, path: Path, content: Path | None) -> None:
        super().__init__()
        self.path = path
        self.content = content
        self.stop = threading.Event()

    @Slot()
    def run(self) -> None:
        try:
            play = Playthrough.open(self.path, self.content, progress=self.progress.emit, cancelled=self.stop.is_set)
        except Cancelled:
            self.cancelled.emit()
            return
        except Exception as exc:  # a bug, not bad input: report it instead of losing the window
            self.failed.emit(f"{type(exc).__name__}: {exc}")
            return
        self.finished.emit(play)


class SaveLoader(QObject):
    """Loads one save at a time in a worker thread.

    Signals:
        progress(float, str): fraction 0..1 and what is being done.
        loaded(object, object): the Playthrough and the request's context (any value).
        cancelled(): the load was cancelled.
        failed(str): an unexpected error (a bug) with its message.
    """

    progress = Signal(float, str)
    loaded = Signal(object, object)
    cancelled = Signal()
    failed = Signal(str)

    def __init__(self, parent: QObject | None = None) -> None:
        super().__init__(parent)
        self._thread: QThread | None = None
        self._job: _Job | None = None
        self._context = None

    @property
    def busy(self) -> bool:
        return self._thread is not None

    def start(self, path: Path, content: Path | None, context=None) -> None:
        """Start loading ``path``; a load already running is cancelled first."""
        self.cancel()
        self.wait()
        thread = QThread(self)
        job = _Job(Path(path), content)
        job.moveToThread(thread)
        thread.started.connect(job.run)
        job.progress.connect(self.progress)
        job.finished.connect(self._on_finished)
        job.cancelled.connect(self._on_cancelled)
        job.failed.connect(self._on_failed)
        self._thread, self._job, self._context = thread, job, context
        thread.start()

    def cancel(self) -> None:
        """Ask the running load to stop at its next progress report."""
        if self._job is not None:
            self._job.stop.set()

    def wait(self, msecs: int = 30000) -> None:
        """Block until the worker thread has ended (used on close and in tests)."""
        if self._thread is not None:
            self._thread.quit()
            self._thread.wait(msecs)

    def _finish(self) -> None:
        thread = self._thread
        self._thread, self._job = None, None
        if thread is not None:
            thread.quit()
            thread.wait()
            thread.deleteLater()

    def _on_finished(self, play) -> None:
        context = self._context
        self._finish()
        self.loaded.emit(play, context)

    def _on_cancelled(self) -> None:
        self._finish()
        self.cancelled.emit()

    def _on_failed(self, message: str) -> None:
        self._finish()
        self.failed.emit(message)

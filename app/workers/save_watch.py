"""Watching the shown save on disk: one path at a time, changes debounced.

``SaveWatch`` owns the window's ``QFileSystemWatcher``. It watches the save the window
shows and nothing else, and says ``changed`` once an editor or the game has finished
writing it (``DEBOUNCE_MS`` after the last notification). A notification for any other
path, such as one for the save shown before an open that arrived after the switch, is
dropped, and switching to another save forgets a change still being debounced: the
window once reloaded the newly opened save on such a late notification and said it had
"changed on disk" (issue 35).
"""

from __future__ import annotations

from pathlib import Path

from PySide6.QtCore import QFileSystemWatcher, QObject, QTimer, Signal

#: Quiet time after the last notification before ``changed`` is emitted (ms): editors
#: and the game write a save in several steps.
DEBOUNCE_MS = 600
#: While the watched save is missing, how often it is looked for again (ms).
GONE_RETRY_MS = 1000


class SaveWatch(QObject):
    """The watch on one save file.

    Signals:
        changed(object): the watched save (a ``Path``) changed and is quiet again; emitted
            only for the path being watched at that moment.
        gone(object): the watched save (a ``Path``) is missing; it is looked for again
            every ``GONE_RETRY_MS`` and ``changed`` follows once it is back.
    """

    changed = Signal(object)
    gone = Signal(object)

    def __init__(self, parent: QObject | None = None) -> None:
        super().__init__(parent)
        self._path: Path | None = None
        self._watcher = QFileSystemWatcher(self)
        self._watcher.fileChanged.connect(self._on_notified)
        self._timer = QTimer(self, singleShot=True)
        self._timer.timeout.connect(self._on_quiet)
        self._stopped = False

    @property
    def path(self) -> Path | None:
        """The save being watched (None: none)."""
        return self._path

    @property
    def pending(self) -> bool:
        """True while a change of the watched save is being debounced (or it is missing)."""
        return self._timer.isActive()

    @property
    def watched_files(self) -> list[str]:
        """What the file-system watcher holds now (at most the one save)."""
        return self._watcher.files()

    def watch(self, path: Path) -> None:
        """Watch ``path`` from now on. Another path than the one watched replaces it and
        forgets any change of the old one still being debounced; the same path keeps it
        (a change made during a reload still reloads). Does nothing after ``stop``."""
        if self._stopped:
            return
        path = Path(path)
        if path != self._path:
            self._timer.stop()
            if self._watcher.files():
                self._watcher.removePaths(self._watcher.files())
            self._path = path
        if str(path) not in self._watcher.files():
            self._watcher.addPath(str(path))

    def notify(self, path: str | Path) -> None:
        """A notification that ``path`` changed (what the watcher reports, and tests):
        starts or restarts the debounce when it is the watched save, else is dropped."""
        if self._stopped or self._path is None or Path(path) != self._path:
            return
        self._timer.start(DEBOUNCE_MS)

    def stop(self) -> None:
        """Watch nothing any more and never emit again (the window's close)."""
        self._stopped = True
        self._timer.stop()
        self._watcher.blockSignals(True)
        if self._watcher.files():
            self._watcher.removePaths(self._watcher.files())
        self._path = None

    def _on_notified(self, path: str) -> None:
        self.notify(path)

    def _on_quiet(self) -> None:
        path = self._path
        if path is None or self._stopped:
            return
        if not path.exists():
            # The watcher dropped it with the file: look again later, then watch it again.
            self._timer.start(GONE_RETRY_MS)
            self.gone.emit(path)
            return
        if str(path) not in self._watcher.files():
            self._watcher.addPath(str(path))
        self.changed.emit(path)

"""What running the desktop app needs from its process: a display, and a Ctrl+C that
closes the windows cleanly instead of killing the interpreter inside Qt's event loop.

``no_display_reason`` imports no Qt, so the command line can say "no display" before
Qt aborts; ``SigintQuit`` is imported only where the app runs.
"""

from __future__ import annotations

import os
import signal
import sys

#: Exit status of a command or app ended by Ctrl+C (128 + SIGINT, as shells report it).
EXIT_INTERRUPTED = 128 + signal.SIGINT


def no_display_reason(environ=None) -> str | None:
    """Why a window cannot be shown here, or None when it can (or cannot be told).

    On X11/Wayland systems Qt aborts the process when neither ``DISPLAY`` nor
    ``WAYLAND_DISPLAY`` is set; ``QT_QPA_PLATFORM`` (e.g. ``offscreen``) means the
    user chose a platform, so the choice is left to Qt. macOS and Windows always
    have their own platform.
    """
    env = os.environ if environ is None else environ
    if sys.platform == "darwin" or sys.platform.startswith(("win", "cygwin")):
        return None
    if env.get("DISPLAY") or env.get("WAYLAND_DISPLAY") or env.get("QT_QPA_PLATFORM"):
        return None
    return "no display to open a window on (neither DISPLAY nor WAYLAND_DISPLAY is set); run it in a desktop session, or set QT_QPA_PLATFORM=offscreen"


class SigintQuit:
    """While active, Ctrl+C (SIGINT) closes every window and quits the application.

    Python runs a signal handler only between bytecodes, never while Qt's event loop
    waits in C++; so the handler only sets a flag, and a timer owned by this object
    wakes the interpreter every ``poll_ms`` milliseconds to look at it and, when set,
    close the windows (their close events stop workers) and quit the loop. Use as a
    context manager around ``app.exec()``; the previous handler is restored on exit.

    Attributes:
        interrupted: True once Ctrl+C was pressed.
    """

    def __init__(self, app, poll_ms: int = 200) -> None:
        from PySide6.QtCore import QTimer

        self.app = app
        self.interrupted = False
        self._previous = None
        self._timer = QTimer()
        self._timer.setInterval(poll_ms)
        self._timer.timeout.connect(self._poll)

    def _on_sigint(self, _signum, _frame) -> None:
        self.interrupted = True

    def _poll(self) -> None:
        if self.interrupted:
            self._timer.stop()
            self.app.closeAllWindows()
            self.app.quit()

    def __enter__(self) -> "SigintQuit":
        self._previous = signal.signal(signal.SIGINT, self._on_sigint)
        self._timer.start()
        return self

    def __exit__(self, *exc) -> None:
        self._timer.stop()
        signal.signal(signal.SIGINT, self._previous if self._previous is not None else signal.default_int_handler)

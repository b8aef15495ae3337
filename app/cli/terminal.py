"""Text the command line writes cannot drive the terminal.

Names, slugs, lines and file names come from saves and content; a hostile one may
carry an escape sequence (ESC ``[2J``), a carriage return that hides a line, or a
bidirectional override that reverses what a tester reads. ``TerminalSafe`` writes
such characters as ``\\uXXXX`` escapes, which are also valid inside JSON strings, so
JSON output stays parseable and means the same.
"""

from __future__ import annotations

from narrative_debugger.models.report.plain_text import one_line, terminal_safe

__all__ = ["TerminalSafe", "one_line", "terminal_safe"]


class TerminalSafe:
    """A text stream wrapper whose ``write`` passes text through ``terminal_safe``;
    everything else (flush, fileno, isatty, encoding, ...) is the wrapped stream's."""

    def __init__(self, stream) -> None:
        self._stream = stream

    def write(self, text: str) -> int:
        self._stream.write(terminal_safe(text))
        return len(text)

    def writelines(self, lines) -> None:
        for line in lines:
            self.write(line)

    def __getattr__(self, name):
        return getattr(self._stream, name)

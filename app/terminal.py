"""Text the command line writes cannot drive the terminal.

Names, slugs, lines and file names come from saves and content; a hostile one may
carry an escape sequence (ESC ``[2J``), a carriage return that hides a line, or a
bidirectional override that reverses what a tester reads. ``TerminalSafe`` writes
such characters as ``\\uXXXX`` escapes, which are also valid inside JSON strings, so
JSON output stays parseable and means the same.
"""

from __future__ import annotations

#: C0 controls but tab and newline, DEL, C1 controls, and bidi embeddings/overrides/isolates.
_UNSAFE_CODES = [c for c in (*range(0x00, 0x20), *range(0x7F, 0xA0), *range(0x202A, 0x202F), *range(0x2066, 0x206A)) if c not in (0x09, 0x0A)]
_ESCAPES = {c: f"\\u{c:04x}" for c in _UNSAFE_CODES}


def terminal_safe(text: str) -> str:
    """``text`` with control and bidi-override characters written as ``\\uXXXX``."""
    return text.translate(_ESCAPES)


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

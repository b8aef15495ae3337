"""Text from saves and content made safe to show: no control or bidi-override character reaches a reader raw.

Names, slugs, fact ids and file names come from saves; a hostile one may carry an
escape sequence (ESC ``[2J``), a bell, a carriage return that hides a line, or a
bidirectional override (U+202E) that reverses what a tester reads. They are written
as ``\\uXXXX`` escapes, which are also valid inside JSON strings.
"""

from __future__ import annotations

#: C0 controls but tab and newline, DEL, C1 controls, and bidi embeddings/overrides/isolates.
_UNSAFE_CODES = [c for c in (*range(0x00, 0x20), *range(0x7F, 0xA0), *range(0x202A, 0x202F), *range(0x2066, 0x206A)) if c not in (0x09, 0x0A)]
_ESCAPES = {c: f"\\u{c:04x}" for c in _UNSAFE_CODES}
_ONE_LINE = {**_ESCAPES, 0x09: "\\u0009", 0x0A: "\\u000a"}


def terminal_safe(text: str) -> str:
    """``text`` with control and bidi-override characters written as ``\\uXXXX`` (tab and newline kept)."""
    return text.translate(_ESCAPES)


def counted(n: int, noun: str, plural: str | None = None) -> str:
    """``n`` (with thousands separators) and the noun in the right number: ``1 fact``, ``2 facts``."""
    return f"{n:,} {noun if n == 1 else (plural or noun + 's')}"


def one_line(text: object) -> str:
    """``str(text)`` as one safe line: like ``terminal_safe`` and tab and newline escaped too.
    Use it for every piece of save or content text put into a line of output."""
    return str(text).translate(_ONE_LINE)

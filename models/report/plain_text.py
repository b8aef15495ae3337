"""Text from saves and content made safe to show: no control, bidi or invisible character reaches a reader raw.

Names, slugs, fact ids and file names come from saves; a hostile one may carry an
escape sequence (ESC ``[2J``), a bell, a carriage return that hides a line, a
bidirectional override (U+202E) that reverses what a tester reads, or a zero-width
space that makes two slugs look alike. The terminal sink (``sinks.terminal``) writes
such characters as ``\\uXXXX`` escapes, which are also valid inside JSON strings.
"""

from __future__ import annotations

from narrative_debugger.models.report.sinks import one_line, terminal as terminal_safe

__all__ = ["counted", "one_line", "terminal_safe"]


def counted(n: int, noun: str, plural: str | None = None) -> str:
    """``n`` (with thousands separators) and the noun in the right number: ``1 fact``, ``2 facts``."""
    return f"{n:,} {noun if n == 1 else (plural or noun + 's')}"

"""Text from saves and content made safe to show: no control, bidi or invisible character reaches a reader raw.

Names, slugs, fact ids and file names come from saves; a hostile one may carry an
escape sequence (ESC ``[2J``), a bell, a carriage return that hides a line, a
bidirectional override (U+202E) that reverses what a tester reads, or a zero-width
space that makes two slugs look alike. The terminal sink (``sinks.terminal``) writes
such characters as ``\\uXXXX`` escapes, which are also valid inside JSON strings.
"""

from __future__ import annotations

from difflib import get_close_matches

from narrative_debugger.models.report.sinks import one_line, terminal as terminal_safe

__all__ = ["counted", "one_line", "some_named", "terminal_safe"]


def counted(n: int, noun: str, plural: str | None = None) -> str:
    """``n`` (with thousands separators) and the noun in the right number: ``1 fact``, ``2 facts``."""
    return f"{n:,} {noun if n == 1 else (plural or noun + 's')}"


def some_named(items, limit: int) -> str:
    """The first ``limit`` of ``items`` (paths, names) on one line each (``one_line``),
    joined by commas, then ``and N more`` for the rest: ``a, b and 3 more``."""
    items = list(items)
    named = ", ".join(one_line(item) for item in items[:limit])
    return named + (f" and {len(items) - limit} more" if len(items) > limit else "")


def close_matches(word: str, choices) -> list[str]:
    """Up to 5 close matches of ``word`` among ``choices``, case-insensitively, best first:
    the same text in another case, then those it begins, then ``difflib``'s (cutoff 0.5).
    What ``why`` suggests for a target and ``whatif`` for a name or a pointer's member."""
    choices = list(dict.fromkeys(choices))
    by_fold: dict[str, list[str]] = {}
    for c in choices:
        by_fold.setdefault(c.casefold(), []).append(c)
    w = word.casefold()
    out = list(by_fold.get(w, []))
    if len(w) >= 2:
        out += [c for c in choices if c.casefold().startswith(w)]
    out += [c for k in get_close_matches(w, list(by_fold), n=5, cutoff=0.5) for c in by_fold[k]]
    return list(dict.fromkeys(out))[:5]

"""Finding where in JSON text a problem stands: the careful path of reading a save.

The fast parse (``json.loads``) says *that* something is wrong (a duplicate key, a
lone surrogate, NaN, a huge integer, deep nesting) but not always *where*. These
scanners run only after such a report, over text that is already known to be JSON
(or nearly), and give 0-based character offsets; ``line_col`` turns them into the
1-based ``line:col`` of an F001 location (checks.md). None of them recurses or
allocates per character beyond a small stack.
"""

from __future__ import annotations

import json
import re
from collections.abc import Iterator

#: A JSON string token (escapes consumed pairwise), or one structural character.
_TOKEN = re.compile(r'"(?:[^"\\]|\\.)*"|[{}\[\],:]', re.S)

#: A run of backslashes followed by a ``u`` escape in the surrogate range D800-DFFF.
#: The run is matched whole (never from its middle), so its length tells whether the
#: last backslash starts an escape (odd) or is itself escaped (even).
_SURROGATE_ESCAPE = re.compile(r"(?<!\\)(\\+)u([dD][89a-fA-F][0-9a-fA-F]{2})")


def line_col(text: str, pos: int) -> tuple[int, int]:
    """1-based line and column of character offset ``pos`` in ``text``."""
    line = text.count("\n", 0, pos) + 1
    col = pos - (text.rfind("\n", 0, pos) + 1) + 1
    return line, col


def where(text: str, pos: int) -> str:
    """``line:col`` of offset ``pos`` in ``text``."""
    line, col = line_col(text, pos)
    return f"{line}:{col}"


def scan_outside_strings(text: str, pattern: str) -> int | None:
    """Offset of the first match of regex ``pattern`` that is not inside a JSON string."""
    scanner = re.compile(r'"(?:[^"\\]|\\.)*"|(%s)' % pattern, re.S)
    for m in scanner.finditer(text):
        if m.group(1) is not None:
            return m.start()
    return None


def deepest_offset(text: str, limit: int) -> int:
    """Offset where bracket nesting (outside strings) first exceeds ``limit``."""
    depth = 0
    for m in re.finditer(r'"(?:[^"\\]|\\.)*"|[\[\]{}]', text, re.S):
        ch = m.group(0)
        if ch in "[{":
            depth += 1
            if depth > limit:
                return m.start()
        elif ch in "]}":
            depth -= 1
    return 0


def lone_surrogates(text: str) -> Iterator[tuple[int, str]]:
    """(offset, escape) of every ``\\uD800``-``\\uDFFF`` escape that is not half of a
    high+low pair, wherever it stands: in keys or values, after escaped backslashes
    (``"\\\\\\ud800"`` is an escaped backslash and then a lone surrogate; ``"\\\\ud800"``
    is a backslash and the letters ``ud800``), at the end of a string, or as a low
    half after a high one that was itself a literal. serde_json rejects them all.
    """
    pending: tuple[int, str] | None = None  # a high surrogate escape waiting for its low half
    for m in _SURROGATE_ESCAPE.finditer(text):
        if len(m.group(1)) % 2 == 0:
            continue  # the backslashes pair up: 'u' is a literal letter
        start = m.end() - 6
        escape = m.group(0)[-6:]
        high = m.group(2)[1].lower() in "89ab"
        if pending is not None:
            if not high and start == pending[0] + 6:
                pending = None  # a proper pair
                continue
            yield pending
            pending = None
        if high:
            pending = (start, escape)
        else:
            yield (start, escape)
    if pending is not None:
        yield pending


def has_surrogate_escape(text: str) -> bool:
    """A cheap first test: could ``text`` hold a surrogate escape at all?"""
    return _SURROGATE_ESCAPE.search(text) is not None


def duplicate_keys(text: str, names: set[str]) -> Iterator[tuple[str, int, int]]:
    """(key, offset, offset of its first occurrence) of every object key in ``names``
    that repeats a key of the same object, in document order.

    ``names`` are the keys the parser saw repeated; only string tokens equal to one of
    them are decoded, so the scan is one pass of C regex matching plus a Python step
    per token.
    """
    stack: list[dict[str, int] | None] = []  # one frame per open object (dict of keys) or array (None)
    expect_key = False
    raw_names = {json.dumps(n, ensure_ascii=False)[1:-1] for n in names}
    for m in _TOKEN.finditer(text):
        tok = m.group(0)
        c = tok[0]
        if c == '"':
            if expect_key and stack and stack[-1] is not None:
                expect_key = False
                body = tok[1:-1]
                if body not in raw_names and "\\" not in body:
                    continue
                key = json.loads(tok) if "\\" in body else body
                if key not in names:
                    continue
                keys = stack[-1]
                if key in keys:
                    yield key, m.start(), keys[key]
                else:
                    keys[key] = m.start()
        elif c == "{":
            stack.append({})
            expect_key = True
        elif c == "[":
            stack.append(None)
            expect_key = False
        elif c in "}]":
            if stack:
                stack.pop()
            expect_key = False
        elif c == ",":
            expect_key = bool(stack) and stack[-1] is not None


__all__ = ["deepest_offset", "duplicate_keys", "has_surrogate_escape", "line_col", "lone_surrogates", "scan_outside_strings", "where"]

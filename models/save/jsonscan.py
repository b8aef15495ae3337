"""Finding where in JSON text a problem stands: the careful path of reading a save.

The fast parse (``json.loads``) says *that* something is wrong (a duplicate key, a
lone surrogate, NaN, a huge integer, deep nesting) but not always *where*. These
scanners run only after such a report, over text that is already known to be JSON
(or nearly), and give 0-based character offsets; ``line_col`` turns them into the
1-based ``line:col`` of an F001 location (checks.md). None of them recurses.
"""

from __future__ import annotations

import json
import re
from collections.abc import Iterator

#: A JSON string, escapes consumed pairwise (the unrolled form: fast in ``re``).
_STRING = r'"[^"\\]*(?:\\.[^"\\]*)*"'

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
    first = next(matches_outside_strings(text, pattern), None)
    return first.start() if first is not None else None


def matches_outside_strings(text: str, pattern: str) -> Iterator[re.Match]:
    """Each match of regex ``pattern`` that is not inside a JSON string, in order; its
    text is ``group(1)`` (``pattern`` may hold no group of its own)."""
    scanner = re.compile(r"%s|(%s)" % (_STRING, pattern), re.S)
    return (m for m in scanner.finditer(text) if m.group(1) is not None)


def deepest_offset(text: str, limit: int) -> int:
    """Offset where bracket nesting (outside strings) first exceeds ``limit``."""
    depth = 0
    for m in re.finditer(_STRING + r"|[\[\]{}]", text, re.S):
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
    """A cheap first test: could ``text`` hold a surrogate escape at all? (Substring
    searches first; the regex only when one of them hits.)"""
    if "\\ud" not in text and "\\uD" not in text:
        return False
    return _SURROGATE_ESCAPE.search(text) is not None


#: Every byte but the structure the duplicate-key reduction keeps: brackets, quotes, markers.
_NOT_STRUCTURE_BYTES = bytes(b for b in range(256) if b not in b'{}[]"\x00')
#: A JSON string token or one structural character (the complete, slower walk).
_TOKEN = re.compile(_STRING + r"|[{}\[\],]", re.S)


def duplicate_keys(text: str, names: dict[str, int]) -> Iterator[tuple[str, int, int]]:
    """(key, offset, offset of its first occurrence in the same object) of every
    repeated object key, for each key of ``names``, in document order per key.

    ``names`` maps each repeated key to how many repeats the parser saw. The text must
    be valid JSON. ``_repeats_fast`` finds the repeats of keys written as the encoder
    writes them at C speed; when it finds fewer than the parser saw (a key spelled
    with escapes, ``"k\u0041"``), the complete token walk runs for that key.
    """
    for name, count in sorted(names.items()):
        found = list(_repeats_fast(text, name))
        if len(found) < count:
            found = list(_repeats_by_tokens(text, name))
        yield from found


def _key_starts(text: str, name: str) -> list[int]:
    """Offsets of the opening quote of every object key written exactly ``"name"``.

    A match preceded (past whitespace) by ``{`` or ``,`` and followed by ``:`` is a
    key: inside a string a ``"`` is always escaped, so ``{"`` cannot occur there.
    """
    raw = json.dumps(name, ensure_ascii=False)
    starts = []
    for m in re.finditer(re.escape(raw) + r"[ \t\n\r]*:", text):
        j = m.start() - 1
        while j >= 0 and text[j] in " \t\n\r":
            j -= 1
        if j >= 0 and text[j] in "{,":
            starts.append(m.start())
    return starts


def _repeats_fast(text: str, name: str) -> Iterator[tuple[str, int, int]]:
    """Repeats of the key ``name`` written plainly, found without a Python step per token.

    Each such key becomes a marker byte; escapes, then everything but brackets, quotes
    and markers are deleted (``bytes.translate``); what was inside strings goes by the
    parity of the quotes before it. Then, with numpy: the nesting depth after each
    bracket; a marker's object is the last bracket opened before it at its depth;
    markers sharing an object after the first are repeats of the first.
    """
    import numpy as np

    starts = _key_starts(text, name)
    if len(starts) < 2:
        return
    pieces = []
    prev = 0
    skip = len(json.dumps(name, ensure_ascii=False))
    for start in starts:
        pieces.append(text[prev:start])
        pieces.append("\x00")
        prev = start + skip
    pieces.append(text[prev:])
    data = "".join(pieces).encode("utf-8", "surrogatepass")
    del pieces
    data = data.replace(b"\\\\", b"").replace(b'\\"', b"").translate(None, _NOT_STRUCTURE_BYTES)
    codes = np.frombuffer(data, dtype=np.uint8)
    quotes = codes == 34
    outside = (np.cumsum(quotes, dtype=np.uint8) & 1) == 0  # parity of the quotes so far (mod 256 keeps it)
    shape = codes[outside & ~quotes]
    del data, codes, quotes, outside
    opens = (shape == 123) | (shape == 91)
    markers = shape == 0
    depth = np.cumsum(opens.astype(np.int64) - ((shape == 125) | (shape == 93)))
    events = np.flatnonzero(opens | markers)  # opening brackets and markers, in order
    by_depth = np.lexsort((events, depth[events]))
    where_sorted = events[by_depth]
    span = np.int64(len(shape) + 1)
    keys = depth[where_sorted] * span + where_sorted  # increasing: depth first, then position
    owner = np.maximum.accumulate(np.where(opens[where_sorted], keys, -1))  # last bracket opened at that depth
    is_marker = markers[where_sorted]
    marker_owner = owner[is_marker]
    marker_number = (np.cumsum(markers) - 1)[where_sorted[is_marker]]  # k-th key in document order
    grouped = np.lexsort((marker_number, marker_owner))
    owners, numbers = marker_owner[grouped], marker_number[grouped]
    first = np.ones(len(owners), dtype=bool)
    first[1:] = owners[1:] != owners[:-1]
    first_at = np.maximum.accumulate(np.where(first, np.arange(len(owners)), 0))
    repeats = sorted(zip(numbers[~first].tolist(), numbers[first_at[~first]].tolist()))
    for k, first_k in repeats:
        yield name, starts[k], starts[first_k]


def _repeats_by_tokens(text: str, name: str) -> Iterator[tuple[str, int, int]]:
    """Repeats of the key ``name`` however it is spelled: one Python step per string
    and bracket (complete, and slow on a large save: the fallback)."""
    stack: list[dict[str, int] | None] = []  # one frame per open object (its keys) or array (None)
    expect_key = False
    for m in _TOKEN.finditer(text):
        tok = m.group(0)
        c = tok[0]
        if c == '"':
            if expect_key and stack and stack[-1] is not None:
                expect_key = False
                key = json.loads(tok) if "\\" in tok else tok[1:-1]
                if key != name:
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

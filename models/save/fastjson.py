"""The fast path of reading a save's JSON: msgspec for the common, clean file.

``jsonio.parse_text`` is the careful parser: it finds duplicate keys, lone surrogate
escapes, NaN, over-long integers and deep nesting and says where (``line:col``). It
costs about 1.5x a bare ``json.load``. Almost every save is clean, so
``fast_decode`` first decodes with msgspec (about 0.4x ``json.load``; it keeps u64 and
larger integers exact, rejects NaN/Infinity, invalid UTF-8, lone surrogates and raw
control characters) and proves that the careful parser would have found nothing:

- no integer of more than ``MAX_INT_DIGITS`` digits, no ``\\ud800``-``\\udfff``
  escape at all, and no whitespace before a ``:`` (checked on the bytes);
- no duplicate key: the number of ``":`` pairs in the bytes equals the number of
  keys in the decoded objects. Every key written without whitespace before its
  colon ends in ``":``, other ``":`` pairs only add to the count, and a duplicate
  only removes a key from the decoded objects, so equal counts leave no room for one;
- nesting no deeper than ``MAX_FAST_DEPTH`` where the walk looks, and msgspec
  itself decoding with a smaller nesting limit than ``json`` has.

When any of that fails, ``fast_decode`` returns ``NOT_PROVEN`` and the caller runs the
careful parser, so the value and the findings are exactly the careful parser's on
every input (a test compares both on the samples and the bad-input cases).
"""

from __future__ import annotations

from itertools import chain
from operator import itemgetter

import msgspec

#: Integers with more digits than this are not game values (jsonio.MAX_INT_DIGITS).
MAX_INT_DIGITS = 40
#: Deeper documents go to the careful parser, which reports the depth it fails at.
MAX_FAST_DEPTH = 64
NOT_PROVEN = object()

# One pass maps every byte to its class: digits -> "0", JSON whitespace -> " ",
# and keeps '"', ':', '\' and 'u'; every other byte becomes "x".
_CLASSES = bytes(
    48 if 48 <= b <= 57 else 32 if b in (9, 10, 13, 32) else b if b in (34, 58, 92, 117) else 120 for b in range(256)
)
_LONG_INT = b"0" * (MAX_INT_DIGITS + 1)


def fast_decode(data: bytes):
    """The JSON value of ``data`` (UTF-8, no BOM) when the careful parser would find
    nothing to report, else ``NOT_PROVEN``. Never raises on bad input."""
    classes = data.translate(_CLASSES)
    if classes.find(_LONG_INT) >= 0 or classes.find(b" :") >= 0:
        return NOT_PROVEN
    if classes.find(b"\\u") >= 0 and _has_surrogate_escape(data):
        return NOT_PROVEN
    del classes
    key_pairs = data.count(b'":')
    try:
        value = _decode_deeper(_DEPTH_MARGIN, data)
    except (msgspec.DecodeError, msgspec.ValidationError, RecursionError, ValueError, MemoryError):
        return NOT_PROVEN
    keys = count_keys(value)
    if keys is None or keys != key_pairs:
        return NOT_PROVEN
    return value


#: Python frames spent before msgspec decodes: its nesting limit then sits below the
#: careful parser's (json.loads fails at ~992 levels, msgspec at ~996 from the same
#: frame), so a file too deep for the careful parser never passes the fast path.
_DEPTH_MARGIN = 32


def _decode_deeper(frames: int, data: bytes):
    return msgspec.json.decode(data) if frames <= 0 else _decode_deeper(frames - 1, data)


def _has_surrogate_escape(data: bytes) -> bool:
    import re

    return re.search(rb"\\u[dD][89a-fA-F]", data) is not None


def count_keys(value) -> int | None:
    """Keys in every object of a decoded JSON value; None when nested deeper than
    ``MAX_FAST_DEPTH``. A save's journal is counted with C-level passes."""
    if type(value) is dict and type(value.get("journal")) is list:
        player = value.get("player")
        knowledge = player.get("knowledge") if type(player) is dict else None
        facts = knowledge.get("facts") if type(knowledge) is dict else None
        rest = _walk([v for k, v in value.items() if k != "journal"], 1, facts if type(facts) is dict else None)
        journal = _journal_keys(value["journal"])
        if rest is None or journal is None:
            return None
        return len(value) + rest + journal
    return _walk(value, 0)


def _journal_keys(journal: list) -> int | None:
    """Keys of the journal's entries, events and event fields, by C-level passes.

    Objects nested deeper than the fields are not counted: an undercount can only make
    the totals differ (and send the file to the careful parser), never hide a duplicate.
    Entries of another shape are counted by the generic walk.
    """
    try:
        events = list(map(itemgetter("event"), journal))
        fields = chain.from_iterable(map(dict.values, events))
        return sum(map(dict.__len__, journal)) + sum(map(dict.__len__, events)) + sum(map(dict.__len__, fields))
    except (KeyError, TypeError):
        return _walk(journal, 1)


def _facts_keys(facts: dict, depth: int) -> int | None:
    """Keys of the snapshot's facts: each FactKnowledge, its metadata and the metadata's
    variant object, by C-level passes (an undercount is safe, as for the journal)."""
    try:
        values = list(facts.values())
        metas = [m for m in map(itemgetter("metadata"), values) if m is not None]
        inner = chain.from_iterable(map(dict.values, metas))
        return len(facts) + sum(map(dict.__len__, values)) + sum(map(dict.__len__, metas)) + sum(map(dict.__len__, inner))
    except (KeyError, TypeError):
        return _walk(facts, depth)


def _walk(value, depth: int, facts: dict | None = None) -> int | None:
    """Keys in every object under ``value`` (at ``depth``), or None past MAX_FAST_DEPTH.
    The object ``facts`` (the snapshot's facts map) is counted by ``_facts_keys``."""
    n = 0
    stack = [(value, depth)]
    pop, push = stack.pop, stack.append
    while stack:
        item, d = pop()
        kind = type(item)
        if facts is not None and item is facts:
            k = _facts_keys(item, d)
            if k is None:
                return None
            n += k
            continue
        if kind is dict:
            values = item.values()
            n += len(item)
        elif kind is list:
            values = item
        else:
            continue
        if d >= MAX_FAST_DEPTH:
            return None
        for v in values:
            t = type(v)
            if t is dict or t is list:
                push((v, d + 1))
    return n


__all__ = ["NOT_PROVEN", "count_keys", "fast_decode"]

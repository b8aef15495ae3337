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

import os
from itertools import chain
from operator import itemgetter

import msgspec
from narrative_debugger.models.progress import checkpoint

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


def fast_decode(data: bytes, journal_reader=None):
    """The JSON value of ``data`` (UTF-8, no BOM) when the careful parser would find
    nothing to report, else ``NOT_PROVEN``. Never raises on bad input.

    Works in steps of about ``STEP_BYTES`` (scans, the journal's decode, the key
    count): each step holds the GIL for a few milliseconds only, so the app's GUI
    thread keeps running while a save is read in a worker thread.

    ``journal_reader``, when given, is an object with ``add_text(text, first)`` and
    ``result()``: the JSON text of each piece of a large save's journal (a list of
    entries) is handed to ``add_text`` with the position of its first entry; it
    answers (entries read, their key count: it may undercount, never overcount) or
    None (not JSON, or too deep), and the value's ``"journal"`` is then ``result()``
    instead of the list. The reader may consume
    the entries, so the decoded journal is never whole in memory (about 400 MB of
    entry objects on a 1 000 000-entry save). A journal decoded in one piece is left
    as a list; after ``NOT_PROVEN`` the reader's result is not used.
    """
    key_pairs = _scan(data)
    if key_pairs is None:
        return NOT_PROVEN
    try:
        value, journal_keys = _decode_stepwise(data, journal_reader)
    except (msgspec.DecodeError, msgspec.ValidationError, RecursionError, ValueError, MemoryError):
        return NOT_PROVEN
    keys = count_keys(value, journal_keys)
    if keys is None or keys != key_pairs:
        return NOT_PROVEN
    return value


#: Bytes scanned or decoded per step (see ``fast_decode``).
STEP_BYTES = 1 << 19
#: Journal entries key-counted per step (a step ends at a ``checkpoint``).
STEP_ENTRIES = 1 << 15
_OVERLAP = MAX_INT_DIGITS + 8


def _scan(data) -> int | None:
    """The number of '":' pairs in ``data``, or None when it holds a run of more than
    ``MAX_INT_DIGITS`` digits, whitespace before a colon or a surrogate escape."""
    size = len(data)
    pairs = 0
    escapes = False
    with memoryview(data) as view:
        for start in range(0, size, STEP_BYTES):
            checkpoint("scan", start, size)
            stop = min(size, start + STEP_BYTES)
            piece = bytes(view[start : min(size, stop + _OVERLAP)])  # the overlap catches runs across the cut
            classes = piece.translate(_CLASSES)
            if classes.find(_LONG_INT) >= 0 or classes.find(b" :") >= 0:
                return None
            escapes = escapes or classes.find(b"\\u") >= 0
            pairs += piece.count(b'":', 0, stop - start + 1)  # pairs that start before ``stop``
    if escapes and _has_surrogate_escape(data):
        return None
    return pairs


def _decode_stepwise(data, journal_reader=None):
    """(msgspec's value of ``data``, the journal's key count or None when the journal
    is still in the value to be counted); a large save's journal and facts are decoded a piece at a time.

    The journal array (from the first ``"journal":[`` to the last ``],"story":``) is
    cut before entries (``},{"tick":``, which cannot occur inside a JSON string) into
    pieces of about ``STEP_BYTES``, each decoded as a list. A piece decodes only when
    its cut falls between two entries of the top-level array, and the rest of the
    document decodes with a one-off marker string where the array was only when that
    array was the top-level ``journal``; otherwise the whole document is decoded at once.
    The rest of the document is decoded in pieces too (``_decode_outer``): the
    snapshot's facts are most of it.
    """
    start = data.find(b'"journal":[')
    end = data.rfind(b'],"story":')
    if len(data) < 2 * STEP_BYTES or start < 0 or end < start:
        return _decode_deeper(_DEPTH_MARGIN, data), None
    start += len(b'"journal":')
    marker = "journal-" + os.urandom(12).hex()
    with memoryview(data) as view:
        journal = _decode_journal(data, view, start, end, marker, journal_reader)
    if journal is None:
        return _decode_deeper(_DEPTH_MARGIN, data), None
    outer, journal, keys = journal
    outer["journal"] = journal
    return outer, keys


def _decode_journal(data, view, start: int, end: int, marker: str, reader=None):
    """(the document without its journal, the journal, its key count or None) or None
    (see ``_decode_stepwise``). With a ``reader`` each piece is counted, then handed to it."""
    try:
        outer = _decode_outer(data, view, start, (b'"', marker.encode(), b'"', view[end + 1 :]))
    except (msgspec.DecodeError, msgspec.ValidationError, RecursionError, ValueError):
        return None
    if type(outer) is not dict or outer.get("journal") != marker:
        return None
    journal: list = []
    keys = first = 0
    pos = start
    try:
        while True:
            checkpoint("journal", pos - start, end - start)
            cut = data.find(b'},{"tick":', pos + STEP_BYTES, end)
            last = cut < 0
            stop = end + 1 if last else cut + 1
            text = b"".join((b"" if pos == start else b"[", view[pos:stop], b"" if last else b"]"))
            if reader is None:
                journal.extend(_decode_deeper(_DEPTH_MARGIN, text))
            else:
                read = reader.add_text(text, first)
                if read is None:
                    return None
                first += read[0]
                keys += read[1]
            if last:
                return (outer, journal, None) if reader is None else (outer, reader.result(), keys)
            pos = cut + 2
    except (msgspec.DecodeError, msgspec.ValidationError, RecursionError, ValueError, TypeError):
        return None


#: Where a fact's object begins: ``"FactId":{"confidence":``. Its ``{"confidence":``
#: cannot lie inside a JSON string (a ``"`` there would be escaped), so a match whose
#: FactId holds no ``"`` or ``\\`` and follows ``},`` is a member boundary of an object.
_FACT_START = b'":{"confidence":'
_FACTS_OPEN = b'"facts":{'


def _decode_outer(data, view, head_end: int, tail: tuple):
    """msgspec's value of ``data[:head_end]`` followed by the ``tail`` parts, the
    first ``"facts":{`` object of the head decoded a piece at a time.

    The members of that object are cut before a fact (``_FACT_START``) into pieces of
    about ``STEP_BYTES``, each decoded as an object of its own (``{`` piece ``}``). A
    piece decodes only when it holds whole members of that object: it starts at a
    member, and one that ran past a member's end (or past the object's) leaves a
    brace open or closes the wrapper early. Cutting stops at the first piece that
    does not decode, and the rest stays in the outer document, where a one-off
    marker member stands first in place of the pieces. The pieces are put back only
    when that marker is found in ``player.knowledge.facts``, in document order; a
    FactId repeated across pieces leaves one key fewer, which ``count_keys`` sees.
    Pieces decode 3 levels shallower than in the document, far inside
    ``_DEPTH_MARGIN``.
    """
    opened = data.find(_FACTS_OPEN, 0, head_end)
    first = opened + len(_FACTS_OPEN)
    pieces: list[dict] = []
    pos = first
    while opened >= 0:
        checkpoint()  # a piece is a few milliseconds; a large save's facts at once are not
        cut = _next_fact_cut(data, pos + STEP_BYTES, head_end)
        if cut < 0:
            break
        try:
            piece = _decode_deeper(_DEPTH_MARGIN, b"".join((b"{", view[pos : cut - 1], b"}")))
        except (msgspec.DecodeError, msgspec.ValidationError, RecursionError, ValueError):
            break
        if type(piece) is not dict:
            break
        pieces.append(piece)
        pos = cut
    if not pieces:
        return _decode_deeper(_DEPTH_MARGIN, b"".join((view[:head_end], *tail)))
    marker = "facts-" + os.urandom(12).hex()
    outer = _decode_deeper(_DEPTH_MARGIN, b"".join((view[:first], b'"', marker.encode(), b'":0,', view[pos:head_end], *tail)))
    player = outer.get("player") if type(outer) is dict else None
    knowledge = player.get("knowledge") if type(player) is dict else None
    rest = knowledge.get("facts") if type(knowledge) is dict else None
    if type(rest) is not dict or next(iter(rest), None) != marker:
        return None
    facts: dict = {}
    for piece in pieces:
        checkpoint()
        facts.update(piece)
    del rest[marker]
    facts.update(rest)
    knowledge["facts"] = facts
    return outer


def _next_fact_cut(data, start: int, stop: int) -> int:
    """The offset of the first FactId's opening quote at or after ``start`` where a
    member ``"FactId":{"confidence":`` follows ``},`` (see ``_FACT_START``), or -1."""
    while True:
        found = data.find(_FACT_START, start, stop)
        if found < 0:
            return -1
        quote = data.rfind(b'"', 0, found)
        if quote >= 2 and data[quote - 2 : quote] == b"}," and data.find(b"\\", quote, found) < 0:
            return quote
        start = found + 1


#: Python frames spent before msgspec decodes: its nesting limit then sits below the
#: careful parser's (json.loads fails at ~992 levels, msgspec at ~996 from the same
#: frame), so a file too deep for the careful parser never passes the fast path.
_DEPTH_MARGIN = 40


def _decode_deeper(frames: int, data: bytes):
    return msgspec.json.decode(data) if frames <= 0 else _decode_deeper(frames - 1, data)


def decode_value(data: bytes):
    """msgspec's JSON value of ``data``, with the nesting limit of ``fast_decode``.

    Raises:
        msgspec.DecodeError, RecursionError, ValueError: not JSON, or nested too deep.
    """
    return _decode_deeper(_DEPTH_MARGIN, data)


def _has_surrogate_escape(data: bytes) -> bool:
    import re

    return re.search(rb"\\u[dD][89a-fA-F]", data) is not None


def count_keys(value, journal_keys: int | None = None) -> int | None:
    """Keys in every object of a decoded JSON value; None when nested deeper than
    ``MAX_FAST_DEPTH``. A save's journal is counted with C-level passes, or not at all
    when ``journal_keys`` (its count, made while it was decoded) is given."""
    if type(value) is dict and (journal_keys is not None or type(value.get("journal")) is list):
        player = value.get("player")
        knowledge = player.get("knowledge") if type(player) is dict else None
        facts = knowledge.get("facts") if type(knowledge) is dict else None
        rest = _walk([v for k, v in value.items() if k != "journal"], 1, facts if type(facts) is dict else None)
        journal = _journal_keys(value["journal"]) if journal_keys is None else journal_keys
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
    n = 0
    try:
        for first in range(0, len(journal), STEP_ENTRIES):
            checkpoint()
            part = journal[first : first + STEP_ENTRIES]
            events = list(map(itemgetter("event"), part))
            fields = chain.from_iterable(map(dict.values, events))
            n += sum(map(dict.__len__, part)) + sum(map(dict.__len__, events)) + sum(map(dict.__len__, fields))
    except (KeyError, TypeError):
        return _walk(journal, 1)
    return n


def keys_below(value, depth: int) -> int | None:
    """Keys in every object under ``value``, which sits at ``depth`` in the document;
    None past ``MAX_FAST_DEPTH``."""
    return _walk(value, depth)


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


__all__ = ["NOT_PROVEN", "count_keys", "decode_value", "fast_decode", "keys_below"]

"""JSON text for everything the tool writes as JSON: strict (RFC 8259), UTF-8 as is.

Strict means no ``NaN``, ``Infinity`` or ``-Infinity``, which ``json.dumps`` writes by
default and no strict reader accepts. The readers stop a non-finite number where it
enters (a save's ``1e400`` is an F002 at its JSON path, ``models.boundary``); the
writers here refuse one that would still get through (``NonFiniteNumber``), and every
JSON writer of the tool goes through ``dumps_strict``, ``dump_strict`` or
``dumps_indented``.

The command line's ``--format json`` is ``indent=1``:

``json.dumps(value, ensure_ascii=False, indent=1)`` runs in pure Python whenever it
indents (the C encoder only serves ``indent=None``), slow on a large ``state``.
msgspec encodes and re-indents the same document much faster, byte for byte the same
text, except in the cases below, which fall back to ``json``. Finding those cases is a
numpy pass over the text's bytes, several times faster than a regular expression.
"""

from __future__ import annotations

import json
import re

import math

import msgspec
import numpy as np


class NonFiniteNumber(ValueError):
    """A value to write holds NaN or an infinity, which JSON cannot carry.
    ``path`` is where, as a JSON path (``$.npcs.17.score``)."""

    def __init__(self, path: str, value: float) -> None:
        self.path = path
        super().__init__(f"{value!r} at {path} is not a JSON number; nothing was written")


def dumps_strict(value, *, indent: int | None = None, sort_keys: bool = False) -> str:
    """``json.dumps(value, ensure_ascii=False, allow_nan=False, ...)``.

    Raises:
        NonFiniteNumber: ``value`` holds NaN or an infinity (its JSON path named).
        TypeError: ``value`` is not JSON data.
    """
    try:
        return json.dumps(value, ensure_ascii=False, allow_nan=False, indent=indent, sort_keys=sort_keys)
    except ValueError:
        raise _non_finite(value) from None


def dump_strict(value, out, *, indent: int | None = 1) -> None:
    """Write ``dumps_strict(value, indent=indent)`` to the text stream ``out``; nothing
    is written when it raises (the text is made whole first)."""
    out.write(dumps_strict(value, indent=indent))


def _non_finite(value) -> NonFiniteNumber | ValueError:
    """The NonFiniteNumber naming the first NaN or infinity in ``value`` (a walk in
    document order), or a plain ValueError when there is none (a circular value)."""
    stack = [("$", value)]
    while stack:
        path, item = stack.pop()
        if type(item) is float and not math.isfinite(item):
            return NonFiniteNumber(path, item)
        if isinstance(item, dict):
            stack.extend((f"{path}.{key}", v) for key, v in reversed(list(item.items())))
        elif isinstance(item, (list, tuple)):
            stack.extend((f"{path}[{i}]", v) for i, v in reversed(list(enumerate(item))))
    return ValueError("the value cannot be written as JSON")


def _has_non_finite(value) -> bool:
    """Whether ``value`` holds a NaN or an infinity, without walking it in Python:
    msgspec packs it as MessagePack (a few ms where the JSON takes a second), where
    every float is ``0xcb`` and eight big-endian IEEE 754 bytes; a NaN or infinity has
    its eleven exponent bits all set. A byte pattern that only looks like one (inside
    a string) costs the exact walk. A value msgspec cannot pack is walked."""
    try:
        packed = msgspec.msgpack.encode(value)
    except (TypeError, ValueError, OverflowError, UnicodeEncodeError, msgspec.EncodeError):
        return isinstance(_non_finite(value), NonFiniteNumber)
    data = np.frombuffer(packed, np.uint8)
    marks = np.flatnonzero(data[:-2] == 0xCB)
    if not marks.size:
        return False
    if not (((data[marks + 1] & 0x7F) == 0x7F) & ((data[marks + 2] & 0xF0) == 0xF0)).any():
        return False
    return isinstance(_non_finite(value), NonFiniteNumber)

# Python writes floats of 1e16 and above, or below 1e-4, with a signed exponent
# ('1e+16', '2.5e-05'); msgspec writes '1e16', and '0.000025' down to about 1e-5. An
# exponent, or '0.0000' (a magnitude below 1e-4), anywhere in the text (in a number, or
# in a string, where it costs only the fallback) sends the value to json. The pattern
# is the definition; ``_spelled_otherwise`` answers it with numpy (a test holds them equal).
_EXPONENT = re.compile(rb"[0-9.][eE][-+]?[0-9]|0\.0000")
#: Bytes of text looked at per numpy pass of ``_spelled_otherwise`` (its masks stay small).
SCAN_CHUNK = 1 << 22
_NO_BYTES = np.zeros(3, np.uint8)


def _spelled_otherwise(text: bytes) -> bool:
    """Whether ``_EXPONENT`` matches somewhere in ``text``: the same answer, found with
    numpy masks over the bytes (``[0-9.]``, then ``[eE]``, then a digit or a sign and a
    digit) instead of the regular expression, which tries every byte in Python's
    engine. Multi-byte UTF-8 never matches: its bytes are
    all above 0x7F."""
    if b"0.0000" in text:
        return True
    data = np.frombuffer(text, np.uint8)
    for start in range(0, len(data), SCAN_CHUNK):
        part = data[start : start + SCAN_CHUNK + 3]
        if len(part) < SCAN_CHUNK + 3:
            part = np.concatenate((part, _NO_BYTES))  # the text's end: nothing follows
        n = len(part) - 3
        lead, mark, after, last = part[:n], part[1 : n + 1], part[2 : n + 2], part[3 : n + 3]
        hit = ((lead - 48) < 10) | (lead == 46)
        hit &= (mark | 0x20) == 0x65  # 'e' or 'E'
        hit &= ((after - 48) < 10) | (((after == 43) | (after == 45)) & ((last - 48) < 10))
        if hit.any():
            return True
    return False


def dumps_indented(value) -> str:
    """``json.dumps(value, ensure_ascii=False, indent=1)``, byte for byte.

    ``value`` is plain JSON data (dict with str keys, list, str, int, finite float,
    bool, None), as the command documents are. A value msgspec cannot encode (a lone
    surrogate, an integer past 64 bits, a key that is not a string) or whose floats
    Python spells with an exponent is encoded by ``json`` itself.

    Strict: msgspec would write a NaN or an infinity as ``null`` and ``json`` as
    ``NaN``/``Infinity``; both are refused first (``_has_non_finite``).

    Raises:
        NonFiniteNumber: ``value`` holds NaN or an infinity.
        TypeError: when ``json`` cannot encode ``value`` either.
    """
    if _has_non_finite(value):
        raise _non_finite(value)
    try:
        text = msgspec.json.format(msgspec.json.encode(value), indent=1)
    except (TypeError, ValueError, OverflowError, UnicodeEncodeError, msgspec.EncodeError):
        return dumps_strict(value, indent=1)
    if _spelled_otherwise(text):
        return dumps_strict(value, indent=1)
    return text.decode("utf-8")

"""Conversions at trust boundaries: numbers from saves, content and the command line.

Every number that arrives as text from outside (a StableId map key of a save, the
sequence of an interaction FactId, a YAML integer, a ``--tick`` argument) and every
JSON number read from a save goes through this module, so one set of rules holds
everywhere:

- Integers are ASCII decimal digits only: no ``'５'`` or ``'٣'`` (``str.isdigit`` and
  ``int`` accept both), no ``'5_000'``, no white space, a ``-`` only for a signed type
  and never a ``+``. The text is bounded (``MAX_NUMERAL_CHARS``) before ``int`` sees
  it, so Python's 4 300-digit limit on ``int(str)`` can never raise.
- An integer lies in the range of its Rust type (save-format §1-§5: u8, i16, u32,
  i32, u64, i64).
- A non-integer number is finite, and within ``f32`` where the game writes an ``f32``
  (save-format §1); a JSON number such as ``1e400`` reads as infinity, which no JSON
  writer may emit again (``report.json_text``).

Pure Python; nothing here raises anything but ``ConversionError``.
"""

from __future__ import annotations

import math
import re
from dataclasses import dataclass

#: Longest numeral text looked at: u64 and i64 need 20 characters; a zero-padded
#: interaction sequence a few more. Anything longer is refused before ``int``.
MAX_NUMERAL_CHARS = 40

#: Magnitudes from here up round to infinity as an f32 (IEEE 754 round to nearest:
#: the midpoint between the largest f32, (2 - 2**-23) * 2**127, and 2**128).
F32_OVERFLOW = float(2**128 - 2**103)

_DECIMAL = re.compile(r"-?[0-9]+")


class ConversionError(ValueError):
    """Text or a value that is not a number of the type asked for.

    ``str(exc)`` is one sentence naming the value (quoted, at most 40 characters,
    escapes for what is not printable) and why it was refused, e.g.
    ``'５' is not a u64: '５' (U+FF15) is not an ASCII digit 0-9``.
    Attributes: ``text`` (the value as given), ``reason`` (the why, alone)."""

    def __init__(self, text: object, type_name: str, reason: str) -> None:
        self.text = text
        self.reason = reason
        super().__init__(f"{_shown(text)} is not {_article(type_name)} {type_name}: {reason}")


@dataclass(frozen=True, slots=True)
class IntType:
    """A Rust integer type: its name and inclusive range."""

    name: str
    low: int
    high: int

    def holds(self, value: object) -> bool:
        """Whether ``value`` is an ``int`` (not a bool) within the range."""
        return type(value) is int and self.low <= value <= self.high

    @property
    def range_text(self) -> str:
        return f"{self.low}..{self.high}"

    @property
    def phrase(self) -> str:
        """The type with its article: 'a u8', 'an i16'."""
        return f"{_article(self.name)} {self.name}"


U8 = IntType("u8", 0, 2**8 - 1)
I16 = IntType("i16", -(2**15), 2**15 - 1)
U32 = IntType("u32", 0, 2**32 - 1)
I32 = IntType("i32", -(2**31), 2**31 - 1)
U64 = IntType("u64", 0, 2**64 - 1)
I64 = IntType("i64", -(2**63), 2**63 - 1)
#: Any integer ``MAX_NUMERAL_CHARS`` digits can spell: for text whose type a later
#: check decides (a YAML integer), bounded here only so ``int`` stays safe.
NUMERAL = IntType("numeral", -(10**MAX_NUMERAL_CHARS - 1), 10**MAX_NUMERAL_CHARS - 1)


def parse_int(text: object, kind: IntType = U64, *, leading_zeros: bool = True) -> int:
    """The integer ``text`` spells in ASCII decimal, within ``kind``'s range.

    Args:
        text: the numeral as received (a ``str``; anything else is refused).
        kind: the Rust type it must fit (default u64).
        leading_zeros: False for map keys, which serde writes without them
            (``"017"`` is then refused; ``"0"`` is fine).

    Returns:
        The value.

    Raises:
        ConversionError: not a string, empty, longer than ``MAX_NUMERAL_CHARS``, a
            character other than ``0-9`` (and one leading ``-`` for a signed type),
            a leading zero where not allowed, or outside ``kind``'s range.
    """
    if type(text) is not str:
        raise ConversionError(text, kind.name, f"expected text, found {type(text).__name__}")
    if not text:
        raise ConversionError(text, kind.name, "it is empty")
    if len(text) > MAX_NUMERAL_CHARS:
        raise ConversionError(text, kind.name, f"it is {len(text)} characters long; at most {MAX_NUMERAL_CHARS} are read")
    if _DECIMAL.fullmatch(text) is None:
        raise ConversionError(text, kind.name, _first_fault(text, kind))
    if text.startswith("-") and kind.low >= 0:
        raise ConversionError(text, kind.name, f"it is negative; {kind.phrase} is 0 or more")
    digits = text.lstrip("-")
    if not leading_zeros and len(digits) > 1 and digits[0] == "0":
        raise ConversionError(text, kind.name, "it has a leading zero")
    value = int(text)
    if not kind.low <= value <= kind.high:
        raise ConversionError(text, kind.name, f"it is outside {kind.range_text}")
    return value


def is_int_text(text: object, kind: IntType = U64, *, leading_zeros: bool = True) -> bool:
    """Whether ``parse_int`` accepts ``text`` (see there)."""
    try:
        parse_int(text, kind, leading_zeros=leading_zeros)
    except ConversionError:
        return False
    return True


def check_int(value: object, kind: IntType = U64) -> int:
    """``value``, a number already parsed from JSON or YAML, as an integer of ``kind``.

    Only a real ``int`` (never a bool, a float such as ``1e3`` or ``.nan``, or text)
    within ``kind``'s range is accepted. Text is refused even when ``parse_int`` would
    read it (a quoted ``"8192"``); the reason then names its first non-digit (``'３'``,
    ``'_'``, the ``x`` of ``0x1e``) so the author sees why it is not a number.

    Raises:
        ConversionError: with the reason (see above).
    """
    if type(value) is int:
        if kind.low <= value <= kind.high:
            return value
        raise ConversionError(value, kind.name, f"it is outside {kind.range_text}")
    if type(value) is float:
        reason = "it is not a finite number" if not math.isfinite(value) else "it is not a whole number written in digits 0-9"
        raise ConversionError(value, kind.name, reason)
    if type(value) is str:
        try:
            parse_int(value, kind)
        except ConversionError as exc:
            raise ConversionError(value, kind.name, exc.reason) from None
        raise ConversionError(value, kind.name, "it is quoted text, not a number")
    raise ConversionError(value, kind.name, f"expected a whole number, found {type(value).__name__}")


def is_finite_number(value: object) -> bool:
    """A JSON number that is neither infinite nor NaN (``int`` or ``float``, not bool)."""
    kind = type(value)
    return kind is int or (kind is float and math.isfinite(value))


def is_f32(value: object) -> bool:
    """A JSON number an ``f32`` can hold: finite, and of a magnitude that does not
    round to infinity as an f32 (below ``F32_OVERFLOW``; save-format §1)."""
    kind = type(value)
    if kind is float:
        return -F32_OVERFLOW < value < F32_OVERFLOW  # False for NaN and both infinities
    return kind is int and -F32_OVERFLOW < value < F32_OVERFLOW


def check_f32(value: object, what: str = "f32") -> float:
    """``value`` as a float when ``is_f32`` holds.

    Raises:
        ConversionError: not a number, not finite, or out of the f32 range.
    """
    if is_f32(value):
        return float(value)
    if type(value) not in (int, float):
        raise ConversionError(value, what, f"expected a number, found {type(value).__name__}")
    if type(value) is float and not math.isfinite(value):
        raise ConversionError(value, what, "it is not a finite number")
    raise ConversionError(value, what, "its magnitude is beyond the f32 range (about 3.4e38)")


def _first_fault(text: str, kind: IntType) -> str:
    """Why ``text`` is not ``-?[0-9]+``: the first character that does not belong."""
    for i, ch in enumerate(text):
        if ch == "-" and i == 0 and len(text) > 1:
            continue
        if ch in "0123456789":
            continue
        if ch in "+-":
            return f"the sign {ch!r} is not allowed here" if i == 0 else f"{ch!r} is not an ASCII digit 0-9"
        if ch == "_":
            return "'_' is not an ASCII digit 0-9 (no digit separators)"
        if ch.isspace():
            return f"it holds white space (U+{ord(ch):04X})"
        return f"{ch!r} (U+{ord(ch):04X}) is not an ASCII digit 0-9"
    return "it has no digits"


def cut(text: str, limit: int = 40) -> str:
    """``text`` as it is, or, over ``limit`` characters, its first ``limit`` - 10 (at
    least 20 fewer past 100) and its length: "999… (41 characters)". A long value in a
    message is cut and says so (one cut silently to 40 digits read as the value)."""
    if len(text) <= limit:
        return text
    keep = limit - (20 if limit > 100 else 10)
    return f"{text[:keep]}… ({len(text):,} characters)"


def _shown(text: object) -> str:
    if type(text) is str:
        cut_text = text if len(text) <= MAX_NUMERAL_CHARS else text[:MAX_NUMERAL_CHARS] + "…"
        return repr(cut_text)
    if type(text) is float:
        return repr(text)
    return cut(repr(text))


def _article(name: str) -> str:
    """'an i16', 'an f32', 'a u64' (said 'you')."""
    return "an" if name[:1] in "aeiof" else "a"


__all__ = [
    "F32_OVERFLOW",
    "I16",
    "I32",
    "I64",
    "MAX_NUMERAL_CHARS",
    "NUMERAL",
    "U8",
    "U32",
    "U64",
    "ConversionError",
    "IntType",
    "check_f32",
    "check_int",
    "is_f32",
    "is_finite_number",
    "is_int_text",
    "parse_int",
]

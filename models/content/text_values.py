"""Text values of content files: what kind a value is, one value as text, one line of text.

A value of the wrong kind (a list or a mapping where text goes) is a C001 at its
``file:line:col`` and left out; a name or a story card key that is not one line of text
(a line break, another control character, a direction control) is a C001 and used as
written (save-format §7).
"""

from __future__ import annotations

import unicodedata

from narrative_debugger.models.content.yaml_io import location_of, text_of
from narrative_debugger.models.rules.findings import FindingSink


def kind_of(value) -> str:
    """What a YAML value is, for a message: "a list", "a mapping", or its type's name (``str``, ``int``)."""
    return "a list" if isinstance(value, list) else "a mapping" if isinstance(value, dict) else type(value).__name__


#: The Unicode categories a name may not hold: controls (C0, DEL, C1: a line feed, a tab,
#: an escape), and the line and paragraph separators.
_NOT_IN_A_NAME = frozenset({"Cc", "Zl", "Zp"})
#: Those of them that break a line.
_LINE_BREAKS = frozenset("\n\r\x0b\x0c\x1c\x1d\x1e\x85\u2028\u2029")
#: The bidirectional embeddings, overrides and isolates: they reorder how the rest of a
#: line is shown ("\u202emira" reads "arim"). Other format characters (the zero-width
#: joiners, which some scripts' names need) are allowed.
_DIRECTION_CONTROLS = frozenset("\u202a\u202b\u202c\u202d\u202e\u2066\u2067\u2068\u2069")


def odd_characters(text: str) -> str | None:
    """What ``text`` holds that one line of text may not (line breaks, other control
    characters, direction controls), each such character named under what it is
    ("a line break (U+000A) and a direction control (U+202E)"), or None."""
    if text.isprintable() and not _DIRECTION_CONTROLS.intersection(text):
        return None
    odd = sorted({ch for ch in text if unicodedata.category(ch) in _NOT_IN_A_NAME or ch in _DIRECTION_CONTROLS})
    if not odd:
        return None
    kinds = (("a line break", [ch for ch in odd if ch in _LINE_BREAKS]),
             ("a control character", [ch for ch in odd if ch not in _LINE_BREAKS and ch not in _DIRECTION_CONTROLS]),
             ("a direction control", [ch for ch in odd if ch in _DIRECTION_CONTROLS]))
    return " and ".join(f"{kind} ({', '.join(f'U+{ord(ch):04X}' for ch in chars)})" for kind, chars in kinds if chars)


def check_one_line(name: str, what: str, rel: str, obj, key, sink: FindingSink) -> None:
    """A name (an NPC's, a story card's) is one line of text: one that holds a line break,
    another control character or a direction control is C001 at its ``file:line:col``,
    each such character named under what it is. The name is kept as written (the prompt
    gets it so)."""
    held = odd_characters(name)
    if held:
        sink.add("C001", f"{rel}: {what} {name!r} holds {held}: a name is one line of text, with no control "
                 "characters; used as written", location_of(rel, obj, key))


def scalar_text(value, what: str, rel: str, obj, key, sink: FindingSink) -> str | None:
    """``value`` as the text an author typed (``yaml_io.text_of``) when it is one value; a list
    or a mapping is C001 at ``obj``'s ``key`` and None: it is left out, never put in a
    prompt as Python's ``['drowned']`` (trial 47)."""
    if isinstance(value, (list, dict)):
        sink.add("C001", f"{rel}: {what} must be text, found {kind_of(value)}; left out", location_of(rel, obj, key))
        return None
    return text_of(value)

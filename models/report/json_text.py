"""JSON text for the command line's ``--format json``: ``indent=1``, UTF-8 as is.

``json.dumps(value, ensure_ascii=False, indent=1)`` runs in pure Python whenever it
indents (the C encoder only serves ``indent=None``): about 1 s for the 12 MB ``state``
document of a 1 000 000-event save. msgspec encodes and re-indents the same document
in about a sixth of that, byte for byte the same text, except in the cases below,
which fall back to ``json``.
"""

from __future__ import annotations

import json
import re

import msgspec

# Python writes floats of 1e16 and above, or below 1e-4, with a signed exponent
# ('1e+16', '2.5e-05'); msgspec writes '1e16', and '0.000025' down to about 1e-5. An
# exponent, or '0.0000' (a magnitude below 1e-4), anywhere in the text (in a number, or
# in a string, where it costs only the fallback) sends the value to json.
_EXPONENT = re.compile(rb"[0-9.][eE][-+]?[0-9]|0\.0000")


def dumps_indented(value) -> str:
    """``json.dumps(value, ensure_ascii=False, indent=1)``, byte for byte.

    ``value`` is plain JSON data (dict with str keys, list, str, int, finite float,
    bool, None), as the command documents are. A value msgspec cannot encode (a lone
    surrogate, an integer past 64 bits, a key that is not a string) or whose floats
    Python spells with an exponent is encoded by ``json`` itself.

    Raises:
        TypeError: when ``json`` cannot encode ``value`` either.
    """
    try:
        text = msgspec.json.format(msgspec.json.encode(value), indent=1)
    except (TypeError, ValueError, OverflowError, UnicodeEncodeError, msgspec.EncodeError):
        return json.dumps(value, ensure_ascii=False, indent=1)
    if _EXPONENT.search(text):
        return json.dumps(value, ensure_ascii=False, indent=1)
    return text.decode("utf-8")

"""The edits of a what-if (issue 38), read and applied: ``--set`` pairs and JSON Patches.

``parse_set`` reads one ``POINTER=VALUE`` or ``NAME=VALUE``; ``split_edits`` splits such
pairs into patch operations and tuning values; ``apply_patch`` applies RFC 6902
operations to a save document with the ``jsonpatch`` library. Each refuses a bad edit
with a ``PatchError`` whose message names the operation (``describe``) and why, in the
tool's words: ``operation_at`` finds the operation a finding's location falls in,
``quote`` quotes a value short, ``as_json_number`` hints at a number typed as text.
"""

from __future__ import annotations

import math
import re

import jsonpatch
import jsonpointer

from narrative_debugger.models.boundary import cut
from narrative_debugger.models.domain.tuning import DEFAULT_TUNING, NAMES as TUNING_NAMES, Tuning
from narrative_debugger.models.report.json_text import dumps_strict
from narrative_debugger.models.report.plain_text import close_matches


class PatchError(ValueError):
    """A patch that cannot be applied, or that leaves the save unreadable or invalid.
    The message names the operation (its number, op and pointer) and why.

    Attributes:
        target: the ``--set`` target (a tuning name or a JSON pointer) whose value was
            refused, when one was (the What if panel clears the message once that
            value's cell changes); None otherwise.
    """

    def __init__(self, message: str, target: str | None = None) -> None:
        super().__init__(message)
        self.target = target


def describe(k: int, op: object) -> str:
    """``operation K (OP POINTER)`` for messages; K counts from 0 as the patch does."""
    if isinstance(op, dict):
        path = op.get("path", "?")
        where = cut(path, 120) if path != "" else '"" (the whole save)'  # a 400 KB pointer was echoed whole (trial 49)
        return f"operation {k} ({op.get('op', '?')} {where})"
    return f"operation {k}"


def parse_set(text: str, said: str = "--set ") -> tuple[str, object]:
    """``POINTER=VALUE`` or ``NAME=VALUE`` of ``--set``: VALUE as JSON, else as a string.

    Args:
        said: what a message puts before the target (the flag; "" in the window).

    Raises:
        PatchError: no ``=`` in ``text``, or a number out of any range (``1e999``,
            ``NaN``, more digits than Python reads).
    """
    import json

    target, sep, raw = text.partition("=")
    if not sep or not target:
        raise PatchError(f"--set {text!r}: expected POINTER=VALUE or NAME=VALUE")
    try:
        value = json.loads(raw)
    except RecursionError:  # a value nested past the interpreter's depth (trial 47: a traceback)
        raise PatchError(f"{said}{target}: the value is nested too deep to read (a save's values are a few levels deep)", target) from None
    except ValueError:
        if _NUMERAL.fullmatch(raw.strip()):  # past Python's digit limit: a number all the same, not text
            raise PatchError(f"{said}{target}: a number of {len(raw.strip()):,} characters is out of range for any value of a save", target) from None
        value = raw
    if isinstance(value, float) and not math.isfinite(value):  # 1e999 reads as inf; NaN and Infinity are not JSON numbers
        raise PatchError(f"{said}{target}: {raw.strip()[:40]} is out of range: not a finite number", target)
    if isinstance(value, float) and reads_as_zero(raw.strip()):
        # 1e-99999 read as 0.0 without a word (trial 47), where 1e999 is refused
        raise PatchError(f"{said}{target}: {cut(raw.strip(), 40)} is too small for a number a save holds: it would read as 0", target)
    return target, value


def reads_as_zero(numeral: str) -> bool:
    """Whether the JSON number ``numeral`` reads as 0 though its digits are not all
    zeros (``1e-400``, a decimal of 330 places): a value no save holds, refused in an
    edit (``--set``, a patch file) rather than taken as 0."""
    return float(numeral) == 0.0 and re.search(r"[1-9]", re.split(r"[eE]", numeral)[0]) is not None


#: A JSON number (RFC 8259), as ``--set`` values are read.
_NUMERAL = re.compile(r"-?(?:0|[1-9][0-9]*)(?:\.[0-9]+)?(?:[eE][-+]?[0-9]+)?")


def split_edits(edits: list, tuning: Tuning = DEFAULT_TUNING, said: str = "--set ") -> tuple[list, Tuning, list]:
    """Edits as ``--set`` gives them, ``(target, value)`` pairs in order, split into what
    ``what_if`` takes: ``(operations, tuning, sets)``. A target starting with ``/`` is a
    JSON pointer into the save (a ``replace`` operation); any other is a tuning name
    (``models/domain/tuning.py``), set on ``tuning``. A target given twice counts with
    its later value, listed once, at the later place (a pointer as a tuning name: the
    earlier ``replace`` of that pointer is dropped, not applied and overwritten).

    Args:
        said: what a message puts before the target: the command line's flag, or ""
            (the window's What if panel, where no flag was typed).

    Raises:
        PatchError: a target that is neither, or a tuning value of the wrong type or out
            of range; the message names the target.
    """
    operations: list = []
    sets: list = []
    last = {target: k for k, (target, _) in enumerate(edits)}
    edits = [pair for k, pair in enumerate(edits) if last[pair[0]] == k]  # set twice: the later value, listed once, at its place
    for target, value in edits:
        if target.startswith("/"):
            operations.append({"op": "replace", "path": target, "value": value})
            continue
        try:
            tuning = tuning.with_value(target, value, in_order=False)  # the bounds' order once all are set (trial 49)
        except KeyError:
            if target.strip() != target and target.strip() in TUNING_NAMES:  # "NAME = VALUE" (trial 47: "did you mean NAME?")
                raise PatchError(f"{said}{target!r}: write NAME=VALUE without spaces around '='") from None
            raise PatchError(f"{said}{target}: not a JSON pointer (they start with /) nor a tuning name"
                             f"{_nearest_name(target)} (see whatif --list)") from None
        except ValueError as exc:
            raise PatchError(f"{said}{target}: {exc}{as_json_number(value)}", target) from None
        sets.append((target, value))
    try:
        tuning.check_bounds()
    except ValueError as exc:
        levels = [name for name, _ in sets if name.startswith("levels.")]
        raise PatchError(f"{said}{', '.join(levels) or 'levels'}: {exc}") from None
    return operations, tuning, sets


def _nearest_name(target: str) -> str:
    """``": did you mean NAME?"`` for the tuning name ``target`` most likely meant (its
    last part: ``sentiment_weight`` for ``relationship.sentiment_weight``), or ""."""
    names = list(TUNING_NAMES)
    tail = [n for n in names if n.rsplit(".", 1)[-1] == target.rsplit(".", 1)[-1]]
    close = tail or close_matches(target, names)
    return f": did you mean {close[0]}?" if close else ""


def as_json_number(value: object) -> str:
    """A hint for a number typed in a form JSON does not read (``.5``, ``+0.25``, ``"0.5"``):
    ``" (write it as a JSON number: 0.5, with no quotes, no leading '+' or '.')"``, else ""."""
    if not isinstance(value, str):
        return ""
    try:
        number = float(value.strip())
    except ValueError:
        return ""
    if not math.isfinite(number):
        return ""
    shown = str(int(number)) if number.is_integer() and "." not in value and "e" not in value.lower() else repr(number)
    return f" (write it as a JSON number: {shown}, with no quotes, no leading '+' or '.')"


def apply_patch(document: object, operations: list, kinds: list | None = None) -> object:
    """Apply ``operations`` (RFC 6902) to ``document``, one at a time, in place where
    they can be: returns the patched document (a new one when an operation replaces the
    whole, pointer ``""``). ``kinds``: the save's ``Journal.kinds`` when ``document`` holds
    only the edited entries, for the message of a pointer into another variant.

    Raises:
        PatchError: a malformed operation, a pointer that does not exist (past the end
            of the journal, a missing key), or a failed ``test``; the message names it.
    """
    if not isinstance(operations, list):
        raise PatchError("a JSON Patch is a list of operations (RFC 6902)")
    copied = 0
    for k, op in enumerate(operations):
        if not isinstance(op, dict):  # jsonpatch said "argument of type 'int' is not iterable" (trial 47)
            raise PatchError(f"{describe(k, op)}: an operation is an object with \"op\" and \"path\", not {_JSON_TYPES.get(type(op).__name__, 'that')}")
        if op.get("op") == "remove" and op.get("path") == "":
            raise PatchError(f"{describe(k, op)}: the whole save cannot be removed")
        if op.get("op") == "copy":
            copied += _values_in(document, op.get("from"), MAX_COPIED_VALUES - copied)
            if copied > MAX_COPIED_VALUES:
                raise PatchError(f"{describe(k, op)}: the patch's copies hold more than {MAX_COPIED_VALUES:,} values in all "
                                 "(copies of copies double the save each time: a 7 KB patch ran out of memory)")
        try:
            document = jsonpatch.JsonPatch([op]).apply(document, in_place=True)
        except jsonpatch.JsonPatchTestFailed as exc:
            raise PatchError(f"{describe(k, op)}: the test failed: {_test_failure(document, op, exc)}") from None
        except (jsonpatch.JsonPatchException, jsonpointer.JsonPointerException, KeyError, IndexError, TypeError) as exc:
            raise PatchError(f"{describe(k, op)}: {_reason(exc)}{_nearest_member(document, op.get('path'), kinds)}") from None
    return document


#: The most values (each number, string, array and object counts one) a patch's ``copy``
#: operations may copy in all: a journal entry is about ten, a whole NPC a few hundred.
MAX_COPIED_VALUES = 5_000_000


def _values_in(document: object, pointer: object, limit: int) -> int:
    """How many values the member at ``pointer`` holds, itself included (counting stops
    past ``limit``); 0 when the pointer does not resolve (the copy then says why)."""
    try:
        value = jsonpointer.resolve_pointer(document, pointer) if isinstance(pointer, str) else None
    except (jsonpointer.JsonPointerException, TypeError):
        return 0
    count, stack = 0, [value]
    while stack and count <= limit:
        item = stack.pop()
        count += 1
        if isinstance(item, dict):
            stack.extend(item.values())
        elif isinstance(item, list):
            stack.extend(item)
    return count


def _nearest_member(document: object, pointer: object, kinds: list | None = None) -> str:
    """``"; did you mean /…/sentiment?"`` when the first member of ``pointer`` missing on
    the way is missing from an object that holds one named much like it (trial 47: a typo
    got jsonpatch's words alone); for a journal entry's event, the variant it holds
    (``_other_kind``)."""

    if not isinstance(pointer, str) or not pointer.startswith("/"):
        return ""
    parts = pointer.split("/")[1:]
    parent, holder, k = "", document, 0
    for k, part in enumerate(parts[:-1]):  # down to the first member missing on the way, or to the last
        try:
            holder = jsonpointer.resolve_pointer(holder, f"/{part}")
        except (jsonpointer.JsonPointerException, TypeError):
            break
        parent = f"{parent}/{part}"
    else:
        k = len(parts) - 1
    name = jsonpointer.unescape(parts[k])
    if not isinstance(holder, dict) or name in holder:
        return ""
    close = close_matches(name, [key for key in holder if isinstance(key, str)])
    if close:
        return f"; did you mean {parent}/{jsonpointer.escape(close[0])}?"
    return _other_kind(document, parent, name, kinds)


def _other_kind(document: object, parent: str, name: str, kinds: list | None = None) -> str:
    """``"; journal[317] is a DialogueLine, not a RelationshipInteraction (the nearest ones
    are journal[310] and journal[322])"`` when ``parent`` is a journal entry's ``event``
    holding another variant than ``name`` (trial 49: the message named only the member).
    ``document``'s journal is the save's list, or the few entries an entry edit patches
    (``refusals._reread``: a dict by index), with the save's ``kinds`` (``Journal.kinds``) to find
    the nearest ones in."""
    entry = re.fullmatch(r"/journal/(0|[1-9][0-9]{0,18})/event", parent)
    journal = document.get("journal") if isinstance(document, dict) else None
    if entry is None or not isinstance(journal, (list, dict)):
        return ""
    i = int(entry.group(1))

    def kind_of(k: int) -> str | None:
        item = journal.get(str(k)) if isinstance(journal, dict) else journal[k] if k < len(journal) else None
        event = item.get("event") if isinstance(item, dict) else None
        return next(iter(event)) if isinstance(event, dict) and len(event) == 1 else None

    held = kind_of(i)
    if held is None:
        return ""
    a_or_an = lambda word: f"an {word}" if word[:1] in "AEIOU" else f"a {word}"  # noqa: E731
    said = f"; journal[{i}] is {a_or_an(cut(held, 40))}, not {a_or_an(cut(name, 40))}"
    if kinds is not None:
        kind_of, size = kinds.__getitem__, len(kinds)
    elif isinstance(journal, list):
        size = len(journal)
    else:
        return said
    before = next((k for k in range(i - 1, -1, -1) if kind_of(k) == name), None)
    after = next((k for k in range(i + 1, size) if kind_of(k) == name), None)
    near = [f"journal[{k}]" for k in (before, after) if k is not None]
    if not near:
        return f"{said} (the save has none)"
    return f"{said} (the nearest {'ones are' if len(near) == 2 else 'is'} {' and '.join(near)})"


#: The JSON names of the Python types jsonpatch and jsonpointer name in their messages.
_JSON_TYPES = {"str": "a string", "int": "an integer", "float": "a number", "bool": "a boolean",
               "dict": "an object", "list": "an array", "NoneType": "null"}
#: The longest value a message quotes; a longer one is cut with an ellipsis.
_QUOTE_LIMIT = 80


def _reason(exc: BaseException) -> str:
    """The library's message in the tool's words: never the document itself (jsonpointer
    quotes the whole object a missing member was looked up in, the save's 600 KB for
    ``/nosuch``) and JSON type names, not Python's ``<class 'str'>``."""
    text = str(exc) or type(exc).__name__
    if "EndOfList" in text:  # "/journal/-/tick": '-' names the place after the last item, which holds nothing yet
        return "'-' (after the last item) can only be added to, not read or replaced inside"
    text = re.sub(r"(member '.*?' not found) in .*", r"\1", text, flags=re.S)
    # Python's own words, with a hint to raise its limit (trial 49)
    text = re.sub(r".*Exceeds the limit \((\d+) digits\) for integer string conversion.*",
                  lambda m: f"an index of more than {int(m.group(1)):,} digits is past the end of any list", text, flags=re.S)
    text = re.sub(r"'([^']{81,})'", lambda m: repr(cut(m.group(1), 80)), text)  # a 400 KB member was echoed whole (trial 49)
    return re.sub(r"<class '(\w+)'>", lambda m: _JSON_TYPES.get(m.group(1), m.group(1)), text)


def quote(value: object) -> str:
    """``value`` as JSON text for a message, at most ``_QUOTE_LIMIT`` characters."""
    try:
        text = dumps_strict(value)
    except (TypeError, ValueError):  # NaN or a value JSON has no spelling for: quoted as Python shows it
        text = repr(value)
    return text if len(text) <= _QUOTE_LIMIT else text[:_QUOTE_LIMIT - 1] + "…"


def _test_failure(document: object, op: object, exc: BaseException) -> str:
    """Why a ``test`` operation failed: the value found at its pointer against the one
    tested (both quoted short), or the pointer's own problem."""
    try:
        found = jsonpointer.resolve_pointer(document, op["path"])
    except (jsonpointer.JsonPointerException, KeyError, IndexError, TypeError):
        return _reason(exc)
    return f"{op['path']} holds {quote(found)}, not {quote(op.get('value'))}"


def pointer_tokens(pointer: str) -> list[str]:
    """A JSON pointer's member names, unescaped (RFC 6901: ``~1`` is "/", ``~0`` is "~")."""
    return [jsonpointer.unescape(token) for token in pointer.split("/")[1:]]


def _tokens(text: str) -> list[str]:
    return [t for t in re.split(r"[.\[\]/]+", text) if t]


def operation_at(location: str, operations: list) -> tuple[str, object]:
    """The operation whose pointer is the longest prefix of ``location`` (a finding's, or a
    path): how a message names it (``describe``; "the patch" when there is none) and the
    operation itself (None then)."""
    where = _tokens(location or "")
    best, found = -1, (0, None)
    for k, op in enumerate(operations):
        pointer = op.get("path", "") if isinstance(op, dict) else ""
        tokens = pointer_tokens(pointer)
        n = 0
        while n < min(len(tokens), len(where)) and tokens[n] == where[n]:
            n += 1
        if n > best:
            best, found = n, (k, op)
    k, op = found
    return (describe(k, op) if op is not None else "the patch"), op

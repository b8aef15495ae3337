"""What if (issue 38): change the past, replay, and see what follows.

``what_if(path, content_dir, operations, tuning)`` opens the save as recorded (side A),
applies an RFC 6902 JSON Patch to its document with the ``jsonpatch`` library (side B;
the file itself is never written), replays B with the tuning values and a
``replay.Recompute`` (the values the seeds derive are derived anew from the first
changed entry on, per NPC) and compares A with B through ``compare.comparison``: the
``diff`` contract, plus what the edit makes of the game's recorded decisions.

Recorded decisions (a walk-away, a line fired, a penalty) are kept in B's journal.
Where one no longer follows from B's state it is listed in ``would_not_happen`` with
its clause; where the state now calls for one the journal lacks, in ``would_happen``.
Each NPC whose assembled prompt text differs at one of its lines is listed in
``prompts_regenerate`` with the first such tick and how many of its turns differ.
"""

from __future__ import annotations

import math
import re
from bisect import bisect_left
from itertools import compress
from operator import attrgetter, eq
from dataclasses import dataclass, field, replace
from pathlib import Path

import jsonpatch
import jsonpointer
import numpy as np

from narrative_debugger.models.boundary import cut
from narrative_debugger.models.compare.comparison import Comparison, compare
from narrative_debugger.models.domain.relationship import apply_penalty, close_enough, score_delta, sentiment_in_range
from narrative_debugger.models.domain.tuning import DEFAULT_TUNING, NAMES as TUNING_NAMES, Tuning
from narrative_debugger.models.domain.types import InteractionState
from narrative_debugger.models.playthrough import Playthrough
from narrative_debugger.models.prompt.builder import PromptBuilder
from narrative_debugger.models.prompt.sections import BY_LABEL, SectionContext, memory_inputs
from narrative_debugger.models.rules.findings import Severity
from narrative_debugger.models.report.json_text import dumps_strict
from narrative_debugger.models.report.plain_text import close_matches
from narrative_debugger.models.save.jsonio import decode_file
from narrative_debugger.models.compare.journal import entry_json
from narrative_debugger.models.rules.checks import check_identities
from narrative_debugger.models.rules.findings import FindingSink
from narrative_debugger.models.rules.snapshot_diff import differences as snapshot_differences, saved_differences
from narrative_debugger.models.save.savefile import Save, save_from_document
from narrative_debugger.models.save.saveshape import Journal, Shape, parse_journal
from narrative_debugger.models.timeline.event_kinds import tick_array
from narrative_debugger.models.timeline.index import TimelineIndex
from narrative_debugger.models.timeline.replay import Recompute, Resume

_WALK_AWAYS = (InteractionState.WalkedAway, InteractionState.ConflictAbandoned)
#: T004 messages the replay writes about a penalty (``replay.on_WalkAwayPenalty``, ``_pay_early``, ``settle``).
_PENALISED_WITHIN = "yet it is penalised"
_PENALTY_MISSING = "but no WalkAwayPenalty"


#: Entry fields the replay derives from an edited entry (issue 38: delta and score_after
#: by the seed formula, the score after a penalty, the stress after its delta) -> the
#: fields they follow from. An edit of one would be replaced by the derived value and
#: leave only float noise behind (the trial's delta 50 "differed in 1 way"): refused.
DERIVED_FIELDS: dict[str, dict[str, tuple[str, str]]] = {
    "RelationshipInteraction": {
        "delta": ("its sentiment, message_length and conversation_turns (relationship seed, delta formula)",
                  "sentiment, message_length or conversation_turns"),
        "score_after": ("the score before it and its delta, clamped to 0..100", "sentiment, message_length or conversation_turns"),
    },
    "WalkAwayPenalty": {"score_after": ("the score before it and its penalty, clamped at 0", "penalty")},
    "StressChanged": {"current_stress": ("the stress before it and its delta", "delta")},
}


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
            raise PatchError(f"{said}{target}: {exc}{_as_json_number(value)}", target) from None
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


def _as_json_number(value: object) -> str:
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
    (``_reread``: a dict by index), with the save's ``kinds`` (``Journal.kinds``) to find
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


def _quote(value: object) -> str:
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
    return f"{op['path']} holds {_quote(found)}, not {_quote(op.get('value'))}"


@dataclass
class WhatIf:
    """A what-if: the comparison of A (as recorded) with B (what if) and what follows.

    Attributes:
        comparison: the ``diff`` comparison (A as recorded, B what if).
        edits: the patch operations applied to the save, then the tuning values set
            (``{"op": "set", "name", "value"}``).
        would_not_happen: recorded decisions B's state no longer supports:
            ``{journal_index, tick, event, reason}``.
        would_happen: decisions B's state calls for that the journal lacks, same shape.
        crossings: slug -> ``{"a": [ticks], "b": [ticks]}`` where the stress threshold
            crossings (either way) moved.
        prompts_regenerate: slug -> ``{"first_tick", "turns"}``: the NPC's prompt text
            differs at ``turns`` of its lines, the first at ``first_tick``.
        end_levels: slug -> ``{"a", "b"}`` levels (display names) at the compared tick
            where they differ.
    """

    comparison: Comparison
    edits: list = field(default_factory=list)
    would_not_happen: list = field(default_factory=list)
    would_happen: list = field(default_factory=list)
    crossings: dict = field(default_factory=dict)
    prompts_regenerate: dict = field(default_factory=dict)
    end_levels: dict = field(default_factory=dict)

    @property
    def changed(self) -> bool:
        """True when anything differs (``whatif`` exits 1)."""
        return bool(not self.comparison.equal or self.would_not_happen or self.would_happen or self.crossings or self.prompts_regenerate)

    def to_json(self) -> dict:
        """The ``diff`` contract with A = as recorded and B = what if, plus ``edits``,
        ``would_not_happen``, ``would_happen``, ``crossings``, ``prompts_regenerate`` and ``end_levels``."""
        out = self.comparison.to_json()
        out["edits"] = self.edits
        out["would_not_happen"] = self.would_not_happen
        out["would_happen"] = self.would_happen
        out["crossings"] = self.crossings
        out["prompts_regenerate"] = self.prompts_regenerate
        out["end_levels"] = self.end_levels
        return out


def what_if(path: Path, content_dir: Path | None, operations: list, tuning: Tuning = DEFAULT_TUNING, sets: list | None = None,
            tick: int | None = None, recorded: Playthrough | None = None, progress=None) -> WhatIf:
    """Apply ``operations`` to the save at ``path`` and ``tuning`` to the rules, replay, compare.

    Args:
        path: the save (read, never written).
        content_dir: its content folder (None: as ``Playthrough.open`` chooses).
        operations: JSON Patch operations (RFC 6902) on the save document.
        tuning: the rules' constants for B (``models/domain/tuning.py``).
        sets: the ``(name, value)`` tuning values set, for ``edits``.
        tick: compare the states at this tick (default: each side's last tick).
        recorded: side A when already open (``Playthrough.open(path, content_dir)``).
        progress: optional ``callable(fraction, stage)``: 0.0 .. 1.0 and what is being
            done (the edits applied, B replayed, compared, the prompts rebuilt), called
            about 100 times while B is replayed.

    Raises:
        PatchError: the save cannot be read, the patch cannot be applied, it leaves
            the save unreadable or with a reading error A does not have (the finding is
            named), or ``tuning`` sets ``npc.SLUG.…`` for a SLUG the save has no NPC of,
            or it gives a field the replay derives (``DERIVED_FIELDS``): another value
            than the recorded one, or in an entry it adds, another than B's replay derives.
    """
    path = Path(path)
    report = _rising(progress) if progress is not None else (lambda fraction, stage: None)
    opened = 0.0 if recorded is not None else 0.3  # what opening A takes of the whole, when it is not open
    if recorded is None:
        report(0.0, "opening the recorded save")
    a = recorded if recorded is not None else Playthrough.open(path, content_dir, defer_checks=True)
    report(opened, "applying the edits")
    if not a.readable:
        raise PatchError(f"{path.name} cannot be read: " + "; ".join(f"{f.code} {f.location}: {f.message}" for f in a.findings[:3]))
    _check_npc_names(a.save, path.name, tuning)
    _check_one_threshold(a.save, operations, tuning)
    _check_derived(a.save, operations)
    save_b = _patched_entries(a.save, operations)
    whole = save_b is None
    if whole:  # the patch reaches beyond journal entries' fields: the whole document
        document, sha256 = decode_file(path, path.name)
        if not document.parsed:
            raise PatchError(f"{path.name} cannot be read")
        document.value = apply_patch(document.value, operations)  # "" replaces the whole
        save_b = save_from_document(document, f"{path.name} (what if)", path)
    _check_still_valid(a.save, save_b, operations)
    if whole:
        _check_saved_at(a.save, save_b, operations)
        _check_recorded_sizes(a.save, save_b, operations)
        _check_snapshot_edits(a, save_b, operations)
        _check_identities_kept(a.save, save_b, operations)
    save_b.sha256 = ""  # not the file's bytes
    changed_from, changed_to = _changed_span(a.save, save_b)
    _check_edited_sentiments(a.save, save_b, changed_from, changed_to, operations)
    added = _check_derived_inside(a.save, save_b, changed_from, changed_to, operations,
                                  _journal_origins(len(a.save.journal), len(save_b.journal), changed_from, changed_to, operations))
    shift = _Shift(len(a.save.journal), len(save_b.journal), changed_from, changed_to)
    rc = Recompute(changed_from, changed_to, formula=not tuning.formula_is_default,
                   recorded_walk_thresholds={sid: n.interaction_tolerance.walk_away_threshold for sid, n in a.save.npcs.items()},
                   pending=_npcs_edited_away(a.save, save_b, changed_from, changed_to),
                   recorded_faults=_recorded_faults(a, shift))
    notes = [f for f in a.findings if f.code == "C010"]  # how the save was opened: the same for B
    span = 1.0 - opened
    replaying = lambda fraction, stage: report(opened + span * (0.05 + 0.55 * fraction), "replaying with the edits")  # noqa: E731
    lines_as_recorded = _dialogue_as_recorded(a, save_b, changed_from, changed_to)
    same_slugs = _same_slugs(a.save, save_b)
    b = Playthrough.build(save_b, a.content, replaying, defer_checks=True, notes=notes, tuning=tuning, recompute=rc,
                          resume=resume_point(a, save_b, changed_from, tuning), dialogue_of=a.index if lines_as_recorded else None,
                          knowledge_of=a.index if lines_as_recorded and same_slugs else None)
    _check_replay_valid(a, b, changed_from, changed_to, operations, anywhere=whole)
    _check_derived_added(b, added, operations, tuning)
    report(opened + span * 0.6, "comparing with the recorded run")
    same_lines = lines_as_recorded and save_b.player == a.save.player and same_slugs  # the speakers' names: the content's and the player's
    only_state = _prompt_inputs_as_recorded(a, b, changed_from, changed_to, tuning)
    comparison = compare(a, b, tick, parted_from=0 if tuning != DEFAULT_TUNING else None, same_lines=same_lines,
                         same_prompt=_prompt_as_recorded(a, b, tick) if same_lines and only_state else None)
    _derived_divergence(comparison, b, rc, tuning)
    result = WhatIf(comparison, edits=list(operations) + [{"op": "set", "name": n, "value": v} for n, v in (sets or [])])
    _relevel(result, tuning)
    _decisions(result, a, b, rc, shift)
    _crossings(result, a.index, b.index, a.save, b.save, until=tick)
    _up_to(result, tick)
    report(opened + span * 0.85, "rebuilding the prompts")
    _prompts(result, a, b, changed_from, tuning, only_state, until=tick)
    report(1.0, "done")
    return result


def resume_point(a: Playthrough, save_b: Save, changed_from: int, tuning: Tuning) -> Resume | None:
    """Where B's replay can start instead of at the first entry (issue 38: "replays only
    from the nearest checkpoint before t"): A's last checkpoint at or before the first
    changed entry, when B is A's save with journal entries changed (the snapshot, the
    NPCs and every entry before it are A's) and the replay's rules are A's (a tuned
    constant of the formula or a threshold acts from tick 0; the prompt's do not act on
    the replay). None: B is replayed from the start."""
    prompt_only = replace(tuning, prompt_budget=DEFAULT_TUNING.prompt_budget, min_available=DEFAULT_TUNING.min_available,
                          card_share=DEFAULT_TUNING.card_share)  # the prompt's values: the replay never reads them
    if prompt_only != DEFAULT_TUNING or a.tuning != DEFAULT_TUNING or a.recompute is not None or not a.checkpoints:
        return None
    if save_b.npcs is not a.save.npcs or save_b.player is not a.save.player or save_b.saved_at_tick != a.save.saved_at_tick:
        return None
    before = [c for c in a.checkpoints if c.position <= changed_from]
    return Resume(before[-1], a.index, a.replay_findings) if before else None


#: Journal kinds whose edited fields never start, end or move a conversation, nor a line.
_OUTSIDE_DIALOGUE = frozenset({"RelationshipInteraction", "StressChanged", "WalkAwayPenalty"})
#: The recorded run's findings that say a tick or a speaker could not be taken as written.
_TICK_OR_SPEAKER_FAULTS = frozenset({"J001", "J002", "J004"})


def _dialogue_as_recorded(a: Playthrough, save_b: Save, changed_from: int, changed_to: int) -> bool:
    """Whether B's replay may take A's dialogue lines and ticks (``replay``'s ``dialogue_of``):
    the same ticks, kinds, player and NPCs (the speakers), only RelationshipInteraction,
    StressChanged or WalkAwayPenalty entries changed (a tuned value changes none), and no
    J001, J002 or J004 in A's replay."""
    ja, jb = a.save.journal, save_b.journal
    if a.index is None or save_b.player.stable_id != a.save.player.stable_id or save_b.npcs.keys() != a.save.npcs.keys():
        return False
    if any(f.code in _TICK_OR_SPEAKER_FAULTS for f in a.replay_findings):
        return False
    if any(jb.kinds[i] not in _OUTSIDE_DIALOGUE for i in range(changed_from, min(changed_to, len(jb)))):
        return False
    return len(ja) == len(jb) and (ja.kinds is jb.kinds or ja.kinds == jb.kinds) and (ja.ticks is jb.ticks or ja.ticks == jb.ticks)


def _derived_divergence(comparison: Comparison, b: Playthrough, rc: Recompute, tuning: Tuning) -> None:
    """B's side of the first differing entry with the values B's replay derived: an edited
    RelationshipInteraction kept its recorded ``delta`` and ``score_after`` (0.165 and
    21.781 beside a B score of 22.616), which B's replay computes anew by the formula
    (``score_delta`` with ``tuning``) and the clamped score after the entry."""
    d = comparison.divergence
    event = d.b_event.get("event") if d is not None and isinstance(d.b_event, dict) else None
    if not isinstance(event, dict) or not isinstance(event.get("RelationshipInteraction"), dict):
        return
    fields = event["RelationshipInteraction"]
    if not rc.derived(fields.get("target"), d.b_index):
        return
    values = _replayed_values(b, d.b_index, tuning)
    if values is None:
        return
    derived = dict(fields, **{name: round(value, 6) for name, value in values.items()})  # f32 values: 1.0, not 0.9999999999999999 (trial 47)
    comparison.divergence = replace(d, b_event={**d.b_event, "event": {"RelationshipInteraction": derived}})


def _replayed_values(b: Playthrough, i: int, tuning: Tuning = DEFAULT_TUNING) -> dict[str, float | int] | None:
    """The values of B's journal entry ``i`` that B's replay derives (``DERIVED_FIELDS``)
    where it derives them anew (``Recompute``): field name -> value, read from B's index.

    A RelationshipInteraction's ``delta`` by the seed formula with its clamp
    (``score_delta`` with ``tuning``) and its ``score_after``, the NPC's score once the
    entry applied (0..100); a WalkAwayPenalty's ``score_after``, the score before it less
    its penalty, clamped at 0 (``apply_penalty``; whether the walk-away rule calls for
    the penalty at all is ``would_happen``'s and ``would_not_happen``'s); a
    StressChanged's ``current_stress``, the stress before it plus its delta (i16), as the
    replay applied it. None for another kind, or an entry about no NPC of B.
    """
    kind, data = b.save.journal.kinds[i], b.save.journal.data[i]
    versions = b.index.npcs.get(getattr(data, "target", None)) if kind in DERIVED_FIELDS else None
    before, after = (versions.at(i), versions.at(i + 1)) if versions is not None else (None, None)  # position = entries applied
    if before is None or after is None:
        return None
    if kind == "RelationshipInteraction":
        return {"delta": score_delta(data.sentiment, data.message_length, data.conversation_turns, tuning),
                "score_after": after.relationship.score}
    if kind == "WalkAwayPenalty":
        return {"score_after": apply_penalty(before.relationship, data.penalty).score}
    return {"current_stress": after.tolerance.current_stress}


def _rising(progress):
    """``progress`` called with fractions that never go back (rounding of the stages' spans)."""
    last = [0.0]

    def report(fraction: float, stage: str) -> None:
        last[0] = max(last[0], min(1.0, round(fraction, 6)))
        progress(last[0], stage)
    return report


_ENTRY_FIELD = re.compile(r"/journal/(0|[1-9][0-9]{0,18})/.+")  # at most 19 digits: past 4 300 int() raised (trial 49)


def _check_derived(a: Save, operations: list) -> None:
    """Refuse an operation that sets a field the replay derives (``DERIVED_FIELDS``) of
    an existing journal entry: the message names the operation and what to change."""
    journal = a.journal
    for k, op in enumerate(operations):
        if not isinstance(op, dict) or op.get("op") == "test" or not isinstance(op.get("path"), str):
            continue
        m = _DERIVED_PATH.fullmatch(op["path"])
        if m is None or int(m.group(1)) >= len(journal):
            continue
        kind, name = m.group(2), m.group(3)
        derived = DERIVED_FIELDS.get(kind, {}).get(name)
        if derived is not None and journal.kinds[int(m.group(1))] == kind:
            source, change = derived
            raise PatchError(f"{describe(k, op)}: {name} is derived by the replay from {source}: change {change} instead")


_DERIVED_PATH = re.compile(r"/journal/(0|[1-9][0-9]{0,18})/event/([A-Za-z]+)/([a-z_]+)")


def _reread(a: Save, operations: list) -> tuple[dict[int, tuple], list] | None:
    """The journal entries ``operations`` change, patched and read again by the one
    journal reader (``saveshape.parse_journal``): ``({index: (tick, kind, data)},
    reading findings)``, when every operation replaces or tests a field inside an
    existing entry; None when the patch does more."""
    journal = a.journal
    wanted = set()
    for op in operations:
        if not isinstance(op, dict) or op.get("op") not in ("replace", "test") or not isinstance(op.get("path"), str):
            return None
        m = _ENTRY_FIELD.fullmatch(op["path"])
        if m is None or int(m.group(1)) >= len(journal) or journal.kinds[int(m.group(1))] is None:
            return None
        wanted.add(int(m.group(1)))
    document = {"journal": {str(i): entry_json(a, i) for i in wanted}}
    document = apply_patch(document, operations, kinds=journal.kinds)
    sink = FindingSink()
    shape = Shape(sink, f"{a.label} (what if)")
    rows = {}
    for i in sorted(wanted):
        one = parse_journal([document["journal"][str(i)]], shape, first=i)
        rows[i] = (one.ticks[0], one.kinds[0], one.data[0])
    return rows, sink.close() if sink.items else []


def _patched_entries(a: Save, operations: list) -> Save | None:
    """B's save without reading the file again, when every operation replaces or tests
    a field inside existing journal entries (or there are none): A's save with those
    entries rebuilt as JSON (``compare.journal.entry_json``), patched, and read again
    (``_reread``). None when the patch does more."""
    reread = _reread(a, operations)
    if reread is None:
        return None
    rows, findings = reread
    journal = a.journal
    new = Journal(list(journal.ticks), list(journal.kinds), list(journal.data)) if rows else journal
    for i, (tick, kind, data) in rows.items():
        new.ticks[i], new.kinds[i], new.data[i] = tick, kind, data
    if not findings:  # the same reading findings as A's, counted the same
        return replace(a, label=f"{a.label} (what if)", journal=new)
    return replace(a, label=f"{a.label} (what if)", journal=new, findings=list(a.findings) + findings, finding_sink=None)


class _OneChanged:
    """A journal column with one slot changed, read through (``check_entry_edit``: no
    copy of a long journal on the GUI thread)."""

    def __init__(self, base, i: int, value) -> None:
        self.base, self.i, self.value = base, i, value

    def __len__(self) -> int:
        return len(self.base)

    def __getitem__(self, k: int):
        return self.value if k == self.i else self.base[k]


def check_entry_edit(save: Save, pointer: str, value: object) -> None:
    """Refuse one journal-entry edit before any replay, as ``what_if`` would: the window's
    "What if… edit this entry" asks it so that a bad value keeps its dialog open with the
    message (the trial's dialog closed, and the message went to a panel scrolled away).
    Reads the one entry (no copy of the journal).

    Args:
        save: the save as recorded (side A).
        pointer: ``/journal/N/event/<Kind>/<field>``.
        value: the new value.

    Raises:
        PatchError: the pointer is not a field of an entry of ``save``, the value makes
            the entry unreadable or adds a reading error (the finding is named), or it
            sets a sentiment outside -1..1 (save-format §5), or sets a field the replay
            derives (``DERIVED_FIELDS``). What only the replay finds
            (I010, J001, …) is left to ``what_if``.
    """
    operations = [{"op": "replace", "path": pointer, "value": value}]
    _check_derived(save, operations)
    reread = _reread(save, operations)
    if reread is None or len(reread[0]) != 1:
        raise PatchError(f"{describe(0, operations[0])}: not a field of a journal entry of {save.label}")
    rows, findings = reread
    (i, (tick, kind, data)), = rows.items()
    j = save.journal
    journal = Journal(_OneChanged(j.ticks, i, tick), _OneChanged(j.kinds, i, kind), _OneChanged(j.data, i, data))
    save_b = replace(save, label=f"{save.label} (what if)", journal=journal, findings=list(save.findings) + findings, finding_sink=None)
    _check_still_valid(save, save_b, operations)
    _check_edited_sentiments(save, save_b, i, i + 1, operations)


def _check_npc_names(save: Save, name: str, tuning: Tuning) -> None:
    """Refuse ``npc.SLUG.…`` tuning values for a SLUG the save has no NPC of: set, they
    would change nothing and the what-if would say "nothing changes"."""
    slugs = {npc.slug for npc in save.npcs.values()}
    for what, pairs in (("threshold", tuning.thresholds), ("walk_away_threshold", tuning.walk_away_thresholds)):
        for slug, _ in pairs:
            if slug not in slugs:
                close = close_matches(slug, sorted(slugs))
                meant = f"; did you mean npc.{close[0]}.{what}?" if close else ""
                raise PatchError(f"--set npc.{cut(slug, 60)}.{what}: {name} has no NPC '{cut(slug, 60)}'{meant} (see whatif --list {name})")


def _check_saved_at(a: Save, b: Save, operations: list) -> None:
    """Refuse a patch that moves ``saved_at_tick``: it is when the game saved, the tick the
    snapshot describes (save-format §2), not a value of the past a what-if replays. Moved
    to 2^64 - 1 it stretched the window's axis over the whole u64 range while the what-if
    said "Nothing changes" (trial 47)."""
    if b.saved_at_tick != a.saved_at_tick:
        where, op = _operation_at("saved_at_tick", operations)
        raise PatchError(f"{where}: saved_at_tick is when the game saved (the tick the snapshot describes), not a value "
                         "of the past a what-if replays: change journal entries or tuning values instead")


#: An NPC's values that the journal's entries carry as recorded: each WalkAwayPenalty's
#: ``penalty`` and each walk-away's StressChanged ``delta`` -> the entries to edit instead.
_RECORDED_SIZES = {"walk_away_penalty": "each WalkAwayPenalty's penalty", "walk_away_stress_delta": "each walk-away's StressChanged delta"}


def _check_recorded_sizes(a: Save, b: Save, operations: list) -> None:
    """Refuse a patch that changes an NPC's ``walk_away_penalty`` or ``walk_away_stress_delta``
    (``interaction_tolerance``): the journal's penalties and stress changes keep their
    recorded sizes, so B's scores and stress did not move and each recorded entry only
    became a T004 or T003 finding of B's, a dozen alike (trial 47)."""
    for sid, nb in b.npcs.items():
        na = a.npcs.get(sid)
        if na is None:
            continue
        for name, entries in _RECORDED_SIZES.items():
            if getattr(na.interaction_tolerance, name) != getattr(nb.interaction_tolerance, name):
                where, op = _operation_at(f"npcs.{sid}.interaction_tolerance.{name}", operations)
                raise PatchError(f"{where}: {nb.slug}'s {name} is the size of what the journal records ({entries}), which a "
                                 f"what-if keeps as recorded: change those entries instead")


def _check_snapshot_edits(a: Playthrough, save_b: Save, operations: list) -> None:
    """Refuse a patch that sets a value of the snapshot the replay derives (a score, a
    stress, a fact's state at ``saved_at_tick``): the what-if replays the journal, so B's
    state would not take it, and B's snapshot is not checked against B's replay (it is
    the recorded run's record): the what-if said "Nothing changes" (trial 47). Found as a
    snapshot-versus-replay difference (J003's, ``snapshot_diff``) of B's snapshot against
    A's replay that A's own snapshot does not have."""
    recorded = {d.path for d in saved_differences(a.save, a.index)}
    for d in snapshot_differences(save_b, a.index.at(save_b.saved_at_tick)):
        if d.path not in recorded:
            where, op = _operation_at(d.path, operations)
            raise PatchError(f"{where}: {d.path} of the snapshot is what the replay derives at saved_at_tick (the patch "
                             f"gives {d.saved}, the replay {d.replayed}): change a journal entry or a tuning value instead")


def _check_one_threshold(save: Save, operations: list, tuning: Tuning) -> None:
    """Refuse a tuned NPC threshold (``npc.SLUG.threshold``, ``…walk_away_threshold``)
    beside a patch operation that sets the same value in the save (or a whole part that
    holds it): the tuned value acts either way, so the operation listed among the edits
    would have changed nothing (trial 47)."""
    by_slug = {npc.slug: sid for sid, npc in save.npcs.items()}
    for what, place, pairs in (("threshold", ("tolerance", "threshold"), tuning.thresholds),
                               ("walk_away_threshold", ("interaction_tolerance", "walk_away_threshold"), tuning.walk_away_thresholds)):
        for slug, _ in pairs:
            target = ["npcs", str(by_slug.get(slug)), *place]
            for k, op in enumerate(operations):
                if not isinstance(op, dict) or op.get("op") == "test":
                    continue
                for pointer in (op.get("path"), op.get("from") if op.get("op") == "move" else None):
                    if not isinstance(pointer, str):
                        continue
                    tokens = _pointer_tokens(pointer)
                    n = min(len(tokens), len(target))
                    if tokens[:n] == target[:n]:
                        raise PatchError(f"{describe(k, op)}: sets {slug}'s {what} in the save, which the tuning value npc.{slug}.{what} "
                                         "sets too: give one of them")


def _check_still_valid(a: Save, b: Save, operations: list) -> None:
    """Refuse a patch that leaves the save unreadable, or that adds a reading error."""
    seen = {(f.code, f.location) for f in a.findings}
    if not b.readable:
        new = b.findings[:1]
    else:
        new = [f for f in b.findings if f.severity is Severity.ERROR and (f.code, f.location) not in seen][:1]
    if not new:
        return
    raise _invalid(new[0], operations)


def _invalid(f, operations: list) -> PatchError:
    """``operation K (OP POINTER) makes the save invalid: CODE at LOCATION: message`` for
    the finding ``f`` an edit brought, the operation the one whose pointer reaches its
    location (an F002's value typed as text gets a hint: '.8', trial 47)."""
    where, op = _operation_at(f.location, operations)
    hint = _as_json_number(op.get("value")) if isinstance(op, dict) and f.code == "F002" else ""
    return PatchError(f"{where} makes the save invalid: {f.code} at {f.location}: {f.message}{hint}")


def _check_identities_kept(a: Save, b: Save, operations: list) -> None:
    """Refuse a patch that gives two NPCs one slug, or the player an NPC's StableId,
    where A has no such pair (``check``'s I012): their interactions and every lookup by
    slug would collide, and the what-if listed an NPC "absent" and its conversations
    moved to the other (trial 49: '/npcs/17/slug=lera-sessik')."""
    recorded, edited = FindingSink(), FindingSink()
    check_identities(a, recorded)
    check_identities(b, edited)
    seen = {f.message for f in recorded.items}
    for f in edited.items:
        if f.message not in seen:
            raise _invalid(f, operations)


def _npcs_edited_away(a: Save, b: Save, changed_from: int, changed_to: int) -> dict:
    """NPC -> ``changed_from`` for each NPC that A's changed entries name (removed, or
    now about another NPC): its recorded scores and stresses after the edit no longer
    follow, so B derives them anew from there (``Recompute.pending``). An entry about it
    that B changes in place is derived anew anyway."""
    ja = a.journal
    a_to = max(changed_from, len(ja) - (len(b.journal) - changed_to))
    out = {}
    for i in range(changed_from, a_to):
        target = getattr(ja.data[i], "target", None) if ja.kinds[i] is not None else None
        if isinstance(target, int) and target in a.npcs:
            out.setdefault(target, changed_from)
    return out


#: Rules whose finding on an edited entry means the edit made the journal invalid (an
#: event about no NPC of the save, a tick out of order or after the save, a speaker or
#: fact id that cannot be), not a consequence to report.
_INVALIDATING = frozenset({"I010", "J001", "J002", "J004", "K001"})


def _check_replay_valid(a: Playthrough, b: Playthrough, changed_from: int, changed_to: int, operations: list,
                        anywhere: bool = False) -> None:
    """Refuse a patch whose edited entries break a rule of ``_INVALIDATING`` in B's replay
    where A's did not (issue 38: "a patch that makes the save invalid (with the finding)").
    ``anywhere``: the patch changed more than journal entries (the NPCs, the player), so a
    new finding at any entry counts (trial 47: ``/npcs={}`` left every entry about no NPC
    and was taken, where one entry retargeted at no NPC was refused)."""
    seen = {(f.code, f.message) for f in a.findings}
    for f in b.findings:
        if f.code not in _INVALIDATING or (f.code, f.message) in seen:
            continue
        # A J001 lands on the first entry behind the high tick; an edited entry may be either (trial 49:
        # '/journal/62/tick=6000' put 16 entries after it behind and was taken as a what-if).
        at = (f.target.journal_index, f.target.previous_journal_index) if f.target is not None else ()
        if anywhere or any(i is not None and changed_from <= i < changed_to for i in at):
            raise _invalid(f, operations)


def _check_edited_sentiments(a: Save, b: Save, changed_from: int, changed_to: int, operations: list) -> None:
    """Refuse an edit that sets a RelationshipInteraction's sentiment outside -1..1
    (save-format §5; ``check`` reports such a recorded value as R006): a value out of
    range is a bad patch, not a what-if. A recorded value left as it was is not refused."""
    ka, kb = a.journal.kinds, b.journal.kinds
    for i in range(changed_from, changed_to):
        if kb[i] != "RelationshipInteraction":
            continue
        sentiment = b.journal.data[i].sentiment
        if sentiment_in_range(sentiment) or (i < len(ka) and ka[i] == kb[i] and a.journal.data[i].sentiment == sentiment):
            continue
        where, op = _operation_at(f"journal[{i}].event.RelationshipInteraction.sentiment", operations)
        typed = op.get("value") if isinstance(op, dict) and isinstance(op.get("value"), (int, float)) else sentiment
        shown = f"{sentiment:g}" if f"{sentiment:g}" == repr(typed) else repr(typed)  # 1.0000001 read "1" with :g
        raise PatchError(f"{where}: sentiment {shown} at journal[{i}] is outside -1..1 (save-format §5; check reports it as R006)")


def _check_derived_inside(a: Save, b: Save, changed_from: int, changed_to: int, operations: list, origins) -> list:
    """Refuse a whole entry or event given with a derived field (``DERIVED_FIELDS``) that
    differs from the recorded one, as ``_check_derived`` refuses the field's own pointer:
    the replay would put its own value there without a word (trial 47: a whole event with
    delta 50 and score_after 50 showed only float noise).

    ``origins`` (``_journal_origins``) says which recorded entry each of B's entries is:
    one replaced in place (or moved, or copied) is held to the recorded values. One with
    no recorded counterpart of its kind (an ``add``, an entry of another kind put in its
    place) has no recorded value to keep: it is returned, ``[(journal index, operation
    number or None)]``, for ``_check_derived_added`` to hold to what B's replay derives."""
    ka, kb, da, db = a.journal.kinds, b.journal.kinds, a.journal.data, b.journal.data
    added = []
    for i in range(changed_from, min(changed_to, len(kb))):
        fields = DERIVED_FIELDS.get(kb[i])
        origin = origins[i]
        if not fields or origin is None:
            continue
        if isinstance(origin, _Added) or ka[origin] != kb[i]:
            added.append((i, origin.operation if isinstance(origin, _Added) else None))
            continue
        for name, (source, change) in fields.items():
            if getattr(da[origin], name) != getattr(db[i], name):
                _refuse_derived(i, kb[i], name, f"keep the recorded {_quote(getattr(da[origin], name))} and", operations)
    return added


def _check_derived_added(b: Playthrough, added: list, operations: list, tuning: Tuning) -> None:
    """Refuse an entry the patch added (``_check_derived_inside``'s ``added``) whose derived
    fields are not what B's replay derives there (``_replayed_values``, within the f32
    tolerance of save-format §1): the replay would put its own value in place of the one
    given, which ``edits`` still showed (a new-user trial: an added RelationshipInteraction's
    delta 50 became 1.0, a StressChanged's current_stress 99 became 3, without a word).
    The message gives the value to write."""
    kinds, data = b.save.journal.kinds, b.save.journal.data
    for i, k in added:
        values = _replayed_values(b, i, tuning)
        for name, value in (values or {}).items():
            given = getattr(data[i], name)
            if not close_enough(float(given), float(value)):
                shown = _quote(round(value, 6) if isinstance(value, float) else value)
                _refuse_derived(i, kinds[i], name, f"the replay derives {shown} there, not the {_quote(given)} given: write {shown}, or",
                                operations, k)


def _refuse_derived(i: int, kind: str, name: str, keep: str, operations: list, k: int | None = None) -> None:
    """Raise the ``PatchError`` of a derived field (``DERIVED_FIELDS``) given inside entry
    ``i``, for every edit of one: ``keep`` says what value to write, with the word that
    leads on to what to change instead ("and", "or"). ``k``: the operation that gave the
    entry (else the one whose pointer reaches the field)."""
    source, change = DERIVED_FIELDS[kind][name]
    where = describe(k, operations[k]) if k is not None else _operation_at(f"journal[{i}].event.{kind}.{name}", operations)[0]
    raise PatchError(f"{where}: {name} of journal[{i}] is derived by the replay from {source}: {keep} change {change} instead")


@dataclass(frozen=True)
class _Added:
    """An entry of B's journal that a patch operation put there (an ``add``, a ``move`` or
    ``copy`` from outside the journal's entries), no recorded entry: ``operation`` its
    number (None: the patch replaced the journal, or the save, as a whole)."""

    operation: int | None


#: A JSON pointer to one journal entry (``-``: past the last one, where ``add`` appends).
_ENTRY_AT = re.compile(r"/journal/(-|0|[1-9][0-9]{0,18})")
#: The operations that put, take or move whole values.
_STRUCTURAL = frozenset({"add", "remove", "move", "copy"})


def _journal_origins(a_len: int, b_len: int, changed_from: int, changed_to: int, operations: list):
    """Where each of B's journal entries came from, indexed by B's journal index: A's
    index of the recorded entry it is (in place, or moved or copied there), an ``_Added``
    for one an operation put there, or None when that cannot be told.

    Worked out from the operations that add, remove, move or copy whole entries (they
    applied, so their pointers hold); an operation inside an entry keeps its origin. When
    one replaced the journal, or the save, as a whole: B's changed entries
    (``changed_from`` to ``changed_to``) are A's in place when as many as A's, added when
    A has none there, else None."""
    structural = False
    for op in operations:
        kind = op.get("op") if isinstance(op, dict) else None
        if kind not in _STRUCTURAL and kind != "replace":
            continue
        pointers = (op.get("path"), op.get("from") if kind == "move" else None)
        if any(pointer in ("", "/journal") for pointer in pointers):  # the journal as a whole
            if a_len == b_len:
                return range(b_len)
            inserted = a_len - (b_len - changed_to) == changed_from  # A has no entry between the common prefix and suffix
            return {i: _Added(None) if inserted else None for i in range(changed_from, changed_to)}
        structural = structural or kind in _STRUCTURAL and any(isinstance(p, str) and _ENTRY_AT.fullmatch(p) for p in pointers)
    if not structural:
        return range(b_len)
    origins: list = list(range(a_len))

    def at(pointer: object, size: int) -> int | None:
        m = _ENTRY_AT.fullmatch(pointer) if isinstance(pointer, str) else None
        return None if m is None else size if m.group(1) == "-" else int(m.group(1))

    for k, op in enumerate(operations):
        kind = op.get("op") if isinstance(op, dict) else None
        if kind not in _STRUCTURAL:
            continue  # a replaced entry keeps its place (its kind says whether it is the recorded one)
        source = at(op.get("from"), len(origins)) if kind in ("move", "copy") else None
        taken = _Added(k)
        if source is not None:
            taken = origins.pop(source) if kind == "move" else origins[source]
        target = at(op.get("path"), len(origins))
        if target is None:
            continue  # into an entry, or out of the journal (a move's entry is gone)
        if kind == "remove":
            del origins[target]
        else:
            origins.insert(target, taken)
    return origins if len(origins) == b_len else {i: None for i in range(changed_from, changed_to)}


def _pointer_tokens(pointer: str) -> list[str]:
    """A JSON pointer's member names, unescaped (RFC 6901: ``~1`` is "/", ``~0`` is "~")."""
    return [jsonpointer.unescape(token) for token in pointer.split("/")[1:]]


def _tokens(text: str) -> list[str]:
    return [t for t in re.split(r"[.\[\]/]+", text) if t]


def _operation_at(location: str, operations: list) -> tuple[str, object]:
    """The operation whose pointer is the longest prefix of ``location`` (a finding's, or a
    path): how a message names it (``describe``; "the patch" when there is none) and the
    operation itself (None then)."""
    where = _tokens(location or "")
    best, found = -1, (0, None)
    for k, op in enumerate(operations):
        pointer = op.get("path", "") if isinstance(op, dict) else ""
        tokens = _pointer_tokens(pointer)
        n = 0
        while n < min(len(tokens), len(where)) and tokens[n] == where[n]:
            n += 1
        if n > best:
            best, found = n, (k, op)
    k, op = found
    return (describe(k, op) if op is not None else "the patch"), op


def _changed_span(a: Save, b: Save) -> tuple[int, int]:
    """B's journal positions ``[from, to)`` that differ from A's: after the common
    prefix and before the common suffix (an insertion shifts no entry after it)."""
    ja, jb = a.journal, b.journal
    if ja is jb:
        return len(jb), len(jb)
    na, nb = len(ja), len(jb)
    n = min(na, nb)

    def same(i: int, j: int, k: int) -> bool:  # A's entries i.. and B's j.., k of them (slices compare in C)
        return ja.data[i:i + k] == jb.data[j:j + k] and ja.ticks[i:i + k] == jb.ticks[j:j + k] and ja.kinds[i:i + k] == jb.kinds[j:j + k]

    lo = 0
    while lo < n:
        k = min(_SPAN_CHUNK, n - lo)
        if not same(lo, lo, k):
            while same(lo, lo, 1):
                lo += 1
            break
        lo += k
    if lo == na == nb:
        return nb, nb
    hi = 0
    while hi < n - lo:
        k = min(_SPAN_CHUNK, n - lo - hi)
        if not same(na - hi - k, nb - hi - k, k):
            while hi < n - lo and same(na - 1 - hi, nb - 1 - hi, 1):
                hi += 1
            break
        hi += k
    return lo, max(lo, nb - hi)


_SPAN_CHUNK = 4096


def _relevel(result: WhatIf, tuning: Tuning) -> None:
    """B's levels under the tuned bounds; ``end_levels`` where A's and B's differ."""
    c = result.comparison
    for slug, d in c.npcs.items():
        if d.b is not None and tuning.level_bounds != DEFAULT_TUNING.level_bounds:
            d = c.npcs[slug] = replace(d, b=replace(d.b, level=tuning.level_for(d.b.score)))
        if d.a is not None and d.b is not None and d.a.level is not d.b.level:
            result.end_levels[slug] = {"a": d.a.level.display_name, "b": d.b.level.display_name}
    c._differences = None


@dataclass(frozen=True)
class _Shift:
    """Where an entry the edit left alone sits in each journal: A's (``a_len`` entries)
    and B's (``b_len``), which differ only at B's positions ``[changed_from, changed_to)``
    (``_changed_span``); an insertion or a removal moves every entry after it."""

    a_len: int
    b_len: int
    changed_from: int
    changed_to: int

    def to_a(self, i: int) -> int | None:
        """A's index of B's entry ``i``; None for an entry the edit changed (or added)."""
        if i < self.changed_from:
            return i
        return i - (self.b_len - self.a_len) if i >= self.changed_to else None

    def to_b(self, i: int) -> int | None:
        """B's index of A's entry ``i``; None for an entry the edit changed (or removed)."""
        if i < self.changed_from:
            return i
        return i + (self.b_len - self.a_len) if i >= self.a_len - (self.b_len - self.changed_to) else None


def _recorded_faults(a: Playthrough, shift: _Shift) -> frozenset:
    """B's journal indices of the entries where A's replay found the walk-away rule broken
    (T004: a penalty of a walk-away within the threshold, a walk-away past it with no
    penalty) and the edit left alone: ``Recompute.recorded_faults``, applied as recorded."""
    out = set()
    for f in a.replay_findings:
        if f.code != "T004" or f.target is None or f.target.journal_index is None:
            continue
        if _PENALISED_WITHIN in f.message or _PENALTY_MISSING in f.message:
            i = shift.to_b(f.target.journal_index)
            if i is not None:
                out.add(i)
    return frozenset(out)


def _faults_at(a: Playthrough, code: str) -> set[int]:
    """A's journal indices where its replay reported ``code``."""
    return {f.target.journal_index for f in a.replay_findings
            if f.code == code and f.target is not None and f.target.journal_index is not None}


def _entry(play: Playthrough, i: int, reason: str, event: str | None = None) -> dict:
    journal = play.save.journal
    return {"journal_index": i, "tick": journal.ticks[i] if 0 <= i < len(journal) else None,
            "event": event or (journal.kinds[i] if 0 <= i < len(journal) else None), "reason": reason}


def _walk_away_rule(b: Playthrough, i: int, stable_id) -> tuple[str, int, int, float] | None:
    """``(slug, walk-away ordinal, walk_away_threshold, walk_away_penalty)`` of the NPC
    in B's state after journal entry ``i`` (a walk-away, or the penalty at its tick). A
    penalty's walk-away is the one B's replay paired it with (``penalty_pairs``): with
    several at one tick, the NPC's count after the penalty is that of the tick's last."""
    versions = b.index.npcs.get(stable_id) if stable_id is not None else None
    npc = versions.at(i + 1) if versions is not None else None
    if npc is None:
        return None
    tol = npc.interaction_tolerance
    paid = b.index.penalty_pairs.get(i)
    return npc.slug, paid[1] if paid is not None else npc.walk_aways, tol.walk_away_threshold, tol.walk_away_penalty


def _decisions(result: WhatIf, a: Playthrough, b: Playthrough, rc: Recompute, shift: _Shift) -> None:
    """Recorded decisions B no longer supports, and those B calls for: the replay's own
    rules (M001 a line fired while a prerequisite fails, T004 a penalty) found in B and
    not in A, and walk-aways from an NPC whose stress is no longer over its threshold.

    Those findings are consequences of the edit, reported here and no longer as
    findings only in B (the trial read "T004 only in B: … yet it is penalised" beside
    "would not have happened" for the same penalty). A penalty's reason says what the
    walk-away rule (interaction seed: walk_away_threshold) calls for in B; a penalty is
    listed as not happening exactly where B's replay did not apply it
    (``Recompute.unapplied``), and one as happening where it applied it (``imposed``).
    A fault A's replay reported at the same entry (a line fired while a prerequisite
    failed, a penalty within the threshold) happened in the recorded run too: it is no
    consequence of the edit and stays a finding, its message as B words it."""
    c = result.comparison
    kept = []
    fired_failing = _faults_at(a, "M001")
    listed = set()
    for f in c.findings_only_b:
        target = f.target
        i = target.journal_index if target is not None else None
        within, missing = f.code == "T004" and _PENALISED_WITHIN in f.message, f.code == "T004" and _PENALTY_MISSING in f.message
        rule = _walk_away_rule(b, i, target.stable_id) if i is not None and (within or missing) else None
        if i is not None and f.code == "M001" and shift.to_a(i) not in fired_failing:
            result.would_not_happen.append(_entry(b, i, f.message))
        elif rule is not None and within and i in rc.unapplied:
            listed.add(i)
            result.would_not_happen.append(_not_penalised(b, i, rule))
        elif rule is not None and missing and i in rc.imposed:
            listed.add(i)
            result.would_happen.append(_penalised(b, i, rule))
        else:
            kept.append(f)
    for i in sorted((rc.unapplied | rc.imposed) - listed):  # their T004 reads as A's at that tick: not only in B
        rule = _walk_away_rule(b, i, getattr(b.save.journal.data[i], "target", None))
        if rule is not None and i in rc.unapplied:
            result.would_not_happen.append(_not_penalised(b, i, rule))
        elif rule is not None:
            result.would_happen.append(_penalised(b, i, rule))
    if len(kept) != len(c.findings_only_b):
        c.findings_only_b = tuple(kept)
        c._differences = None
    ia, ib = a.index, b.index
    for record in ib.transitions:
        if record.target not in _WALK_AWAYS:
            continue
        before_b = ib.npcs[record.npc].at(record.index)
        versions_a = ia.npcs.get(record.npc)
        recorded = shift.to_a(record.index)  # the same walk-away in A (None: one the edit changed)
        before_a = versions_a.at(recorded) if versions_a is not None and recorded is not None and recorded < len(a.save.journal) else None
        if before_a is None or before_b is None:
            continue
        ta, tb = before_a.tolerance, before_b.tolerance
        if ta.current_stress > ta.threshold and not tb.current_stress > tb.threshold:
            result.would_not_happen.append(_entry(b, record.index, f"{before_b.slug}: stress {tb.current_stress} is not over the threshold {tb.threshold} "
                                                  f"(as recorded: {ta.current_stress} over {ta.threshold})"))
    result.would_not_happen.sort(key=lambda e: e["journal_index"])


def _not_penalised(b: Playthrough, i: int, rule: tuple) -> dict:
    """The ``would_not_happen`` entry of WalkAwayPenalty ``i``, which B's replay did not apply."""
    slug, n, threshold, _ = rule
    return _entry(b, i, f"{slug}: walk-away #{n} is within the walk-away threshold of {threshold}: "
                        "no WalkAwayPenalty follows it")


def _penalised(b: Playthrough, i: int, rule: tuple) -> dict:
    """The ``would_happen`` entry of walk-away ``i``, which B's replay penalised."""
    slug, n, threshold, penalty = rule
    return _entry(b, i, f"{slug}: walk-away #{n} is past the walk-away threshold of {threshold}: "
                        f"a WalkAwayPenalty of {penalty:g} would follow", "WalkAwayPenalty")


def _crossing_ticks(index: TimelineIndex, sid: int) -> list[tuple[int, int, bool]]:
    """(position, tick, now over) of each change of ``stress > threshold`` of one NPC."""
    versions = index.npcs.get(sid)
    out = []
    if versions is None:
        return out
    over = False  # before the first state: an NPC over its threshold from the start crosses at position 0
    for position, npc in zip(versions.positions, versions.values):
        now = npc.tolerance.current_stress > npc.tolerance.threshold
        if now != over:
            out.append((position, index.tick_at_position(position), now))
        over = now
    return out


def _next_conversation(index: TimelineIndex, sid: int, position: int, threshold: int) -> int | None:
    """The journal index of the NPC's first InteractionStarted after ``position``, when its
    stress is still over ``threshold`` there; None when it has no later conversation or
    is no longer over."""
    created = index.interactions_created.get(sid, ())
    k = bisect_left(created, position + 1)
    if k == len(created):
        return None
    start = created[k] - 1  # the journal index of the entry that started it
    npc = index.npcs[sid].at(start)
    return start if npc is not None and npc.tolerance.current_stress > threshold else None


def _walked_away(index: TimelineIndex, sid: int, start: int) -> bool:
    """True when the conversation the NPC started at journal index ``start`` ended in a
    walk-away in the journal (WalkedAway, or ConflictAbandoned after a confrontation)."""
    moves = index.transitions_by_npc.get(sid, [])
    k = bisect_left(moves, start, key=lambda move: move.index)
    for move in moves[k + 1:]:
        if move.source is None:  # the next conversation began: this one never ended
            return False
        if move.target in _WALK_AWAYS:
            return True
        if not move.target.in_progress:
            return False
    return False


def _up_to(result: WhatIf, tick: int | None) -> None:
    """Keep the decisions that would (not) happen at or before ``tick`` (``whatif
    --tick``: the states are compared there, so a consequence past it is not one; trial
    48 read "A and B agree" beside a penalty at a later tick, and exit 1)."""
    if tick is None:
        return
    for name in ("would_happen", "would_not_happen"):
        entries = getattr(result, name)
        setattr(result, name, [e for e in entries if e["tick"] is None or e["tick"] <= tick])


def _crossings(result: WhatIf, ia: TimelineIndex, ib: TimelineIndex, sa: Save, sb: Save, until: int | None = None) -> None:
    """Where the stress threshold crossings moved, and the crossings over it that B has
    and A has not at that tick: a walk-away would now follow from the state there.
    ``until``: only the crossings at or before this tick (``whatif --tick``)."""
    for slug in sorted({n.slug for n in sb.npcs.values()}):
        na, nb = sa.npc_by_slug(slug), sb.npc_by_slug(slug)
        if na is None or nb is None:
            continue
        ca, cb = _crossing_ticks(ia, na.stable_id), _crossing_ticks(ib, nb.stable_id)
        if until is not None:
            ca, cb = [c for c in ca if c[1] <= until], [c for c in cb if c[1] <= until]
        if [(t, o) for _, t, o in ca] == [(t, o) for _, t, o in cb]:
            continue
        result.crossings[slug] = {"a": [t for _, t, _ in ca], "b": [t for _, t, _ in cb]}
        ups_a = {t for _, t, over in ca if over}
        for position, t, over in cb:
            if over and t not in ups_a and position == 0:  # over from the start (a threshold below the initial stress)
                npc = ib.npcs[nb.stable_id].at(0)
                started = ib.interactions_created.get(nb.stable_id)
                if not started:
                    continue
                first = started[0] - 1
                said = f"{slug}: stress {npc.tolerance.current_stress} is over the threshold {npc.tolerance.threshold} from the start"
                if not _walked_away(ib, nb.stable_id, first):
                    result.would_happen.append({"journal_index": first, "tick": sb.journal.ticks[first], "event": "InteractionWalkedAway",
                                                "reason": f"{said}: a walk-away would follow at the first conversation (journal[{first}])"})
                    continue
                # The first conversation was walked away from as recorded, and its walk-away's
                # stress keeps the NPC over: the next conversation would follow as a walk-away
                # does after a walk-away's own stress (trial: evening.json, lera-sessik's threshold
                # -1 listed nothing where 0 listed that next conversation).
                following = _next_conversation(ib, nb.stable_id, started[0], npc.tolerance.threshold)
                if following is not None and not _walked_away(ib, nb.stable_id, following):
                    there = ib.npcs[nb.stable_id].at(following).tolerance.current_stress
                    result.would_happen.append({
                        "journal_index": following, "tick": sb.journal.ticks[following], "event": "InteractionWalkedAway",
                        "reason": f"{said}; the first conversation (journal[{first}]) was walked away from, as recorded, and the stress "
                                  f"is still over ({there}) at the next one: a walk-away would follow there (journal[{following}])"})
            elif over and t not in ups_a:
                npc = ib.npcs[nb.stable_id].at(position)
                kind = sb.journal.kinds[position - 1] if 0 < position <= len(sb.journal) else None
                if kind == "StressChanged" and getattr(sb.journal.data[position - 1], "cause", None) == "walk_away":
                    # Over by a walk-away's own stress: that conversation has ended; a walk-away
                    # would follow at the NPC's next one (the trial read a walk-away "following"
                    # the StressChanged of the walk-away listed as not happening).
                    following = _next_conversation(ib, nb.stable_id, position, npc.tolerance.threshold)
                    # A conversation recorded as walked away from already is no new walk-away
                    # (trial 47: the only consequence listed was one that happened anyway).
                    if following is not None and not _walked_away(ib, nb.stable_id, following):
                        result.would_happen.append({
                            "journal_index": following, "tick": sb.journal.ticks[following], "event": "InteractionWalkedAway",
                            "reason": f"{slug}: stress {npc.tolerance.current_stress} is over the threshold {npc.tolerance.threshold} once "
                                      f"journal[{position - 1}] (the stress of a walk-away, as recorded) applied: a walk-away would "
                                      f"follow at the next conversation (journal[{following}])"})
                    continue
                result.would_happen.append({"journal_index": position - 1, "tick": t, "event": "InteractionWalkedAway",
                                            "reason": f"{slug}: stress {npc.tolerance.current_stress} is over the threshold {npc.tolerance.threshold} "
                                                      f"once journal[{position - 1}] ({kind or 'an invalid entry'}) applied: a walk-away would follow"})
    result.would_happen.sort(key=lambda e: (e["tick"] if e["tick"] is not None else -1, e["journal_index"]))


#: Entries whose change moves only an NPC's numbers (score, stress, walk-away
#: penalties), never the knowledge or the dialogue a prompt is built from.
_STATE_KINDS = frozenset({"RelationshipInteraction", "WalkAwayPenalty", "StressChanged"})


def _prompt_inputs_as_recorded(a: Playthrough, b: Playthrough, changed_from: int, changed_to: int, tuning: Tuning) -> bool:
    """``_only_state``, and B's player, story and NPCs' slugs are A's: a prompt of B can
    differ from A's only through the NPC's state."""
    return (_only_state(a, b, changed_from, changed_to, tuning) and b.save.player == a.save.player and b.save.story == a.save.story
            and _same_slugs(a.save, b.save))


def _same_slugs(a: Save, b: Save) -> bool:
    """Whether B's NPCs are A's with A's slugs: the speakers' names and the interactions'
    FactIds (``interaction.SLUG_NNN``) are made from them."""
    return a.npcs.keys() == b.npcs.keys() and all(b.npcs[sid].slug == npc.slug for sid, npc in a.npcs.items())


def _only_state(a: Playthrough, b: Playthrough, changed_from: int, changed_to: int, tuning: Tuning) -> bool:
    """True when the edit can change a prompt only through the NPC's state: the prompt
    tuning is the recorded one and every changed entry (on both sides) moves numbers only."""
    if (tuning.prompt_budget, tuning.min_available, tuning.card_share) != (DEFAULT_TUNING.prompt_budget, DEFAULT_TUNING.min_available, DEFAULT_TUNING.card_share):
        return False
    ka, kb = a.save.journal.kinds, b.save.journal.kinds
    if len(ka) != len(kb):
        return False
    return all(ka[i] in _STATE_KINDS and kb[i] in _STATE_KINDS for i in range(changed_from, changed_to))


def _prompt_as_recorded(a: Playthrough, b: Playthrough, tick: int | None):
    """``compare``'s ``same_prompt`` for a what-if whose B took A's dialogue lines and
    whose edit moved only numbers (``_prompt_inputs_as_recorded``: the content, the
    snapshot, the knowledge and the prompt's budget are A's), or None: an NPC's prompt
    at the compared tick is A's when its state there is A's, its level too under each
    side's bounds (a comparison at 300 NPCs then builds A's prompts, not B's again)."""
    tick_a, tick_b = (a.last_tick, b.last_tick) if tick is None else (tick, tick)
    if tick_a != tick_b:
        return None
    pos_a, pos_b = a.index.position_for_tick(tick_a), b.index.position_for_tick(tick_b)

    def same(slug: str) -> bool:
        na, nb = a.save.npc_by_slug(slug), b.save.npc_by_slug(slug)
        if na is None or nb is None or na.stable_id != nb.stable_id:
            return False
        versions_a, versions_b = a.index.npcs.get(na.stable_id), b.index.npcs.get(nb.stable_id)
        if versions_a is None or versions_b is None:
            return False
        state_a, state_b = versions_a.at(pos_a), versions_b.at(pos_b)
        return (state_a is not None and state_a == state_b
                and a.tuning.level_for(state_a.relationship.score) is b.tuning.level_for(state_b.relationship.score))
    return same


def _npc_sections_differ(a: Playthrough, b: Playthrough, na, nb, tick: int, memory: bool) -> bool:
    """Whether an NPC's counted sections (``sections.SECTIONS``) at ``tick`` differ when
    A's NPC state there is ``na`` and B's is ``nb``, and nothing else they read does (the
    content, the snapshot and the knowledge are A's: ``_only_state``). Only the
    relationship and the NPC's state read the state as a whole; the interaction memory
    reads its ``memory_inputs`` and the knowledge, so it is compared only when ``memory``
    (a tuned weight changes ~250 000 turns at 300 NPCs, 1M events: building every
    counted section of each on both sides took 7 s)."""
    state_a = a.state_at(tick)
    ca = SectionContext(a, state_a, na, a.content.npc_name(na.slug), a.save.player.name or "Player", a.content.prompt)
    cb = SectionContext(b, state_a, nb, b.content.npc_name(nb.slug), b.save.player.name or "Player", b.content.prompt)  # B's knowledge is A's
    if memory:
        return _MEMORY.text(ca) != _MEMORY.text(cb)
    return any(spec.text(ca) != spec.text(cb) for spec in _STATE_SECTIONS)


_STATE_SECTIONS = (BY_LABEL["relationship"], BY_LABEL["npc_state"])
_MEMORY = BY_LABEL["interaction_memory"]


def _differing_states(a: Playthrough, b: Playthrough, versions_a, versions_b, ticks: list[int]) -> list:
    """For each tick of ``ticks`` (ascending), None where the NPC's state is the same on
    both sides there (its level under each side's bounds too), else ``(k_a, k_b, state_a,
    state_b)``: the numbers of the versions in force on each side (-1: none yet) and
    those versions (None: none yet). The versions are found
    as columns (a numpy bisection into the versions' ticks), and compared pair by pair
    in C (``map``): an early edit at 1M events has ~300 000 turns, most of them a pair
    of versions of their own."""
    at = tick_array(ticks)  # u64: a tick of 2^63 or past overflowed int64 (trial 47)
    ticks_a, ticks_b = a.index.version_ticks(versions_a), b.index.version_ticks(versions_b)
    ka = (np.searchsorted(ticks_a, at, "right") - 1).tolist()
    values_a, values_b = [*versions_a.values, None], [*versions_b.values, None]  # index -1: no version yet
    if np.array_equal(ticks_a, ticks_b):
        # Versions at the same ticks on both sides (an edited value, not an edited
        # event): the k-th of each are the pair at every turn they are in force, so
        # each pair is compared once (~100 000), not once a turn (~300 000).
        kb = ka
        pairs = list(map(eq, values_a, values_b))
        same = list(map(pairs.__getitem__, ka))
    else:
        kb = (np.searchsorted(ticks_b, at, "right") - 1).tolist()
        same = list(map(eq, map(values_a.__getitem__, ka), map(values_b.__getitem__, kb)))
    if a.tuning.level_bounds != b.tuning.level_bounds:  # equal states, and so scores, may still sit at two levels
        level_a, level_b = a.tuning.level_for, b.tuning.level_for
        for n in compress(range(len(same)), same):
            na = values_a[ka[n]]
            if na is not None:
                same[n] = level_a(na.relationship.score) is level_b(na.relationship.score)
    return [None if equal else (x, y, values_a[x], values_b[y]) for equal, x, y in zip(same, ka, kb)]


def _turns(b: Playthrough, start_tick: int, last_tick: int, npcs) -> dict[int, list[int]]:
    """The ticks each NPC of ``npcs`` (StableIds) spoke a line at, from ``start_tick``
    up to the first line past ``last_tick``: each tick once, in journal order. Read as
    columns (the lines' journal indices, their ticks and speakers gathered in C): a
    record or a Python step a line was 0.8 s, then 0.2 s, of an early edit's what-if
    at 1M events (~600 000 lines)."""
    dialogue = b.index.dialogue
    journal_ticks, data, index_ticks = b.save.journal.ticks, b.save.journal.data, b.index.ticks
    lo = bisect_left(range(len(dialogue)), start_tick, key=dialogue.tick_of)  # a line's tick never decreases
    lines = dialogue.lines[lo:].tolist()
    own = list(map(journal_ticks.__getitem__, lines))
    if None in own:  # a line whose tick could not be read is at the replay's tick
        own = [index_ticks[i] if t is None else t for i, t in zip(lines, own)]
    ticks = tick_array(own)
    past = np.flatnonzero(ticks > np.uint64(last_tick))
    end = int(past[0]) if past.size else len(lines)
    speakers = np.fromiter(map(_SPEAKER, map(data.__getitem__, lines[:end])), dtype=np.uint64, count=end)
    ticks = ticks[:end]
    turns = {}
    for sid in npcs:
        said = ticks[speakers == np.uint64(sid)]
        if said.size:
            turns[sid] = said[np.append(True, said[1:] != said[:-1])].tolist()
    return turns


_SPEAKER = attrgetter("speaker")


def _prompts(result: WhatIf, a: Playthrough, b: Playthrough, changed_from: int, tuning: Tuning, only_state: bool,
             until: int | None = None) -> None:
    """Each NPC's prompt at each of its lines (a turn the game asked the LLM for) from
    the first changed entry on, up to tick ``until`` (the compared tick; None: the end):
    where A's and B's texts differ it needs a new response.

    When only NPC state can differ (``only_state``: ``_prompt_inputs_as_recorded``), history and lore differ only where
    the counted sections do (they take what those leave of the budget), so a turn is
    compared by its counted sections, and only where the NPC's state or level differs;
    otherwise each turn's whole prompt is built on both sides."""
    # The NPCs' or the player's values edited in the snapshot (a threshold, a name) act from tick 0, as a tuned value
    # does (trial 47: '/npcs/17/tolerance/threshold=3' listed no prompt, the tuning name 89 turns).
    snapshot_edited = b.save.player != a.save.player or (b.save.npcs is not a.save.npcs and b.save.npcs != a.save.npcs)
    start_tick = 0 if tuning != DEFAULT_TUNING or snapshot_edited else (
        b.index.tick_at_position(changed_from + 1) if changed_from < len(b.save.journal) else None)
    if start_tick is None:
        return
    builder_a, builder_b = (None, None) if only_state else (PromptBuilder(a), PromptBuilder(b))
    slugs = {n.stable_id: n.slug for n in b.save.npcs.values()}
    last_tick = b.last_tick if until is None else until
    turns = _turns(b, start_tick, last_tick, slugs)
    for sid, ticks in sorted(turns.items(), key=lambda item: slugs[item[0]]):
        slug = slugs[sid]
        if a.save.npc_by_slug(slug) is None:
            continue
        first, count = None, 0
        sid_a = a.save.npc_by_slug(slug).stable_id
        versions_a, versions_b = a.index.npcs[sid_a], b.index.npcs[sid]
        pairs = _differing_states(a, b, versions_a, versions_b, ticks) if only_state else None
        seen: dict[tuple[int, int], bool] = {}  # a pair of versions is in force for several turns
        for n, t in enumerate(ticks):
            if only_state:
                if pairs[n] is None:
                    continue
                ka, kb, na, nb = pairs[n]
                if na is None or nb is None:
                    differs = True
                else:
                    differs = seen.get((ka, kb))
                    if differs is None:
                        differs = seen[ka, kb] = _npc_sections_differ(a, b, na, nb, t, memory=False)
                    if not differs and memory_inputs(na) != memory_inputs(nb):  # the memory reads the knowledge at t too
                        differs = _npc_sections_differ(a, b, na, nb, t, memory=True)
            else:
                differs = builder_a.build(slug, t).text != builder_b.build(slug, t).text
            if differs:
                first = t if first is None else first
                count += 1
        if count:
            result.prompts_regenerate[slug] = {"first_tick": first, "turns": count}

"""Reading typed fields out of parsed JSON with F002 findings, and the journal's shape.

``Shape`` checks one field at a time and reports a missing field, a wrong type or an
unknown enum variant at its JSON path (save-format §1-§5); ``parse_journal`` checks
every journal entry against the event table of save-format §5.
"""

from __future__ import annotations

import math
import re
from collections import deque
from dataclasses import dataclass, field
from itertools import compress, repeat
from operator import attrgetter, is_
from typing import Annotated, Literal, Optional, Union

import msgspec
from narrative_debugger.models.boundary import F32_OVERFLOW, I16, U32, U64, IntType, is_f32
from narrative_debugger.models.domain.types import KnowledgeConfidence, KnowledgeSource, KnowledgeState, RelationshipState
from narrative_debugger.models.rules.findings import FindingSink
from narrative_debugger.models.save.fastjson import decode_value, keys_below

U64_MAX = U64.high
U32_MAX = U32.high


@dataclass
class Journal:
    """The journal as parallel lists, one slot per entry in file order (save-format §5).

    Attributes:
        ticks: tick of each entry (None when the entry had no valid tick).
        kinds: variant name, or None for an entry that failed its shape check.
        data: the variant's fields as its ``EventFields`` struct (enum fields as members;
            fields save-format §5 does not list are not kept), or None.
    """

    ticks: list = field(default_factory=list)
    kinds: list = field(default_factory=list)
    data: list = field(default_factory=list)

    def __len__(self) -> int:
        return len(self.kinds)


class Shape:
    """Reads typed fields out of JSON values, reporting F002 with JSON paths."""

    def __init__(self, sink: FindingSink, label: str) -> None:
        self.sink = sink
        self.label = label

    def bad(self, path: str, what: str) -> None:
        self.sink.add("F002", f"{self.label}: {path}: {what}", path, None, None, (("problem", what),))  # positional: _Recorder

    def obj(self, value, path: str) -> dict | None:
        if isinstance(value, dict):
            return value
        self.bad(path, f"expected an object, found {kind_name(value)}")
        return None

    def _lookup(self, obj: dict, key: str, path: str, optional: bool):
        """(present, value, path) of ``obj[key]``; reports a missing required field."""
        p = f"{path}.{key}" if path else key
        if key not in obj:
            if not optional:
                self.bad(p, f"missing field '{key}'")
            return False, None, p
        value = obj[key]
        return not (value is None and optional), value, p

    def field(self, obj: dict, key: str, path: str, check, what: str, *, optional: bool = False):
        """``obj[key]`` if ``check`` accepts it; otherwise report and return None."""
        present, value, p = self._lookup(obj, key, path, optional)
        if not present:
            return None
        if check(value):
            return value
        self.bad(p, f"expected {what}, found {_describe(value)}")
        return None

    def int_of(self, obj: dict, key: str, path: str, kind: IntType):
        """``obj[key]``, an integer of the Rust type ``kind`` (save-format §2-§4).

        Not an integer: F002 and None. An integer outside ``kind`` (a u8 of 300, an
        i16 of 60 000): F002, and the value is still returned, so the range rules of
        checks.md (T001, T002) report it too, by their own codes."""
        value = self.field(obj, key, path, is_int, kind.phrase)
        if value is not None and not kind.holds(value):
            p = f"{path}.{key}" if path else key
            self.bad(p, f"expected {kind.phrase} ({kind.range_text}), found {_describe(value)}")
        return value

    def f32(self, obj: dict, key: str, path: str) -> float | None:
        """``obj[key]``, a number the game writes as an ``f32`` (save-format §1).

        Not a number, or not finite (JSON ``1e400`` reads as infinity, which no JSON
        output may carry): F002 and None. Finite but beyond the f32 range: F002, and
        the value is returned (the range rules report it too)."""
        value = self.field(obj, key, path, is_finite_num, "a finite number")
        if value is not None and not is_f32(value):
            p = f"{path}.{key}" if path else key
            self.bad(p, f"expected an f32 number, found {_describe(value)}: beyond the f32 range")
        return value

    def enum(self, obj: dict, key: str, path: str, enum_cls, *, optional: bool = False):
        """A unit enum variant (a string naming the variant)."""
        present, value, p = self._lookup(obj, key, path, optional)
        return self.variant(value, p, enum_cls) if present else None

    def variant(self, value, path: str, enum_cls):
        if isinstance(value, str):
            member = enum_cls.__members__.get(value)
            if member is not None:
                return member
            names = ", ".join(enum_cls.__members__)
            self.bad(path, f"unknown {enum_cls.__name__} variant {value!r} (expected one of {names})")
            return None
        self.bad(path, f"expected a {enum_cls.__name__} variant name, found {_describe(value)}")
        return None


def kind_name(value) -> str:
    if value is None:
        return "null"
    if isinstance(value, bool):
        return "a boolean"
    if isinstance(value, int):
        return "an integer"
    if isinstance(value, float):
        return "a number"
    if isinstance(value, str):
        return "a string"
    if isinstance(value, list):
        return "a list"
    return "an object"


def _describe(value) -> str:
    if type(value) is float and not math.isfinite(value):
        return "NaN (not a number)" if math.isnan(value) else f"a number that overflows to {value!r}"
    if isinstance(value, (int, float)) and not isinstance(value, bool):
        text = repr(value)
        if len(text) > 40:  # cut, and said so (a 41-digit integer read as 40 digits)
            return f"{kind_name(value)} of {len(text.lstrip('-')):,} digits ({text[:30]}…)"
        return f"{kind_name(value)} ({text})"
    if isinstance(value, str):
        return f"the string {value[:40]!r}"
    return kind_name(value)


def is_u64(v) -> bool:
    return type(v) is int and 0 <= v <= U64_MAX


def is_u32(v) -> bool:
    return type(v) is int and 0 <= v <= U32_MAX


def is_int(v) -> bool:
    return type(v) is int


def is_num(v) -> bool:
    return type(v) is float or type(v) is int


def is_finite_num(v) -> bool:
    return type(v) is int or (type(v) is float and math.isfinite(v))


def is_str(v) -> bool:
    return type(v) is str


def is_bool(v) -> bool:
    return type(v) is bool


def is_str_list(v) -> bool:
    return type(v) is list and all(type(x) is str for x in v)


# ----- journal event shapes (save-format §5) -----
_U64 = (is_u64, "a u64 integer")
_U32 = (is_u32, "a u32 integer")
#: Stress and its change (schema: ToleranceThreshold, i16). A whole number outside i16
#: is an F002 that keeps its entry, so the replay's T001 reports it too (checks.md).
_I16 = (I16.holds, "an i16")
_F32 = (is_f32, "a finite f32 number")
_STR = (is_str, "a string")
_BOOL = (is_bool, "a boolean")
_STRS = (is_str_list, "a list of strings")

#: variant -> ((field, (check, description) | enum class, optional), ...)
EVENT_FIELDS: dict[str, tuple] = {
    "InteractionStarted": (("target", _U64, False), ("player_initiated", _BOOL, False), ("location", _STR, False)),
    "InteractionConfrontation": (("target", _U64, False),),
    "InteractionCompleted": (("target", _U64, False), ("topics", _STRS, False)),
    "InteractionWalkedAway": (("target", _U64, False),),
    "InteractionConflictAbandoned": (("target", _U64, False),),
    "FactLearned": (("fact_id", _STR, False), ("confidence", KnowledgeConfidence, False), ("source", KnowledgeSource, False)),
    "FactUpdated": (("fact_id", _STR, False), ("confidence", KnowledgeConfidence, True), ("state", KnowledgeState, True)),
    "EntityObserved": (
        ("entity", _U64, False),
        ("confidence", KnowledgeConfidence, False),
        ("source", KnowledgeSource, False),
        ("relationship", RelationshipState, False),
    ),
    "RelationshipInteraction": (
        ("target", _U64, False),
        ("sentiment", _F32, False),
        ("message_length", _U32, False),
        ("conversation_turns", _U32, False),
        ("delta", _F32, False),
        ("score_after", _F32, False),
    ),
    "WalkAwayPenalty": (("target", _U64, False), ("penalty", _F32, False), ("score_after", _F32, False)),
    "StressChanged": (("target", _U64, False), ("delta", _I16, False), ("current_stress", _I16, False), ("cause", _STR, False)),
    "SharedReferenceAdded": (("target", _U64, False), ("kind", _STR, False), ("content", _STR, False)),
    "DialogueLine": (("speaker", _U64, False), ("text", _STR, False)),
    "MonologueFired": (("line_id", _STR, False),),
}


# ----- the clean-entry fast path of parse_journal -----
_TYPE_TESTS = {
    is_u64: "(type({v}) is int and 0 <= {v} <= %d)" % U64_MAX,
    is_u32: "(type({v}) is int and 0 <= {v} <= %d)" % U32_MAX,
    is_int: "type({v}) is int",
    I16.holds: "(type({v}) is int and %d <= {v} <= %d)" % (I16.low, I16.high),
    is_num: "(type({v}) is float or type({v}) is int)",
    is_f32: "((type({v}) is float or type({v}) is int) and -%r < {v} < %r)" % (F32_OVERFLOW, F32_OVERFLOW),
    is_str: "type({v}) is str",
    is_bool: "type({v}) is bool",
    is_str_list: "(type({v}) is list and all(type(s) is str for s in {v}))",
}


def _clean_entry_check(variant: str, spec: tuple):
    """A function ``check(fields) -> EventFields | None`` for one variant, generated
    from its ``EVENT_FIELDS`` spec: the variant's struct (enum names as members, as the
    checked path makes it) when every field is present with the right type and every
    enum field names a variant; None otherwise (the checked path then reports what is
    wrong). One generated function an entry instead of a call a field."""
    lines = ["def check(f, M=M, C=C):"]
    env: dict = {"M": _MISSING, "C": EVENT_STRUCTS[variant]}
    for k, (name, check, optional) in enumerate(spec):
        v = f"v{k}"
        lines.append(f"    {v} = f.get({name!r}, M)")
        if isinstance(check, tuple):
            test = _TYPE_TESTS[check[0]].format(v=v)
            if variant == "DialogueLine" and name == "text":
                test += f" and len({v}) <= {MAX_TEXT_CHARS}"
            lines.append(f"    if not ({test}): return None")
        else:
            env[f"E{k}"] = dict(check.__members__)
            member = f"E{k}.get({v}) if type({v}) is str else None"
            if optional:
                lines.append(f"    if {v} is not None:")
                lines.append(f"        {v} = {member}")
                lines.append(f"        if {v} is None: return None")
            else:
                lines.append(f"    {v} = {member}")
                lines.append(f"    if {v} is None: return None")
    lines.append(f"    return C({', '.join(f'v{k}' for k in range(len(spec)))})")
    exec("\n".join(lines), env)  # noqa: S102 - code built from EVENT_FIELDS only
    return env["check"]


def parse_journal(value, shape: Shape, journal: Journal | None = None, first: int = 0) -> Journal:
    """Check every journal entry against save-format §5 (F002 at its JSON path).

    Args:
        value: the decoded journal, or a piece of it.
        shape: where findings go.
        journal: a Journal to append to (a fresh one when None).
        first: the journal position of ``value``'s first entry (for the JSON paths).

    Returns:
        The Journal: per entry its tick (None if invalid), variant name (None when the
        entry failed its check) and fields with enum names replaced by members.
    """
    journal = Journal() if journal is None else journal
    if type(value) is not list:
        shape.bad("journal", f"expected a list, found {kind_name(value)}")
        return journal
    ticks, kinds, datas = journal.ticks, journal.kinds, journal.data
    bad = shape.bad
    clean = CLEAN_ENTRY_CHECKS
    for i, entry in enumerate(value, first):
        # A clean entry costs one generated check; anything else takes the checked path.
        if type(entry) is dict and len(entry) == 2:
            tick = entry.get("tick")
            event = entry.get("event")
            if type(tick) is int and 0 <= tick <= U64_MAX and type(event) is dict and len(event) == 1:
                ((variant, fields),) = event.items()
                check = clean.get(variant)
                data = check(fields) if check is not None and type(fields) is dict else None
                if data is not None:
                    ticks.append(tick)
                    kinds.append(variant)
                    datas.append(data)
                    continue
        kind = None
        data = None
        tick = None
        if type(entry) is dict and len(entry) == 2 and "tick" in entry and "event" in entry:
            tick = entry["tick"]
            event = entry["event"]
            if not is_u64(tick):
                bad(f"journal[{i}].tick", f"expected a u64 tick, found {_describe(tick)}")
                tick = None
            if type(event) is dict and len(event) == 1:
                (variant, fields), = event.items()
                spec = EVENT_FIELDS.get(variant)
                base = f"journal[{i}].event.{variant}"
                if spec is None:
                    bad(f"journal[{i}].event", f"unknown event variant {variant!r}")
                elif type(fields) is not dict:
                    bad(base, f"expected an object of fields, found {kind_name(fields)}")
                else:
                    ok = tick is not None
                    for name, check, optional in spec:
                        v = fields.get(name, _MISSING)
                        if v is _MISSING:
                            bad(f"{base}.{name}", f"missing field '{name}'")
                            ok = False
                        elif isinstance(check, tuple):
                            if not check[0](v):
                                bad(f"{base}.{name}", f"expected {check[1]}, found {_describe(v)}")
                                ok = check is _I16 and type(v) is int and ok  # kept: the range rule reports it too
                        elif v is None and optional:
                            pass
                        else:
                            member = shape.variant(v, f"{base}.{name}", check)
                            if member is None:
                                ok = False
                            else:
                                fields[name] = member
                    if ok:
                        if variant == "DialogueLine" and len(fields["text"]) > MAX_TEXT_CHARS:
                            fields["text"] = bounded(shape, fields["text"], f"{base}.text", MAX_TEXT_CHARS)
                        # Fields the variant does not define are not kept (save-format §5 lists them all).
                        kind, data = variant, EVENT_STRUCTS[variant](*(fields[name] for name, _, _ in spec))
            else:
                bad(f"journal[{i}].event", "expected an enum object with exactly one variant key"
                    + ("" if type(event) is not dict else f", found {len(event)} keys"))
        else:
            bad(f"journal[{i}]", "expected an object with exactly the fields 'tick' and 'event'")
            if type(entry) is dict and is_u64(entry.get("tick")):
                tick = entry["tick"]
        ticks.append(tick)
        kinds.append(kind)
        datas.append(data)
    return journal


_MISSING = object()


class JournalReader:
    """Reads a save's journal piece by piece while the fast decoder produces it
    (``fastjson.fast_decode``'s ``journal_reader``), so the decoded entries of a large
    save are never all in memory at once: each piece is checked by ``parse_journal``
    and its entry objects are freed.

    The F002 findings are kept as calls and made again, in order, by ``findings_into``
    when ``parse_save`` reaches the journal, so the findings and their order are the
    ones that parsing the whole journal there would give.
    """

    def __init__(self, label: str) -> None:
        self.calls: list[tuple] = []
        self.shape = Shape(_Recorder(self.calls), label)
        self.journal = Journal()
        # One str object for each distinct text of the typed pieces (``_share_texts``);
        # None once the texts seen so far hardly repeat (see ``add_text``).
        self.texts: dict[str, str] | None = {}
        self._texts_seen = 0

    def add_text(self, text: bytes, first: int) -> tuple[int, int] | None:
        """Read a piece of the journal given as JSON text (a list of entries, positions
        ``first`` on): (its number of entries, its key count for ``fastjson``'s proof),
        or None when it is nested too deep or not JSON.

        A piece whose every entry is well formed decodes straight into the event
        structs (msgspec checks the types and ranges; about half the time of decoding
        dicts and then checking them); any other piece is decoded as JSON values and
        checked entry by entry (``add_entries``), which says what is wrong.
        """
        typed = _typed_piece(text)
        if typed is not None:
            ticks, kinds, datas = typed
            if self.texts is not None:
                self._texts_seen += _share_texts(kinds, datas, self.texts)
                if self._texts_seen >= SHARE_SAMPLE and 2 * len(self.texts) > self._texts_seen:
                    self.texts = None  # most are distinct: sharing would cost time and save little
            journal = self.journal
            journal.ticks += ticks
            journal.kinds += kinds
            journal.data += datas
            return len(kinds), _checked_keys(kinds)
        entries = decode_value(text)
        size = len(entries)
        n = self.add_entries(entries, first)
        return None if n is None else (size, n)

    def add_entries(self, entries: list, first: int) -> int | None:
        """Check ``entries`` (positions ``first`` on) into the Journal, then free them.

        Returns their key count for ``fastjson``'s proof, or None when one is nested
        too deep: an entry that passed its check counts as ``_checked_keys`` says
        (fields the variant does not define are not counted: an undercount only sends
        the file to the careful parser); any other entry is walked whole.
        """
        journal = self.journal
        start = len(journal)
        parse_journal(entries, self.shape, journal, first)
        kinds = journal.kinds[start:]
        keys = _checked_keys(kinds)
        if None in kinds:
            for kind, entry in zip(kinds, entries):
                if kind is None:
                    n = keys_below(entry, 2)
                    if n is None:
                        return None
                    keys += n
        if type(entries) is list:
            entries.clear()  # the piece's raw entries: their fields are in ``journal.data`` now
        return keys

    def result(self) -> "JournalReader":
        return self

    def findings_into(self, sink: FindingSink) -> Journal:
        """Make the remembered findings in ``sink``; the Journal read."""
        for call in self.calls:
            sink.add(*call)
        return self.journal


class _Recorder:
    """A sink for ``Shape`` that keeps each finding's arguments in a list."""

    def __init__(self, calls: list) -> None:
        self.add = lambda *args: calls.append(args)


#: variant -> its generated clean-entry check (see ``_clean_entry_check``).
CLEAN_ENTRY_CHECKS = {}


#: Longest text kept from a name-like field and from a prose field; a longer one is
#: cut (F002) so a hostile save cannot stall the prompt preview or the views.
MAX_NAME_CHARS = 1_000
MAX_TEXT_CHARS = 200_000


def bounded(shape: Shape, value: str, path: str, limit: int) -> str:
    if len(value) > limit:
        shape.bad(path, f"{len(value):,} characters is not a plausible value; only the first {limit:,} are used")
        return value[:limit]
    return value


# ----- journal event values: one struct a variant (save-format §5) -----
class EventFields(msgspec.Struct, forbid_unknown_fields=True, gc=False):
    """The fields of one journal event, a struct a variant (``EVENT_STRUCTS``), with
    enum fields as members. It reads like the JSON object it came from:
    ``fields["target"]``, ``fields.get("cause")``, ``items()``, ``in``, and it equals a
    dict holding the same fields."""

    def __getitem__(self, key: str):
        try:
            return getattr(self, key)
        except (AttributeError, TypeError):
            raise KeyError(key) from None

    def get(self, key: str, default=None):
        return getattr(self, key, default) if type(key) is str else default

    def __contains__(self, key) -> bool:
        return key in self.__struct_fields__

    def __iter__(self):
        return iter(self.__struct_fields__)

    def __len__(self) -> int:
        return len(self.__struct_fields__)

    def keys(self) -> tuple[str, ...]:
        return self.__struct_fields__

    def values(self) -> list:
        return [getattr(self, name) for name in self.__struct_fields__]

    def items(self) -> list[tuple[str, object]]:
        return [(name, getattr(self, name)) for name in self.__struct_fields__]

    def __eq__(self, other) -> bool:
        if isinstance(other, dict):
            return dict(self.items()) == other
        if type(other) is not type(self):
            return NotImplemented
        return all(getattr(self, name) == getattr(other, name) for name in self.__struct_fields__)

    __hash__ = None


#: The JSON types msgspec checks as it decodes, for each field check. u64 values past
#: 2**63 - 1 fail the typed decode (msgspec bounds are i64) and take the checked path.
_U63 = Annotated[int, msgspec.Meta(ge=0, le=2**63 - 1)]
_DECODED_TYPES = {
    is_u64: _U63,
    is_u32: Annotated[int, msgspec.Meta(ge=0, le=U32_MAX)],
    is_int: int,
    I16.holds: Annotated[int, msgspec.Meta(ge=I16.low, le=I16.high)],
    is_num: Union[int, float],
    is_f32: Union[int, float],  # the range: _F32_FIELDS, after the decode
    is_str: str,
    is_bool: bool,
    is_str_list: list[str],
}


def _field_type(variant: str, name: str, check, optional: bool):
    if isinstance(check, tuple):
        if variant == "DialogueLine" and name == "text":
            return Annotated[str, msgspec.Meta(max_length=MAX_TEXT_CHARS)]
        return _DECODED_TYPES[check[0]]
    names = Literal[tuple(check.__members__)]
    return Optional[names] if optional else names


#: variant -> its EventFields struct, fields in EVENT_FIELDS order.
EVENT_STRUCTS: dict[str, type] = {
    variant: msgspec.defstruct(variant + "Fields", [(name, _field_type(variant, name, check, optional)) for name, check, optional in spec], bases=(EventFields,), forbid_unknown_fields=True, gc=False)
    for variant, spec in EVENT_FIELDS.items()
}
for _variant, _cls in EVENT_STRUCTS.items():
    _cls.__doc__ = f"The fields of a {_variant} journal event (save-format §5)."
    # Found by name, so a journal entry pickles (the open's child process hands
    # the journal to the window: models/columns).
    _cls.__module__, _cls.__qualname__ = __name__, _cls.__name__
    globals()[_cls.__name__] = _cls
del _variant, _cls

#: variant -> its number of fields (a typed piece's key count).
_FIELD_COUNTS = {variant: len(spec) for variant, spec in EVENT_FIELDS.items()}
#: struct -> ((field, enum name -> member), ...) for the fields named by enum variants.
_ENUM_FIELDS = {
    EVENT_STRUCTS[variant]: tuple((name, dict(check.__members__)) for name, check, _ in spec if not isinstance(check, tuple))
    for variant, spec in EVENT_FIELDS.items()
}
#: struct -> the names of its f32 fields, checked after a typed decode (msgspec bounds
#: them as f64 only) when the piece's text holds a number that could pass the f32 range.
_F32_FIELDS = {
    EVENT_STRUCTS[variant]: tuple(name for name, check, _ in spec if check is _F32)
    for variant, spec in EVENT_FIELDS.items()
}
#: The variants with an f32 field: only their entries are checked after a typed decode.
_WITH_F32 = frozenset(variant for variant, spec in EVENT_FIELDS.items() if _F32_FIELDS[EVENT_STRUCTS[variant]])
_WITH_ENUMS = frozenset(variant for variant, spec in EVENT_FIELDS.items() if _ENUM_FIELDS[EVENT_STRUCTS[variant]])
_KIND_NAMES = {variant.encode(): variant for variant in EVENT_FIELDS}
# An entry's variant key: '"event":{"' cannot occur inside a JSON string (a quote there
# is always escaped), and a typed entry holds no other object that could carry it.
_KIND_RE = re.compile(rb'"event":\s*\{\s*"([A-Za-z]+)"')
_Event = msgspec.defstruct("Event", [(variant, Optional[cls], None) for variant, cls in EVENT_STRUCTS.items()], forbid_unknown_fields=True, gc=False)
_Entry = msgspec.defstruct("Entry", [("tick", _U63), ("event", _Event)], forbid_unknown_fields=True, gc=False)
_PIECE = msgspec.json.Decoder(list[_Entry])


#: variant -> the names of its string fields (dialogue, ids, slugs, causes).
_TEXT_FIELDS = {variant: tuple(name for name, check, _ in spec if check is _STR) for variant, spec in EVENT_FIELDS.items()}
_TEXT_FIELDS = {variant: names for variant, names in _TEXT_FIELDS.items() if names}


#: String values a journal's reader looks at before it judges whether they repeat.
SHARE_SAMPLE = 20_000


def _share_texts(kinds: list, datas: list, shared: dict[str, str]) -> int:
    """Point the string fields of the entries at one str object for each distinct
    value (``shared``: value -> that object, kept across a journal's pieces); returns
    how many values it looked at. msgspec makes a new str for every value it decodes,
    and a journal repeats its lines, ids and causes: the generator's 1 000 000-entry
    save holds ~665 000 DialogueLine texts of a few hundred distinct values (~95 MB of
    copies). Values are unchanged; about 0.3 s at 1 000 000 entries."""
    keep = shared.setdefault
    seen = 0
    for variant in _TEXT_FIELDS.keys() & set(kinds):
        group = list(compress(datas, map(variant.__eq__, kinds)))
        for name in _TEXT_FIELDS[variant]:
            values = list(map(attrgetter(name), group))
            deque(map(setattr, group, repeat(name), map(keep, values, values)), maxlen=0)
            seen += len(values)
    return seen


def _checked_keys(kinds: list) -> int:
    """The keys of the entries that passed their check (kind not None): ``tick``,
    ``event``, the variant's key and each of its fields."""
    passed = [kind for kind in kinds if kind is not None]
    return 3 * len(passed) + sum(map(_FIELD_COUNTS.__getitem__, passed))


def _typed_piece(text: bytes) -> tuple[list, list, list] | None:
    """(ticks, kinds, fields) of a piece of journal text whose every entry is well
    formed (what ``parse_journal`` would give it, with no finding), else None."""
    try:
        entries = _PIECE.decode(text)
    except (msgspec.DecodeError, msgspec.ValidationError, RecursionError, ValueError):
        return None
    found = _KIND_RE.findall(text)
    if len(found) != len(entries):
        return None
    kinds = list(map(_KIND_NAMES.get, found))
    try:
        datas = list(map(getattr, map(attrgetter("event"), entries), kinds))
    except TypeError:  # a variant name that is none of ours
        return None
    if any(map(is_, datas, repeat(None))):  # the key found is not the variant decoded
        return None
    # The f32 fields of the entries that have any (a regex over the whole text for
    # numbers that could be out of range cost more than the decode: dialogue is full of
    # "e" followed by digits).
    for data in compress(datas, map(_WITH_F32.__contains__, kinds)):
        for name in _F32_FIELDS[type(data)]:
            if not is_f32(getattr(data, name)):
                return None  # the checked path reports it (F002)
    for data in compress(datas, map(_WITH_ENUMS.__contains__, kinds)):
        for name, members in _ENUM_FIELDS[type(data)]:
            value = getattr(data, name)
            if value is not None:
                setattr(data, name, members[value])
    return list(map(attrgetter("tick"), entries)), kinds, datas


CLEAN_ENTRY_CHECKS.update({variant: _clean_entry_check(variant, spec) for variant, spec in EVENT_FIELDS.items()})

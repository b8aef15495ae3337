"""Reading one content YAML file safely, with line:col marks (save-format §7).

Scalars resolve the YAML 1.2 way: ``no``, ``on``, ``1:30`` and bare dates stay the
strings an author typed, where YAML 1.1 would turn them into booleans, sexagesimal
numbers and dates; so do ``0x1e`` and ``0o17`` (content numbers are decimal ASCII, like
a save's, and the key that wants a number refuses the text with a C001). Anchors/aliases are limited (an alias bomb is refused), tabs and
syntax errors are reported with ``file:line:col``. Every problem is a C001 finding;
nothing raises. Mappings and lists keep where they were written (``MarkedDict``,
``MarkedList``) so later findings can name ``file:line:col``.
"""

from __future__ import annotations

import re
from pathlib import Path

import yaml
from narrative_debugger.models.boundary import NUMERAL, ConversionError, parse_int
from narrative_debugger.models.fileio import FileRefused, read_regular_file
from narrative_debugger.models.rules.findings import FindingSink

MAX_ALIASES = 100
#: A document whose nodes, with aliases expanded, number more than this is refused.
MAX_EXPANDED_NODES = 200_000
MAX_CONTENT_FILE_BYTES = 8 * 1024 * 1024
#: "tab" as a word in PyYAML's problem text ("unconstructable" holds the letters too).
_TAB_WORD = re.compile(r"\btabs?\b", re.I)
_SURROGATE = re.compile("[\ud800-\udfff]")
#: One escape of a double-quoted scalar; ``\\\\`` is matched whole so it hides what follows.
_ESCAPE = re.compile(r"\\(?:u([0-9a-fA-F]{4})|U([0-9a-fA-F]{8})|.)", re.S)


class _Loader(yaml.SafeLoader):
    """SafeLoader with YAML 1.2 core scalars, source marks and an alias limit."""

    def __init__(self, stream) -> None:
        super().__init__(stream)
        self.alias_count = 0
        #: Each key repeated in a mapping: (key, line, col, line and col of its first occurrence), 1-based.
        self.duplicate_keys: list[tuple[str, int, int, int, int]] = []

    def scan_to_next_token(self) -> None:
        """PyYAML's token skipper, with tabs as separation inside a line (YAML 1.2
        §6.2 s-separate-in-line, §6.6 comments): a tab may stand before a comment, at
        the end of a line, and after a token on the same line (``key: value\t# note``).
        A tab in indentation is still refused (§6.1), reported at its line:col."""
        if self.index == 0 and self.peek() == "\ufeff":
            self.forward()
        while True:
            length = 0
            while self.peek(length) in " \t":
                length += 1
            if "\t" in self.prefix(length) and self.peek(length) not in "#\0\r\n\x85\u2028\u2029" and not self._token_before_on_line():
                while self.peek() == " ":
                    self.forward()
                return  # a tab in indentation: the scanner reports it
            self.forward(length)
            if self.peek() == "#":
                while self.peek() not in "\0\r\n\x85\u2028\u2029":
                    self.forward()
            if self.scan_line_break():
                if not self.flow_level:
                    self.allow_simple_key = True
            else:
                return

    def _token_before_on_line(self) -> bool:
        """Whether the current line has something other than spaces and tabs before here."""
        start = self.pointer - self.column
        return start >= 0 and self.buffer[start : self.pointer].strip(" \t") != ""

    def compose_node(self, parent, index):
        if self.check_event(yaml.AliasEvent):
            self.alias_count += 1
            if self.alias_count > MAX_ALIASES:
                event = self.peek_event()
                raise yaml.YAMLError(
                    f"more than {MAX_ALIASES} aliases at line {event.start_mark.line + 1}, "
                    f"column {event.start_mark.column + 1}: refused (alias bomb)"
                )
        return super().compose_node(parent, index)

    def compose_document(self):
        node = super().compose_document()
        if self.alias_count:
            size = _expanded_size(node, {})
            if size > MAX_EXPANDED_NODES:
                raise yaml.YAMLError(f"aliases expand to more than {MAX_EXPANDED_NODES} nodes: refused (alias bomb)")
        return node

    def construct_scalar(self, node):
        """A scalar's text; one holding a UTF-16 surrogate is refused at its escape.

        PyYAML turns the escape ``\\ud800`` in a double-quoted scalar into a lone
        surrogate: a string that is not Unicode text and cannot be written as UTF-8, so no
        report, output or prompt could hold it. libyaml refuses every surrogate escape
        ("invalid Unicode character escape code"), and so does this loader (C001)."""
        value = super().construct_scalar(node)
        if isinstance(value, str) and _SURROGATE.search(value):
            raise yaml.constructor.ConstructorError(None, None, *self._surrogate_escape(node))
        return value

    def _surrogate_escape(self, node) -> tuple[str, yaml.Mark]:
        """The problem text and the mark of the first surrogate escape in ``node``'s source."""
        raw = self.buffer[node.start_mark.index : node.end_mark.index]
        for match in _ESCAPE.finditer(raw):
            digits = match.group(1) or match.group(2)
            if digits and 0xD800 <= int(digits, 16) <= 0xDFFF:
                index = node.start_mark.index + match.start()
                line = self.buffer.count("\n", 0, index)
                column = index - (self.buffer.rfind("\n", 0, index) + 1)
                mark = yaml.Mark(node.start_mark.name, index, line, column, None, None)
                return f"the escape {match.group(0)} is a UTF-16 surrogate, not a character; YAML readers refuse it", mark
        return "the text holds a UTF-16 surrogate, not a character", node.start_mark

    def construct_mapping(self, node, deep=False):
        seen: set = set()
        marks = {}
        first = {}  # key -> (line, col) of its first occurrence
        for key_node, _ in node.value:
            key = self.construct_object(key_node, deep=deep)
            if isinstance(key, (str, int, float, bool)) or key is None:
                if key in seen:
                    self.duplicate_keys.append((str(key), key_node.start_mark.line + 1, key_node.start_mark.column + 1, *first[key]))
                else:
                    first[key] = (key_node.start_mark.line + 1, key_node.start_mark.column + 1)
                seen.add(key)
                marks[key] = (key_node.start_mark.line + 1, key_node.start_mark.column + 1)
        mapping = MarkedDict(super().construct_mapping(node, deep=deep))
        mapping.mark = (node.start_mark.line + 1, node.start_mark.column + 1)
        mapping.key_marks = marks
        return mapping

    def construct_sequence(self, node, deep=False):
        seq = MarkedList(super().construct_sequence(node, deep=deep))
        seq.mark = (node.start_mark.line + 1, node.start_mark.column + 1)
        seq.item_marks = [(n.start_mark.line + 1, n.start_mark.column + 1) for n in node.value]
        return seq


def _expanded_size(node, memo: dict) -> int:
    """Nodes in ``node`` with every alias expanded, computed without expanding (memoised)."""
    key = id(node)
    if key in memo:
        return memo[key]
    memo[key] = 1  # guards recursive structures
    if isinstance(node, yaml.MappingNode):
        size = 1 + sum(_expanded_size(k, memo) + _expanded_size(v, memo) for k, v in node.value)
    elif isinstance(node, yaml.SequenceNode):
        size = 1 + sum(_expanded_size(v, memo) for v in node.value)
    else:
        size = 1
    memo[key] = size
    return size


class MarkedDict(dict):
    """A YAML mapping that remembers where it and its keys stand (line, col; 1-based)."""

    mark: tuple[int, int] = (1, 1)
    key_marks: dict = {}


class MarkedList(list):
    """A YAML sequence that remembers where it and its items stand (line, col; 1-based)."""

    mark: tuple[int, int] = (1, 1)
    item_marks: list = []


# YAML 1.2 core schema resolvers instead of YAML 1.1's.
_Loader.yaml_implicit_resolvers = {}
for _tag, _regex, _first in (
    ("tag:yaml.org,2002:null", r"^(?:~|null|Null|NULL|)$", ["~", "n", "N", ""]),
    ("tag:yaml.org,2002:bool", r"^(?:true|True|TRUE|false|False|FALSE)$", list("tTfF")),
    ("tag:yaml.org,2002:int", r"^[-+]?[0-9]+$", list("-+0123456789")),
    (
        "tag:yaml.org,2002:float",
        r"^(?:[-+]?(?:\.[0-9]+|[0-9]+(?:\.[0-9]*)?)(?:[eE][-+]?[0-9]+)?|[-+]?\.(?:inf|Inf|INF)|\.(?:nan|NaN|NAN))$",
        list("-+0123456789."),
    ),
):
    _Loader.add_implicit_resolver(_tag, re.compile(_regex), _first)
def _construct_int(loader, node) -> int:
    """A decimal YAML integer (the resolver matches ASCII digits only), read through
    ``boundary.parse_int`` as a ``NUMERAL``: the key that holds it checks its range (a
    token budget past u64 is C001 there). Content numbers are decimal ASCII, like a
    save's: the YAML 1.2 core schema's ``0x1e`` and ``0o17`` resolve to text, which the
    key then refuses as not a number. A numeral of more than ``MAX_NUMERAL_CHARS``
    characters (or an explicit ``!!int 0x10``) is C001 at its place, never ``int``'s
    4 300-digit ValueError."""
    text = loader.construct_scalar(node)
    sign = -1 if text.startswith("-") else 1
    try:
        return sign * parse_int(text.lstrip("+-"), NUMERAL)
    except ConversionError as exc:
        raise yaml.constructor.ConstructorError(None, None, f"the integer {exc}", node.start_mark) from None


_Loader.add_constructor("tag:yaml.org,2002:int", _construct_int)
_Loader.add_constructor("tag:yaml.org,2002:map", _Loader.construct_mapping)
_Loader.add_constructor("tag:yaml.org,2002:seq", _Loader.construct_sequence)


if getattr(yaml, "__with_libyaml__", False):

    class _FastLoader(yaml.cyaml.CParser, _Loader):
        """The same loader with libyaml's scanner and parser (``yaml.cyaml.CParser``): the
        constructors, resolvers and key marks are ``_Loader``'s, run in Python.

        Used only on text where the two cannot differ (``_fast_path_ok``): no tab (the
        YAML 1.2 tab rules live in ``_Loader.scan_to_next_token``), no ``*`` (so no alias
        to count or expand) and no character YAML forbids. Any error goes back to
        ``_Loader``, whose message and line:col are the ones reported.
        """

        def __init__(self, stream) -> None:
            yaml.cyaml.CParser.__init__(self, stream)
            yaml.constructor.SafeConstructor.__init__(self)
            yaml.resolver.Resolver.__init__(self)
            self.alias_count = 0
            self.duplicate_keys = []

else:  # pragma: no cover - PyYAML built without libyaml
    _FastLoader = None


def _fast_path_ok(text: str) -> bool:
    return _FastLoader is not None and "\t" not in text and "*" not in text and not yaml.reader.Reader.NON_PRINTABLE.search(text)


def _load_fast(text: str):
    """``(value, duplicate keys)`` through libyaml, or None when ``_Loader`` must decide."""
    if not _fast_path_ok(text):
        return None
    loader = _FastLoader(text)
    try:
        return loader.get_single_data(), loader.duplicate_keys
    except Exception:  # noqa: BLE001 - any failure is reported by the careful loader
        return None
    finally:
        loader.dispose()


def load_yaml(path: Path, root: Path, sink: FindingSink):
    """Parse one YAML file safely; report C001 with ``file:line:col`` and return None on failure."""
    rel = path.relative_to(root).as_posix() if path.is_relative_to(root) else str(path)
    try:
        data = read_regular_file(path, MAX_CONTENT_FILE_BYTES)
    except FileRefused as exc:  # missing, a FIFO, a device, a folder, too large
        sink.add("C001", f"{rel}: {exc}", f"{rel}:1:1")
        return None
    try:
        text = data.decode("utf-8-sig")
    except UnicodeDecodeError as exc:
        line = data[: exc.start].count(b"\n") + 1
        start = data.rfind(b"\n", 0, exc.start) + 1
        col = len(data[start : exc.start].decode("utf-8-sig" if start == 0 else "utf-8")) + 1  # what precedes it reads (trial 47: always 1)
        sink.add("C001", f"{rel}: not UTF-8 (byte offset {exc.start})", f"{rel}:{line}:{col}")
        return None
    fast = _load_fast(text)
    value, duplicates = fast if fast is not None else _load_careful(text, rel, sink)
    for key, line, col, first_line, first_col in duplicates:
        # The location names the file and the repeated key's place: the message says the
        # rest, once (it began with the file too: "d.yaml:2:1  d.yaml: the key …").
        sink.add("C001", f"the key {key!r} appears twice in one mapping (first at {first_line}:{first_col}); the last value is used",
                 f"{rel}:{line}:{col}")
    return value


def _load_careful(text: str, rel: str, sink: FindingSink) -> tuple:
    """``(value, duplicate keys)`` through the pure-Python ``_Loader``; ``(None, [])``
    after reporting C001 with ``file:line:col`` when the text does not parse."""
    try:
        loader = _Loader(text)
    except yaml.reader.ReaderError as exc:  # a character YAML forbids (NUL, most C0 controls)
        head = text[: exc.position]
        line, col = head.count("\n") + 1, exc.position - (head.rfind("\n") + 1) + 1
        sink.add("C001", f"{rel}: does not parse: the character U+{exc.character:04X} is not allowed in YAML", f"{rel}:{line}:{col}")
        return None, []
    try:
        value = loader.get_single_data()
    except yaml.MarkedYAMLError as exc:
        mark = exc.problem_mark or exc.context_mark
        where = f"{rel}:{mark.line + 1}:{mark.column + 1}" if mark else f"{rel}:1:1"
        problem = exc.problem or "invalid YAML"
        if "recursive" in problem:  # a: &a [*a]
            problem = "an alias refers to a node that holds it (a recursive alias): content cannot loop back on itself"
        elif "\t" in problem or "\\t" in problem or _TAB_WORD.search(problem):
            problem += " (YAML does not allow tabs for indentation)"
        sink.add("C001", f"{rel}: does not parse: {problem}", where)
        return None, []
    except (yaml.YAMLError, RecursionError, ValueError, TypeError, MemoryError) as exc:
        sink.add("C001", f"{rel}: does not parse: {exc}", f"{rel}:1:1")
        return None, []
    finally:
        loader.dispose()
    return value, loader.duplicate_keys


def text_of(value) -> str:
    """A YAML scalar as the text an author typed (None: empty; booleans: true/false)."""
    if value is None:
        return ""
    if isinstance(value, bool):
        return "true" if value else "false"
    return str(value)


def location_of(rel: str, obj, key=None) -> str:
    """``file:line:col`` of ``obj`` (of its ``key``, or a list's item ``key``, when given and
    marked); 1:1 when unknown."""
    if key is not None and isinstance(obj, MarkedDict) and key in obj.key_marks:
        line, col = obj.key_marks[key]
    elif isinstance(key, int) and isinstance(obj, MarkedList) and 0 <= key < len(obj.item_marks):
        line, col = obj.item_marks[key]  # a list's item: its own place
    elif isinstance(obj, (MarkedDict, MarkedList)):
        line, col = obj.mark
    else:
        line, col = 1, 1
    return f"{rel}:{line}:{col}"


def each_mapping(items: list, rel: str, sink: FindingSink, what: str):
    """``(i, item)`` for each mapping of the YAML list ``items``; any other item is C001
    (``"{rel}: {what} is not a mapping"``, ``what`` formatted with ``n``, its number from
    1) and left out. The content's lists of records (story cards, monologue lines) are
    read so."""
    for i, item in enumerate(items):
        if isinstance(item, dict):
            yield i, item
        else:
            sink.add("C001", f"{rel}: {what.format(n=i + 1)} is not a mapping", location_of(rel, items))


def str_list(value) -> list[str]:
    """A YAML list of scalars as texts (nested lists and mappings skipped); a scalar as one item."""
    if value is None:
        return []
    if isinstance(value, list):
        return [text_of(v) for v in value if v is not None and not isinstance(v, (dict, list))]
    return [text_of(value)]


def rel_path(root: Path, path: Path) -> str:
    """``path`` relative to the content folder, with forward slashes (how findings name files)."""
    return path.relative_to(root).as_posix()

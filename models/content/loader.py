"""Reading the game's content folder (save-format §7) with PyYAML safe loading.

The loader resolves scalars the YAML 1.2 way: ``no``, ``on``, ``1:30`` and bare
dates stay the strings an author typed, where YAML 1.1 would turn them into booleans,
sexagesimal numbers and dates. Anchors/aliases are limited (an alias bomb is refused),
tabs and syntax errors are reported with ``file:line:col``. Every problem is a C-code
finding; nothing raises, and content that could be read is kept.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from pathlib import Path

import yaml
from narrative_debugger.models.domain.knowledge import FACT_ID_RE, SLUG_RE
from narrative_debugger.models.domain.types import InteractionState, KnowledgeConfidence
from narrative_debugger.models.fileio import FileRefused, read_regular_file
from narrative_debugger.models.rules.findings import Finding, FindingSink

MAX_ALIASES = 100
#: A document whose nodes, with aliases expanded, number more than this is refused.
MAX_EXPANDED_NODES = 200_000
MAX_CONTENT_FILE_BYTES = 8 * 1024 * 1024
DEFAULT_BUDGET = 8192
DEFAULT_MAX_OUTPUT = 300


class _Loader(yaml.SafeLoader):
    """SafeLoader with YAML 1.2 core scalars, source marks and an alias limit."""

    def __init__(self, stream) -> None:
        super().__init__(stream)
        self.alias_count = 0
        self.duplicate_keys: list[tuple[str, int, int]] = []

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

    def construct_mapping(self, node, deep=False):
        seen: set = set()
        marks = {}
        for key_node, _ in node.value:
            key = self.construct_object(key_node, deep=deep)
            if isinstance(key, (str, int, float, bool)) or key is None:
                if key in seen:
                    self.duplicate_keys.append((str(key), key_node.start_mark.line + 1, key_node.start_mark.column + 1))
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
    ("tag:yaml.org,2002:int", r"^(?:[-+]?[0-9]+|0o[0-7]+|0x[0-9a-fA-F]+)$", list("-+0123456789")),
    (
        "tag:yaml.org,2002:float",
        r"^(?:[-+]?(?:\.[0-9]+|[0-9]+(?:\.[0-9]*)?)(?:[eE][-+]?[0-9]+)?|[-+]?\.(?:inf|Inf|INF)|\.(?:nan|NaN|NAN))$",
        list("-+0123456789."),
    ),
):
    _Loader.add_implicit_resolver(_tag, re.compile(_regex), _first)
def _construct_int(loader, node) -> int:
    text = loader.construct_scalar(node)
    sign = -1 if text.startswith("-") else 1
    digits = text.lstrip("+-")
    if digits.startswith(("0x", "0o")):
        return sign * int(digits[2:], 16 if digits[1] == "x" else 8)
    return sign * int(digits, 10)


_Loader.add_constructor("tag:yaml.org,2002:int", _construct_int)
_Loader.add_constructor("tag:yaml.org,2002:map", _Loader.construct_mapping)
_Loader.add_constructor("tag:yaml.org,2002:seq", _Loader.construct_sequence)


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
        sink.add("C001", f"{rel}: not UTF-8 (byte offset {exc.start})", f"{rel}:{line}:1")
        return None
    try:
        loader = _Loader(text)
    except yaml.reader.ReaderError as exc:  # a character YAML forbids (NUL, most C0 controls)
        head = text[: exc.position]
        line, col = head.count("\n") + 1, exc.position - (head.rfind("\n") + 1) + 1
        sink.add("C001", f"{rel}: does not parse: the character U+{exc.character:04X} is not allowed in YAML", f"{rel}:{line}:{col}")
        return None
    try:
        value = loader.get_single_data()
    except yaml.MarkedYAMLError as exc:
        mark = exc.problem_mark or exc.context_mark
        where = f"{rel}:{mark.line + 1}:{mark.column + 1}" if mark else f"{rel}:1:1"
        problem = exc.problem or "invalid YAML"
        if "\t" in problem or "\\t" in problem or "tab" in problem:
            problem += " (YAML does not allow tabs for indentation)"
        sink.add("C001", f"{rel}: does not parse: {problem}", where)
        return None
    except (yaml.YAMLError, RecursionError, ValueError, TypeError, MemoryError) as exc:
        sink.add("C001", f"{rel}: does not parse: {exc}", f"{rel}:1:1")
        return None
    finally:
        loader.dispose()
    for key, line, col in loader.duplicate_keys:
        sink.add("C001", f"{rel}: the key {key!r} appears twice in one mapping; the last value is used", f"{rel}:{line}:{col}")
    return value


@dataclass(frozen=True, slots=True)
class NpcProfile:
    """An NPC profile ``npcs/<slug>.yaml``: who the NPC is for the prompt and the scene."""

    slug: str
    name: str
    pronouns: str = ""
    description: str = ""
    triggers: tuple[str, ...] = ()
    threshold: int | None = None
    file: str = ""


@dataclass(frozen=True, slots=True)
class StoryCard:
    """A lore entry (``lore/*.yaml``): comma-separated literal ``keys`` that put ``entry`` in the prompt."""

    id: str
    name: str
    keys: str
    entry: str
    file: str = ""

    def key_list(self) -> list[str]:
        """The non-empty keys, stripped and lowercased (context builder: case-insensitive)."""
        return [k.strip().lower() for k in self.keys.split(",") if k.strip()]


@dataclass(frozen=True, slots=True)
class FactPrerequisite:
    """``facts`` item of a monologue prerequisite (schema §5.4): the fact at least this sure."""

    fact_id: str
    min_confidence: KnowledgeConfidence


@dataclass(frozen=True, slots=True)
class InteractionPrerequisite:
    """The ``interaction`` prerequisite of schema §6: at least ``min_count`` interactions
    with ``target_slug`` (in ``state`` when given)."""

    target_slug: str
    state: InteractionState | None = None
    min_count: int = 1


@dataclass(frozen=True, slots=True)
class MonologueLine:
    """One monologue line of a pool (schema §5.4): id, text, trigger, prerequisites, tags."""

    id: str
    text: str
    trigger: str = ""
    facts: tuple[FactPrerequisite, ...] = ()
    interaction: InteractionPrerequisite | None = None
    tags: tuple[str, ...] = ()
    pool: str = ""
    location: str = ""


@dataclass(frozen=True, slots=True)
class PromptConfig:
    """``prompt.yaml``: the fixed prompt text and the budget (tokens)."""

    narrator_prompt: str = ""
    ai_instructions: str = ""
    canon_rules: tuple[str, ...] = ()
    forbidden_status_changes: tuple[tuple[str, str], ...] = ()
    context_token_budget: int = DEFAULT_BUDGET
    max_output_tokens: int = DEFAULT_MAX_OUTPUT
    encoding: str = "cl100k_base"


@dataclass
class Content:
    """A content folder as far as it could be read.

    Attributes:
        root: the folder (read-only).
        prompt: prompt.yaml.
        topics, locations: the known topic ids and location slugs.
        fact_categories: FactId categories the content declares in
            ``global/enums/fact_categories.yaml`` (optional; used by C004).
        npcs: slug -> NpcProfile.
        monologues: line id -> MonologueLine (first definition wins on C005).
        cards: story cards in file order.
        findings: C001..C005 findings.
    """

    root: Path | None = None
    prompt: PromptConfig = field(default_factory=PromptConfig)
    topics: frozenset[str] = frozenset()
    locations: frozenset[str] = frozenset()
    fact_categories: frozenset[str] = frozenset()
    npcs: dict[str, NpcProfile] = field(default_factory=dict)
    monologues: dict[str, MonologueLine] = field(default_factory=dict)
    cards: list[StoryCard] = field(default_factory=list)
    findings: list[Finding] = field(default_factory=list)

    def npc_name(self, slug: str) -> str:
        """The NPC's display name, falling back to the slug made readable."""
        profile = self.npcs.get(slug)
        if profile and profile.name:
            return profile.name
        return slug.replace("-", " ").title()


def _text(value) -> str:
    if value is None:
        return ""
    if isinstance(value, bool):
        return "true" if value else "false"
    return str(value)


def _where(rel: str, obj, key=None) -> str:
    if key is not None and isinstance(obj, MarkedDict) and key in obj.key_marks:
        line, col = obj.key_marks[key]
    elif isinstance(obj, (MarkedDict, MarkedList)):
        line, col = obj.mark
    else:
        line, col = 1, 1
    return f"{rel}:{line}:{col}"


def _str_list(value) -> list[str]:
    if value is None:
        return []
    if isinstance(value, list):
        return [_text(v) for v in value if v is not None and not isinstance(v, (dict, list))]
    return [_text(value)]


def load_content(root: Path) -> Content:
    """Read a content folder (save-format §7). Never raises; problems are findings.

    Missing files are allowed (an empty topic list, no lore); a missing folder gives
    a C001 finding and empty content.
    """
    root = Path(root)
    sink = FindingSink()
    content = Content(root=root)
    if not root.is_dir():
        sink.add("C001", f"content folder {root} does not exist", f"{root}:1:1")
        content.findings = sink.close()
        return content
    content.prompt = _load_prompt(root, sink)
    content.topics = frozenset(_load_list(root, root / "global" / "enums" / "topics.yaml", sink))
    content.locations = frozenset(_load_list(root, root / "global" / "locations.yaml", sink))
    content.fact_categories = frozenset(_load_list(root, root / "global" / "enums" / "fact_categories.yaml", sink))
    for path in sorted((root / "npcs").glob("*.yaml")) + sorted((root / "npcs").glob("*.yml")):
        profile = _load_npc(root, path, sink)
        if profile is not None:
            content.npcs[profile.slug] = profile
    for path in sorted((root / "lore").glob("*.y*ml")):
        content.cards.extend(_load_cards(root, path, sink))
    from narrative_debugger.models.content.monologue import load_pool  # local import: monologue imports content types

    for path in sorted((root / "monologues").glob("*.y*ml")):
        for line in load_pool(root, path, sink):
            if line.id in content.monologues:
                first = content.monologues[line.id]
                sink.add("C005", f"monologue line id {line.id!r} is defined twice (first at {first.location})", line.location)
                continue
            content.monologues[line.id] = line
    content.findings = sink.close()
    return content


def _rel(root: Path, path: Path) -> str:
    return path.relative_to(root).as_posix()


def _load_prompt(root: Path, sink: FindingSink) -> PromptConfig:
    path = root / "prompt.yaml"
    if not path.exists():
        return PromptConfig()
    data = load_yaml(path, root, sink)
    rel = _rel(root, path)
    if data is None:
        return PromptConfig()
    if not isinstance(data, dict):
        sink.add("C001", f"{rel}: expected a mapping at the top", _where(rel, data))
        return PromptConfig()
    canon = data.get("campaign_canon") or {}
    rules: list[str] = []
    forbidden: list[tuple[str, str]] = []
    if isinstance(canon, dict):
        rules = [r for r in _str_list(canon.get("rules")) if r.strip()]
        for item in canon.get("forbidden_status_changes") or []:
            if isinstance(item, dict) and item.get("from") and item.get("to"):
                forbidden.append((_text(item["from"]), _text(item["to"])))

    def positive_int(key: str, default: int) -> int:
        v = data.get(key, default)
        if isinstance(v, int) and not isinstance(v, bool) and v > 0:
            return v
        sink.add("C001", f"{rel}: {key} must be a positive whole number of tokens, found {v!r}; using {default}", _where(rel, data, key))
        return default

    def text(key: str) -> str:
        value = data.get(key)
        if value is None or isinstance(value, str):
            return (value or "").strip()
        sink.add("C001", f"{rel}: {key} must be text, found {type(value).__name__}; left out of the prompt", _where(rel, data, key))
        return ""

    encoding = _text(data.get("encoding") or "cl100k_base")
    if encoding not in ("cl100k_base", "o200k_base"):
        sink.add("C001", f"{rel}: encoding {encoding!r} is not offered (cl100k_base or o200k_base); using cl100k_base", _where(rel, data, "encoding"))
        encoding = "cl100k_base"
    return PromptConfig(
        narrator_prompt=text("narrator_prompt"),
        ai_instructions=text("ai_instructions"),
        canon_rules=tuple(rules),
        forbidden_status_changes=tuple(forbidden),
        context_token_budget=positive_int("context_token_budget", DEFAULT_BUDGET),
        max_output_tokens=positive_int("max_output_tokens", DEFAULT_MAX_OUTPUT),
        encoding=encoding,
    )


def _load_list(root: Path, path: Path, sink: FindingSink) -> list[str]:
    if not path.exists():
        return []
    data = load_yaml(path, root, sink)
    if data is None:
        return []
    if isinstance(data, dict):  # tolerate {topics: [...]}
        for value in data.values():
            if isinstance(value, list):
                data = value
                break
    if not isinstance(data, list):
        rel = _rel(root, path)
        sink.add("C001", f"{rel}: expected a list of ids", _where(rel, data))
        return []
    return [_text(v) for v in data if isinstance(v, (str, int, float))]


def _load_npc(root: Path, path: Path, sink: FindingSink) -> NpcProfile | None:
    rel = _rel(root, path)
    slug = path.stem
    if not SLUG_RE.fullmatch(slug):
        sink.add("C002", f"{rel}: the file name {slug!r} is not a kebab-case slug (like kael-davan)", f"{rel}:1:1")
    before = len(sink.items)
    data = load_yaml(path, root, sink)
    if data is None:
        if len(sink.items) == before:  # empty file, not a parse error
            sink.add("C002", f"{rel}: the NPC profile is empty (it needs at least a name)", f"{rel}:1:1")
        return None
    if not isinstance(data, dict):
        sink.add("C002", f"{rel}: an NPC profile must be a mapping with at least a name", _where(rel, data))
        return None
    for key in ("pronouns", "description"):
        if data.get(key) is not None and not isinstance(data[key], str):
            sink.add("C002", f"{rel}: {key} must be text, found {type(data[key]).__name__}; ignored", _where(rel, data, key))
            data[key] = ""
    name = data.get("name")
    if not isinstance(name, str) or not name.strip():
        sink.add("C002", f"{rel}: the NPC profile has no name", _where(rel, data, "name" if "name" in data else None))
        name = ""
    tolerance = data.get("tolerance")
    threshold = tolerance.get("threshold") if isinstance(tolerance, dict) else None
    return NpcProfile(
        slug=slug,
        name=name.strip(),
        pronouns=_text(data.get("pronouns")).strip(),
        description=_text(data.get("description")).strip(),
        triggers=tuple(t.lower() for t in _str_list(data.get("triggers")) if t.strip()),
        threshold=threshold if isinstance(threshold, int) and not isinstance(threshold, bool) else None,
        file=rel,
    )


def _load_cards(root: Path, path: Path, sink: FindingSink) -> list[StoryCard]:
    rel = _rel(root, path)
    data = load_yaml(path, root, sink)
    if data is None:
        return []
    items = data if isinstance(data, list) else [data] if isinstance(data, dict) else None
    if items is None:
        sink.add("C001", f"{rel}: expected a story card or a list of story cards", _where(rel, data))
        return []
    cards = []
    for i, item in enumerate(items):
        if not isinstance(item, dict):
            sink.add("C001", f"{rel}: story card {i + 1} is not a mapping", _where(rel, items))
            continue
        card_id = _text(item.get("id")) or f"{path.stem}-{i + 1}"
        keys = item.get("keys")
        keys = ", ".join(_str_list(keys)) if isinstance(keys, list) else _text(keys)
        cards.append(StoryCard(card_id, _text(item.get("name")) or card_id, keys, _text(item.get("entry")).strip(), rel))
    return cards


def fact_category(fact_id: str) -> str | None:
    """The ``category`` of a well-formed FactId, else None."""
    if FACT_ID_RE.fullmatch(fact_id):
        return fact_id.split(".", 1)[0]
    return None

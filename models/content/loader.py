"""Reading the game's content folder (save-format §7): prompt, enums, NPCs, lore, monologues.

Each file is read with :func:`~narrative_debugger.models.content.yaml_io.load_yaml`
(PyYAML safe loading, YAML 1.2 scalars, alias limits, ``file:line:col`` marks); the
monologue pools with :mod:`~narrative_debugger.models.content.monologue`. Every problem
is a C-code finding; nothing raises, and content that could be read is kept.
"""

from __future__ import annotations

import os
from dataclasses import dataclass, field
from pathlib import Path

from narrative_debugger.models.boundary import I16, U64, ConversionError, check_int
from narrative_debugger.models.content.files import list_content
from narrative_debugger.models.content.lore import StoryCard, load_cards
from narrative_debugger.models.content.monologue import MonologueLine, load_pool
from narrative_debugger.models.content.text_values import check_one_line, kind_of, scalar_text
from narrative_debugger.models.content.yaml_io import load_yaml, location_of, rel_path, str_list, text_of
from narrative_debugger.models.domain.knowledge import FACT_ID_RE, SLUG_RE
from narrative_debugger.models.rules.findings import Finding, FindingSink, Target

DEFAULT_BUDGET = 8192
DEFAULT_MAX_OUTPUT = 300


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
        cards: story cards in file order (the first card of an id wins on C008).
        findings: C001..C012 findings (C006, C009, C011 from ``files.list_content``).
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


#: What a content folder holds (save-format §7), its file and its folders: a folder with
#: none of them is most likely the wrong one (a save's own folder, ``npcs/`` itself, an empty one).
CONTENT_FILES = ("prompt.yaml",)
CONTENT_FOLDERS = ("npcs", "monologues", "lore", "global")
CONTENT_ENTRIES = CONTENT_FILES + CONTENT_FOLDERS


def not_content_reason(root: Path) -> str | None:
    """Why ``root`` does not look like a content folder, or None when it has at least
    one of ``CONTENT_ENTRIES`` (or does not exist, or cannot be listed: ``load_content``
    reports those, C001 and C006)."""
    root = Path(root)
    try:
        if root.is_dir():
            with os.scandir(root):  # one that cannot be listed is C006's to report, not a guess here
                pass
        if (not root.is_dir() or any((root / name).is_file() for name in CONTENT_FILES)
                or any((root / name).is_dir() for name in CONTENT_FOLDERS)):  # a file named npcs is no content
            return None
    except OSError:
        return None
    return f"{root} has none of {', '.join(CONTENT_ENTRIES)}: is it a content folder?"


def load_content(root: Path) -> Content:
    """Read a content folder (save-format §7). Never raises; problems are findings.

    Missing files are allowed (no lore, no locations), but a missing or empty
    ``prompt.yaml`` and a missing or empty ``npcs/`` are C012 warnings (the prompt goes
    without them), and so is a missing or empty ``global/enums/topics.yaml`` or
    ``fact_categories.yaml`` (I009 is skipped, C004 knows only the saves' categories:
    ``ENUM_FILES``); a missing folder gives a C001 finding and empty content. Only the files ``files.list_content`` lists are
    read; what it leaves out is a finding (C006, C009, C011). Two profiles for one
    slug give C007 (the ``.yaml`` one is read), two story cards with one id C008 (the
    first is kept), two monologue lines with one id C005 (the first is kept).
    """
    root = Path(root)
    sink = FindingSink()
    content = Content(root=root)
    if not root.is_dir():
        sink.add("C001", f"content folder {root} does not exist", f"{root}:1:1")
        content.findings = sink.close()
        return content
    files = list_content(root, sink)
    named = files.named
    content.prompt = _load_prompt(root, named.get("prompt.yaml"), sink)
    _report_missing(files, sink)
    content.topics = frozenset(_load_enum(root, files, "global/enums/topics.yaml", sink))
    content.locations = frozenset(_load_list(root, named.get("global/locations.yaml"), sink))
    content.fact_categories = frozenset(_load_enum(root, files, "global/enums/fact_categories.yaml", sink))
    profile_files: dict[str, str] = {}  # slug -> the profile file read for it
    for path in files.pools["npcs"]:
        rel = rel_path(root, path)
        if path.stem in profile_files:  # kael-davan.yaml and kael-davan.yml: .yaml sorts first
            sink.add("C007", f"{rel}: a second profile for {path.stem!r}, not read; {profile_files[path.stem]} is the one used", f"{rel}:1:1")
            continue
        profile_files[path.stem] = rel
        profile = _load_npc(root, path, sink)
        if profile is not None:
            content.npcs[profile.slug] = profile
    card_ids: dict[str, str] = {}
    for path in files.pools["lore"]:
        for card, location in load_cards(root, path, sink):
            if card.id in card_ids:
                sink.add("C008", f"story card id {card.id!r} is defined twice (first at {card_ids[card.id]}); this one is left out of the prompt", location)
                continue
            card_ids[card.id] = location
            content.cards.append(card)
    for path in files.pools["monologues"]:
        for line in load_pool(root, path, sink):
            if line.id in content.monologues:
                first = content.monologues[line.id]
                sink.add("C005", f"monologue line id {line.id!r} is defined twice (first at {first.location})", line.location)
                continue
            content.monologues[line.id] = line
    content.findings = sink.close()
    return content


#: What the prompt goes without when prompt.yaml gives nothing (C012's message).
_NO_PROMPT = (f"the prompt has no narrator prompt, AI instructions or campaign canon, and uses the default budget "
              f"of {DEFAULT_BUDGET} tokens (and {DEFAULT_MAX_OUTPUT} for the reply)")


#: The enum files (save-format §7) and what goes unchecked without them (C012's message).
ENUM_FILES = {
    "global/enums/topics.yaml": "interaction topics are not checked against a list (I009 is skipped)",
    "global/enums/fact_categories.yaml": ("the fact categories that prerequisites name are checked only against "
                                          "those the saves use (C004 knows no others)"),
}


def _load_enum(root: Path, files, rel: str, sink: FindingSink) -> list[str]:
    """The ids of the enum file ``rel``, with a C012 (warning) when it is missing or lists
    no id: the check that uses it (``ENUM_FILES``) would otherwise be skipped in silence
    (issue 35). Nothing when the content folder or ``global/enums/`` could not be listed
    (C006 says so), or when the file could not be read (its C001, C002 or C009 says so)."""
    path = files.named.get(rel)
    if path is None:
        folder = rel.rsplit("/", 1)[0]
        if files.listed and rel not in files.seen and not files.unlisted & {"global", folder}:
            sink.add("C012", f"{rel} is missing: {ENUM_FILES[rel]}", f"{rel}:1:1", target=Target("file", file=rel, line=1, col=1))
        return []
    before = len(sink.items)
    ids = _load_list(root, path, sink)
    if not ids and len(sink.items) == before:  # empty, only comments, or []: nothing to check against
        sink.add("C012", f"{rel} lists no id: {ENUM_FILES[rel]}", f"{rel}:1:1", target=Target("file", file=rel, line=1, col=1))
    return ids


def _report_missing(files, sink: FindingSink) -> None:
    """C012 (warning) for a missing ``prompt.yaml`` and a missing or empty ``npcs/``:
    the prompt and the scene go without them, which must not pass as "0 warnings"
    (issue 35). Nothing when the content folder could not be listed (C006 says so)."""
    if not files.listed:
        return
    if "prompt.yaml" not in files.seen:
        sink.add("C012", f"prompt.yaml is missing: {_NO_PROMPT}", "prompt.yaml:1:1", target=Target("file", file="prompt.yaml", line=1, col=1))
    if "npcs" not in files.seen:
        sink.add("C012", "npcs/ is missing: no NPC has a profile, so the prompt has no NPC descriptions and names are made from slugs",
                 "npcs:1:1", target=Target("file", file="npcs", line=1, col=1))
    elif not files.pools["npcs"] and not any(f.location.split(":", 1)[0].split("/", 1)[0] == "npcs" for f in sink.items):
        sink.add("C012", "npcs/ holds no NPC profile (npcs/<slug>.yaml): the prompt has no NPC descriptions and names are made from slugs",
                 "npcs:1:1", target=Target("file", file="npcs", line=1, col=1))


def _load_prompt(root: Path, path: Path | None, sink: FindingSink) -> PromptConfig:
    if path is None:
        return PromptConfig()
    before = len(sink.items)
    data = load_yaml(path, root, sink)
    rel = rel_path(root, path)
    if data is None:
        if len(sink.items) == before:  # empty (or only comments), not a parse error
            sink.add("C012", f"{rel} is empty: {_NO_PROMPT}", f"{rel}:1:1", target=Target("file", file=rel, line=1, col=1))
        return PromptConfig()
    if not isinstance(data, dict):
        sink.add("C001", f"{rel}: expected a mapping at the top", location_of(rel, data))
        return PromptConfig()
    rules, forbidden = _canon(data, rel, sink)

    def positive_int(key: str, default: int) -> int:
        v = data.get(key, default)
        try:
            if check_int(v, U64) > 0:  # counted as u64, like ticks; decimal ASCII digits only
                return v
            why = "found 0"
        except ConversionError as exc:
            why = str(exc)  # the value shown bounded, and the reason
        sink.add("C001", f"{rel}: {key} must be a positive whole number of tokens up to 2**64 - 1 in digits 0-9: "
                 f"{why}; using {default}", location_of(rel, data, key))
        return default

    def text(key: str) -> str:
        value = data.get(key)
        if value is None or isinstance(value, str):
            return (value or "").strip()
        sink.add("C001", f"{rel}: {key} must be text, found {type(value).__name__}; left out of the prompt", location_of(rel, data, key))
        return ""

    encoding = text_of(data.get("encoding") or "cl100k_base")
    if encoding not in ("cl100k_base", "o200k_base"):
        sink.add("C001", f"{rel}: encoding {encoding!r} is not offered (cl100k_base or o200k_base); using cl100k_base", location_of(rel, data, "encoding"))
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


def _canon(data: dict, rel: str, sink: FindingSink) -> tuple[list[str], list[tuple[str, str]]]:
    """``campaign_canon``'s rules and forbidden status changes (prompt-preview §3). What
    cannot be read is C001 with ``file:line:col`` and left out: a canon that is not a
    mapping, rules or changes that are not lists, an item that is not text, a change
    without ``from`` and ``to`` (each was dropped without a word, trial 47)."""
    canon = data.get("campaign_canon")
    if canon is None:
        return [], []
    if not isinstance(canon, dict):
        sink.add("C001", f"{rel}: campaign_canon must be a mapping (rules:, forbidden_status_changes:), found {kind_of(canon)}; left out",
                 location_of(rel, data, "campaign_canon"))
        return [], []
    rules: list[str] = []
    items = canon.get("rules")
    if items is not None and not isinstance(items, list):
        sink.add("C001", f"{rel}: campaign_canon.rules must be a list of rules, found {kind_of(items)}; left out", location_of(rel, canon, "rules"))
        items = None
    for k, item in enumerate(items or []):
        if item is None:
            sink.add("C001", f"{rel}: a campaign_canon rule is empty; left out", location_of(rel, items, k))
            continue
        text = scalar_text(item, "a campaign_canon rule", rel, items, k, sink)
        if text is not None and text.strip():
            rules.append(text)
    forbidden: list[tuple[str, str]] = []
    changes = canon.get("forbidden_status_changes")
    if changes is not None and not isinstance(changes, list):
        sink.add("C001", f"{rel}: campaign_canon.forbidden_status_changes must be a list of {{from:, to:}}, found {kind_of(changes)}; left out",
                 location_of(rel, canon, "forbidden_status_changes"))
        changes = None
    for k, item in enumerate(changes or []):
        if not isinstance(item, dict) or not item.get("from") or not item.get("to"):
            sink.add("C001", f"{rel}: a forbidden status change needs from: and to: (like from: drowned, to: alive); left out",
                     location_of(rel, item if isinstance(item, dict) else changes, None if isinstance(item, dict) else k))
            continue
        old, new = (scalar_text(item[key], f"a forbidden status change's {key}", rel, item, key, sink) for key in ("from", "to"))
        if old is not None and new is not None:
            forbidden.append((old, new))
    return rules, forbidden


def _load_list(root: Path, path: Path | None, sink: FindingSink) -> list[str]:
    if path is None:
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
        rel = rel_path(root, path)
        sink.add("C001", f"{rel}: expected a list of ids", location_of(rel, data))
        return []
    return [text_of(v) for v in data if isinstance(v, (str, int, float))]


def _load_npc(root: Path, path: Path, sink: FindingSink) -> NpcProfile | None:
    rel = rel_path(root, path)
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
        sink.add("C002", f"{rel}: an NPC profile must be a mapping with at least a name", location_of(rel, data))
        return None
    for key in ("pronouns", "description"):
        if data.get(key) is not None and not isinstance(data[key], str):
            sink.add("C002", f"{rel}: {key} must be text, found {type(data[key]).__name__}; ignored", location_of(rel, data, key))
            data[key] = ""
    name = data.get("name")
    if not isinstance(name, str) or not name.strip():
        sink.add("C002", f"{rel}: the NPC profile has no name", location_of(rel, data, "name" if "name" in data else None))
        name = ""
    name = name.strip()
    check_one_line(name, "the NPC's name", rel, data, "name", sink)
    threshold = _threshold(rel, data, sink)
    return NpcProfile(
        slug=slug,
        name=name,
        pronouns=text_of(data.get("pronouns")).strip(),
        description=text_of(data.get("description")).strip(),
        triggers=tuple(t.lower() for t in str_list(data.get("triggers")) if t.strip()),
        threshold=threshold,
        file=rel,
    )


def _threshold(rel: str, data: dict, sink: FindingSink) -> int | None:
    """``tolerance.threshold`` of a profile as an i16 (ToleranceThreshold, save-format §4),
    or None when absent. Anything else (``３０``, ``3_0``, ``0x1e``, ``.nan``, ``30.5``,
    ``"30"``, out of range, a ``tolerance`` that is not a mapping) is a C001 at its place."""
    tolerance = data.get("tolerance")
    if tolerance is None:
        return None
    if not isinstance(tolerance, dict):
        sink.add("C001", f"{rel}: tolerance must be a mapping (like tolerance: {{threshold: 40}}), found {type(tolerance).__name__}; ignored",
                 location_of(rel, data, "tolerance"))
        return None
    value = tolerance.get("threshold")
    if value is None:
        return None
    try:
        return check_int(value, I16)
    except ConversionError as exc:
        sink.add("C001", f"{rel}: tolerance.threshold must be a whole number {I16.range_text} in digits 0-9: {exc}; ignored",
                 location_of(rel, tolerance, "threshold"))
        return None


def fact_category(fact_id: str) -> str | None:
    """The ``category`` of a well-formed FactId, else None."""
    if FACT_ID_RE.fullmatch(fact_id):
        return fact_id.split(".", 1)[0]
    return None

"""Content folder reader for the save generator (standard library only).

The generator plays the part of the game, so it reads the same content folder the
game ships (save-format §7): NPC profiles, topics, locations and monologue pools.
It must not depend on third-party packages, so this module carries a small reader
for the block-style YAML subset the content folder uses: block mappings and
sequences, one-line flow sequences and mappings, quoted and plain scalars, and
``|`` / ``>`` block scalars. A plain scalar that YAML 1.1 would read as something
other than a decimal number, a bool or null (``050``, ``2024-05-01``, ``1:20``)
is refused, so authors quote it.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from pathlib import Path
from typing import Any

CONFIDENCE_RANK = {"Suspects": 0, "KnowsOf": 1, "KnowsDetails": 2, "Direct": 3}
"""Knowledge confidence order, lowest first (schema seed §2)."""

PREREQ_CONFIDENCE = {
    "suspects": "Suspects",
    "knows_of": "KnowsOf",
    "knows_details": "KnowsDetails",
    "direct": "Direct",
}
PREREQ_STATE = {
    "active": "Active",
    "completed": "Completed",
    "walked_away": "WalkedAway",
    "confrontation": "Confrontation",
    "conflict_abandoned": "ConflictAbandoned",
}

_INT = re.compile(r"[-+]?(0|[1-9][0-9]*)$")
_FLOAT = re.compile(r"[-+]?([0-9]+\.[0-9]*|\.[0-9]+)([eE][-+][0-9]+)?$")
_AMBIGUOUS = re.compile(
    r"[-+]?0[0-9_]+$"  # YAML 1.1 octal
    r"|[-+]?[0-9][0-9_]*(\.[0-9_]*)?([eE][-+][0-9]+)?$"  # digits with underscores
    r"|[0-9]{4}-[0-9]{1,2}-[0-9]{1,2}"  # a date or timestamp
    r"|[-+]?[0-9][0-9_]*(:[0-5]?[0-9])+(\.[0-9_]*)?$"  # base 60
    r"|[-+]?\.(inf|nan)$|[-+]?0[xob][0-9a-f_]+$|[yn]$",
    re.IGNORECASE,
)
_BOOLS = {"true": True, "yes": True, "on": True, "false": False, "no": False, "off": False}


def _strip_comment(text: str) -> str:
    quote = ""
    for i, ch in enumerate(text):
        if quote:
            if ch == quote:
                quote = ""
        elif ch in "\"'" and (i == 0 or text[i - 1] in " [{,:"):
            quote = ch
        elif ch == "#" and (i == 0 or text[i - 1] in " \t"):
            return text[:i].rstrip()
    return text.rstrip()


def _split_flow(body: str) -> list[str]:
    parts, depth, quote, start = [], 0, "", 0
    for i, ch in enumerate(body):
        if quote:
            quote = "" if ch == quote else quote
        elif ch in "\"'":
            quote = ch
        elif ch in "[{":
            depth += 1
        elif ch in "]}":
            depth -= 1
        elif ch == "," and depth == 0:
            parts.append(body[start:i].strip())
            start = i + 1
    tail = body[start:].strip()
    if tail:
        parts.append(tail)
    return parts


def _find_colon(text: str) -> int:
    quote = ""
    for i, ch in enumerate(text):
        if quote:
            quote = "" if ch == quote else quote
        elif ch in "\"'" and i == 0:
            quote = ch
        elif ch == ":" and (i + 1 == len(text) or text[i + 1] == " "):
            return i
    return -1


def scalar(text: str) -> Any:
    """Reads one scalar or one-line flow collection.

    Args:
        text: the value text, comment already removed.

    Returns:
        The Python value (str, int, float, bool, None, list or dict).

    Raises:
        ValueError: for a plain scalar YAML 1.1 would read ambiguously.
    """
    text = text.strip()
    if text.startswith('"'):
        body = text[1:-1]
        return re.sub(r'\\(["\\/nt]|u[0-9a-fA-F]{4})', _unescape, body)
    if text.startswith("'"):
        return text[1:-1].replace("''", "'")
    if text.startswith("["):
        return [scalar(p) for p in _split_flow(text[1:-1])]
    if text.startswith("{"):
        out = {}
        for part in _split_flow(text[1:-1]):
            cut = _find_colon(part)
            out[scalar(part[:cut])] = scalar(part[cut + 1:])
        return out
    low = text.lower()
    if low in ("", "~", "null"):
        return None
    if low in _BOOLS:
        return _BOOLS[low]
    if _INT.match(text):
        return int(text)
    if _FLOAT.match(text):
        return float(text)
    if _AMBIGUOUS.match(text):
        raise ValueError(f"ambiguous plain scalar {text!r}: quote it")
    return text


def _unescape(match: re.Match) -> str:
    code = match.group(1)
    return {'"': '"', "\\": "\\", "/": "/", "n": "\n", "t": "\t"}.get(
        code, chr(int(code[1:], 16)) if code.startswith("u") else code
    )


class _Reader:
    """Indentation-driven reader over the lines of one YAML document."""

    def __init__(self, text: str) -> None:
        self.raw = text.splitlines()
        self.lines: list[tuple[int, str, int]] = []
        for number, line in enumerate(self.raw):
            body = _strip_comment(line)
            if body.strip() and body.strip() != "---":
                self.lines.append((len(body) - len(body.lstrip(" ")), body.strip(), number))
        self.pos = 0

    def parse(self) -> Any:
        if not self.lines:
            return None
        value = self._block(self.lines[0][0])
        if self.pos != len(self.lines):
            raise ValueError(f"line {self.lines[self.pos][2] + 1}: unexpected indentation")
        return value

    def _block(self, indent: int) -> Any:
        text = self.lines[self.pos][1]
        if text == "-" or text.startswith("- "):
            return self._sequence(indent)
        return self._mapping(indent)

    def _sequence(self, indent: int) -> list:
        items = []
        while self.pos < len(self.lines):
            ind, text, number = self.lines[self.pos]
            if ind != indent or not (text == "-" or text.startswith("- ")):
                break
            rest = text[1:].strip()
            if not rest:
                self.pos += 1
                items.append(self._child(indent))
            elif _find_colon(rest) > 0 and not rest.startswith(("[", "{", '"', "'")):
                self.lines[self.pos] = (indent + 2, rest, number)
                items.append(self._mapping(indent + 2))
            else:
                self.pos += 1
                items.append(scalar(rest))
        return items

    def _mapping(self, indent: int) -> dict:
        out: dict = {}
        while self.pos < len(self.lines):
            ind, text, number = self.lines[self.pos]
            if ind != indent or text.startswith("- ") or text == "-":
                break
            cut = _find_colon(text)
            if cut <= 0:
                raise ValueError(f"line {number + 1}: expected 'key: value'")
            key, value = scalar(text[:cut]), text[cut + 1:].strip()
            self.pos += 1
            if value[:1] in ("|", ">"):
                out[key] = self._block_scalar(number, indent, value)
            elif value:
                out[key] = scalar(value)
            else:
                out[key] = self._child(indent, allow_same=True)
        return out

    def _child(self, indent: int, allow_same: bool = False) -> Any:
        if self.pos >= len(self.lines):
            return None
        ind, text, _ = self.lines[self.pos]
        same_seq = allow_same and ind == indent and (text == "-" or text.startswith("- "))
        if ind > indent or same_seq:
            return self._block(ind)
        return None

    def _block_scalar(self, number: int, indent: int, header: str) -> str:
        body: list[str] = []
        index = number + 1
        while index < len(self.raw):
            line = self.raw[index]
            if line.strip() and len(line) - len(line.lstrip(" ")) <= indent:
                break
            body.append(line)
            index += 1
        while self.pos < len(self.lines) and self.lines[self.pos][2] < index:
            self.pos += 1
        while body and not body[-1].strip():
            body.pop()
        if not body:
            return ""
        margin = min(len(b) - len(b.lstrip(" ")) for b in body if b.strip())
        rows = [b[margin:] if b.strip() else "" for b in body]
        if header[0] == "|":
            text = "\n".join(rows)
        else:
            text = ""
            for i, row in enumerate(rows):
                if not row:
                    text += "\n"
                elif i and rows[i - 1]:
                    text += " " + row
                else:
                    text += row
        return text if header.endswith("-") else text + "\n"


def load_yaml(path: Path) -> Any:
    """Reads one content YAML file written in the supported subset.

    Args:
        path: the file to read (UTF-8).

    Returns:
        The document as plain Python values.
    """
    return _Reader(path.read_text(encoding="utf-8")).parse()


@dataclass(frozen=True)
class NpcProfile:
    """An NPC content profile (``npcs/<slug>.yaml``).

    Attributes:
        slug: content slug, the profile file name.
        name: display name.
        threshold: stress threshold (stress points).
        tolerance_ranges: ``interaction_tolerance`` fields, each a value or a
            ``[low, high]`` range to draw per playthrough.
    """

    slug: str
    name: str
    threshold: int
    tolerance_ranges: dict


@dataclass(frozen=True)
class Prerequisites:
    """Monologue prerequisites (schema seed §6).

    Attributes:
        facts: ``(fact_id, minimum confidence name)`` pairs.
        interaction: ``(npc slug, InteractionState name or None, min_count)`` or None.
    """

    facts: tuple[tuple[str, str], ...]
    interaction: tuple[str, str | None, int] | None


@dataclass(frozen=True)
class MonologueLine:
    """One monologue line of a pool."""

    id: str
    pool: str
    trigger: str
    prerequisites: Prerequisites


@dataclass(frozen=True)
class Content:
    """What the generator needs from a content folder."""

    npcs: dict[str, NpcProfile]
    topics: tuple[str, ...]
    locations: tuple[str, ...]
    monologues: tuple[MonologueLine, ...]


def _prerequisites(raw: dict | None) -> Prerequisites:
    raw = raw or {}
    facts = tuple(
        (item["fact_id"], PREREQ_CONFIDENCE[item["min_confidence"]])
        for item in raw.get("facts") or ()
    )
    inter = raw.get("interaction")
    interaction = None
    if inter:
        state = inter.get("state")
        interaction = (
            inter["target"].split(":", 1)[1],
            PREREQ_STATE[state] if state else None,
            int(inter.get("min_count", 1)),
        )
    return Prerequisites(facts, interaction)


def load_content(content_dir: Path) -> Content:
    """Loads the parts of a content folder the generator plays by.

    Args:
        content_dir: the ``content/`` folder (save-format §7).

    Returns:
        The parsed content, NPCs keyed by slug in file-name order.
    """
    npcs = {}
    for path in sorted((content_dir / "npcs").glob("*.yaml")):
        raw = load_yaml(path)
        npcs[path.stem] = NpcProfile(
            path.stem, raw["name"], int(raw["tolerance"]["threshold"]),
            dict(raw["interaction_tolerance"]),
        )
    lines = []
    for path in sorted((content_dir / "monologues").glob("*.yaml")):
        for raw in load_yaml(path) or ():
            lines.append(MonologueLine(
                raw["id"], path.stem, raw.get("trigger", ""),
                _prerequisites(raw.get("prerequisites")),
            ))
    return Content(
        npcs=npcs,
        topics=tuple(load_yaml(content_dir / "global" / "enums" / "topics.yaml")),
        locations=tuple(load_yaml(content_dir / "global" / "locations.yaml")),
        monologues=tuple(lines),
    )

"""Story cards (save-format §7 ``lore/<name>.yaml``: id, name, keys ("boat, harbor"), entry).

A card enters the prompt when one of its comma-separated keys occurs in the story text
(the context builder seed's ``match_cards``). Each problem is a C-code finding; nothing
raises, and what could be read is kept.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

from narrative_debugger.models.content.text_values import check_one_line, kind_of, odd_characters, scalar_text
from narrative_debugger.models.content.yaml_io import each_mapping, load_yaml, location_of, rel_path, text_of
from narrative_debugger.models.rules.findings import FindingSink


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
        return [key.lower() for key in split_keys(self.keys)]


def split_keys(text: str) -> list[str]:
    """The keys of a card's comma-separated ``keys`` text, stripped, blanks left out
    (context builder seed: keys are comma-separated; an empty one never matches)."""
    return [key.strip() for key in text.split(",") if key.strip()]


def load_cards(root: Path, path: Path, sink: FindingSink) -> list[tuple[StoryCard, str]]:
    """The story cards of one lore file, each with its ``file:line:col``."""
    rel = rel_path(root, path)
    data = load_yaml(path, root, sink)
    if data is None:
        return []
    items = data if isinstance(data, list) else [data] if isinstance(data, dict) else None
    if items is None:
        sink.add("C001", f"{rel}: expected a story card or a list of story cards", location_of(rel, data))
        return []
    cards = []
    for i, item in each_mapping(items, rel, sink, "story card {n}"):
        card_id = scalar_text(item.get("id"), "a story card's id", rel, item, "id", sink) or f"{path.stem}-{i + 1}"
        keys = _card_keys(item, card_id, rel, sink)
        name = scalar_text(item.get("name"), f"story card {card_id}'s name", rel, item, "name", sink)
        if name:
            check_one_line(name, f"story card {card_id}'s name", rel, item, "name", sink)
        entry = scalar_text(item.get("entry"), f"story card {card_id}'s entry", rel, item, "entry", sink)
        card = StoryCard(card_id, name or card_id, keys, (entry or "").strip(), rel)
        cards.append((card, location_of(rel, item, "id" if "id" in item else None)))
    return cards


#: How a card's keys are written (save-format §7), and how a card says it never triggers
#: (the sample's reference-only card, lore/town.yaml the-tallyman), for the findings that say it.
_KEYS_EXAMPLE = 'keys are comma-separated words, like keys: "boat, harbor"; a card kept only for reference has keys: ""'


def _card_keys(item: dict, card_id: str, rel: str, sink: FindingSink) -> str:
    """A story card's ``keys`` as the comma-separated text ``StoryCard.keys`` holds
    (save-format §7 ``keys ("boat, harbor")``; the context builder seed's ``match_cards``).

    A YAML list (``keys: [boat, harbor]``) is read as the list of keys, an item a key. Each
    problem is C001 at its ``file:line:col`` (a list's item at its own): an item that is a
    list or a mapping is left out; an item holding a comma is read as the keys on either
    side of it, as the text is; a key holding a line break, another control character or
    a direction control is used as written (it matches only story text holding the same
    characters); and a card whose keys hold no key (``keys`` missing, without a value,
    only commas and spaces, a list of blanks) can never enter a prompt. Keys written empty
    (``keys: ""`` or ``keys: []``) say the card is kept only for reference: no finding."""
    what = f"story card {card_id}"
    value = item.get("keys")
    if isinstance(value, dict):
        sink.add("C001", f"{rel}: {what}'s keys must be comma-separated text or a list of keys, found a mapping; left out",
                 location_of(rel, item, "keys"))
        return ""
    if isinstance(value, list):
        written = []
        for k, entry in enumerate(value):
            if isinstance(entry, (list, dict)):
                sink.add("C001", f"{rel}: {what}'s key {k + 1} must be text, found {kind_of(entry)}; left out",
                         location_of(rel, value, k))
                continue
            text = text_of(entry)
            pieces = split_keys(text)
            if len(pieces) > 1:
                sink.add("C001", f"{rel}: {what}'s key {text!r} holds a comma: keys are split at commas, so it is read as the "
                         f"keys {', '.join(repr(piece) for piece in pieces)}", location_of(rel, value, k))
            written.append((text, location_of(rel, value, k)))
        reported = len(written) < len(value)
    else:
        written = [(text_of(value), location_of(rel, item, "keys"))]
        reported = False
    for text, where in written:
        for key in split_keys(text):
            held = odd_characters(key)
            if held:
                sink.add("C001", f"{rel}: {what}'s key {key!r} holds {held}: a key is one line of text, with no control characters; "
                         "used as written, it matches only story text that holds the same characters", where)
    keys = ", ".join(text for text, _ in written)
    if reported or value == "" or value == [] or split_keys(keys):
        return keys
    if "keys" not in item:
        said, where = f"{what} has no keys", location_of(rel, item, "id" if "id" in item else None)
    else:
        shown = "keys: has no value" if value is None else "keys list holds no key" if isinstance(value, list) else f"keys {keys!r} hold no key"
        said, where = f"{what}'s {shown}", location_of(rel, item, "keys")
    sink.add("C001", f"{rel}: {said}: it can never enter a prompt ({_KEYS_EXAMPLE})", where)
    return keys

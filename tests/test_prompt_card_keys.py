"""Story-card keys in the prompt builder: which keys a text holds, and a card with
100 000 keys (models only, no Qt)."""

from __future__ import annotations

import json
import random
import shutil
import tracemalloc

from narrative_debugger.models.content.loader import StoryCard
from narrative_debugger.models.playthrough import Playthrough
from narrative_debugger.models.prompt.builder import PromptBuilder, match_cards
from narrative_debugger.models.prompt.card_keys import CardKeys

from tests.conftest import CONTENT, SAMPLES

#: Letters that lowercase oddly: "İ" to two characters, a capital sigma to a final one
#: at a word's end, "ẞ" to "ß"; and the key separator's neighbours.
ALPHABET = "abcdeİΣσςẞß .:-\n"


def _bits(mask: int) -> set[int]:
    return {n for n in range(mask.bit_length()) if mask >> n & 1}


def _random_keys(rng: random.Random, count: int) -> list[str]:
    return sorted({"".join(rng.choice(ALPHABET) for _ in range(rng.randint(1, 6))).strip().lower() for _ in range(count)} - {""})


def test_a_text_holds_the_keys_a_plain_search_finds_with_few_keys_or_many():
    """``CardKeys.mask`` looks each key up in a text, or, with many keys and a short
    text, each piece of the text among the keys: both are ``key in text.lower()``."""
    rng = random.Random(7)
    few = _random_keys(rng, 6)
    many = _random_keys(rng, 6000)
    texts = ["".join(rng.choice(ALPHABET.upper() + ALPHABET) for _ in range(rng.randint(0, 40))) for _ in range(400)]
    texts += ["ΟΔΟΣ", "İi", "a" * 500]
    for keys in (few, many):
        card_keys = CardKeys([StoryCard("c", "C", ", ".join(k.replace(",", "") for k in keys), "e")])
        numbers = card_keys.numbers
        assert numbers and all("\n" not in key for key in numbers)
        for text in texts:
            want = {n for key, n in numbers.items() if key in text.lower()}
            assert _bits(card_keys.mask(text)) == want, text


def test_cards_found_from_masks_are_the_cards_a_plain_search_finds():
    """``CardKeys.match`` skips a card none of whose keys is in the mask; it finds what
    ``match_cards`` finds in the window: the same cards, each with its first key that
    occurs (keys shared by cards, a key with a newline, a card without keys, a card it
    was not made with)."""
    rng = random.Random(11)
    cards = []
    for i in range(40):
        keys = _random_keys(rng, rng.randint(0, 30))
        rng.shuffle(keys)
        cards.append(StoryCard(f"c{i}", f"C{i}", ", ".join(k.replace(",", "") for k in keys), "e"))
    cards.append(StoryCard("span", "Span", "dock\nkael, nothing", "e"))
    card_keys = CardKeys(cards)
    stranger = StoryCard("new", "New", "ab, σ", "e")
    for _ in range(300):
        window = "".join(rng.choice(ALPHABET.upper() + ALPHABET) for _ in range(rng.randint(0, 60)))
        if rng.random() < 0.1:
            window += "by the DOCK\nKael said"
        shown = [*cards, stranger]
        assert card_keys.match(shown, card_keys.mask(window), window) == match_cards(shown, window), window


def _npc_lines(play: Playthrough, slug: str) -> list[str]:
    npc = play.save.npc_by_slug(slug)
    return [rec.text for rec in play.index.dialogue_with(npc.stable_id, play.last_tick)]


def test_a_card_with_100_000_keys_gives_the_same_prompt_in_tens_of_megabytes(tmp_path):
    """A story card whose keys string holds 100 000 keys: each key had a bit of its own
    (``1 << n``, n / 8 bytes: ~625 MB for the keys alone; ``prompt`` peaked at ~785 MB).
    The prompt is the one built with only the keys that can match (those in the NPC's
    dialogue, in the same order), and the builder takes tens of megabytes."""
    save = SAMPLES / "walkaway-spiral.json"
    slug = "lera-sessik"
    words = sorted({w.strip(".,!?\"'").lower() for line in _npc_lines(Playthrough.open(save, CONTENT), slug) for w in line.split()} - {""})
    rng = random.Random(3)
    spoken = rng.sample(words, 40)
    keys = [f"k{i:05d}x" for i in range(100_000 - len(spoken) - 1)]
    for word in spoken:  # spread through the list; the last key repeats the first of them
        keys.insert(rng.randrange(len(keys)), word)
    keys.append(spoken[0])

    def folder(name: str, card_keys: list[str]):
        root = tmp_path / name
        shutil.copytree(CONTENT, root)
        card = {"id": "hostile", "name": "Hostile", "keys": ", ".join(card_keys), "entry": "A card of many keys."}
        (root / "lore" / "hostile.yaml").write_text(json.dumps([card]), encoding="utf-8")  # JSON is YAML
        return root

    everything = " ".join(_npc_lines(Playthrough.open(save, CONTENT), slug)).lower()
    want_play = Playthrough.open(save, folder("few", [k for k in keys if k in everything]))
    want = PromptBuilder(want_play).build(slug, want_play.last_tick)
    assert "hostile" in [c.id for c in want.cards]

    play = Playthrough.open(save, folder("many", keys))
    assert sum(len(card.key_list()) for card in play.content.cards if card.id == "hostile") == 100_000
    tracemalloc.start()
    try:
        builder = PromptBuilder(play)
        got = builder.build(slug, play.last_tick)
        _, peak = tracemalloc.get_traced_memory()
    finally:
        tracemalloc.stop()
    assert got.text == want.text and got.total_tokens == want.total_tokens
    assert [(c.id, c.keyword, c.included, c.tokens) for c in got.cards] == [(c.id, c.keyword, c.included, c.tokens) for c in want.cards]
    assert peak < 60 * 2**20, f"{peak / 2**20:.0f} MB"

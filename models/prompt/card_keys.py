"""Which story-card keys occur in a text (context builder seed: literal, case-insensitive).

``PromptBuilder`` asks this for every history line once (the numbers of the keys a
line holds, kept with the line; an NPC's lines are listed under each key they hold) and
finds the keys of the trigger window from those lists, so a build never searches the
window for every key; ``match`` then gives what ``builder.match_cards`` gives for the
window, and skips each card none of whose keys is in the window's mask without asking
about its keys one by one.

A key is named by its number, not by a power of two: ``1 << n`` for each of a card's
100 000 keys took ~625 MB (bit ``n`` is an int of n / 8 bytes), against ~6 MB for the
numbers. A mask is at most one bit a key (12.5 KB for 100 000 keys), and 0, the common
case, costs nothing.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable

from narrative_debugger.models.content.loader import StoryCard

#: A mask with at most this many keys is made by shifts; a larger one in a bytearray
#: (each shift copies the mask made so far, so thousands of keys of a long list would
#: copy megabytes a line).
_FEW_KEYS = 32


def mask_of(numbers: list[int]) -> int:
    """The int with bit ``n`` set for each ``n`` in ``numbers`` (any order, repeats allowed)."""
    if len(numbers) <= _FEW_KEYS:
        mask = 0
        for n in numbers:
            mask |= 1 << n
        return mask
    bits = bytearray(max(numbers) // 8 + 1)
    for n in numbers:
        bits[n >> 3] |= 1 << (n & 7)
    return int.from_bytes(bits, "little")


class CardKeys:
    """The keys of a content folder's story cards, each card's kept once, and the keys
    without a newline numbered (a key in several cards has one number).

    Args:
        cards: the content's story cards.

    Attributes:
        numbers: key (stripped, lowercased: ``StoryCard.key_list``) -> its bit in a mask;
            keys with a newline are not numbered (they can span lines: ``occurs`` searches
            the window for them).
    """

    def __init__(self, cards: Iterable[StoryCard]) -> None:
        #: card -> (its keys, the mask of its numbered keys, whether it has a key with a newline)
        self._cards: dict[StoryCard, tuple[tuple[str, ...], int, bool]] = {}
        self.numbers: dict[str, int] = {}
        numbers = self.numbers
        for card in cards:
            if card in self._cards:
                continue
            keys = tuple(card.key_list())
            for key in keys:
                if "\n" not in key and key not in numbers:
                    numbers[key] = len(numbers)
            self._cards[card] = (keys, mask_of([numbers[key] for key in keys if key in numbers]), any("\n" in key for key in keys))
        self._lengths = tuple(sorted({len(key) for key in numbers}))

    def mask(self, text: str) -> int:
        """The bits of the numbered keys that occur in ``text``, case-insensitively
        (``numbers_in``'s numbers as a mask)."""
        found = self.numbers_in(text)
        return mask_of(found) if found else 0

    def numbers_in(self, text: str) -> list[int]:
        """The numbers of the numbered keys that occur in ``text``, case-insensitively
        (each at least once, in no particular order; [] when none does).

        Each key is looked for in the text, or, where that is fewer steps (many keys,
        a short text), each piece of the text as long as some key is looked up among the
        keys: a key occurs in a text exactly when one of the text's pieces of its length
        is that key, so both give the same numbers.
        """
        numbers = self.numbers
        if not numbers:
            return []
        low = text.lower()
        size = len(low)
        # (the pieces are counted only where they might be fewer: more keys than characters)
        if len(numbers) > size and sum(size - n + 1 for n in self._lengths if n <= size) < len(numbers):
            get = numbers.get
            found = [k for n in self._lengths if n <= size for k in map(get, (low[i : i + n] for i in range(size - n + 1))) if k is not None]
        else:
            found = [k for key, k in numbers.items() if key in low]
        return found

    def match(self, cards: Iterable[StoryCard], mask: int, window: str | Callable[[], str]) -> list[tuple[StoryCard, str]]:
        """``builder.match_cards(cards, window)``: (card, the key that matched first) for
        each card with a key in ``window``, in card order; ``mask`` is the window's
        numbered keys (its lines' masks joined). ``window`` may be given as a function
        that makes it: it is then made only when a key with a newline is looked for."""
        occurs = self.occurs_in(mask, window)
        out = []
        for card in cards:
            known = self._cards.get(card)
            keys, card_mask, spanning = known if known is not None else (tuple(card.key_list()), -1, True)
            if not (card_mask & mask or spanning):
                continue  # none of its keys is in the window
            for key in keys:
                if occurs(key):
                    out.append((card, key))
                    break
        return out

    def occurs_in(self, mask: int, window: str | Callable[[], str]) -> Callable[[str], bool]:
        """``occurs(key)`` for ``match_cards``: whether ``key`` (lowercased) occurs in
        ``window``, whose numbered keys are the bits of ``mask`` (the window's lines' masks
        joined); a key with a newline is searched in ``window`` itself (made then, when
        ``window`` is a function that makes it)."""
        numbers = self.numbers
        present = mask.to_bytes((mask.bit_length() + 7) // 8, "little")
        lowered: list[str] = []

        def occurs(key: str) -> bool:
            n = numbers.get(key)
            if n is None:
                if not lowered:
                    lowered.append((window if isinstance(window, str) else window()).lower())
                return key in lowered[0]
            byte = n >> 3
            return byte < len(present) and bool(present[byte] >> (n & 7) & 1)

        return occurs

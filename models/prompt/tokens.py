"""Token counting for the prompt preview, offline (prompt-preview.md, "Token counts").

The BPE tables ship in ``resources/encodings/<name>.tiktoken.gz`` (gzip of the
official ``.tiktoken`` files). :func:`get_encoder` reads one on first use, checks
the SHA-256 of the decompressed bytes against the hash tiktoken itself expects
(``tiktoken_ext/openai_public.py``), and builds a ``tiktoken.Encoding`` from it.
Nothing is loaded at import time and nothing is fetched: ``tiktoken.get_encoding``
would download the table, and ``tiktoken.load.load_tiktoken_bpe`` only reads an
uncompressed path and copies it into a cache directory, so the ``base64 rank``
lines are parsed here. Once tiktoken has built its own copy of the ranks, the
Python dict they were read into is let go (``_Encoding``, ~15 MB a process).

Counting rules, all measured in tokens:

* Text is always encoded as ordinary text. A special-token string such as
  ``<|endoftext|>`` inside a section counts as the tokens of its characters and
  never raises.
* Strings that are not valid Unicode are counted the way tiktoken repairs them:
  the string goes through UTF-16 with ``surrogatepass`` and is decoded with
  ``replace``. A valid surrogate pair becomes the character it encodes. A lone
  surrogate (``"\\ud800"``) becomes U+FFFD, which counts as one token in both
  encodings.
* Counts are exact, meaning they equal ``Encoding.encode_ordinary`` for any input.
  Long pieces without spaces (``"a" * 200_000``) are not split. tiktoken 0.13
  added a heap-based merge for pieces of 100 bytes or more, and 200 000
  characters of any kind then take well under 0.1 s. Older tiktoken releases are
  quadratic on such input, and ``tests/test_tokens.py`` checks the version floor.
"""

from __future__ import annotations

import binascii
import functools
import gzip
import hashlib
import os
import threading
import zlib
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from importlib import resources
from pathlib import Path
from types import MappingProxyType

import tiktoken

__all__ = [
    "DEFAULT_ENCODING",
    "ENCODINGS",
    "EncodingDataError",
    "TokenCounter",
    "UnknownEncodingError",
    "encoding_path",
    "get_encoder",
    "loaded_encodings",
]

#: Names of the encodings this module can load, in menu order.
ENCODINGS: tuple[str, ...] = ("cl100k_base", "o200k_base")
#: The encoding the preview counts with unless told otherwise (prompt-preview.md).
DEFAULT_ENCODING = "cl100k_base"

#: Folder holding ``<name>.tiktoken.gz``. Read at every load, so tests can point
#: it at a copy.
ENCODINGS_DIR = Path(os.fspath(resources.files("narrative_debugger.resources"))) / "encodings"

#: Texts up to this many characters have their count kept in a per-encoder LRU
#: cache. System sections are short and repeat on every tick. A long history is
#: cheap to recount and changes anyway, so it is not cached. The
#: cache holds at most 2048 x 16 384 characters.
_CACHE_MAX_TEXT_CHARS = 16_384
_CACHE_MAX_ENTRIES = 2048

#: UTF-8 continuation bytes (0b10xxxxxx), stripped from the start of a cut tail.
_UTF8_CONTINUATION_BYTES = bytes(range(0x80, 0xC0))

# Special-token ids, which tiktoken.Encoding requires. Text never encodes to
# these ids because every method here uses encode_ordinary.
_ENDOFTEXT = "<|endoftext|>"
_FIM_PREFIX = "<|fim_prefix|>"
_FIM_MIDDLE = "<|fim_middle|>"
_FIM_SUFFIX = "<|fim_suffix|>"
_ENDOFPROMPT = "<|endofprompt|>"


@dataclass(frozen=True)
class _EncodingSpec:
    """What tiktoken's ``openai_public.py`` defines for one encoding.

    The test suite compares every field with the installed tiktoken.

    Attributes:
        name: Encoding name, e.g. ``cl100k_base``.
        sha256: Hex SHA-256 of the decompressed ``.tiktoken`` file.
        pat_str: Pre-tokenizer regular expression.
        special_tokens: Special-token string -> token id.
    """

    name: str
    sha256: str
    pat_str: str
    special_tokens: Mapping[str, int]


_SPECS: Mapping[str, _EncodingSpec] = MappingProxyType(
    {
        "cl100k_base": _EncodingSpec(
            name="cl100k_base",
            sha256="223921b76ee99bde995b7ff738513eef100fb51d18c93597a113bcffe865b2a7",
            pat_str=(
                r"""'(?i:[sdmt]|ll|ve|re)|[^\r\n\p{L}\p{N}]?+\p{L}++|\p{N}{1,3}+"""
                r"""| ?[^\s\p{L}\p{N}]++[\r\n]*+|\s++$|\s*[\r\n]|\s+(?!\S)|\s"""
            ),
            special_tokens=MappingProxyType(
                {
                    _ENDOFTEXT: 100257,
                    _FIM_PREFIX: 100258,
                    _FIM_MIDDLE: 100259,
                    _FIM_SUFFIX: 100260,
                    _ENDOFPROMPT: 100276,
                }
            ),
        ),
        "o200k_base": _EncodingSpec(
            name="o200k_base",
            sha256="446a9538cb6c348e3516120d7c08b09f57c36495e2acfffe59a5bf8b0cfb1a2d",
            pat_str="|".join(
                (
                    r"""[^\r\n\p{L}\p{N}]?[\p{Lu}\p{Lt}\p{Lm}\p{Lo}\p{M}]*"""
                    r"""[\p{Ll}\p{Lm}\p{Lo}\p{M}]+(?i:'s|'t|'re|'ve|'m|'ll|'d)?""",
                    r"""[^\r\n\p{L}\p{N}]?[\p{Lu}\p{Lt}\p{Lm}\p{Lo}\p{M}]+"""
                    r"""[\p{Ll}\p{Lm}\p{Lo}\p{M}]*(?i:'s|'t|'re|'ve|'m|'ll|'d)?""",
                    r"""\p{N}{1,3}""",
                    r""" ?[^\s\p{L}\p{N}]+[\r\n/]*""",
                    r"""\s*[\r\n]+""",
                    r"""\s+(?!\S)""",
                    r"""\s+""",
                )
            ),
            special_tokens=MappingProxyType({_ENDOFTEXT: 199999, _ENDOFPROMPT: 200018}),
        ),
    }
)


class UnknownEncodingError(ValueError):
    """The encoding name is not one of :data:`ENCODINGS`."""


class EncodingDataError(RuntimeError):
    """The table file of an encoding is missing, unreadable or not the official one.

    Attributes:
        path: The file that could not be used.
    """

    def __init__(self, message: str, path: Path) -> None:
        super().__init__(message)
        self.path = path


class TokenCounter:
    """Counts, encodes and cuts text in the tokens of one tiktoken encoding.

    Every method encodes text as ordinary text (special-token strings are plain
    characters) and repairs lone surrogates as described in the module docstring.
    Instances are thread-safe and are normally obtained from :func:`get_encoder`.

    Attributes:
        name: Encoding name, e.g. ``cl100k_base``.
    """

    def __init__(self, encoding: tiktoken.Encoding) -> None:
        """Wraps a built encoding.

        Args:
            encoding: The tiktoken encoding to count with.
        """
        self.name: str = encoding.name
        self._encoding = encoding
        self._cached_count = functools.lru_cache(maxsize=_CACHE_MAX_ENTRIES)(self._count_uncached)

    def __repr__(self) -> str:
        return f"<TokenCounter {self.name!r}>"

    @property
    def encoding(self) -> tiktoken.Encoding:
        """The tiktoken encoding it counts with (shared: read it, never change it), for
        what the counter does not say itself: ``n_vocab``, ``special_tokens_set``."""
        return self._encoding

    def encode(self, text: str) -> list[int]:
        """Encodes text as ordinary text.

        Args:
            text: Any string.

        Returns:
            The token ids.
        """
        return self._encoding.encode_ordinary(text)

    def decode(self, tokens: Sequence[int]) -> str:
        """Decodes token ids back to text.

        A slice of tokens can start or end inside a multi-byte character. Those
        bytes decode to U+FFFD.

        Args:
            tokens: Token ids of this encoding.

        Returns:
            The decoded text.

        Raises:
            KeyError: An id is not a token of this encoding.
        """
        return self._encoding.decode(tokens, errors="replace")

    def count(self, text: str) -> int:
        """Counts the tokens of text.

        Counts of texts up to 16 384 characters are cached (LRU, 2048 entries).
        The preview recounts unchanged sections on every tick, and those repeat
        counts come from the cache.

        Args:
            text: Any string.

        Returns:
            The number of tokens. This equals ``len(encode(text))``.
        """
        if len(text) <= _CACHE_MAX_TEXT_CHARS:
            return self._cached_count(text)
        return self._count_uncached(text)

    def count_many(self, texts: Iterable[str]) -> list[int]:
        """Counts the tokens of each text, in order.

        Each text goes through :meth:`count` and its cache. tiktoken's
        ``encode_ordinary_batch`` is not used: it starts a thread pool on every
        call, which makes a prompt's few short sections several times slower; it
        only breaks even on texts far longer than a prompt.

        Args:
            texts: Strings to count.

        Returns:
            One token count per text.
        """
        return [self.count(text) for text in texts]

    def truncate_to_last(self, text: str, budget: int) -> tuple[str, bool]:
        """Keeps the end of text that fits in a token budget.

        This is the history rule of prompt-preview.md (section 7, ``history``):
        when the newest line alone exceeds the budget, it is cut to its last
        tokens. The cut falls on a token boundary. Bytes of a character split by
        that boundary are dropped, so the result is a suffix of the text (after
        the surrogate repair) and gains no U+FFFD. Re-encoding a suffix can merge
        differently at its start, so tokens are dropped one at a time from the
        start until ``count(kept) <= budget``.

        Args:
            text: Any string.
            budget: Maximum number of tokens to keep, at least 0.

        Returns:
            ``(kept, cut)``: the kept text, and whether anything was removed.
            If the text already fits, ``kept`` is the unchanged text.

        Raises:
            ValueError: ``budget`` is negative.
        """
        if budget < 0:
            raise ValueError(f"token budget must be >= 0, got {budget}")
        tokens = self.encode(text)
        if len(tokens) <= budget:
            return text, False
        keep = budget
        while keep > 0:
            tail = self._encoding.decode_bytes(tokens[-keep:])
            kept = tail.lstrip(_UTF8_CONTINUATION_BYTES).decode("utf-8", errors="replace")
            if self.count(kept) <= budget:
                return kept, True
            keep -= 1
        return "", True

    def common_prefix_tokens(self, a: str, b: str) -> int:
        """Counts the leading tokens that two texts share.

        The texts are encoded separately and their token ids compared from the
        start. The result is the part of a prompt that a provider's prompt cache
        can reuse between two requests (prompt-preview.md, "What the preview
        reports"). A shared character prefix can yield fewer shared tokens,
        because the token that straddles the first difference differs.

        Args:
            a: The first text.
            b: The second text.

        Returns:
            The number of identical leading tokens.
        """
        shared = 0
        for token_a, token_b in zip(self.encode(a), self.encode(b)):
            if token_a != token_b:
                break
            shared += 1
        return shared

    def cache_info(self) -> tuple[int, int, int | None, int]:
        """Returns ``(hits, misses, maxsize, currsize)`` of the count cache.

        The value is a ``functools`` ``CacheInfo`` named tuple.
        """
        return self._cached_count.cache_info()

    def _count_uncached(self, text: str) -> int:
        return len(self._encoding.encode_ordinary(text))


_counters: dict[str, TokenCounter] = {}
_load_locks: Mapping[str, threading.Lock] = MappingProxyType(
    {name: threading.Lock() for name in ENCODINGS}
)


def encoding_path(name: str) -> Path:
    """Returns the table file of an encoding, ``ENCODINGS_DIR/<name>.tiktoken.gz``.

    Args:
        name: One of :data:`ENCODINGS`.

    Raises:
        UnknownEncodingError: ``name`` is not one of :data:`ENCODINGS`.
    """
    _check_name(name)
    return ENCODINGS_DIR / f"{name}.tiktoken.gz"


def get_encoder(name: str = DEFAULT_ENCODING) -> TokenCounter:
    """Returns the counter of an encoding, loading its table on first use.

    Each encoding loads once per process, under a lock per encoding, so
    concurrent first calls wait for a single load, a fraction of a second. A
    failed load is not remembered,
    and the next call tries again. No network access is made.

    Args:
        name: One of :data:`ENCODINGS`.

    Returns:
        The shared counter for that encoding.

    Raises:
        UnknownEncodingError: ``name`` is not one of :data:`ENCODINGS`.
        EncodingDataError: The table file is missing, is not gzip, or has
            the wrong SHA-256 after decompression. The message names the file.
    """
    _check_name(name)
    counter = _counters.get(name)
    if counter is not None:
        return counter
    with _load_locks[name]:
        counter = _counters.get(name)
        if counter is None:
            counter = TokenCounter(_build_encoding(_SPECS[name]))
            _counters[name] = counter
        return counter


def loaded_encodings() -> tuple[str, ...]:
    """Returns the names of the encodings whose tables are loaded, in load order."""
    return tuple(_counters)


def _check_name(name: str) -> None:
    if not isinstance(name, str) or name not in _SPECS:
        raise UnknownEncodingError(
            f"unknown token encoding {name!r}; expected one of: {', '.join(ENCODINGS)}"
        )


class _Encoding(tiktoken.Encoding):
    """A ``tiktoken.Encoding`` that keeps no Python copy of its ranks.

    tiktoken's Rust ``CoreBPE`` copies the rank table it is built from; the
    ``Encoding`` also keeps the Python dict, only to pickle itself (~15 MB for
    cl100k_base, 100 000 ``bytes`` keys). Once built, the dict is let go, and the
    encoding pickles as its name: unpickling loads it with :func:`get_encoder`.
    """

    def __init__(self, *, name: str, pat_str: str, mergeable_ranks: dict[bytes, int], special_tokens: dict[str, int]) -> None:
        super().__init__(name=name, pat_str=pat_str, mergeable_ranks=mergeable_ranks, special_tokens=special_tokens)
        self._mergeable_ranks = {}

    def __reduce__(self):
        return _encoding_named, (self.name,)


def _encoding_named(name: str) -> tiktoken.Encoding:
    return get_encoder(name).encoding


def _build_encoding(spec: _EncodingSpec) -> tiktoken.Encoding:
    path = encoding_path(spec.name)
    return _Encoding(
        name=spec.name,
        pat_str=spec.pat_str,
        mergeable_ranks=_read_ranks(path, spec.sha256),
        special_tokens=dict(spec.special_tokens),
    )


def _read_ranks(path: Path, expected_sha256: str) -> dict[bytes, int]:
    """Reads a gzipped ``.tiktoken`` file (``base64-token rank`` per line).

    Raises:
        EncodingDataError: The file is missing, is not gzip, has the wrong hash
            or has a line that does not parse.
    """
    try:
        with gzip.open(path, "rb") as stream:
            data = stream.read()
    except FileNotFoundError as error:
        raise EncodingDataError(f"token encoding file is missing: {path}", path) from error
    except (OSError, EOFError, zlib.error) as error:
        raise EncodingDataError(
            f"token encoding file is not a readable gzip file: {path} ({error})", path
        ) from error
    actual = hashlib.sha256(data).hexdigest()
    if actual != expected_sha256:
        raise EncodingDataError(
            f"token encoding file is corrupt or not the official table: {path} "
            f"(sha256 of its content is {actual}, expected {expected_sha256})",
            path,
        )
    # Two fields a line: the whole file split at once, each token decoded by one C call
    # (half the time of a line-by-line parse).
    fields = data.split()
    del data
    try:
        if len(fields) % 2:
            raise ValueError(f"{len(fields)} fields, not pairs of token and rank")
        return dict(zip(map(_strict_b64decode, fields[0::2]), map(int, fields[1::2])))
    except (ValueError, binascii.Error) as error:
        raise EncodingDataError(
            f"token encoding file does not parse: {path} ({error})", path
        ) from error


def _strict_b64decode(token: bytes) -> bytes:
    return binascii.a2b_base64(token, strict_mode=True)

"""Tests of ``models.tokens``: offline tiktoken counts (prompt-preview.md, "Token counts")."""

from __future__ import annotations

import gzip
import random
import socket
import string
import subprocess
import sys
import threading
from pathlib import Path

import pytest
import tiktoken
from narrative_debugger.models.prompt import tokens
from tiktoken import load as tiktoken_load
from tiktoken_ext import openai_public

REPO = Path(__file__).resolve().parent.parent
RESOURCES = REPO / "resources" / "encodings"

PROSE = (
    "Kael Davan leaned on the rail of the Dock Ward pier. \"You again,\" he said, "
    "not unkindly. The tide had turned at dusk; the boats knocked against the "
    "pilings and somewhere a gull complained about everything.\n\n"
)

CJK = "日本語のテキストと中文文本，한국어 텍스트。"
SCRIPTS = "Ελληνικά, русский текст, עברית, العربية, हिन्दी, ไทย"
EMOJI = "emoji: 😀👍🏽👨‍👩‍👧‍👦🇫🇷 and ZWJ sequences"

#: Ordinary texts of many kinds: counts must equal tiktoken's exactly.
ORDINARY_TEXTS = [
    "",
    "hello world",
    " ",
    "\n",
    PROSE,
    PROSE * 200,
    "Player: I'd rather we didn't. They'll say it's MY fault, won't they?\r\n",
    "def count(text: str) -> int:\n\treturn len(enc.encode(text))  # 4 spaces    \n",
    "Price: 1234567.89 EUR, 2024-05-01T12:00:00Z, #42, 3.14159e-10",
    "Ünïcödé, naïve café — “quotes” and ‘apostrophes’ … ½ ¾ ©",
    CJK,
    SCRIPTS,
    EMOJI,
    "e\u0301 combining, \u200b zero width, \u00a0 nbsp, \u3000 ideographic space",
    "tabs\t\t\tand   runs     of      spaces\n\n\n\nand newlines   \n  ",
    '{"npc": "kael-davan", "tick": 4800, "sections": [{"label": "narrator"}]}',
    "https://example.com/path?query=value&other=1#frag",
    "ALL CAPS SHOUTING AND MiXeD CaSe WoRdS, O'Brien's, DON'T",
]


def _pathological_texts() -> dict[str, str]:
    rng = random.Random(20240501)
    n = 200_000
    return {
        "a": "a" * n,
        "random letters": "".join(rng.choice(string.ascii_letters) for _ in range(n)),
        "e-acute": "é" * n,
        "digits": "".join(rng.choice(string.digits) for _ in range(n)),
        "punctuation": "!" * n,
        "spaces": " " * n,
        "cjk": "".join(chr(rng.randint(0x4E00, 0x9FFF)) for _ in range(n)),
    }


PATHOLOGICAL = _pathological_texts()


@pytest.fixture(scope="session")
def reference(tmp_path_factory) -> dict[str, tiktoken.Encoding]:
    """Encodings built by tiktoken's own ``openai_public`` constructors.

    Their ``load_tiktoken_bpe`` is pointed at a decompressed copy of the resource,
    so tiktoken's parser and hash check are used, not the module under test. The
    cache directory is disabled, so nothing is written to the temp folder.
    """
    folder = tmp_path_factory.mktemp("tiktoken")
    real_load = tiktoken_load.load_tiktoken_bpe
    built = {}
    with pytest.MonkeyPatch.context() as patch:
        patch.setenv("TIKTOKEN_CACHE_DIR", "")
        for name in tokens.ENCODINGS:
            plain = folder / f"{name}.tiktoken"
            plain.write_bytes(gzip.decompress(tokens.encoding_path(name).read_bytes()))
            patch.setattr(
                openai_public,
                "load_tiktoken_bpe",
                lambda _url, expected_hash, _plain=plain: real_load(str(_plain), expected_hash),
            )
            built[name] = tiktoken.Encoding(**getattr(openai_public, name)())
    return built


@pytest.fixture
def fresh_cache(monkeypatch) -> None:
    """Empties the loaded-encoder cache for one test, then restores it."""
    monkeypatch.setattr(tokens, "_counters", {})


@pytest.fixture
def corrupt_dir(monkeypatch, tmp_path, fresh_cache) -> Path:
    """Points the resource folder at an empty temp folder."""
    monkeypatch.setattr(tokens, "ENCODINGS_DIR", tmp_path)
    return tmp_path


# ---------------------------------------------------------------- loading


@pytest.mark.parametrize("name", tokens.ENCODINGS)
def test_both_encodings_load(name):
    counter = tokens.get_encoder(name)
    assert counter.name == name
    assert tokens.get_encoder(name) is counter
    assert name in tokens.loaded_encodings()


def test_default_encoding_is_cl100k():
    assert tokens.DEFAULT_ENCODING == "cl100k_base"
    assert tokens.get_encoder().name == "cl100k_base"


@pytest.mark.parametrize("name", ["gpt2", "p50k_base", "CL100K_BASE", "", None])
def test_unknown_encoding_raises_value_error(name):
    with pytest.raises(tokens.UnknownEncodingError, match="cl100k_base, o200k_base"):
        tokens.get_encoder(name)
    assert issubclass(tokens.UnknownEncodingError, ValueError)


@pytest.mark.parametrize("name", tokens.ENCODINGS)
def test_spec_matches_installed_tiktoken(name, reference):
    """The pattern and special tokens are the ones tiktoken defines for the name: the
    same special tokens with the same ids, and texts that every part of the pattern
    splits (contractions, letters, numbers, punctuation, runs of spaces and newlines,
    scripts without spaces) cut into the same tokens."""
    ours = tokens.get_encoder(name).encoding
    theirs = reference[name]
    assert ours.special_tokens_set == theirs.special_tokens_set
    assert {t: ours.encode_single_token(t) for t in ours.special_tokens_set} == {
        t: theirs.encode_single_token(t) for t in theirs.special_tokens_set
    }
    assert ours.n_vocab == theirs.n_vocab
    texts = ["I'm sure they'll say it's ours", "Kael owes 12345678 coins, 3.50 each!!!", "  a\n\n\n  b \t\r\n",
             "ÉCOLE déjà-vu ＡＢＣ", "東京で会った", "x<|endoftext|>y", "\u2028 🐉🐉 --->", "camelCaseWord_snake"]
    assert [ours.encode_ordinary(t) for t in texts] == [theirs.encode_ordinary(t) for t in texts]


def test_tiktoken_is_recent_enough_for_long_pieces():
    """tiktoken < 0.13 merges long pieces in quadratic time ("a" * 200_000 hangs)."""
    version = tuple(int(part) for part in tiktoken.__version__.split(".")[:2])
    assert version >= (0, 13), f"tiktoken {tiktoken.__version__} is too old, need >= 0.13"


def test_corrupt_table_fails_the_hash_check(corrupt_dir):
    source = gzip.decompress((RESOURCES / "cl100k_base.tiktoken.gz").read_bytes())
    # Swap two ranks: still a well-formed table, but not the official one.
    lines = source.splitlines()
    lines[500], lines[501] = lines[501], lines[500]
    bad = corrupt_dir / "cl100k_base.tiktoken.gz"
    bad.write_bytes(gzip.compress(b"\n".join(lines) + b"\n"))
    with pytest.raises(tokens.EncodingDataError, match="sha256") as caught:
        tokens.get_encoder("cl100k_base")
    assert str(bad) in str(caught.value)
    assert caught.value.path == bad
    assert tokens.loaded_encodings() == ()


def test_missing_table_names_the_file(corrupt_dir):
    with pytest.raises(tokens.EncodingDataError, match="missing") as caught:
        tokens.get_encoder("o200k_base")
    assert str(corrupt_dir / "o200k_base.tiktoken.gz") in str(caught.value)


@pytest.mark.parametrize(
    "content",
    [b"not gzip at all", gzip.compress(b"QQ== 0\n" * 1000)[:-20]],
    ids=["not-gzip", "truncated-gzip"],
)
def test_unreadable_table_names_the_file(corrupt_dir, content):
    (corrupt_dir / "cl100k_base.tiktoken.gz").write_bytes(content)
    with pytest.raises(tokens.EncodingDataError, match="cl100k_base.tiktoken.gz"):
        tokens.get_encoder("cl100k_base")


def test_failed_load_is_retried(corrupt_dir):
    with pytest.raises(tokens.EncodingDataError):
        tokens.get_encoder("cl100k_base")
    (corrupt_dir / "cl100k_base.tiktoken.gz").write_bytes(
        (RESOURCES / "cl100k_base.tiktoken.gz").read_bytes()
    )
    assert tokens.get_encoder("cl100k_base").count("hello world") == 2


@pytest.mark.parametrize("name", tokens.ENCODINGS)
def test_a_loaded_encoding_pickles_as_its_name(name):
    """The encoding lets its Python copy of the ranks go once tiktoken has its own (the
    memory of a corpus worker); pickled, as a process pool or a Dask worker would, it
    comes back as the same loaded encoding and counts the same."""
    import pickle

    counter = tokens.get_encoder(name)
    data = pickle.dumps(counter.encoding)
    assert len(data) < 1000  # the name, not 100 000 ranks
    again = pickle.loads(data)
    assert again is counter.encoding
    assert again.encode_ordinary("Kael owes 12345678 coins") == counter.encode("Kael owes 12345678 coins")


def test_loading_makes_no_network_access(monkeypatch, fresh_cache):
    class NoNetwork(socket.socket):
        def __init__(self, *args, **kwargs):
            raise AssertionError("models.tokens opened a socket")

    def no_connection(*args, **kwargs):
        raise AssertionError("models.tokens tried to connect")

    monkeypatch.setattr(socket, "socket", NoNetwork)
    monkeypatch.setattr(socket, "create_connection", no_connection)
    monkeypatch.setattr(socket, "getaddrinfo", no_connection)
    for name in tokens.ENCODINGS:
        assert tokens.get_encoder(name).count("hello world") == 2


def test_concurrent_first_calls_load_once(monkeypatch, fresh_cache):
    builds = []
    real_build = tokens._build_encoding

    def counting_build(*args, **kwargs):
        built = real_build(*args, **kwargs)
        builds.append(built.name)
        return built

    monkeypatch.setattr(tokens, "_build_encoding", counting_build)
    results = []
    threads = [
        threading.Thread(target=lambda: results.append(tokens.get_encoder("cl100k_base")))
        for _ in range(8)
    ]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    assert builds == ["cl100k_base"]
    assert len(results) == 8 and all(result is results[0] for result in results)


def test_import_loads_no_table_and_no_qt():
    code = (
        "import sys\n"
        "import narrative_debugger.models.prompt.tokens as t\n"
        "assert t.loaded_encodings() == (), t.loaded_encodings()\n"
        "qt_names = ('PySide6', 'PyQt5', 'PyQt6', 'shiboken6')\n"
        "qt = [m for m in sys.modules if m.split('.')[0] in qt_names]\n"
        "assert not qt, qt\n"
    )
    result = subprocess.run(
        [sys.executable, "-c", code], cwd=REPO, capture_output=True, text=True, timeout=60
    )
    assert result.returncode == 0, result.stderr


# ---------------------------------------------------------------- counting


@pytest.mark.parametrize(
    ("name", "text", "expected"),
    [
        ("cl100k_base", "hello world", [15339, 1917]),
        ("o200k_base", "hello world", [24912, 2375]),
        ("cl100k_base", "tiktoken is great!", [83, 1609, 5963, 374, 2294, 0]),
        ("o200k_base", "tiktoken is great!", [83, 8251, 2488, 382, 2212, 0]),
    ],
)
def test_known_token_ids(name, text, expected):
    counter = tokens.get_encoder(name)
    assert counter.encode(text) == expected
    assert counter.count(text) == len(expected)
    assert counter.decode(expected) == text


@pytest.mark.parametrize("name", tokens.ENCODINGS)
@pytest.mark.parametrize("text", ORDINARY_TEXTS, ids=lambda text: repr(text[:20]))
def test_counts_equal_tiktoken_exactly(name, text, reference):
    counter = tokens.get_encoder(name)
    expected = reference[name].encode_ordinary(text)
    assert counter.encode(text) == expected
    assert counter.count(text) == len(expected)
    assert counter.decode(expected) == text


@pytest.mark.parametrize("name", tokens.ENCODINGS)
def test_count_many_matches_count(name):
    counter = tokens.get_encoder(name)
    assert counter.count_many(ORDINARY_TEXTS) == [counter.count(t) for t in ORDINARY_TEXTS]
    assert counter.count_many(iter(["a", "b c"])) == [1, 2]
    assert counter.count_many([]) == []


def test_repeated_counts_hit_the_cache():
    counter = tokens.get_encoder("cl100k_base")
    text = f"a section seen once per test run {id(counter)}"
    hits = counter.cache_info().hits
    first = counter.count(text)
    assert counter.count(text) == first
    assert counter.cache_info().hits == hits + 1


def test_long_texts_are_counted_but_not_cached():
    counter = tokens.get_encoder("cl100k_base")
    text = PROSE * 100  # far over the per-text cache limit
    size = counter.cache_info().currsize
    assert counter.count(text) == len(counter.encode(text))
    assert counter.cache_info().currsize == size


@pytest.mark.parametrize("name", tokens.ENCODINGS)
@pytest.mark.parametrize(
    "special", ["<|endoftext|>", "<|endofprompt|>", "<|fim_prefix|>", "<|im_start|>"]
)
def test_special_token_text_counts_as_ordinary_text(name, special, reference):
    counter = tokens.get_encoder(name)
    text = f"Kael said {special} and left."
    assert counter.count(special) > 1
    assert counter.count(text) == len(reference[name].encode_ordinary(text))
    assert counter.encode(text) == reference[name].encode_ordinary(text)
    assert not any(counter.encoding.is_special_token(t) for t in counter.encode(text))
    assert counter.truncate_to_last(text, 3)[1] is True
    assert counter.common_prefix_tokens(text, text) == counter.count(text)


@pytest.mark.parametrize("name", tokens.ENCODINGS)
def test_lone_surrogates_count_as_replacement_character(name):
    counter = tokens.get_encoder(name)
    for lone in ("\ud800", "\udfff", "\udc00"):
        assert counter.count(lone) == counter.count("\ufffd") == 1
        assert counter.count(f"a{lone}b") == counter.count("a\ufffdb")
    # A valid pair, as JSON decoders can produce it, is the character it encodes.
    assert counter.encode("\ud83d\ude00") == counter.encode("😀")
    assert counter.decode(counter.encode("x\ud800y")) == "x\ufffdy"
    kept, cut = counter.truncate_to_last("lead \ud800 tail " * 50, 5)
    assert cut and counter.count(kept) <= 5


@pytest.mark.parametrize("name", tokens.ENCODINGS)
@pytest.mark.parametrize("kind", PATHOLOGICAL)
def test_long_runs_without_spaces_complete_exactly(name, kind, reference):
    counter = tokens.get_encoder(name)
    text = PATHOLOGICAL[kind]
    count = counter.count(text)
    assert 0 < count <= len(text.encode("utf-8"))
    assert count == len(reference[name].encode_ordinary(text))


# ---------------------------------------------------------------- truncation


@pytest.mark.parametrize("name", tokens.ENCODINGS)
def test_truncate_keeps_text_that_fits(name):
    counter = tokens.get_encoder(name)
    assert counter.truncate_to_last(PROSE, counter.count(PROSE)) == (PROSE, False)
    assert counter.truncate_to_last(PROSE, 10_000) == (PROSE, False)
    assert counter.truncate_to_last("", 0) == ("", False)


@pytest.mark.parametrize("name", tokens.ENCODINGS)
@pytest.mark.parametrize("budget", [1, 2, 7, 50, 333])
@pytest.mark.parametrize(
    "text",
    [PROSE * 20, CJK * 40, EMOJI * 40, SCRIPTS * 40],
    ids=["prose", "cjk", "emoji", "scripts"],
)
def test_truncate_keeps_a_suffix_within_budget(name, budget, text):
    counter = tokens.get_encoder(name)
    kept, cut = counter.truncate_to_last(text, budget)
    assert cut is True
    assert text.endswith(kept)
    assert "\ufffd" not in kept
    assert counter.count(kept) <= budget
    # Nothing much is lost: at most the one character the cut went through.
    assert counter.count(kept) >= budget - 4 or len(kept) >= len(text) - 4


def test_truncate_keeps_the_last_tokens_of_ascii():
    counter = tokens.get_encoder("cl100k_base")
    text = "one two three four five six"
    assert counter.truncate_to_last(text, 2) == (" five six", True)
    assert counter.truncate_to_last(text, 0) == ("", True)


def test_truncate_rejects_negative_budget():
    with pytest.raises(ValueError, match="budget"):
        tokens.get_encoder().truncate_to_last("text", -1)


# ---------------------------------------------------------------- prefix


@pytest.mark.parametrize("name", tokens.ENCODINGS)
def test_common_prefix_tokens(name):
    counter = tokens.get_encoder(name)
    system = PROSE * 5
    assert counter.common_prefix_tokens(system, system) == counter.count(system)
    assert counter.common_prefix_tokens("", system) == 0
    assert counter.common_prefix_tokens("alpha beta", "gamma beta") == 0
    # A new line appended after a paragraph break keeps the whole paragraph cached.
    tick_a = system + "Kael: Go away."
    tick_b = system + "Kael: Come back tomorrow, then."
    shared = counter.common_prefix_tokens(tick_a, tick_b)
    assert counter.count(system) <= shared < min(counter.count(tick_a), counter.count(tick_b))
    assert shared == counter.common_prefix_tokens(tick_b, tick_a)


def test_common_prefix_counts_tokens_not_characters():
    counter = tokens.get_encoder("cl100k_base")
    # "hello world" vs "hello worlds": characters share 11, tokens share only "hello".
    assert counter.encode("hello worlds")[0] == counter.encode("hello world")[0]
    assert counter.common_prefix_tokens("hello world", "hello worlds") == 1

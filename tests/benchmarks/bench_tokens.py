"""Benchmark of ``models.tokens``: table load time, throughput, pathological input.

Run from the repository root::

    python tests/benchmarks/bench_tokens.py

All times are wall-clock. Load times are single first calls. Loops report the
best of several runs.
"""

from __future__ import annotations

import random
import string
import sys
import time
from collections.abc import Callable
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[2]))

_started = time.perf_counter()
from narrative_debugger.models.prompt import tokens  # noqa: E402  (timed import)

IMPORT_SECONDS = time.perf_counter() - _started

WORDS = (
    "the harbour master squinted at ledger muttering about tariffs and tides Kael "
    "Davan leaned on rail of Dock Ward pier you again he said not unkindly boats "
    "knocked against pilings somewhere a gull complained everything she remembered "
    "first meeting storm that took lighthouse keeper's lamp nobody spoke of it since "
    "walked away confronted trust earned slowly lost quickly coin favour debt"
).split()


def _prose(chars: int, seed: int = 7) -> str:
    """Returns deterministic English-like prose of about ``chars`` characters."""
    rng = random.Random(seed)
    parts: list[str] = []
    size = 0
    while size < chars:
        sentence = " ".join(rng.choice(WORDS) for _ in range(rng.randint(6, 18)))
        sentence = sentence[0].upper() + sentence[1:] + rng.choice([".", ",", "?", "!\n\n"])
        if rng.random() < 0.2:
            sentence = f'Kael: "{sentence}"\n'
        parts.append(sentence + " ")
        size += len(sentence) + 1
    return "".join(parts)[:chars]


def _pathological() -> dict[str, str]:
    rng = random.Random(1)
    n = 200_000
    return {
        '"a" * 200k': "a" * n,
        "random letters": "".join(rng.choice(string.ascii_letters) for _ in range(n)),
        "random lowercase": "".join(rng.choice(string.ascii_lowercase) for _ in range(n)),
        '"é" * 200k': "é" * n,
        "random digits": "".join(rng.choice(string.digits) for _ in range(n)),
        '"!" * 200k': "!" * n,
        "spaces": " " * n,
        "newlines": "\n" * n,
        "random CJK": "".join(chr(rng.randint(0x4E00, 0x9FFF)) for _ in range(n)),
        "emoji": "😀" * n,
        "base64-like": "".join(rng.choice(string.ascii_letters + "0123456789+/") for _ in range(n)),
    }


def _best(run: Callable[[], object], repeat: int = 5) -> float:
    best = float("inf")
    for _ in range(repeat):
        started = time.perf_counter()
        run()
        best = min(best, time.perf_counter() - started)
    return best


def main() -> None:
    print(f"import models.tokens: {IMPORT_SECONDS * 1000:.1f} ms, "
          f"tables loaded at import: {tokens.loaded_encodings() or 'none'}")

    print("\n# Table load (first get_encoder call: gunzip, sha256, parse, build)")
    for name in tokens.ENCODINGS:
        started = time.perf_counter()
        tokens.get_encoder(name)
        print(f"{name:12} {time.perf_counter() - started:7.3f} s")

    prose = _prose(1_000_000)
    sections = [_prose(300, seed) for seed in range(10)]
    prompt_a = _prose(32_000, 3)
    prompt_b = prompt_a[:-200] + _prose(200, 4)

    for name in tokens.ENCODINGS:
        counter = tokens.get_encoder(name)
        print(f"\n# {name}: typical prose")
        n_tokens = counter.count(prose)
        seconds = _best(lambda: counter.encode(prose))
        print(f"1 MB of prose: {n_tokens} tokens in {seconds * 1000:.1f} ms "
              f"= {n_tokens / seconds / 1e6:.2f} M tokens/s, {len(prose) / seconds / 1e6:.1f} M chars/s")
        uncached = _best(lambda: [len(counter.encode(s)) for s in sections], 50)
        cached = _best(lambda: counter.count_many(sections), 50)
        batch = _best(lambda: [len(t) for t in counter._encoding.encode_ordinary_batch(sections)], 50)
        print(f"10 sections x 300 chars: uncached {uncached * 1e3:.3f} ms, "
              f"count_many (cached) {cached * 1e3:.3f} ms, encode_ordinary_batch {batch * 1e3:.3f} ms")
        big = [_prose(40_000, seed) for seed in range(8)]
        sequential = _best(lambda: counter.count_many(big), 5)
        batch = _best(lambda: [len(t) for t in counter._encoding.encode_ordinary_batch(big)], 5)
        print(f"8 texts x 40k chars: count_many {sequential * 1e3:.2f} ms, "
              f"encode_ordinary_batch {batch * 1e3:.2f} ms")
        seconds = _best(lambda: counter.truncate_to_last(prompt_a, 4096))
        print(f"truncate_to_last(32k chars, 4096): {seconds * 1e3:.2f} ms")
        seconds = _best(lambda: counter.common_prefix_tokens(prompt_a, prompt_b))
        print(f"common_prefix_tokens(32k chars, 32k chars): {seconds * 1e3:.2f} ms "
              f"-> {counter.common_prefix_tokens(prompt_a, prompt_b)} of {counter.count(prompt_a)} tokens")

    print("\n# Pathological 200 000-character inputs (count, best of 3)")
    cases = _pathological()
    print(f"{'input':18} " + " ".join(f"{name:>24}" for name in tokens.ENCODINGS))
    worst = 0.0
    for label, text in cases.items():
        cells = []
        for name in tokens.ENCODINGS:
            counter = tokens.get_encoder(name)
            seconds = _best(lambda: counter.count(text), 3)
            worst = max(worst, seconds)
            cells.append(f"{counter.count(text):>9} tok {seconds * 1e3:8.1f} ms")
        print(f"{label:18} " + " ".join(f"{cell:>24}" for cell in cells))
    print(f"worst: {worst * 1e3:.1f} ms (target < 500 ms)")


if __name__ == "__main__":
    main()

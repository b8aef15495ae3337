"""Hostile input to ``corpus``, ``coverage`` and ``query`` (issue 39, trial 47): each is a
one-line message and exit 2 (or the right value), never a traceback, a hang or a
value made up."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest

from narrative_debugger.app.cli.main import main

ROOT = Path(__file__).resolve().parent.parent
SAMPLES = ROOT / "sample_saves"
CONTENT = SAMPLES / "content"


def run(capsys, *args: str) -> tuple[int, str, str]:
    capsys.readouterr()
    code = main(list(args))
    out, err = capsys.readouterr()
    return code, out, err


@pytest.fixture(scope="module")
def small_corpus(tmp_path_factory) -> Path:
    """A corpus of two sample saves, without prompts (quick to make); tests copy it to change it."""
    saves = tmp_path_factory.mktemp("saves")
    for name in ("evening.json", "walkaway-spiral.json"):
        shutil.copy(SAMPLES / name, saves / name)
    out = tmp_path_factory.mktemp("corpus") / "c"
    assert main(["corpus", str(saves), "--content", str(CONTENT), "--out", str(out), "--no-prompts"]) == 0
    return out


def _nested(depth: int) -> str:
    return "[" * depth + "1" + "]" * depth


@pytest.mark.parametrize("fmt", ["json", "csv", "text"])
def test_a_result_nested_too_deep_is_a_message_and_nothing_printed(small_corpus, capsys, fmt):
    # Trial 47, 1.3: a list 500 deep ran plain() out of Python's stack (RecursionError
    # traceback, exit 1; csv had printed its header first).
    code, out, err = run(capsys, "query", str(small_corpus), f"SELECT 1 AS fine, {_nested(260)} AS deep", "--format", fmt)
    assert (code, out) == (2, "")
    assert err.strip() == ("narrative-debugger query: row 1, column 'deep': a value with lists or maps nested more than 256 deep "
                           "cannot be printed (select less of it, or flatten it)")
    code, out, err = run(capsys, "query", str(small_corpus), f"SELECT {_nested(256)} AS x", "--format", fmt)
    assert code == 0 and out.count("[") == 256 + (fmt == "json"), err
    if fmt == "json":
        value = json.loads(out)[0]["x"]
        for _ in range(256):
            (value,) = value
        assert value == 1


def test_json_refuses_two_columns_of_one_name(small_corpus, capsys):
    # Trial 47, 2.5: [{"a": 2}], exit 0: the first column was lost.
    code, out, err = run(capsys, "query", str(small_corpus), "SELECT 1 AS a, 2 AS a, 3 AS b", "--format", "json")
    assert (code, out) == (2, "")
    assert err.strip() == ("narrative-debugger query: the result has more than one column named 'a': a JSON row is an object, "
                           "one value per name (name them apart with AS, or use --format csv or text)")
    code, out, _ = run(capsys, "query", str(small_corpus), "SELECT 1 AS a, 2 AS a", "--format", "csv")
    assert code == 0 and out == "a,a\n1,2\n"


@pytest.mark.parametrize("address, says", [
    ("", "--scheduler: an empty address (give tcp://HOST:PORT, as 'dask scheduler' prints it)"),
    ("garbage", "--scheduler garbage: not an address (give tcp://HOST:PORT, as 'dask scheduler' prints it)"),
    ("ucx://127.0.0.1:1", "--scheduler ucx://127.0.0.1:1: only tcp:// addresses are supported, not ucx:// (give tcp://HOST:PORT)"),
    ("tls://127.0.0.1:1", "--scheduler tls://127.0.0.1:1: only tcp:// addresses are supported, not tls:// (give tcp://HOST:PORT)"),
    ("inproc://x", "--scheduler inproc://x: only tcp:// addresses are supported, not inproc:// (give tcp://HOST:PORT)"),
    ("tcp://127.0.0.1:notaport", "--scheduler tcp://127.0.0.1:notaport: the port 'notaport' is not a number from 1 to 65535"),
    ("tcp://127.0.0.1:-5", "--scheduler tcp://127.0.0.1:-5: the port '-5' is not a number from 1 to 65535"),
    ("tcp://host:99999", "--scheduler tcp://host:99999: the port '99999' is not a number from 1 to 65535"),
    ("tcp://host:0", "--scheduler tcp://host:0: the port '0' is not a number from 1 to 65535"),
    ("tcp://127.0.0.1", "--scheduler tcp://127.0.0.1: no port (give tcp://HOST:PORT; 'dask scheduler' listens on 8786)"),
    ("tcp://[::1]", "--scheduler tcp://[::1]: no port (give tcp://HOST:PORT; 'dask scheduler' listens on 8786)"),
    ("tcp://:8786", "--scheduler tcp://:8786: no host name or address before the port (give tcp://HOST:PORT)"),
])
def test_a_scheduler_address_that_cannot_be_valid_is_refused_at_once(tmp_path, capsys, address, says):
    # Trial 47, 1.4 and 2.9: ucx:// and tls:// were Dask tracebacks, '' ran locally, a bad
    # port said "invalid literal for int()" (or waited Dask's 30 s connect timeout), and
    # inproc://x "not enough values to unpack". Refused before anything is made or read.
    code, out, err = run(capsys, "corpus", str(SAMPLES / "evening.json"), "--out", str(tmp_path / "c"), "--scheduler", address)
    assert (code, out) == (2, "")
    assert err.strip() == f"narrative-debugger corpus: {says}"
    assert not (tmp_path / "c").exists()

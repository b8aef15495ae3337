"""Property-based fuzzing of the command line with Hypothesis (issue 35).

Each input is a sample save and its content folder, mutated: a value of another type
or out of its range (u64 and i16 edges, 4 301 digits, NaN and the infinities as bare
JSON tokens), hostile Unicode (controls, bidi and zero-width characters, lone
surrogates, non-ASCII digits, Markdown and HTML), a changed structure (a key or item
dropped, duplicated or wrapped, a map key renamed), another encoding (UTF-16 and
UTF-32 with and without a BOM, a UTF-8 BOM, invalid UTF-8, truncation), gzip
(valid, truncated, doubled, or a plain file named ``.json.gz``), file-system
oddities (an empty save, a folder or nothing where the save should be, no content
folder, a file where it should be, a content file that is empty, not UTF-8, not
YAML, a folder, or a second profile of one NPC).

Every command runs on every input in every output format (check: text, json,
sarif, junit, github; state, why, prompt, diff: text and json), in-process through
``cli.main`` for speed. ``screenshot``, ``open-report`` and ``check --screenshots``
build a Qt window per run (about a second each) and ``check --jobs`` starts worker
processes, so they are not fuzzed here; ``rules`` reads no input and is run once.

The oracle, for every run:

* no exception leaves ``main`` and no traceback is printed;
* the exit status is 0, 1 or 2 (as ``--help`` documents them), and an exit 2 of a
  command other than ``check`` says why on stderr;
* every machine-readable output parses strictly: JSON (``parse_constant`` refuses
  NaN and the infinities), SARIF 2.1.0 as JSON, JUnit as XML, and each GitHub line
  as a workflow command with escaped properties and message;
* the input files are byte for byte unchanged.

CI runs a fixed budget: ``FUZZ_EXAMPLES`` inputs (60), derandomized (the same
inputs on every run), about 15 s. ``make fuzz`` runs fresh random inputs for
``FUZZ_SECONDS`` (600) and prints how many it tried.
"""

from __future__ import annotations

import contextlib
import gzip
import hashlib
import io
import json
import os
import re
import shutil
import tempfile
import time
import traceback
import xml.etree.ElementTree as ET
from dataclasses import dataclass, field
from functools import cache
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from tests.conftest import CONTENT, SAMPLES

#: The saves every run mutates (the small ones; ``make fuzz`` adds the larger two).
SMALL_SAVES = ("walkaway-spiral.json", "abandoned-confrontation.json")
ALL_SAVES = (*SMALL_SAVES, "qa-faults.json", "evening.json")
EXAMPLES = int(os.environ.get("FUZZ_EXAMPLES", "60"))
SECONDS = float(os.environ.get("FUZZ_SECONDS", "0") or 0)

# ----- hostile values -----
#: Bare JSON tokens that ``json.dumps`` would not write: placed by a marker string.
RAW_TOKENS = ("NaN", "Infinity", "-Infinity", "1e309", "-1e309", "1e-400", "-0", "-0.0", "1" * 4301, "-" + "9" * 4301,
              "18446744073709551616", "18446744073709551615", "-9223372036854775809", "9223372036854775807",
              '"\\ud800"', '"\\udfff x"', '"\\u0000"', "1.0", "1E2", "0x10", "01", "+1", "true", "null", "[]", "{}")
NUMBERS = (0, -1, 1, 2, 5, 6, 255, 256, -129, 32767, 32768, -32768, -32769, 65535, 2**31, 2**32, 2**53 + 1,
           2**63 - 1, 2**63, 2**64 - 1, 2**64, -(2**63), 10**30, 0.05, 0.1, 0.5, 0.55, -0.1, 1.5, 1e300, -1e300, 5e-324)
TEXTS = ("", " ", "x", "名前", "\u202eevil\u202c", "a\u200bb", "\ufeffbom", "\x00", "\x1b[31mred\x1b[0m", "line\nbreak\r\n",
         "٣", "１２", "5_000", "٠٠١", "-1", "+7", "1e3", " 42", "42 ", "interaction.mira-holt_001", "interaction.mira-holt_٠٠١",
         "interaction.Mira_01", "a.b", "a..b", "UPPER.case", "<b>bold</b>", "<script>x</script>", "![x](http://example.invalid/x.png)",
         "[link](javascript:x)", "`tick`", "$(rm -rf x)", "'; echo x", "%0A::error::x", "::error::forged", "x,y:z", "😀" * 3,
         "\ud800", "\udfff", "e\u0301", "\u0085", "\u2028", "\t", "Direct", "KnowsOf", "Completed", "WalkedAway", "x" * 300)
KEYS = ("", "0", "-1", "00017", "17 ", "١٧", "5_000", "1e3", "18446744073709551616", "9" * 4301, "x", "名前", "\u200b",
        "interaction.mira-holt_001", "interaction.mira-holt_١", "A.B", "a.b.c")


def _values() -> st.SearchStrategy:
    scalar = st.one_of(st.none(), st.booleans(), st.sampled_from(NUMBERS), st.sampled_from(TEXTS),
                       st.integers(), st.floats(allow_nan=False, allow_infinity=False), st.text(max_size=12))
    raw = st.sampled_from(RAW_TOKENS).map(_Raw)
    nested = st.recursive(scalar, lambda inner: st.lists(inner, max_size=3) | st.dictionaries(st.sampled_from(KEYS + TEXTS[:8]), inner, max_size=3),
                          max_leaves=6)
    return st.one_of(scalar, raw, nested)


@dataclass(frozen=True)
class _Raw:
    """A JSON token written as is (``json.dumps`` cannot write it)."""

    token: str


# ----- the save, mutated -----
@cache
def _sample(name: str) -> tuple[bytes, object]:
    data = (SAMPLES / name).read_bytes()
    return data, json.loads(data)


def _children(node) -> list:
    if isinstance(node, dict):
        return list(node)
    if isinstance(node, list):
        return list(range(len(node)))
    return []


def _copy_along(doc, path: list):
    """``doc`` with each container along ``path`` copied (the rest shared): cheap to change at ``path``."""
    top = doc.copy() if isinstance(doc, (dict, list)) else doc
    node = top
    for step in path:
        child = node[step]
        if isinstance(child, (dict, list)):
            child = child.copy()
            node[step] = child
        node = child
    return top


def _short(value) -> str:
    text = repr(value)
    return text if len(text) <= 80 else f"{text[:60]}... ({len(text)} chars)"


@st.composite
def _mutated_doc(draw, doc, notes: list):
    """``doc`` with one to three mutations, each at a path drawn from the root down;
    each is described in ``notes``."""
    # A uniform walk (Hypothesis's integers lean to their ends: most paths ended at "format").
    rnd = draw(st.randoms(use_true_random=True))
    for _ in range(draw(st.integers(1, 3))):
        path: list = []
        node = doc
        while _children(node) and rnd.random() < (0.97 if not path else 0.85):  # go deeper (the root seldom)
            keys = _children(node)
            deeper = [k for k in keys if _children(node[k])]
            step = rnd.choice(deeper if deeper and rnd.random() < 0.8 else keys)  # mostly on into the big parts
            path.append(step)
            node = node[step]
        kind = draw(st.sampled_from(["value", "value", "delete", "duplicate", "rename", "wrap", "empty"]))
        doc = _copy_along(doc, path[:-1] if path else [])
        parent = doc
        for step in path[:-1]:
            parent = parent[step]
        notes.append(f"{kind} at {'.'.join(map(str, path)) or '(root)'}")
        if not path:  # the whole document
            doc = draw(_values()) if kind in ("value", "delete") else [doc] if kind == "wrap" else {} if kind == "empty" else doc
            notes[-1] += f": {_short(doc)}" if kind in ("value", "delete") else ""
            continue
        last = path[-1]
        if kind == "value":
            parent[last] = draw(_values())
            notes[-1] += f": {_short(parent[last])}"
        elif kind == "delete":
            del parent[last]
        elif kind == "duplicate":
            if isinstance(parent, list):
                parent.insert(last, parent[last])
            else:
                parent[draw(st.sampled_from(KEYS))] = parent[last]
        elif kind == "rename" and isinstance(parent, dict):
            value = parent.pop(last)
            parent[draw(st.sampled_from(KEYS + (str(last).upper(), f"{last} ", f"0{last}")))] = value
        elif kind == "wrap":
            parent[last] = draw(st.sampled_from([[parent[last]], {"x": parent[last]}]))
        elif kind == "empty":
            parent[last] = {} if isinstance(parent[last], dict) else [] if isinstance(parent[last], list) else ""
    return doc


def _dumps(doc, ensure_ascii: bool) -> str:
    """JSON text of ``doc`` with each ``_Raw`` written as its bare token."""
    raws: list[str] = []

    def mark(node):
        if isinstance(node, _Raw):
            raws.append(node.token)
            return f"\u0001RAW{len(raws) - 1}\u0001"
        if isinstance(node, dict):
            return {k: mark(v) for k, v in node.items()}
        if isinstance(node, list):
            return [mark(v) for v in node]
        return node

    text = json.dumps(mark(doc), ensure_ascii=ensure_ascii, separators=(",", ":"))
    for i, token in enumerate(raws):
        text = text.replace(json.dumps(f"\u0001RAW{i}\u0001"), token, 1)
    return text


#: Mostly UTF-8, so that most inputs get past the reader to the rules and the replay.
ENCODINGS = ("utf-8",) * 24 + ("utf-8-sig", "utf-16", "utf-16-le", "utf-16-be", "utf-32", "latin-1", "cesu")


@st.composite
def _save_bytes(draw, name: str, notes: list) -> bytes:
    """The sample ``name`` mutated, encoded and damaged; ``notes`` says how."""
    original, doc = _sample(name)
    rnd = draw(st.randoms(use_true_random=True))  # weighted choices (sampled_from leans to its ends)
    if rnd.random() < 0.1:
        data = original  # the save unchanged: only the encoding, the file system or the content change
        text = None
    else:
        ascii_only = draw(st.booleans())
        text = _dumps(draw(_mutated_doc(doc, notes)), ensure_ascii=ascii_only)
        data = None
    encoding = rnd.choice(ENCODINGS)
    notes.append(f"encoding {encoding}")
    if data is None or encoding != "utf-8":
        text = text if text is not None else original.decode("utf-8")
        if encoding == "cesu":  # lone surrogates kept as bytes: invalid UTF-8
            data = text.encode("utf-8", "surrogatepass")
        else:
            data = text.encode(encoding, "surrogatepass" if encoding.startswith("utf") else "replace")
    damage = rnd.choice(["none"] * 30 + ["truncate", "byte", "prefix", "suffix", "nul"])
    if damage != "none":
        notes.append(f"damage {damage}")
    if damage == "truncate":
        data = data[: draw(st.integers(0, len(data)))]
    elif damage == "byte":
        at = draw(st.integers(0, len(data)))
        data = data[:at] + draw(st.sampled_from([b"\xff", b"\xc3", b"\xe2\x82", b"\xed\xa0\x80", b"\x00", b"\x80"])) + data[at:]
    elif damage == "prefix":
        data = draw(st.sampled_from([b"\xef\xbb\xbf", b"\xef\xbb\xbf\xef\xbb\xbf", b" \n\t", b"\x1f\x8b", b"garbage"])) + data
    elif damage == "suffix":
        data = data + draw(st.sampled_from([b"\n", b"x", b"{}", b"\x00", b" ]", b"\xff"]))
    elif damage == "nul":
        data = data.replace(b",", b",\x00", 1)
    return data


@dataclass
class Case:
    """One input: the save file's bytes (or an oddity in its place) and the content folder's state."""

    sample: str
    save: bytes | None = field(repr=False)
    how: list = field(default_factory=list)  # what was done to the save, for the report of a failure
    file_name: str = "save.json"
    save_kind: str = "file"  # file, dir, missing
    content: str = "beside"  # beside, missing, file, given
    content_edits: list = field(default_factory=list, repr=False)  # (relative path, new bytes or "dir" or "delete")
    tick: str | None = None

    def __repr__(self) -> str:
        edits = [(rel, edit if isinstance(edit, str) else _short(edit)) for rel, edit in self.content_edits]
        save = None if self.save is None else f"{len(self.save)} bytes, sha256 {hashlib.sha256(self.save).hexdigest()[:12]}"
        return (f"Case({self.sample!r}, how={self.how}, save={save}, file_name={self.file_name!r}, save_kind={self.save_kind!r}, "
                f"content={self.content!r}, content_edits={edits}, tick={_short(self.tick)})")


YAML_TEXTS = (b"", b"\xff\xfe", b"a: [\n", b"a: &a [*a]\n", b"\tname: x\n", b"- 1\n- 2\n", b"name: 1\n", b"name: ~\n",
              b"name: !!python/object:os.system x\n", b"'unterminated\n", b"name: x\nname: y\n", b"%YAML 9.9\n---\n",
              b"threshold: 18446744073709551616\n", b"threshold: .nan\n", b"threshold: -.inf\n", b"id: \xe2\x80\xae\n")


@st.composite
def _content_edits(draw) -> list:
    files = sorted(p.relative_to(CONTENT).as_posix() for p in CONTENT.rglob("*") if p.is_file() and p.suffix in (".yaml", ".yml"))
    edits = []
    for _ in range(draw(st.integers(0, 2))):
        rel = draw(st.sampled_from(files))
        kind = draw(st.sampled_from(["replace", "line", "dir", "delete", "twin", "bytes", "encoding"]))
        text = (CONTENT / rel).read_bytes()
        if kind == "replace":
            edits.append((rel, draw(st.sampled_from(YAML_TEXTS))))
        elif kind == "line":  # one "key: value" line's value changed
            lines = text.split(b"\n")
            spots = [i for i, line in enumerate(lines) if b": " in line]
            if spots:
                i = draw(st.sampled_from(spots))
                key = lines[i].split(b": ", 1)[0]
                value = draw(st.sampled_from([b"-1", b"18446744073709551616", b"1" * 4301, b"\xd9\xa3", b"5_000", b".nan", b"[]",
                                              b"{}", b"~", b"'<b>x</b>'", b"\"\\u202e\"", b"0.0", b"9.9", b"true"]))
                lines[i] = key + b": " + value
                edits.append((rel, b"\n".join(lines)))
        elif kind in ("dir", "delete"):
            edits.append((rel, kind))
        elif kind == "twin":  # a second profile of one slug (.yaml and .yml)
            edits.append((rel[: -len(".yaml")] + ".yml" if rel.endswith(".yaml") else rel + ".yaml", text))
        elif kind == "bytes":
            at = draw(st.integers(0, len(text)))
            edits.append((rel, text[:at] + draw(st.sampled_from([b"\xff", b"\x00", b"\t", b"\r", b"\xef\xbb\xbf"])) + text[at:]))
        else:
            edits.append((rel, text.decode("utf-8").encode(draw(st.sampled_from(["utf-16", "utf-8-sig", "utf-32-le"])))))
    return edits


@st.composite
def cases(draw, saves=SMALL_SAVES) -> Case:
    sample = draw(st.sampled_from(saves))
    case = Case(sample=sample, save=None)
    rnd = draw(st.randoms(use_true_random=True))  # weighted choices (sampled_from leans to its ends)
    shape = rnd.choice(["file"] * 30 + ["gzip"] * 3 + ["gzip-truncated", "gzip-twice", "not-gzip", "empty", "dir", "missing"])
    case.how.append(shape)
    if shape in ("dir", "missing"):
        case.save_kind = shape
    elif shape == "empty":
        case.save = b""
    else:
        data = draw(_save_bytes(sample, case.how))
        if shape.startswith("gzip"):
            case.file_name = "save.json.gz"
            data = gzip.compress(data, mtime=0)
            if shape == "gzip-truncated":
                data = data[: draw(st.integers(0, len(data) - 1))]
            elif shape == "gzip-twice":
                data = gzip.compress(data, mtime=0)
        elif shape == "not-gzip":
            case.file_name = "save.json.gz"
        case.save = data
    case.content = rnd.choice(["beside"] * 8 + ["missing", "file", "given", "given"])
    if case.content in ("beside", "given"):
        case.content_edits = draw(_content_edits())
    if rnd.random() < 0.2:  # one input in five gives --tick
        case.tick = draw(st.sampled_from(["0", "1", "100", "5000", "18446744073709551615", "18446744073709551616", "-1",
                                          "٣", "5_000", "1e3", " 7", "", "0x10", "9" * 4301]))
    return case


# ----- running it -----
def _lay_out(case: Case, folder: Path) -> tuple[Path, Path | None]:
    """Write ``case`` under ``folder``: returns (the save's path, the --content to pass or None)."""
    save = folder / case.file_name
    if case.save_kind == "dir":
        save.mkdir()
        (save / "inside.json").write_bytes(_sample(case.sample)[0][:100])
    elif case.save_kind == "file":
        save.write_bytes(case.save or b"")
    content = folder / ("content" if case.content != "given" else "other content")
    given = content if case.content == "given" else None
    if case.content in ("beside", "given"):
        shutil.copytree(CONTENT, content)
        for rel, edit in case.content_edits:
            target = content / rel
            if edit in ("dir", "delete"):
                if target.is_dir():
                    shutil.rmtree(target)
                elif target.exists():
                    target.unlink()
                if edit == "dir":
                    target.mkdir(parents=True)
            else:
                if target.is_dir():
                    shutil.rmtree(target)
                target.parent.mkdir(parents=True, exist_ok=True)
                target.write_bytes(edit)
    elif case.content == "file":
        content.write_bytes(b"name: not a folder\n")
    return save, given


def _hashes(folder: Path) -> dict[str, str]:
    found = {}
    for path in sorted(folder.rglob("*")):
        rel = path.relative_to(folder).as_posix()
        found[rel] = hashlib.sha256(path.read_bytes()).hexdigest() if path.is_file() else "dir"
    return found


def _invocations(case: Case, save: Path, content: Path | None) -> list[list[str]]:
    """Every command in every output format on ``save``."""
    _, doc = _sample(case.sample)
    slug = next(iter(doc["npcs"].values()))["slug"]
    fact = next(iter(doc["player"]["knowledge"]["facts"]))
    common = ["--content", str(content)] if content is not None else []
    tick = ["--tick", case.tick] if case.tick is not None else []
    runs = [["check", str(save), *common, "--format", f] for f in ("text", "json", "sarif", "junit", "github")]
    for f in ("text", "json"):
        runs += [
            ["state", str(save), *common, *tick, "--format", f],
            ["why", str(save), f"npc:{slug}.stress" if f == "text" else f"fact:{fact}", *common, *tick, "--format", f],
            ["prompt", str(save), "--npc", slug, *common, *tick, "--format", f],
            ["diff", str(save), str(SAMPLES / case.sample), *common, *tick, "--format", f],
        ]
    return runs


def _no_constant(name: str):
    raise ValueError(f"not strict JSON: a bare {name}")


#: A GitHub workflow command: ``::error file=F,line=L,col=C,title=T::message``, its
#: property values free of "," ":" and line breaks, its message free of line breaks.
GITHUB_LINE = re.compile(r"::(error|warning|notice)(?: [a-z]+=[^,:\r\n]*(?:,[a-z]+=[^,:\r\n]*)*)?::[^\r\n]*")


def _strict_json(text: str):
    return json.loads(text, parse_constant=_no_constant)


def _check_output(argv: list[str], code, out: str, err: str) -> None:
    what = f"{' '.join(argv)!r} exit {code}\nstderr: {err[-2000:]}\nstdout: {out[:1000]}"
    assert code in (0, 1, 2), what
    assert "Traceback (most recent call last)" not in err + out, what
    command, fmt = argv[0], argv[argv.index("--format") + 1]
    if code == 2 and command != "check":
        assert err.strip(), f"exit 2 without a word on stderr: {what}"
    if fmt == "text" or (not out.strip() and (fmt == "github" or code == 2 and command != "check")):
        return  # no annotations is an empty GitHub output
    assert out.strip(), f"no output: {what}"
    try:
        if fmt == "json":
            _strict_json(out)
        elif fmt == "sarif":
            sarif = _strict_json(out)
            assert sarif["version"] == "2.1.0" and isinstance(sarif["runs"], list), what
        elif fmt == "junit":
            root = ET.fromstring(out.encode("utf-8"))
            assert root.tag in ("testsuites", "testsuite"), what
        elif fmt == "github":
            bad = [line for line in out.split("\n") if line and not GITHUB_LINE.fullmatch(line)]
            assert not bad, f"not a workflow command: {bad[:3]}"
    except (ValueError, ET.ParseError, KeyError, TypeError, AssertionError) as exc:
        raise AssertionError(f"{fmt} output does not parse ({exc}): {what}") from exc


def run_cli(argv: list[str]) -> tuple[object, str, str]:
    """``cli.main(argv)`` in this process: (exit status, stdout, stderr); an exception
    that leaves ``main`` is reported as a traceback on stderr."""
    from narrative_debugger.app.cli import main

    out, err = io.StringIO(), io.StringIO()
    with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
        try:
            code = main(argv)
        except SystemExit as exc:
            code = exc.code if exc.code is not None else 0
        except Exception:  # noqa: BLE001 - the oracle's finding
            code = "exception"
            err.write(traceback.format_exc())
    return code, out.getvalue(), err.getvalue()


#: How many inputs the runs of this process tried (``make fuzz`` prints it).
TRIED = [0]


def check_case(case: Case, base: Path) -> None:
    """Lay ``case`` out under a new folder of ``base``, run every invocation, apply the oracle."""
    folder = Path(tempfile.mkdtemp(dir=base))
    try:
        save, content = _lay_out(case, folder)
        before = _hashes(folder)
        for argv in _invocations(case, save, content):
            code, out, err = run_cli(argv)
            _check_output(argv, code, out, err)
        assert _hashes(folder) == before, "an input file changed"
        TRIED[0] += 1
    finally:
        shutil.rmtree(folder, ignore_errors=True)


COMMON = dict(database=None, deadline=None, print_blob=True,
              suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large, HealthCheck.large_base_example])


@pytest.fixture(scope="module")
def fuzz_dir(tmp_path_factory):
    return tmp_path_factory.mktemp("fuzz")


def test_rules_in_every_format():
    for argv in (["rules", "--format", "json"], ["rules", "--format", "text"], ["rules", "K003", "--format", "json"]):
        code, out, err = run_cli(argv)
        _check_output(argv, code, out, err)
        assert code == 0


def test_the_oracle_catches_what_it_should():
    """A bare -Infinity, a broken GitHub line and a traceback each fail the oracle."""
    with pytest.raises(AssertionError, match="does not parse"):
        _check_output(["diff", "a", "--format", "json"], 1, '{"x": -Infinity}', "")
    with pytest.raises(AssertionError, match="does not parse"):
        _check_output(["check", "a", "--format", "github"], 1, "::error file=a,b,title=K001::x\n", "")
    with pytest.raises(AssertionError, match="not a workflow command"):
        _check_output(["check", "a", "--format", "github"], 1, "::error title=K001::x\nmore\n", "")
    with pytest.raises(AssertionError):
        _check_output(["state", "a", "--format", "text"], 1, "", "Traceback (most recent call last):\n")
    with pytest.raises(AssertionError, match="without a word"):
        _check_output(["state", "a", "--format", "json"], 2, "", "")
    _check_output(["check", "a", "--format", "github"], 1, "::error file=a.json,line=1,col=2,title=F001::a: not%0AJSON\n", "")


@settings(max_examples=EXAMPLES, derandomize=True, **COMMON)
@given(case=cases())
def test_every_command_survives_mutated_saves_and_content(fuzz_dir, case):
    check_case(case, fuzz_dir)


@pytest.mark.skipif(not SECONDS, reason="make fuzz sets FUZZ_SECONDS")
def test_fuzz_for_a_while(fuzz_dir):
    """Fresh random inputs (all four samples) until ``FUZZ_SECONDS`` have passed."""

    @settings(max_examples=20, derandomize=False, **COMMON)
    @given(case=cases(ALL_SAVES))
    def batch(case):
        check_case(case, fuzz_dir)

    start, TRIED[0] = time.monotonic(), 0
    while time.monotonic() - start < SECONDS:
        batch()
    print(f"\nfuzz: {TRIED[0]} inputs in {time.monotonic() - start:.0f} s, each through {len(_invocations(Case('evening.json', b''), Path('x'), None))} runs: no failure")

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
``cli.main`` for speed. ``make fuzz`` also runs ``whatif`` (text, json; about a second a
run, too slow for CI's budget), ``corpus``, ``coverage`` (text, json) and ``query`` (text,
json, csv) on each input. ``screenshot``, ``open-report`` and ``check --screenshots``
build a Qt window per run (about a second each) and ``check --jobs`` starts worker
processes, so they are not fuzzed here; ``rules`` reads no input and is run once.

The oracle, for every run:

* no exception leaves ``main`` and no traceback is printed;
* the exit status is 0, 1 or 2 (as ``--help`` documents them), and an exit 2 of a
  command other than ``check`` says why on stderr;
* every machine-readable output parses strictly: JSON (``parse_constant`` refuses
  NaN and the infinities), SARIF 2.1.0 as JSON, JUnit as XML, and each GitHub line
  as a workflow command with escaped properties and message;
* the input files are byte for byte unchanged;
* ``check``'s status agrees with its findings (0: no error, 1: an error), and nothing
  is skipped silently: no content beside the save gives C010, and a content file
  that is a folder, or a second ``.yml`` beside a ``.yaml``, gives a C finding.

Mutations fall on places drawn by kind (id keys, field keys, numbers, strings, other
scalars, lists, objects), so the few map keys that are ids are hit as often as the
many numbers, and take near misses of what is there (other digits, 4 301 of them,
``_``, case, spaces) as well as hostile values.

CI runs the issue's hostile patterns (``HAND_MADE``), then ``FUZZ_EXAMPLES`` drawn
inputs (60), derandomized (the same inputs on every run): about 15 s of CPU.
``make fuzz`` runs fresh random inputs over all four samples for ``FUZZ_SECONDS``
(600) and prints how many it tried. On e4a06b0, before the issue's fixes, the
hand-made inputs failed at once and 6 of 300 drawn ones did (a 4 301-digit key).
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
from hypothesis import HealthCheck, example, given, settings
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


#: Maps keyed by an id (StableId or FactId), whose keys are data, not field names.
ID_MAPS = frozenset({"npcs", "entities", "facts"})
_ASCII_TO_ARABIC = str.maketrans("0123456789", "٠١٢٣٤٥٦٧٨٩")


@cache
def _places(name: str) -> dict[str, list[tuple]]:
    """Every place of the sample ``name`` by what is there: id keys, field keys, numbers,
    strings, other scalars, lists and objects (paths from the root)."""
    _, doc = _sample(name)
    places: dict[str, list[tuple]] = {"id key": [], "field key": [], "number": [], "string": [], "scalar": [], "list": [], "object": []}

    def walk(node, path: tuple) -> None:
        if isinstance(node, dict):
            if path:
                places["object"].append(path)
            keyed = bool(path) and path[-1] in ID_MAPS
            for key, value in node.items():
                places["id key" if keyed else "field key"].append((*path, key))
                walk(value, (*path, key))
        elif isinstance(node, list):
            places["list"].append(path)
            for i, value in enumerate(node):
                walk(value, (*path, i))
        elif isinstance(node, bool) or node is None:
            places["scalar"].append(path)
        elif isinstance(node, (int, float)):
            places["number"].append(path)
        else:
            places["string"].append(path)

    walk(doc, ())
    return places


def _variants(text: str) -> list[str]:
    """Near misses of a key or string from the save: other digits, long digit runs, case, spaces."""
    head = text.rstrip("0123456789")
    digits = [text.translate(_ASCII_TO_ARABIC), head + "1" * 4301, head + "0" * 50 + "1", head + "1_0", head + "１", head + "-1",
              head + "18446744073709551616"]
    return digits * 2 + [text.upper(), f" {text}", f"{text} ", f"{text}\u200b", text + text, text[: len(text) // 2], f"{text}.yaml"]


def _number_variants(value) -> list:
    numbers = [value + 1, value - 1, -value, value * 1000, float(value) + 0.5, str(value), None, True]
    return numbers + [_Raw(str(value) + "0" * 4300), _Raw(f"{value}e400"), _Raw(f"-{value}e400")]


#: How often each kind of place is drawn, against the others.
WEIGHTS = {"id key": 3, "field key": 1, "number": 3, "string": 2, "scalar": 1, "list": 2, "object": 1}


@st.composite
def _mutated_doc(draw, doc, name: str, notes: list):
    """``doc`` (the sample ``name``) with one to three mutations, each at a place drawn
    by kind (id keys, field keys, numbers, strings, lists, objects), so that the few id
    keys are hit as often as the many numbers; each is described in ``notes``."""
    # Choices are a seeded Random's: Hypothesis's integers and sampled_from lean to their
    # ends, and most mutations then fell on the first field ("format").
    rnd = draw(st.randoms(use_true_random=True))
    places = _places(name)
    for _ in range(draw(st.integers(1, 3))):
        kind = rnd.choice([k for k in places for _ in range(WEIGHTS[k]) if places[k]] + ["root"] * (rnd.random() < 0.1))
        path = () if kind == "root" else rnd.choice(places[kind])
        try:
            doc = _copy_along(doc, list(path[:-1]))
            parent = doc
            for step in path[:-1]:
                parent = parent[step]
            last = path[-1] if path else None
            if last is not None and last not in (parent if isinstance(parent, dict) else range(len(parent))):
                continue  # an earlier mutation took it away
        except (KeyError, IndexError, TypeError):
            continue
        where = ".".join(map(str, path)) or "(root)"
        if kind == "root":
            doc = draw(_values()) if rnd.random() < 0.7 else [doc]
            notes.append(f"root: {_short(doc)}")
            continue
        if rnd.random() < 0.15:  # any place: a value of another type
            parent[last] = draw(_values())
            notes.append(f"value at {where}: {_short(parent[last])}")
            continue
        value = parent[last]
        if kind in ("id key", "field key"):
            action = rnd.choice(["rename", "rename", "delete", "copy"])
            new = rnd.choice(_variants(str(last)) + list(KEYS)) if action != "delete" else None
            if action == "delete":
                del parent[last]
            elif action == "rename":
                del parent[last]
                parent[new] = value
            else:
                parent[new] = value
            notes.append(f"{action} key {where}" + (f" -> {_short(new)}" if new is not None else ""))
        elif kind == "number":
            parent[last] = rnd.choice(_number_variants(value) + list(NUMBERS) + [_Raw(t) for t in RAW_TOKENS])
            notes.append(f"number at {where}: {_short(parent[last])}")
        elif kind == "string":
            parent[last] = rnd.choice(_variants(value) + list(TEXTS))
            notes.append(f"string at {where}: {_short(parent[last])}")
        elif kind == "scalar":
            parent[last] = rnd.choice([None, True, False, 0, 1, "", "null", "true"])
            notes.append(f"scalar at {where}: {_short(parent[last])}")
        elif kind == "list":
            items = list(value)
            action = rnd.choice(["drop", "duplicate", "swap", "reverse", "empty", "insert"])
            if items and action == "drop":
                items.pop(rnd.randrange(len(items)))
            elif items and action == "duplicate":
                i = rnd.randrange(len(items))
                items.insert(rnd.randrange(len(items) + 1), items[i])
            elif len(items) > 1 and action == "swap":
                i, j = rnd.randrange(len(items)), rnd.randrange(len(items))
                items[i], items[j] = items[j], items[i]
            elif action == "reverse":
                items.reverse()
            elif action == "empty":
                items = []
            else:
                items.insert(rnd.randrange(len(items) + 1), draw(_values()))
            parent[last] = items
            notes.append(f"{action} in list {where}")
        else:  # an object
            fields = dict(value)
            action = rnd.choice(["extra field", "drop field", "empty", "as list"])
            if action == "extra field":
                fields[rnd.choice(KEYS + TEXTS[:6])] = draw(_values())
            elif action == "drop field" and fields:
                del fields[rnd.choice(list(fields))]
            elif action == "empty":
                fields = {}
            parent[last] = list(fields.values()) if action == "as list" else fields
            notes.append(f"{action} in object {where}")
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
        text = _dumps(draw(_mutated_doc(doc, name, notes)), ensure_ascii=ascii_only)
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
            edits.append((rel[: -len(".yaml")] + ".yml", text))
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


#: ``whatif`` edits, by JSON pointer or tuning name (its values are JSON, else a string).
WHATIF_SETS = ("relationship.sentiment_weight=0.3", "relationship.sentiment_weight=1e400", "relationship.turns_step=-1",
               "/journal/3/tick=18446744073709551616", "/journal/0=null", "/npcs=[]", "/saved_at_tick=\"٣\"", "/nope/x=1")


def _invocations(case: Case, save: Path, content: Path | None, corpus: Path | None = None) -> list[list[str]]:
    """Every command in every output format on ``save``. With ``corpus`` (a folder to
    make), also ``whatif`` (a replay of both sides: about a second a run), ``corpus``,
    ``coverage`` and ``query``, as ``make fuzz`` runs them."""
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
    if corpus is not None:
        edit = WHATIF_SETS[len(case.how) % len(WHATIF_SETS)]
        runs += [["whatif", str(save), "--set", edit, *common, *tick, "--format", f] for f in ("text", "json")]
        runs += [["corpus", str(save), *common, "--out", str(corpus)],
                 *(["coverage", str(corpus), "--format", f] for f in ("text", "json")),
                 *(["query", str(corpus), "select * from npcs", "--format", f] for f in ("text", "json", "csv"))]
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
    command, fmt = argv[0], argv[argv.index("--format") + 1] if "--format" in argv else "text"
    if code == 2 and command != "check":
        assert err.strip(), f"exit 2 without a word on stderr: {what}"
    if fmt in ("text", "csv") or (not out.strip() and (fmt == "github" or code == 2 and command != "check")):
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
    from narrative_debugger.app.cli.main import main

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


def _check_nothing_silent(case: Case, code, report: dict) -> None:
    """``check``'s status agrees with its findings, and a fallback is a finding: "0 errors"
    must mean nothing was skipped (issue 35)."""
    findings = [f for file in report["files"] for f in file["findings"]]
    codes = {f["code"] for f in findings}
    errors = [f for f in findings if f["severity"] == "error"]
    what = f"check --format json exit {code}: {sorted(codes)} for {case!r}"
    if code == 0:
        assert not errors, f"exit 0 with errors: {what}"
    if code == 1:
        assert errors, f"exit 1 without an error: {what}"
    if code == 2 or codes & {"F001", "F003"}:
        return  # the save was not read: its content may not have been either
    if case.content == "missing":
        assert "C010" in codes, f"the bundled sample content stood in without a warning: {what}"
    last_edit = dict(case.content_edits)  # a later edit of a path undoes an earlier one (a dir, then deleted)
    if case.content == "file" or any(edit == "dir" or rel.endswith(".yml") for rel, edit in last_edit.items()):
        assert any(c.startswith("C") for c in codes), f"content skipped without a finding: {what}"


def check_case(case: Case, base: Path, every: bool = False) -> None:
    """Lay ``case`` out under a new folder of ``base``, run every invocation (``every``:
    the slow commands too), apply the oracle."""
    folder = Path(tempfile.mkdtemp(dir=base))
    corpus = Path(tempfile.mkdtemp(dir=base)) / "corpus" if every else None
    try:
        save, content = _lay_out(case, folder)
        before = _hashes(folder)
        for argv in _invocations(case, save, content, corpus):
            code, out, err = run_cli(argv)
            _check_output(argv, code, out, err)
            if argv[0] == "check" and argv[-1] == "json":
                _check_nothing_silent(case, code, _strict_json(out))
        assert _hashes(folder) == before, "an input file changed"
        TRIED[0] += 1
    finally:
        shutil.rmtree(folder, ignore_errors=True)
        if corpus is not None:
            shutil.rmtree(corpus.parent, ignore_errors=True)


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

    def report(*findings):
        return {"files": [{"findings": [{"code": code, "severity": severity} for code, severity in findings]}]}

    plain = Case(sample="walkaway-spiral.json", save=b"")
    with pytest.raises(AssertionError, match="exit 0 with errors"):
        _check_nothing_silent(plain, 0, report(("K001", "error")))
    with pytest.raises(AssertionError, match="exit 1 without an error"):
        _check_nothing_silent(plain, 1, report(("K004", "warning")))
    with pytest.raises(AssertionError, match="without a warning"):
        _check_nothing_silent(Case(sample="walkaway-spiral.json", save=b"", content="missing"), 0, report())
    with pytest.raises(AssertionError, match="skipped without a finding"):
        _check_nothing_silent(Case(sample="walkaway-spiral.json", save=b"", content_edits=[("npcs/x.yaml", "dir")]), 0, report())
    _check_nothing_silent(Case(sample="walkaway-spiral.json", save=b"", content="missing"), 0, report(("C010", "warning")))


def _edited(how: str, edit=None, *, sample: str = "walkaway-spiral.json", encoding: str = "utf-8", **fields) -> Case:
    """A case made by hand: the sample with ``edit(doc)`` applied, in ``encoding``."""
    original, doc = _sample(sample)
    data = original
    if edit is not None:
        doc = json.loads(original)
        edit(doc)
        data = _dumps(doc, ensure_ascii=False).encode(encoding)
    elif encoding != "utf-8":
        data = original.decode("utf-8").encode(encoding)
    return Case(sample=sample, save=fields.pop("save", data), how=[how], **fields)


def _rename(mapping: dict, old: str, new: str) -> None:
    mapping[new] = mapping.pop(old)


def _first(doc, event: str) -> dict:
    return next(e["event"][event] for e in doc["journal"] if event in e["event"])


#: The issue's hostile patterns, run before the drawn inputs on every run.
HAND_MADE = (
    _edited("npcs key of 4301 digits", lambda d: _rename(d["npcs"], "9", "1" * 4301)),
    _edited("FactId sequence of 4301 digits", lambda d: _rename(d["player"]["knowledge"]["facts"], "interaction.kael-davan_001",
                                                                "interaction.kael-davan_" + "1" * 4301)),
    _edited("entities key in Arabic-Indic digits", lambda d: _rename(d["player"]["knowledge"]["entities"], "17", "١٧")),
    _edited("a sentiment that overflows to -inf", lambda d: _first(d, "RelationshipInteraction").update(sentiment=_Raw("-1e400"))),
    _edited("a tick of 5_000", lambda d: d["journal"][3].update(tick="5_000")),
    _edited("UTF-16 without a BOM", encoding="utf-16-le"),
    _edited("gzip twice", file_name="save.json.gz", save=gzip.compress(gzip.compress(_sample("walkaway-spiral.json")[0], mtime=0), mtime=0)),
    _edited("two profiles of one NPC", content_edits=[("npcs/mira-holt.yml", (CONTENT / "npcs" / "mira-holt.yaml").read_bytes())]),
    _edited("--tick in Arabic-Indic digits", tick="٣"),
)


def _with_hand_made(test):
    for case in reversed(HAND_MADE):
        test = example(case=case)(test)
    return test


@settings(max_examples=EXAMPLES, derandomize=True, **COMMON)
@_with_hand_made
@given(case=cases())
def test_every_command_survives_mutated_saves_and_content(fuzz_dir, case):
    check_case(case, fuzz_dir)


@pytest.mark.skipif(not SECONDS, reason="make fuzz sets FUZZ_SECONDS")
def test_fuzz_for_a_while(fuzz_dir):
    """Fresh random inputs (all four samples) until ``FUZZ_SECONDS`` have passed."""

    @settings(max_examples=20, derandomize=False, **COMMON)
    @given(case=cases(ALL_SAVES))
    def batch(case):
        check_case(case, fuzz_dir, every=True)

    start, TRIED[0] = time.monotonic(), 0
    while time.monotonic() - start < SECONDS:
        batch()
    print(f"\nfuzz: {TRIED[0]} inputs in {time.monotonic() - start:.0f} s, each through {len(_invocations(Case('evening.json', b''), Path('x'), None, Path('c')))} runs: no failure")

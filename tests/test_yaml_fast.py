"""libyaml reads content exactly as the careful loader does: values, marks, duplicates."""

from __future__ import annotations

from pathlib import Path

import pytest
import yaml
from narrative_debugger.models.content import yaml_io
from narrative_debugger.models.content.yaml_io import MarkedDict, MarkedList, load_yaml
from narrative_debugger.models.rules.findings import FindingSink

ROOT = Path(__file__).resolve().parent.parent
CONTENT = ROOT / "sample_saves" / "content"

pytestmark = pytest.mark.skipif(not yaml.__with_libyaml__, reason="PyYAML without libyaml")


def careful(text: str):
    loader = yaml_io._Loader(text)
    try:
        return loader.get_single_data(), loader.duplicate_keys
    finally:
        loader.dispose()


def shape(value):
    """The value with every mark it carries, for an exact comparison."""
    if isinstance(value, MarkedDict):
        return ("map", value.mark, sorted(value.key_marks.items(), key=repr), [(repr(k), shape(v)) for k, v in value.items()])
    if isinstance(value, MarkedList):
        return ("seq", value.mark, value.item_marks, [shape(v) for v in value])
    return (type(value).__name__, value)


@pytest.mark.parametrize("path", sorted(CONTENT.rglob("*.yaml")), ids=lambda p: p.relative_to(CONTENT).as_posix())
def test_every_sample_content_file_reads_the_same(path):
    text = path.read_text(encoding="utf-8")
    fast = yaml_io._load_fast(text)
    assert fast is not None, "the sample content should take the fast path"
    value, duplicates = careful(text)
    assert shape(fast[0]) == shape(value) and fast[1] == duplicates


SAME = [
    "a: 1\nb: [x, 'y', \"z\"]\nc: {d: null, e: ~}\n",
    "no: no\non: on\ntime: 1:30\ndate: 2024-01-02\nhex: 0x1F\noct: 0o17\nf: .5\ninf: .inf\n",
    "key: 1\nkey: 2\nother:\n  x: 1\n  x: 3\n",
    "é: ünïcode 😀\nlist:\n  - émoji 😀\n  -   spaced\n",
    "multi: |\n  line one\n  line two\nfolded: >\n  a\n  b\n",
    "",
    "# only a comment\n",
    "- 1\n- - 2\n  - 3\n",
]


@pytest.mark.parametrize("text", SAME)
def test_texts_that_take_the_fast_path_read_the_same(text):
    fast = yaml_io._load_fast(text)
    assert fast is not None
    value, duplicates = careful(text)
    assert shape(fast[0]) == shape(value) and fast[1] == duplicates


@pytest.mark.parametrize(
    "text",
    [
        "a: 1\t# a tab before a comment\n",  # YAML 1.2 tabs: the careful scanner's rules
        "a: &x [1]\nb: *x\n",  # an alias: counted and bounded by the careful loader
        "a: \x00\n",  # a character YAML forbids
        "a: [1, 2\n",  # a syntax error: the careful loader says where
        "a:\n\t- 1\n",  # a tab in indentation
    ],
)
def test_texts_the_careful_loader_decides(text):
    assert yaml_io._load_fast(text) is None


def test_a_syntax_error_is_reported_by_the_careful_loader(tmp_path):
    (tmp_path / "x.yaml").write_text("a: [1, 2\nb: 3\n", encoding="utf-8")
    sink = FindingSink()
    assert load_yaml(tmp_path / "x.yaml", tmp_path, sink) is None
    (finding,) = sink.close()
    assert finding.code == "C001" and finding.location.startswith("x.yaml:") and "does not parse" in finding.message


@pytest.mark.parametrize("text", ["name: a\nname: b\n", "# * takes the careful path\nname: a\nname: b\n"])
def test_duplicate_keys_found_on_either_path(tmp_path, text):
    """The finding's location names the file and the repeated key's line:col; its message
    says the rest, once (it began with the file as well: "d.yaml:2:1  d.yaml: the key …"),
    and where the first one is."""
    (tmp_path / "d.yaml").write_text(text, encoding="utf-8")
    sink = FindingSink()
    assert load_yaml(tmp_path / "d.yaml", tmp_path, sink) == {"name": "b"}
    (finding,) = sink.close()
    first = text.count("\n", 0, text.index("name: a")) + 1
    assert finding.code == "C001" and finding.location == f"d.yaml:{first + 1}:1"
    assert finding.message == f"the key 'name' appears twice in one mapping (first at {first}:1); the last value is used"
    assert "d.yaml" not in finding.message and finding.location not in finding.message


def test_libyaml_is_what_pyyaml_uses_here():
    assert yaml.__with_libyaml__

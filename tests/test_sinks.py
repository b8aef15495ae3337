"""Escaping depends on where the text goes (issue 35, pattern 2): the same hostile
strings through every sink of ``models.report.sinks``, each output parsed back as
its reader would and found inert; then a save holding such text through ``check``
in every format, ``diff`` and the Markdown summary."""

from __future__ import annotations

import html as html_lib
import json
import os
import re
import shlex
import shutil
import subprocess
import sys
import unicodedata
from html.parser import HTMLParser
from pathlib import Path
from xml.etree import ElementTree as ET

import pytest
from narrative_debugger.models.report import sinks

ROOT = Path(__file__).resolve().parent.parent
DATA = Path(__file__).parent / "data"
SAMPLES = ROOT / "sample_saves"

#: (name, text): markup, links, shell, quotes, line breaks, controls, invisible and
#: bidi characters, lone surrogates, characters past U+FFFF, and a very long one.
HOSTILE = [
    ("plain", "kael-davan"),
    ("accents and CJK", "Kaël 凯尔 Δ"),
    ("emoji", "fire \U0001f525"),
    ("image", "![x](http://evil.test/x.png)"),
    ("link", "[click](javascript:alert(1))"),
    ("reference link", "[a][1]\n[1]: http://evil.test"),
    ("autolink", "<http://evil.test> http://evil.test www.evil.test a@evil.test"),
    ("html", "<img src=x onerror=alert(1)><b>bold</b><script>x</script>"),
    ("entity", "&lt;b&gt; &amp; &#60;"),
    ("backticks", "``code`` `x`"),
    ("emphasis", "*a* **b** _c_ ~~d~~"),
    ("table pipe", "a | b || c"),
    ("heading", "# heading"),
    ("list", "- item"),
    ("ordered list", "1. item"),
    ("quote block", "> quoted"),
    ("shell", "$(rm -rf ~); `id` && echo $HOME | cat > /tmp/x &"),
    ("quotes", "it's \"quoted\" 'single'"),
    ("backslashes", "C:\\saves\\new\\x.json \\[a\\]"),
    ("glob", "*.json ?x [ab]"),
    ("dash first", "--content=/etc"),
    ("newlines", "a\nb\r\nc\rd"),
    ("tab", "a\tb"),
    ("nul", "a\x00b"),
    ("escape sequence", "\x1b[2J\x1b]0;title\x07"),
    ("c1 control", "a\x85b\x9bc"),
    ("zero width", "ka\u200bel\u200c\u200d\u2060\ufeff"),
    ("soft hyphen", "ka\u00adel"),
    ("no-break space", "ka\u00a0el\u3000"),
    ("bidi override", "evil\u202egnp.exe"),
    ("bidi isolates and marks", "\u2066a\u2069\u200e\u200f\u061c"),
    ("line separators", "a\u2028b\u2029c"),
    ("tag characters", "flag\U000e0041\U000e007f"),
    ("variation selector", "a\ufe0fb\u034f"),
    ("hangul filler", "a\u3164b"),
    ("private use", "a\ue000b\U000f0000"),
    ("lone surrogates", "a\ud800b\udfffc"),
    ("undecodable file name byte", "save\udc80\udcff.json"),
    ("noncharacters", "a\ufffeb\uffff"),
    ("percent and properties", "100% done, file=x::error::y:z"),
    ("sarif placeholders", "{0} {{1}} [link](1)"),
    ("very long", ("<a href=x>![i](u)</a>`|\u200b\u202e\n$x;" * 5000)),
]
IDS = [name for name, _ in HOSTILE]
TEXTS = [text for _, text in HOSTILE]

#: What no reader sees or what changes the text after it: must never come out raw.
HIDDEN = {"Cc", "Cf", "Co", "Cs", "Zl", "Zp"}


def _hidden(ch: str) -> bool:
    return (unicodedata.category(ch) in HIDDEN and ch not in "\t\n") or \
        (unicodedata.category(ch) == "Zs" and ch != " ") or ch in "\u034f\u3164\ufe0f"


def _unescape_visible(text: str) -> str:
    """Undo ``sinks.visible``: its ``\\uXXXX`` escapes (pairs too) back to characters."""
    return re.sub(r"(\\u[0-9a-f]{4})+", lambda m: m.group().encode("ascii").decode("unicode_escape").encode(
        "utf-16", "surrogatepass").decode("utf-16", "surrogatepass"), text)


# ----- terminal -----
@pytest.mark.parametrize("text", TEXTS, ids=IDS)
def test_terminal_shows_every_character(text):
    for out, keeps in ((sinks.terminal(text), "\t\n"), (sinks.one_line(text), "")):
        assert not any(_hidden(c) and c not in keeps for c in out), ascii(out[:200])
        if "\\u" not in text:  # a literal "\u200b" in the input would read as an escape: none here
            assert _unescape_visible(out) == text
    assert "\n" not in sinks.one_line(text) and "\r" not in sinks.one_line(text)


def test_terminal_keeps_distinct_inputs_distinct():
    """Slugs that differ only by an invisible character print differently."""
    slugs = ["kael", "ka\u200bel", "ka\u200cel", "ka\u00adel", "ka\u00a0el", "kael\u200d", "\ufeffkael", "ka\u2060el",
             "kael\U000e0041", "kae\u202el", "kae\u034fl", "ka\ufe0fel", "ka el"]
    shown = [sinks.one_line(s) for s in slugs]
    assert len(set(shown)) == len(slugs), shown
    outs = [sinks.one_line(t) for t in TEXTS]
    assert len(set(outs)) == len(TEXTS)


def test_terminal_leaves_readable_text_alone():
    for text in ("kael-davan", "Kaël 凯尔 Δ", "fire \U0001f525", "a\tb\nc"):
        assert sinks.terminal(text) == text


# ----- Markdown -----
#: Characters that start inline markup or HTML in CommonMark/GitHub when not escaped.
_MD_ACTIVE = set("\\`*~[]|!#<>")


def _markdown_prose_is_inert(out: str, text: str) -> None:
    """Walk ``out`` as a CommonMark inline parser would: every markup character is
    behind a backslash or an entity; no bare URL; and read back it is ``one_line(text)``."""
    assert "\n" not in out and "\r" not in out
    read = []
    k = 0
    while k < len(out):
        c = out[k]
        if c == "\\":
            assert k + 1 < len(out) and out[k + 1] in "\\`*_~[]|!#:.@-+=)", (out[k:k + 10])
            read.append(out[k + 1])
            k += 2
            continue
        if c == "&":
            entity = re.match(r"&(amp|lt|gt);", out[k:])
            assert entity, out[k:k + 10]
            read.append(html_lib.unescape(entity.group()))
            k += len(entity.group())
            continue
        assert c not in _MD_ACTIVE, (c, out[max(0, k - 20):k + 20])
        if c == "_":  # only inside a word, where it cannot delimit emphasis
            assert 0 < k < len(out) - 1 and out[k - 1].isalnum() and out[k + 1].isalnum(), out[k - 5:k + 5]
        read.append(c)
        k += 1
    assert "".join(read) == sinks.one_line(text)
    assert not re.search(r"(?i)(?<!\\)://|www\.(?!\\)|(?<!\\)@", out)
    assert not re.match(r"\d*[-+=.)]", out)  # no list item or setext underline


@pytest.mark.parametrize("text", TEXTS, ids=IDS)
def test_markdown_prose_is_inert(text):
    out = sinks.markdown(text)
    _markdown_prose_is_inert(out, text)
    assert sinks.markdown_cell(text) == out  # its pipes are escaped already


@pytest.mark.parametrize("text", TEXTS, ids=IDS)
def test_markdown_code_span_holds_the_text(text):
    out = sinks.markdown_code(text)
    fence = re.match("`+", out).group()
    assert out.endswith(fence) and len(out) > 2 * len(fence)
    inner = out[len(fence):-len(fence)]
    assert fence not in re.sub("`{%d,}" % (len(fence) + 1), "", inner)  # no run of exactly the fence's length
    assert "\n" not in out and not any(_hidden(c) for c in out)
    body = inner[1:-1] if inner.startswith(" ") and inner.endswith(" ") and inner.strip(" ") else inner
    assert body == sinks.one_line(text)
    cell = sinks.markdown_cell(text, code=True)
    assert not re.search(r"(?<!\\)\|", cell) and cell.replace("\\|", "|") == out


# ----- HTML -----
class _Tags(HTMLParser):
    def __init__(self) -> None:
        super().__init__(convert_charrefs=True)
        self.tags: list[str] = []
        self.text: list[str] = []

    def handle_starttag(self, tag, attrs):
        self.tags.append(tag)

    def handle_endtag(self, tag):
        self.tags.append("/" + tag)

    def handle_comment(self, data):
        self.tags.append("!--")

    def handle_data(self, data):
        self.text.append(data)


@pytest.mark.parametrize("text", TEXTS, ids=IDS)
def test_html_is_text(text):
    out = sinks.html(text)
    parser = _Tags()
    parser.feed(f"<p title=\"{out}\">{out}</p>")
    parser.close()
    assert parser.tags == ["p", "/p"]
    assert "".join(parser.text) == sinks.visible(text)
    assert not any(c in out for c in "<>\"'") and not any(_hidden(c) for c in out if c not in "\t\n")


# ----- shell -----
@pytest.mark.parametrize("text", TEXTS, ids=IDS)
def test_shell_argument_round_trips(text):
    out = sinks.shell(text)
    assert "\n" not in out and "\r" not in out and not any(_hidden(c) for c in out)
    if out.startswith("$'"):
        assert sinks.one_line(text) != text  # only text a reader could not see takes the $'...' form
    else:
        assert shlex.split(out) == [text]
    assert shlex.split(sinks.shell_command("narrative-debugger", "x y", "--npc", "a;b")) == ["narrative-debugger", "x y", "--npc", "a;b"]


def test_shell_path_is_never_an_option():
    assert shlex.split(sinks.shell_path("-rf $(x).json")) == ["./-rf $(x).json"]
    assert shlex.split(sinks.shell_path("/saves/-x.json")) == ["/saves/-x.json"]
    assert sinks.shell_path("evening.json") == "evening.json"


@pytest.mark.skipif(shutil.which("bash") is None, reason="needs bash for $'...'")
def test_shell_arguments_reach_a_real_shell_unchanged():
    """bash is given each quoted argument and prints it back: the same bytes
    (a file name's undecodable bytes too). NUL cannot be in an argument at all."""
    texts = [t for t in TEXTS if "\x00" not in t and not re.search("[\ud800-\udc7f\udd00-\udfff]", t)]
    script = "printf '%s\\0' " + " ".join(sinks.shell(t) for t in texts)
    out = subprocess.run(["bash"], input=script.encode("utf-8"), capture_output=True, check=True,
                         env={"LC_ALL": "C.UTF-8", "PATH": os.environ["PATH"]}).stdout
    assert out.split(b"\0")[:-1] == [os.fsencode(t) if "\udc80" in t else t.encode("utf-8") for t in texts]


# ----- XML -----
@pytest.mark.parametrize("text", TEXTS, ids=IDS)
def test_xml_parses_and_reads_back(text):
    out = sinks.xml(text)
    root = ET.fromstring(f"<a b=\"{out}\" c='{out}'>{out}</a>")
    assert root.get("b") == root.get("c") == root.text == sinks.xml_chars(text)
    assert not any(_hidden(c) for c in root.text if c not in "\t\n")
    element = ET.Element("a", b=sinks.xml_chars(text))
    element.text = sinks.xml_chars(text)
    assert ET.fromstring(ET.tostring(element, encoding="unicode")).text == sinks.xml_chars(text)


# ----- SARIF -----
def _sarif_read(text: str) -> str:
    """A SARIF viewer's reading of a plain-text message (§3.11.5, §3.11.6): no placeholder
    and no embedded link may be left; returns the literal text."""
    out = []
    k = 0
    while k < len(text):
        c = text[k]
        if c == "\\" and k + 1 < len(text) and text[k + 1] in "[]\\" and (text[k + 1] != "\\" or re.match(r"\\+[\[\]]", text[k:])):
            out.append(text[k + 1])
            k += 2
            continue
        if c in "{}":
            assert text[k + 1:k + 2] == c, text[k:k + 10]
            out.append(c)
            k += 2
            continue
        assert c not in "[]", text[max(0, k - 10):k + 10]
        out.append(c)
        k += 1
    return "".join(out)


@pytest.mark.parametrize("text", TEXTS, ids=IDS)
def test_sarif_message_is_strict_json_and_plain_text(text):
    out = sinks.sarif_message(text)
    doc = json.dumps({"text": out}, ensure_ascii=False, allow_nan=False)
    assert json.loads(doc.encode("utf-8"))["text"] == out  # encodes as UTF-8: no lone surrogate left
    assert _sarif_read(out) == sinks.visible(text)


# ----- GitHub annotations -----
def _github_decode(text: str) -> str:
    return re.sub("%(25|0D|0A|3A|2C)", lambda m: chr(int(m.group(1), 16)), text)


@pytest.mark.parametrize("text", TEXTS, ids=IDS)
def test_github_annotation_stays_one_command(text):
    data, prop = sinks.github_data(text), sinks.github_property(text)
    line = f"::error file={prop},title=X::{data}"
    assert "\n" not in line and "\r" not in line and not any(_hidden(c) for c in line)
    command = re.fullmatch(r"::(\w+) ([^:]*)::(.*)", line)
    assert command and command.group(1) == "error" and ":" not in prop
    assert command.group(2).split(",") == [f"file={prop}", "title=X"]
    message = command.group(3)
    assert _github_decode(message) == _github_decode(prop) == sinks.visible(text)


# ----- end to end: a save holding hostile text -----
EVIL = "interaction.![x](http://evil.test/x.png)<img src=x>`|#\u200b\u202e\n{0}[l](1)%,:\x1b[2J_001"


def _run(*args):
    return subprocess.run([sys.executable, "-m", "narrative_debugger.app", *args], capture_output=True, timeout=120)


@pytest.fixture(scope="module")
def hostile_save(tmp_path_factory) -> Path:
    doc = json.loads((DATA / "minimal.json").read_text(encoding="utf-8"))
    facts = doc["player"]["knowledge"]["facts"]
    facts[EVIL] = next(iter(facts.values()))
    save = tmp_path_factory.mktemp("hostile") / "hostile.json"
    save.write_text(json.dumps(doc), encoding="utf-8")
    return save


def _no_raw(text: str) -> None:
    assert not any(_hidden(c) for c in text if c not in "\t\n"), ascii(text[:300])


def test_check_in_every_format_with_hostile_text(hostile_save):
    outs = {}
    for fmt in ("text", "json", "sarif", "junit", "github"):
        result = _run("check", str(hostile_save), "--format", fmt)
        assert result.returncode == 1 and b"Traceback" not in result.stderr, (fmt, result.stderr)
        outs[fmt] = result.stdout.decode("utf-8")  # strict: no lone surrogate, valid UTF-8
    for line in outs["text"].splitlines():
        _no_raw(line)
    assert any("\\u202e\\u000a{0}" in line for line in outs["text"].splitlines())
    assert json.loads(outs["json"])["files"][0]["findings"]
    log = json.loads(outs["sarif"])
    messages = [r["message"]["text"] for r in log["runs"][0]["results"]]
    assert any("evil.test" in m for m in messages)
    for m in messages:
        _no_raw(m)
        _sarif_read(m)  # no embedded link, no placeholder
    root = ET.fromstring(outs["junit"].encode("utf-8"))
    failures = [el for el in root.iter("failure")]
    assert failures and all("\n" not in el.get("message") for el in failures)
    for el in root.iter():
        _no_raw((el.text or "") + "".join(el.attrib.values()))
    github = outs["github"].splitlines()
    assert github and all(line.startswith(("::error ", "::warning ")) for line in github)
    for line in github:
        _no_raw(line)
        assert line.count("::") >= 2 and "\r" not in line


def test_diff_with_hostile_text(hostile_save):
    text = _run("diff", str(DATA / "minimal.json"), str(hostile_save))
    assert text.returncode == 1 and b"Traceback" not in text.stderr, text.stderr
    lines = text.stdout.decode("utf-8").splitlines()
    _no_raw("\n".join(lines))
    assert all(line.startswith(("A: ", "B: ", "  ", "4 differences", "")) for line in lines)
    assert all(not line.startswith("{0}") for line in lines), lines  # the newline did not split a difference
    as_json = _run("diff", str(DATA / "minimal.json"), str(hostile_save), "--format", "json")
    assert as_json.returncode == 1
    json.loads(as_json.stdout.decode("utf-8"))


def test_summary_with_hostile_names_is_inert(tmp_path):
    """The bug-report summary: names, locations, fact ids and the save's file name from
    a hostile save and content are inert Markdown; the suggested commands are quoted."""
    from narrative_debugger.models.playthrough import Playthrough
    from narrative_debugger.models.report.meta import REPORT_FORMAT_VERSION, ViewRecord
    from narrative_debugger.models.report.summary import build_summary

    content = tmp_path / "content"
    shutil.copytree(SAMPLES / "content", content)
    name = "![x](http://evil.test/x.png) [a](javascript:alert(1)) <b>x</b> `c` | # \u200b\u202e"
    profile = content / "npcs" / "lera-sessik.yaml"
    profile.write_text(profile.read_text(encoding="utf-8").replace("name: Lera Sessik", f"name: {json.dumps(name)}", 1),
                       encoding="utf-8")
    doc = json.loads((SAMPLES / "evening.json").read_text(encoding="utf-8"))
    for entry in doc["journal"]:
        if "InteractionStarted" in entry["event"]:
            entry["event"]["InteractionStarted"]["location"] = name
    save = tmp_path / "-x $(touch pwned) 'q'.json"
    save.write_text(json.dumps(doc), encoding="utf-8")
    play = Playthrough.open(save, content)
    tick = next(m.started_tick for m in play.state_at(play.last_tick).knowledge.interactions_with(9))
    record = ViewRecord(REPORT_FORMAT_VERSION, play.save.label, play.save.sha256, "", "", tick, "lera-sessik", "knowledge")
    summary = build_summary(play, record, None, "-r $(x).png")
    _no_raw(summary)
    prose = [line for line in summary.splitlines() if "evil.test" in line and not line.startswith("|")]
    assert prose
    for line in prose:
        outside_code = re.sub(r"(`+).*?\1", "", line)
        assert "<" not in outside_code and not re.search(r"(?<!\\)[\[\]]", outside_code), line
    reopen = summary.splitlines()[summary.splitlines().index("## Reopen") + 2].strip("`")
    assert shlex.split(reopen) == ["narrative-debugger", "./" + save.name, "--tick", str(tick), "--npc", "lera-sessik"]
    open_report = re.search(r"run `([^`]*)`", summary).group(1)
    assert shlex.split(open_report) == ["narrative-debugger", "open-report", "./-r $(x).png"]

"""One escaping function per place text from a save or content can go (a "sink").

Names, slugs, fact ids, lines, messages and file names come from saves and content
that anyone may have edited. Each sink has its own rules, so each has one function
here and every writer of that sink calls it; none escapes on its own:

===================  ==========================================================
sink                 function
===================  ==========================================================
terminal             ``terminal`` (``one_line`` for one line of it)
Markdown             ``markdown`` (prose), ``markdown_code`` (a code span),
                     ``markdown_cell`` (inside a table cell)
HTML (Qt rich text)  ``html``
POSIX shell          ``shell`` (one argument), ``shell_path`` (a file name),
                     ``shell_command`` (a command line)
XML 1.0              ``xml`` (text or attribute value), ``xml_chars`` (only the
                     characters, for text an XML writer escapes itself)
SARIF 2.1.0          ``sarif_message`` (a ``message.text``), ``visible`` for other strings
GitHub annotations   ``github_data`` (the message), ``github_property`` (``file=``...)
===================  ==========================================================

The characters no reader can see or that change what follows them are written as
escapes everywhere (``visible``): C0 and C1 controls, format characters (Unicode
category Cf: zero-width space and joiners, soft hyphen, bidi embeddings, overrides,
isolates and marks, the BOM, tag characters), private-use characters (Co), lone
surrogates (Cs: what ``surrogateescape`` makes of a file name that is not UTF-8),
line and paragraph separators (Zl, Zp), spaces other than U+0020 (Zs, e.g. the
no-break space), variation selectors and the other default-ignorable characters
(Hangul fillers, U+034F, U+180B..U+180F, U+FFA0). An escape is ``\\uXXXX`` (a
character past U+FFFF as its UTF-16 pair ``\\uXXXX\\uXXXX``), which is also valid
inside a JSON string and means the same there; so ``ka\\u200bel`` and ``kael`` print
apart. (A save that holds the six characters ``\\u200b`` literally prints like one
holding U+200B: the backslash is not doubled, so JSON written to a terminal stays
valid and equal.)
"""

from __future__ import annotations

import html as _html
import re
import shlex
import unicodedata
from functools import lru_cache

__all__ = [
    "github_data", "github_property", "html", "markdown", "markdown_cell", "markdown_code", "one_line",
    "sarif_message", "shell", "shell_command", "shell_path", "terminal", "visible", "xml", "xml_chars",
]

#: Categories written as escapes: controls, format, private use, surrogates, separators but U+0020.
_HIDDEN_CATEGORIES = frozenset({"Cc", "Cf", "Co", "Cs", "Zl", "Zp", "Zs"})
#: Default-ignorable characters outside those categories (Unicode DerivedCoreProperties).
_IGNORABLE_RANGES = ((0x034F, 0x034F), (0x115F, 0x1160), (0x17B4, 0x17B5), (0x180B, 0x180F), (0x3164, 0x3164),
                     (0xFE00, 0xFE0F), (0xFFA0, 0xFFA0), (0xFFF0, 0xFFF8), (0xE0000, 0xE0FFF))
#: Runs of characters that may need a look (everything but printable ASCII, tab and newline).
_SUSPECT = re.compile("[^\t\n\x20-\x7e]+")


def _escape(code: int) -> str:
    if code > 0xFFFF:
        code -= 0x10000
        return f"\\u{0xD800 + (code >> 10):04x}\\u{0xDC00 + (code & 0x3FF):04x}"
    return f"\\u{code:04x}"


@lru_cache(maxsize=4096)
def _show(ch: str) -> str:
    """``ch`` itself when a reader sees it as itself, else its escape."""
    code = ord(ch)
    if ch == " " or ch == "\t" or ch == "\n":
        return ch
    if unicodedata.category(ch) in _HIDDEN_CATEGORIES or any(lo <= code <= hi for lo, hi in _IGNORABLE_RANGES):
        return _escape(code)
    return ch


def _show_run(match: re.Match) -> str:
    return "".join(map(_show, match.group()))


def visible(text: object) -> str:
    """``str(text)`` with every character a reader cannot see written as ``\\uXXXX``
    (tab and newline kept). The base of every sink below."""
    text = str(text)
    return _SUSPECT.sub(_show_run, text) if _SUSPECT.search(text) else text


def terminal(text: object) -> str:
    """``text`` for a terminal: no escape sequence, carriage return or invisible
    character reaches it raw (``visible``); tab and newline kept."""
    return visible(text)


_LINE_BREAKS = {0x09: "\\u0009", 0x0A: "\\u000a"}


def one_line(text: object) -> str:
    """``text`` as one line of terminal output: like ``terminal``, tab and newline escaped too."""
    return visible(text).translate(_LINE_BREAKS)


# ----- Markdown (CommonMark and GitHub's dialect) -----
#: ASCII punctuation that can start or end inline markup: emphasis, strike-through,
#: code, links and images, tables, escapes. CommonMark lets a backslash escape each.
#: An ``_`` inside a word (``lera_001``) cannot delimit emphasis, so it is kept.
_MD_PUNCT = re.compile(r"([\\`*~\[\]|!#]|(?<![A-Za-z0-9])_|_(?![A-Za-z0-9]))")
#: What GitHub turns into a link without brackets: ``scheme://``, ``www.``, e-mail ``@``.
_MD_AUTOLINK = re.compile(r"(?i)(?<=[a-z0-9])(:)(?=//)|(?<=\bwww)(\.)|(@)")
#: What starts a block at the start of a line: a list item, a setext underline.
_MD_BLOCK_START = re.compile(r"^(\d*)([-+=.)])")


def markdown(text: object) -> str:
    """``text`` as inert Markdown prose on one line: every markup character escaped,
    so a name reads as written and is never a link, image, HTML, code, emphasis,
    heading or table column; ``<``, ``>`` and ``&`` as entities; no bare URL or
    ``www.`` becomes a link (its ``:`` or ``.`` escaped); line breaks and invisible
    characters as ``\\uXXXX`` (``one_line``)."""
    text = one_line(text)
    text = _MD_PUNCT.sub(r"\\\1", text)
    text = _MD_AUTOLINK.sub(lambda m: "\\" + m.group(), text)
    text = _MD_BLOCK_START.sub(r"\1\\\2", text)
    return _html.escape(text, quote=False)


def markdown_code(text: object) -> str:
    """``text`` as one Markdown code span (nothing inside is markup), on one line,
    fenced with one backtick more than its longest run of backticks."""
    text = one_line(text)
    longest = max((len(run) for run in re.findall("`+", text)), default=0)
    fence = "`" * (longest + 1)
    pad = " " if text.startswith("`") or text.endswith("`") or not text.strip(" ") else ""
    return f"{fence}{pad}{text}{pad}{fence}"


def markdown_cell(text: object, *, code: bool = False) -> str:
    """``text`` inside one GitHub table cell, as prose (``markdown``, whose ``|`` is
    escaped already) or as a code span (``code=True``): there each ``|`` gets a
    backslash too, as GitHub splits cells on it even inside a code span and drops
    that backslash when it renders the span."""
    return markdown_code(text).replace("|", "\\|") if code else markdown(text)


# ----- HTML -----
def html(text: object) -> str:
    """``text`` as HTML text or a quoted attribute value (Qt rich text too): ``& < > " '``
    as entities, invisible characters as ``\\uXXXX``."""
    return _html.escape(visible(text), quote=True)


# ----- POSIX shell -----
def shell(arg: object) -> str:
    """One argument for a POSIX shell command line (sh, bash, zsh; not Windows cmd or
    PowerShell, which the product does not target), on one line.

    Printable text is quoted by ``shlex.quote``. Text with a control or invisible
    character is written as ``$'...'`` (bash, zsh and ksh; dash since 0.5.12), each
    such character as ``\\xHH`` (a byte of a file name that is not UTF-8, as Python's
    ``surrogateescape`` keeps it) or ``\\uXXXX``, so the command stays one line and
    names the same file."""
    text = str(arg)
    if one_line(text) == text:
        return shlex.quote(text)
    out = []
    for ch in text:
        code = ord(ch)
        if ch in "\\'":
            out.append("\\" + ch)
        elif 0xDC80 <= code <= 0xDCFF:
            out.append(f"\\x{code - 0xDC00:02x}")
        elif code < 0x80 and not (0x20 <= code < 0x7F):
            out.append(f"\\x{code:02x}")
        elif _show(ch) != ch or ch in "\t\n":
            out.append(f"\\u{code:04x}" if code <= 0xFFFF else f"\\U{code:08x}")
        else:
            out.append(ch)
    return "$'" + "".join(out) + "'"


def shell_path(path: object) -> str:
    """A file name as one argument: ``shell``, after ``./`` when it starts with ``-``
    (so ``-rf.json`` is not read as an option)."""
    text = str(path)
    return shell("./" + text if text.startswith("-") else text)


def shell_command(*args: object) -> str:
    """A POSIX command line: each argument through ``shell``, joined by spaces."""
    return " ".join(shell(a) for a in args)


# ----- XML 1.0 -----
#: Characters XML 1.0 allows nowhere (C0 controls but tab/newline/CR, surrogates, U+FFFE/U+FFFF).
_XML_ILLEGAL = re.compile("[\x00-\x08\x0b\x0c\x0e-\x1f\ud800-\udfff\ufffe\uffff]")


def xml_chars(text: object) -> str:
    """``text`` with each character XML 1.0 forbids, and each invisible one, written as
    ``\\uXXXX``, for text an XML writer (ElementTree) escapes itself: the document stays
    well-formed and what it says readable."""
    return _XML_ILLEGAL.sub(lambda m: f"\\u{ord(m.group()):04x}", visible(text))


def xml(text: object) -> str:
    """``text`` as XML 1.0 character data or a quoted attribute value: ``& < > " '`` as
    entities, forbidden and invisible characters as ``\\uXXXX``, and carriage return,
    newline and tab as character references (an attribute keeps them)."""
    text = _html.escape(xml_chars(text), quote=True)
    return text.replace("\r", "&#13;").replace("\n", "&#10;").replace("\t", "&#9;")


# ----- SARIF 2.1.0 -----
_SARIF_BACKSLASHES = re.compile(r"(\\+)(?=[\[\]])")


def sarif_message(text: object) -> str:
    """A SARIF ``message.text`` (plain text, SARIF 2.1.0 §3.11): ``{`` and ``}`` doubled
    (§3.11.5: a single one starts a placeholder), ``[`` and ``]`` escaped with a
    backslash and a backslash before them doubled (§3.11.6: ``[text](target)`` is an
    embedded link), invisible characters as ``\\uXXXX`` text. The JSON writer
    escapes the rest."""
    text = _SARIF_BACKSLASHES.sub(lambda m: m.group(1) * 2, visible(text))
    return text.replace("[", "\\[").replace("]", "\\]").replace("{", "{{").replace("}", "}}")


# ----- GitHub workflow commands -----
def github_data(text: object) -> str:
    """The message of a ``::error ...::message`` line: ``%``, CR and LF percent-encoded
    (GitHub's ``escapeData``), invisible characters as ``\\uXXXX``: one line always."""
    return visible(text).replace("%", "%25").replace("\r", "%0D").replace("\n", "%0A")


def github_property(text: object) -> str:
    """A property value (``file=``, ``title=``) of a workflow command: as ``github_data``
    and ``:`` and ``,`` percent-encoded too (GitHub's ``escapeProperty``)."""
    return github_data(text).replace(":", "%3A").replace(",", "%2C")

"""Reading a save file's bytes into JSON values, safely.

The game writes ``serde_json`` output (save-format §1). A file from a playtest may be
truncated, hand-edited or hostile; nothing here raises on bad input or hangs. Every
problem becomes an F001 finding with a ``line:col`` location (or a JSON path where the
value parsed but cannot be a serde value), and the caller gets ``None`` when there is
no document to work with.
"""

from __future__ import annotations

import json
import re
import zlib
from dataclasses import dataclass, field

from narrative_debugger.models.rules.findings import Finding, finding

GZIP_MAGIC = b"\x1f\x8b"
UTF8_BOM = b"\xef\xbb\xbf"
#: A save larger than this (decompressed) is refused rather than read into memory.
MAX_DOCUMENT_BYTES = 1024**3
#: Integers with more digits than this are not u64/i64 values (u64 max has 20 digits).
MAX_INT_DIGITS = 40


@dataclass
class JsonDocument:
    """A parsed JSON document and what was wrong with the bytes.

    Attributes:
        value: the parsed value, or None when nothing could be parsed.
        findings: F001 findings (bad gzip, UTF-8, syntax, constants, nesting, digits,
            duplicate keys, byte-order mark).
        size: decompressed size in bytes.
    """

    value: object | None
    findings: list[Finding] = field(default_factory=list)
    size: int = 0


class _RejectedConstant(ValueError):
    pass


class _OversizedNumber(ValueError):
    pass


def _reject_constant(name: str):
    raise _RejectedConstant(name)


def _parse_int(text: str) -> int:
    digits = len(text) - (text[0] == "-")
    if digits > MAX_INT_DIGITS:
        raise _OversizedNumber(text[:20])
    return int(text)


_LONE_SURROGATE = re.compile(
    r"(?<!\\)(?:\\\\)*\\u[dD][89abAB][0-9a-fA-F]{2}(?!\\u[dD][c-fC-F][0-9a-fA-F]{2})"
    r"|(?<!\\u[dD][89abAB][0-9a-fA-F]{2})(?<!\\)\\u[dD][c-fC-F][0-9a-fA-F]{2}"
)


def line_col(text: str, pos: int) -> tuple[int, int]:
    """1-based line and column of character offset ``pos`` in ``text``."""
    line = text.count("\n", 0, pos) + 1
    col = pos - (text.rfind("\n", 0, pos) + 1) + 1
    return line, col


def _scan_outside_strings(text: str, pattern: str) -> int | None:
    """Offset of the first match of regex ``pattern`` that is not inside a JSON string."""
    scanner = re.compile(r'"(?:[^"\\]|\\.)*"|(%s)' % pattern, re.S)
    for m in scanner.finditer(text):
        if m.group(1) is not None:
            return m.start()
    return None


def _deepest_offset(text: str, limit: int) -> int:
    """Offset where bracket nesting (outside strings) first exceeds ``limit``."""
    depth = 0
    in_str = False
    esc = False
    for i, ch in enumerate(text):
        if in_str:
            if esc:
                esc = False
            elif ch == "\\":
                esc = True
            elif ch == '"':
                in_str = False
        elif ch == '"':
            in_str = True
        elif ch in "[{":
            depth += 1
            if depth > limit:
                return i
        elif ch in "]}":
            depth -= 1
    return 0


def decode_bytes(data: bytes, label: str) -> JsonDocument:
    """Parse the bytes of a save (gzip or plain) into a JSON value.

    Args:
        data: the file's bytes.
        label: the file name, used in messages.

    Returns:
        A JsonDocument; ``value`` is None when the bytes are not a JSON document.
        Never raises on bad input.
    """
    found: list[Finding] = []
    if data[:2] == GZIP_MAGIC:
        try:
            data = _gunzip(data)
        except (OSError, EOFError, zlib.error, _OversizedNumber) as exc:
            found.append(finding("F001", f"{label}: not a readable gzip stream ({exc})", "1:1"))
            return JsonDocument(None, found)
    elif label.endswith(".gz"):
        found.append(finding("F001", f"{label}: the name ends in .gz but the file is not gzip", "1:1"))
        return JsonDocument(None, found)
    if data.startswith(UTF8_BOM):
        found.append(
            finding("F001", f"{label}: starts with a UTF-8 byte-order mark, which the game never writes; read past it", "1:1")
        )
        data = data[len(UTF8_BOM):]
    try:
        text = data.decode("utf-8")
    except UnicodeDecodeError as exc:
        head = data[: exc.start].decode("utf-8", "replace")
        line, col = line_col(head, len(head))
        found.append(finding("F001", f"{label}: not UTF-8 (byte 0x{data[exc.start]:02x} at offset {exc.start})", f"{line}:{col}"))
        return JsonDocument(None, found, len(data))
    value = parse_text(text, label, found)
    return JsonDocument(value, found, len(data))


def _gunzip(data: bytes) -> bytes:
    d = zlib.decompressobj(wbits=31)
    out = d.decompress(data, MAX_DOCUMENT_BYTES)
    if d.unconsumed_tail:
        raise _OversizedNumber(f"larger than {MAX_DOCUMENT_BYTES} bytes when decompressed")
    if not d.eof:
        raise EOFError("the gzip stream is truncated")
    return out


def parse_text(text: str, label: str, found: list[Finding]) -> object | None:
    """Parse JSON text strictly as serde_json would accept it; append F001 findings.

    Rejects NaN/Infinity, integers longer than ``MAX_INT_DIGITS`` digits and nesting
    too deep for the parser; reports duplicate object keys (the last one wins, as in
    most readers) without failing.
    """
    duplicates: list[str] = []

    def pairs_hook(pairs, _dict=dict):
        d = _dict(pairs)
        if len(d) != len(pairs):
            seen: set[str] = set()
            for key, _ in pairs:
                if key in seen:
                    duplicates.append(key)
                seen.add(key)
        return d

    try:
        value = json.loads(
            text,
            object_pairs_hook=pairs_hook,
            parse_constant=_reject_constant,
            parse_int=_parse_int,
        )
    except json.JSONDecodeError as exc:
        found.append(finding("F001", f"{label}: not valid JSON: {exc.msg}", f"{exc.lineno}:{exc.colno}"))
        return None
    except _RejectedConstant as exc:
        pos = _scan_outside_strings(text, r"-?(?:NaN|Infinity)\b") or 0
        line, col = line_col(text, pos)
        found.append(finding("F001", f"{label}: {exc} is not a JSON number (serde_json never writes it)", f"{line}:{col}"))
        return None
    except _OversizedNumber:
        pos = _scan_outside_strings(text, r"-?\d{%d,}" % (MAX_INT_DIGITS + 1)) or 0
        line, col = line_col(text, pos)
        found.append(finding("F001", f"{label}: an integer with more than {MAX_INT_DIGITS} digits cannot be a game value", f"{line}:{col}"))
        return None
    except RecursionError:
        pos = _deepest_offset(text, 900)
        line, col = line_col(text, pos)
        found.append(finding("F001", f"{label}: nested too deeply to be a save", f"{line}:{col}"))
        return None
    except (ValueError, MemoryError) as exc:  # e.g. int digit limits, lone surrogates
        found.append(finding("F001", f"{label}: cannot be read as JSON ({exc})", "1:1"))
        return None
    lone = _LONE_SURROGATE.search(text) if "\\u" in text else None
    if lone is not None:
        line, col = line_col(text, lone.start())
        found.append(finding("F001", f"{label}: the escape {lone.group(0)} is half of a UTF-16 pair; serde_json rejects lone surrogates", f"{line}:{col}"))
        return None
    for key in dict.fromkeys(duplicates):
        pattern = re.compile(r'"%s"\s*:' % re.escape(json.dumps(key)[1:-1]))
        first = pattern.search(text)
        second = pattern.search(text, first.end()) if first else None
        line, col = line_col(text, (second or first).start() if first else 0)
        found.append(finding("F001", f"{label}: the key {key!r} appears twice in one object; the last value is used", f"{line}:{col}"))
    return value


__all__ = ["JsonDocument", "decode_bytes", "parse_text", "line_col"]

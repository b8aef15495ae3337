"""Reading a save file's bytes into JSON values, safely.

The game writes ``serde_json`` output (save-format §1). A file from a playtest may be
truncated, hand-edited or hostile; nothing here raises on bad input or hangs. Every
problem becomes an F001 finding with a ``line:col`` location (or a JSON path where the
value parsed but cannot be a serde value), and the caller gets ``parsed`` False when
there is no document to work with. Files are read through ``models.fileio`` (regular
files only, in a stream, gzip inflated with the cap applied while inflating); the
scanners that place a problem at its ``line:col`` are in ``jsonscan``.
"""

from __future__ import annotations

import hashlib
import itertools
import json
from dataclasses import dataclass, field
from pathlib import Path

from narrative_debugger.models.fileio import GZIP_MAGIC, FileRefused, inflate_gzip_guarded, iter_regular_file
from narrative_debugger.models.rules.findings import Finding, finding
from narrative_debugger.models.save.fastjson import NOT_PROVEN, fast_decode
from narrative_debugger.models.save.jsonscan import (
    deepest_offset,
    duplicate_keys,
    has_surrogate_escape,
    lone_surrogates,
    scan_outside_strings,
    where,
)

UTF8_BOM = b"\xef\xbb\xbf"
#: A save larger than this (decompressed) is refused rather than read into memory.
#: 2 GiB: a 10 000 000-entry save is about 1.5 GB of JSON (issue 37), and the largest
#: the reader is measured on.
MAX_DOCUMENT_BYTES = 2 * 1024**3
#: Integers with more digits than this are not u64/i64 values (u64 max has 20 digits).
MAX_INT_DIGITS = 40


@dataclass
class JsonDocument:
    """A parsed JSON document and what was wrong with the bytes.

    Attributes:
        value: the parsed value (None for a JSON ``null`` or when nothing parsed).
        findings: F001 findings (not a regular file, over the size cap, bad gzip,
            UTF-8, syntax, constants, nesting, digits, lone surrogates, duplicate
            keys, byte-order mark).
        size: decompressed size in bytes.
        parsed: False when the bytes are not a JSON document at all (``value`` is
            then None and an F001 finding says why).
    """

    value: object | None
    findings: list[Finding] = field(default_factory=list)
    size: int = 0
    parsed: bool = True


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


def decode_bytes(data: bytes, label: str, max_bytes: int | None = None) -> JsonDocument:
    """Parse the bytes of a save (gzip or plain) into a JSON value.

    Args:
        data: the file's bytes.
        label: the file name, used in messages.
        max_bytes: the cap on the decompressed size (default ``MAX_DOCUMENT_BYTES``).

    Returns:
        A JsonDocument; ``parsed`` is False when the bytes are not a JSON document.
        Never raises on bad input.
    """
    cap = MAX_DOCUMENT_BYTES if max_bytes is None else max_bytes
    try:
        _refuse_gz_name_without_gzip(data[:2], label)
        if data[:2] == GZIP_MAGIC:
            packed = data
            data = inflate_gzip_guarded(lambda: [packed], cap)
        elif len(data) > cap:
            raise FileRefused(f"larger than {cap} bytes; not read")
    except FileRefused as exc:
        return refused_document(label, exc)
    return decode_plain(data, label, [])


def decode_file(path: Path, label: str, max_bytes: int | None = None, journal_reader=None) -> tuple[JsonDocument, str]:
    """Read and parse a save file in a stream: a regular file only, gzip inflated
    chunk by chunk with the cap applied while inflating (``models.fileio``).

    A gzip bomb is refused without holding the cap's worth (``fileio.inflate_gzip_guarded``).

    Args:
        path: the save (``.json`` or ``.json.gz``; gzip is recognised by its magic bytes).
        label: the file name, used in messages.
        max_bytes: the cap on the stored and on the decompressed size in bytes
            (default ``MAX_DOCUMENT_BYTES``).
        journal_reader: see ``fastjson.fast_decode``; the document's ``journal`` may
            then be the reader's result.

    Returns:
        The JsonDocument and the hex SHA-256 of the bytes as stored ("" when the file
        was refused). A FIFO, device, folder, missing file or file over the cap gives
        an F001 finding at once whose message names ``path`` as given (not ``label``).
        Never raises on bad input.
    """
    try:
        data, sha256 = read_stored(path, label, max_bytes)
    except FileRefused as exc:
        # The path as given: the bare name of /dev/zero ("zero") or of "." ("") says nothing.
        return refused_document(str(path), exc), ""
    return decode_plain(data, label, [], journal_reader), sha256


def read_stored(path: Path, label: str, max_bytes: int | None = None) -> tuple[bytearray, str]:
    """The bytes of the file at ``path`` as ``decode_file`` reads them (gzip inflated),
    unparsed, and the hex SHA-256 of the bytes as stored.

    Raises:
        FileRefused: not a regular file, over the cap (``max_bytes``, default
            ``MAX_DOCUMENT_BYTES``, stored or inflated), a bad gzip stream, or a name
            ending in .gz on a file that is not gzip (``label`` is that name).
    """
    cap = MAX_DOCUMENT_BYTES if max_bytes is None else max_bytes
    digest = hashlib.sha256()

    def hashed(chunks):
        for chunk in chunks:
            digest.update(chunk)
            yield chunk

    chunks = hashed(iter_regular_file(path, cap))
    first = next(chunks, b"")
    _refuse_gz_name_without_gzip(first[:2], label)
    if first[:2] == GZIP_MAGIC:
        rest = [itertools.chain([first], chunks)]

        def from_start():
            # The stream as read so far, once; again from the file's start (hashed
            # anew) when a stream that looked like a bomb fits the cap after all.
            nonlocal digest
            if rest:
                return rest.pop()
            digest = hashlib.sha256()
            return hashed(iter_regular_file(path, cap, stage=None))

        data = inflate_gzip_guarded(from_start, cap)
    else:
        data = bytearray(first)
        for chunk in chunks:
            data += chunk
    return data, digest.hexdigest()


def _refuse_gz_name_without_gzip(head: bytes, label: str) -> None:
    if head != GZIP_MAGIC and label.endswith(".gz"):
        raise FileRefused("the name ends in .gz but the file is not gzip")


def refused_document(label: str, exc: FileRefused) -> JsonDocument:
    """The document of a file that was not read: one F001 at ``1:1`` saying why."""
    return JsonDocument(None, [finding("F001", f"{label}: {exc}", "1:1")], parsed=False)


def decode_plain(data: bytes | bytearray, label: str, found: list[Finding], journal_reader=None) -> JsonDocument:
    """Parse uncompressed save bytes: byte-order mark, then the fast path when it
    proves the file clean (``fastjson``), else UTF-8 and strict JSON (``parse_document``). A bytearray is consumed: its mark is removed in place and it
    is emptied once decoded to text, so a large save is not held twice while parsing."""
    wide = utf16_or_32(bytes(data[:4]))
    if wide is not None:
        found.append(finding("F001", f"{label}: not UTF-8: the bytes are {wide}; the game writes UTF-8 (save-format §1)", "1:1"))
        return JsonDocument(None, found, len(data), parsed=False)
    if data.startswith(UTF8_BOM):
        found.append(
            finding("F001", f"{label}: starts with a UTF-8 byte-order mark, which the game never writes; read past it", "1:1")
        )
        if isinstance(data, bytearray):
            del data[: len(UTF8_BOM)]
        else:
            data = data[len(UTF8_BOM) :]
    size = len(data)
    value = fast_decode(data, journal_reader)  # a clean file: msgspec, proven to equal the careful parse (fastjson)
    if value is not NOT_PROVEN:
        if isinstance(data, bytearray):
            data.clear()
        return JsonDocument(value, found, size)
    try:
        text = data.decode("utf-8")
    except UnicodeDecodeError as exc:
        head = bytes(data[: exc.start]).decode("utf-8", "replace")
        found.append(finding("F001", f"{label}: not UTF-8 (byte 0x{data[exc.start]:02x} at offset {exc.start})", where(head, len(head))))
        return JsonDocument(None, found, size, parsed=False)
    if isinstance(data, bytearray):
        data.clear()
    parsed, value = parse_document(text, label, found)
    return JsonDocument(value, found, size, parsed=parsed)


#: Byte-order marks of the wider encodings, longest first (UTF-32LE's begins with UTF-16LE's).
_WIDE_BOMS = (
    (b"\x00\x00\xfe\xff", "UTF-32BE text with a byte-order mark"),
    (b"\xff\xfe\x00\x00", "UTF-32LE text with a byte-order mark"),
    (b"\xfe\xff", "UTF-16BE text with a byte-order mark"),
    (b"\xff\xfe", "UTF-16LE text with a byte-order mark"),
)


def utf16_or_32(head: bytes) -> str | None:
    """What a save's first four bytes say it is when it is UTF-16 or UTF-32, else None.

    A byte-order mark says so; without one, the NUL bytes do (RFC 4627 §3): JSON text
    begins with two ASCII characters, so ``00 00 00 xx`` is UTF-32BE, ``xx 00 00 00``
    UTF-32LE, ``00 xx`` UTF-16BE and ``xx 00`` UTF-16LE. UTF-8 JSON never starts with
    a NUL byte or has one second (it would be a raw control character)."""
    for mark, what in _WIDE_BOMS:
        if head.startswith(mark):
            return what
    if len(head) >= 4 and head[:3] == b"\x00\x00\x00" and head[3]:
        return "UTF-32BE text (three NUL bytes before each character)"
    if len(head) >= 4 and head[0] and head[1:4] == b"\x00\x00\x00":
        return "UTF-32LE text (three NUL bytes after each character)"
    if len(head) >= 2 and head[0] == 0 and head[1]:
        return "UTF-16BE text (a NUL byte before each ASCII character)"
    if len(head) >= 2 and head[0] and head[1] == 0:
        return "UTF-16LE text (a NUL byte after each ASCII character)"
    return None


def _json_error(exc: json.JSONDecodeError, text: str) -> str:
    """What is wrong at ``exc``'s place, said whole: json's own words stop mid-sentence
    ("Unterminated string starting at") and never say that a file was cut off. An empty
    file is said to be empty, not cut off: nothing was written to it."""
    if not text.strip():
        return "the file is empty" if not text else "the file holds only white space"
    if exc.msg.startswith("Unterminated string"):
        return "a string starts here and the file ends before it does: the file looks cut off"
    if exc.pos >= len(text.rstrip()):
        return f"the file ends before the document does ({exc.msg[0].lower() + exc.msg[1:]}): the file looks cut off"
    if exc.msg == "Extra data":
        return "more data after the end of the document"
    return exc.msg


def parse_text(text: str, label: str, found: list[Finding]) -> object | None:
    """Parse JSON text strictly as serde_json would accept it; append F001 findings.

    Rejects NaN/Infinity, integers longer than ``MAX_INT_DIGITS`` digits, nesting too
    deep for the parser and lone UTF-16 surrogate escapes; reports each duplicate
    object key at its own ``line:col``, naming where the first one is (the last value
    wins, as in most readers), without failing. Returns None when the text is not a
    document (see ``parse_document`` to tell that from a JSON ``null``).
    """
    return parse_document(text, label, found)[1]


def parse_document(text: str, label: str, found: list[Finding]) -> tuple[bool, object | None]:
    """``parse_text`` that also says whether a document was parsed: (parsed, value)."""
    duplicates: dict[str, int] = {}  # repeated key -> number of repeats

    def pairs_hook(pairs, _dict=dict):
        d = _dict(pairs)
        if len(d) != len(pairs):
            seen: set[str] = set()
            for key, _ in pairs:
                if key in seen:
                    duplicates[key] = duplicates.get(key, 0) + 1
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
        found.append(finding("F001", f"{label}: not valid JSON: {_json_error(exc, text)}", f"{exc.lineno}:{exc.colno}"))
        return False, None
    except _RejectedConstant as exc:
        pos = scan_outside_strings(text, r"-?(?:NaN|Infinity)\b") or 0
        found.append(finding("F001", f"{label}: {exc} is not a JSON number (serde_json never writes it)", where(text, pos)))
        return False, None
    except _OversizedNumber:
        pos = scan_outside_strings(text, r"-?\d{%d,}" % (MAX_INT_DIGITS + 1)) or 0
        found.append(finding("F001", f"{label}: an integer with more than {MAX_INT_DIGITS} digits cannot be a game value", where(text, pos)))
        return False, None
    except RecursionError:
        pos = deepest_offset(text, 900)
        found.append(finding("F001", f"{label}: nested too deeply to be read (a save or a JSON Patch nests a few levels)", where(text, pos)))
        return False, None
    except (ValueError, MemoryError) as exc:  # e.g. int digit limits
        found.append(finding("F001", f"{label}: cannot be read as JSON ({exc})", "1:1"))
        return False, None
    if report_lone_surrogates(text, label, found):
        return False, None
    if duplicates:
        report_duplicate_keys(text, label, duplicates, found)
    return True, value


def report_lone_surrogates(text: str, label: str, found: list[Finding]) -> bool:
    """Append an F001 for the first lone surrogate escape in ``text``; True if there was one.

    ``json.loads`` accepts them (as lone code points); serde_json does not.
    """
    if not has_surrogate_escape(text):
        return False
    for pos, escape in lone_surrogates(text):
        found.append(finding("F001", f"{label}: the escape {escape} is half of a UTF-16 pair; serde_json rejects lone surrogates", where(text, pos)))
        return True
    return False


#: At most this many duplicate-key findings are listed one by one.
MAX_DUPLICATE_FINDINGS = 50


def report_duplicate_keys(text: str, label: str, names: dict[str, int], found: list[Finding]) -> None:
    """Append an F001 for each repeated key of ``names`` (key -> repeats the parser
    saw) at its own ``line:col``, naming the ``line:col`` of the first one in the
    same object; past ``MAX_DUPLICATE_FINDINGS``, one finding with the count."""
    count = 0
    for key, pos, first in duplicate_keys(text, names):
        count += 1
        if count > MAX_DUPLICATE_FINDINGS:
            continue
        at, first_at = where(text, pos), where(text, first)
        found.append(finding("F001", f"{label}: duplicate key {key!r} at {at}; first at {first_at}; the last value is used", at))
    if count > MAX_DUPLICATE_FINDINGS:
        found.append(finding("F001", f"{label}: {count - MAX_DUPLICATE_FINDINGS} more duplicate keys not listed", "1:1"))


__all__ = ["JsonDocument", "decode_bytes", "decode_file", "decode_plain", "parse_document", "parse_text"]

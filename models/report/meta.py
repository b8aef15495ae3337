"""Bug-report files: the view record carried inside a PNG, and writing without overwriting.

A report PNG carries a versioned JSON record in an ``iTXt`` chunk (UTF-8, so
non-ASCII names and newlines survive) under the keyword ``REPORT_KEY``. Readers
that do not know the chunk ignore it and show an ordinary image (PNG spec §12.12:
ancillary chunks). Everything here is pure Python and never touches a save file.

``QImage.setText`` is not used to write the record: Qt writes it as a compressed
Latin-1 ``zTXt`` unless it holds characters outside Latin-1, and reading it back through
Qt decodes the whole image (after the image data, the chunk is invisible to
``QImageReader.text``) and inflates every text chunk, whatever its keyword.
"""

from __future__ import annotations

import io
import json
import os
import re
import struct
import tempfile
import zlib
from dataclasses import dataclass
from pathlib import Path
from typing import BinaryIO

import msgspec

from narrative_debugger.models.boundary import U64
from narrative_debugger.models.fileio import FileRefused, open_regular_file
from narrative_debugger.models.report.json_text import dumps_strict

PNG_SIGNATURE = b"\x89PNG\r\n\x1a\n"
REPORT_KEY = "narrative-debugger.view"
REPORT_FORMAT_VERSION = 1
#: The view record is a few hundred bytes; its chunk, and its text inflated, may be at most this.
MAX_RECORD_BYTES = 1024 * 1024
#: A PNG with more chunks than this is not one the tool wrote (a screenshot has a few
#: thousand at most); the walk stops rather than step through millions of tiny chunks.
MAX_PNG_CHUNKS = 200_000
_SURROGATE = re.compile("[\ud800-\udfff]")
_DRIVE = re.compile("[A-Za-z]:")


class ReportError(ValueError):
    """A PNG without a readable view record, with a message that says why."""


@dataclass(frozen=True)
class ViewRecord:
    """What a report PNG needs to reopen its view.

    Attributes:
        format_version: ``REPORT_FORMAT_VERSION`` when written.
        save_name: the save's file name.
        save_sha256: hex SHA-256 of the save's bytes.
        save_path: where the save was when the report was made.
        content_dir: the content folder used (may be empty for the default).
        tick: game tick shown.
        npc: the selected NPC's slug (or empty).
        view: knowledge, interactions, timelines, prompt or all.
        fact: the selected FactId (or empty).
        finding: the finding whose culprit the view shows (``screenshot --finding``, a
            double-click): ``{"code", "location", "target"}``, or None.
        selection: what is selected for it: ``{"kind", "id"}`` (a fact id, a journal
            index, an NPC slug, a line id, a content file:line), or None.
        since: the previous tick viewed (u64; "changed since tick …"), or None.
        journal_index: the journal entry selected (its index), or None.
        explain: the Explain dock's question (a ``models.explain`` target), or empty.
        compare: side B when comparing: ``{"save_name", "save_path", "save_sha256",
            "content_dir"}`` (texts, as the record's own fields), or None.

    Records written before ``since``, ``journal_index``, ``explain`` and ``compare``
    read with their defaults; readers that predate them ignore them.
    """

    format_version: int
    save_name: str
    save_sha256: str
    save_path: str
    content_dir: str
    tick: int
    npc: str
    view: str
    fact: str = ""
    finding: dict | None = None
    selection: dict | None = None
    since: int | None = None
    journal_index: int | None = None
    explain: str = ""
    compare: dict | None = None

    def to_json(self) -> str:
        """The record as compact JSON (UTF-8 text).

        A path that is not UTF-8 on disk reaches Python with lone surrogates (PEP 383);
        they are written as ``\\uDCxx`` escapes, so the text encodes as UTF-8 and reads
        back as the same path."""
        text = dumps_strict(msgspec.to_builtins(self), sort_keys=True)
        return _SURROGATE.sub(lambda m: f"\\u{ord(m.group()):04x}", text)

    @classmethod
    def from_json(cls, text: str) -> "ViewRecord":
        """Parse and validate a record.

        Raises:
            ReportError: not JSON, a newer format version, or a field of the wrong type.
        """
        try:
            data = json.loads(text)
        except (ValueError, RecursionError) as exc:
            raise ReportError(f"the view record is not JSON ({exc})") from None
        if not isinstance(data, dict):
            raise ReportError("the view record is not a JSON object")
        version = data.get("format_version")
        if not isinstance(version, int) or isinstance(version, bool):
            raise ReportError("the view record has no format_version")
        if version > REPORT_FORMAT_VERSION:
            raise ReportError(f"the view record is format {version}; this tool reads up to {REPORT_FORMAT_VERSION}")
        fields = {"save_name": str, "save_sha256": str, "save_path": str, "content_dir": str, "tick": int, "npc": str, "view": str, "fact": str}
        values = {}
        for name, kind in fields.items():
            value = data.get(name, "" if kind is str else None)
            if value is None and name == "fact":
                value = ""
            if not isinstance(value, kind) or isinstance(value, bool):
                raise ReportError(f"the view record's {name} should be {'text' if kind is str else 'a whole number'}")
            if kind is int and not U64.holds(value):
                raise ReportError(f"the view record's {name} should be a whole number from 0 to 2^64-1")
            values[name] = value
        for name in ("finding", "selection"):
            value = data.get(name)
            if value is not None and not isinstance(value, dict):
                raise ReportError(f"the view record's {name} should be an object")
            values[name] = value
        for name in ("since", "journal_index"):
            value = data.get(name)
            if value is not None and not U64.holds(value):
                raise ReportError(f"the view record's {name} should be a whole number from 0 to 2^64-1")
            values[name] = value
        values["explain"] = data.get("explain") or ""
        if not isinstance(values["explain"], str):
            raise ReportError("the view record's explain should be text")
        values["compare"] = _compare_side(data.get("compare"))
        for field, name in (("save_name", values["save_name"]), ("compare.save_name", (values["compare"] or {}).get("save_name", ""))):
            reason = not_plain_file_name(name)
            if reason:
                raise ReportError(f"the view record's {field} {name!r} is not a plain file name ({reason}); nothing was opened")
        if not values["view"]:
            values["view"] = "knowledge"  # the app checks the name against its view registry on reopening
        return cls(format_version=version, **values)


def _compare_side(value) -> dict | None:
    """The record's ``compare`` object, checked: four text fields (missing ones empty)."""
    if value is None:
        return None
    if not isinstance(value, dict):
        raise ReportError("the view record's compare should be an object")
    side = {}
    for name in ("save_name", "save_path", "save_sha256", "content_dir"):
        text = value.get(name) or ""
        if not isinstance(text, str):
            raise ReportError(f"the view record's compare.{name} should be text")
        side[name] = text
    return side


def not_plain_file_name(name: str) -> str | None:
    """Why ``name`` (a view record's ``save_name``) is not a plain file name that can only
    name a file in the PNG's own folder, or None when it is one (or empty: no name).

    Refused: a path separator (``/`` or ``\\``), ``.`` or ``..``, a NUL, and a drive
    letter (``C:``), so that a tampered record cannot lead the reopen outside the folder.
    """
    if not name:
        return None
    if "/" in name or "\\" in name:
        return "it holds a path separator"
    if name in (".", ".."):
        return f"{name!r} names a folder"
    if "\x00" in name:
        return "it holds a NUL character"
    if _DRIVE.match(name):
        return "it starts with a drive letter"
    return None


def _chunk(kind: bytes, data: bytes) -> bytes:
    return struct.pack(">I", len(data)) + kind + data + struct.pack(">I", zlib.crc32(kind + data) & 0xFFFFFFFF)


def iter_chunks(png: bytes):
    """Yield (type, data) for each chunk of a PNG.

    Raises:
        ReportError: not a PNG, or a truncated or corrupt chunk.
    """
    if not png.startswith(PNG_SIGNATURE):
        raise ReportError("not a PNG image")
    pos = len(PNG_SIGNATURE)
    while pos < len(png):
        if pos + 8 > len(png):
            raise ReportError("the PNG is truncated")
        length, kind = struct.unpack(">I4s", png[pos : pos + 8])
        end = pos + 12 + length
        if end > len(png):
            raise ReportError("the PNG is truncated")
        data = png[pos + 8 : pos + 8 + length]
        (crc,) = struct.unpack(">I", png[end - 4 : end])
        if crc != zlib.crc32(kind + data) & 0xFFFFFFFF:
            raise ReportError(f"the PNG chunk {kind!r} is corrupt")
        yield kind, data
        pos = end
        if kind == b"IEND":
            return


def add_text_chunk(png: bytes, key: str, text: str) -> bytes:
    """Return ``png`` with an uncompressed UTF-8 ``iTXt`` chunk inserted before IEND."""
    chunks = list(iter_chunks(png))
    body = key.encode("latin-1") + b"\x00\x00\x00" + b"\x00" + b"\x00" + text.encode("utf-8")
    out = [PNG_SIGNATURE]
    for kind, data in chunks:
        if kind == b"IEND":
            out.append(_chunk(b"iTXt", body))
        out.append(_chunk(kind, data))
    return b"".join(out)


def read_record_text(fh: BinaryIO) -> str | None:
    """The text of the tool's own ``iTXt`` chunk (keyword ``REPORT_KEY``) in a PNG
    stream, or None when there is none.

    Only that chunk is read: every other chunk (image data, other text, even a
    ``zTXt``/``iTXt`` bomb under another keyword) is skipped by seeking past it
    without reading or inflating it. The record chunk may be at most
    ``MAX_RECORD_BYTES`` long and is inflated with the same cap (PNG spec §11.3.4.5).

    Raises:
        ReportError: not a PNG, truncated, a corrupt or oversized record chunk, or
            more than ``MAX_PNG_CHUNKS`` chunks.
    """
    if fh.read(len(PNG_SIGNATURE)) != PNG_SIGNATURE:
        raise ReportError("not a PNG image")
    key = REPORT_KEY.encode("latin-1")
    for _ in range(MAX_PNG_CHUNKS):
        head = fh.read(8)
        if not head:
            return None
        if len(head) < 8:
            raise ReportError("the PNG is truncated")
        length, kind = struct.unpack(">I4s", head)
        if kind == b"IEND":
            return None
        if kind != b"iTXt":
            fh.seek(length + 4, os.SEEK_CUR)
            continue
        peek = fh.read(min(length, len(key) + 1))
        if peek != key + b"\x00":
            fh.seek(length - len(peek) + 4, os.SEEK_CUR)
            continue
        if length > MAX_RECORD_BYTES:
            raise ReportError(f"the view record chunk is {length} bytes, more than the {MAX_RECORD_BYTES} a record can be")
        data = peek + fh.read(length - len(peek))
        crc = fh.read(4)
        if len(data) < length or len(crc) < 4:
            raise ReportError("the PNG is truncated")
        if struct.unpack(">I", crc)[0] != zlib.crc32(kind + data) & 0xFFFFFFFF:
            raise ReportError(f"the PNG chunk {kind!r} is corrupt")
        return _itxt_text(data[len(peek) :])
    raise ReportError(f"the PNG has more than {MAX_PNG_CHUNKS} chunks; not a report this tool wrote")


def _itxt_text(rest: bytes) -> str:
    """The UTF-8 text of an iTXt chunk after its keyword, inflated with a cap."""
    try:
        compressed, method = rest[0], rest[1]
        _lang, _, rest = rest[2:].partition(b"\x00")
        _translated, _, value = rest.partition(b"\x00")
        if compressed:
            if method != 0:
                raise ReportError("the view record uses an unknown compression method")
            inflater = zlib.decompressobj()
            value = inflater.decompress(value, MAX_RECORD_BYTES + 1)
            if len(value) > MAX_RECORD_BYTES:
                raise ReportError(f"the view record inflates to more than {MAX_RECORD_BYTES} bytes")
            if not inflater.eof:
                raise ReportError("the view record's compressed text is truncated")
        return value.decode("utf-8")
    except (zlib.error, UnicodeDecodeError, IndexError) as exc:
        raise ReportError(f"the view record cannot be read ({exc})") from None


def embed_record(png: bytes, record: ViewRecord) -> bytes:
    """The PNG with ``record`` in its text chunk."""
    return add_text_chunk(png, REPORT_KEY, record.to_json())


def read_record(png: bytes) -> ViewRecord:
    """The view record of a report PNG given as bytes.

    Raises:
        ReportError: not a PNG, or a PNG the narrative debugger did not make.
    """
    return _record_from_stream(io.BytesIO(png))


def read_record_file(path: Path) -> ViewRecord:
    """The view record of a report PNG file: a regular file only (``models.fileio``),
    of which only the record chunk is read.

    Raises:
        ReportError: not a regular file, not readable, not a PNG, or a PNG the
            narrative debugger did not make.
    """
    try:
        with open_regular_file(path) as fh:
            return _record_from_stream(fh)
    except FileRefused as exc:
        raise ReportError(str(exc)) from None
    except OSError as exc:
        raise ReportError(f"cannot be read ({exc.strerror or exc})") from None


def _record_from_stream(fh: BinaryIO) -> ViewRecord:
    text = read_record_text(fh)
    if text is None:
        raise ReportError("this PNG carries no narrative-debugger view (it was not made with Report bug or screenshot)")
    return ViewRecord.from_json(text)


#: A file-name stem made from save data is cut to this many characters.
MAX_STEM_CHARS = 80
_UNSAFE_NAME_CHARS = re.compile(r"[^\w.-]+")


def safe_file_stem(text: str, fallback: str = "report") -> str:
    """A file-name stem from text that comes from a save (a label, an NPC slug).

    Keeps letters, digits, ``_``, ``-`` and ``.``; every other run of characters
    (path separators, control characters, spaces, ``:``) becomes one ``_``. Runs of
    dots become one, leading dots and dashes are dropped (no ``..``, no hidden file,
    nothing a shell reads as an option), the stem is cut to
    ``MAX_STEM_CHARS`` characters and an empty result is ``fallback``. So no name
    from a save can steer an output path outside the folder it is written to.
    """
    stem = _UNSAFE_NAME_CHARS.sub("_", text)
    stem = re.sub(r"\.{2,}", ".", stem).lstrip(".-")[:MAX_STEM_CHARS].rstrip(".")
    return stem or fallback


def _check_plain_name(name: str) -> None:
    """Refuse a file name that is not one plain name inside its folder (a bug if it happens)."""
    if not name or name in (".", "..") or os.sep in name or (os.altsep and os.altsep in name) or "\x00" in name:
        raise ValueError(f"not a plain file name: {name!r}")


def write_new_file(folder: Path, stem: str, suffix: str, data: bytes) -> Path:
    """Write ``data`` to a new file ``stem[-N]suffix`` in ``folder``; never overwrites.

    The bytes go to a temporary file in the same folder first, which is then linked
    under the first free name (an atomic test-and-create), so a reader never sees
    half a file and an existing file is never replaced.

    Raises:
        ValueError: ``stem + suffix`` is not a plain file name (see ``safe_file_stem``).
        OSError: the folder cannot be written.
    """
    _check_plain_name(stem + suffix)
    folder.mkdir(parents=True, exist_ok=True)
    fd, tmp = tempfile.mkstemp(prefix=".tmp-", suffix=suffix, dir=folder)
    try:
        with os.fdopen(fd, "wb") as fh:
            fh.write(data)
        umask = os.umask(0)
        os.umask(umask)
        os.chmod(tmp, 0o666 & ~umask)  # an ordinary file, not mkstemp's private 0600
        n = 1
        while True:
            name = f"{stem}{suffix}" if n == 1 else f"{stem}-{n}{suffix}"
            target = folder / name
            try:
                os.link(tmp, target)
                return target
            except FileExistsError:
                n += 1
            except OSError:  # file systems without hard links: exclusive create instead
                try:
                    with open(target, "xb") as fh:
                        fh.write(data)
                    return target
                except FileExistsError:
                    n += 1
    finally:
        try:
            os.unlink(tmp)
        except OSError:
            pass


def free_stem(folder: Path, stem: str, suffixes: tuple[str, ...]) -> str:
    """A stem ``stem[-N]`` for which no file with any of ``suffixes`` exists yet.

    Raises:
        ValueError: ``stem`` is not a plain file name.
    """
    _check_plain_name(stem)
    n = 1
    while True:
        candidate = stem if n == 1 else f"{stem}-{n}"
        if not any((folder / f"{candidate}{s}").exists() for s in suffixes):
            return candidate
        n += 1

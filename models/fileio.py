"""Reading input files safely: regular files only, in a stream, with a size cap.

Saves, content YAML and report PNGs come from playtesters' machines and may be
hostile. Everything here refuses at once what is not a regular file (a FIFO, whose
``open`` would block; a device such as ``/dev/zero``, which has no end; a directory;
a socket), reads the rest in chunks and stops as soon as a cap is passed, so no input
can hang the tool or make it hold more than the cap in memory. gzip is inflated as a
stream with the cap applied while inflating (RFC 1952 §2.2: a file may hold several
members, read one after the other). Nothing here writes.
"""

from __future__ import annotations

import os
import stat
import zlib
from collections.abc import Iterable, Iterator
from pathlib import Path
from typing import BinaryIO

from narrative_debugger.models.gil_slices import checkpoint

#: Bytes read from a file at a time.
CHUNK_BYTES = 1 << 20
GZIP_MAGIC = b"\x1f\x8b"
#: At most this many inflated bytes come out of zlib at a time.
INFLATE_STEP_BYTES = 16 << 20


class FileRefused(Exception):
    """A file that is not read: not a regular file, too large, unreadable, or a broken
    gzip stream. ``str(exc)`` is a reason a tester understands, without the file name."""


def kind_of(mode: int) -> str:
    """What a non-regular file is, in words (``stat`` file types): ``a folder``, ``a character device``..."""
    if stat.S_ISDIR(mode):
        return "a folder"
    if stat.S_ISFIFO(mode):
        return "a FIFO (named pipe)"
    if stat.S_ISCHR(mode):
        return "a character device"
    if stat.S_ISBLK(mode):
        return "a block device"
    if stat.S_ISSOCK(mode):
        return "a socket"
    return "not a regular file"


def _refuse_if_not_regular(mode: int) -> None:
    if not stat.S_ISREG(mode):
        raise FileRefused(f"is {kind_of(mode)}, not a regular file; not read")


def _too_large(max_bytes: int) -> FileRefused:
    return FileRefused(f"larger than {max_bytes} bytes ({max_bytes / 1024**2:g} MiB); not read")


def open_regular_file(path: Path, max_bytes: int | None = None) -> BinaryIO:
    """Open a regular file for reading, unbuffered; the caller closes it.

    The file type is checked with ``os.stat`` before opening, and again on the open
    descriptor (opened with ``O_NONBLOCK``, so a FIFO swapped in meanwhile cannot
    block the open). With ``max_bytes``, a file whose size is over it is refused.

    Raises:
        FileRefused: missing, unreadable, not a regular file, or over ``max_bytes``.
    """
    try:
        info = os.stat(path)
        _refuse_if_not_regular(info.st_mode)
        if max_bytes is not None and info.st_size > max_bytes:
            raise _too_large(max_bytes)
        fd = os.open(path, _READ_FLAGS)
    except OSError as exc:
        raise FileRefused(f"cannot be read ({exc.strerror or exc})") from None
    fh = open(fd, "rb", buffering=0, closefd=True)
    try:
        _refuse_if_not_regular(os.fstat(fd).st_mode)
    except BaseException:
        fh.close()
        raise
    return fh


_READ_FLAGS = os.O_RDONLY | getattr(os, "O_NONBLOCK", 0) | getattr(os, "O_NOCTTY", 0) | getattr(os, "O_CLOEXEC", 0) | getattr(os, "O_BINARY", 0)


def iter_regular_file(path: Path, max_bytes: int, chunk_bytes: int = CHUNK_BYTES) -> Iterator[bytes]:
    """Yield the bytes of a regular file (``open_regular_file``) in chunks of at most
    ``chunk_bytes``. Reading stops as soon as more than ``max_bytes`` bytes were seen,
    so a file that keeps growing is refused too.

    Raises:
        FileRefused: missing, unreadable, not a regular file, or more than ``max_bytes``.
    """
    with open_regular_file(path, max_bytes) as fh:
        try:
            seen = 0
            size = os.fstat(fh.fileno()).st_size
            while True:
                checkpoint("read", seen, size)  # a load cancelled while its file is read stops here
                block = fh.read(chunk_bytes)
                if not block:
                    return
                seen += len(block)
                if seen > max_bytes:
                    raise _too_large(max_bytes)
                yield block
        except OSError as exc:
            raise FileRefused(f"cannot be read ({exc.strerror or exc})") from None


def read_regular_file(path: Path, max_bytes: int) -> bytes:
    """The whole bytes of a regular file of at most ``max_bytes`` (see ``iter_regular_file``).

    Raises:
        FileRefused: as ``iter_regular_file``.
    """
    out = bytearray()
    for block in iter_regular_file(path, max_bytes):
        out += block
    return bytes(out)


def inflate_gzip(chunks: Iterable[bytes], max_bytes: int) -> bytearray:
    """Inflate a gzip stream given as chunks, every member in turn, keeping at most
    ``max_bytes`` inflated bytes in memory (RFC 1952 §2.2).

    Each call to zlib yields at most ``INFLATE_STEP_BYTES`` (and never past the cap),
    so a bomb is refused once the cap is passed, holding the cap plus one step.
    Trailing zero bytes after the last member (tape padding) are ignored, as
    ``gzip`` does; any other trailing bytes are an error.

    Raises:
        FileRefused: not gzip, corrupt, truncated, trailing garbage, or more than
            ``max_bytes`` when inflated (found while inflating, never after).
    """
    out = bytearray()
    member = zlib.decompressobj(wbits=31)
    started = False  # a member has begun and not ended
    pending = b""
    try:
        for chunk in chunks:
            data = pending + chunk
            pending = b""
            while True:
                if not started:
                    if not data or data.strip(b"\x00") == b"":
                        break  # the end, or zero padding (so far)
                    if len(data) < 2:
                        pending = data
                        break
                    if data[:2] != GZIP_MAGIC:
                        raise FileRefused("has bytes after the end of its gzip data that are not gzip")
                    member = zlib.decompressobj(wbits=31)
                    started = True
                limit = min(max_bytes - len(out) + 1, INFLATE_STEP_BYTES)
                piece = member.decompress(data, limit)
                out += piece
                if len(out) > max_bytes:
                    raise _too_large_inflated(max_bytes)
                if member.eof:  # unused_data is all input past the member (unconsumed_tail may repeat it)
                    started = False
                    data = member.unused_data
                    continue
                data = member.unconsumed_tail
                if not data and len(piece) < limit:
                    break  # this chunk is used up and nothing is pending: the next one
    except zlib.error as exc:
        raise FileRefused(f"is not a readable gzip stream ({exc})") from None
    if pending:
        raise FileRefused("has bytes after the end of its gzip data that are not gzip")
    if started:
        raise FileRefused("is not a readable gzip stream (it is truncated)")
    return out


def _too_large_inflated(max_bytes: int) -> FileRefused:
    return FileRefused(f"is larger than {max_bytes} bytes ({max_bytes / 1024**2:g} MiB) when decompressed; refused while inflating")


__all__ = ["FileRefused", "GZIP_MAGIC", "inflate_gzip", "iter_regular_file", "open_regular_file", "read_regular_file"]

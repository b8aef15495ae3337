"""Reading input files safely: regular files only, in a stream, with a size cap.

Saves, content YAML and report PNGs come from playtesters' machines and may be
hostile. Everything here refuses at once what is not a regular file (a FIFO, whose
``open`` would block; a device such as ``/dev/zero``, which has no end; a directory;
a socket), reads the rest in chunks and stops as soon as a cap is passed, so no input
can hang the tool or make it hold more than the cap in memory. gzip is inflated as a
stream with the cap applied while inflating (RFC 1952 §2.2: a file may hold several
members, read one after the other); a stream that inflates far more than a save does
is only counted from there on, so a bomb is refused without holding the cap's worth
(``inflate_gzip_guarded``). Nothing here writes.
"""

from __future__ import annotations

import os
import stat
import zlib
from collections.abc import Callable, Iterable, Iterator
from pathlib import Path
from typing import BinaryIO

from narrative_debugger.models.progress import checkpoint

#: Bytes read from a file at a time.
CHUNK_BYTES = 1 << 20
GZIP_MAGIC = b"\x1f\x8b"
#: At most this many inflated bytes come out of zlib at a time.
INFLATE_STEP_BYTES = 16 << 20
#: ``inflate_gzip_guarded`` looks at the ratio of a stream once this much came out...
SUSPECT_BYTES = 32 << 20
#: ...and only counts the rest of one that inflates more than this many times its gzip
#: size (a save's JSON: about 10; deflate's most: 1032).
SUSPECT_RATIO = 100
#: A stream that inflates past ``SUSPECT_BYTES`` at more than this many times its gzip size
#: is refused even within the cap: a 1.9 MB file of 1.9 GB of whitespace took 4 GB and 26 s to read (trial 47).
#: A save's JSON compresses about 10 times; deflate's most is 1032.
BOMB_RATIO = 500
#: Compressed bytes given to zlib at a time by ``inflate_gzip_guarded``.
FEED_BYTES = 16 << 10


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


def iter_regular_file(path: Path, max_bytes: int, chunk_bytes: int = CHUNK_BYTES, stage: str | None = "read") -> Iterator[bytes]:
    """Yield the bytes of a regular file (``open_regular_file``) in chunks of at most
    ``chunk_bytes``. Reading stops as soon as more than ``max_bytes`` bytes were seen,
    so a file that keeps growing is refused too. Each chunk is a cancel point that
    reports progress as ``stage`` (None: a second pass, which reports none).

    Raises:
        FileRefused: missing, unreadable, not a regular file, or more than ``max_bytes``.
    """
    with open_regular_file(path, max_bytes) as fh:
        try:
            seen = 0
            size = os.fstat(fh.fileno()).st_size
            while True:
                checkpoint(stage, seen, size)  # a load cancelled while its file is read stops here
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


def inflate_gzip_guarded(open_chunks: Callable[[], Iterable[bytes]], max_bytes: int) -> bytearray:
    """``inflate_gzip`` that refuses a bomb without holding the cap's worth (issue 35).

    ``open_chunks()`` gives the stream's chunks from its start, each time it is
    called. The stream is inflated for real while it looks like a save: a save's JSON
    inflates to about ten times its gzip. Once more than ``suspect_bytes(max_bytes)``
    came out at more than ``SUSPECT_RATIO`` times the gzip bytes read so far, what
    was inflated is dropped and the rest only counted, a step at a time: past
    the cap it is refused, having held at most ``suspect_bytes`` and one step; within
    the cap, past ``SUSPECT_BYTES`` at ``BOMB_RATIO`` times its gzip size, it is refused too; else (a
    save that compresses very well) it is read again and inflated for real.
    A 2.2 MB file that inflates past 2 GiB is refused at a peak of about 60 MB
    resident, not 2.1 GB (``tests/benchmarks/bench_gzip_bomb.py``), and a plain save
    is inflated once.

    Raises:
        FileRefused: as ``inflate_gzip``.
    """
    fed = 0

    def measured(chunks):
        # zlib is fed FEED_BYTES at a time, so ``fed`` is close to what it consumed.
        nonlocal fed
        for chunk in chunks:
            view = memoryview(chunk)
            for start in range(0, len(view), FEED_BYTES):
                part = bytes(view[start : start + FEED_BYTES])
                fed += len(part)
                yield part

    limit = suspect_bytes(max_bytes)
    out = bytearray()
    # Small pieces: what a bomb leaves behind (freed, but part of the peak) stays small.
    pieces = _inflated_pieces(measured(open_chunks()), max_bytes, max(1, min(INFLATE_STEP_BYTES, limit // 16)))
    for piece in pieces:
        held = len(out) + len(piece)
        if held > limit and held > SUSPECT_RATIO * fed:
            out = piece = None  # drop what was held, then count the rest of the same stream
            total = held
            for rest in pieces:  # FileRefused past the cap
                total += len(rest)
            if total > SUSPECT_BYTES and total > BOMB_RATIO * fed:  # a few MiB of white space cost nothing
                raise FileRefused(f"inflates to {total:,} bytes from {fed:,}, {total // max(1, fed):,} times its size: no save "
                                  f"compresses past {BOMB_RATIO} times (its JSON about 10); refused unread as a gzip bomb")
            return inflate_gzip(open_chunks(), max_bytes)
        out += piece
    return out


def suspect_bytes(max_bytes: int) -> int:
    """Inflated bytes held before the ratio of ``inflate_gzip_guarded`` is looked at:
    ``SUSPECT_BYTES``, or a sixteenth of a smaller cap."""
    return max(1, min(SUSPECT_BYTES, max_bytes // 16))


def inflate_gzip(chunks: Iterable[bytes], max_bytes: int) -> bytearray:
    """Inflate a gzip stream given as chunks, every member in turn, keeping at most
    ``max_bytes`` inflated bytes in memory (RFC 1952 §2.2).

    Each call to zlib yields at most ``INFLATE_STEP_BYTES`` (and never past the cap),
    so a stream that grows past the cap is refused holding the cap plus one step
    (``inflate_gzip_guarded`` refuses a bomb long before). Trailing zero bytes after
    the last member (tape padding) are ignored, as ``gzip`` does; any other trailing
    bytes are an error.

    Raises:
        FileRefused: not gzip, corrupt, truncated, trailing garbage, or more than
            ``max_bytes`` when inflated (found while inflating, never after).
    """
    out = bytearray()
    for piece in _inflated_pieces(chunks, max_bytes, INFLATE_STEP_BYTES):
        out += piece
    return out


def _inflated_pieces(chunks: Iterable[bytes], max_bytes: int, step: int) -> Iterator[bytes]:
    """The inflated bytes of a gzip stream (every member, RFC 1952 §2.2), in pieces of
    at most ``step`` bytes; FileRefused once more than ``max_bytes`` came out, or for a
    stream that is not gzip, corrupt, truncated or followed by other bytes than zeros."""
    total = 0
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
                limit = min(max_bytes - total + 1, step)
                piece = member.decompress(data, limit)
                total += len(piece)
                if total > max_bytes:
                    raise _too_large_inflated(max_bytes)
                if piece:
                    yield piece
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


def _too_large_inflated(max_bytes: int) -> FileRefused:
    return FileRefused(f"is larger than {max_bytes} bytes ({max_bytes / 1024**2:g} MiB) when decompressed; refused while inflating")


__all__ = ["FileRefused", "GZIP_MAGIC", "inflate_gzip", "inflate_gzip_guarded", "iter_regular_file", "open_regular_file", "read_regular_file"]

"""The command line's standard streams when they are closed, full or read by someone who leaves.

What the command line does (README, "Standard streams"):

=============================================  ==============================================
stdout ...                                     then
=============================================  ==============================================
closed (``>&-``)                               one line on stderr, exit 2 (when the command
                                               writes to stdout at all)
cannot be written (``>/dev/full``, EIO)        one line on stderr, exit 2
a pipe whose reader left (``| head -1``)       quiet: the rest of the output is dropped, the
                                               command finishes, exit status as computed
                                               (0, 1 or 2; never 120 or 141)
stderr closed, full or its reader gone         messages are dropped; the exit status is the
                                               same as with stderr
=============================================  ==============================================

A closed descriptor 0, 1 or 2 is first pointed at ``os.devnull``, so that no file the
command opens later (a save, a PNG) gets that number and no child process writes
into it by mistake.
"""

from __future__ import annotations

import errno
import os
import sys


class OutputFailed(Exception):
    """stdout could not be written (closed, full device, I/O error): the command stops, exit 2.

    Not an ``OSError``, so a command's own handling of file errors cannot take it for
    one of its files."""

    def __init__(self, error: OSError | ValueError) -> None:
        self.error = error
        code = getattr(error, "errno", None)
        reason = "it is closed" if code == errno.EBADF or isinstance(error, ValueError) else \
            (getattr(error, "strerror", None) or str(error))
        super().__init__(f"cannot write the output to stdout: {reason}")


class ClosedStream:
    """What ``sys.stdout``/``sys.stderr`` is when its descriptor was closed at start
    (Python makes it None): every write fails with EBADF, and so does a flush after a
    write was tried (argparse drops the write's error; the flush still tells)."""

    def __init__(self, name: str) -> None:
        self.name = name
        self.tried = False

    def _fail(self):
        raise OSError(errno.EBADF, f"{self.name} is closed")

    def write(self, text: str) -> int:
        self.tried = True
        self._fail()

    def writelines(self, lines) -> None:
        for line in lines:
            self.write(line)

    def flush(self) -> None:
        if self.tried:
            self._fail()

    def isatty(self) -> bool:
        return False

    def fileno(self) -> int:
        self._fail()

    encoding = "utf-8"
    errors = "backslashreplace"


def guard_descriptors() -> None:
    """Point each closed descriptor 0, 1, 2 at ``os.devnull``; a None ``sys.stdout`` or
    ``sys.stderr`` becomes a ``ClosedStream``. Safe to call more than once."""
    for fd in (0, 1, 2):
        try:
            os.fstat(fd)
        except OSError:
            devnull = os.open(os.devnull, os.O_RDWR)
            if devnull != fd:
                os.dup2(devnull, fd)
                os.close(devnull)
    if sys.stdout is None:
        sys.stdout = ClosedStream("stdout")
    if sys.stderr is None:
        sys.stderr = ClosedStream("stderr")


def silence_stdout() -> None:
    """Point stdout's descriptor at devnull so the exit flush of what is still buffered stays quiet."""
    try:
        fd = sys.stdout.fileno()
    except (AttributeError, OSError, ValueError):  # captured in-process (tests), or closed: nothing to flush
        return
    devnull = os.open(os.devnull, os.O_WRONLY)
    os.dup2(devnull, fd)
    os.close(devnull)


class Stdout:
    """The stdout wrapper of a command: a reader that leaves early (``BrokenPipeError``)
    is Python's docs recipe (stdout to devnull, the rest dropped, the command goes on
    and keeps its exit status); any other failure to write raises ``OutputFailed``."""

    def __init__(self, stream) -> None:
        self._stream = stream
        self.gone = False

    def _guarded(self, call, *args) -> None:
        if self.gone:
            return
        try:
            call(*args)
        except BrokenPipeError:
            self.gone = True
            silence_stdout()
        except (OSError, ValueError) as exc:  # ValueError: the stream itself was closed
            self.gone = True
            silence_stdout()
            raise OutputFailed(exc) from None

    def write(self, text: str) -> int:
        self._guarded(self._stream.write, text)
        return len(text)

    def writelines(self, lines) -> None:
        for line in lines:
            self.write(line)

    def flush(self) -> None:
        self._guarded(self._stream.flush)

    def __getattr__(self, name):
        return getattr(self._stream, name)


class Stderr:
    """The stderr wrapper: a message that cannot be written is dropped, never an error."""

    def __init__(self, stream) -> None:
        self._stream = stream

    def write(self, text: str) -> int:
        try:
            self._stream.write(text)
        except (OSError, ValueError):
            pass
        return len(text)

    def writelines(self, lines) -> None:
        for line in lines:
            self.write(line)

    def flush(self) -> None:
        try:
            self._stream.flush()
        except (OSError, ValueError):
            pass

    def __getattr__(self, name):
        return getattr(self._stream, name)


def reader_left() -> bool:
    """Whether stdout is a pipe whose reader left (``Stdout``): what is written from now
    on is dropped, so a command that writes as it goes may stop making it."""
    return bool(getattr(sys.stdout, "gone", False))


def say(line: str) -> None:
    """One line on stderr if it can be written; nothing otherwise."""
    Stderr(sys.stderr).write(line + "\n")
    Stderr(sys.stderr).flush()


def finish(status: int, unwritable: int) -> int:
    """Flush stdout and stderr at the end of a command: a stdout that cannot take what
    is still buffered turns ``status`` 0 or 1 into ``unwritable`` (with one line on
    stderr); a reader that left keeps ``status``. Returns the exit status."""
    try:
        sys.stdout.flush()
    except BrokenPipeError:
        silence_stdout()
    except (OSError, ValueError, AttributeError) as exc:
        silence_stdout()
        if status in (0, 1):
            say(f"narrative-debugger: {OutputFailed(exc) if not isinstance(exc, AttributeError) else 'cannot write the output to stdout'}")
            status = unwritable
    Stderr(sys.stderr).flush()
    return status

"""Reading a large content folder in a second process while the save is decoded.

A large content folder takes a second or more to read (thousands of YAML profiles,
each built with line:col marks in Python); decoding a large save takes longer, in C
and Python that hold the GIL, so a thread would not overlap them. A child Python
process reads the folder with ``load_content`` on the machine's other core and hands
the ``Content`` back pickled (quick to load). It reads what
the parent would read, with the same code: the result equals ``load_content(root)``,
findings included.

``ContentInBackground.start`` returns None where it would not pay (a small save or a
small folder, as in the test suite) or cannot run (a frozen build); ``result()`` falls
back to ``load_content`` in this process on any failure of the child, so the outcome
never depends on it.
"""

from __future__ import annotations

import os
import pickle
import subprocess
import sys
from pathlib import Path

from narrative_debugger.models.content.loader import Content, load_content

#: A save at least this large (bytes) takes seconds to decode: worth a second process.
MIN_SAVE_BYTES = 16 * 1024 * 1024
#: A content folder whose YAML files add up to at least this (bytes) takes long enough
#: to read to be worth starting a Python process for (tests/benchmarks/README.md).
MIN_CONTENT_BYTES = 1024 * 1024
#: The child's code: read the folder named by argv[1], write the pickled Content.
_CHILD = (
    "import pickle, sys\n"
    "from pathlib import Path\n"
    "from narrative_debugger.models.content.loader import load_content\n"
    "sys.stdout.buffer.write(pickle.dumps(load_content(Path(sys.argv[1])), protocol=pickle.HIGHEST_PROTOCOL))\n"
)


def yaml_bytes(root: Path, stop_at: int) -> int:
    """Bytes of the ``.yaml``/``.yml`` files under ``root``, counted until ``stop_at``
    is reached (a folder of thousands of profiles is not walked to its end). 0 for a
    folder that cannot be read."""
    total = 0
    stack = [root]
    while stack and total < stop_at:
        try:
            entries = list(os.scandir(stack.pop()))
        except OSError:
            continue
        for entry in entries:
            try:
                if entry.is_dir(follow_symlinks=False):
                    stack.append(entry.path)
                elif entry.name.endswith((".yaml", ".yml")) and entry.is_file(follow_symlinks=False):
                    total += entry.stat(follow_symlinks=False).st_size
            except OSError:
                continue
    return total


class ContentInBackground:
    """A child process reading one content folder; ``result()`` is its ``Content``."""

    def __init__(self, root: Path, process: subprocess.Popen) -> None:
        self.root = root
        self._process = process

    @classmethod
    def start(cls, root: Path, save_bytes: int, *, min_save: int = MIN_SAVE_BYTES, min_content: int = MIN_CONTENT_BYTES) -> "ContentInBackground | None":
        """Start reading ``root`` in a child process when that pays, else None.

        Args:
            root: the content folder.
            save_bytes: size of the save file about to be decoded (bytes).
            min_save, min_content: the sizes (bytes) from which a child is started.
        """
        if getattr(sys, "frozen", False) or not sys.executable or save_bytes < min_save:
            return None
        if not root.is_dir() or yaml_bytes(root, min_content) < min_content:
            return None
        env = dict(os.environ, PYTHONPATH=os.pathsep.join(p for p in sys.path if p))
        try:
            process = subprocess.Popen(
                [sys.executable, "-c", _CHILD, str(root)],
                stdin=subprocess.DEVNULL,
                stdout=subprocess.PIPE,
                stderr=subprocess.DEVNULL,
                env=env,
            )
        except OSError:
            return None
        return cls(root, process)

    def result(self) -> Content:
        """The folder's ``Content``: the child's, or ``load_content`` here when the child
        failed (exit status, nothing written, a pickle that does not load). Never raises
        more than ``load_content`` does."""
        try:
            data, _ = self._process.communicate()
            if self._process.returncode == 0 and data:
                content = pickle.loads(data)
                if isinstance(content, Content):
                    return content
        except Exception:  # noqa: BLE001 - any failure of the child: read it here instead
            self.stop()
        return load_content(self.root)

    def stop(self) -> None:
        """End the child if it still runs (the open was cancelled or failed)."""
        if self._process.poll() is None:
            self._process.kill()
            try:
                self._process.communicate(timeout=5)
            except (OSError, subprocess.SubprocessError, ValueError):
                pass

"""models/ never imports Qt (style.md rule 7): import every module with Qt blocked."""

import pkgutil
import subprocess
import sys
from pathlib import Path

import narrative_debugger.models as models

BLOCKER = """
import importlib.abc, sys
class Block(importlib.abc.MetaPathFinder):
    def find_spec(self, name, path, target=None):
        if name.split('.')[0] in ('PySide6', 'shiboken6', 'pyqtgraph', 'PyQt5', 'PyQt6'):
            raise ImportError('Qt is blocked in models/: ' + name)
sys.meta_path.insert(0, Block())
import importlib
for name in sys.argv[1:]:
    importlib.import_module(name)
print('ok')
"""


def test_models_import_without_qt():
    names = [m.name for m in pkgutil.walk_packages(models.__path__, "narrative_debugger.models.")]
    assert "narrative_debugger.models.timeline.index" in names and "narrative_debugger.models.timeline.replay" in names
    assert "narrative_debugger.models.prompt.tokens" in names and "narrative_debugger.models.rules.checks" in names
    out = subprocess.run([sys.executable, "-c", BLOCKER, *names], capture_output=True, text=True, cwd=Path(__file__).parent.parent)
    assert out.returncode == 0, out.stderr
    assert out.stdout.strip() == "ok"


def test_blocker_really_blocks():
    out = subprocess.run([sys.executable, "-c", BLOCKER, "PySide6.QtCore"], capture_output=True, text=True)
    assert out.returncode != 0 and "Qt is blocked" in out.stderr

"""Methods Qt calls per cell or per paint read no ``Qt.X`` at call time (issue 10).

A ``Qt.DisplayRole`` or ``Qt.Horizontal`` read goes through the namespace's attribute
lookup, about 2 µs a time in PySide6 6.11 (``Qt.AlignRight | Qt.AlignVCenter`` about
6 µs); Qt asks a table model several roles of every visible cell on every repaint. The
values are named once at import instead (``widgets/kit/roles.py``).
"""

from __future__ import annotations

import ast
from pathlib import Path

WIDGETS = Path(__file__).resolve().parents[1] / "widgets"
#: Overrides Qt calls for every cell, section or item it paints.
HOT = {"data", "headerData", "flags", "rowCount", "columnCount", "paint"}
NAMESPACES = {"Qt", "QStyle", "QPalette", "QStyleOptionViewItem"}


def _reads_in_bodies(folder: Path = WIDGETS) -> list[str]:
    found = []
    for path in sorted(folder.glob("*.py")):
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            if not isinstance(node, ast.ClassDef):
                continue
            for method in node.body:
                if not isinstance(method, ast.FunctionDef) or method.name not in HOT:
                    continue
                first = method.body[0].lineno  # defaults in the signature are read once
                for n in ast.walk(method):
                    if (isinstance(n, ast.Attribute) and isinstance(n.value, ast.Name)
                            and n.value.id in NAMESPACES and n.lineno >= first):
                        found.append(f"{path.name}:{n.lineno} {node.name}.{method.name} reads {n.value.id}.{n.attr}")
    return found


def test_per_cell_methods_read_no_qt_namespace():
    assert _reads_in_bodies() == []


def test_the_scan_sees_a_read(tmp_path):
    """The scan finds a read in a hot method's body, and not in its signature."""
    (tmp_path / "m.py").write_text(
        "class M:\n    def data(self, index, role=Qt.DisplayRole):\n        return role == Qt.ToolTipRole\n",
        encoding="utf-8")
    assert _reads_in_bodies(tmp_path) == ["m.py:3 M.data reads Qt.ToolTipRole"]


def _tables_not_hot(folder: Path = WIDGETS) -> list[str]:
    """Tables built without ``tables.hot_table`` and delegates that bypass ``StaticTextDelegate``."""
    found = []
    for path in sorted(folder.glob("*.py")):
        source = path.read_text(encoding="utf-8")
        for node in ast.walk(ast.parse(source)):
            if (isinstance(node, ast.Assign) and isinstance(node.value, ast.Call)
                    and isinstance(node.value.func, ast.Name) and node.value.func.id == "QTableView"):
                target = ast.unparse(node.targets[0])
                if f"hot_table({target})" not in source:
                    found.append(f"{path.name}:{node.lineno} {target} is not set up by hot_table")
            if isinstance(node, ast.ClassDef) and node.name != "StaticTextDelegate":
                if any(isinstance(b, ast.Name) and b.id == "QStyledItemDelegate" for b in node.bases):
                    found.append(f"{path.name}:{node.lineno} {node.name} derives from QStyledItemDelegate")
    return found


def test_every_table_draws_its_cells_from_kept_text():
    """Each table repaints resized columns at once and draws cell text from QStaticText
    kept between paints (issue 10): a table or delegate that forgets it paints at
    about twice the cost, or twice a pass."""
    assert _tables_not_hot() == []


def test_the_table_scan_sees_a_plain_table(tmp_path):
    (tmp_path / "v.py").write_text(
        "class V:\n    def __init__(self):\n        self.table = QTableView()\n\n"
        "class D(QStyledItemDelegate):\n    pass\n", encoding="utf-8")
    assert sorted(_tables_not_hot(tmp_path)) == ["v.py:3 self.table is not set up by hot_table",
                                         "v.py:5 D derives from QStyledItemDelegate"]

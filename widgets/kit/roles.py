"""Qt item roles as plain ints, for table models' ``data``.

PySide6 hands ``data`` its role as an enum member; comparing it with ``Qt.DisplayRole``
and the like costs microseconds a call, and Qt asks a dozen roles of every visible
cell at each repaint. Models turn the role into an int once (``int(role)``) and compare
it with these. The same holds for any ``Qt.X`` read in a method Qt calls per cell or
per paint: name it once at import, as here.
"""

from __future__ import annotations

from PySide6.QtCore import Qt

DISPLAY = int(Qt.DisplayRole.value)
DECORATION = int(Qt.DecorationRole.value)
TOOLTIP = int(Qt.ToolTipRole.value)
FONT = int(Qt.FontRole.value)
ALIGN = int(Qt.TextAlignmentRole.value)
BACKGROUND = int(Qt.BackgroundRole.value)
FOREGROUND = int(Qt.ForegroundRole.value)
USER = int(Qt.UserRole.value)
#: A TextAlignmentRole value: right-aligned, centred vertically.
RIGHT = int(Qt.AlignRight | Qt.AlignVCenter)
#: ``headerData``'s orientation to compare with: ``Qt.Horizontal`` is a lookup through
#: the namespace each time, far slower than comparing the member itself.
HORIZONTAL = Qt.Orientation.Horizontal

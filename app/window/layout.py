"""The main window's dock layout: the default arrangement, Reset layout, and the saved state.

The docks are placed from the registry (``widgets.registry.DOCKS``): their area, which
dock each is stacked under or tabbed with, and the minimum size of their widget. The
saved layout (QSettings ``window/state``) is written with ``LAYOUT_VERSION`` and the
list of dock names (``window/docks``); a saved state with another version or another
dock set is ignored and the default arrangement is used instead, so a layout saved by
an older build can never leave docks collapsed or missing.
"""

from __future__ import annotations

from narrative_debugger.widgets.registry import DOCKS as DOCK_SPECS
from PySide6.QtCore import QByteArray, QEvent, QObject, QSettings, QSize, Qt
from PySide6.QtWidgets import QDockWidget, QMainWindow, QWidget

#: Bumped whenever the arrangement of docks changes in a way old saved states do not fit.
LAYOUT_VERSION = 7
#: The smallest window (pixels) at which every dock and view keeps its minimum size.
MIN_WINDOW = (1040, 700)
#: Where each DockSpec.area puts a dock.
DOCK_AREAS = {"left": Qt.LeftDockWidgetArea, "right": Qt.RightDockWidgetArea, "bottom": Qt.BottomDockWidgetArea}
#: Side docks take at most this share of the window width by default.
SIDE_SHARE = 0.4
#: Bottom docks take this share of the window height by default (Findings beside the
#: culprit docks: room for a few rows of each).
BOTTOM_SHARE = 0.3

_STATE, _DOCKS, _GEOMETRY = "window/state", "window/docks", "window/geometry"


def dock_names() -> str:
    """The registry's dock names as saved beside the state (``"npcs,monologues,..."``)."""
    return ",".join(spec.name for spec in DOCK_SPECS)


def place_docks(window: QMainWindow, docks: dict[str, QDockWidget]) -> None:
    """Put every dock where the registry declares it, docked, and visible unless it
    starts ``hidden`` (the Explain dock shows itself when "Why?" is asked).

    Used when the window is built and by View › Reset layout (an already added dock is
    moved back: ``addDockWidget`` on a docked or floating dock re-docks it).
    """
    for spec in DOCK_SPECS:
        dock = docks[spec.name]
        widget = dock.widget()
        width, height = spec.min_size
        widget.setMinimumSize(0, 0)
        if spec.area != "bottom":
            # A side dock is never narrower than its widget needs to stay readable (the NPC
            # table: every header whole), so neither a reset at 1040x700 nor a kept width cuts it.
            width = max(width, widget.minimumSizeHint().width())
        # Nor is any dock shorter than its widget's layout needs (the What if panel: its
        # message, tabs and three tuning values; at 1040x700 its table showed only a header).
        height = max(height, widget.minimumSizeHint().height())
        widget.setMinimumSize(width, height)
        dock.setFloating(False)
        window.addDockWidget(DOCK_AREAS[spec.area], dock)
        dock.setVisible(not spec.hidden)
    for spec in DOCK_SPECS:
        if spec.below:
            window.splitDockWidget(docks[spec.below], docks[spec.name], Qt.Vertical)
        if spec.beside:
            window.splitDockWidget(docks[spec.beside], docks[spec.name], Qt.Horizontal)
        if spec.tab_with:
            window.tabifyDockWidget(docks[spec.tab_with], docks[spec.name])
    for spec in DOCK_SPECS:
        if spec.tab_with:
            docks[spec.tab_with].raise_()


def default_sizes(window: QMainWindow, docks: dict[str, QDockWidget]) -> None:
    """The default proportions, once the window has its real size.

    Side docks get the width their widget asks for (``sizeHint``: the NPC table asks
    for all of its columns), at most ``SIDE_SHARE`` of the window; docks stacked in a
    side share its height evenly; bottom docks get ``BOTTOM_SHARE`` of the height.
    """
    side, bottom = [], []
    for spec in DOCK_SPECS:
        if spec.tab_with or spec.hidden:
            continue
        (bottom if spec.area == "bottom" else side).append(spec)
    if side:
        widths = [min(max(spec.min_size[0], docks[spec.name].widget().sizeHint().width()), int(window.width() * SIDE_SHARE))
                  for spec in side]
        window.resizeDocks([docks[spec.name] for spec in side], [max(widths)] * len(side), Qt.Horizontal)
        height = max(1, window.height() - 200) // max(1, len(side))
        window.resizeDocks([docks[spec.name] for spec in side], [height] * len(side), Qt.Vertical)
    for spec in bottom:
        window.resizeDocks([docks[spec.name]], [max(spec.min_size[1] + 40, int(window.height() * BOTTOM_SHARE))], Qt.Vertical)
    for spec in bottom:
        if spec.beside:
            width = window.width() // 2
            window.resizeDocks([docks[spec.beside], docks[spec.name]], [width, width], Qt.Horizontal)


def save_layout(window: QMainWindow, settings: QSettings) -> None:
    """Write geometry, state (with ``LAYOUT_VERSION``) and the dock names."""
    settings.setValue(_GEOMETRY, window.saveGeometry())
    settings.setValue(_STATE, window.saveState(LAYOUT_VERSION))
    settings.setValue(_DOCKS, dock_names())


def restore_layout(window: QMainWindow, settings: QSettings) -> bool:
    """Restore the saved geometry and, when it still fits, the dock state.

    Returns:
        True when a saved state was restored; False when there was none, or it was
        written with another ``LAYOUT_VERSION`` or for another set of docks (it is
        then ignored and the caller applies ``default_sizes``).
    """
    geometry = settings.value(_GEOMETRY)
    if isinstance(geometry, QByteArray):
        window.restoreGeometry(geometry)
    state = settings.value(_STATE)
    if not isinstance(state, QByteArray) or settings.value(_DOCKS) != dock_names():
        return False
    return bool(window.restoreState(state, LAYOUT_VERSION))


def fit_to_screen(window: QMainWindow) -> None:
    """Shrink the window to the screen's free area when it is larger (never below ``MIN_WINDOW``)."""
    screen = window.screen()
    if screen is None:
        return
    free = screen.availableGeometry()
    width = max(MIN_WINDOW[0], min(window.width(), free.width()))
    height = max(MIN_WINDOW[1], min(window.height(), free.height()))
    if (width, height) != (window.width(), window.height()):
        window.resize(width, height)
        window.move(free.topLeft())


class KeptDockSizes(QObject):
    """Gives docks back the size a smaller window took from them once it grows again.

    A smaller window takes its width and height from the docks and the central area
    alike, but QMainWindow gives all that a larger one gains to the central area: after
    1040x700 and back to 1440x900 the side docks stayed narrow (the NPC table's names
    elided) and the bottom docks short (the Explain dock's steps down to two rows).

    Each docked, shown dock's size at rest is kept: a size it takes while the window
    keeps its size (a splitter dragged, a layout reset, a dock shown), not one a window
    resize gives it. When the window grows, each side dock narrower than its size at
    rest is widened back to it and each bottom dock shorter is heightened back, as far
    as the room gained allows. A dock made smaller on purpose stays so: that is its
    size at rest.
    """

    def __init__(self, window: QMainWindow, docks: dict[str, QDockWidget]) -> None:
        super().__init__(window)
        self._window = window
        self._docks = docks
        self._window_size = QSize(window.size())
        self._rest: dict[str, QSize] = {}
        self._restoring = False
        for name, dock in docks.items():
            dock.setProperty("keptName", name)
            dock.installEventFilter(self)
        window.installEventFilter(self)

    def size_at_rest(self, name: str) -> QSize | None:
        """The size dock ``name`` last took while the window kept its size (None: none yet)."""
        return self._rest.get(name)

    def eventFilter(self, watched, event) -> bool:  # noqa: N802 (Qt override)
        if event.type() != QEvent.Resize:
            return False
        if watched is self._window:
            # The window's layout has already fitted the docks to the new size (a layout
            # handles its widget's resize before the widget's event filters see it).
            old, new = event.oldSize(), event.size()
            if old.isValid() and (new.width() > old.width() or new.height() > old.height()):
                self._give_back(new.width() > old.width(), new.height() > old.height())
            self._window_size = QSize(new)
        elif not self._restoring and self._window.size() == self._window_size:
            dock = watched
            if dock.isVisible() and not dock.isFloating():
                self._rest[dock.property("keptName")] = QSize(event.size())
        return False

    def _give_back(self, wider: bool, taller: bool) -> None:
        side, bottom = [], []
        for name, dock in self._docks.items():
            rest = self._rest.get(name)
            if rest is None or not dock.isVisible() or dock.isFloating():
                continue
            area = self._window.dockWidgetArea(dock)
            if area in (Qt.LeftDockWidgetArea, Qt.RightDockWidgetArea) and wider and dock.width() < rest.width():
                side.append((dock, rest.width()))
            elif area in (Qt.TopDockWidgetArea, Qt.BottomDockWidgetArea) and taller and dock.height() < rest.height():
                bottom.append((dock, rest.height()))
        if not side and not bottom:
            return
        self._restoring = True
        try:
            for wanted, orientation, size in ((side, Qt.Horizontal, QWidget.width), (bottom, Qt.Vertical, QWidget.height)):
                if not wanted:
                    continue
                # Laid out at once, while these resizes are not taken for sizes at rest.
                resize_docks_closer(self._window, [d for d, _ in wanted], [n for _, n in wanted], orientation,
                                    self._tabbed_lack(dict(wanted), size))
        finally:
            self._restoring = False

    def _tabbed_lack(self, target: dict, size):
        """``lacking`` for ``resize_docks_closer``: what each tabbed dock still lacks of its
        ``target`` size (the Explain dock under the Journal's tabs); the others got theirs."""
        def lacking(docks) -> list[int]:
            return [target[d] - size(d) if size(d) < target[d] and self._window.tabifiedDockWidgets(d) else 0 for d in docks]

        return lacking


def resize_docks_closer(window: QMainWindow, docks: list[QDockWidget], sizes: list[int], orientation: Qt.Orientation,
                        lacking, tries: int = 1, lacked_before: int | None = None) -> None:
    """``window.resizeDocks(docks, sizes, orientation)``, laid out at once, then asked again
    for what the docks still lack, at most ``tries`` more times.

    ``resizeDocks`` counts a tabbed dock's tab bar in its size: a dock in a tab group gets
    less than it was asked, and asked again with its size grown by what it still lacks, it
    comes within a pixel or two. ``KeptDockSizes`` gives docks back their sizes at rest this
    way, and the Coverage dock takes the height of its rows from the dock above it.

    Args:
        lacking: ``lacking(docks)`` -> pixels each of ``docks`` still lacks of what it is
            meant to have, in that order (negative: what it may give up for the others;
            0: nothing, and it is not asked again).
        tries: the most times the docks are asked again.
        lacked_before: what the docks lacked in all before the first ask, when asking
            again must lack less than that too.

    Asking again stops once no dock lacks anything, or when the docks lack no less in all
    than at the last ask (the room is used up: a dock giving is at its minimum).
    """
    window.resizeDocks(docks, sizes, orientation)
    window.layout().activate()
    was = lacked_before
    for _ in range(tries):
        lack = lacking(docks)
        need = sum(n for n in lack if n > 0)
        if need <= 0 or (was is not None and need >= was):
            return
        was = need
        again = [(d, s + n) for d, s, n in zip(docks, sizes, lack) if n]
        docks, sizes = [d for d, _ in again], [s for _, s in again]
        window.resizeDocks(docks, sizes, orientation)
        window.layout().activate()

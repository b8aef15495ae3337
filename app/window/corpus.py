"""File › Open corpus… and the Coverage dock's requests (issue 39).

The corpus is read with ``models.corpus`` (the same coverage as ``narrative-debugger
coverage``); a double-click on a line that never fired opens its nearest-miss save
at that tick, with the Explain dock on the line.
"""

from __future__ import annotations

from pathlib import Path

from narrative_debugger.models.playthrough import default_content_dir
from narrative_debugger.app.window.layout import resize_docks_closer
from narrative_debugger.models.report.plain_text import one_line
from narrative_debugger.widgets.kit.plain_text import show_message
from PySide6.QtCore import Qt
from PySide6.QtWidgets import QFileDialog

#: The rows of lines the Coverage dock is given room for when a corpus opens, as far as
#: the dock above it can give (the NPC dock keeps its minimum).
ROWS = 10


class CorpusController:
    """Opens a corpus into the Coverage dock and its nearest misses into the window.

    Attributes:
        corpus: the corpus folder shown (None before one is opened).
        contents: save path -> the content folder it was indexed with.
    """

    def __init__(self, window) -> None:
        self.window = window
        self.corpus: Path | None = None
        self.contents: dict[str, str] = {}
        self.view = window.panels["coverage"][0]
        self.view.missRequested.connect(self.open_miss)

    def add_to_menu(self, menu) -> None:
        menu.addAction(self.window._action("Open c&orpus…", self.choose, None, "action-open-corpus"))

    def choose(self) -> None:
        folder = QFileDialog.getExistingDirectory(self.window, "Open a corpus (made by 'narrative-debugger corpus')", str(self.corpus or ""))
        if folder:
            self.open(Path(folder))

    def open(self, corpus: Path) -> bool:
        """Show ``corpus``'s coverage in the Coverage dock; False (and a message) when it cannot be read."""
        import duckdb

        from narrative_debugger.models.corpus import store
        from narrative_debugger.models.corpus.coverage import coverage, line_files, save_contents

        try:
            con = store.connect(corpus)
            try:
                doc, contents, content_ids = coverage(con), save_contents(con), line_files(con)
            finally:
                con.close()
        except (store.CorpusError, duckdb.Error, OSError) as exc:
            # The store's own messages name the folder already ("X is not a corpus ...").
            text = one_line(exc) if isinstance(exc, store.CorpusError) else f"{one_line(corpus)}: {one_line(exc)}"
            show_message(self.window, "warning", "Cannot open this corpus", text)
            return False
        self.corpus, self.contents = Path(corpus), contents
        self.view.set_coverage(doc, str(corpus), content_ids)
        dock = self.window.docks["coverage"]
        dock.show()
        dock.raise_()
        self._make_room(dock)
        return True

    def _make_room(self, dock) -> None:
        """Give the Coverage dock the height of ``ROWS`` rows when the dock above it can give
        it (down to that dock's minimum): tabbed with the Monologues, half of the left side
        of a 1040x700 window showed four lines."""
        if dock.isFloating() or not self.window.isVisible():
            return
        above = self.window.docks["npcs"]
        if above.isFloating() or not above.isVisible() or self.window.dockWidgetArea(above) != self.window.dockWidgetArea(dock):
            return
        self.window.layout().activate()
        short = self.view.height_short_of(ROWS)
        if short <= 0:
            return
        # Both docks' sizes: asked alone, the dock grew by a fifth of what it asked. Qt gives
        # part of it (the tab bar under the dock counts in its size): asked again for what is
        # still short, it comes within a pixel or two, as far as the NPC dock's minimum lets it.
        def lacking(_docks) -> list[int]:  # the dock above gives what the Coverage dock lacks
            lack = max(0, self.view.height_short_of(ROWS))
            return [-lack, lack]

        resize_docks_closer(self.window, [above, dock], [above.height() - short, dock.height() + short], Qt.Vertical,
                            lacking, tries=3, lacked_before=short)

    def open_miss(self, save: str, tick: int, line_id: str) -> bool:
        """Open ``save`` at ``tick`` (with the content folder it was indexed with) and ask
        "Why?" of the line there; False (and a message, the window and the Coverage dock
        as they were) when the save or that content folder is no longer there."""
        problem = self.miss_problem(save)
        if problem is not None:
            show_message(self.window, "warning", "Cannot open the nearest miss",
                         f"The nearest miss of {one_line(line_id)} is at tick {tick:,} of {problem}")
            return False
        content = self.contents.get(save)
        folder = Path(content) if content and Path(content) != default_content_dir(Path(save)) else None
        self.window.open_save(Path(save), folder, tick=tick, explain=f"line:{line_id}")
        return True

    def miss_problem(self, save: str) -> str | None:
        """Why ``save`` cannot be opened as the corpus indexed it (the rest of a sentence
        naming the save, the folder, and what to do), or None when it can.

        A save opened against a content folder that is gone would be checked against the
        bundled content or none: findings and a "Why?" of the wrong content (the trial
        saw 17 bogus errors and "no monologue line ... in the content")."""
        path = Path(save)
        if not path.is_file():
            what = "is not a file any more" if path.exists() else "is no longer there"
            return (f"{one_line(save)}, which {what}. Run 'narrative-debugger corpus' again to index the saves "
                    "as they are now.")
        content = self.contents.get(save)
        if content and not Path(content).is_dir():
            what = "is not a folder any more" if Path(content).exists() else "no longer exists"
            return (f"{one_line(path.name)}, indexed with the content folder {one_line(content)}, which {what}. "
                    "Put the folder back, or run 'narrative-debugger corpus' again with --content naming "
                    "where the content is now.")
        return None

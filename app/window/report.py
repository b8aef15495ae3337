"""Screenshot bug reports: a PNG that carries its view, a Markdown summary beside it,
and reopening from such a PNG. The ``screenshot`` and ``open-report`` commands
(``app/commands``) and the main window's File menu use these.
"""

from __future__ import annotations

import hashlib
from pathlib import Path

from narrative_debugger.models.fileio import FileRefused, iter_regular_file
from narrative_debugger.models.prompt.builder import PromptBuilder
from narrative_debugger.models.report.meta import REPORT_FORMAT_VERSION, ReportError, ViewRecord, embed_record, free_stem, read_record_file, safe_file_stem, write_new_file
from narrative_debugger.models.report.summary import build_summary
from narrative_debugger.models.save.jsonio import MAX_DOCUMENT_BYTES
from narrative_debugger.widgets.kit.plain_text import show_message
from narrative_debugger.widgets.registry import VIEW_NAMES
from PySide6.QtCore import QBuffer, QByteArray, QIODevice, QObject
from PySide6.QtWidgets import QApplication, QFileDialog

PNG_SUFFIX, MD_SUFFIX = ".png", ".md"


def current_record(window) -> ViewRecord:
    """The view record of what the window shows now."""
    session = window.session
    play = session.playthrough
    npc = play.save.npcs.get(session.npc) if session.npc is not None else None
    view = "all" if getattr(window, "grid_mode", False) else session.view
    return ViewRecord(
        format_version=REPORT_FORMAT_VERSION,
        save_name=play.save.label,
        save_sha256=play.save.sha256,
        save_path=str(Path(window.save_path).resolve()) if window.save_path else "",
        content_dir=str(Path(play.content.root).resolve()) if play.content.root else "",
        tick=session.tick,
        npc=npc.slug if npc else "",
        view=view,
        fact=session.fact or "",
        **culprit_record(play, session.culprit),
        since=session.previous_tick,
        journal_index=session.journal_index,
        explain=session.explain_target or "",
        compare=compare_record(session.comparison),
    )


def compare_record(comparison) -> dict | None:
    """The view record's ``compare``: side B's save (name, path, SHA-256) and content folder."""
    if comparison is None:
        return None
    b = comparison.b
    return {"save_name": b.save.label,
            "save_path": str(Path(b.save.path).resolve()) if b.save.path else "",
            "save_sha256": b.save.sha256,
            "content_dir": str(Path(b.content.root).resolve()) if b.content.root else ""}


def culprit_record(play, finding) -> dict:
    """The view record's ``finding`` ({code, location, target}) and ``selection`` ({kind, id})
    for the finding whose culprit the window shows (empty when none)."""
    if finding is None:
        return {}
    from narrative_debugger.widgets.landing import landing

    doc = finding.to_json()
    return {"finding": {"code": doc["code"], "location": doc["location"], "target": doc["target"]},
            "selection": landing(play, finding).to_json()}


def grab_png(window) -> tuple[bytes, tuple[int, int]]:
    """PNG bytes of the whole window at the screen's device pixel ratio, and its pixel size."""
    window.finish_background()  # the picture of the finished views, not of work still running in slices
    pixmap = window.grab()
    image = pixmap.toImage()
    data = QByteArray()
    buffer = QBuffer(data)
    buffer.open(QIODevice.WriteOnly)
    image.save(buffer, "PNG")
    buffer.close()
    return bytes(data), (image.width(), image.height())


def prompt_preview_for(window, record: ViewRecord):
    """The prompt preview of the record's NPC at its tick (None without an NPC)."""
    if not record.npc:
        return None
    view = window.views.get("prompt")
    current = getattr(view, "current_preview", None)
    if current is not None and current.npc == record.npc and current.tick == record.tick:
        return current
    return PromptBuilder(window.session.playthrough).build(record.npc, record.tick)


def write_report(window, folder: Path, stem: str | None = None) -> tuple[Path, Path, str]:
    """Write PNG + Markdown into ``folder`` under fresh names (``stem`` or one made from
    the save, tick and NPC; ``-2``, ``-3`` … when taken); return both paths and the summary.

    A save still being checked (shown before its checks, ``Playthrough.checks_pending``)
    is checked first, so the picture and the summary show the same, whole findings."""
    play = window.session.playthrough
    if play is not None and play.checks_pending:
        window.wait_for_load()
    record = current_record(window)
    png, _ = grab_png(window)
    png = embed_record(png, record)
    stem = stem or safe_file_stem(f"{Path(record.save_name).name.lstrip('.').split('.')[0]}-t{record.tick}" + (f"-{record.npc}" if record.npc else ""))
    stem = free_stem(folder, stem, (PNG_SUFFIX, MD_SUFFIX))
    png_path = write_new_file(folder, stem, PNG_SUFFIX, png)
    summary = build_summary(window.session.playthrough, record, prompt_preview_for(window, record), png_path.name)
    md_path = write_new_file(folder, png_path.stem, MD_SUFFIX, summary.encode("utf-8", "backslashreplace"))  # a non-UTF-8 file name: \udcxx
    return png_path, md_path, summary


def report_bug(window) -> tuple[Path, Path] | None:
    """File › Report bug: PNG + summary into the report folder (asked once, remembered)."""
    if not window.session.ready:
        show_message(window, "information", "Report bug", "Open a save first.")
        return None
    folder = window.settings.value("report_folder", "")
    if not folder or not Path(folder).is_dir():
        folder = QFileDialog.getExistingDirectory(window, "Where should bug reports go?", str(Path.home()))
        if not folder:
            return None
        window.settings.setValue("report_folder", folder)
    png_path, md_path, summary = write_report(window, Path(folder))
    QApplication.clipboard().setText(summary)
    window.statusBar().showMessage(f"Report written: {png_path} (summary copied to the clipboard)", 10000)
    return png_path, md_path


def choose_and_open_report(window) -> None:
    """File › Open report…"""
    path, _ = QFileDialog.getOpenFileName(window, "Open a bug-report PNG", window.settings.value("report_folder", ""), "PNG images (*.png)")
    if path:
        open_report(window, Path(path))


def sha256_of(path: Path) -> str:
    """Hex SHA-256 of a regular file's bytes (read-only, in a stream); "" when it
    cannot be read (``models.fileio``: not a regular file, over the save size cap)."""
    digest = hashlib.sha256()
    try:
        for block in iter_regular_file(path, MAX_DOCUMENT_BYTES):
            digest.update(block)
    except FileRefused:
        return ""
    return digest.hexdigest()


def locate_save(record: ViewRecord, png_path: Path) -> Path | None:
    """Where the report's save is now: where it was, or beside the PNG (``save_name`` is a
    plain file name: ``ViewRecord.from_json`` refuses any other)."""
    return _locate(record.save_path, record.save_name, png_path)


def _locate(save_path: str, save_name: str, png_path: Path) -> Path | None:
    for candidate in (Path(save_path) if save_path else None, png_path.parent / save_name if save_name else None):
        if candidate is not None and candidate.is_file():
            return candidate
    return None


def find_recorded_finding(play, recorded: dict | None):
    """The finding of ``play`` a record's ``finding`` ({code, location, target}) names, or None."""
    if not recorded:
        return None
    for finding in play.findings:
        doc = finding.to_json()
        if (doc["code"], doc["location"], doc["target"]) == (recorded.get("code"), recorded.get("location"), recorded.get("target")):
            return finding
    return None


def open_report(window, png_path: Path, *, ask=True) -> bool:
    """Reopen the view a report PNG carries: its save at its tick with its NPC and view,
    then, once loaded (and checked): side B when it compared, the finding it showed (its
    Findings row and the culprit selected, as a double-click does), the fact, the previous
    tick ("changed since"), the journal entry, the view and the Explain dock's question.

    Asks for the save when it is not where it was; says so when its SHA-256 differs
    and opens it all the same. Returns False when nothing could be opened (an unreadable
    record, a ``save_name`` that is not a plain file name, no save).
    """
    try:
        record = read_record_file(Path(png_path))
    except (OSError, ReportError) as exc:
        show_message(window, "warning", "Cannot open report", f"{png_path}: {exc}")
        return False
    save = locate_save(record, Path(png_path))
    if save is None and ask:
        show_message(window, "information", "Where is the save?", f"The report was made on {record.save_name}, which is no longer at {record.save_path or 'its old place'}. Please find it.")
        chosen, _ = QFileDialog.getOpenFileName(window, f"Find {record.save_name}", str(Path(png_path).parent), f"{record.save_name};;Saves (*.json *.json.gz)")
        save = Path(chosen) if chosen else None
    if save is None:
        return False
    if record.save_sha256 and sha256_of(save) != record.save_sha256:
        message = f"{save.name} has changed since the report was made (SHA-256 differs); opening it anyway."
        window.statusBar().showMessage(message, 15000)
        if ask:
            show_message(window, "information", "Save changed", message)
    content = Path(record.content_dir) if record.content_dir and Path(record.content_dir).is_dir() else None
    view = record.view if record.view in VIEW_NAMES else None  # "all", or a view this version lacks
    Reopen(window, record, Path(png_path), save)
    window.open_save(save, content, tick=record.tick, npc=record.npc or None, view=view)
    return True


class Reopen(QObject):
    """The part of a reopen that waits: once ``save`` has loaded and been checked in
    ``window``, side B is compared (when the record compared), then the selection is
    restored (``restore_selection``). Forgets itself when the load is cancelled or
    fails, or another save is opened first."""

    def __init__(self, window, record: ViewRecord, png_path: Path, save: Path) -> None:
        super().__init__(window)
        self.window, self.record, self.png_path, self.save = window, record, png_path, save
        self.play = None
        self.b: Path | None = None
        loader = window.loader
        self._links: list = []
        self._link((loader.loaded, self._on_loaded), (loader.checked, self._on_checked),
                   (loader.cancelled, self._forget), (loader.failed, self._forget))

    def _link(self, *links) -> None:
        for signal, slot in self._links:
            signal.disconnect(slot)
        self._links = list(links)
        for signal, slot in self._links:
            signal.connect(slot)

    def _forget(self, *_args) -> None:
        self._link()
        self.deleteLater()

    def _on_loaded(self, play, context: dict) -> None:
        if context.get("reload") or Path(context.get("path", "")) != self.save:
            return self._forget()  # another open overtook this one
        if not play.readable or play is not self.window.session.playthrough:
            return self._forget()
        self.play = play
        if not play.checks_pending:
            self._compare()

    def _on_checked(self, play, _context: dict) -> None:
        if play is self.play:
            self._compare()

    def _compare(self) -> None:
        self._link()
        side = self.record.compare
        if not side:
            return self._finish()
        self.b = _locate(side["save_path"], side["save_name"], self.png_path)
        if self.b is None:
            self.window.statusBar().showMessage(f"The report compared with {side['save_name']}, which is no longer at {side['save_path'] or 'its old place'}; showing A alone.", 15000)
            return self._finish()
        loader = self.window.compare.loader
        self._link((loader.loaded, self._on_compared), (loader.cancelled, self._forget), (loader.failed, self._forget))
        content = Path(side["content_dir"]) if side["content_dir"] and Path(side["content_dir"]).is_dir() else None
        self.window.compare.compare_with(self.b, content)

    def _on_compared(self, _outcome, context: dict) -> None:
        if context.get("path") == self.b and context.get("a") is self.play:
            self._finish()  # compared, or B could not be read (said by the compare itself)
        else:
            self._forget()

    def _finish(self) -> None:
        self._link()
        if self.window.session.playthrough is self.play:
            restore_selection(self.window, self.record)
        self.deleteLater()


def restore_selection(window, record: ViewRecord) -> None:
    """Bring back what ``record`` selected in ``window``, which shows its save: the finding
    (its row in the Findings dock, its culprit in the docks), the NPC, the fact, the tick
    with the previous tick before it, the journal entry, the view (or all views) and the
    Explain dock's question. A finding the save no longer has is said in the status bar."""

    session = window.session
    finding = find_recorded_finding(session.playthrough, record.finding)
    if finding is not None:
        show_finding(window, finding)
    elif record.finding:
        window.statusBar().showMessage(f"The report showed finding {record.finding.get('code')} at {record.finding.get('location')}, which this save no longer has.", 15000)
    if record.npc:
        session.go_to(npc=record.npc)
    session.set_fact(record.fact or None)
    if record.since is not None and record.since != record.tick:
        session.set_tick(record.since)
    session.set_tick(record.tick)
    if record.journal_index is not None:
        session.set_journal_index(record.journal_index)
    if record.view == "all":
        window.set_grid(True)
    elif record.view in VIEW_NAMES:
        window.set_grid(False)
        session.set_view(record.view)
    if record.explain:
        session.explain(record.explain)


def show_finding(window, finding) -> None:
    """Do what a double-click on ``finding`` in the Findings dock does (its row selected,
    a filter hiding it cleared), in tabs, and let the views settle."""
    from narrative_debugger.widgets.docks.findings import activate_finding
    from PySide6.QtWidgets import QApplication

    panel = window.panels["findings"][0]
    row = panel.row_of(finding)
    if row < 0:
        panel.search.clear()
        panel.errors.setChecked(True)
        panel.warnings.setChecked(True)
        row = panel.row_of(finding)
    window.set_grid(False)
    if row >= 0:
        panel.activate_row(row)
    else:
        activate_finding(window.session, finding)
    for _ in range(3):
        QApplication.processEvents()

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
from narrative_debugger.widgets.plain_text import show_message
from narrative_debugger.widgets.registry import VIEW_NAMES
from PySide6.QtCore import QBuffer, QByteArray, QIODevice, Qt
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
    )


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
    for candidate in (Path(record.save_path) if record.save_path else None, png_path.parent / record.save_name if record.save_name else None):
        if candidate is not None and candidate.is_file():
            return candidate
    return None


def open_report(window, png_path: Path, *, ask=True) -> bool:
    """Reopen the save, tick, NPC and view a report PNG carries.

    Asks for the save when it is not where it was; says so when its SHA-256 differs
    and opens it all the same. Returns False when nothing could be opened.
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
    window.open_save(save, content, tick=record.tick, npc=record.npc or None, view=view)
    if record.view == "all":
        window.set_grid(True)
    if record.fact:
        window.loader.loaded.connect(lambda *_: window.session.set_fact(record.fact), type=Qt.SingleShotConnection)
    return True

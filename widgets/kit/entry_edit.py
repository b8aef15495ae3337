"""What if… edit this entry (issue 38): the dialog that changes one field of one journal
entry. The Journal dock opens it on any entry, the Interactions view on the sentiment
of the RelationshipInteraction that scored a conversation; both emit the pointer and
the value it gives as their ``whatIfRequested``. ``ConversationWhatIf`` puts the
conversation's action on a view (the Interactions and Knowledge tables)."""

from __future__ import annotations

from narrative_debugger.models.compare.journal import entry_json
from narrative_debugger.models.report.json_text import dumps_strict
from narrative_debugger.models.report.plain_text import one_line
from narrative_debugger.models.domain.types import FactId
from narrative_debugger.models.whatif.entries import SENTIMENT, conversation_entry
from narrative_debugger.models.whatif.patch import PatchError, parse_set
from narrative_debugger.models.whatif.refusals import DERIVED_FIELDS, check_entry_edit
from PySide6.QtCore import Qt
from PySide6.QtGui import QAction
from PySide6.QtWidgets import QComboBox, QDialog, QDialogButtonBox, QFormLayout, QLabel, QLineEdit, QVBoxLayout, QWidget


class EntryEditDialog(QDialog):
    """What if… edit this entry: one field of journal entry ``index`` and its new value.

    On OK, ``pointer()`` is ``/journal/N/event/<Kind>/<field>`` and ``value()`` the
    value typed (parsed as JSON, else text): a JSON Patch ``replace`` for the what-if.
    A value the what-if would refuse at once (``whatif.refusals.check_entry_edit``: the wrong
    type, a sentiment outside -1..1) keeps the dialog open with the message in ``error``.
    ``field`` chooses the field shown first (default: ``sentiment`` where there is one);
    ``about`` is added to the line naming the entry.

    Attributes:
        field: the entry's fields (its scalar ones: a list's items are not offered).
        edit: the new value, prefilled with the recorded one.
        error: why the value cannot be taken (empty when it can).
    """

    def __init__(self, playthrough, index: int, parent: QWidget | None = None, field: str | None = None, about: str = "") -> None:
        super().__init__(parent)
        self.setObjectName("whatIfEntryDialog")
        self.setWindowTitle("What if… edit this entry")
        self._save = playthrough.save
        entry = entry_json(playthrough.save, index) or {}
        event = entry.get("event") or {}
        self.index = index
        self.kind, fields = next(iter(event.items()), (None, {}))
        derived = DERIVED_FIELDS.get(self.kind or "", {})  # the replay derives them: not offered
        self._recorded = {k: v for k, v in (fields or {}).items() if not isinstance(v, list | dict) and k not in derived}
        tick = entry.get("tick")
        about = QLabel(one_line(f"Entry #{index:,} at tick {'—' if tick is None else f'{tick:,}'}: {self.kind or '(unreadable)'}{about}. "
                                "Change one field; the save is replayed from here and compared with the recorded run."), self)
        about.setTextFormat(Qt.PlainText)
        about.setWordWrap(True)
        self.field = QComboBox(self)
        self.field.setObjectName("whatIfEntryField")
        for name in self._recorded:
            self.field.addItem(name)
        self.edit = QLineEdit(self)
        self.edit.setObjectName("whatIfEntryValue")
        self.error = QLabel("", self)
        self.error.setObjectName("whatIfEntryError")
        self.error.setTextFormat(Qt.PlainText)
        self.error.setWordWrap(True)  # a refusal names the operation, the pointer and the finding
        self.error.setStyleSheet("color: #b00020;")
        form = QFormLayout()
        form.addRow("Field:", self.field)
        form.addRow("What if:", self.edit)
        self.buttons = QDialogButtonBox(QDialogButtonBox.Ok | QDialogButtonBox.Cancel, self)
        self.buttons.button(QDialogButtonBox.Ok).setText("Replay")
        self.buttons.accepted.connect(self.accept)
        self.buttons.rejected.connect(self.reject)
        # Wide enough that the entry's line and a refusal (operation, pointer, finding) read
        # in a few lines, not cut (a word-wrapped label in a dialog sized to its hint was).
        self.setMinimumWidth(self.fontMetrics().averageCharWidth() * 64)
        layout = QVBoxLayout(self)
        layout.addWidget(about)
        layout.addLayout(form)
        layout.addWidget(self.error)
        layout.addWidget(self.buttons)
        self.field.currentTextChanged.connect(self._prefill)
        self.field.currentTextChanged.connect(lambda _name: self.error.clear())  # a refusal was about the field before
        preferred = field if field in self._recorded else "sentiment" if "sentiment" in self._recorded else None
        if preferred:
            self.field.setCurrentText(preferred)
        self._prefill(self.field.currentText())

    def _prefill(self, name: str) -> None:
        if name in self._recorded:
            value = self._recorded[name]
            self.edit.setText(dumps_strict(value) if not isinstance(value, str) else value)
            self.edit.selectAll()
            self.edit.setFocus()

    def showEvent(self, event) -> None:  # noqa: N802 (Qt override)
        super().showEvent(event)
        # The value's field has the keyboard, the recorded value selected: typing replaces it.
        self.edit.setFocus(Qt.OtherFocusReason)
        self.edit.selectAll()

    def pointer(self) -> str:
        """The JSON pointer of the chosen field (``/journal/N/event/<Kind>/<field>``)."""
        return f"/journal/{self.index}/event/{self.kind}/{self.field.currentText()}"

    def value(self) -> object:
        """The value typed, as JSON, else as text."""
        return parse_set(f"{self.pointer()}={self.edit.text().strip()}", said="")[1]

    def accept(self) -> None:
        if self.kind is None or not self.field.currentText():
            self.error.setText("This entry has no field to edit.")
            return
        if not self.edit.text().strip():
            self.error.setText("Type the value the field should have had.")
            return
        try:  # what the what-if would refuse at once stays here, to be corrected (the trial's closed)
            check_entry_edit(self._save, self.pointer(), self.value())
        except PatchError as exc:
            self.error.setText(one_line(str(exc)))
            self.adjustSize()  # the message's lines, whole
            return
        super().accept()


def open_entry_dialog(playthrough, index: int, parent: QWidget, requested, **options) -> EntryEditDialog:
    """Open an ``EntryEditDialog`` on journal entry ``index`` (window-modal, not blocking,
    deleted on close); on Replay it emits ``(pointer, value)`` through ``requested``.
    ``options`` go to the dialog (``field``, ``about``). Returns the dialog."""
    dialog = EntryEditDialog(playthrough, index, parent, **options)
    dialog.setAttribute(Qt.WA_DeleteOnClose)
    dialog.accepted.connect(lambda: requested.emit(dialog.pointer(), dialog.value()))
    dialog.open()
    return dialog


class ConversationWhatIf:
    """"What if… this conversation's sentiment" on a view that lists conversations (issue
    38: "what if the player had been kinder here"): a context-menu action, enabled on a
    conversation the game scored, that opens ``EntryEditDialog`` on the sentiment of its
    RelationshipInteraction (``whatif.entries.conversation_entry``) and emits the pointer
    and value through ``requested`` (the view's ``whatIfRequested``).

    Args:
        view: the item view; its context menu gains the action.
        session: the session (its ``playthrough``).
        current_fact: the FactId of the view's current row (None: no row).
        requested: the signal ``(pointer, value)`` is emitted on.

    Attributes:
        action: the QAction (``action-whatif-conversation``).
    """

    def __init__(self, view, session, current_fact, requested) -> None:
        self.view, self.session, self.current_fact, self.requested = view, session, current_fact, requested
        self.action = QAction("What if… this conversation's sentiment", view)
        self.action.setObjectName("action-whatif-conversation")
        self.action.triggered.connect(lambda: self.edit())
        view.addAction(self.action)
        self.update()

    def entry(self, fact_id: FactId | None = None) -> int | None:
        """The journal index of the RelationshipInteraction that scored conversation
        ``fact_id`` (default: the current row's), or None."""
        fact_id = self.current_fact() if fact_id is None else fact_id
        play = self.session.playthrough
        return conversation_entry(play, fact_id) if play is not None and fact_id is not None else None

    def update(self) -> None:
        """Enable the action for the current row (call it when the current row changes)."""
        entry = self.entry()
        self.action.setEnabled(entry is not None)
        self.action.setToolTip(
            f"Change the sentiment of journal entry #{entry:,} (the RelationshipInteraction that scored it) and replay" if entry is not None
            else "Choose a completed conversation: one walked away from was not scored, so it has no sentiment to change")

    def edit(self, fact_id: FactId | None = None) -> EntryEditDialog | None:
        """Open the dialog on the sentiment of conversation ``fact_id`` (default: the
        current row's). Returns it (window-modal, not blocking), or None when the
        conversation was not scored."""
        fact_id = self.current_fact() if fact_id is None else fact_id
        entry = self.entry(fact_id) if fact_id is not None else None
        if entry is None:
            return None
        return open_entry_dialog(self.session.playthrough, entry, self.view, self.requested, field=SENTIMENT,
                                 about=f" (the conversation {fact_id})")

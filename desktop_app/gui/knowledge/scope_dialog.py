"""The "New collection" prompt: a name field that says what a name may hold (letters of any
language, digits, - and _) and, while the typed name cannot be one, why; OK waits for a valid name.
The rule is the core's (``core.library.scopes.check_scope_name``), so the prompt and the check agree."""

from __future__ import annotations

from PySide6.QtCore import Qt
from PySide6.QtWidgets import QDialog, QDialogButtonBox, QLabel, QLineEdit, QVBoxLayout, QWidget

from desktop_app.core.library.scopes import check_scope_name, scope_name_rule
from desktop_app.gui.i18n import on_language_changed, tr, tr_core


class ScopeNameDialog(QDialog):
    """Asks for a new collection's name; ``name()`` is the accepted one (without "@")."""

    def __init__(self, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.prompt = QLabel()
        self.prompt.setWordWrap(True)
        self.field = QLineEdit()
        self.field.setMaxLength(80)  # longer than the rule allows, so the error says why
        self.error = QLabel(objectName="warning")
        self.error.setTextFormat(Qt.PlainText)
        self.error.setWordWrap(True)
        self.buttons = QDialogButtonBox(QDialogButtonBox.Ok | QDialogButtonBox.Cancel)
        self.buttons.accepted.connect(self.accept)
        self.buttons.rejected.connect(self.reject)
        lay = QVBoxLayout(self)
        lay.addWidget(self.prompt)
        lay.addWidget(self.field)
        lay.addWidget(self.error)
        lay.addWidget(self.buttons)
        self.field.textChanged.connect(self._check)
        on_language_changed(self.retranslate)
        self.retranslate()
        self.setMinimumWidth(420)

    def retranslate(self, *_: object) -> None:
        self.setWindowTitle(tr("New collection"))
        self.prompt.setText(tr("Name ({rule}):").format(rule=tr_core(scope_name_rule())))
        self._check()

    def name(self) -> str:
        return self.field.text().strip().lstrip("@")

    def _check(self, *_: object) -> None:
        why = check_scope_name(self.field.text())
        typed = bool(self.field.text().strip())
        self.error.setText(tr_core(why) if why is not None and typed else "")
        self.error.setVisible(why is not None and typed)  # an empty field is no mistake yet
        self.buttons.button(QDialogButtonBox.Ok).setEnabled(why is None)

    def accept(self) -> None:
        if check_scope_name(self.field.text()) is None:
            super().accept()

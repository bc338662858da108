"""What the chat shows before its first message: what the app does, which model serves each role,
what answers look like without a language model, and the way to the model manager."""

from __future__ import annotations

from PySide6.QtCore import Qt, Signal
from PySide6.QtWidgets import QGridLayout, QHBoxLayout, QLabel, QPushButton, QSizePolicy, QVBoxLayout, QWidget

from desktop_app.gui.context import AppContext, model_tooltip
from desktop_app.gui.i18n import on_language_changed, tr, tr_core
from desktop_app.gui.markdown import plain_tooltip

ROLES = ("embedder", "reranker", "llm", "classifier")  # keys of ctx.status, in the order shown


def _role_title(role: str) -> str:
    # Literal tr() keys (not a table of English texts), so test_i18n checks their translations.
    return {
        "embedder": tr("Embedding model"),
        "reranker": tr("Reranker"),
        "llm": tr("Language model"),
        "classifier": tr("Image classifier"),
    }[role]


def _features() -> list[tuple[str, str]]:
    """The three things the app does: (heading, how)."""
    return [
        (
            tr("Build your knowledge base"),
            tr(
                "Drop documents here or on the Knowledge panel: PDF, Word, slides, spreadsheets, e-books, notes."
            ),
        ),
        (
            tr("Ask a question"),
            tr("Type it below: the answer comes from your documents, with citations that open the passage."),
        ),
        (
            tr("Identify a photo"),
            tr("Drop a photo here (or use Photo…): it is compared with the species in your documents."),
        ),
    ]


def _plain(text: str = "", name: str = "") -> QLabel:
    label = QLabel(text, objectName=name)
    label.setTextFormat(Qt.PlainText)  # model names and reasons are shown as text, never HTML
    label.setWordWrap(True)
    return label


class EmptyState(QWidget):
    """The chat's placeholder. Model rows follow ``ctx.status`` (and say "loading…" meanwhile)."""

    manage_models = Signal()  # the user wants the model manager

    def __init__(self, ctx: AppContext, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.ctx = ctx
        self.setObjectName("emptyState")
        self.setStyleSheet(
            "QLabel#emptyTitle { font-size: 18px; font-weight: 600; }"
            "QLabel#emptyHeading, QLabel#emptySection { font-weight: 600; }"
            "QLabel#emptyText, QLabel#emptyNote { color: palette(placeholder-text); }"
        )
        self.title = _plain(name="emptyTitle")
        self.feature_labels: list[tuple[QLabel, QLabel]] = []
        features = QVBoxLayout()  # box layouts, not a grid: wrapped lines get their height
        features.setSpacing(8)
        for n in range(len(_features())):
            heading, how = _plain(name="emptyHeading"), _plain(name="emptyText")
            text = QVBoxLayout()
            text.setSpacing(2)
            text.addWidget(heading)
            text.addWidget(how)
            row = QHBoxLayout()
            row.setSpacing(10)
            row.addWidget(_plain(f"{n + 1}", "emptyHeading"), 0, Qt.AlignTop)
            row.addLayout(text, 1)
            features.addLayout(row)
            self.feature_labels.append((heading, how))

        self.models_title = _plain(name="emptySection")
        self.role_labels: dict[str, QLabel] = {}
        self.model_labels: dict[str, QLabel] = {}
        models = QGridLayout()
        models.setHorizontalSpacing(12)
        models.setColumnStretch(1, 1)
        for row, role in enumerate(ROLES):
            self.role_labels[role] = _plain()
            self.model_labels[role] = _plain()
            models.addWidget(self.role_labels[role], row, 0, Qt.AlignTop)
            models.addWidget(self.model_labels[role], row, 1, Qt.AlignTop)
        self.llm_note = _plain(name="emptyNote")
        self.manage_button = QPushButton(objectName="manageModels")
        self.manage_button.clicked.connect(self.manage_models)

        # The content keeps a readable measure, centred in a wide column; it shrinks with a narrow one.
        content = QWidget()
        content.setMaximumWidth(600)
        content.setSizePolicy(QSizePolicy.Expanding, QSizePolicy.Preferred)
        centre = QHBoxLayout(self)
        centre.setContentsMargins(24, 32, 24, 24)
        centre.addStretch(1)
        centre.addWidget(content, 100)
        centre.addStretch(1)
        lay = QVBoxLayout(content)
        lay.setContentsMargins(0, 0, 0, 0)
        lay.setSpacing(10)
        lay.addWidget(self.title)
        lay.addLayout(features)
        lay.addSpacing(8)
        lay.addWidget(self.models_title)
        lay.addLayout(models)
        lay.addWidget(self.llm_note)
        lay.addWidget(self.manage_button, 0, Qt.AlignLeft)

        ctx.status_changed.connect(self.update_models)
        ctx.loading_changed.connect(self.update_models)
        on_language_changed(self.retranslate)
        self.retranslate()

    def retranslate(self, *_: object) -> None:
        self.title.setText(tr("Knowledge Desk answers from your own documents"))
        for (heading, how), (head_text, how_text) in zip(self.feature_labels, _features(), strict=True):
            heading.setText(head_text)
            how.setText(how_text)
        self.models_title.setText(tr("Models in use"))
        self.manage_button.setText(tr("Manage models…"))
        self.manage_button.setToolTip(tr("See which models are installed, and download the missing ones"))
        self.llm_note.setText(
            tr("No language model: answers are quoted sentences from your documents (extractive).")
        )
        self.update_models()

    def update_models(self) -> None:
        loading = not self.ctx.ready and not self.ctx.load_error
        for role in ROLES:
            status = self.ctx.status[role]
            self.role_labels[role].setText(_role_title(role))
            label = self.model_labels[role]
            if status.name:
                label.setText(f"● {tr_core(status.name)}")
                label.setToolTip(plain_tooltip(model_tooltip(status)))
            else:
                label.setText("○ " + (tr("loading…") if loading else tr("none")))
                why = tr_core(status.reason) if status.reason and not loading else ""
                label.setToolTip(plain_tooltip(why) if why else "")
        # What "no language model" means, once that is known (not while loading).
        self.llm_note.setVisible(not loading and not self.ctx.status["llm"].name)

    def texts(self) -> list[str]:
        """The visible texts, top to bottom (tests)."""
        labels = [self.title]
        for heading, how in self.feature_labels:
            labels += [heading, how]
        labels.append(self.models_title)
        for role in ROLES:
            labels += [self.role_labels[role], self.model_labels[role]]
        labels.append(self.llm_note)
        shown = [label.text() for label in labels if not label.isHidden()]
        return shown + [self.manage_button.text()]

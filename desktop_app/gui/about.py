"""Help › About: the version, where this window keeps its data and its log (each openable and
copyable), and the models the app can use with their licences, as the model registry lists them."""

from __future__ import annotations

from pathlib import Path

from PySide6.QtCore import Qt, QUrl
from PySide6.QtGui import QDesktopServices, QGuiApplication
from PySide6.QtWidgets import (
    QDialog,
    QDialogButtonBox,
    QFormLayout,
    QFrame,
    QGridLayout,
    QHBoxLayout,
    QLabel,
    QLineEdit,
    QPushButton,
    QScrollArea,
    QVBoxLayout,
    QWidget,
)

from desktop_app.core.models.registry import ManifestError, ModelSpec, load_manifest
from desktop_app.core.packages import app_version
from desktop_app.core.paths import log_file
from desktop_app.gui.context import AppContext
from desktop_app.gui.i18n import on_language_changed, tr
from desktop_app.gui.markdown import plain_tooltip
from desktop_app.gui.settings.models_page import ROLE_TITLES
from desktop_app.gui.widgets import plain_label


class PathRow(QWidget):
    """A path shown read-only, with Open (the folder, or the folder holding the file) and Copy."""

    def __init__(self, path: Path, *, folder: bool) -> None:
        super().__init__()
        self.path = path
        self.folder = folder
        self.field = QLineEdit(str(path))
        self.field.setReadOnly(True)
        self.field.setCursorPosition(0)
        self.open_button = QPushButton()
        self.open_button.clicked.connect(self.open)
        self.copy_button = QPushButton()
        self.copy_button.clicked.connect(self.copy)
        row = QHBoxLayout(self)
        row.setContentsMargins(0, 0, 0, 0)
        row.addWidget(self.field, 1)
        row.addWidget(self.open_button)
        row.addWidget(self.copy_button)

    def retranslate(self) -> None:
        self.open_button.setText(tr("Open"))
        self.copy_button.setText(tr("Copy"))
        self.open_button.setToolTip(
            tr("Open the folder") if self.folder else tr("Open the folder that holds it")
        )

    def target(self) -> Path:
        """What Open opens: the folder itself, or the file's folder (a log may not exist yet)."""
        return self.path if self.folder else self.path.parent

    def open(self) -> None:
        target = self.target()
        target.mkdir(parents=True, exist_ok=True)
        QDesktopServices.openUrl(QUrl.fromLocalFile(str(target)))

    def copy(self) -> None:
        QGuiApplication.clipboard().setText(str(self.path))


class AboutDialog(QDialog):
    """What version runs, where its data and log are, and the bundled and downloadable models' licences."""

    def __init__(
        self, ctx: AppContext, parent: QWidget | None = None, *, manifest: Path | None = None
    ) -> None:
        super().__init__(parent)
        self.ctx = ctx
        self.version = app_version()
        self.title = QLabel(objectName="emptyTitle")
        self.title.setTextFormat(Qt.PlainText)
        self.version_label = plain_label()
        self.data_row = PathRow(ctx.data_dir, folder=True)
        self.log_row = PathRow(log_file(ctx.data_dir), folder=False)
        self.paths = QFormLayout()
        self.paths.addRow(QLabel(), self.data_row)
        self.paths.addRow(QLabel(), self.log_row)

        self.models_title = QLabel(objectName="emptySection")
        try:
            self.specs: list[ModelSpec] = load_manifest(manifest)
            self.manifest_error = ""
        except ManifestError as exc:  # shown instead of the list
            self.specs, self.manifest_error = [], str(exc)
        grid_widget = QWidget()
        self.models_grid = QGridLayout(grid_widget)
        self.models_grid.setColumnStretch(0, 1)
        self.licence_labels: dict[str, QLabel] = {}
        self.name_labels: dict[str, QLabel] = {}
        self.role_labels: dict[str, QLabel] = {}
        for row, spec in enumerate(self.specs):
            name = plain_label(spec.display_name)
            name.setToolTip(plain_tooltip(tr("Technical id: {id}").format(id=spec.id)))
            role = plain_label(object_name="muted")
            licence = plain_label()  # whole: the provenance note matters here
            self.models_grid.addWidget(name, row, 0)
            self.models_grid.addWidget(role, row, 1)
            self.models_grid.addWidget(licence, row, 2)
            self.name_labels[spec.id], self.role_labels[spec.id] = name, role
            self.licence_labels[spec.id] = licence
        self.models_grid.setColumnStretch(2, 2)
        self.models_grid.setRowStretch(len(self.specs), 1)  # rows packed at the top
        scroll = QScrollArea()
        scroll.setWidgetResizable(True)
        scroll.setFrameShape(QFrame.NoFrame)
        scroll.setHorizontalScrollBarPolicy(Qt.ScrollBarAlwaysOff)
        scroll.setWidget(grid_widget)
        self.models_note = plain_label(object_name="muted")

        buttons = QDialogButtonBox(QDialogButtonBox.Close)
        buttons.rejected.connect(self.reject)
        self.close_button = buttons.button(QDialogButtonBox.Close)
        lay = QVBoxLayout(self)
        lay.addWidget(self.title)
        lay.addWidget(self.version_label)
        lay.addLayout(self.paths)
        lay.addWidget(self.models_title)
        lay.addWidget(self.models_note)
        lay.addWidget(scroll, 1)
        lay.addWidget(buttons)
        on_language_changed(self.retranslate)
        self.retranslate()
        self.resize(760, 520)

    def retranslate(self, *_: object) -> None:
        self.setWindowTitle(tr("About Knowledge Desk"))
        self.title.setText(tr("Knowledge Desk"))
        self.version_label.setText(
            tr("Version {version}").format(version=self.version or tr("unknown"))
            + " · "
            + tr("A desktop assistant that answers from your own documents and names species in photos.")
        )
        for row, text in enumerate((tr("Data folder"), tr("Log file"))):
            item = self.paths.itemAt(row, QFormLayout.LabelRole)
            item.widget().setText(text)
        self.data_row.retranslate()
        self.log_row.retranslate()
        self.models_title.setText(tr("Models and their licences"))
        self.models_note.setText(
            self.manifest_error
            or tr(
                "The models Knowledge Desk can use (Settings › Models shows which are installed). "
                "Each keeps its own licence."
            )
        )
        for spec in self.specs:
            self.role_labels[spec.id].setText(tr(ROLE_TITLES.get(spec.role, spec.role)))
            self.licence_labels[spec.id].setText(tr(spec.license))  # the manifest's note is catalogued
        self.close_button.setText(tr("Close"))

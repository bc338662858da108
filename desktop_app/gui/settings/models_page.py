"""Settings > Models: the model manager (what LM Studio and GPT4All users expect).

Every role of the manifest with each of its models: active, installed or missing, size, licence and
where it lives, as ``kdesk models`` reports them (``core.models.status.model_status``). A missing
downloadable model has a Fetch button running ``kdesk models fetch``'s own code
(``core.models.fetch.fetch_model``) on the task runner, with progress and Cancel; a model shipped in
a PyPI package shows its pip command instead. The download endpoint is checked once, off the UI
thread, when the page opens: when it cannot be reached, the page says so and Fetch is disabled.
"""

from __future__ import annotations

import copy
import html
from dataclasses import dataclass
from pathlib import Path
from urllib.parse import urlsplit

from PySide6.QtCore import Qt, QUrl, Signal
from PySide6.QtGui import QDesktopServices
from PySide6.QtWidgets import (
    QFrame,
    QGridLayout,
    QGroupBox,
    QHBoxLayout,
    QLabel,
    QProgressBar,
    QPushButton,
    QScrollArea,
    QVBoxLayout,
    QWidget,
)

from desktop_app.core.config import Config
from desktop_app.core.messages import N_, Message, render
from desktop_app.core.models.fetch import default_dest, fetch_model, resolve_endpoint
from desktop_app.core.models.registry import Availability, ModelSpec, load_manifest
from desktop_app.core.models.status import RoleStatus, model_status
from desktop_app.gui.context import AppContext, role_statuses
from desktop_app.gui.i18n import catalogue, on_language_changed, tr
from desktop_app.gui.markdown import plain_tooltip
from desktop_app.gui.operations import JobKind, Operation
from desktop_app.gui.tasks import Failure, Job, QtTaskState
from desktop_app.gui.widgets import plain_label

ROLE_TITLES = {
    "embedding": N_("Embedding model (search)"),
    "reranker": N_("Reranker (orders search results)"),
    "chat": N_("Language model (answers)"),
    "classifier": N_("Photo classifier"),
    "image": N_("Image-text model (photos and names)"),
}
REACH_TIMEOUT = 3.0  # seconds: the page says "offline" quickly rather than waiting on a dead link


def endpoint_reachable(endpoint: str, timeout: float = REACH_TIMEOUT) -> bool:
    """Does anything answer HTTP at ``endpoint``? (Any status counts: a mirror's front page may 404.)"""
    import httpx

    try:
        httpx.head(endpoint, timeout=timeout)
    except (httpx.HTTPError, httpx.InvalidURL):
        return False
    return True


def human_size(n: int) -> str:
    if n >= 10**9:
        return f"{n / 10**9:.2f} GB"
    if n >= 10**6:
        return f"{n / 10**6:.0f} MB"
    if n >= 10**3:
        return f"{n / 10**3:.0f} KB"
    return f"{n} B"


def model_state(status: RoleStatus, a: Availability) -> str:
    """Whether a model is "active", "installed" or "missing": what the page shows for one model of a role."""
    if a.installed and (a.id == status.active_id or (a.path is not None and a.path == status.path)):
        return "active"
    if a.installed and status.path and a.path and Path(status.path).parent == Path(a.path):
        return "active"  # the chat role names the .gguf file inside the model's folder
    return "installed" if a.installed else "missing"


def active_name(status: RoleStatus) -> str:
    """What serves the role, in the user's language: a model's name stays as it is; the core's
    English notes around it ("(bundled, English)") are left to the tooltip's reason."""
    if status.active_id == "extractive":
        return tr("no language model; answers quote your documents")
    if status.active_id and status.active_id.startswith("server:"):
        return tr("a model on the server {url}").format(url=status.active_id[len("server:") :])
    if isinstance(status.active, Message):  # "{name} (bundled, English)": the name, notes in the tooltip
        return str(status.active.params.get("name", "")) or render(status.active, catalogue())
    return (status.active or "").split(" (")[0]


@dataclass
class ModelRow:
    """The widgets of one model (tests read them)."""

    model_id: str
    state: str
    state_label: QLabel
    size_label: QLabel
    path_label: QLabel
    fetch: QPushButton | None  # a downloadable model that is not on disk
    command: QLabel | None  # what installs it otherwise (a pip command)


class ModelsPage(QWidget):
    """The Models tab. ``manifest``/``endpoint`` default to the app's (tests pass a tiny hub's)."""

    statuses_changed = Signal()
    fetch_finished = Signal(str)  # "installed" | "cancelled" | "failed"

    def __init__(
        self,
        ctx: AppContext,
        parent: QWidget | None = None,
        *,
        manifest: Path | None = None,
        endpoint: str | None = None,
    ) -> None:
        super().__init__(parent)
        self.ctx = ctx
        self.manifest = manifest
        self.endpoint = resolve_endpoint(endpoint)
        self.dest = default_dest(ctx.data_dir)
        self.online: bool | None = None  # None: not known yet
        self.statuses: list[RoleStatus] = []
        self.specs: dict[str, ModelSpec] = {}
        self.rows: dict[str, ModelRow] = {}
        self.role_boxes: dict[str, QGroupBox] = {}
        self.active_labels: dict[str, QLabel] = {}
        self.server_labels: dict[str, QLabel] = {}  # roles served by another machine
        self.budget_label: QLabel | None = None  # the reranker's budget line, when one is in use
        self.fetch_job: Job | None = None
        self._fetching = ""  # the model id being downloaded
        self._outcome = ""  # the last fetch's result line, kept across language changes

        self.intro = QLabel(objectName="muted")
        self.intro.setWordWrap(True)
        self.network = QLabel(objectName="warning")
        self.network.setWordWrap(True)
        self.network.setTextInteractionFlags(Qt.TextSelectableByMouse)
        self.roles = QWidget()
        self.roles_layout = QVBoxLayout(self.roles)
        self.roles_layout.setContentsMargins(0, 0, 0, 0)
        scroll = QScrollArea()
        scroll.setWidgetResizable(True)
        # Never sideways: long folders wrap (PlainLabel), so every column stays in sight.
        scroll.setHorizontalScrollBarPolicy(Qt.ScrollBarAlwaysOff)
        scroll.setFrameShape(QFrame.NoFrame)
        scroll.setWidget(self.roles)

        self.progress_label = QLabel()
        self.progress_label.setWordWrap(True)
        self.progress = QProgressBar()
        self.progress.setRange(0, 1000)  # per mille: model sizes overflow a Qt int in bytes sums
        self.cancel_button = QPushButton()
        self.cancel_button.clicked.connect(self.cancel_fetch)
        progress_row = QHBoxLayout()
        progress_row.addWidget(self.progress, 1)
        progress_row.addWidget(self.cancel_button)
        self.open_folder = QPushButton()
        self.open_folder.clicked.connect(self.open_models_folder)
        bottom = QHBoxLayout()
        bottom.addWidget(self.progress_label, 1)
        bottom.addWidget(self.open_folder)

        lay = QVBoxLayout(self)
        lay.addWidget(self.intro)
        lay.addWidget(self.network)
        lay.addWidget(scroll, 1)
        lay.addLayout(progress_row)
        lay.addLayout(bottom)
        self._show_progress(False)
        self.network.hide()

        on_language_changed(self.retranslate)
        self.retranslate()
        self.refresh()
        self.check_network()

    # -- reading -------------------------------------------------------------------------------
    def refresh(self) -> None:
        """Read every role's status off the UI thread (the disk and installed packages)."""
        cfg: Config = copy.deepcopy(self.ctx.config)
        data_dir, manifest = self.ctx.data_dir, self.manifest

        def read(state: QtTaskState) -> tuple[list[RoleStatus], dict[str, ModelSpec]]:
            specs = {s.id: s for s in load_manifest(manifest)}
            return model_status(data_dir, cfg, manifest), specs

        self.ctx.runner.run(
            JobKind.MODELS,
            read,
            operation=Operation.READ_MODELS,
            on_success=self._statuses_read,
            on_failure=self._read_failed,
        )

    def check_network(self) -> None:
        endpoint = self.endpoint
        self.ctx.runner.run(
            JobKind.MODELS_NETWORK,
            lambda state: endpoint_reachable(endpoint),
            operation=Operation.CHECK_DOWNLOAD_SITE,
            on_success=self._network_checked,
        )

    def _statuses_read(self, result: tuple[list[RoleStatus], dict[str, ModelSpec]]) -> None:
        self.statuses, self.specs = result
        self._build()
        self.statuses_changed.emit()

    def _read_failed(self, failure: Failure) -> None:
        self.progress_label.setText(failure.text())

    def _network_checked(self, reachable: bool) -> None:
        self.online = bool(reachable)
        self._update_network()
        self._update_buttons()

    # -- showing -------------------------------------------------------------------------------
    def retranslate(self, *_: object) -> None:
        self.intro.setText(
            tr(
                "Models Knowledge Desk can use, by what they do. Downloaded models go to {path}; a model "
                "folder copied there by hand works too."
            ).format(path=self.dest)
        )
        self.cancel_button.setText(tr("Cancel"))
        self.open_folder.setText(tr("Open folder"))
        self._update_network()
        if self.statuses:
            self._build()
        if self._fetching and self.fetch_job is not None:
            self._progress(self.fetch_job.state.done, self.fetch_job.state.total, "")
        else:
            self.progress_label.setText(self._outcome)

    def offline_text(self) -> str:
        host = urlsplit(self.endpoint).hostname or self.endpoint
        return tr(
            "This computer cannot reach {host}, so models cannot be downloaded here. Copy a model folder "
            "into {path} (see installer/ in the source)."
        ).format(host=host, path=self.dest)

    def _update_network(self) -> None:
        self.network.setVisible(self.online is False)
        if self.online is False:
            self.network.setText(self.offline_text())

    def _build(self) -> None:
        """One box per role: what serves it now, then each of its models."""
        while self.roles_layout.count():
            item = self.roles_layout.takeAt(0)
            if item.widget() is not None:
                item.widget().hide()  # at once: deleteLater waits for the event loop
                item.widget().deleteLater()
        self.rows.clear()
        self.role_boxes.clear()
        self.active_labels.clear()
        self.server_labels.clear()
        self.budget_label = None
        for status in self.statuses:
            box = QGroupBox(tr(ROLE_TITLES.get(status.role, status.role)))
            grid = QGridLayout(box)
            active = QLabel()
            active.setWordWrap(True)
            if status.active:
                active.setText(tr("In use: {model}").format(model=active_name(status)))
            else:
                active.setText(tr("Nothing in use"))
                active.setObjectName("muted")
            active.setToolTip(render(status.reason, catalogue()))
            grid.addWidget(active, 0, 0, 1, 5)
            if status.server:  # served by another machine: which one, and does it answer
                text = (
                    tr("Server {url}: reachable") if status.reachable else tr("Server {url}: not reachable")
                )
                server = QLabel(
                    text.format(url=status.server), objectName="muted" if status.reachable else "warning"
                )
                server.setWordWrap(True)
                server.setTextInteractionFlags(Qt.TextSelectableByMouse)
                server.setToolTip(render(status.reason, catalogue()))
                grid.addWidget(server, 1, 0, 1, 5)
                self.server_labels[status.role] = server
            if status.budget:  # the reranker: what retrieval.rerank_budget_ms allows on this machine
                budget = QLabel(render(status.budget, catalogue()))
                budget.setWordWrap(True)
                budget.setObjectName("muted")
                grid.addWidget(budget, grid.rowCount(), 0, 1, 5)
                self.budget_label = budget
            for a in status.models:
                self._add_row(grid, status, a)
            self.roles_layout.addWidget(box)
            self.role_boxes[status.role] = box
            self.active_labels[status.role] = active
        self.roles_layout.addStretch(1)
        self._update_buttons()

    def _add_row(self, grid: QGridLayout, status: RoleStatus, a: Availability) -> None:
        spec = self.specs.get(a.id)
        state = model_state(status, a)
        row = grid.rowCount()
        name = QLabel(f"<b>{html.escape(a.display_name)}</b>")  # the registry's name, as everywhere
        name.setTextFormat(Qt.RichText)
        about = tr(spec.description) if spec is not None and spec.description else ""  # translated
        name.setToolTip(plain_tooltip("\n".join(filter(None, (about, tr("Technical id: {id}").format(id=a.id))))))
        state_label = QLabel(
            {"active": tr("Active"), "installed": tr("Installed"), "missing": tr("Missing")}[state]
        )
        state_label.setObjectName("muted" if state == "missing" else "")
        size = tr("{size} on disk") if a.installed else tr("{size} to download")
        if a.source == "pypi" and not a.installed:
            size = tr("{size} in its Python package")
        size_label = QLabel(size.format(size=human_size(a.size)))
        licence = QLabel(a.license.split(" (")[0])  # the SPDX name; the provenance note on hover
        licence.setToolTip(plain_tooltip(tr(a.license)))
        where = a.path or (str(self.dest / spec.folder) if spec is not None and spec.downloadable else "")
        path_label = plain_label(object_name="muted")  # wraps a long folder instead of widening the page
        if where:
            prefix = tr("In {path}") if a.path else tr("Goes to {path}")
            path_label.setText(prefix.format(path=where))
            path_label.setToolTip(where)
        fetch: QPushButton | None = None
        command: QLabel | None = None
        if not a.installed:
            if spec is not None and spec.downloadable and a.install_command == spec.install_command:
                fetch = QPushButton(tr("Fetch"))
                fetch.clicked.connect(lambda _=False, model_id=a.id: self.fetch(model_id))
            elif a.install_command:
                command = QLabel(f"<code>{html.escape(a.install_command)}</code>")
                command.setTextFormat(Qt.RichText)
                command.setTextInteractionFlags(Qt.TextSelectableByMouse)
                command.setToolTip(render(a.reason, catalogue()))
        grid.addWidget(name, row, 0)
        grid.addWidget(state_label, row, 1)
        grid.addWidget(size_label, row, 2)
        grid.addWidget(licence, row, 3)
        if fetch is not None:
            grid.addWidget(fetch, row, 4)
        if command is not None:
            grid.addWidget(command, row + 1, 4)
        grid.addWidget(path_label, row + 1, 0, 1, 4 if command is not None else 5)
        grid.setColumnStretch(0, 1)
        self.rows[a.id] = ModelRow(a.id, state, state_label, size_label, path_label, fetch, command)

    def _update_buttons(self) -> None:
        busy = bool(self._fetching)
        for row in self.rows.values():
            if row.fetch is None:
                continue
            row.fetch.setEnabled(self.online is True and not busy)
            if self.online is False:
                row.fetch.setToolTip(self.offline_text())
            elif self.online is None:
                row.fetch.setToolTip(tr("Checking whether the download site can be reached…"))
            else:
                row.fetch.setToolTip(
                    tr("Download it (the same as {command})").format(
                        command=self.specs[row.model_id].install_command
                    )
                )

    # -- fetching ------------------------------------------------------------------------------
    def fetch(self, model_id: str) -> Job:
        """Download one manifest model into the models folder; the page shows progress and Cancel."""
        spec, dest, endpoint = self.specs[model_id], self.dest, self.endpoint
        self._fetching, self._outcome = model_id, ""
        self.progress.setValue(0)
        self._show_progress(True)
        self._progress(0, spec.total_size, "")
        self._update_buttons()
        self.fetch_job = self.ctx.runner.run(
            JobKind.FETCH_MODEL,
            lambda state: fetch_model(spec, dest, endpoint=endpoint, task=state, show_progress=False),
            operation=Operation.DOWNLOAD_MODEL,
            on_progress=self._progress,
            on_success=lambda _result: self._fetch_done("installed"),
            on_failure=self._fetch_failed,
            on_cancelled=lambda: self._fetch_done("cancelled"),
        )
        return self.fetch_job

    def cancel_fetch(self) -> None:
        if self.fetch_job is not None and not self.fetch_job.done:
            self.fetch_job.cancel()

    def _progress(self, done: int, total: int, _message: str) -> None:
        if total > 0:
            self.progress.setValue(min(1000, done * 1000 // total))
        model = self.shown_name(self._fetching)
        if 0 < total <= done:  # all bytes in: checked, installed, a reranker's ONNX export made (~16 s)
            self.progress_label.setText(tr("Preparing {model} for use…").format(model=model))
            return
        self.progress_label.setText(
            tr("Downloading {model}: {done} of {total}").format(
                model=model, done=human_size(done), total=human_size(total)
            )
        )

    def _fetch_failed(self, failure: Failure) -> None:
        # Names the model, which "Could not download the model" would not.
        self._outcome = tr("The download of {model} failed: {error}").format(
            model=self.shown_name(self._fetching), error=failure.reason()
        )
        self._fetch_done("failed")

    def shown_name(self, model_id: str) -> str:
        """A manifest model's display name (its id when unknown)."""
        spec = self.specs.get(model_id)
        return spec.display_name if spec is not None else model_id

    def _fetch_done(self, outcome: str) -> None:
        model = self._fetching
        if outcome == "installed":
            self._outcome = self._installed_text(model)
        elif outcome == "cancelled":
            self._outcome = tr(
                "The download of {model} was stopped; Fetch again resumes it where it stopped."
            ).format(model=self.shown_name(model))
        self._fetching = ""
        self._show_progress(False)
        self._update_buttons()
        self.progress_label.setText(self._outcome)
        self.refresh()
        if outcome == "installed" and self.specs[model].role == "reranker":
            self._use_reranker(model)
        else:
            self.ctx.status_changed.emit()  # the status bar and the empty state read the models again
        self.fetch_finished.emit(outcome)

    def _use_reranker(self, model: str) -> None:
        """Load a reranker just installed, off the UI thread, and search with it from now on."""
        desk = self.ctx.desk

        def load(_state: QtTaskState) -> tuple[bool, dict]:
            return desk.reranker_installed(), role_statuses(desk)

        def loaded(result: tuple[bool, dict]) -> None:
            in_use, statuses = result
            self.ctx.status.update(statuses)
            if in_use:
                self._outcome = tr(
                    "{model} is installed and reranks the results from the next question."
                ).format(model=self.shown_name(model))
                self.progress_label.setText(self._outcome)
            self.ctx.status_changed.emit()

        self.ctx.runner.run(
            JobKind.USE_MODEL,
            load,
            operation=Operation.LOAD_RERANKER,
            on_success=loaded,
            on_failure=self._read_failed,
        )

    def _installed_text(self, model: str) -> str:
        """What to do with a model just installed: the running app loaded its models already."""
        role = self.specs[model].role
        if role == "chat":
            text = tr("{model} is installed: choose it on the Assistant tab.")
        elif role == "embedding":
            text = tr("{model} is installed: choose it as the embedding model on the Retrieval tab.")
        elif role == "reranker":
            text = tr("{model} is installed; loading it…")
        else:
            text = tr("{model} is installed; Knowledge Desk uses it from the next start.")
        return text.format(model=self.shown_name(model))

    def _show_progress(self, shown: bool) -> None:
        self.progress.setVisible(shown)
        self.cancel_button.setVisible(shown)

    # -- the folder ----------------------------------------------------------------------------
    def open_models_folder(self) -> None:
        self.dest.mkdir(parents=True, exist_ok=True)  # a fresh data folder has none yet
        QDesktopServices.openUrl(QUrl.fromLocalFile(str(self.dest)))

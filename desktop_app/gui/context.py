"""What every panel shares: the Desk (config, knowledge base, assistant, identifier), the runner.

The knowledge base and models load in the background (``start_loading``) so the window shows at
once; a piece that fails to load becomes a readable reason in the status bar, never a crash. After
an operation changes the knowledge base, ``knowledge_changed`` tells views to refresh themselves
(Anki's operation hook).
"""

from __future__ import annotations

import copy
import gc
import logging
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

from PySide6.QtCore import QObject, Signal

from desktop_app.core.ask.assistant import Assistant, Conversation
from desktop_app.core.config import Config, save_config
from desktop_app.core.desk import Desk
from desktop_app.core.events import Event
from desktop_app.core.library.knowledge import KnowledgeBase
from desktop_app.core.models.embeddings import Embedder
from desktop_app.gui.i18n import tr
from desktop_app.gui.operations import KB_LOCK, JobKind
from desktop_app.gui.tasks import QtTaskState, TaskRunner, readable_error

log = logging.getLogger(__name__)


@dataclass
class ComponentStatus:
    """One status-bar entry: the active model's name, or None and why it is missing."""

    role: str  # "embedder" | "reranker" | "llm" | "classifier"
    name: str | None
    reason: str = ""


def role_statuses(desk: Desk) -> dict[str, ComponentStatus]:
    """Reranker, chat model and classifier as the Desk resolves them (the same decision `kdesk
    models` prints and the assistant runs); the embedder's entry comes from loading it."""
    out: dict[str, ComponentStatus] = {}
    chat = desk.chat
    out["llm"] = ComponentStatus("llm", chat.name if chat.active else None, chat.reason)
    try:
        for row in desk.model_status():
            role = {"reranker": "reranker", "classifier": "classifier"}.get(row.role)
            if role:
                reason = row.reason + (f" ({row.install_command})" if row.install_command else "")
                out[role] = ComponentStatus(role, row.active, "" if row.active else reason)
    except Exception as exc:  # noqa: BLE001 - a broken manifest: the status bar says so
        for role in ("reranker", "classifier"):
            out[role] = ComponentStatus(role, None, readable_error(exc))
    return out


class AppContext(QObject):
    kb_ready = Signal()
    load_failed = Signal(str)
    status_changed = Signal()
    knowledge_changed = Signal(object)  # operations.KnowledgeChange: what an operation changed
    config_changed = Signal()

    def __init__(
        self,
        data_dir: Path,
        config: Config,
        *,
        embedder: Embedder | None = None,
        runner: TaskRunner | None = None,
        parent: QObject | None = None,
    ) -> None:
        super().__init__(parent)
        self.data_dir = Path(data_dir)
        self.desk = Desk(
            self.data_dir, config, embedder=embedder, own_process=config.index.chroma_own_process
        )
        self.runner = runner or TaskRunner(parent=self)
        self.ready = False  # the knowledge base is open and the models loaded
        self.load_error = ""
        self.status: dict[str, ComponentStatus] = {
            role: ComponentStatus(role, None, tr("loading…"))
            for role in ("embedder", "reranker", "llm", "classifier")
        }

    @property
    def config(self) -> Config:
        return self.desk.config

    @property
    def kb(self) -> KnowledgeBase | None:
        """The knowledge base once loaded, else None (views wait for ``kb_ready``)."""
        return self.desk.kb if self.ready else None

    @property
    def assistant(self) -> Assistant | None:
        return self.desk.assistant if self.ready else None

    # -- loading ---------------------------------------------------------------------------
    @property
    def knowledge_dir(self) -> Path:
        return self.desk.knowledge_dir

    def start_loading(self) -> None:
        """Open the knowledge base and load models on the pool; the UI stays responsive."""
        # Under KB_LOCK: a settings change made while loading is applied after the load.
        self.runner.run(
            JobKind.LOAD, self._load, on_success=self._loaded, on_failure=self._load_failed, lock=KB_LOCK
        )

    def close(self) -> None:
        """Stop background work, then close the Desk (flushes the index, stops Chroma's process).
        Views see no knowledge base from now on, so a late timer cannot reopen one."""
        self.runner.shutdown()
        self.ready = False
        self.desk.close()

    def _load(self, state: QtTaskState) -> dict[str, ComponentStatus]:
        # A garbage collection walks the tracked objects with the GIL held: with torch and
        # transformers loaded that is ~500k objects, 100-350 ms of frozen window per full pass.
        # So nothing is collected while the models load, and what they built (modules, weights:
        # they live as long as the app) is then frozen, i.e. moved where no collection looks.
        # Without the freeze, the first collection after gc.enable() scanned it all (~700 ms).
        gc.disable()
        try:
            return self._load_models(state)
        finally:
            gc.freeze()
            gc.enable()

    def _load_models(self, state: QtTaskState) -> dict[str, ComponentStatus]:
        state.progress(0, 3, tr("Opening the knowledge base"))
        kb = self.desk.kb
        status: dict[str, ComponentStatus] = {}
        state.progress(1, 3, tr("Loading the embedding model"))
        try:
            embedder = kb.embedder
            embedder.embed_queries(["warm up"])  # the weights load now, not on the first search
            status["embedder"] = ComponentStatus("embedder", str(embedder.name))
        except Exception as exc:  # noqa: BLE001 - shown in the status bar
            status["embedder"] = ComponentStatus("embedder", None, readable_error(exc))
        try:
            kb.store, kb.keyword, kb.dense  # noqa: B018 - open the indexes in the background too
        except Exception as exc:  # noqa: BLE001 - the first operation reports it again
            log.warning("index not opened at start: %s", exc)
        state.progress(2, 3, tr("Loading the assistant"))
        self.desk.assistant  # noqa: B018 - built here, off the UI thread
        status.update(role_statuses(self.desk))
        state.progress(3, 3, "")
        return status

    def _loaded(self, status: dict[str, ComponentStatus]) -> None:
        self.ready = True
        self.status.update(status)
        self.load_error = ""
        self.status_changed.emit()
        self.kb_ready.emit()

    def _load_failed(self, message: str) -> None:
        self.load_error = message
        for role in self.status:
            self.status[role] = ComponentStatus(role, None, message)
        self.status_changed.emit()
        self.load_failed.emit(message)

    # -- assistant calls -----------------------------------------------------------------------
    def call_ask(
        self, question: str, conversation: Conversation, mode: str, state: QtTaskState
    ) -> Iterator[Event]:
        """Assistant.ask on a pool thread (the conversation object keeps history and subject);
        the turn is saved to the conversation store once its answer is complete."""
        events = self.desk.assistant.ask(question, conversation=conversation, mode=mode, cancel=state)
        return self.desk.conversations.record(conversation, events, question=question)

    def new_conversation(self, scope: str) -> Conversation:
        """A fresh Conversation for a scope ("shared": the library everyone sees)."""
        return Conversation(scope=None if scope == "shared" else scope)

    def call_identify(self, image: Path, conversation: Conversation, state: QtTaskState) -> Iterator[Event]:
        """The identify flow's events, in the conversation (its scope; a named species becomes
        the subject of follow-up questions), saved like a question's."""
        events = self.desk.assistant.identify(image, conversation=conversation, cancel=state)
        return self.desk.conversations.record(conversation, events, image=Path(image).resolve())

    # -- settings ------------------------------------------------------------------------------
    def save_settings(self, config: Config, api_key: str | None = None) -> None:
        """Persist to <data-dir>/config.toml (the API key to the system keyring when there is one)
        in the background, and apply the settings to the running app: the Desk rebuilds what
        depends on what changed, between operations on the knowledge base (``KB_LOCK``)."""
        path = self.data_dir / "config.toml"
        to_disk = copy.deepcopy(config)

        def save(state: QtTaskState) -> str:
            if api_key is None:
                save_config(to_disk, path)
                return ""
            to_disk.llm.api_key = ""
            save_config(to_disk, path)
            from desktop_app.core.secrets import set_api_key

            return set_api_key(path, "llm.api_key", api_key)

        self.runner.run(JobKind.SAVE_SETTINGS, save, on_failure=self.load_failed.emit, exclusive=False)

        def apply(state: QtTaskState) -> dict[str, ComponentStatus]:
            self.desk.apply_config(config)
            return self._load_models(state)  # what changed loads now; the rest is already warm

        def applied(status: dict[str, ComponentStatus]) -> None:
            self._loaded(status)
            self.config_changed.emit()  # views read ctx.config: the new settings from here on

        self.runner.run(
            JobKind.APPLY_SETTINGS, apply, on_success=applied, on_failure=self._load_failed, lock=KB_LOCK
        )

"""What every panel shares: the Desk (config, knowledge base, assistant, identifier), the runner.

The knowledge base and models load in the background (``start_loading``) so the window shows at
once, saying which step runs (``loading_step``); a piece that fails to load becomes a readable
reason in the status bar, never a crash. After an operation changes the knowledge base,
``knowledge_changed`` tells views to refresh themselves (Anki's operation hook).
"""

from __future__ import annotations

import copy
import gc
import logging
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from pathlib import Path

from PySide6.QtCore import QObject, Signal

from desktop_app.core.ask.assistant import Assistant, Conversation
from desktop_app.core.config import Config, save_config
from desktop_app.core.desk import Desk
from desktop_app.core.events import Event
from desktop_app.core.library.knowledge import KnowledgeBase
from desktop_app.core.messages import N_, Message, Text, message, message_of
from desktop_app.core.models import reasons as model_reasons
from desktop_app.core.models.embeddings import Embedder
from desktop_app.core.models.registry import display_name
from desktop_app.gui.i18n import tr, tr_core
from desktop_app.gui.operations import KB_LOCK, JobKind, Operation
from desktop_app.gui.tasks import Failure, Job, QtTaskState, TaskRunner, english, readable_error

log = logging.getLogger(__name__)

# The loading steps, in English: a step is shown as tr(step) on the UI thread, so a language switch
# while loading renders it again (test_i18n does not see these as tr() literals: the loading test
# checks their translations).
OPENING = N_("Opening the knowledge base")
LOADING_EMBEDDER = N_("Loading the embedding model")
LOADING_ASSISTANT = N_("Loading the assistant")
LOAD_STEPS = (OPENING, LOADING_EMBEDDER, LOADING_ASSISTANT)
LOADING_CHAT_MODEL = N_("Loading the chat model")  # the chat's model switcher


# The status-bar entry of a model that failed at search time (core/models/failures.py), by message.
FAILED_ROLES = {model_reasons.RERANKER_FAILED: "reranker", model_reasons.EMBEDDER_FAILED: "embedder"}


@dataclass
class ComponentStatus:
    """One status-bar entry: the active model's name, or None and why it is missing."""

    role: str  # "embedder" | "reranker" | "llm" | "classifier"
    name: Text | None  # the model's display name (the registry's)
    reason: Text = ""
    model_id: str = ""  # the technical id behind the name, where it differs (a tooltip shows it)


def model_tooltip(status: ComponentStatus) -> str:
    """A model's name, and the technical id behind it where that differs (config, `kdesk models`)."""
    name = tr_core(status.name)
    if not status.model_id:
        return name
    return name + "\n" + tr("Technical id: {id}").format(id=status.model_id)


def _other_id(model_id: object, shown: object) -> str:
    """The technical id when it is not the name shown (a tooltip says it); "" otherwise."""
    return model_id if isinstance(model_id, str) and model_id != shown else ""


def role_statuses(desk: Desk) -> dict[str, ComponentStatus]:
    """Reranker, chat model and classifier as the Desk resolves them (the same decision `kdesk
    models` prints and the assistant runs); the embedder's entry comes from loading it."""
    out: dict[str, ComponentStatus] = {}
    chat = desk.chat
    shown = display_name(chat.name) if chat.active and isinstance(chat.name, str) else chat.name
    out["llm"] = ComponentStatus("llm", shown if chat.active else None, chat.reason, _other_id(chat.name, shown))
    try:
        for row in desk.model_status():
            role = {"reranker": "reranker", "classifier": "classifier"}.get(row.role)
            if role:
                # The command on a line of its own: the reason above it is shown translated.
                reason = row.reason
                if row.install_command:
                    reason = message(
                        model_reasons.REASON_THEN_COMMAND, reason=reason, command=row.install_command
                    )
                other = row.active_id if row.active and row.active_id != row.active else ""
                out[role] = ComponentStatus(role, row.active, "" if row.active else reason, other or "")
    except Exception as exc:  # noqa: BLE001 - a broken manifest: the status bar says so
        for role in ("reranker", "classifier"):
            out[role] = ComponentStatus(role, None, readable_error(exc))
    return out


class AppContext(QObject):
    kb_ready = Signal()
    load_failed = Signal(object)  # a Failure: the knowledge base did not open, or settings not applied
    settings_failed = Signal(object)  # a Failure: the settings could not be saved (nothing applied)
    status_changed = Signal()
    # ``loading_step`` changed. Also emitted on the loading thread: connect methods of widgets (the
    # call is queued to their thread), not lambdas.
    loading_changed = Signal()
    knowledge_changed = Signal(object)  # operations.KnowledgeChange: what an operation changed
    config_changed = Signal()
    # A model failed during a search on a pool thread (search went on without it): the status bar
    # says so. Emitted on that thread; the slot runs queued on the UI thread.
    model_failed = Signal()
    # A core notice (a Message) the user must see, such as a damaged store set aside and rebuilt.
    # Emitted on whichever thread found it; the window's slot runs queued on the UI thread.
    notice = Signal(object)

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
        self.notices: list[Message] = []  # every notice so far: a window made later shows them too
        self.desk = Desk(
            self.data_dir,
            config,
            embedder=embedder,
            own_process=config.index.chroma_own_process,
            on_notice=self._note,
        )
        self.runner = runner or TaskRunner(parent=self)
        self.ready = False  # the knowledge base is open and the models loaded
        self.load_error: Failure | None = None  # why the last load failed, None once loaded
        # The step under way while models load (at start or after a settings change), "" when idle.
        # Written by the loading thread; read on the UI thread after ``loading_changed``.
        self.loading_step = ""
        self.status: dict[str, ComponentStatus] = {
            role: ComponentStatus(role, None, tr("loading…"))
            for role in ("embedder", "reranker", "llm", "classifier")
        }
        self.model_failed.connect(self._note_model_failures)

    def _note(self, notice: Message) -> None:
        self.notices.append(notice)
        self.notice.emit(notice)

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

    @property
    def loading(self) -> bool:
        """Models are loading: at start (``ready`` is False then) or after a settings change."""
        return bool(self.loading_step)

    def start_loading(self) -> None:
        """Open the knowledge base and load models on the pool; the UI stays responsive."""
        self._step(OPENING)  # said from the first paint, before the pool thread starts
        # Under KB_LOCK: a settings change made while loading is applied after the load.
        self.runner.run(
            JobKind.LOAD,
            self._load,
            operation=Operation.OPEN_KNOWLEDGE_BASE,
            on_success=self._loaded,
            on_failure=self._load_failed,
            on_finished=self._loading_done,
            lock=KB_LOCK,
        )

    def _step(self, step: str) -> None:
        """Say which loading step runs. A signal of its own, not ``state.progress``: that one is
        throttled, and a quick step would hide the slow one after it (the embedding model)."""
        self.loading_step = step
        self.loading_changed.emit()

    def _loading_done(self) -> None:
        """A load ended (loaded, failed or cancelled): idle unless another one still runs."""
        if not any(self.runner.is_working(kind) for kind in (JobKind.LOAD, JobKind.APPLY_SETTINGS)):
            self._step("")

    def close(self) -> None:
        """Stop background work, then close the Desk (flushes the index, stops Chroma's process).
        Views see no knowledge base from now on, so a late timer cannot reopen one."""
        self.runner.shutdown()
        self.ready = False
        self.desk.close()

    def _load(self, _state: QtTaskState) -> dict[str, ComponentStatus]:
        # A garbage collection walks the tracked objects with the GIL held: with torch and
        # transformers loaded that is ~500k objects, 100-350 ms of frozen window per full pass.
        # So nothing is collected while the models load, and what they built (modules, weights:
        # they live as long as the app) is then frozen, i.e. moved where no collection looks.
        # Without the freeze, the first collection after gc.enable() scanned it all (~700 ms).
        gc.disable()
        try:
            return self._load_models()
        finally:
            gc.freeze()
            gc.enable()

    def _load_models(self) -> dict[str, ComponentStatus]:
        self._step(OPENING)
        kb = self.desk.kb
        status: dict[str, ComponentStatus] = {}
        self._step(LOADING_EMBEDDER)
        try:
            embedder = kb.embedder
            embedder.embed_queries(["warm up"])  # the weights load now, not on the first search
            shown = display_name(str(embedder.name))  # "minilm-int8" is all-MiniLM-L6-v2, as in Settings
            status["embedder"] = ComponentStatus("embedder", shown, "", _other_id(str(embedder.name), shown))
        except Exception as exc:  # noqa: BLE001 - shown in the status bar
            status["embedder"] = ComponentStatus("embedder", None, readable_error(exc))
        try:
            kb.store, kb.keyword, kb.dense  # noqa: B018 - open the indexes in the background too
        except Exception as exc:  # noqa: BLE001 - the first operation reports it again
            log.warning("index not opened at start: %s", exc)
        self._step(LOADING_ASSISTANT)
        self.desk.assistant  # noqa: B018 - built here, off the UI thread
        status.update(role_statuses(self.desk))
        return status

    def _loaded(self, status: dict[str, ComponentStatus]) -> None:
        self._loading_done()  # before kb_ready: views see a finished load
        self.ready = True
        self.status.update(status)
        self.load_error = None
        self.status_changed.emit()
        self.kb_ready.emit()

    def _load_failed(self, failure: Failure) -> None:
        self._loading_done()
        self.load_error = failure
        found = message_of(failure.error)  # a message stays one: tr_core renders it when shown
        reason = found if isinstance(found, Message) else failure.reason(english)
        for role in self.status:
            self.status[role] = ComponentStatus(role, None, reason)
        self.status_changed.emit()
        self.load_failed.emit(failure)

    # -- assistant calls -----------------------------------------------------------------------
    def call_ask(
        self, question: str, conversation: Conversation, mode: str, state: QtTaskState
    ) -> Iterator[Event]:
        """Assistant.ask on a pool thread (the conversation object keeps history and subject);
        the turn is saved to the conversation store once its answer is complete."""
        events = self.desk.assistant.ask(question, conversation=conversation, mode=mode, cancel=state)
        return self._watch_models(self.desk.conversations.record(conversation, events, question=question))

    def _watch_models(self, events: Iterator[Event]) -> Iterator[Event]:
        """The events as they come; a model that failed meanwhile is told to the status bar."""
        kb = self.desk.kb
        seen = len(kb.failed_models)
        for event in events:
            if len(kb.failed_models) > seen:
                seen = len(kb.failed_models)
                self.model_failed.emit()
            yield event
        if len(kb.failed_models) > seen:
            self.model_failed.emit()

    def _note_model_failures(self) -> None:
        """The failed models' entries in the status bar: none, and which model failed and why."""
        kb = self.desk.kb if self.ready else None
        for why in kb.model_failures() if kb is not None else []:
            role = FAILED_ROLES.get(getattr(why, "code", ""))
            if role:
                self.status[role] = ComponentStatus(role, None, why)
        self.status_changed.emit()

    def new_conversation(self, scope: str) -> Conversation:
        """A fresh Conversation for a scope ("shared": the library everyone sees)."""
        return Conversation(scope=None if scope == "shared" else scope)

    def call_identify(self, image: Path, conversation: Conversation, state: QtTaskState) -> Iterator[Event]:
        """The identify flow's events, in the conversation (its scope; a named species becomes
        the subject of follow-up questions), saved like a question's."""
        events = self.desk.assistant.identify(image, conversation=conversation, cancel=state)
        return self._watch_models(
            self.desk.conversations.record(conversation, events, image=Path(image).resolve())
        )

    # -- settings ------------------------------------------------------------------------------
    def save_settings(
        self,
        config: Config,
        api_key: str | None = None,
        *,
        on_saved: Callable[[], None] | None = None,
        on_failure: Callable[[Failure], None] | None = None,
    ) -> Job:
        """Persist to <data-dir>/config.toml (the API key to the system keyring when there is one)
        in the background; once saved, apply the settings to the running app: the Desk rebuilds
        what depends on what changed, between operations on the knowledge base (``KB_LOCK``).
        Settings that could not be saved are not applied: ``settings_failed`` and ``on_failure``
        get the Failure, and the Settings dialog stays open with the user's values."""
        path = self.data_dir / "config.toml"
        to_disk = copy.deepcopy(config)

        def save(state: QtTaskState) -> str:
            # Another embedding model: the one in use stays until the new index is filled (switching.py).
            held = self.desk.hold_embedder(to_disk)
            to_disk.embedding = held.embedding
            config.embedding = copy.deepcopy(held.embedding)
            if api_key is None:
                save_config(to_disk, path)
                return ""
            to_disk.llm.api_key = ""
            save_config(to_disk, path)
            from desktop_app.core.secrets import set_api_key

            return set_api_key(path, "llm.api_key", api_key)

        def saved(_note: str) -> None:
            self._apply_settings(config)
            if on_saved is not None:
                on_saved()

        def failed(failure: Failure) -> None:
            self.settings_failed.emit(failure)
            if on_failure is not None:
                on_failure(failure)

        return self.runner.run(
            JobKind.SAVE_SETTINGS,
            save,
            operation=Operation.SAVE_SETTINGS,
            on_success=saved,
            on_failure=failed,
            exclusive=False,
        )

    def switch_chat_model(
        self, config: Config, *, on_loaded: Callable[[], None], on_failure: Callable[[Failure], None]
    ) -> Job:
        """The chat's model switcher: save ``config`` (another ``[llm]``), apply it and load that
        model now, off the UI thread and between operations on the knowledge base; the status
        bar says the step and, after, which model answers."""
        path = self.data_dir / "config.toml"
        to_disk = copy.deepcopy(config)

        def work(_state: QtTaskState) -> dict[str, ComponentStatus]:
            self._step(LOADING_CHAT_MODEL)
            save_config(to_disk, path)
            self.desk.apply_config(config)
            self.desk.load_chat_model()
            return role_statuses(self.desk)

        def loaded(status: dict[str, ComponentStatus]) -> None:
            self.status.update(status)
            self.status_changed.emit()
            self.config_changed.emit()
            on_loaded()

        def failed(failure: Failure) -> None:
            self.status["llm"] = ComponentStatus("llm", None, failure.reason())
            self.status_changed.emit()
            on_failure(failure)

        return self.runner.run(
            JobKind.CHAT_MODEL,
            work,
            operation=Operation.SWITCH_CHAT_MODEL,
            on_success=loaded,
            on_failure=failed,
            on_finished=self._loading_done,
            lock=KB_LOCK,
        )

    def _apply_settings(self, config: Config) -> None:
        """Apply saved settings in the background (see ``save_settings``)."""

        def apply(_state: QtTaskState) -> dict[str, ComponentStatus]:
            self.desk.apply_config(config)
            return self._load_models()  # what changed loads now; the rest is already warm

        def applied(status: dict[str, ComponentStatus]) -> None:
            self._loaded(status)
            self.config_changed.emit()  # views read ctx.config: the new settings from here on

        self.runner.run(
            JobKind.APPLY_SETTINGS,
            apply,
            operation=Operation.APPLY_SETTINGS,
            on_success=applied,
            on_failure=self._load_failed,
            on_finished=self._loading_done,
            lock=KB_LOCK,
        )

    def apply_settings(self, config: Config) -> None:
        """Apply settings already saved (a model switch's takeover wrote config.toml itself)."""
        self._apply_settings(config)

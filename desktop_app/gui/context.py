"""What every panel shares: data folder, config, the knowledge base, the assistant, the runner.

The knowledge base and models load in the background (``start_loading``) so the window shows at
once. Core modules are imported lazily: a piece that is missing or fails to load becomes a readable
reason in the status bar, never a crash. After an operation changes the knowledge base,
``knowledge_changed`` tells views to refresh themselves (Anki's operation hook).
"""

from __future__ import annotations

import copy
import gc
import inspect
import logging
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from PySide6.QtCore import QObject, Signal

from desktop_app.core.config import Config, save_config
from desktop_app.gui.i18n import tr
from desktop_app.gui.tasks import QtTaskState, TaskRunner, readable_error

log = logging.getLogger(__name__)

KB_LOCK = "kb-write"  # add / sync / reindex / remove run one at a time


def _remember_subject(events, conversation: Any):
    """Pass events through; the identified name becomes the subject of follow-up questions."""
    from desktop_app.core.events import Classified, Decision

    for event in events:
        if conversation is not None:
            if isinstance(event, Decision) and event.decision.get("final_name"):
                conversation.last_subject = str(event.decision["final_name"])
            elif isinstance(event, Classified) and event.candidates and not event.low_confidence:
                conversation.last_subject = str(event.candidates[0].get("name", "")) or None
        yield event


@dataclass
class ComponentStatus:
    """One status-bar entry: the active model's name, or None and why it is missing."""

    role: str  # "embedder" | "reranker" | "llm" | "classifier"
    name: str | None
    reason: str = ""


class AppContext(QObject):
    kb_ready = Signal()
    load_failed = Signal(str)
    status_changed = Signal()
    knowledge_changed = Signal()  # documents added, removed or re-indexed
    config_changed = Signal()

    def __init__(
        self,
        data_dir: Path,
        config: Config,
        *,
        embedder: Any = None,
        runner: TaskRunner | None = None,
        parent: QObject | None = None,
    ) -> None:
        super().__init__(parent)
        self.data_dir = Path(data_dir)
        self.config = config
        self.runner = runner or TaskRunner(parent=self)
        self._embedder = embedder
        self.kb: Any = None
        self.assistant: Any = None
        self.load_error = ""
        self._identifier: Any = None  # the vision flow, built on first use (loads the classifier)
        self.status: dict[str, ComponentStatus] = {
            role: ComponentStatus(role, None, tr("loading…"))
            for role in ("embedder", "reranker", "llm", "classifier")
        }

    # -- loading ---------------------------------------------------------------------------
    @property
    def knowledge_dir(self) -> Path:
        return self.kb.knowledge_dir if self.kb is not None else self.data_dir / "knowledge"

    def start_loading(self) -> None:
        """Open the knowledge base and load models on the pool; the UI stays responsive."""
        self.runner.run("load", self._load, on_success=self._loaded, on_failure=self._load_failed)

    def close(self) -> None:
        """Stop background work, then close the knowledge base (flushes it, stops Chroma's process)."""
        self.runner.shutdown()
        if self.kb is not None:
            self.kb.close()

    def _load(self, state: QtTaskState) -> dict[str, Any]:
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

    def _load_models(self, state: QtTaskState) -> dict[str, Any]:
        state.progress(0, 3, tr("Opening the knowledge base"))
        try:
            from desktop_app.core.library.knowledge import KnowledgeBase
        except ImportError as exc:
            raise RuntimeError(f"knowledge base module unavailable: {exc}") from exc
        kb = KnowledgeBase(
            self.data_dir,
            self.config,
            embedder=self._embedder,
            own_process=self.config.index.chroma_own_process,
        )
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
        assistant, llm_status = self._make_assistant(kb)
        status["llm"] = llm_status
        status.update(self._model_report(kb))
        state.progress(3, 3, "")
        return {"kb": kb, "assistant": assistant, "status": status}

    def _make_assistant(self, kb: Any) -> tuple[Any, ComponentStatus]:
        llm = self.config.llm
        chat_model = None
        if llm.backend == "none":
            llm_status = ComponentStatus("llm", None, tr("none configured: extractive answers"))
        else:
            try:
                from desktop_app.core.models.llm.factory import make_chat_model

                chat_model = make_chat_model(self.config, self.data_dir)
                label = llm.model or Path(llm.gguf).name or llm.backend
                llm_status = ComponentStatus("llm", f"{llm.backend}: {label}")
            except Exception as exc:  # noqa: BLE001 - shown in the status bar
                llm_status = ComponentStatus("llm", None, readable_error(exc))
        try:
            from desktop_app.core.ask.assistant import Assistant
        except ImportError as exc:
            log.info("assistant unavailable: %s", exc)
            return None, llm_status
        try:
            return Assistant(kb, chat_model, self.config), llm_status
        except Exception as exc:  # noqa: BLE001
            return None, ComponentStatus("llm", None, readable_error(exc))

    def _model_report(self, kb: Any) -> dict[str, ComponentStatus]:
        """Reranker and classifier state (and why one is missing) from the core's model report."""
        out: dict[str, ComponentStatus] = {}
        try:
            from desktop_app.core.models.registry import model_status

            roles = {"reranker": "reranker", "classifier": "classifier"}
            for row in model_status(self.data_dir, self.config):
                role = roles.get(row.role)
                if role:
                    reason = row.reason + (f" ({row.install_command})" if row.install_command else "")
                    out[role] = ComponentStatus(role, row.active, "" if row.active else reason)
        except Exception as exc:  # noqa: BLE001 - the status bar says so instead
            for role in ("reranker", "classifier"):
                out[role] = ComponentStatus(role, None, readable_error(exc))
        return out

    def _loaded(self, result: dict[str, Any]) -> None:
        self.kb = result["kb"]
        self.assistant = result["assistant"]
        self.status.update(result["status"])
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
    def call_ask(self, question: str, conversation: Any, mode: str, state):
        """Assistant.ask on a pool thread (the conversation object keeps history and subject)."""
        return self.assistant.ask(question, conversation=conversation, mode=mode, cancel=state)

    def new_conversation(self, scope: str) -> Any:
        """A fresh Conversation for a collection (None: the shared one)."""
        return self.assistant.new_conversation(None if scope == "shared" else scope)

    def can_identify(self) -> bool:
        if self.kb is None:
            return False
        if self.assistant is not None and hasattr(self.assistant, "identify"):
            return True
        try:
            from desktop_app.core.identify.flow import Identifier  # noqa: F401
        except ImportError:
            return False
        return True

    def call_identify(self, image: Path, conversation: Any, scope: str, state):
        """The identify flow's events: Assistant.identify when it exists, else the vision Identifier."""
        scope_arg = None if scope == "shared" else scope
        if self.assistant is not None and hasattr(self.assistant, "identify"):
            offered: dict[str, Any] = {"conversation": conversation, "cancel": state, "scope": scope_arg}
            try:
                params = inspect.signature(self.assistant.identify).parameters
                kwargs = {k: v for k, v in offered.items() if k in params}
            except (TypeError, ValueError):
                kwargs = {}
            return self.assistant.identify(image, **kwargs)
        from desktop_app.core.identify.flow import Identifier

        if self._identifier is None:
            self._identifier = Identifier(self.kb, getattr(self.assistant, "chat_model", None), self.config)
        events = self._identifier.run(image, scope=scope_arg, cancel=state)
        return _remember_subject(events, conversation)

    # -- settings ------------------------------------------------------------------------------
    def save_settings(self, config: Config, api_key: str | None = None) -> None:
        """Persist to <data-dir>/config.toml (the API key to the system keyring when there is one)
        in the background, and rebuild what depends on the settings."""
        self.config = config
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

        self.runner.run("save-settings", save, on_failure=self.load_failed.emit, exclusive=False)
        if self.kb is not None and hasattr(self.kb, "config"):
            self.kb.config = config
        self.config_changed.emit()
        if self.kb is not None:
            # The LLM backend may have changed: rebuild the assistant in the background.
            kb = self.kb
            self.runner.run(
                "assistant",
                lambda state: self._make_assistant(kb),
                on_success=self._assistant_rebuilt,
            )

    def _assistant_rebuilt(self, result: tuple[Any, ComponentStatus]) -> None:
        self.assistant, self.status["llm"] = result
        self.status_changed.emit()

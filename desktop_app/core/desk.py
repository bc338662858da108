"""The Desk: the one owner of a library's config and of every service built from it.

The CLI, the desktop app (``gui/context.py``) and the benchmarks get the knowledge base, the chat
model, the assistant and the photo identifier from a Desk and from nowhere else. Each is built on
first use; ``apply_config`` rebuilds exactly what depends on the sections that changed; ``close``
stops the Chroma child process and any local language model server.
"""

from __future__ import annotations

import copy
import logging
import threading
from collections.abc import Callable
from pathlib import Path
from typing import TYPE_CHECKING, TypeVar

from desktop_app.core import config as config_texts
from desktop_app.core import formats, packages, system_libs, tasks
from desktop_app.core.ask import notes as ask_notes
from desktop_app.core.config import Config, load_config
from desktop_app.core.identify import texts as identify_texts
from desktop_app.core.library import reasons as library_reasons
from desktop_app.core.messages import Message
from desktop_app.core.models import reasons as model_reasons
from desktop_app.core.models.llm.factory import ChatModelChoice, resolve_chat_model

if TYPE_CHECKING:
    from desktop_app.core.ask.assistant import Assistant
    from desktop_app.core.ask.conversation_store import ConversationStore
    from desktop_app.core.identify.flow import Identifier
    from desktop_app.core.library import switching
    from desktop_app.core.library.knowledge import KnowledgeBase
    from desktop_app.core.library.sync import DocumentHandler
    from desktop_app.core.models.embeddings import Embedder
    from desktop_app.core.models.llm.base import ChatModel
    from desktop_app.core.models.status import RoleStatus

log = logging.getLogger(__name__)

# Every module that defines messages (messages.define), imported by the one place that wires the
# layers: a text stored by another process (a manifest's reason) then parses back to its message.
MESSAGE_MODULES = (
    config_texts,
    formats,
    packages,
    system_libs,
    tasks,
    library_reasons,
    identify_texts,
    ask_notes,
    model_reasons,
)

T = TypeVar("T")

# Settings sections whose change needs another knowledge base: another collection or server.
_LIBRARY_FIELDS = {
    "embedding": None,  # every field
    "index": {"chroma_url", "chroma_token", "chroma_token_header", "chroma_ca_file", "chroma_own_process"},
}


def changed_sections(old: Config, new: Config) -> set[str]:
    """Names of the config sections that differ ("llm", "retrieval", ...)."""
    return {name for name in vars(new) if getattr(old, name) != getattr(new, name)}


def _needs_new_library(old: Config, new: Config) -> bool:
    for section, fields in _LIBRARY_FIELDS.items():
        a, b = getattr(old, section), getattr(new, section)
        if fields is None and a != b:
            return True
        if fields is not None and any(getattr(a, f) != getattr(b, f) for f in fields):
            return True
    return False


def _photo_handler(kb: KnowledgeBase) -> DocumentHandler:
    """The library's photos go to identification's gallery (the library never imports identify);
    imported with the first photo, like every service here on first use."""
    from desktop_app.core.identify.gallery import photo_handler

    return photo_handler(kb)


class Desk:
    """Builds the services of one data folder on first use and keeps them coherent with its config.

    ``embedder`` replaces the configured embedding model (tests and benchmarks hand in one they
    already loaded); ``own_process`` runs Chroma in a child process (the desktop app does, so the
    window never waits on its locks).
    """

    def __init__(
        self,
        data_dir: Path | str,
        config: Config | None = None,
        *,
        embedder: Embedder | None = None,
        own_process: bool = False,
        on_wait: Callable[[str], None] | None = None,
        on_notice: Callable[[Message], None] | None = None,
    ) -> None:
        self.data_dir = Path(data_dir).expanduser()
        self._config = config if config is not None else load_config(self.data_dir / "config.toml")
        self._embedder = embedder
        self._own_process = own_process
        self._on_wait = on_wait  # told when another process holds the data folder's writer lock
        # Told what the user must know that is no error: a damaged store set aside and rebuilt
        # (called on whichever thread found it).
        self._on_notice = on_notice
        # Builds are serialised (the GUI's worker threads build too); reading a built service takes
        # no lock, so the UI thread never waits while, say, the image classifier loads.
        self._lock = threading.RLock()
        self._kb: KnowledgeBase | None = None
        self._chat: ChatModelChoice | None = None
        self._assistant: Assistant | None = None
        self._identifier: Identifier | None = None
        self._conversations: ConversationStore | None = None
        self._opened: list[str] = []  # documents opened in the viewer, most recent first (note_opened)
        self.check_formats()

    def check_formats(self) -> None:
        """Refuse a data folder that a newer Knowledge Desk migrated (core/formats.py) before any
        service opens a store: FormatTooNew says which version it needs, and nothing is written."""
        from desktop_app.core.ask import conversation_store
        from desktop_app.core.library import manifest

        conversation_store.check_format(self.data_dir / conversation_store.FILE_NAME)
        for path in sorted((self.data_dir / "index").glob("*/manifest.sqlite3")):
            manifest.check_format(path)

    # ------------------------------------------------------------------ what it owns
    @property
    def config(self) -> Config:
        """The settings every service was built from (replace them with ``apply_config``)."""
        return self._config

    def _built(self, attr: str, build: Callable[[], T]) -> T:
        """The service in ``attr``, built once by ``build`` under the lock (a read takes none)."""
        service = getattr(self, attr)
        if service is not None:
            return service
        with self._lock:
            service = getattr(self, attr)
            if service is None:
                service = build()
                setattr(self, attr, service)
            return service

    @property
    def kb(self) -> KnowledgeBase:
        def build() -> KnowledgeBase:
            from desktop_app.core.library.knowledge import KnowledgeBase

            kb = KnowledgeBase(
                self.data_dir,
                self._config,
                embedder=self._embedder,
                own_process=self._own_process,
                photo_handler=_photo_handler,
            )
            if self._on_wait is not None:
                kb.on_wait = self._on_wait
            if self._on_notice is not None:  # a damaged file of its index set aside and rebuilt
                kb.on_notice = self._on_notice
            return kb

        return self._built("_kb", build)

    @property
    def knowledge_dir(self) -> Path:
        """The user's documents (the knowledge base is not opened to answer this)."""
        return self._kb.knowledge_dir if self._kb is not None else self.data_dir / "knowledge"

    @property
    def chat(self) -> ChatModelChoice:
        """Which chat model is active and why: the one decision `kdesk models` and the status bar
        report and the assistant runs (``models/llm/factory.py``)."""
        return self._built("_chat", lambda: resolve_chat_model(self._config, self.data_dir))

    @property
    def chat_model(self) -> ChatModel | None:
        return self.chat.model

    def load_chat_model(self) -> ChatModelChoice:
        """Build the active chat model now, starting a local GGUF's server (call off the UI
        thread): a model just switched to is ready when the next question comes."""
        chat = self.chat
        start = getattr(chat.model, "start", None)
        if start is not None:
            start()
        return chat

    @property
    def assistant(self) -> Assistant:
        def build() -> Assistant:
            from desktop_app.core.ask.assistant import Assistant

            return Assistant(self.kb, self.chat_model, self._config, identifier=lambda: self.identifier)

        return self._built("_assistant", build)

    @property
    def identifier(self) -> Identifier:
        """The photo flow (loads the image classifier on first use)."""

        def build() -> Identifier:
            from desktop_app.core.identify.flow import Identifier

            return Identifier(self.kb, self.chat_model, self._config)

        return self._built("_identifier", build)

    @property
    def conversations(self) -> ConversationStore:
        """The saved conversations (``<data-dir>/conversations.sqlite3``); no setting changes it."""

        def build() -> ConversationStore:
            from desktop_app.core.ask.conversation_store import FILE_NAME, ConversationStore

            return ConversationStore(
                self.data_dir / FILE_NAME, self.data_dir / "knowledge", on_repaired=self._on_notice
            )

        return self._built("_conversations", build)

    def model_status(self) -> list[RoleStatus]:
        """Each role's active model, or why there is none, and what would install one."""
        from desktop_app.core.models.status import model_status

        return model_status(self.data_dir, self._config)

    # ------------------------------------------------------------------ changes
    def apply_config(self, new: Config) -> set[str]:
        """Use ``new`` from now on, rebuilding only what depends on what changed; returns the
        names of the changed sections. Another embedding model or Chroma server means another
        knowledge base (closed and reopened on next use); retrieval settings apply to the next
        search; a changed language model is stopped and the next question uses the new one."""
        new = copy.deepcopy(new)
        stale_kb: KnowledgeBase | None = None
        stale_chat: ChatModelChoice | None = None
        with self._lock:
            old, self._config = self._config, new
            changed = changed_sections(old, new)
            if not changed:
                return changed
            if self._kb is not None:
                if _needs_new_library(old, new):
                    stale_kb, self._kb = self._kb, None
                else:
                    self._kb.apply_config(new)
            if "llm" in changed:
                stale_chat, self._chat = self._chat, None
            if changed - {"ui"}:
                # Cheap to rebuild: they only hold settings and references to the parts above.
                self._assistant = None
                self._identifier = None
        # Closed outside the lock: stopping a Chroma process or a model server takes seconds.
        _close_chat(stale_chat)
        if stale_kb is not None:
            stale_kb.close()
        log.info("settings changed: %s", ", ".join(sorted(changed)))
        return changed

    # -- switching the embedding model: the new index fills while the one in use answers
    def choose_embedder(self, model: str, url: str = "") -> bool:
        """Switch to another embedding model (library/switching.py): recorded, and filled by
        ``fill_switch`` while the model in use goes on answering; config.toml changes only once the
        new index is complete. False: it is the model in use (a pending switch is withdrawn)."""
        from desktop_app.core.library import switching

        return switching.start(self.kb, model, url) is not None

    def switch_progress(self) -> switching.FillProgress | None:
        """How far a pending switch is (None: none), without loading a model."""
        from desktop_app.core.library import switching

        return switching.progress(self.kb)

    def pause_switch(self, paused: bool = True) -> None:
        """Pause the pending switch (a running fill stops after its batch), or release it."""
        from desktop_app.core.library import switching

        switching.set_paused(self.kb, paused)

    def note_opened(self, source: str) -> None:
        """The user opened this document (the viewer): a switch embeds it early."""
        with self._lock:
            self._opened = [source, *(s for s in self._opened if s != source)][:200]

    def recent_documents(self) -> list[str]:
        """Documents the user opened or saw cited lately, most recent first."""
        try:
            cited = self.conversations.recent_sources()
        except Exception as exc:  # noqa: BLE001 - a hint only: never stops the fill
            log.debug("no recent citations: %s", exc)
            cited = []
        return list(dict.fromkeys([*self._opened, *cited]))

    def hold_embedder(self, new: Config) -> Config:
        """Settings about to be saved: when they name another embedding model and the library has
        documents, that model is recorded as a switch (``fill_switch`` fills it) and the settings
        returned keep the model in use, which answers until the new index is complete."""
        from desktop_app.core.library import switching

        old = self._config.embedding
        if (new.embedding.model, new.embedding.url) == (old.model, old.url) or not self.kb.list_documents():
            return new
        if switching.start(self.kb, new.embedding.model, new.embedding.url) is None:
            return new
        held = copy.deepcopy(new)
        held.embedding = copy.deepcopy(old)
        return held

    def fill_switch(
        self,
        task: tasks.TaskState | None = None,
        on_batch: Callable[[switching.FillProgress], None] | None = None,
        *,
        apply: bool = True,
        resume: bool = True,
    ) -> Config | None:
        """Fill the pending switch's index in the background of searches, the documents the user
        opened or saw cited first. Once complete the new model answers: returns the settings now
        in use (applied here, the knowledge base reopened with the model, unless ``apply`` is
        False: the window applies them between its writes). None: none pending, paused (left so
        unless ``resume``) or withdrawn meanwhile. Raises Cancelled with ``task``."""
        from desktop_app.core.library import switching

        switch = switching.pending(self.kb)
        if switch is None or (switch.paused and not resume):
            return None
        if not switching.fill(self.kb, task, first=self.recent_documents, on_batch=on_batch):
            return None
        new = copy.deepcopy(self._config)
        new.embedding.model = switch.model
        if switch.url:
            new.embedding.url = switch.url
        if apply:
            self.apply_config(new)
        return new

    def reranker_installed(self) -> bool:
        """A reranker was just put in the models folder (Settings > Models > Fetch): search with it
        from now on, loading it here (call off the UI thread); True when the retriever has one.
        Only with ``retrieval.reranker = "auto"``: a named one is the user's choice."""
        with self._lock:
            kb = self._kb
        if kb is None:
            return False
        if self._config.retrieval.reranker.strip().lower() == "auto":
            kb.apply_config(self._config)  # the same settings: drops the retriever built without it
        return kb.retriever.reranker is not None

    def close(self) -> None:
        """Stop what runs in the background (Chroma's child process, a GGUF server)."""
        with self._lock:
            kb, chat = self._kb, self._chat
            self._kb = self._chat = self._assistant = self._identifier = None
        _close_chat(chat)
        if kb is not None:
            kb.close()

    def __enter__(self) -> Desk:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()


def _close_chat(chat: ChatModelChoice | None) -> None:
    if chat is not None and "model" in vars(chat):  # built: it may hold a server or a connection
        close = getattr(chat.model, "close", None)
        if close is not None:
            try:
                close()
            except Exception as exc:  # noqa: BLE001 - closing must not stop the change
                log.warning("closing the language model failed: %s", exc)

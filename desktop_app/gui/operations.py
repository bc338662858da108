"""The window's named operations (Anki's CollectionOp): every background job has a kind, and every
change to the knowledge base runs under one lock and says afterwards what it changed."""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass
from enum import StrEnum
from pathlib import Path
from typing import Any

from desktop_app.core.library.knowledge import KnowledgeBase, SyncReport
from desktop_app.core.messages import N_
from desktop_app.gui.tasks import Failure, Job, QtTaskState, TaskRunner

KB_LOCK = "kb-write"  # add / sync / reindex / remove (and a settings change) run one at a time
CHATS_LOCK = "chats-write"  # reading the last conversation at start, renames, deletes: one at a time


class JobKind(StrEnum):
    """What a background job does; starting one cancels a running job of the same kind unless
    the kind is shared (adds queue behind each other)."""

    LOAD = "load"  # open the knowledge base, load the models
    SAVE_SETTINGS = "save-settings"
    APPLY_SETTINGS = "apply-settings"
    ADD = "add"
    SYNC = "sync"
    REINDEX = "reindex"
    REMOVE = "remove"
    LIST = "list"
    ASK = "ask"
    IDENTIFY = "identify"
    VIEWER = "viewer"
    WATCH_SCAN = "watch-scan"
    SWITCH_EMBEDDER = "switch-embedder"  # fill another embedding model's index (library/switching.py)
    PAUSE_SWITCH = "pause-switch"
    CHATS = "chats"  # open the last conversation at start, rename, delete
    MODELS = "models"  # Settings > Models: read which models are installed
    MODELS_NETWORK = "models-network"  # Settings > Models: can the download endpoint be reached?
    FETCH_MODEL = "fetch-model"  # Settings > Models: download one manifest model (kdesk models fetch)
    USE_MODEL = "use-model"  # Settings > Models: load a reranker just fetched
    CHAT_MODEL = "chat-model"  # the chat's model switcher: save the choice and load that model
    TEST_SERVER = "test-server"  # Settings: "Test connection" to an OpenAI-compatible server


INDEXING = (JobKind.ADD, JobKind.SYNC, JobKind.REINDEX)  # the batches the progress bar shows


class Operation(StrEnum):
    """What the user asked for, as "Could not {operation}: {reason}" names it when a job fails: an
    English catalogue text, shown through ``tr`` (``N_`` marks it for the catalogue)."""

    OPEN_KNOWLEDGE_BASE = N_("open the knowledge base")
    SAVE_SETTINGS = N_("save Settings")
    APPLY_SETTINGS = N_("apply Settings")
    ADD_FILES = N_("add files")
    SYNC = N_("check the knowledge folder for changes")
    RETRY_FAILED = N_("read the failed files again")
    REINDEX = N_("re-index the knowledge base")
    FILL_INDEX = N_("fill the new embedding model's index")
    REMOVE = N_("remove the documents")
    LIST = N_("list the documents")
    ANSWER = N_("answer the question")
    IDENTIFY = N_("identify the photo")
    SHOW_PASSAGE = N_("show the cited passage")
    WATCH_FOLDER = N_("watch the knowledge folder")
    OPEN_LAST_CONVERSATION = N_("open the last conversation")
    RENAME_CONVERSATION = N_("rename the conversation")
    DELETE_CONVERSATION = N_("delete the conversation")
    READ_MODELS = N_("read which models are installed")
    CHECK_DOWNLOAD_SITE = N_("check whether the download site can be reached")
    DOWNLOAD_MODEL = N_("download the model")
    LOAD_RERANKER = N_("load the reranker")
    # the chat window's model switcher, edit and resend, export (issue 38)
    SWITCH_CHAT_MODEL = N_("switch the chat model")
    TEST_SERVER = N_("test the connection to the server")
    SAVE_CHAT_SETTINGS = N_("save the conversation's settings")
    EDIT_QUESTION = N_("send the edited question")
    EXPORT_CONVERSATION = N_("export the conversation")


@dataclass(frozen=True)
class KnowledgeChange:
    """What an operation changed in the knowledge base (``AppContext.knowledge_changed`` carries it)."""

    kind: JobKind
    added: tuple[str, ...] = ()
    updated: tuple[str, ...] = ()
    removed: tuple[str, ...] = ()
    failed: tuple[str, ...] = ()
    cancelled: bool = False

    @classmethod
    def of_report(cls, kind: JobKind, report: SyncReport | None) -> KnowledgeChange:
        """From a batch's report; None (the batch failed or was cancelled): anything may have changed."""
        if report is None:
            return cls(kind, cancelled=True)
        return cls(
            kind,
            tuple(report.added),
            tuple(report.updated),
            tuple(report.removed),
            tuple(name for name, _ in report.failed),
            report.cancelled,
        )

    @property
    def documents(self) -> tuple[str, ...]:
        """Documents whose entry in the list may differ now."""
        return self.added + self.updated + self.removed + self.failed

    @property
    def any(self) -> bool:
        return bool(self.documents) or self.cancelled


def index_batch(
    kind: JobKind,
    kb: KnowledgeBase,
    paths: Sequence[Path] = (),
    scope: str = "shared",
    *,
    retry_failed: bool = False,
) -> Callable[[QtTaskState], SyncReport]:
    """The work of an indexing batch: add ``paths`` to ``scope``, sync the folder (trying failed
    files again with ``retry_failed``), or re-index it."""
    if kind is JobKind.ADD:
        return lambda state: kb.add(list(paths), scope=scope, task=state)
    if kind is JobKind.SYNC:
        return lambda state: kb.sync(task=state, retry_failed=retry_failed)
    if kind is JobKind.REINDEX:
        return lambda state: kb.reindex(task=state)
    raise ValueError(f"not an indexing batch: {kind}")


def run_batch(
    runner: TaskRunner,
    kind: JobKind,
    work: Callable[[QtTaskState], Any],
    *,
    operation: Operation,
    on_done: Callable[[Any], None],
    on_failure: Callable[[Failure], None],
    on_cancelled: Callable[[], None],
    on_progress: Callable[[int, int, str], None] | None = None,
) -> Job:
    """Start a write to the knowledge base: one at a time (``KB_LOCK``); a second add queues
    behind the first, a second sync or re-index replaces a pending one."""
    return runner.run(
        kind,
        work,
        operation=operation,
        on_progress=on_progress,
        on_success=on_done,
        on_failure=on_failure,
        on_cancelled=on_cancelled,
        exclusive=kind not in (JobKind.ADD, JobKind.REMOVE),
        lock=KB_LOCK,
    )

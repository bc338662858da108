"""Switching the embedding model without leaving the user without search.

Choosing another embedder records a switch in <data-dir>/index/switch.json; config.toml keeps the
model in use, whose index goes on answering every search. The fill embeds the knowledge folder into
the new model's own index (its Chroma collection, manifest, keyword and dense index, named by model
in knowledge.py) a batch of documents at a time, each batch under the data folder's writer lock for
a few seconds only, so adds, syncs and the folder watcher go on between batches.

The progress is the new index's manifest itself: a document is done once its row there says indexed,
so a restart (or a kill) continues where it stopped and embeds no finished document again (only the
batch in flight at a kill is redone: its rows were still pending). Files added or changed meanwhile go
into the index in use at once, at the old model's speed, and are picked up by the fill, which scans
the folder again before each batch; the takeover (config.toml's embedding.model replaced, then the
switch file removed) happens under the lock right after a last full sync of the new index, so
nothing added before it is missing from it.
"""

from __future__ import annotations

import copy
import json
import logging
import os
import time
from collections.abc import Callable, Iterable
from dataclasses import asdict, dataclass, field
from typing import TYPE_CHECKING, Any

from desktop_app.core.config import load_config, save_config
from desktop_app.core.library import reasons
from desktop_app.core.library.manifest import FAILED, INDEXED
from desktop_app.core.library.progress_lines import eta
from desktop_app.core.messages import Message, message
from desktop_app.core.models.registry import display_name
from desktop_app.core.tasks import NullTask, TaskState, check

if TYPE_CHECKING:
    from pathlib import Path

    from desktop_app.core.library.knowledge import KnowledgeBase
    from desktop_app.core.models.embeddings.base import Embedder

log = logging.getLogger(__name__)

SWITCH_FILE = "switch.json"  # in <data-dir>/index: the model being filled, paused or not, its pace
BATCH_SECONDS = 4.0  # the writer lock is held about this long per batch (sized from the pace so far)
MAX_BATCH = 64  # documents in one batch at most


@dataclass
class Switch:
    """A pending switch to another embedding model (index/switch.json)."""

    model: str  # the embedding.model value being filled
    url: str = ""  # its embedding.url, for an "openai:" model
    paused: bool = False
    rate: float = 0.0  # documents a second, as last measured (the ETA of `kdesk models`)
    started: float = field(default_factory=time.time)


@dataclass
class FillProgress:
    """Where a switch stands: ``done`` of ``total`` documents are in the new model's index."""

    current: str  # the model answering searches meanwhile
    model: str
    done: int
    total: int
    rate: float = 0.0
    paused: bool = False

    @property
    def seconds_left(self) -> float | None:
        return (self.total - self.done) / self.rate if self.rate > 0 and self.total > self.done else None

    def line(self) -> Message:
        """The progress of the fill itself ("Qwen3: 340 of 1000 documents embedded, about 12 min left")."""
        left = self.seconds_left
        model = display_name(self.model)
        if left is None:
            return message(reasons.SWITCH_FILLING, model=model, done=self.done, total=self.total)
        return message(reasons.SWITCH_FILLING_ETA, model=model, done=self.done, total=self.total, eta=eta(left))

    def status(self) -> Message:
        """Which model answers meanwhile, and the fill's state (the status bar, `kdesk models`)."""
        params: dict[str, Any] = {
            "current": display_name(self.current),  # the name the rest of the app gives it
            "model": display_name(self.model),
            "done": self.done,
            "total": self.total,
        }
        if self.paused:
            return message(reasons.SWITCH_STATUS_PAUSED, **params)
        left = self.seconds_left
        if left is None:
            return message(reasons.SWITCH_STATUS, **params)
        return message(reasons.SWITCH_STATUS_ETA, **params, eta=eta(left))

    def to_dict(self) -> dict[str, Any]:
        return asdict(self) | {"seconds_left": self.seconds_left}


# ---------------------------------------------------------------------- the switch file
def _path(index_dir: Path) -> Path:
    return index_dir / SWITCH_FILE


def read_switch(index_dir: Path) -> Switch | None:
    """The pending switch, or None (none, or a file this version cannot read)."""
    try:
        data = json.loads(_path(index_dir).read_text(encoding="utf-8"))
        return Switch(**{k: v for k, v in data.items() if k in Switch.__dataclass_fields__})
    except (OSError, ValueError, TypeError):
        return None


def write_switch(index_dir: Path, switch: Switch) -> None:
    """Replace the switch file whole (other processes read it between batches)."""
    path = _path(index_dir)
    tmp = path.with_name(f".{path.name}.{os.getpid()}.tmp")
    tmp.write_text(json.dumps(asdict(switch)), encoding="utf-8")
    os.replace(tmp, path)


def clear_switch(index_dir: Path) -> None:
    _path(index_dir).unlink(missing_ok=True)


def pending(kb: KnowledgeBase) -> Switch | None:
    """The switch to fill, if any: None when there is none or its model is already the one in use
    (a takeover that ended between writing the config and removing the file)."""
    switch = read_switch(kb.index_dir)
    if switch is not None and _target(kb, switch).embedder_name == kb.embedder_name:
        clear_switch(kb.index_dir)
        return None
    return switch


def start(kb: KnowledgeBase, model: str, url: str = "") -> Switch | None:
    """Choose ``model`` as the embedder: recorded as a switch that the fill completes (the model in
    use answers until then). Choosing the model in use cancels a pending switch; returns None then."""
    switch = Switch(model=model.strip() or "default", url=url)
    if _target(kb, switch).embedder_name == kb.embedder_name:
        clear_switch(kb.index_dir)
        return None
    old = read_switch(kb.index_dir)
    if old is not None and (old.model, old.url) == (switch.model, switch.url):
        switch.rate, switch.started = old.rate, old.started
    write_switch(kb.index_dir, switch)
    return switch


def set_paused(kb: KnowledgeBase, paused: bool) -> Switch | None:
    """Pause (a running fill stops after its batch) or release the pending switch."""
    switch = read_switch(kb.index_dir)
    if switch is not None and switch.paused != paused:
        switch.paused = paused
        write_switch(kb.index_dir, switch)
    return switch


def progress(kb: KnowledgeBase, switch: Switch | None = None) -> FillProgress | None:
    """How far the pending switch is (None: none pending), without loading either model."""
    switch = switch or pending(kb)
    if switch is None:
        return None
    target = _target(kb, switch)
    files = kb.scan()
    done = 0
    if _dim_known(target):
        try:
            done = len(_done(target, files))
        finally:
            target._detach_index()[-1]()
    return FillProgress(
        current=kb.embedder_name,
        model=target.embedder_name,
        done=done,
        total=len(files),
        rate=switch.rate,
        paused=switch.paused,
    )


# ---------------------------------------------------------------------- the fill
def _target(kb: KnowledgeBase, switch: Switch, embedder: Embedder | None = None) -> KnowledgeBase:
    """The new model's knowledge base: the same data folder, Chroma client, writer lock and file
    reader as ``kb``; its own model, and so its own collection, manifest and indexes."""
    target = copy.copy(kb)
    config = copy.deepcopy(kb.config)
    config.embedding.model = switch.model
    if switch.url:
        config.embedding.url = switch.url
    target.config = config
    target._embedder = embedder
    target._attach_index((None, None, None, None, None, None))
    target._writes = 0  # copied mid-write of another thread: its own outermost write still takes the lock
    target._handlers = None
    return target


def _dim_known(target: KnowledgeBase) -> bool:
    """Its dimension is on record (index/embedders.json): its index can be found without loading it."""
    try:
        known = json.loads((target.index_dir / "embedders.json").read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return target._embedder is not None
    return target.embedder_name in known or target._embedder is not None


def _done(target: KnowledgeBase, files: dict[str, Path]) -> set[str]:
    """The files the new index has as they are now (indexed, or failed for good, and not changed
    since: the sync's own stat shortcut)."""
    done = set()
    for rel, entry in target.manifest.all().items():
        path = files.get(rel)
        if path is None or entry.status not in (INDEXED, FAILED) or not entry.sha256:
            continue
        try:
            st = path.stat()
        except OSError:
            continue
        if entry.size == st.st_size and entry.mtime_ns == st.st_mtime_ns:
            done.add(rel)
    return done


def _ordered(todo: Iterable[str], first: Iterable[str]) -> list[str]:
    """The documents to embed: those the user asked about or opened first (most recent first), then by name."""
    todo = set(todo)
    ahead = [rel for rel in dict.fromkeys(first) if rel in todo]
    return ahead + sorted(todo - set(ahead))


class _Overall:
    """The fill's task seen by one batch's sync: its cancel, and progress counted over the whole fill."""

    def __init__(self, task: TaskState, report: Callable[[str], None]) -> None:
        self.task, self.report = task, report

    def progress(self, done: int, total: int, message: object = "") -> None:
        self.report(str(message) if message else "")

    def cancelled(self) -> bool:
        return self.task.cancelled()


def fill(
    kb: KnowledgeBase,
    task: TaskState | None = None,
    *,
    embedder: Embedder | None = None,
    first: Callable[[], Iterable[str]] | None = None,
    batch_seconds: float = BATCH_SECONDS,
    on_batch: Callable[[FillProgress], None] | None = None,
) -> bool:
    """Fill the pending switch's index, a batch at a time, and take over once it is complete.
    Returns True when the new model took over (or none was pending), False when the fill stopped
    because it was paused or the switch was withdrawn; raises Cancelled when ``task`` is. Resumes a
    paused switch: calling it is the user asking for the fill. ``first()`` names the documents to
    embed first (asked about, opened), read again before each batch."""
    task = task or NullTask()
    switch = pending(kb)
    if switch is None:
        return True
    switch = set_paused(kb, False) or switch
    kb.chroma_client  # noqa: B018 - opened here, so the new index shares it (and its process)
    target = _target(kb, switch, embedder)
    size, embedded, busy = 1, 0, 0.0  # the first batch, one document, measures the pace
    tried: set[str] = set()  # once per run: an unreadable file leaves no settled row (the last sync retries)
    try:
        while True:
            check(task)
            now = read_switch(kb.index_dir)
            if now is None or (now.model, now.url) != (switch.model, switch.url) or now.paused:
                return False  # paused or withdrawn (another window, `kdesk models pause`)
            with target._writing(task):
                files = target.scan()
                done = _done(target, files)
                state = FillProgress(kb.embedder_name, target.embedder_name, len(done), len(files), now.rate)
                task.progress(state.done, state.total, str(state.line()))
                todo = [rel for rel in files if rel not in done and rel not in tried]
                if not todo:
                    target._sync(files, _Overall(task, lambda _m: None), prune=True)  # removals, repairs
                    target.manifest  # noqa: B018 - made even for an empty folder
                    _take_over(kb, switch)
                    log.info("%s", message(reasons.SWITCH_DONE, model=target.embedder_name, total=len(files)))
                    return True
                order = _ordered(todo, first() if first is not None else ())
                batch = {rel: files[rel] for rel in order[:size]}
                tried.update(batch)

                def line(extra: str, base: FillProgress = state) -> None:
                    task.progress(base.done, base.total, str(base.line()) + (f" · {extra}" if extra else ""))

                started = time.monotonic()
                target._sync(batch, _Overall(task, line), prune=False)
                took = time.monotonic() - started
            embedded += len(batch)
            busy += took
            rate = embedded / busy if busy > 0 else 0.0
            latest = read_switch(kb.index_dir)  # a pause written meanwhile is kept
            if latest is not None and (latest.model, latest.url) == (switch.model, switch.url):
                latest.rate = rate
                write_switch(kb.index_dir, latest)
            size = max(1, min(MAX_BATCH, int(rate * batch_seconds)))
            if on_batch is not None:
                done_now = len(done) + len(batch)
                on_batch(FillProgress(kb.embedder_name, target.embedder_name, done_now, len(files), rate))
    finally:
        if kb._parse_worker is None:  # started on the way: closed with kb
            kb._parse_worker = target._parse_worker
        target._detach_index()[-1]()


def _take_over(kb: KnowledgeBase, switch: Switch) -> None:
    """The new model answers from now on: config.toml's embedding.model replaced (read again, so
    edits made meanwhile are kept), then the switch file removed (a crash between the two leaves a
    switch whose model is the one in use: ``pending`` drops it)."""
    path = kb.data_dir / "config.toml"
    config = load_config(path) if path.exists() else copy.deepcopy(kb.config)
    config.embedding.model = switch.model
    if switch.url:
        config.embedding.url = switch.url
    save_config(config, path)
    clear_switch(kb.index_dir)

"""KnowledgeBase: a folder of the user's documents turned into a searchable, persistent index.

The knowledge folder (<data-dir>/knowledge, folder.py) is the source of truth; everything under
<data-dir>/index is derived and can be rebuilt. This module builds the parts lazily (embedder,
Chroma client and store, manifest, keyword and dense indexes, handlers, retriever), keeps writers
one at a time, and offers the public operations; sync.py is the crash-safe indexing algorithm.
"""

from __future__ import annotations

import copy
import functools
import json
import logging
import os
import re
import shutil
import threading
import uuid
from collections.abc import Callable, Iterator, Sequence
from contextlib import contextmanager
from dataclasses import replace
from pathlib import Path
from typing import TYPE_CHECKING, Any

from desktop_app.core.config import Config, load_config
from desktop_app.core.formats import FormatUnknown
from desktop_app.core.library import diskspace, integrity, reasons, seals
from desktop_app.core.library import sync as syncing
from desktop_app.core.library.chroma_client import (
    library_id_of,
    make_client,
    namespaced,
    refresh_embedded,
    shared_client,
)
from desktop_app.core.library.datafolder import WriterLock, file_stamp
from desktop_app.core.library.documents import Chunk, DocumentInfo, Hit
from desktop_app.core.library.folder import KnowledgeFolder, matching
from desktop_app.core.library.manifest import INDEXED, PENDING, Manifest, adopt_as_pending
from desktop_app.core.library.names import display_name
from desktop_app.core.library.store import UPSERT_SLICE, UPSERT_SLICE_INTERACTIVE, ChromaStore
from desktop_app.core.library.sync import DocumentHandler, SyncReport, chunk_from_hit
from desktop_app.core.messages import Text, message
from desktop_app.core.models.embeddings import Embedder, make_embedder
from desktop_app.core.models.embeddings.base import collection_name
from desktop_app.core.tasks import Cancelled, NullTask, TaskState

if TYPE_CHECKING:
    from desktop_app.core.library.bm25 import KeywordIndex
    from desktop_app.core.library.chroma_server import ChromaServer
    from desktop_app.core.library.dense import DenseIndex
    from desktop_app.core.library.parse_worker import ParseWorker
    from desktop_app.core.library.retrieval import Retriever

__all__ = ["DocumentHandler", "KnowledgeBase", "SyncReport", "chunk_from_hit"]

log = logging.getLogger(__name__)

EMPTY_LIBRARY = message(reasons.EMPTY_LIBRARY)
_GENERATION = re.compile(r"r[0-9a-f]{12}")  # a rebuilt index's suffix (KnowledgeBase._generation_pointer)


class KnowledgeBase:
    """The library of one data folder: its documents, their index, and search over them."""

    def __init__(
        self,
        data_dir: Path | str,
        config: Config | None = None,
        embedder: Embedder | None = None,
        *,
        own_process: bool = False,
        photo_handler: Callable[[KnowledgeBase], DocumentHandler] | None = None,
    ) -> None:
        self.data_dir = Path(data_dir).expanduser().resolve()
        self.folder = KnowledgeFolder(self.data_dir)
        self.knowledge_dir = self.folder.path
        self.index_dir = self.data_dir / "index"
        self.knowledge_dir.mkdir(parents=True, exist_ok=True)
        self.index_dir.mkdir(parents=True, exist_ok=True)
        self.config = config if config is not None else load_config(self.data_dir / "config.toml")
        self._embedder = embedder
        self._lock = threading.RLock()  # one writer at a time (GUI watcher + user actions)
        # ... and one writer process at a time: the data folder's lock, taken by the outermost write.
        self._writer = WriterLock(self.index_dir)
        self._writes = 0
        # Told once, with who holds it, when a write waits for another process.
        self.on_wait: Callable[[str], None] = lambda message: log.warning("%s", message)
        self._client: Any = None
        # Chroma in a child process (the GUI asks for it, see chroma_server.py).
        self.own_process = own_process and not self.config.index.chroma_url
        self._server: ChromaServer | None = None
        self.store_note = ""  # why the child process was not used, when it failed to start
        self._store: ChromaStore | None = None
        self._manifest: Manifest | None = None
        self._keyword: KeywordIndex | None = None
        # False when it does not fit retrieval.exact_dense_mb (None: not decided yet).
        self._dense: DenseIndex | bool | None = None
        # Builds the handler of images that hold no text (photos): identification's gallery, which the
        # Desk passes, since the library never imports the layers above it. None: photos fail.
        self.photo_handler = photo_handler
        self._handlers: dict[str, DocumentHandler] | None = None
        self._retriever: Retriever | None = None  # built on the first search
        # Which build of the index is in use ("": the first; see _generation_pointer), read lazily.
        self._generation: str | None = None
        self._pointer_seen: tuple[int, int, int] | None = None
        self._pointer_path: Path | None = None
        self._search_notes = threading.local()  # warnings of each thread's last search
        self.failed_models: list[Text] = []  # models that failed at search time this session
        self._parse_worker: ParseWorker | None = None  # the file reader process, kept across syncs

    # ------------------------------------------------------------------ lazily built parts
    @property
    def embedder(self) -> Embedder:
        if self._embedder is None:
            self._embedder = make_embedder(self.config, self.data_dir)
        return self._embedder

    @property
    def embedder_name(self) -> str:
        if self._embedder is not None:
            return self._embedder.name
        from desktop_app.core.models.embeddings.default import default_model_id

        name = self.config.embedding.model.strip()
        if name.startswith("openai:") and self.config.embedding.url:
            # Must equal the loaded embedder's name, or manifest and store pick different collections.
            from desktop_app.core.models.embeddings.openai_compat import openai_embedder_name

            return openai_embedder_name(name.split(":", 1)[1], self.config.embedding.url)
        return default_model_id(self.data_dir) if name in ("", "default") else name

    def _embedder_dim(self) -> int:
        """The dimension, cached on disk so listing documents never loads the model."""
        cache = self.index_dir / "embedders.json"
        try:
            known = json.loads(cache.read_text(encoding="utf-8"))
        except (OSError, ValueError):
            known = {}
        name = self.embedder_name
        if self._embedder is None and name in known:
            return int(known[name])
        dim = int(self.embedder.dim)
        if known.get(name) != dim:
            known[name] = dim
            tmp = cache.with_suffix(f".tmp{os.getpid()}")  # other processes may write it too
            tmp.write_text(json.dumps(known, indent=1), encoding="utf-8")
            os.replace(tmp, cache)
        return dim

    @functools.cached_property
    def library_id(self) -> str:
        """This library's namespace on a shared Chroma server (``index.chroma_url``), read from
        <data-dir>/library-id and made there once; "" for the embedded index, private already."""
        return library_id_of(self.data_dir) if self.config.index.chroma_url else ""

    @property
    def _base_collection(self) -> str:
        return collection_name("chunks", self.embedder_name, self._embedder_dim())

    # -- generations: `reindex` builds a new index beside the one in use and switches at the end
    @property
    def _generation_pointer(self) -> Path:
        """index/<collection>.current: which build of this model's index is in use. Absent: the
        first one (collection and index/<collection>/ named without a suffix); else it holds the
        suffix of the build `reindex` made last (``r`` and 12 hex digits: ``<collection>__r...``).
        Replaced whole (os.replace) once a rebuild has succeeded: the one switch."""
        return self.index_dir / (namespaced(self._base_collection, self.library_id) + ".current")

    @property
    def generation(self) -> str:
        """The build of the index in use ("" for the first); see ``_generation_pointer``."""
        if self._generation is None:
            pointer = self._pointer_path = self._generation_pointer
            self._pointer_seen = file_stamp(pointer)
            try:
                text = pointer.read_text(encoding="ascii").strip()
            except OSError:
                text = ""
            except UnicodeDecodeError:
                text = "?"  # no build of this version's is named so: refused below
            if text and not _GENERATION.fullmatch(text):  # a newer app's pointer: never read it as ""
                raise FormatUnknown(pointer)
            self._generation = text
        return self._generation

    @property
    def _chunks_collection(self) -> str:
        generation = self.generation
        return f"{self._base_collection}__{generation}" if generation else self._base_collection

    @property
    def collection(self) -> str:
        """The chunk collection's name as stored (on a shared server, in this library's namespace);
        it also names the derived state in index/<collection>/."""
        return namespaced(self._chunks_collection, self.library_id)

    @property
    def chroma_client(self) -> Any:
        if self._client is None:
            if self.own_process:
                from desktop_app.core.library.chroma_server import start_or_explain

                self._server, self.store_note = start_or_explain(self.index_dir / "chroma")
            if self.library_id:  # a shared server: a client confined to this library's namespace
                self._client = shared_client(self.config, self.library_id)
            else:
                self._client = make_client(self.index_dir, self._server.url if self._server else "")
        return self._client

    @property
    def chroma_process(self) -> ChromaServer | None:
        """Chroma's child process while this knowledge base runs one (``own_process``), else None."""
        return self._server

    @property
    def store(self) -> ChromaStore:
        if self._store is None:
            try:
                client = self.chroma_client
            except Exception as exc:  # with nothing free, even opening Chroma fails: search reads its file
                if self.config.index.chroma_url or not diskspace.is_disk_full(exc, self.index_dir):
                    raise
                from desktop_app.core.library.store import Unavailable

                client = Unavailable(exc)
            # Embedded inside the GUI (its Chroma process failed to start): small upserts, so the
            # GIL is never held long (see store.UPSERT_SLICE).
            interactive = self.own_process and self._server is None
            store = ChromaStore(
                client,
                self._chunks_collection,  # the shared server's client adds the namespace
                location=self.config.index.chroma_url or str(self.index_dir),
                upsert_slice=UPSERT_SLICE_INTERACTIVE if interactive else UPSERT_SLICE,
                sealer=seals.Sealer(seals.chunk_key_of(self.data_dir)),
                chroma_sqlite=None
                if self.config.index.chroma_url
                else self.index_dir / "chroma" / "chroma.sqlite3",
            )
            store.on_disk_full = self._disk_full_search
            store.strict = integrity.is_sealed(store, self.collection_dir)
            store.on_foreign = self._foreign_chunks
            self._store = store
        return self._store

    def _foreign_chunks(self, chunk_ids: list[str]) -> None:
        """Chunks read back that this library did not write (integrity.py) were left out: say so,
        and send their documents back to pending, so the next sync re-embeds them."""
        indexed = {e.doc_id: e for e in self.manifest.all().values() if e.status == INDEXED}
        rows = {d: indexed[d] for d in {integrity.doc_of_chunk(c) for c in chunk_ids} if d in indexed}
        self.manifest.put_many([replace(e, status=PENDING) for e in rows.values()])
        names = ", ".join(sorted(display_name(e.name) for e in rows.values())) or ", ".join(chunk_ids)
        note = str(
            message(reasons.FOREIGN_CHUNKS, count=len(chunk_ids), location=self.store.location, names=names)
        )
        log.warning("%s", note)
        warnings = getattr(self._search_notes, "warnings", None)
        if warnings is not None:
            warnings.append(note)

    def _disk_full_search(self, exc: BaseException) -> None:
        """Chroma could not answer for the full disk: search reads what it had applied (store.py's
        LastApplied). Said once a search."""
        free = diskspace.free_bytes(self.index_dir)
        note = message(
            reasons.DISK_FULL_SEARCH, folder=str(self.index_dir), free_mb=f"{free / diskspace.MB:.1f}"
        )
        warnings = getattr(self._search_notes, "warnings", None)
        if warnings is not None and note not in warnings:
            log.info("%s (%s)", note, exc)
            warnings.append(note)

    def search_warnings(self) -> list[str]:
        """What this thread's last search left out and why (tampered chunks, a model that failed),
        for the user to see."""
        return [str(w) for w in self.search_notes()]

    def search_notes(self) -> list[Text]:
        """``search_warnings`` as they were told: catalogue messages stay messages."""
        return list(getattr(self._search_notes, "warnings", None) or [])

    @property
    def collection_dir(self) -> Path:
        """Per-collection derived state: manifest and keyword index."""
        return self.index_dir / self.collection

    @property
    def manifest(self) -> Manifest:
        if self._manifest is None:
            path = self.collection_dir / "manifest.sqlite3"
            if self.library_id and not self.generation and not path.exists():
                # New to its namespace on the shared server, its documents indexed without one (by an
                # older release, or in the embedded index) are listed as pending rather than missing.
                legacy = self.index_dir / self._chunks_collection / "manifest.sqlite3"
                if adopted := adopt_as_pending(legacy, path):
                    log.warning(
                        "%d documents indexed without a library namespace are pending in this library's "
                        "own one on the Chroma server: the next sync re-indexes them",
                        adopted,
                    )
            self._manifest = Manifest(path)
        return self._manifest

    @property
    def keyword(self) -> KeywordIndex:
        if self._keyword is None:
            from desktop_app.core.library.bm25 import KeywordIndex

            self._keyword = KeywordIndex(self.collection_dir / "bm25", self.config.retrieval.translate)
        return self._keyword

    @property
    def dense(self) -> DenseIndex | None:
        """Exact in-memory dense search (dense.py) while the vectors fit
        ``retrieval.exact_dense_mb``; None means Chroma's HNSW index answers dense queries."""
        if self._dense is None:
            with self._lock:
                if self._dense is None:
                    dense = syncing.open_dense(
                        self.collection_dir / "dense",
                        self.config.retrieval.exact_dense_mb,
                        self.store,
                        self.manifest,
                        self._embedder_dim(),
                        self._writer,
                    )
                    self._dense = dense if dense is not None else False
        return self.opened_dense

    @property
    def opened_dense(self) -> DenseIndex | None:
        """The dense index if this process has it open, without opening it (None otherwise)."""
        # Not truthiness: an empty index is falsy (it has a len).
        return self._dense if self._dense is not None and self._dense is not False else None

    def _fit_dense(self) -> None:
        """After a sync: drop the in-memory copy once it outgrows ``retrieval.exact_dense_mb``."""
        dense = self.opened_dense
        if dense is None:
            return
        if dense.nbytes > self.config.retrieval.exact_dense_mb * 1e6:
            log.info("dense index exceeds retrieval.exact_dense_mb: Chroma's HNSW index answers from now on")
            shutil.rmtree(dense.directory, ignore_errors=True)
            self._dense = False
            self._retriever = None
        else:
            dense.flush()

    @property
    def parse_worker(self) -> ParseWorker:
        """The process the sync reads files in (parse_worker.py), kept across syncs so the OCR
        model stays loaded; started with the first file, closed with the knowledge base."""
        if self._parse_worker is None:
            from desktop_app.core.library.parse_worker import ParseWorker

            self._parse_worker = ParseWorker()
        return self._parse_worker

    def handler_for(self, suffix: str) -> DocumentHandler | None:
        """The plug-in that indexes files with this suffix (None: text, or image support missing or
        not given: ``photo_handler``)."""
        from desktop_app.core.library.parsers import IMAGE_SUFFIXES

        if suffix not in IMAGE_SUFFIXES:
            return None
        if self._handlers is None:
            self._handlers = {}
            if self.photo_handler is not None:
                try:
                    handler = self.photo_handler(self)
                    self._handlers = {s: handler for s in handler.suffixes}
                except ImportError as exc:
                    log.warning("image support unavailable: %s", exc)
        return self._handlers.get(suffix)

    @property
    def retriever(self) -> Retriever:
        """The two-stage retriever (retrieval.py): dense + BM25 fused, then the reranker if installed."""
        if self._retriever is None:
            from desktop_app.core.library.retrieval import Retriever
            from desktop_app.core.models.rerank import load_reranker

            reranker = load_reranker(
                self.config.retrieval.reranker, self.data_dir, self.config.embedding.device, self.config
            )
            self._retriever = Retriever(
                self.store,
                self.keyword,
                self.embedder,
                self.config.retrieval,
                reranker=reranker,
                stored_scopes=self.manifest.scopes,
                dense=self.dense,
                data_dir=self.data_dir,
                on_failure=self._model_failed,
            )
        return self._retriever

    def _model_failed(self, why: Text) -> None:
        """A model failed during this search (retrieval went on without it): the search's warning,
        told once, and listed in ``model_failures`` for the rest of the session."""
        self.failed_models.append(why)
        warnings = getattr(self._search_notes, "warnings", None)
        if warnings is not None:
            warnings.append(why)  # a message: the answer's note shows it in the reader's language

    def model_failures(self) -> list[Text]:
        """The models that failed at search time in this session, each with the reason."""
        return list(self.failed_models)

    def apply_config(self, config: Config) -> None:
        """New settings for the same collection (the Desk reopens the knowledge base when the
        embedding model or the Chroma server changes): the next search uses the retrieval
        settings and reranker, the next indexing the chunking ones."""
        with self._lock:
            old, self.config = self.config, config
            self._retriever = None
            if old.identify.image_model != config.identify.image_model:
                self._handlers = None  # another feature model: a new gallery on first use
            if old.retrieval.exact_dense_mb != config.retrieval.exact_dense_mb:
                # Decided again on the next search by the rules of opening (which touch the
                # files on disk only under the data folder's writer lock).
                self._dense = None

    def close(self) -> None:
        with self._lock:
            if self._parse_worker is not None:
                self._parse_worker.close()
            if self._keyword is not None:
                self._keyword.flush()
            dense = self.opened_dense
            if dense is not None:
                dense.flush()
            if self._manifest is not None:
                self._manifest.close()
                self._manifest = None
            if self._server is not None:
                self._server.stop()
                self._server = None
                self._client = None
                self._store = None

    def __enter__(self) -> KnowledgeBase:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    # ------------------------------------------------------------------ other processes
    @contextmanager
    def _writing(self, task: TaskState | None = None) -> Iterator[None]:
        """One writer: threads of this process by the RLock, processes by the data folder's lock
        (waits, saying once who holds it). The outermost write takes what other processes wrote
        before touching anything, and gives the lock back when it ends."""
        with self._lock:
            if self._writes == 0:

                def waiting(message: str) -> None:
                    self.on_wait(message)
                    if task is not None:  # the app's progress line shows it too
                        task.progress(0, 0, message)

                self._writer.acquire(on_wait=waiting, task=task)
                try:
                    self._take_others_writes(writer=True)
                except BaseException:
                    self._writer.release()
                    raise
            self._writes += 1
            try:
                yield
            except Exception as exc:  # ENOSPC, SQLite's or Chroma's words for it: the full disk, said so
                full = diskspace.as_disk_full(exc, self.index_dir)
                if full is None or full is exc:
                    raise
                raise full from exc
            finally:
                self._writes -= 1
                if self._writes == 0:
                    dense = self.opened_dense
                    if dense is not None:
                        dense.set_writer(False)
                    self._writer.release()

    def _take_others_writes(self, writer: bool = False) -> None:
        """Reload the keyword and dense indexes if another process flushed them since this one
        last looked (a stat call each when nothing changed), and follow another process's
        `reindex` to the index it built."""
        self._follow_generation()
        others = self._keyword is not None and self._keyword.reload_if_changed()
        dense = self.opened_dense
        if dense is not None:
            if writer:
                dense.set_writer(True)
            others = dense.reload_if_changed() or others
        if others and self._store is not None:  # and Chroma's copy of their vectors (photos too)
            refresh_embedded(self._store.client)

    def _follow_generation(self) -> None:
        """If another process switched to a rebuilt index, drop the parts opened on the old one.
        One stat, without the lock (a search must not wait for this process's own long write)."""
        pointer = self._pointer_path
        if self._generation is None or pointer is None or file_stamp(pointer) == self._pointer_seen:
            return
        with self._lock:  # a writer of this process switching updates _pointer_seen before letting go
            if self._generation is not None and file_stamp(pointer) != self._pointer_seen:
                self._detach_index()[-1]()

    def _detach_index(self) -> tuple[Any, ...]:
        """Forget the parts opened on the index in use; returns them and a function closing them."""
        parts = (self._generation, self._pointer_seen, self._store, self._manifest, self._keyword, self._dense)
        self._generation = self._pointer_seen = None
        self._store = self._manifest = self._keyword = self._dense = None
        self._retriever = None
        manifest = parts[3]
        return (*parts, (lambda: manifest.close()) if manifest is not None else (lambda: None))

    def _attach_index(self, parts: tuple[Any, ...]) -> None:
        (self._generation, self._pointer_seen, self._store, self._manifest, self._keyword, self._dense) = parts[:6]
        self._retriever = None
        if self._store is not None:  # its foreign chunks are this knowledge base's to report now
            self._store.on_foreign = self._foreign_chunks

    def _drop_generation(self, generation: str) -> None:
        """Delete one build of the index: its Chroma collection, then its folder (a crash between
        the two leaves the folder, which the next clean-up finds)."""
        base = self._base_collection
        name = f"{base}__{generation}" if generation else base
        try:
            self.chroma_client.delete_collection(name)
        except Exception as exc:  # already gone (a crash after this step), or never made
            log.debug("no collection %s to drop: %s", name, exc)
        shutil.rmtree(self.index_dir / namespaced(name, self.library_id), ignore_errors=True)

    def _drop_stale_generations(self) -> None:
        """Delete what a rebuild left that is not in use: a build a killed or failed `reindex` had
        started, or the one replaced when the process ended before deleting it. Writers only."""
        current = self.generation
        base = namespaced(self._base_collection, self.library_id)
        stale = []
        try:
            for entry in os.scandir(self.index_dir):
                if entry.name.startswith(base + "__") and entry.is_dir(follow_symlinks=False):
                    generation = entry.name[len(base) + 2 :]
                    if _GENERATION.fullmatch(generation) and generation != current:
                        stale.append(generation)
        except OSError:
            return
        if current and (self.index_dir / base).is_dir():
            stale.append("")  # the first build, replaced
        for generation in stale:
            log.info("dropping an unused index build %r", generation or base)
            self._drop_generation(generation)

    def _switch_generation(self, generation: str) -> None:
        """Make ``generation`` the build in use: the pointer file replaced whole, then synced."""
        pointer = self._generation_pointer
        tmp = pointer.with_name(f".{pointer.name}.{os.getpid()}.tmp")
        with open(tmp, "w", encoding="ascii") as f:
            f.write(generation + "\n")
            f.flush()
            os.fsync(f.fileno())
        os.replace(tmp, pointer)
        try:  # the rename itself made durable
            fd = os.open(self.index_dir, os.O_RDONLY)
            try:
                os.fsync(fd)
            finally:
                os.close(fd)
        except OSError:
            pass

    # ------------------------------------------------------------------ the folder
    def never_indexed(self, folder: Path) -> str | None:
        """Why a folder (resolved) must never be indexed: this data folder or another one."""
        return self.folder.never_indexed(folder)

    def scan(self) -> dict[str, Path]:
        """Every candidate file in the knowledge folder, by relative posix path (folder.py)."""
        return self.folder.scan()

    def is_empty(self) -> bool:
        """No file to index at all (stops at the first one: no model, no index is opened)."""
        return self.folder.is_empty()

    def doc_id(self, rel: str) -> str:
        from desktop_app.core.library.chunking import make_doc_id

        return make_doc_id(rel)

    # ------------------------------------------------------------------ public operations
    def list_documents(self) -> list[DocumentInfo]:
        self._follow_generation()
        return [e.info() for e in self.manifest.all().values()]

    def sync(self, task: TaskState | None = None, *, retry_failed: bool = False) -> SyncReport:
        """Index new and changed files, drop removed ones. Unchanged files cost a stat call; a
        file that failed is tried again once it changes, or now with ``retry_failed``."""
        with self._writing(task):
            self._drop_stale_generations()
            return self._sync(self.scan(), task or NullTask(), prune=True, retry_failed=retry_failed)

    def reindex(self, task: TaskState | None = None) -> SyncReport:
        """Rebuild this model's index from the knowledge folder, beside the one in use (a new
        Chroma collection, manifest, keyword and dense index), and switch to it only once it is
        complete: searches meanwhile, and after a failed, cancelled or killed rebuild, use the old one."""
        with self._writing(task):
            self._drop_stale_generations()
            self.chroma_client  # noqa: B018 - opened here, so the new build shares it (and its process)
            current, building = self.generation, "r" + uuid.uuid4().hex[:12]
            old_photos = {e.doc_id for e in self.manifest.all().values() if e.kind != "text"}
            new = copy.copy(self)  # the same settings, clients and writer lock; its own index parts
            new._attach_index((building, self._pointer_seen, None, None, None, None))
            try:
                # Its folder first: a crash from here on leaves something _drop_stale_generations finds.
                new.collection_dir.mkdir(parents=True)
                report = new._sync(new.scan(), task or NullTask(), prune=True)
                new.manifest  # noqa: B018 - made even for an empty folder: the new build's list
            except BaseException:
                log.warning("re-indexing stopped: the index in use is kept")
                new._detach_index()[-1]()
                self._drop_generation(building)
                raise
            finally:
                self._embedder, self._handlers = new._embedder, new._handlers  # loaded on the way
                self._parse_worker = new._parse_worker  # started on the way: closed with this one
            self._switch_generation(building)
            self._detach_index()[-1]()  # the old build's manifest closed, then the build deleted
            self._attach_index(new._detach_index())
            self._pointer_seen = file_stamp(self._generation_pointer)
            self._drop_generation(current)
            # Photos live in one gallery for every build: drop those the new build no longer has.
            gone = old_photos - {e.doc_id for e in self.manifest.all().values() if e.kind != "text"}
            handler = self.handler_for(".jpg") if gone else None
            if handler is not None:
                handler.delete(gone)
            return report

    def add(
        self, paths: Sequence[Path | str], scope: str = "shared", task: TaskState | None = None
    ) -> SyncReport:
        """Copy files or folders into the knowledge folder (under @scope/ for a non-shared scope)
        and index them. Files already inside the knowledge folder are indexed in place. The data
        folder is never indexed: adding it, or anything in its derived part (index/, config), is
        refused; a folder that contains it (or another library's) is added without it. Hidden,
        unsupported and too large files are skipped before anything is copied."""
        placed = self.folder.place(paths)
        with self._writing(task):
            known = set(self.manifest.all())
            copied = self.folder.copy_in(placed.outside, scope, self.config.index.max_document_mb)
            targets = placed.inside
            for dest in copied.copied:
                targets[self.folder.relative(dest)] = dest
            try:
                report = self._sync(targets, task or NullTask(), prune=False)
            except Cancelled:
                # Left in the folder, the next sync (the window's watcher, at once) would index
                # what the user just cancelled: this add's new copies not fully indexed go.
                self._drop_unindexed_copies([self.folder.relative(d) for d in copied.copied], known)
                raise
        report.failed[:0] = placed.refused + list(copied.failed)
        report.skipped[:0] = copied.skipped
        return report

    def _drop_unindexed_copies(self, copies: list[str], known: set[str]) -> None:
        """Delete the files an add copied in (names not in the manifest before it) that are not
        indexed, with their manifest rows and any chunks."""
        entries = self.manifest.all()
        doomed = [
            rel for rel in copies if rel not in known and (rel not in entries or entries[rel].status != INDEXED)
        ]
        syncing.drop_documents(self, [rel for rel in doomed if rel in entries], entries)
        self.folder.delete(doomed)

    def remove(self, names: Sequence[str]) -> list[str]:
        """Delete documents (files and their chunks). Names are relative paths or folder prefixes."""
        with self._writing():
            entries = self.manifest.all()
            doomed = matching(names, entries)
            syncing.drop_documents(self, doomed, entries)
            self.folder.delete(doomed)
            return doomed

    def _sync(
        self,
        files: dict[str, Path],
        task: TaskState,
        prune: bool,
        force: bool = False,
        retry_failed: bool = False,
    ) -> SyncReport:
        report = SyncReport()
        if prune:  # missing or altered chunks go back to pending: re-embedded below
            report.repaired = integrity.check_store(self.store, self.manifest, self.collection_dir)
        changes = syncing.find_changes(self, files, report, prune=prune, force=force, retry_failed=retry_failed)
        try:
            syncing.index_changes(self, changes, task, report)
        finally:  # cancelled or not, what was fully embedded is kept
            self.keyword.flush()
            self._fit_dense()
        return report

    def embed_text(self, chunk: Chunk) -> str:
        """What the encoder sees for a chunk (sync.embed_text)."""
        return syncing.embed_text(chunk)

    # ------------------------------------------------------------------ search
    def search(self, query: str, top_k: int | None = None, scope: str | None = None) -> list[Hit]:
        """Best chunks for a query (see retrieval.py for the two-stage pipeline)."""
        return self.search_many([query], top_k=top_k, scope=scope)

    def search_many(
        self, queries: Sequence[str], top_k: int | None = None, scope: str | None = None
    ) -> list[Hit]:
        """Several queries, one batched embedding call, merged and deduplicated (best score kept).
        An empty library answers at once: no model is loaded, no index opened, to find nothing."""
        self._search_notes.warnings = []
        if self.is_empty():
            return []
        if self._writes == 0:
            self._follow_generation()  # another process's `reindex` switched to its new build
        try:
            retriever = self.retriever
            if self._writes == 0:  # a reader: another process may have written since the last search
                self._take_others_writes()
            return retriever.search_many(queries, top_k=top_k, scope=scope)
        except Exception as exc:  # what the full disk left unanswerable (store.py answers the rest)
            full = diskspace.as_disk_full(exc, self.index_dir)
            if full is None or full is exc:
                raise
            raise full from exc
        finally:
            if self._store is not None and self._store.unavailable:  # opened again next time
                with self._lock:
                    self._store = self._retriever = None

    def get_chunk(self, chunk_id: str) -> Hit | None:
        got = self.store.get([chunk_id])
        return got[0] if got else None

    def chunks_of(self, doc_id: str) -> list[Hit]:
        return self.store.chunks_of([doc_id])

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
import sqlite3
import threading
import uuid
from collections.abc import Callable, Iterator, Sequence
from contextlib import contextmanager
from dataclasses import replace
from pathlib import Path
from typing import TYPE_CHECKING, Any, TypeVar

from desktop_app.core.config import Config, load_config
from desktop_app.core.formats import FormatUnknown
from desktop_app.core.library import diskspace, integrity, reasons, seals
from desktop_app.core.library import sync as syncing
from desktop_app.core.library.chroma_client import (
    forget_embedded,
    library_id_of,
    make_client,
    namespaced,
    refresh_embedded,
    shared_client,
)
from desktop_app.core.library.damage import COMPLETE, StoreDamaged, damage_of
from desktop_app.core.library.datafolder import WriterLock, file_stamp
from desktop_app.core.library.documents import Chunk, DocumentInfo, Hit
from desktop_app.core.library.folder import KnowledgeFolder, matching
from desktop_app.core.library.manifest import (
    INDEXED,
    PENDING,
    Entry,
    Manifest,
    adopt_as_pending,
    indexed_rows,
    lacks_table,
    now_iso,
)
from desktop_app.core.library.names import display_name
from desktop_app.core.library.store import UPSERT_SLICE, UPSERT_SLICE_INTERACTIVE, ChromaStore
from desktop_app.core.library.sync import DocumentHandler, SyncReport, chunk_from_hit
from desktop_app.core.messages import Text, message
from desktop_app.core.models.embeddings import Embedder, make_embedder
from desktop_app.core.models.embeddings.base import collection_name
from desktop_app.core.sqlite_repair import damage as sqlite_damage
from desktop_app.core.sqlite_repair import set_aside
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
_T = TypeVar("_T")
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
        # Told what was found damaged in index/ and rebuilt (the Desk passes its on_notice).
        self.on_notice: Callable[[Text], None] = lambda note: log.warning("%s", note)
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
        self._pointer_damage: str | None = None  # why the pointer was not followed (a writer repairs it)
        # What was found damaged in index/ and rebuilt (damage.py), told once as it happens.
        self.notices: list[Text] = []
        self._search_notes = threading.local()  # warnings of each thread's last search
        self._foreign_told: dict[str, None] = {}  # foreign chunks logged outside a search since the last sync
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
        """The build of the index in use ("" for the first); see ``_generation_pointer``. A pointer
        that names no build here (empty, garbled, its build deleted) falls back to the newest
        complete build, never to an empty library; a writer then sets it aside (``_repair_pointer``)."""
        if self._generation is None:
            pointer = self._pointer_path = self._generation_pointer
            self._pointer_seen = file_stamp(pointer)
            generation, why = self._read_pointer(pointer)
            if why is not None:
                generation = self._newest_build()
                self._notice(
                    message(
                        reasons.DAMAGED_POINTER,
                        path=str(pointer),
                        why=why,
                        build=self._build_name(generation),
                    )
                )
            self._generation, self._pointer_damage = generation, why
        return self._generation

    def _build_dir(self, generation: str) -> Path:
        base = self._base_collection
        return self.index_dir / namespaced(f"{base}__{generation}" if generation else base, self.library_id)

    def _build_name(self, generation: str) -> str:
        return self._build_dir(generation).name

    def _read_pointer(self, pointer: Path) -> tuple[str, str | None]:
        """The build the pointer names, and why it cannot be followed (None: it can)."""
        try:
            text = pointer.read_bytes().decode("ascii").strip()
        except FileNotFoundError:  # the first build, unless only rebuilt ones are here
            if self._build_dir("").is_dir() or not self._rebuilt_builds():
                return "", None
            return "", "missing"
        except UnicodeDecodeError:
            return "", "not text"
        except OSError as exc:
            return "", exc.strerror or str(exc)
        if not text:
            return "", "empty"
        if _GENERATION.fullmatch(text):
            if self._build_dir(text).is_dir():
                return text, None
            return text, f"{text}: no such build"
        if text.isprintable() and any(build in text for build in self._builds_here()):
            raise FormatUnknown(pointer)  # text naming a build that is here, in a form this version never writes
        return "", "garbled"

    def _builds_here(self) -> list[str]:
        """The suffixes of this model's index builds here besides the first, in any form."""
        prefix = namespaced(self._base_collection, self.library_id) + "__"
        try:
            names = [e.name for e in os.scandir(self.index_dir) if e.is_dir(follow_symlinks=False)]
        except OSError:
            return []
        return [n[len(prefix) :] for n in names if n.startswith(prefix) and len(n) > len(prefix)]

    def _rebuilt_builds(self) -> list[str]:
        """The rebuilt builds of this model's index here (``r`` + 12 hex digits), complete or not."""
        return [b for b in self._builds_here() if _GENERATION.fullmatch(b)]

    def _newest_build(self) -> str:
        """The build to answer from when the pointer cannot be read: the newest complete rebuild,
        else the first build, else the rebuild with the most documents indexed (a `reindex` cut
        short beats an empty library; the next sync completes it)."""
        complete, partial = [], []
        for generation in self._rebuilt_builds():
            folder = self._build_dir(generation)
            try:
                complete.append(((folder / COMPLETE).stat().st_mtime, generation))
            except OSError:
                partial.append((indexed_rows(folder / "manifest.sqlite3"), generation))
        if complete:
            return max(complete)[1]
        if self._build_dir("").is_dir() or not partial:
            return ""
        return max(partial)[1]

    def _repair_pointer(self) -> None:
        """A writer's part of a pointer that could not be read: set aside and written again to
        name the build in use (absent: the first build)."""
        if self._pointer_damage is None:
            return
        pointer, generation = self._generation_pointer, self.generation
        if pointer.exists() or pointer.is_symlink():
            aside = set_aside(pointer)
            self._notice(
                message(
                    reasons.DAMAGED_POINTER_ASIDE,
                    path=str(pointer),
                    aside=str(aside),
                    build=self._build_name(generation),
                )
            )
        if generation:
            self._switch_generation(generation)
        self._pointer_seen = file_stamp(pointer)
        self._pointer_damage = None

    def _notice(self, note: Text) -> None:
        """Tell the user what was found damaged and rebuilt: inside a search, among its warnings
        (its caller shows them: the CLI's `warning:` line, the answer's note); elsewhere through
        ``on_notice``. Kept in ``notices`` too, for the window's knowledge panel."""
        self.notices.append(note)
        notes = self._search_notes
        if getattr(notes, "searching", False):
            log.info("%s", note)
            notes.warnings.append(note)
        else:
            self.on_notice(note)

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
                self._client = self._embedded_client()
        return self._client

    def _embedded_client(self) -> Any:
        """The client of this data folder's own Chroma (in the app's child process, if it runs one);
        damaged files are said as such (StoreDamaged), never as Chroma's internal error."""
        try:
            return make_client(self.index_dir, self._server.url if self._server else "")
        except Exception as exc:
            why = damage_of(exc)
            if why is None:
                raise
            forget_embedded(self._store_file.parent)  # chromadb keeps the failed one for the folder
            raise StoreDamaged(self._store_file, why) from exc

    @property
    def _store_file(self) -> Path:
        return self.index_dir / "chroma" / "chroma.sqlite3"

    def _repairing(self, write: Callable[[], _T]) -> _T:
        """Run a write (the caller holds the writer lock); a damaged vector store met on the way is
        set aside and the write runs once more, on a new, empty one that it fills again."""
        try:
            return write()
        except StoreDamaged as exc:
            if self.library_id:  # a shared server's store: not in this folder, not this app's to move
                raise
            self._set_store_aside(exc)
        return write()

    def _set_store_aside(self, exc: StoreDamaged) -> None:
        """Close everything opened on the damaged store, move its folder aside and start afresh:
        each manifest's rows then disagree with the empty store, and the sync re-embeds them."""
        with self._lock:
            self._detach_index()[-1]()
            self._handlers = None  # the photo gallery lives in the same store
            if self._server is not None:
                self._server.stop()
                self._server = None
            self._client = None
            forget_embedded(self._store_file.parent)
            folder = self.index_dir / "chroma"
            aside = set_aside(folder)
            self._notice(message(reasons.DAMAGED_STORE, path=str(folder), why=exc.why, aside=str(aside)))
            # Photos live in the same store (the gallery): their rows go back to pending as well.
            photos = [e for e in self.manifest.all().values() if e.kind != "text" and e.status == INDEXED]
            self.manifest.put_many([replace(e, status=PENDING) for e in photos])

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
                # this folder's own files: damage there is named as such (StoreDamaged)
                damaged_file=None if self.library_id else self._store_file,
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
        once per search (one note naming the files, however many reads of it met them) or once per
        sync elsewhere, and send their documents back to pending, so the next sync re-embeds them."""
        notes = self._search_notes
        searching = getattr(notes, "searching", False)
        if searching:  # one note covers every chunk this search left out
            notes.foreign.update(dict.fromkeys(chunk_ids))
            about = list(notes.foreign)
        else:
            about = [c for c in dict.fromkeys(chunk_ids) if c not in self._foreign_told]
            if not about:
                return
            self._foreign_told.update(dict.fromkeys(about))
        by_doc = {e.doc_id: e for e in self.manifest.all().values()}
        docs = {integrity.doc_of_chunk(c) for c in about}
        back = [replace(e, status=PENDING) for d, e in by_doc.items() if d in docs and e.status == INDEXED]
        if back:
            self.manifest.put_many(back)
        # Named by file whatever its row says now (an earlier read may have sent it to pending).
        names = ", ".join(sorted(display_name(by_doc[d].name) for d in docs if d in by_doc))
        where = self.store.location
        note = (
            message(reasons.FOREIGN_CHUNKS, count=len(about), location=where, names=names)
            if names
            else message(reasons.FOREIGN_CHUNKS_NO_FILE, count=len(about), location=where)
        )
        if not searching:
            log.warning("%s", note)
            return
        # The search's callers show its notes (the CLI's `warning:` line, the chat's note): logged
        # as a warning too, the CLI would print it twice.
        log.info("%s", note)
        previous = getattr(notes, "foreign_note", None)
        notes.warnings[:] = [w for w in notes.warnings if w is not previous] + [note]
        notes.foreign_note = note

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
            self._manifest = self._open_manifest(path)
        return self._manifest

    def _manifest_damage(self, path: Path) -> str | None:
        """Why the manifest at ``path`` cannot be trusted (None: it can, or it is simply new). An
        empty or missing one counts only where the build has a keyword index: it listed documents."""
        listed = (self.collection_dir / "bm25").is_dir()
        if not path.exists():
            return "missing" if listed else None
        if path.stat().st_size == 0:
            return "an empty file" if listed else None
        return sqlite_damage(path) or lacks_table(path)

    def _open_manifest(self, path: Path) -> Manifest:
        why = self._manifest_damage(path)
        if why is None:
            try:
                return Manifest(path)
            except sqlite3.DatabaseError as exc:
                why = damage_of(exc)
                if why is None:  # no damage; with a few KB free, WAL's files cannot even be made
                    full = diskspace.as_disk_full(exc, self.index_dir)
                    if full is not None:
                        raise full from exc
                    raise
        with self._writing():  # one process rebuilds it; another waits, then opens the new one
            if self._manifest_damage(path) is None:
                return Manifest(path)
            return self._rebuild_manifest(path, why)

    def _rebuild_manifest(self, path: Path, why: str) -> Manifest:
        """Set the damaged manifest aside and make a new one: the rows that can still be read, then a
        row for each document only the vector store still knows, from its chunks' metadata. Those
        have no content hash: search goes on finding them, and the next sync indexes them again
        from the knowledge folder (as it does the rows read back as pending)."""
        aside = set_aside(path) if path.exists() else None
        manifest = Manifest(path)
        kept = manifest.salvage(aside) if aside is not None else 0
        known = {e.doc_id for e in manifest.all().values()}
        try:
            stored = self.store.documents()
        except StoreDamaged:  # rebuilt too, by the writer that meets it
            stored = {}
        manifest.put_many(
            [
                Entry(source, doc_id, "", 0, 0, chunks, INDEXED, None, now_iso(), "text", scope)
                for doc_id, (source, scope, chunks) in sorted(stored.items())
                if doc_id not in known and source
            ]
        )
        again = sum(e.status != INDEXED or not e.sha256 for e in manifest.all().values())
        code = reasons.DAMAGED_MANIFEST if aside is not None else reasons.MISSING_MANIFEST
        self._notice(message(code, path=str(path), why=why, aside=str(aside), kept=kept, pending=again))
        return manifest

    @property
    def keyword(self) -> KeywordIndex:
        if self._keyword is None:
            from desktop_app.core.library.bm25 import KeywordIndex

            keyword = KeywordIndex(self.collection_dir / "bm25", self.config.retrieval.translate)
            if keyword.set_aside is not None:  # damaged: refilled from the vector store
                self._notice(self._derived_damage(keyword.path, keyword.load_error or "", keyword.set_aside))
            elif not keyword.path.exists() and self._lists_text():  # deleted: refilled as well
                self._notice(message(reasons.MISSING_DERIVED, path=str(keyword.path)))
            self._keyword = keyword
        return self._keyword

    @staticmethod
    def _derived_damage(path: Path, why: str, aside: Path) -> Text:
        return message(reasons.DAMAGED_DERIVED, path=str(path), why=why, aside=str(aside))

    def _lists_text(self) -> bool:
        """The manifest lists an indexed text document (so the derived indexes should hold some)."""
        return any(e.status == INDEXED and e.kind == "text" and e.chunks for e in self.manifest.all().values())

    @property
    def dense(self) -> DenseIndex | None:
        """Exact in-memory dense search (dense.py) while the vectors fit
        ``retrieval.exact_dense_mb``; None means Chroma's HNSW index answers dense queries."""
        if self._dense is None:
            with self._lock:
                if self._dense is None:
                    missing = not (self.collection_dir / "dense" / "rows.json").exists()
                    dense = syncing.open_dense(
                        self.collection_dir / "dense",
                        self.config.retrieval.exact_dense_mb,
                        self.store,
                        self.manifest,
                        self._embedder_dim(),
                        self._writer,
                    )
                    if dense is not None and dense.damage is not None:  # damaged: refilled
                        self._notice(self._derived_damage(dense.directory, *dense.damage))
                    elif dense is not None and missing and self._lists_text():  # deleted: refilled
                        self._notice(message(reasons.MISSING_DERIVED, path=str(dense.directory)))
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
        self._repair_pointer()
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
            return self._repairing(
                lambda: self._sync(self.scan(), task or NullTask(), prune=True, retry_failed=retry_failed)
            )

    def reindex(self, task: TaskState | None = None) -> SyncReport:
        """Rebuild this model's index from the knowledge folder, beside the one in use (a new
        Chroma collection, manifest, keyword and dense index), and switch to it only once it is
        complete: searches meanwhile, and after a failed, cancelled or killed rebuild, use the old one."""
        with self._writing(task):
            self._drop_stale_generations()
            return self._repairing(lambda: self._reindex(task))

    def _reindex(self, task: TaskState | None) -> SyncReport:
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
            (new.collection_dir / COMPLETE).write_text(now_iso() + "\n", encoding="ascii")
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
                report = self._repairing(lambda: self._sync(targets, task or NullTask(), prune=False))
            except (Cancelled, KeyboardInterrupt):
                # Left in the folder, the next sync (the window's watcher, at once) would index
                # what the user just cancelled: this add's new copies not fully indexed go. Ctrl-C
                # in `kdesk add` is the same: the add did not happen.
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
            rel
            for rel in copies
            if rel not in known and (rel not in entries or entries[rel].status != INDEXED)
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
        self._foreign_told.clear()  # this sync re-embeds them: a new change is told again
        if prune:  # missing or altered chunks go back to pending: re-embedded below
            report.repaired = integrity.check_store(self.store, self.manifest, self.collection_dir)
        changes = syncing.find_changes(
            self, files, report, prune=prune, force=force, retry_failed=retry_failed
        )
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
        notes = self._search_notes
        notes.warnings, notes.foreign = [], {}  # foreign: chunk ids this search left out
        if self.is_empty():
            return []
        notes.searching = True
        try:
            if self._writes == 0:
                self._follow_generation()  # another process's `reindex` switched to its new build
            retriever = self.retriever
            if self._writes == 0:  # a reader: another process may have written since the last search
                self._take_others_writes()
            hits = retriever.search_many(queries, top_k=top_k, scope=scope)
            if not hits:
                self._check_store_holds_chunks()
            return hits
        except Exception as exc:  # what the full disk left unanswerable (store.py answers the rest)
            full = diskspace.as_disk_full(exc, self.index_dir)
            if full is None or full is exc:
                raise
            raise full from exc
        finally:
            notes.searching = False
            if self._store is not None and self._store.unavailable:  # opened again next time
                with self._lock:
                    self._store = self._retriever = None

    def _check_store_holds_chunks(self) -> None:
        """No hit at all: say so when it is because the vector store lost what the manifest lists
        (its files deleted or emptied), rather than let it pass for an answer."""
        listed = sum(e.chunks for e in self.manifest.all().values() if e.status == INDEXED and e.kind == "text")
        if listed and self.store.count() == 0:
            where = self.store.location if self.library_id else str(self._store_file.parent)
            self._notice(message(reasons.STORE_EMPTIED, path=where, count=listed))

    def get_chunk(self, chunk_id: str) -> Hit | None:
        got = self.store.get([chunk_id])
        return got[0] if got else None

    def chunks_of(self, doc_id: str) -> list[Hit]:
        return self.store.chunks_of([doc_id])

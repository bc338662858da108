"""KnowledgeBase: a folder of the user's documents turned into a searchable, persistent index.

The knowledge folder (<data-dir>/knowledge) is the source of truth; everything under
<data-dir>/index is derived and can be rebuilt. Change detection uses content hashes (sha256),
with (size, mtime) as a shortcut that only ever skips hashing, never re-embedding.

Crash safety: a manifest row goes to "pending" before any of its chunks are touched and to
"indexed" only after every chunk is in the vector store; `sync` redoes pending rows and re-feeds
the keyword index from the vector store when the two disagree.
"""

from __future__ import annotations

import functools
import hashlib
import json
import logging
import os
import shutil
import threading
from collections.abc import Callable, Iterable, Iterator, Sequence
from contextlib import contextmanager
from dataclasses import dataclass, field
from pathlib import Path
from typing import Protocol

from desktop_app.core.config import Config, load_config
from desktop_app.core.library.datafolder import DataFolderBusy, WriterLock, inside, is_data_folder
from desktop_app.core.library.documents import Chunk, DocumentInfo, Hit, ParseError
from desktop_app.core.library.manifest import FAILED, INDEXED, PENDING, Entry, Manifest, now_iso
from desktop_app.core.library.scopes import scope_of
from desktop_app.core.library.store import (
    UPSERT_SLICE,
    UPSERT_SLICE_INTERACTIVE,
    ChromaStore,
    collection_name,
    library_id_of,
    make_client,
    namespaced,
    place_once,
    shared_client,
)
from desktop_app.core.models.embeddings import Embedder, make_embedder
from desktop_app.core.tasks import NullTask, TaskState, check

log = logging.getLogger(__name__)

# Files in the knowledge folder that are never indexed.
_SKIP_NAMES = {"README.md", "readme.md"}
_TEMP_SUFFIXES = (".tmp", ".part", ".crdownload", ".swp", "~")


@dataclass
class SyncReport:
    added: list[str] = field(default_factory=list)
    updated: list[str] = field(default_factory=list)
    unchanged: list[str] = field(default_factory=list)
    removed: list[str] = field(default_factory=list)
    failed: list[tuple[str, str]] = field(default_factory=list)
    # Left out on purpose, never copied: hidden, too large, unsupported, symlinks, a data folder.
    skipped: list[tuple[str, str]] = field(default_factory=list)
    cancelled: bool = False

    @property
    def changed(self) -> int:
        return len(self.added) + len(self.updated) + len(self.removed)

    def to_dict(self) -> dict:
        return {
            "added": self.added,
            "updated": self.updated,
            "unchanged": self.unchanged,
            "removed": self.removed,
            "failed": [{"name": n, "error": e} for n, e in self.failed],
            "skipped": [{"name": n, "reason": r} for n, r in self.skipped],
            "cancelled": self.cancelled,
        }


class DocumentHandler(Protocol):
    """A plug-in that indexes one kind of file other than text (e.g. reference photos)."""

    kind: str
    suffixes: set[str]

    def index(self, doc_id: str, path: Path, rel: str, scope: str) -> int: ...

    def delete(self, doc_ids: Iterable[str]) -> None: ...

    def stored_doc_ids(self) -> set[str]: ...


def sha256_file(path: Path) -> str:
    h = hashlib.sha256()
    with open(path, "rb") as f:
        for block in iter(lambda: f.read(1 << 20), b""):
            h.update(block)
    return h.hexdigest()


class KnowledgeBase:
    def __init__(
        self,
        data_dir: Path | str,
        config: Config | None = None,
        embedder: Embedder | None = None,
        *,
        own_process: bool = False,
    ) -> None:
        self.data_dir = Path(data_dir).expanduser().resolve()
        self.knowledge_dir = self.data_dir / "knowledge"
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
        self._client = None
        # Chroma in a child process (the GUI asks for it, see index/chroma_server.py).
        self.own_process = own_process and not self.config.index.chroma_url
        self._server = None
        self.store_note = ""  # why the child process was not used, when it failed to start
        self._store: ChromaStore | None = None
        self._manifest: Manifest | None = None
        self._keyword = None
        self._dense = None  # DenseIndex, or False when it does not fit retrieval.exact_dense_mb
        self._handlers: dict[str, DocumentHandler] | None = None
        self._retriever = None  # retrieval.Retriever, built on the first search

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
        from desktop_app.core.models.embeddings.default import DEFAULT_MODEL_ID

        name = self.config.embedding.model.strip()
        if name.startswith("openai:") and self.config.embedding.url:
            # Must equal the loaded embedder's name, or manifest and store pick different collections.
            from desktop_app.core.models.embeddings.openai_compat import openai_embedder_name

            return openai_embedder_name(name.split(":", 1)[1], self.config.embedding.url)
        return DEFAULT_MODEL_ID if name in ("", "default") else name

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
    def _chunks_collection(self) -> str:
        return collection_name("chunks", self.embedder_name, self._embedder_dim())

    @property
    def collection(self) -> str:
        """The chunk collection's name as stored (on a shared server, in this library's namespace);
        it also names the derived state in index/<collection>/."""
        return namespaced(self._chunks_collection, self.library_id)

    @property
    def chroma_client(self):
        if self._client is None:
            url = ""
            if self.own_process:
                from desktop_app.core.library.chroma_server import ChromaServer, ChromaServerError

                server = ChromaServer(self.index_dir / "chroma")
                try:
                    url = server.start()
                    self._server = server
                except (ChromaServerError, OSError) as exc:
                    # Still works, embedded: the window may stutter while indexing.
                    self.store_note = f"Chroma child process unavailable ({exc}); using it in-process"
                    log.warning("%s", self.store_note)
            if self.library_id:  # a shared server: a client confined to this library's namespace
                self._client = shared_client(self.config, self.library_id)
            else:
                self._client = make_client(self.index_dir, url)
        return self._client

    @property
    def store(self) -> ChromaStore:
        if self._store is None:
            client = self.chroma_client
            # Embedded inside the GUI (its Chroma process failed to start): small upserts, so the
            # GIL is never held long (see store.UPSERT_SLICE).
            interactive = self.own_process and self._server is None
            self._store = ChromaStore(
                client,
                self._chunks_collection,  # the shared server's client adds the namespace
                location=self.config.index.chroma_url or str(self.index_dir),
                upsert_slice=UPSERT_SLICE_INTERACTIVE if interactive else UPSERT_SLICE,
            )
        return self._store

    @property
    def collection_dir(self) -> Path:
        """Per-collection derived state: manifest and keyword index."""
        return self.index_dir / self.collection

    @property
    def manifest(self) -> Manifest:
        if self._manifest is None:
            path = self.collection_dir / "manifest.sqlite3"
            if self.library_id and not path.exists():
                self._adopt_legacy_manifest(path)
            self._manifest = Manifest(path)
        return self._manifest

    def _adopt_legacy_manifest(self, path: Path) -> None:
        """A library new to its namespace on the shared server, whose documents were indexed without
        one (by an older release on that server, or in the embedded index), lists them all as pending
        rather than looking empty; the next sync re-indexes them from the knowledge folder. Written
        aside and put in place whole, unless another process was first: a crash never leaves half a
        list, and a manifest in use is never replaced."""
        legacy = self.index_dir / self._chunks_collection / "manifest.sqlite3"
        if not legacy.exists():
            return
        old = Manifest(legacy)
        rows = [_with(e, status=PENDING, chunks=0, error=None, indexed_at=None) for e in old.all().values()]
        old.close()
        if not rows:
            return
        tmp = path.with_name(f"{path.name}.adopting{os.getpid()}")
        new = Manifest(tmp)
        new.put_many(rows)
        new.close()
        if place_once(tmp, path):
            log.warning(
                "%d documents indexed without a library namespace are pending in this library's own one "
                "on the Chroma server: the next sync re-indexes them",
                len(rows),
            )

    @property
    def keyword(self):
        if self._keyword is None:
            from desktop_app.core.library.bm25 import KeywordIndex

            self._keyword = KeywordIndex(self.collection_dir / "bm25")
        return self._keyword

    @property
    def dense(self):
        """Exact in-memory dense search (index/dense.py) while the vectors fit
        ``retrieval.exact_dense_mb``; None means Chroma's HNSW index answers dense queries."""
        if self._dense is None:
            with self._lock:
                if self._dense is None:
                    self._dense = self._open_dense()
        return self._opened_dense()

    def _opened_dense(self):
        """The dense index if this process has it open (an empty one is falsy: it has a len)."""
        return self._dense if self._dense is not None and self._dense is not False else None

    def _open_dense(self):
        from desktop_app.core.library.dense import DenseIndex

        directory = self.collection_dir / "dense"
        cap = self.config.retrieval.exact_dense_mb * 1e6
        dim = self._embedder_dim()
        if cap <= 0 or self.store.count() * dim * 4 > cap:
            if self._writer.held:
                shutil.rmtree(directory, ignore_errors=True)  # never maintained from now on: not trusted
            return False
        # Without the writer lock, a copy rebuilt here stays in memory: another process may be writing.
        dense = DenseIndex(directory, dim, read_only=not self._writer.held)
        if dense.read_only and dense.needs_rebuild:
            try:  # nobody writing now: the files are a crash's leftovers, repaired on disk at once
                self._writer.acquire(wait=False)
            except DataFolderBusy:
                pass  # a writer is at work and will flush them itself
            else:
                try:
                    dense.set_writer(True)
                    self._reconcile_dense(dense, self.manifest.all())
                    return dense
                finally:
                    dense.set_writer(False)
                    self._writer.release()
        self._reconcile_dense(dense, self.manifest.all())
        return dense

    def _reconcile_dense(self, dense, entries: dict[str, Entry]) -> None:
        """Make the dense index hold exactly the indexed text documents' vectors, read back from
        the vector store (all of them when its files were missing or not flushed before a crash)."""
        want = {e.doc_id for e in entries.values() if e.status == INDEXED and e.kind == "text" and e.chunks}
        if dense.needs_rebuild:
            dense.clear()
            rows = [r for r in self.store.records() if r[1] in want]
        else:
            have = dense.doc_ids()
            if have - want:
                dense.delete_docs(have - want)
            rows = self.store.records(sorted(want - have)) if want - have else []
        if rows:
            import numpy as np

            dense.upsert(
                [r[0] for r in rows],
                [r[1] for r in rows],
                [r[2] for r in rows],
                np.stack([r[3] for r in rows]),
            )
        dense.flush()

    def _fit_dense(self) -> None:
        """After a sync: drop the in-memory copy once it outgrows ``retrieval.exact_dense_mb``."""
        dense = self._opened_dense()
        if dense is None:
            return
        if dense.nbytes > self.config.retrieval.exact_dense_mb * 1e6:
            log.info("dense index exceeds retrieval.exact_dense_mb: Chroma's HNSW index answers from now on")
            shutil.rmtree(dense.directory, ignore_errors=True)
            self._dense = False
            self._retriever = None
        else:
            dense.flush()

    def _handler_for(self, suffix: str) -> DocumentHandler | None:
        from desktop_app.core.library.parsers import IMAGE_SUFFIXES

        if suffix not in IMAGE_SUFFIXES:
            return None
        if self._handlers is None:
            self._handlers = {}
            try:
                from desktop_app.core.identify.gallery import GalleryHandler

                handler = GalleryHandler(self)
                self._handlers = {s: handler for s in handler.suffixes}
            except ImportError as exc:
                log.warning("image support unavailable: %s", exc)
        return self._handlers.get(suffix)

    def close(self) -> None:
        with self._lock:
            if self._keyword is not None:
                self._keyword.flush()
            if self._opened_dense() is not None:
                self._dense.flush()
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

    def __exit__(self, *exc) -> None:
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
            finally:
                self._writes -= 1
                if self._writes == 0:
                    dense = self._opened_dense()
                    if dense is not None:
                        dense.set_writer(False)
                    self._writer.release()

    def _take_others_writes(self, writer: bool = False) -> None:
        """Reload the keyword and dense indexes if another process flushed them since this one
        last looked (a stat call each when nothing changed)."""
        if self._keyword is not None:
            self._keyword.reload_if_changed()
        dense = self._opened_dense()
        if dense is not None:
            if writer:
                dense.set_writer(True)
            dense.reload_if_changed()

    # ------------------------------------------------------------------ the folder
    def never_indexed(self, folder: Path) -> str | None:
        """Why a folder (resolved) must never be indexed: this data folder or another one."""
        if folder == self.data_dir:
            return "Knowledge Desk's own data folder: never indexed"
        if is_data_folder(folder):
            return "another Knowledge Desk library's data folder: never indexed"
        return None

    def scan(self) -> dict[str, Path]:
        """Every candidate file in the knowledge folder, by relative posix path.
        Symlinked folders are not followed (no loops); hidden and temporary files are skipped."""
        return dict(self._candidates())

    def is_empty(self) -> bool:
        """No file to index at all (stops at the first one: no model, no index is opened)."""
        return next(self._candidates(), None) is None

    def _candidates(self) -> Iterator[tuple[str, Path]]:
        for root, dirs, files in os.walk(self.knowledge_dir, followlinks=False):
            # A data folder copied in by an older version (or by hand) is never indexed.
            dirs[:] = sorted(
                d for d in dirs if not d.startswith(".") and not self.never_indexed(Path(root, d).resolve())
            )
            rel_root = Path(root).relative_to(self.knowledge_dir)
            for name in sorted(files):
                if name.startswith(".") or name.startswith("~$") or name.endswith(_TEMP_SUFFIXES):
                    continue
                rel = (rel_root / name).as_posix()
                if rel in _SKIP_NAMES:
                    continue
                path = Path(root) / name
                if path.is_symlink() and self._into_index(path):
                    continue
                yield rel, path

    def _into_index(self, path: Path) -> bool:
        """A symlink in the knowledge folder that leads into the data folder's derived state."""
        try:
            real = path.resolve()
        except (OSError, RuntimeError):
            return False
        return inside(real, self.data_dir) and not inside(real, self.knowledge_dir.resolve())

    def doc_id(self, rel: str) -> str:
        from desktop_app.core.library.chunking import make_doc_id

        return make_doc_id(rel)

    # ------------------------------------------------------------------ public operations
    def list_documents(self) -> list[DocumentInfo]:
        return [e.info() for e in self.manifest.all().values()]

    def sync(self, task: TaskState | None = None) -> SyncReport:
        """Index new and changed files, drop removed ones. Unchanged files cost a stat call."""
        with self._writing(task):
            return self._sync(self.scan(), task or NullTask(), prune=True)

    def reindex(self, task: TaskState | None = None) -> SyncReport:
        """Rebuild this model's index from the knowledge folder."""
        with self._writing(task):
            entries = self.manifest.all()
            self._drop([e.name for e in entries.values()], entries)
            return self._sync(self.scan(), task or NullTask(), prune=True, force=True)

    def add(
        self, paths: Sequence[Path | str], scope: str = "shared", task: TaskState | None = None
    ) -> SyncReport:
        """Copy files or folders into the knowledge folder (under @scope/ for a non-shared scope)
        and index them. Files already inside the knowledge folder are indexed in place. The data
        folder is never indexed: adding it, or anything in its derived part (index/, config), is
        refused; a folder that contains it (or another library's) is added without it. Hidden,
        unsupported and too large files are skipped before anything is copied."""
        from desktop_app.core.library.fileops import import_paths, sanitize_component

        prefix = "" if scope in ("", "shared") else "@" + sanitize_component(scope)
        targets: dict[str, Path] = {}
        outside: list[Path] = []
        refused: list[tuple[str, str]] = []
        knowledge = self.knowledge_dir.resolve()
        for raw in paths:
            src = Path(raw).expanduser()
            try:
                real = src.resolve()
            except (OSError, RuntimeError):
                outside.append(src)  # import_paths reports why it cannot be read
                continue
            if inside(real, self.data_dir) and not inside(real, knowledge):
                refused.append((str(src), self._refusal(real)))
                continue
            if not inside(real, knowledge):
                outside.append(src)
                continue
            rel_in = real.relative_to(knowledge).as_posix()
            if src.is_dir():
                targets.update(
                    (r, p) for r, p in self.scan().items() if rel_in == "." or r.startswith(rel_in + "/")
                )
            else:
                targets[rel_in] = src
        with self._writing(task):
            copied = import_paths(
                self.knowledge_dir,
                outside,
                prefix=prefix,
                screen_file=self._screen_file,
                screen_folder=self.never_indexed,
            )
            for dest in copied.copied:
                targets[dest.resolve().relative_to(knowledge).as_posix()] = dest
            report = self._sync(targets, task or NullTask(), prune=False)
        report.failed[:0] = refused + list(copied.failed)
        report.skipped[:0] = copied.skipped
        return report

    def _refusal(self, real: Path) -> str:
        if real == self.data_dir:
            return (
                "this is Knowledge Desk's own data folder: its documents are already in the library "
                f"(add files from elsewhere, or put them in {self.knowledge_dir})"
            )
        return "this is inside Knowledge Desk's data folder (derived index files, never indexed)"

    def _screen_file(self, src: Path, st: os.stat_result) -> str | None:
        """Why a file is not copied in at all (checked before any copy)."""
        from desktop_app.core.library.parsers import IMAGE_SUFFIXES, SUPPORTED_SUFFIXES

        suffix = src.suffix.lower()
        if suffix not in SUPPORTED_SUFFIXES and suffix not in IMAGE_SUFFIXES:
            return f"unsupported file type: {suffix or '(no extension)'}"
        limit = self.config.index.max_document_mb
        if limit > 0 and suffix not in (".pdf", ".docx") and suffix not in IMAGE_SUFFIXES:
            if st.st_size / 1e6 > limit:
                return (
                    f"too large: {st.st_size / 1e6:.1f} MB > limit {limit:g} MB (index.max_document_mb); "
                    "split the file or raise the limit"
                )
        return None

    def remove(self, names: Sequence[str]) -> list[str]:
        """Delete documents (files and their chunks). Names are relative paths or folder prefixes."""
        with self._writing():
            entries = self.manifest.all()
            doomed: list[str] = []
            for name in names:
                key = name.strip("/").replace("\\", "/")
                if key in entries:
                    doomed.append(key)
                else:
                    doomed.extend(n for n in entries if n.startswith(key + "/"))
            doomed = sorted(set(doomed))
            self._drop(doomed, entries)
            for rel in doomed:
                path = self.knowledge_dir / rel
                try:
                    if path.is_file() or path.is_symlink():
                        path.unlink()
                except OSError as exc:
                    log.warning("could not delete %s: %s", path, exc)
            self._prune_empty_dirs()
            return doomed

    def search(self, query: str, top_k: int | None = None, scope: str | None = None) -> list[Hit]:
        """Best chunks for a query (see retrieval.py for the two-stage pipeline)."""
        return self.search_many([query], top_k=top_k, scope=scope)

    def search_many(
        self, queries: Sequence[str], top_k: int | None = None, scope: str | None = None
    ) -> list[Hit]:
        """Several queries, one batched embedding call, merged and deduplicated (best score kept)."""
        retriever = self.retriever
        if self._writes == 0:  # a reader: another process may have written since the last search
            self._take_others_writes()
        return retriever.search_many(queries, top_k=top_k, scope=scope)

    @property
    def retriever(self):
        """The two-stage retriever (retrieval.py): dense + BM25 fused, then the reranker if installed."""
        if self._retriever is None:
            from desktop_app.core.library.rerank import load_reranker
            from desktop_app.core.library.retrieval import Retriever

            reranker = load_reranker(
                self.config.retrieval.reranker, self.data_dir, self.config.embedding.device
            )
            self._retriever = Retriever(
                self.store,
                self.keyword,
                self.embedder,
                self.config.retrieval,
                reranker=reranker,
                stored_scopes=self.manifest.scopes,
                dense=self.dense,
            )
        return self._retriever

    def apply_config(self, config: Config) -> None:
        """New settings for the same collection (the Desk reopens the knowledge base when the
        embedding model or the Chroma server changes): the next search uses the retrieval
        settings and reranker, the next indexing the chunking ones."""
        with self._lock:
            old, self.config = self.config, config
            self._retriever = None
            if old.retrieval.exact_dense_mb != config.retrieval.exact_dense_mb:
                if self._dense is False:
                    self._dense = None  # decided again on the next search: it may fit now
                else:
                    self._fit_dense()

    def get_chunk(self, chunk_id: str) -> Hit | None:
        got = self.store.get([chunk_id])
        return got[0] if got else None

    def chunks_of(self, doc_id: str) -> list[Hit]:
        return self.store.chunks_of([doc_id])

    # ------------------------------------------------------------------ internals
    def _prune_empty_dirs(self) -> None:
        for root, dirs, files in os.walk(self.knowledge_dir, topdown=False):
            p = Path(root)
            if p != self.knowledge_dir and not dirs and not files:
                try:
                    p.rmdir()
                except OSError:
                    pass

    def _drop(self, names: list[str], entries: dict[str, Entry]) -> None:
        """Remove documents' chunks everywhere, then their manifest rows (in that order)."""
        if not names:
            return
        rows = [entries[n] for n in names if n in entries]
        self.manifest.put_many([_with(e, status=PENDING) for e in rows])
        text_ids = [e.doc_id for e in rows if e.kind == "text"]
        if text_ids:
            self.store.delete_docs(text_ids)
            self.keyword.delete_docs(text_ids)
            self.keyword.flush()
            if self.dense is not None:
                self.dense.delete_docs(text_ids)
                self.dense.flush()
        for e in rows:
            if e.kind != "text":
                handler = self._handler_for(Path(e.name).suffix.lower())
                if handler is not None:
                    handler.delete([e.doc_id])
        self.manifest.delete([e.name for e in rows])

    def _reconcile_keyword(self, entries: dict[str, Entry]) -> None:
        """Make the keyword index hold exactly the indexed text documents (it may lag after a crash
        or be missing): re-feed it from the vector store, never by re-embedding."""
        want = {e.doc_id for e in entries.values() if e.status == INDEXED and e.kind == "text" and e.chunks}
        have = self.keyword.doc_ids()
        extra, missing = have - want, sorted(want - have)
        if extra:
            self.keyword.delete_docs(extra)
        for start in range(0, len(missing), 200):
            hits = self.store.chunks_of(missing[start : start + 200])
            self.keyword.upsert([chunk_from_hit(h) for h in hits])
        if extra or missing:
            self.keyword.flush()

    def _sync(self, files: dict[str, Path], task: TaskState, prune: bool, force: bool = False) -> SyncReport:
        from desktop_app.core.library.parsers import IMAGE_SUFFIXES, SUPPORTED_SUFFIXES

        report = SyncReport()
        entries = self.manifest.all()
        if prune:
            gone = sorted(set(entries) - set(files))
            self._drop(gone, entries)
            report.removed.extend(gone)
        self._reconcile_keyword(self.manifest.all())
        if self._opened_dense() is not None:
            self._reconcile_dense(self._dense, self.manifest.all())
        else:  # opened (and reconciled) now, so every write below keeps it in step with the store
            self.dense  # noqa: B018

        todo: list[tuple[str, Path, os.stat_result, str]] = []
        for rel, path in files.items():
            try:
                st = path.stat()
            except OSError as exc:
                report.failed.append((rel, f"cannot read: {exc.strerror or exc}"))
                continue
            old = entries.get(rel)
            if (
                not force
                and old is not None
                and old.status in (INDEXED, FAILED)
                and old.size == st.st_size
                and old.mtime_ns == st.st_mtime_ns
            ):
                report.unchanged.append(rel)
                if old.status == FAILED:
                    report.failed.append((rel, old.error or "failed"))
                continue
            try:
                digest = sha256_file(path)
            except OSError as exc:
                report.failed.append((rel, f"cannot read: {exc.strerror or exc}"))
                continue
            if not force and old is not None and old.status in (INDEXED, FAILED) and old.sha256 == digest:
                self.manifest.put(_with(old, size=st.st_size, mtime_ns=st.st_mtime_ns))
                report.unchanged.append(rel)
                if old.status == FAILED:
                    report.failed.append((rel, old.error or "failed"))
                continue
            todo.append((rel, path, st, digest))

        batch = _Batch(self)
        total = len(todo)
        try:
            for i, (rel, path, st, digest) in enumerate(todo):
                check(task)
                task.progress(i, total, rel)
                old = entries.get(rel)
                suffix = path.suffix.lower()
                kind = "image" if suffix in IMAGE_SUFFIXES else "text"
                entry = Entry(
                    name=rel,
                    doc_id=self.doc_id(rel),
                    sha256=digest,
                    size=st.st_size,
                    mtime_ns=st.st_mtime_ns,
                    chunks=0,
                    status=PENDING,
                    error=None,
                    indexed_at=None,
                    kind=kind,
                    scope=scope_of(rel),
                )
                self.manifest.put(entry)  # pending before any chunk is touched
                if old is not None:
                    self._delete_chunks(old)
                (report.updated if old is not None else report.added).append(rel)
                try:
                    if kind == "image":
                        handler = self._handler_for(suffix)
                        if handler is None:
                            raise ParseError(
                                "image support is not installed (reference photos need torch and the classifier packages)"
                            )
                        n = handler.index(entry.doc_id, path, rel, entry.scope)
                        self.manifest.put(_with(entry, chunks=n, status=INDEXED, indexed_at=now_iso()))
                        continue
                    if suffix not in SUPPORTED_SUFFIXES:
                        raise ParseError(f"unsupported file type: {suffix or '(no extension)'}")
                    chunks = self._chunk_file(path, rel, entry)
                except ParseError as exc:
                    self.manifest.put(_with(entry, status=FAILED, error=str(exc)))
                    report.failed.append((rel, str(exc)))
                    continue
                except Exception as exc:  # a parser bug must not stop the batch
                    log.exception("failed to index %s", rel)
                    msg = f"could not read: {type(exc).__name__}: {exc}"
                    self.manifest.put(_with(entry, status=FAILED, error=msg))
                    report.failed.append((rel, msg))
                    continue
                batch.add(entry, chunks)
                if batch.full():
                    batch.flush()
                    task.progress(i + 1, total, rel)
            batch.flush()
            task.progress(total, total, "")
        except BaseException:
            report.cancelled = True
            # Keep what was fully embedded; the rest stays pending and is redone by the next sync.
            batch.discard()
            self.keyword.flush()
            self._fit_dense()
            raise
        self.keyword.flush()
        self._fit_dense()
        return report

    def _delete_chunks(self, old: Entry) -> None:
        if old.kind == "text":
            self.store.delete_docs([old.doc_id])
            self.keyword.delete_docs([old.doc_id])
            if self._opened_dense() is not None:
                self._dense.delete_docs([old.doc_id])
        else:
            handler = self._handler_for(Path(old.name).suffix.lower())
            if handler is not None:
                handler.delete([old.doc_id])

    def _chunk_file(self, path: Path, rel: str, entry: Entry) -> list[Chunk]:
        from desktop_app.core.library.chunking import chunk_sections
        from desktop_app.core.library.parsers import parse_file

        limit = self.config.index.max_document_mb
        if limit > 0 and path.suffix.lower() not in (".pdf", ".docx"):
            _check_size(entry.size, limit)  # plain text: refuse before reading it into memory
        sections = parse_file(path)
        if limit > 0:
            _check_size(sum(len(s.text.encode("utf-8")) for s in sections), limit)
        cfg = self.config.index
        size = min(cfg.chunk_size, getattr(self.embedder, "max_chars", cfg.chunk_size))
        chunks = chunk_sections(
            sections,
            entry.doc_id,
            rel,
            strategy=cfg.chunker,
            size=size,
            overlap=min(cfg.chunk_overlap, size // 3),
            scope=entry.scope,
        )
        if not chunks:
            raise ParseError("empty document: no text")
        return chunks

    def embed_text(self, chunk: Chunk) -> str:
        """What the encoder sees for a chunk (the stored text stays the raw chunk): the heading
        path first unless the chunk already starts with it, so every chunk of a long document
        carries its title (retrieval.py / docs/retrieval-benchmarks.md)."""
        if chunk.heading_path:
            last = chunk.heading_path[-1]
            if last and last not in chunk.text[: len(last) + 16]:
                return " > ".join(chunk.heading_path) + "\n" + chunk.text
        return chunk.text


class _Batch:
    """Chunks of several documents embedded together (the encoder is fastest in large batches);
    documents are marked indexed only after their chunks are stored."""

    def __init__(self, kb: KnowledgeBase, target: int = 256) -> None:
        self.kb = kb
        self.target = max(target, kb.config.index.batch_size)
        self.entries: list[tuple[Entry, list[Chunk]]] = []
        self.n = 0

    def add(self, entry: Entry, chunks: list[Chunk]) -> None:
        self.entries.append((entry, chunks))
        self.n += len(chunks)

    def full(self) -> bool:
        return self.n >= self.target

    def flush(self) -> None:
        if not self.entries:
            return
        kb = self.kb
        chunks = [c for _, cs in self.entries for c in cs]
        vectors = kb.embedder.embed_documents([kb.embed_text(c) for c in chunks])
        kb.store.upsert(chunks, vectors)
        kb.keyword.upsert(chunks)
        if kb._opened_dense() is not None:
            kb._dense.upsert(
                [c.id for c in chunks], [c.doc_id for c in chunks], [c.scope for c in chunks], vectors
            )
        stamp = now_iso()
        kb.manifest.put_many(
            [_with(e, chunks=len(cs), status=INDEXED, indexed_at=stamp) for e, cs in self.entries]
        )
        self.entries, self.n = [], 0

    def discard(self) -> None:
        # Unflushed documents stay "pending" in the manifest and are redone by the next sync.
        self.entries, self.n = [], 0


def _check_size(nbytes: int, limit_mb: float) -> None:
    if nbytes / 1e6 > limit_mb:
        raise ParseError(
            f"too large: {nbytes / 1e6:.1f} MB of text > limit {limit_mb:g} MB (index.max_document_mb); "
            "split the file or raise the limit"
        )


def _with(e: Entry, **changes) -> Entry:
    d = dict(e.__dict__)
    d.update(changes)
    return Entry(**d)


def chunk_from_hit(h: Hit) -> Chunk:
    """A stored hit back as a Chunk (offsets relative to its own text)."""
    return Chunk(
        id=h.chunk_id,
        doc_id=h.doc_id,
        text=h.text,
        source=h.source,
        page=h.page,
        heading_path=h.heading_path,
        chunk_index=h.chunk_index,
        total_chunks=h.total_chunks,
        char_start=0,
        char_end=len(h.text),
        scope=h.scope,
    )

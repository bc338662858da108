"""The sync algorithm: which files changed, and their chunks written to every index in a crash-safe order.

Change detection uses content hashes (sha256), with (size, mtime) as a shortcut that only ever
skips hashing, never re-embedding. A manifest row goes to "pending" before any of its chunks are
touched and to "indexed" only after every chunk is in the vector store; a sync redoes pending rows
and re-feeds the keyword and dense indexes from the vector store when they disagree with it.
"""

from __future__ import annotations

import logging
import os
import queue
import shutil
import threading
from collections.abc import Iterable, Iterator
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import TYPE_CHECKING, Any, Protocol

import numpy as np

from desktop_app.core.config import IndexConfig
from desktop_app.core.library import reasons
from desktop_app.core.library.datafolder import DataFolderBusy, WriterLock
from desktop_app.core.library.documents import Chunk, Hit, ParseError
from desktop_app.core.library.folder import PARSED_SIZE_SUFFIXES
from desktop_app.core.library.languages import text_lang
from desktop_app.core.library.manifest import FAILED, INDEXED, PENDING, Entry, now_iso
from desktop_app.core.library.scopes import scope_of
from desktop_app.core.messages import message
from desktop_app.core.paths import NotRegularFile, ensure_regular, sha256_file
from desktop_app.core.tasks import TaskState, check

if TYPE_CHECKING:
    from desktop_app.core.library.bm25 import KeywordIndex
    from desktop_app.core.library.dense import DenseIndex
    from desktop_app.core.library.knowledge import KnowledgeBase
    from desktop_app.core.library.ocr import OcrJob
    from desktop_app.core.library.store import ChromaStore

log = logging.getLogger(__name__)

BATCH_CHUNKS = 256  # chunks embedded together at least (the encoder is fastest in large batches)


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
    # What became of each added or updated file: its chunks and the pages OCR read, or a photo.
    outcomes: dict[str, dict[str, Any]] = field(default_factory=dict)
    # Documents whose chunks in the vector store were missing or altered, re-embedded (integrity.py).
    repaired: list[tuple[str, str]] = field(default_factory=list)

    @property
    def changed(self) -> int:
        return len(self.added) + len(self.updated) + len(self.removed)

    def to_dict(self) -> dict[str, Any]:
        # Names as shown (U+FFFD for bytes that are not UTF-8); "not_utf8" has their escaped forms.
        from desktop_app.core.library.names import display_name as shown
        from desktop_app.core.library.names import is_utf8

        every = [*self.added, *self.updated, *self.unchanged, *self.removed]
        every += [n for n, _ in self.failed + self.skipped]
        return {
            "added": [shown(n) for n in self.added],
            "updated": [shown(n) for n in self.updated],
            "unchanged": [shown(n) for n in self.unchanged],
            "removed": [shown(n) for n in self.removed],
            "failed": [{"name": shown(n), "error": e} for n, e in self.failed],
            "skipped": [{"name": shown(n), "reason": r} for n, r in self.skipped],
            "cancelled": self.cancelled,
            "outcomes": {shown(n): o for n, o in self.outcomes.items()},
            "not_utf8": sorted({n for n in every if not is_utf8(n)}),
            "repaired": [{"name": shown(n), "reason": r} for n, r in self.repaired],
        }

    def outcome(self, rel: str) -> str:
        """What happened to an added or updated file, as `kdesk add` says it."""
        got = self.outcomes.get(rel)
        if not got:
            return ""
        if got.get("photo"):
            return "a reference photo"
        pages = got.get("ocr_pages", 0)
        ocr = f", {pages} page{'s' * (pages != 1)} read by OCR" if pages else ""
        return f"{got['chunks']} chunk{'s' * (got['chunks'] != 1)}{ocr}"


class DocumentHandler(Protocol):
    """A plug-in that indexes one kind of file other than text (e.g. reference photos)."""

    kind: str
    suffixes: set[str]

    def index(self, doc_id: str, path: Path, rel: str, scope: str) -> int: ...

    def delete(self, doc_ids: Iterable[str]) -> None: ...

    def stored_doc_ids(self) -> set[str]: ...


@dataclass
class Change:
    """A file whose content is new to the index: to be (re)indexed."""

    rel: str
    path: Path
    stat: os.stat_result
    sha256: str
    old: Entry | None  # its manifest row before this sync, if it had one


def embed_text(chunk: Chunk) -> str:
    """What the encoder sees for a chunk (the stored text stays the raw chunk): the heading
    path first unless the chunk already starts with it, so every chunk of a long document
    carries its title (retrieval.py / docs/retrieval-benchmarks.md)."""
    if chunk.heading_path:
        last = chunk.heading_path[-1]
        if last and last not in chunk.text[: len(last) + 16]:
            return " > ".join(chunk.heading_path) + "\n" + chunk.text
    return chunk.text


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
        lang=h.lang or text_lang(h.text),
        ocr=h.ocr,
    )


def _indexed_text_docs(entries: dict[str, Entry]) -> set[str]:
    return {e.doc_id for e in entries.values() if e.status == INDEXED and e.kind == "text" and e.chunks}


def reconcile_keyword(keyword: KeywordIndex, store: ChromaStore, entries: dict[str, Entry]) -> None:
    """Make the keyword index hold exactly the indexed text documents (it may lag after a crash
    or be missing): re-feed it from the vector store, never by re-embedding."""
    want = _indexed_text_docs(entries)
    have = keyword.doc_ids()
    extra, missing = have - want, sorted(want - have)
    if extra:
        keyword.delete_docs(extra)
    for start in range(0, len(missing), 200):
        hits = store.chunks_of(missing[start : start + 200])
        keyword.upsert([chunk_from_hit(h) for h in hits])
    if extra or missing:
        keyword.flush()


def reconcile_dense(dense: DenseIndex, store: ChromaStore, entries: dict[str, Entry]) -> None:
    """Make the dense index hold exactly the indexed text documents' vectors, read back from
    the vector store (all of them when its files were missing or not flushed before a crash)."""
    want = _indexed_text_docs(entries)
    if dense.needs_rebuild:
        dense.clear()
        rows = [r for r in store.records() if r[1] in want]
    else:
        have = dense.doc_ids()
        if have - want:
            dense.delete_docs(have - want)
        rows = store.records(sorted(want - have)) if want - have else []
    if rows:
        dense.upsert(
            [r[0] for r in rows],
            [r[1] for r in rows],
            [r[2] for r in rows],
            np.stack([r[3] for r in rows]),
        )
    dense.flush()


def open_dense(kb: KnowledgeBase, dim: int, writer: WriterLock) -> DenseIndex | None:
    """The collection's dense index, in step with the vector store; None when its vectors do not
    fit ``retrieval.exact_dense_mb``. Without the data folder's ``writer`` lock, a copy rebuilt
    here stays in memory: another process may be writing."""
    from desktop_app.core.library.dense import DenseIndex

    directory = kb.collection_dir / "dense"
    cap = kb.config.retrieval.exact_dense_mb * 1e6
    if cap <= 0 or kb.store.count() * dim * 4 > cap:
        if writer.held:
            shutil.rmtree(directory, ignore_errors=True)  # never maintained from now on: not trusted
        return None
    dense = DenseIndex(directory, dim, read_only=not writer.held)
    if dense.read_only and dense.needs_rebuild:
        try:  # nobody writing now: the files are a crash's leftovers, repaired on disk at once
            writer.acquire(wait=False)
        except DataFolderBusy:
            pass  # a writer is at work and will flush them itself
        else:
            try:
                dense.set_writer(True)
                reconcile_dense(dense, kb.store, kb.manifest.all())
                return dense
            finally:
                dense.set_writer(False)
                writer.release()
    reconcile_dense(dense, kb.store, kb.manifest.all())
    return dense


def drop_documents(kb: KnowledgeBase, names: list[str], entries: dict[str, Entry]) -> None:
    """Remove documents' chunks everywhere, then their manifest rows (in that order)."""
    if not names:
        return
    rows = [entries[n] for n in names if n in entries]
    kb.manifest.put_many([replace(e, status=PENDING) for e in rows])
    dense = kb.dense
    _delete_chunks(kb, rows, dense)
    kb.keyword.flush()
    if dense is not None:
        dense.flush()
    kb.manifest.delete([e.name for e in rows])


def find_changes(
    kb: KnowledgeBase, files: dict[str, Path], report: SyncReport, *, prune: bool, force: bool
) -> list[Change]:
    """Drop removed files (``prune``), bring the derived indexes in step with the vector store,
    and list the files to index: new, changed or pending ones (all of them with ``force``)."""
    entries = kb.manifest.all()
    files, stats = _regular_files(files, report)  # a pipe, socket or device is never read
    if prune:
        gone = sorted(set(entries) - set(files))
        drop_documents(kb, gone, entries)
        report.removed.extend(gone)
    reconcile_keyword(kb.keyword, kb.store, kb.manifest.all())
    dense = kb.opened_dense
    if dense is not None:
        reconcile_dense(dense, kb.store, kb.manifest.all())
    else:  # opened (and reconciled) now, so every write below keeps it in step with the store
        kb.dense  # noqa: B018

    changes: list[Change] = []
    for rel, path in files.items():
        old = entries.get(rel)
        st = stats.get(rel)
        if isinstance(st, OSError):
            _unreadable(kb, rel, None, old, st, report)
            continue
        # A row without a hash was unreadable: looked at again (a chmod leaves the mtime alone).
        done = not force and old is not None and old.status in (INDEXED, FAILED) and not _before_ocr(old)
        if done and old.sha256 and old.size == st.st_size and old.mtime_ns == st.st_mtime_ns:
            _unchanged(rel, old, report)
            continue
        try:
            digest = sha256_file(path)
        except NotRegularFile as exc:  # swapped for a pipe since the stat
            report.skipped.append((rel, _not_regular(exc.kind)))
            continue
        except OSError as exc:
            _unreadable(kb, rel, st, old, exc, report)
            continue
        if done and old.sha256 == digest:  # touched, same content: only the stat shortcut is new
            kb.manifest.put(replace(old, size=st.st_size, mtime_ns=st.st_mtime_ns))
            _unchanged(rel, old, report)
            continue
        changes.append(Change(rel, path, st, digest, old))
    return changes


def _not_regular(kind: str) -> str:
    from desktop_app.core.library.fileops import not_regular_reason

    return not_regular_reason(kind)


def _regular_files(
    files: dict[str, Path], report: SyncReport
) -> tuple[dict[str, Path], dict[str, os.stat_result | OSError]]:
    """The files that are regular files (symlinks followed), with their stat, or the error that
    refused the stat; the others are skipped with their reason (and dropped from the index)."""
    regular: dict[str, Path] = {}
    stats: dict[str, os.stat_result | OSError] = {}
    for rel, path in files.items():
        try:
            stats[rel] = ensure_regular(path)
        except NotRegularFile as exc:
            report.skipped.append((rel, _not_regular(exc.kind)))
            continue
        except OSError as exc:
            stats[rel] = exc
        regular[rel] = path
    return regular, stats


def _unreadable(
    kb: KnowledgeBase, rel: str, st: os.stat_result | None, old: Entry | None, exc: OSError, report: SyncReport
) -> None:
    """A file that cannot be read (permission denied...): listed as failed with the reason, its
    old chunks dropped; without a hash, the next sync looks at it again."""
    why = str(message(reasons.CANNOT_READ, reason=exc.strerror or exc))
    report.failed.append((rel, why))
    entry = Entry(
        name=rel,
        doc_id=kb.doc_id(rel),
        sha256="",
        size=st.st_size if st else 0,
        mtime_ns=st.st_mtime_ns if st else 0,
        chunks=0,
        status=FAILED,
        error=why,
        indexed_at=None,
        kind=old.kind if old is not None else "text",
        scope=scope_of(rel),
    )
    if old is not None and old.chunks:
        kb.manifest.put(replace(old, status=PENDING))  # pending while its chunks go
        _delete_chunks(kb, [old], kb.opened_dense)
    kb.manifest.put(entry)


def _before_ocr(entry: Entry) -> bool:
    """A PDF refused for its scanned pages before OCR was there: read it again, now by OCR (the
    message without OCR installed is another one, so this never repeats)."""
    return entry.status == FAILED and (entry.error or "").startswith(
        "no text layer: scanned pages need OCR ("
    )


def _unchanged(rel: str, old: Entry, report: SyncReport) -> None:
    report.unchanged.append(rel)
    if old.status == FAILED:
        report.failed.append((rel, old.error or str(message(reasons.FAILED))))


def index_changes(kb: KnowledgeBase, changes: list[Change], task: TaskState, report: SyncReport) -> None:
    """Index the changed files in batches. Interrupted (cancelled, crashed), what was fully
    embedded is kept and the rest stays pending: the next sync redoes it. The caller flushes.

    A thread parses and chunks the files ahead (``_Reader``) while this one encodes and writes: the
    encoder releases the GIL, so parsing, jieba and the BM25 terms cost no wall time of their own."""
    batch = _Batch(kb)
    total = len(changes)
    with _Reader(kb, changes, task) as reader:
        for i, (change, read) in enumerate(reader):
            check(task)
            rel, st, old = change.rel, change.stat, change.old
            task.progress(i, total, rel)
            entry = Entry(
                name=rel,
                doc_id=kb.doc_id(rel),
                sha256=change.sha256,
                size=st.st_size,
                mtime_ns=st.st_mtime_ns,
                chunks=0,
                status=PENDING,
                error=None,
                indexed_at=None,
                kind="image" if read is None else "text",
                scope=scope_of(rel),
            )
            kb.manifest.put(entry)  # pending before any chunk is touched
            if old is not None:
                _delete_chunks(kb, [old], kb.opened_dense)
            (report.updated if old is not None else report.added).append(rel)
            try:
                if read is None:
                    n = _index_image(kb, entry, change.path)
                    kb.manifest.put(replace(entry, chunks=n, status=INDEXED, indexed_at=now_iso()))
                    report.outcomes[rel] = {"photo": True}
                    continue
                if isinstance(read, BaseException):
                    raise read
            except ParseError as exc:
                kb.manifest.put(replace(entry, status=FAILED, error=str(exc)))
                report.failed.append((rel, str(exc)))
                continue
            except Exception as exc:  # a parser bug must not stop the batch
                log.error("failed to index %s", rel, exc_info=exc)
                msg = str(message(reasons.PARSER_BUG, error_type=type(exc).__name__, error=exc))
                kb.manifest.put(replace(entry, status=FAILED, error=msg))
                report.failed.append((rel, msg))
                continue
            batch.add(entry, read)
            ocr_pages = {c.page if c.page is not None else 0 for c in read.chunks if c.ocr}
            report.outcomes[rel] = {"chunks": len(read.chunks), "ocr_pages": len(ocr_pages)}
            if batch.full():
                batch.flush()
                task.progress(i + 1, total, rel)
    batch.flush()
    task.progress(total, total, "")


def _index_image(kb: KnowledgeBase, entry: Entry, path: Path) -> int:
    handler = kb.handler_for(path.suffix.lower())
    if handler is None:
        raise ParseError(reasons.NO_IMAGE_SUPPORT)
    return handler.index(entry.doc_id, path, entry.name, entry.scope)


@dataclass
class _Read:
    """A text file made ready for the encoder and the indexes, off the writing thread."""

    chunks: list[Chunk]
    texts: list[str]  # what the encoder sees (embed_text)
    keyword: list  # bm25.keyword_entries(chunks)


class _Reader:
    """Reads, parses and chunks the changed files on a thread, a few files ahead of the writer.

    Iterating gives ``(change, read)`` in order: ``read`` is a ``_Read``, the exception that
    refused the file (raised by the writer, so failures are recorded in one place), or None for
    a photo (its handler runs on the writing thread: it owns the image index). Scanned PDF pages
    and images outside photo folders are read by OCR here (parsers/image.py has the photo rule),
    page by page with progress; a cancel, or the writer stopping, ends the file between pages."""

    # Chunks parsed ahead at most: the batch being encoded and the next one. Bounds the memory of
    # parsed, unencoded text (a file count would not: one PDF can hold thousands of chunks).
    AHEAD_CHUNKS = 2 * BATCH_CHUNKS

    def __init__(self, kb: KnowledgeBase, changes: list[Change], task: TaskState) -> None:
        from desktop_app.core.library.parsers import IMAGE_SUFFIXES
        from desktop_app.core.library.parsers.image import in_photo_folder

        self.changes = changes
        cfg = kb.config.index
        size = cfg.chunk_size
        # Photos under photo folders are never text; other images may be (then they need the encoder).
        self.photos = {
            c.rel for c in changes if c.path.suffix.lower() in IMAGE_SUFFIXES and in_photo_folder(c.rel)
        }
        if len(self.photos) < len(changes):  # loads the encoder
            size = min(size, getattr(kb.embedder, "max_chars", size))
        self.chunking = (cfg, size, kb.doc_id)
        self.queue: queue.Queue = queue.Queue()
        self.held = 0  # chunks read and not yet taken by the writer
        self.room = threading.Condition()
        self.stop = threading.Event()
        self.task = _ReaderTask(task, self.stop)
        self.thread = threading.Thread(target=self._run, name="kdesk-reader", daemon=True)

    def __enter__(self) -> _Reader:
        self.thread.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self.stop.set()
        with self.room:  # wake a reader waiting for room
            self.room.notify_all()
        self.thread.join()

    def __iter__(self) -> Iterator[tuple[Change, _Read | BaseException | None]]:
        for change in self.changes:
            while True:
                try:
                    read = self.queue.get(timeout=0.5)
                    break
                except queue.Empty:
                    if not self.thread.is_alive():  # it hands over every error: this is a bug
                        raise RuntimeError("the file reader stopped early") from None
            if isinstance(read, _Read):
                with self.room:
                    self.held -= len(read.chunks)
                    self.room.notify_all()
            yield change, read

    def _run(self) -> None:
        for number, change in enumerate(self.changes):
            if self.stop.is_set():
                return
            read: _Read | BaseException | None
            try:
                read = None if change.rel in self.photos else self._read(number, change)
            except BaseException as exc:  # handed over: the writer records it against the file
                read = exc
            n = len(read.chunks) if isinstance(read, _Read) else 0
            with self.room:  # a file larger than the whole budget still goes, alone
                while self.held and self.held + n > self.AHEAD_CHUNKS and not self.stop.is_set():
                    self.room.wait(0.1)
                if self.stop.is_set():
                    return
                self.held += n
            self.queue.put(read)

    def _read(self, number: int, change: Change) -> _Read | None:
        """The file's chunks, or None for an image that holds too little text (a photo)."""
        from desktop_app.core.library.bm25 import keyword_entries
        from desktop_app.core.library.ocr import OcrJob
        from desktop_app.core.library.parsers import IMAGE_SUFFIXES, SUPPORTED_SUFFIXES
        from desktop_app.core.packages import MissingPackage

        suffix = change.path.suffix.lower()
        image = suffix in IMAGE_SUFFIXES
        if not image and suffix not in SUPPORTED_SUFFIXES:
            raise ParseError(reasons.UNSUPPORTED, suffix=suffix or str(message(reasons.NO_EXTENSION)))
        cfg, size, doc_id = self.chunking
        job = OcrJob(change.rel, cfg.ocr_max_pages, self.task, number, len(self.changes))
        try:
            chunks = chunk_file(
                cfg, size, change.path, change.rel, doc_id(change.rel), change.stat.st_size, job
            )
        except (ParseError, MissingPackage) as exc:
            if not image:
                raise
            # Too little text, unreadable, or no OCR installed: the photo handler takes it and
            # says what is wrong with it, as for every image before OCR.
            log.debug("%s is a photo: %s", change.rel, exc)
            return None
        return _Read(chunks, [embed_text(c) for c in chunks], keyword_entries(chunks))


class _ReaderTask:
    """The sync's task as the reader sees it: the writer stopping cancels too."""

    def __init__(self, task: TaskState, stop: threading.Event) -> None:
        self._task, self._stop = task, stop

    def progress(self, done: int, total: int, message: str = "") -> None:
        self._task.progress(done, total, message)

    def cancelled(self) -> bool:
        return self._stop.is_set() or self._task.cancelled()


def _delete_chunks(kb: KnowledgeBase, rows: list[Entry], dense: DenseIndex | None) -> None:
    """Delete documents' chunks from every index (text) or through their handler (photos);
    the caller flushes."""
    text_ids = [e.doc_id for e in rows if e.kind == "text"]
    if text_ids:
        kb.store.delete_docs(text_ids)
        kb.keyword.delete_docs(text_ids)
        if dense is not None:
            dense.delete_docs(text_ids)
    for e in rows:
        if e.kind != "text":
            handler = kb.handler_for(Path(e.name).suffix.lower())
            if handler is not None:
                handler.delete([e.doc_id])


def chunk_file(
    cfg: IndexConfig, size: int, path: Path, rel: str, doc_id: str, nbytes: int, ocr: OcrJob | None = None
) -> list[Chunk]:
    """A file's chunks of at most ``size`` characters (the encoder's ``max_chars`` or less);
    ``ocr``: scanned pages and images are read by OCR within it."""
    from desktop_app.core.library.chunking import chunk_sections
    from desktop_app.core.library.parsers import IMAGE_SUFFIXES, parse_file

    try:  # swapped for a pipe since it was hashed: parsers open by path, and must never block
        ensure_regular(path)
    except NotRegularFile as exc:
        raise ParseError(reasons.NOT_REGULAR) from exc
    limit = cfg.max_document_mb
    suffix = path.suffix.lower()
    if limit > 0 and suffix not in PARSED_SIZE_SUFFIXES and suffix not in IMAGE_SUFFIXES:
        _check_size(nbytes, limit)  # plain text: refuse before reading it into memory
    sections = parse_file(path, ocr)
    if limit > 0:
        _check_size(sum(len(s.text.encode("utf-8")) for s in sections), limit)
    chunks = chunk_sections(
        sections,
        doc_id,
        rel,
        strategy=cfg.chunker,
        size=size,
        overlap=min(cfg.chunk_overlap, size // 3),
        scope=scope_of(rel),
    )
    if not chunks:
        raise ParseError(reasons.EMPTY)
    return chunks


def _check_size(nbytes: int, limit_mb: float) -> None:
    if nbytes / 1e6 > limit_mb:
        raise ParseError(reasons.TOO_LARGE_TEXT, mb=nbytes / 1e6, limit_mb=limit_mb)


class _Batch:
    """Chunks of several documents embedded together (the encoder is fastest in large batches);
    documents are marked indexed only after their chunks are stored."""

    def __init__(self, kb: KnowledgeBase) -> None:
        self.kb = kb
        self.target = max(BATCH_CHUNKS, kb.config.index.batch_size)
        self.entries: list[tuple[Entry, list[Chunk]]] = []
        self.n = 0

    def add(self, entry: Entry, read: _Read) -> None:
        self.entries.append((entry, read))
        self.n += len(read.chunks)

    def full(self) -> bool:
        return self.n >= self.target

    def flush(self) -> None:
        if not self.entries:
            return
        kb = self.kb
        chunks = [c for _, r in self.entries for c in r.chunks]
        vectors = kb.embedder.embed_documents([t for _, r in self.entries for t in r.texts])
        kb.store.upsert(chunks, vectors)
        kb.keyword.upsert(chunks, [k for _, r in self.entries for k in r.keyword])
        dense = kb.opened_dense
        if dense is not None:
            dense.upsert(
                [c.id for c in chunks], [c.doc_id for c in chunks], [c.scope for c in chunks], vectors
            )
        stamp = now_iso()
        kb.manifest.put_many(
            [replace(e, chunks=len(r.chunks), status=INDEXED, indexed_at=stamp) for e, r in self.entries]
        )
        self.entries, self.n = [], 0

"""The sync algorithm: which files changed, and their chunks written to every index in a crash-safe order.

Change detection uses content hashes (sha256), with (size, mtime) as a shortcut that only ever
skips hashing, never re-embedding. A manifest row goes to "pending" before any of its chunks are
touched and to "indexed" only after every chunk is in the vector store; a sync redoes pending rows
and re-feeds the keyword and dense indexes from the vector store when they disagree with it.
"""

from __future__ import annotations

import bisect
import logging
import os
import queue
import shutil
import threading
import time
from collections.abc import Iterable, Iterator
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import TYPE_CHECKING, Any, Protocol

import numpy as np

from desktop_app.core.library import diskspace, reasons
from desktop_app.core.library.datafolder import DataFolderBusy, WriterLock
from desktop_app.core.library.documents import Chunk, Hit, ParseError
from desktop_app.core.library.languages import text_lang
from desktop_app.core.library.manifest import FAILED, INDEXED, PENDING, Entry, now_iso
from desktop_app.core.library.progress_lines import FileProgress
from desktop_app.core.library.reading import chunk_file
from desktop_app.core.library.scopes import scope_of
from desktop_app.core.messages import Message, Text, message
from desktop_app.core.paths import NotRegularFile, OutsideFolder, ensure_regular, resolve_inside, sha256_file
from desktop_app.core.tasks import Cancelled, TaskState, check

if TYPE_CHECKING:
    from desktop_app.core.config import Config
    from desktop_app.core.library.bm25 import KeywordIndex
    from desktop_app.core.library.dense import DenseIndex
    from desktop_app.core.library.manifest import Manifest
    from desktop_app.core.library.parse_worker import ParseWorker
    from desktop_app.core.library.store import ChromaStore
    from desktop_app.core.models.embeddings.base import Embedder

log = logging.getLogger(__name__)

BATCH_CHUNKS = 256  # chunks embedded together at least (the encoder is fastest in large batches)
# Chunks are encoded and stored in slices of about this many seconds (sized from the encoder's
# pace so far in the batch, 2 to 256 chunks): a cancel is seen between slices, and a large file's
# progress line counts them. The first slice is FIRST_SLICE chunks.
SLICE_SECONDS = 0.5
FIRST_SLICE = 8
STORE_CHUNKS = 128  # a large file's encoded chunks go to Chroma this many at a time (an upsert costs)
LINE_CHUNKS = 64  # a file of this many chunks or more has lines of its own while it is embedded


@dataclass
class SyncReport:
    added: list[str] = field(default_factory=list)
    updated: list[str] = field(default_factory=list)
    unchanged: list[str] = field(default_factory=list)
    removed: list[str] = field(default_factory=list)
    failed: list[tuple[str, Text]] = field(default_factory=list)
    # Left out on purpose, never copied: hidden, too large, unsupported, symlinks, a data folder.
    skipped: list[tuple[str, Text]] = field(default_factory=list)
    cancelled: bool = False
    # What became of each added or updated file: its chunks and the pages OCR read, or a photo.
    outcomes: dict[str, dict[str, Any]] = field(default_factory=dict)
    # Documents whose chunks in the vector store were missing or altered, re-embedded (integrity.py).
    repaired: list[tuple[str, Text]] = field(default_factory=list)

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
            "failed": [{"name": shown(n), "error": str(e)} for n, e in self.failed],  # JSON: English
            "skipped": [{"name": shown(n), "reason": str(r)} for n, r in self.skipped],
            "cancelled": self.cancelled,
            "outcomes": {shown(n): o for n, o in self.outcomes.items()},
            "not_utf8": sorted({n for n in every if not is_utf8(n)}),
            "repaired": [{"name": shown(n), "reason": str(r)} for n, r in self.repaired],
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


class IndexParts(Protocol):
    """The parts of a library the sync reads and writes (knowledge.py's KnowledgeBase has them).
    Properties, since each is built on first use: the encoder loads only when a text file needs it,
    the parse worker starts with the first file, the dense index opens only where it fits."""

    knowledge_dir: Path  # no file outside it is ever read, whatever link leads there

    @property
    def config(self) -> Config: ...  # [index]: chunking, batches, the reader's limits

    @property
    def manifest(self) -> Manifest: ...

    @property
    def store(self) -> ChromaStore: ...

    @property
    def keyword(self) -> KeywordIndex: ...

    @property
    def dense(self) -> DenseIndex | None: ...  # opened (and reconciled) on first use

    @property
    def opened_dense(self) -> DenseIndex | None: ...  # without opening it

    @property
    def embedder(self) -> Embedder: ...

    @property
    def parse_worker(self) -> ParseWorker: ...

    def doc_id(self, rel: str) -> str: ...

    def handler_for(self, suffix: str) -> DocumentHandler | None: ...


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


def open_dense(
    directory: Path, cap_mb: float, store: ChromaStore, manifest: Manifest, dim: int, writer: WriterLock
) -> DenseIndex | None:
    """The collection's dense index (in ``directory``), in step with the vector store; None when its
    vectors do not fit ``cap_mb`` (``retrieval.exact_dense_mb``). Without the data folder's
    ``writer`` lock, a copy rebuilt here stays in memory: another process may be writing."""
    from desktop_app.core.library.dense import DenseIndex

    cap = cap_mb * 1e6
    if cap <= 0 or store.count() * dim * 4 > cap:
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
                dense = DenseIndex(directory, dim)  # read again under the lock: damaged files are set aside
                reconcile_dense(dense, store, manifest.all())
                return dense
            finally:
                dense.set_writer(False)
                writer.release()
    reconcile_dense(dense, store, manifest.all())
    return dense


def drop_documents(kb: IndexParts, names: list[str], entries: dict[str, Entry]) -> None:
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
    kb: IndexParts,
    files: dict[str, Path],
    report: SyncReport,
    *,
    prune: bool,
    force: bool,
    retry_failed: bool = False,
) -> list[Change]:
    """Drop removed files (``prune``), bring the derived indexes in step with the vector store,
    and list the files to index: new, changed or pending ones (all of them with ``force``). A
    failed file is tried again once it changes, or now with ``retry_failed``."""
    entries = kb.manifest.all()
    report.skipped.extend(getattr(files, "skipped", ()))  # folder.Scan: second names of a file
    root = kb.knowledge_dir.resolve()
    files, outside = _inside_files(files, root)  # a link out of the knowledge folder is never read
    files, stats = _regular_files(files, report)  # a pipe, socket or device is never read
    if prune:
        gone = sorted(set(entries) - set(files) - set(outside))
        drop_documents(kb, gone, entries)
        report.removed.extend(gone)
    for rel, target in outside.items():
        _outside(kb, rel, target, entries.get(rel), report)
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
        settled = (INDEXED,) if retry_failed else (INDEXED, FAILED)
        done = not force and old is not None and old.status in settled and not _before_ocr(old)
        if done and old.sha256 and old.size == st.st_size and old.mtime_ns == st.st_mtime_ns:
            _unchanged(rel, old, report)
            continue
        try:
            digest = sha256_file(path, inside=root)
        except NotRegularFile as exc:  # swapped for a pipe since the stat
            report.skipped.append((rel, _not_regular(exc.kind)))
            continue
        except OutsideFolder as exc:  # a link swapped since the scan: caught on the open file
            _outside(kb, rel, exc.target, old, report)
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


def _not_regular(kind: str) -> Text:
    from desktop_app.core.library.fileops import not_regular_reason

    return not_regular_reason(kind)


def _inside_files(files: dict[str, Path], root: Path) -> tuple[dict[str, Path], dict[str, str]]:
    """The files that are inside ``root`` once every link is resolved (chains, ``..``, links to
    links), and the others with where they lead."""
    kept: dict[str, Path] = {}
    outside: dict[str, str] = {}
    for rel, path in files.items():
        try:
            resolve_inside(path, root)
        except OutsideFolder as exc:
            outside[rel] = exc.target
            continue
        kept[rel] = path
    return kept, outside


def _outside(kb: IndexParts, rel: str, target: str, old: Entry | None, report: SyncReport) -> None:
    """A link out of the knowledge folder: listed as failed with where it leads, never read; the
    chunks an older version indexed through it leave every index."""
    from desktop_app.core.library.names import display_name, escape_name

    why = message(reasons.LINK_OUTSIDE, target=display_name(escape_name(target)))
    report.failed.append((rel, why))
    if old is not None and old.chunks:
        kb.manifest.put(replace(old, status=PENDING))  # pending while its chunks go
        _delete_chunks(kb, [old], kb.opened_dense)
    elif old is not None and old.status == FAILED and old.error == why:
        return  # already said so: nothing to write
    kb.manifest.put(_failed_entry(kb, rel, why, old, None))


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
    kb: IndexParts, rel: str, st: os.stat_result | None, old: Entry | None, exc: OSError, report: SyncReport
) -> None:
    """A file that cannot be read (permission denied...): listed as failed with the reason, its
    old chunks dropped; without a hash, the next sync looks at it again."""
    why = message(reasons.CANNOT_READ, reason=exc.strerror or exc)
    report.failed.append((rel, why))
    entry = _failed_entry(kb, rel, why, old, st)
    if old is not None and old.chunks:
        kb.manifest.put(replace(old, status=PENDING))  # pending while its chunks go
        _delete_chunks(kb, [old], kb.opened_dense)
    kb.manifest.put(entry)


def _failed_entry(kb: IndexParts, rel: str, why: Text, old: Entry | None, st: os.stat_result | None) -> Entry:
    """A failed row without a hash (the next sync looks at the file again), with the stat it had."""
    return Entry(
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


def _before_ocr(entry: Entry) -> bool:
    """A PDF refused for its scanned pages before OCR was there: read it again, now by OCR (the
    message without OCR installed is another one, so this never repeats)."""
    return entry.status == FAILED and isinstance(entry.error, Message) and entry.error.code == reasons.PDF_NEEDS_OCR


def _unchanged(rel: str, old: Entry, report: SyncReport) -> None:
    report.unchanged.append(rel)
    if old.status == FAILED:
        report.failed.append((rel, old.error or message(reasons.FAILED)))


def index_changes(kb: IndexParts, changes: list[Change], task: TaskState, report: SyncReport) -> None:
    """Index the changed files in batches. Interrupted (cancelled, crashed), what was fully
    embedded is kept and the rest stays pending: the next sync redoes it. The caller flushes.

    A thread parses and chunks the files ahead (``_Reader``) while this one encodes and writes: the
    encoder releases the GIL, so parsing, jieba and the BM25 terms cost no wall time of their own."""
    batch = _Batch(kb)
    total = len(changes)
    try:
        _index(kb, changes, task, report, batch)
    except diskspace.DiskFull:
        raise
    except Exception as exc:  # a full disk met anyway (another program filled it): said in words
        index_dir = kb.manifest.path.parent.parent
        full = diskspace.as_disk_full(exc, index_dir, batch.needed())
        if full is None:
            raise
        raise full from exc
    except (Cancelled, KeyboardInterrupt):
        # The files whose chunks were not all stored stay pending, their partial chunks deleted
        # (_Batch.flush), and are not reported as indexed.
        report.cancelled = True
        cut = {entry.name for entry, _ in batch.entries}
        report.added[:] = [r for r in report.added if r not in cut]
        report.updated[:] = [r for r in report.updated if r not in cut]
        for rel in cut:
            report.outcomes.pop(rel, None)
        raise
    task.progress(total, total, "")


def _index(kb: IndexParts, changes: list[Change], task: TaskState, report: SyncReport, batch: _Batch) -> None:
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
            except Cancelled:
                raise
            except ParseError as exc:
                kb.manifest.put(replace(entry, status=FAILED, error=exc.message))
                report.failed.append((rel, exc.message))
                continue
            except Exception as exc:  # a parser bug must not stop the batch
                log.error("failed to index %s", rel, exc_info=exc)
                if trace := getattr(exc, "trace", ""):  # raised in the parse worker: its traceback
                    log.error("in the file reader process:\n%s", trace)
                kind = getattr(exc, "error_type", type(exc).__name__)
                msg = message(reasons.PARSER_BUG, error_type=kind, error=exc)
                kb.manifest.put(replace(entry, status=FAILED, error=msg))
                report.failed.append((rel, msg))
                continue
            batch.add(entry, read)
            batch.unread, batch.first_unread = changes, i + 1  # counted only if the disk fills
            ocr_pages = {c.page if c.page is not None else 0 for c in read.chunks if c.ocr}
            report.outcomes[rel] = {"chunks": len(read.chunks), "ocr_pages": len(ocr_pages)}
            if batch.full():
                batch.flush(task, i + 1 - len(batch.entries), total)
                task.progress(i + 1, total, rel)
        batch.flush(task, total - len(batch.entries), total)


def _index_image(kb: IndexParts, entry: Entry, path: Path) -> int:
    from desktop_app.core.library.reading import real_path

    handler = kb.handler_for(path.suffix.lower())
    if handler is None:
        raise ParseError(reasons.NO_IMAGE_SUPPORT)
    return handler.index(entry.doc_id, real_path(path, kb.knowledge_dir.resolve()), entry.name, entry.scope)


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
    page by page with progress; a cancel, or the writer stopping, ends the file between pages.

    Each file is read in the parse worker (parse_worker.py: a child process killed when one unit of
    progress takes longer than ``index.max_seconds_per_unit`` or its memory passes
    ``index.max_parse_memory_mb``, or at once on a cancel); with no deadline set (0), here. While
    the writer waits for a file, the reader's progress lines say where in it the parser is."""

    # Chunks parsed ahead at most: the batch being encoded and the next one. Bounds the memory of
    # parsed, unencoded text (a file count would not: one PDF can hold thousands of chunks).
    AHEAD_CHUNKS = 2 * BATCH_CHUNKS

    def __init__(self, kb: IndexParts, changes: list[Change], task: TaskState) -> None:
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
        self.worker = kb.parse_worker if cfg.max_seconds_per_unit > 0 else None
        self.outer = task
        self.taken = 0  # files the writer took: the progress bar's count while it waits
        self.waiting = threading.Event()  # the writer waits for the next file: show its reading
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
            self.waiting.set()
            while True:
                try:
                    read = self.queue.get(timeout=0.5)
                    break
                except queue.Empty:
                    if not self.thread.is_alive():  # it hands over every error: this is a bug
                        raise RuntimeError("the file reader stopped early") from None
            self.waiting.clear()
            self.taken += 1
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
        from desktop_app.core.library.parse_worker import ParseRequest, ReaderStopped
        from desktop_app.core.library.parsers import IMAGE_SUFFIXES, SUPPORTED_SUFFIXES, progress
        from desktop_app.core.packages import MissingPackage

        suffix = change.path.suffix.lower()
        image = suffix in IMAGE_SUFFIXES
        if not image and suffix not in SUPPORTED_SUFFIXES:
            raise ParseError(reasons.UNSUPPORTED, suffix=suffix or message(reasons.NO_EXTENSION))
        cfg, size, doc_id = self.chunking
        lines = FileProgress(change.rel)

        def heard(kind: str, number: int, count: int | None) -> None:
            if self.waiting.is_set():  # else the writer's embedding line is the one to show
                self.outer.progress(self.taken, len(self.changes), lines.reading(kind, number, count))

        try:
            if self.worker is not None:
                request = ParseRequest(
                    replace(cfg, chroma_token=""),  # the worker needs no secret
                    size,
                    change.path,
                    change.rel,
                    doc_id(change.rel),
                    change.stat.st_size,
                )
                chunks = self.worker.chunk_file(
                    request,
                    max_seconds=cfg.max_seconds_per_unit,
                    max_mb=cfg.max_parse_memory_mb,
                    on_unit=heard,
                    stopped=self.task.cancelled,
                )
            else:
                job = OcrJob(change.rel, cfg.ocr_max_pages, self.task, number, len(self.changes))
                with progress.listening(heard):
                    chunks = chunk_file(
                        cfg, size, change.path, change.rel, doc_id(change.rel), change.stat.st_size, job
                    )
        except (ParseError, MissingPackage) as exc:
            if not image or isinstance(exc, ReaderStopped):
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


def _delete_chunks(kb: IndexParts, rows: list[Entry], dense: DenseIndex | None) -> None:
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


def _estimate(kb: IndexParts, change: Change, dim: int) -> int:
    """Bytes a file not read yet will take once indexed, roughly: its size as text for plain-text
    formats, a quarter of it for the others (compressed, or pictures); a photo nothing here."""
    from desktop_app.core.library.parsers import IMAGE_SUFFIXES

    suffix = change.path.suffix.lower()
    if suffix in IMAGE_SUFFIXES:
        return 0
    cfg = kb.config.index
    text = change.stat.st_size if suffix in _PLAIN_TEXT else change.stat.st_size // 4
    if cfg.max_document_mb > 0:
        text = min(text, int(cfg.max_document_mb * diskspace.MB))
    chunks = text // max(cfg.chunk_size - cfg.chunk_overlap, 100) + 1
    return chunks * diskspace.chunk_bytes(min(text, cfg.chunk_size), dim, local_chroma=not cfg.chroma_url)


_PLAIN_TEXT = {".txt", ".md", ".markdown", ".rst", ".csv", ".tsv", ".json", ".html", ".htm", ".xml", ".log"}


class _Batch:
    """Chunks of several documents embedded together (the encoder is fastest in large batches);
    documents are marked indexed only after their chunks are stored."""

    def __init__(self, kb: IndexParts) -> None:
        self.kb = kb
        self.target = max(BATCH_CHUNKS, kb.config.index.batch_size)
        self.entries: list[tuple[Entry, list[Chunk]]] = []
        self.n = 0
        self.unread: list[Change] = []  # the changed files after this batch's (their _estimate)
        self.first_unread = 0
        self.dim = 0  # the encoder's, once it has encoded

    def needed(self, texts: list[str] | None = None) -> int:
        """Bytes to finish the batch and the files after it, with the reserve (diskspace.py)."""
        local = not self.kb.config.index.chroma_url
        if texts is None:
            texts = [t for _, r in self.entries for t in r.texts]
        dim = self.dim or 384
        reserve = diskspace.reserve_bytes(self.kb.manifest.path.parent, local_chroma=local)
        later = sum(_estimate(self.kb, c, dim) for c in self.unread[self.first_unread :])
        return diskspace.texts_bytes(texts, dim, local_chroma=local) + later + reserve

    def _room(self, texts: list[str], order: list[int], start: int, stop: int) -> None:
        """Stop with DiskFull, before anything of the chunks ``order[start:stop]`` is written, when the
        disk cannot take them and still leave the reserve; the message counts the rest of the batch
        and the files not read yet."""
        local = not self.kb.config.index.chroma_url
        index_dir = self.kb.manifest.path.parent
        need = diskspace.texts_bytes([texts[i] for i in order[start:stop]], self.dim, local_chroma=local)
        need += diskspace.reserve_bytes(index_dir, local_chroma=local)
        rest = lambda: self.needed([texts[i] for i in order[start:]])  # noqa: E731 - counted only if full
        diskspace.ensure_room(index_dir.parent, need, report_needed=rest)

    def add(self, entry: Entry, read: _Read) -> None:
        self.entries.append((entry, read))
        self.n += len(read.chunks)

    def full(self) -> bool:
        return self.n >= self.target

    def flush(self, task: TaskState | None = None, done: int = 0, total: int = 0) -> None:
        """Encode and store the batch in slices of about ``SLICE_SECONDS``, a cancel seen between
        slices; each document is marked indexed once all its chunks are stored (and only then
        goes to the keyword and dense indexes, which replace a document's chunks as a whole). On a
        cancel or any error the documents not complete lose their stored chunks and stay pending
        (``entries`` keeps them); ``done``/``total``: the batch's file counts for the progress bar."""
        if not self.entries:
            return
        kb = self.kb
        dense = kb.opened_dense
        ends = [int(n) for n in np.cumsum([len(r.chunks) for _, r in self.entries])]
        # Each file's chunks shortest first (its end stays where it was): a slice then holds texts of
        # about one length, and the encoder pads little (in file order it cost DA-619p.pdf ~1.5x).
        texts = [t for _, r in self.entries for t in r.texts]
        order: list[int] = []
        for end, (_, read) in zip(ends, self.entries):
            begin = end - len(read.chunks)
            order += sorted(range(begin, end), key=lambda i: len(texts[i]))
        chunks = [c for _, r in self.entries for c in r.chunks]
        vectors: np.ndarray | None = None
        complete = 0  # entries whose chunks are all stored
        lines: dict[int, FileProgress] = {}
        start, size, began = 0, FIRST_SLICE, time.monotonic()
        stored = 0  # chunks in the vector store
        try:
            while start < len(chunks):
                if task is not None:
                    check(task)
                stop = min(start + size, len(chunks))
                sliced = time.monotonic()
                part = kb.embedder.embed_documents([texts[i] for i in order[start:stop]])
                if vectors is None:
                    vectors = np.empty((len(chunks), part.shape[1]), dtype=np.float32)
                vectors[order[start:stop]] = part  # in the batch's own order
                # Stored when a file is wholly encoded (it is kept even if a cancel comes next), or
                # every STORE_CHUNKS chunks of a large one.
                if ends[complete] <= stop or stop - stored >= STORE_CHUNKS:
                    self.dim = int(vectors.shape[1])
                    self._room(texts, order, stored, stop)
                    kb.store.upsert([chunks[i] for i in order[stored:stop]], vectors[order[stored:stop]])
                    stored = stop
                    finished = complete
                    while finished < len(self.entries) and ends[finished] <= stored:
                        finished += 1
                    if finished > complete:
                        self._complete(complete, finished, ends, vectors, dense)
                        complete = finished
                at = bisect.bisect_left(ends, stop)  # the file of the last chunk encoded
                entry, read = self.entries[at]
                first = ends[at] - len(read.chunks)
                if task is not None and len(read.chunks) >= LINE_CHUNKS and stop < ends[at]:
                    line = lines.setdefault(at, FileProgress(entry.name, sliced))  # a large file, under way
                    task.progress(done + at, total, line.embedding(stop - first, len(read.chunks)))
                pace = stop / max(time.monotonic() - began, 1e-3)  # chunks a second so far
                start, size = stop, max(2, min(256, int(pace * SLICE_SECONDS)))
        except BaseException:
            left = [entry for entry, _ in self.entries[complete:]]
            _delete_chunks(kb, left, dense)  # never half a document: it stays pending
            self.entries = self.entries[complete:]
            self.n = sum(len(r.chunks) for _, r in self.entries)
            raise
        self.entries, self.n = [], 0

    def _complete(self, first: int, last: int, ends: list[int], vectors: np.ndarray, dense: DenseIndex | None) -> None:
        """Entries ``first``..``last`` have all their chunks in the vector store: feed the derived
        indexes and mark them indexed."""
        kb = self.kb
        begin = ends[first] - len(self.entries[first][1].chunks)
        done = self.entries[first:last]
        chunks = [c for _, r in done for c in r.chunks]
        kb.keyword.upsert(chunks, [k for _, r in done for k in r.keyword])
        if dense is not None:
            dense.upsert(
                [c.id for c in chunks],
                [c.doc_id for c in chunks],
                [c.scope for c in chunks],
                vectors[begin : ends[last - 1]],
            )
        stamp = now_iso()
        kb.manifest.put_many(
            [replace(e, chunks=len(r.chunks), status=INDEXED, indexed_at=stamp) for e, r in done]
        )

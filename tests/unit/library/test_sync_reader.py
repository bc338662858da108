"""The indexer's reading thread: files are parsed ahead of the encoder, in order, and a failure,
a cancel or a parser bug never loses the rest of the batch or leaves the thread running."""

from __future__ import annotations

import threading

import pytest

from desktop_app.core.config import Config
from desktop_app.core.library import sync as syncing
from desktop_app.core.library.knowledge import KnowledgeBase
from desktop_app.core.tasks import Cancelled, SimpleTask


def _readers() -> list[threading.Thread]:
    return [t for t in threading.enumerate() if t.name == "kdesk-reader"]


@pytest.fixture
def kb(tmp_path, minilm):
    kb = KnowledgeBase(tmp_path / "data", config=Config(), embedder=minilm)
    yield kb
    kb.close()


def _write(kb: KnowledgeBase, files: dict[str, str | bytes]) -> None:
    for name, body in files.items():
        path = kb.knowledge_dir / name
        path.parent.mkdir(parents=True, exist_ok=True)
        if isinstance(body, bytes):
            path.write_bytes(body)
        else:
            path.write_text(body, encoding="utf-8")


def test_failures_are_recorded_per_file_and_the_rest_is_indexed(kb, monkeypatch):
    kb.config.index.max_seconds_per_unit = 0  # files read in this process: the patch below reaches them
    real = syncing.chunk_file

    def buggy(cfg, size, path, rel, doc_id, nbytes, ocr=None):
        if rel == "c-bug.md":
            raise ZeroDivisionError("a parser bug")
        return real(cfg, size, path, rel, doc_id, nbytes, ocr)

    monkeypatch.setattr(syncing, "chunk_file", buggy)
    _write(
        kb,
        {
            "a.md": "# Kea\n\nKea eat roots and insects.",
            "b-empty.md": "   \n",
            "c-bug.md": "# Bug\n\nNever read.",
            "d.xyz": "unknown kind",
            "e.md": "# Kakapo\n\nThe kakapo is a flightless parrot.",
        },
    )
    report = kb.sync()
    assert sorted(report.added) == ["a.md", "b-empty.md", "c-bug.md", "d.xyz", "e.md"]
    failed = {n: str(why) for n, why in report.failed}  # their English (what `kdesk sync` prints)
    assert failed["b-empty.md"] == "empty document: no text"
    assert failed["c-bug.md"] == "could not read: ZeroDivisionError: a parser bug"
    assert failed["d.xyz"].startswith("unsupported file type")
    assert set(failed) == {"b-empty.md", "c-bug.md", "d.xyz"}
    assert kb.search("flightless parrot")[0].source == "e.md"
    assert not _readers()


def test_a_cancelled_sync_stops_the_reader_and_the_next_sync_finishes(kb):
    _write(kb, {f"n{i:03}.md": f"# Note {i}\n\nParrot number {i} eats seeds." for i in range(40)})

    class CancelAfter(SimpleTask):
        def progress(self, done: int, total: int, message: str = "") -> None:
            super().progress(done, total, message)
            if done >= 3:
                self.cancel()

    with pytest.raises(Cancelled):
        kb.sync(CancelAfter())
    assert not _readers()
    report = kb.sync()
    assert not report.failed
    assert len(report.added) + len(report.updated) + len(report.unchanged) == 40
    assert len(kb.list_documents()) == 40
    assert kb.search("parrot number 37 eats seeds")[0].source == "n037.md"


def test_the_reader_holds_at_most_its_budget_of_chunks_ahead(kb, monkeypatch):
    import time

    monkeypatch.setattr(syncing._Reader, "AHEAD_CHUNKS", 4)
    held: list[int] = []
    iterate = syncing._Reader.__iter__

    def slow_writer(self):
        for item in iterate(self):
            time.sleep(0.005)  # the reader has time to run ahead, as while a batch is encoded
            held.append(self.held)
            yield item

    monkeypatch.setattr(syncing._Reader, "__iter__", slow_writer)
    _write(kb, {f"p{i:02}.md": f"Parrot {i} eats seeds." for i in range(30)})  # one chunk each
    report = kb.sync()
    assert len(report.added) == 30 and not report.failed
    assert max(held) <= 4 and max(held) >= 2  # it did read ahead, within the budget

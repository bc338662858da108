"""Only regular files are read: a named pipe, a socket or a device in the knowledge folder or in a
folder being added is skipped with its reason and never blocks a read while the writer lock is held;
a file that cannot be read is listed as failed, with why."""

from __future__ import annotations

import os
import socket
import threading
from pathlib import Path

import pytest

from desktop_app.core.config import Config
from desktop_app.core.library.knowledge import KnowledgeBase
from desktop_app.core.paths import NotRegularFile, sha256_file

GUARD_S = 120  # a read that blocks on a pipe never returns: the guard turns that into a failure


def _guarded(fn, *args):
    """Run ``fn`` on a thread; fail (instead of hanging the suite) if it has not returned in time."""
    out: dict = {}

    def run() -> None:
        try:
            out["value"] = fn(*args)
        except BaseException as exc:
            out["error"] = exc

    t = threading.Thread(target=run, daemon=True)
    t.start()
    t.join(GUARD_S)
    assert not t.is_alive(), f"{fn.__name__} blocked for {GUARD_S} s"
    if "error" in out:
        raise out["error"]
    return out["value"]


@pytest.fixture
def kb(tmp_path, counting_embedder):
    kb = KnowledgeBase(tmp_path / "data", config=Config(), embedder=counting_embedder)
    yield kb
    kb.close()


def test_sha256_file_refuses_a_named_pipe_without_blocking(tmp_path):
    fifo = tmp_path / "pipe.txt"
    os.mkfifo(fifo)
    with pytest.raises(NotRegularFile) as refused:
        _guarded(sha256_file, fifo)
    assert refused.value.kind == "pipe"


def test_sync_skips_a_named_pipe_and_finishes(kb):
    os.mkfifo(kb.knowledge_dir / "pipe.txt")
    (kb.knowledge_dir / "good.md").write_text("# Kea\nThe kea is an alpine parrot.\n", encoding="utf-8")
    report = _guarded(kb.sync)
    assert report.added == ["good.md"] and not report.failed
    assert [(n, str(why)) for n, why in report.skipped] == [
        ("pipe.txt", "not a regular file (a named pipe): never read")
    ]
    assert [d.name for d in kb.list_documents()] == ["good.md"]
    assert _guarded(kb.sync).unchanged == ["good.md"]  # the writer lock was given back


def test_a_file_replaced_by_a_pipe_leaves_the_index(kb):
    doc = kb.knowledge_dir / "notes.md"
    doc.write_text("# Notes\nThe kakapo booms at night.\n", encoding="utf-8")
    kb.sync()
    doc.unlink()
    os.mkfifo(doc)
    report = _guarded(kb.sync)
    assert report.removed == ["notes.md"] and report.skipped[0][0] == "notes.md"
    assert kb.list_documents() == [] and kb.search("kakapo booms") == []


def test_sync_skips_a_socket(kb):
    sock = socket.socket(socket.AF_UNIX)
    try:
        sock.bind(str(kb.knowledge_dir / "socket.txt"))
        (kb.knowledge_dir / "good.md").write_text("# Kea\nAn alpine parrot.\n", encoding="utf-8")
        report = _guarded(kb.sync)
    finally:
        sock.close()
    assert [(n, str(why)) for n, why in report.skipped] == [
        ("socket.txt", "not a regular file (a socket): never read")
    ]
    assert report.added == ["good.md"]


def test_add_skips_a_named_pipe_in_a_folder(kb, tmp_path):
    folder = tmp_path / "drop"
    folder.mkdir()
    os.mkfifo(folder / "pipe.md")
    (folder / "notes.md").write_text("# Notes\nA galah on the fence.\n", encoding="utf-8")
    report = _guarded(kb.add, [folder])
    assert report.added == ["drop/notes.md"] and not report.failed
    assert [(n, str(why)) for n, why in report.skipped] == [
        (str(folder / "pipe.md"), "not a regular file (a named pipe): never read")
    ]
    assert not (kb.knowledge_dir / "drop" / "pipe.md").exists()


def test_the_parse_step_refuses_a_pipe_swapped_in_after_hashing(tmp_path):
    from desktop_app.core.library.documents import ParseError
    from desktop_app.core.library.reading import chunk_file

    fifo = tmp_path / "swapped.txt"
    os.mkfifo(fifo)
    with pytest.raises(ParseError, match="not a regular file"):
        _guarded(chunk_file, Config().index, 500, fifo, "swapped.txt", "swapped-0", 10)


def test_a_device_is_never_read(tmp_path):
    null = Path("/dev/null")
    if not null.exists():
        pytest.skip("no /dev/null here")
    with pytest.raises(NotRegularFile) as refused:
        sha256_file(null)
    assert refused.value.kind == "device"


def test_an_unreadable_file_is_listed_as_failed_with_why(kb, monkeypatch):
    """Permission denied (injected: the suite may run as root, who reads everything)."""
    from desktop_app.core.library import sync as syncing

    locked = kb.knowledge_dir / "locked.md"
    locked.write_text("# Locked\nA secret about the kea.\n", encoding="utf-8")
    (kb.knowledge_dir / "open.md").write_text("# Open\nA public note about the kea.\n", encoding="utf-8")
    real = syncing.sha256_file

    def denied(path, inside=None):
        if Path(path).name == "locked.md":
            raise PermissionError(13, "Permission denied", str(path))
        return real(path, inside=inside)

    monkeypatch.setattr(syncing, "sha256_file", denied)
    report = kb.sync()
    assert [(n, str(why)) for n, why in report.failed] == [("locked.md", "cannot read: Permission denied")]
    docs = {d.name: d for d in kb.list_documents()}
    assert (
        docs["locked.md"].status == "failed"
        and str(docs["locked.md"].error) == "cannot read: Permission denied"
    )
    assert docs["open.md"].status == "indexed"
    assert [(n, str(w)) for n, w in kb.sync().failed] == [
        ("locked.md", "cannot read: Permission denied")
    ]  # still said

    monkeypatch.setattr(syncing, "sha256_file", real)  # readable again, mtime untouched (a chmod)
    report = kb.sync()
    assert report.added == ["locked.md"] or report.updated == ["locked.md"]
    assert {d.name: d.status for d in kb.list_documents()} == {"locked.md": "indexed", "open.md": "indexed"}


@pytest.mark.skipif(os.name != "posix" or os.geteuid() == 0, reason="root reads a chmod 000 file")
def test_a_chmod_000_file_is_listed_as_failed(kb):
    locked = kb.knowledge_dir / "locked.md"
    locked.write_text("# Locked\nA secret.\n", encoding="utf-8")
    locked.chmod(0)
    try:
        kb.sync()
        docs = {d.name: d for d in kb.list_documents()}
        assert docs["locked.md"].status == "failed" and "Permission denied" in str(docs["locked.md"].error)
    finally:
        locked.chmod(0o644)

"""The GUI's folder watcher obeys the data-folder rule of add and sync; skipped files are shown."""

from __future__ import annotations

import pytest

from desktop_app.core.config import Config
from desktop_app.core.library.knowledge import KnowledgeBase


@pytest.mark.slow
def test_the_folder_watcher_obeys_the_same_rule(make_window, qtbot):
    from desktop_app.core.library.datafolder import is_data_folder

    window = make_window(Config())
    kb: KnowledgeBase = window.ctx.kb
    window.knowledge.watcher.timer.setInterval(200)  # the test need not wait for the real quiet period
    qtbot.waitUntil(lambda: bool(window.knowledge.watcher.fs.directories()), timeout=10_000)
    copy = kb.knowledge_dir / "backup" / "kd"
    (copy / "index").mkdir(parents=True)
    (copy / "index" / "chroma.sqlite3").write_bytes(b"not really")
    (copy / "knowledge").mkdir()
    (copy / "knowledge" / "copied.md").write_text("# Copied\nFrom an old data folder.\n", encoding="utf-8")
    assert is_data_folder(copy)
    (kb.knowledge_dir / "fresh.md").write_text("# Fresh\nA rosella in the garden.\n", encoding="utf-8")
    # The watcher sees the new files and syncs by itself (debounced): wait for its result.
    qtbot.waitUntil(lambda: "fresh.md" in {d.name for d in kb.list_documents()}, timeout=60_000)
    window.ctx.runner.wait_idle(60_000)
    assert {d.name for d in kb.list_documents()} == {"fresh.md"}


def test_skipped_files_are_listed_under_the_table(make_window, qtbot, drop, tmp_path):
    window = make_window(Config())
    folder = tmp_path / "drop"
    folder.mkdir()
    (folder / "notes.md").write_text("# Notes\nA kea opened the bin.\n", encoding="utf-8")
    (folder / "data.xyz").write_text("no parser for this\n", encoding="utf-8")
    with qtbot.waitSignal(window.knowledge.batch_finished, timeout=120_000) as blocker:
        drop(window.knowledge, [folder])
    report = blocker.args[0]
    assert report.added == ["drop/notes.md"] and [(n, str(why)) for n, why in report.skipped] == [
        (str(folder / "data.xyz"), "unsupported file type: .xyz")
    ]
    assert "1 skipped" in window.knowledge.result_label.text()
    assert window.knowledge.errors.isVisible()
    texts = [window.knowledge.errors.item(i).text() for i in range(window.knowledge.errors.count())]
    # the skipped file with why, then what became of each file read
    assert texts == [f"skipped: {folder / 'data.xyz'}: unsupported file type: .xyz", "drop/notes.md: 1 chunk"]


def test_files_changed_while_the_app_was_closed_are_indexed_at_start(make_window, qtbot, tmp_path):
    knowledge = tmp_path / "data" / "knowledge"
    knowledge.mkdir(parents=True)
    kept = knowledge / "kept.md"
    kept.write_text("# Kept\nA galah on the fence.\n", encoding="utf-8")
    gone = knowledge / "gone.md"
    gone.write_text("# Gone\nA kea on the roof.\n", encoding="utf-8")
    window = make_window(Config())  # the first start indexes what the folder already holds
    kb: KnowledgeBase = window.ctx.kb
    qtbot.waitUntil(lambda: {d.name for d in kb.list_documents()} == {"kept.md", "gone.md"}, timeout=60_000)
    window.ctx.close()

    # While the app is closed: one file edited, one deleted, one new.
    kept.write_text("# Kept\nA galah and a corella on the fence.\n", encoding="utf-8")
    gone.unlink()
    (knowledge / "new.md").write_text("# New\nA rosella in the garden.\n", encoding="utf-8")
    window = make_window(Config())
    kb = window.ctx.kb
    qtbot.waitUntil(lambda: {d.name for d in kb.list_documents()} == {"kept.md", "new.md"}, timeout=60_000)
    window.ctx.runner.wait_idle(60_000)
    assert any("corella" in h.text for h in kb.search("corella", top_k=3))


def test_the_watcher_lists_no_pipe_socket_or_name_qt_cannot_hold(tmp_path):
    import os
    import socket

    from desktop_app.gui.knowledge.watcher import _scan

    (tmp_path / "notes.md").write_text("# Notes\n", encoding="utf-8")
    os.mkfifo(tmp_path / "pipe.md")  # watching it must never open it
    with open(os.path.join(os.fsencode(tmp_path), b"\xe9t\xe9.txt"), "w") as f:
        f.write("Latin-1 name")
    sock = socket.socket(socket.AF_UNIX)
    try:
        sock.bind(str(tmp_path / "socket.md"))
        dirs, files = _scan(tmp_path)
    finally:
        sock.close()
    assert dirs == [str(tmp_path)] and files == [str(tmp_path / "notes.md")]


def test_the_watcher_watches_nothing_outside_the_knowledge_folder(tmp_path):
    from desktop_app.gui.knowledge.watcher import _scan

    outside = tmp_path / "outside"
    outside.mkdir()
    (outside / "secret.txt").write_text("root:x:0:0\n", encoding="utf-8")
    root = tmp_path / "knowledge"
    root.mkdir()
    (root / "a.md").write_text("# A\n", encoding="utf-8")
    (root / "b.md").symlink_to("a.md")  # inside: watched
    (root / "passwd.txt").symlink_to(outside / "secret.txt")
    (root / "linked").symlink_to(outside)
    dirs, files = _scan(root)
    assert dirs == [str(root)] and sorted(files) == [str(root / "a.md"), str(root / "b.md")]


@pytest.mark.slow
def test_a_link_out_seen_by_the_watcher_is_listed_failed_and_never_read(make_window, qtbot, tmp_path):
    secret = tmp_path / "secret.txt"
    secret.write_text("root:x:0:0 zebrasecret\n", encoding="utf-8")
    window = make_window(Config())
    kb: KnowledgeBase = window.ctx.kb
    window.knowledge.watcher.timer.setInterval(200)
    qtbot.waitUntil(lambda: bool(window.knowledge.watcher.fs.directories()), timeout=10_000)
    (kb.knowledge_dir / "passwd.txt").symlink_to(secret)
    qtbot.waitUntil(lambda: "passwd.txt" in {d.name for d in kb.list_documents()}, timeout=60_000)
    window.ctx.runner.wait_idle(60_000)
    (doc,) = kb.list_documents()
    assert doc.status == "failed" and str(doc.error).startswith("a link to outside the knowledge folder (")
    assert str(secret) not in window.knowledge.watcher.fs.files()
    assert all("zebrasecret" not in h.text for h in kb.search("zebrasecret"))

"""The command line is quiet and strict: no library log lines, numeric flags validated, a closed pipe
ends quietly, skipped files counted (listed with --verbose), size checked before any copy, and
`ask` on an empty library answers at once. Real `kdesk` processes (see conftest.py)."""

from __future__ import annotations

import subprocess

import pytest

from desktop_app.core.ask.assistant import EMPTY_LIBRARY, Assistant
from desktop_app.core.config import Config
from desktop_app.core.events import Answer, RouteDecided
from desktop_app.core.library.knowledge import KnowledgeBase


@pytest.fixture
def library(kdesk_factory, tmp_path):
    kd = kdesk_factory()
    src = tmp_path / "src"
    src.mkdir()
    for i in range(30):
        (src / f"note{i:02d}.md").write_text(f"# Note {i}\nParrot number {i} eats seeds.\n", encoding="utf-8")
    assert kd.run("add", str(src), timeout=300).rc == 0
    return kd


def test_search_prints_no_library_log_lines(library):
    res = library.run("search", "parrot seeds", timeout=120)
    assert res.rc == 0 and "note" in res.stdout
    assert res.stderr == "", res.stderr  # e.g. bm25s' "DEBUG bm25s: Building index from tokens"
    verbose = library.run("search", "parrot seeds", "--verbose", timeout=120)
    assert verbose.rc == 0


@pytest.mark.parametrize("value", ["0", "-3", "1.5", "many"])
def test_numeric_flags_are_validated(library, value):
    res = library.run("search", "parrot", "--top-k", value, timeout=60)
    assert res.rc == 2
    assert f"argument --top-k: a whole number of at least 1 expected, not '{value}'" in res.stderr
    assert "Traceback" not in res.stderr


def test_a_closed_pipe_ends_quietly(library):
    kdesk = subprocess.Popen(library.argv("list", "--json"), stdout=subprocess.PIPE, stderr=subprocess.PIPE)
    kdesk.stdout.close()  # the reader is gone before kdesk writes a byte, like `| head -c 0`
    err = kdesk.stderr.read()
    kdesk.wait(timeout=120)
    assert kdesk.returncode == 0, err
    assert err == b"", err


def test_skipped_files_are_counted_and_add_lists_each_with_its_reason(kdesk_factory, tmp_path):
    kd = kdesk_factory(index={"max_document_mb": 1})
    src = tmp_path / "drop"
    (src / ".git").mkdir(parents=True)
    (src / ".git" / "config").write_text("[core]\n", encoding="utf-8")
    (src / ".hidden.md").write_text("# Hidden\n", encoding="utf-8")
    (src / "photo.xyz").write_bytes(b"\x00\x01")
    (src / "huge.txt").write_bytes(b"parrot " * 300_000)  # 2.1 MB > 1 MB
    (src / "ok.md").write_text("# OK\nA galah is pink and grey.\n", encoding="utf-8")
    res = kd.run("add", str(src), timeout=300)
    assert res.rc == 0, res.stderr
    assert "1 added" in res.stdout and "4 skipped" in res.stdout and "--verbose" not in res.stdout
    assert not (kd.data_dir / "knowledge" / "drop" / "huge.txt").exists()  # checked before any copy
    assert not (kd.data_dir / "knowledge" / "drop" / "photo.xyz").exists()
    lines = [ln for ln in res.stderr.splitlines() if ln.startswith("skipped")]
    assert lines == [
        f"skipped   {src / '.git'}: hidden folder",
        f"skipped   {src / '.hidden.md'}: hidden file",
        f"skipped   {src / 'huge.txt'}: too large: 2.1 MB > limit 1 MB (index.max_document_mb); "
        "split the file or raise the limit",
        f"skipped   {src / 'photo.xyz'}: unsupported file type: .xyz",
    ]
    as_json = kd.run("add", str(src / "huge.txt"), "--json", timeout=300).json()
    assert as_json["skipped"][0]["name"] == str(src / "huge.txt") and not as_json["failed"]


def test_adding_only_a_refused_file_says_why_and_exits_1(kdesk_factory, tmp_path):
    kd = kdesk_factory(index={"max_document_mb": 1})
    huge = tmp_path / "huge.txt"
    huge.write_bytes(b"parrot " * 160_000)  # 1.1 MB > 1 MB
    res = kd.run("add", str(huge), timeout=300)
    assert res.rc == 1  # nothing added and something refused: a failure (0 success, 1 failure, 2 usage)
    assert "0 added" in res.stdout and "1 skipped" in res.stdout
    assert res.stderr.strip() == (
        f"skipped   {huge}: too large: 1.1 MB > limit 1 MB (index.max_document_mb); split the file or raise the limit"
    )
    good = tmp_path / "good.md"
    good.write_text("# Good\nA kea is green.\n", encoding="utf-8")
    assert kd.run("add", str(good), str(huge), timeout=300).rc == 0  # something was added


def test_an_unreadable_image_is_named_once(kdesk_factory, tmp_path):
    kd = kdesk_factory()
    (tmp_path / "empty.png").write_bytes(b"")
    res = kd.run("add", str(tmp_path / "empty.png"), timeout=300)
    assert res.rc == 1  # the only file failed
    assert res.stderr.strip() == "failed    empty.png: the image file is empty"
    [doc] = kd.run("list", "--json", timeout=120).json()["documents"]
    assert doc["name"] == "empty.png" and doc["error"] == "the image file is empty"
    again = kd.run("add", str(tmp_path / "empty.png"), timeout=300)  # unchanged, still failed
    assert again.rc == 1 and "failed    empty.png: the image file is empty" in again.stderr


def test_a_failure_names_the_path_once(kdesk_factory, tmp_path):
    kd = kdesk_factory()
    res = kd.run("add", str(tmp_path / "missing.md"), timeout=120)
    assert res.rc == 1
    assert res.stderr.strip() == f"failed    {tmp_path / 'missing.md'}: no such file"


def test_ask_on_an_empty_library_answers_without_loading_a_model(tmp_path, monkeypatch):
    import desktop_app.core.library.knowledge as knowledge

    def no_model(*_a, **_k):
        raise AssertionError("a model was loaded to search an empty library")

    monkeypatch.setattr(knowledge, "make_embedder", no_model)
    kb = KnowledgeBase(tmp_path / "data", Config())
    events = list(Assistant(kb, None, kb.config).ask("What do kea eat?"))
    assert isinstance(events[0], RouteDecided) and not events[0].use_rag
    assert isinstance(events[-1], Answer) and events[-1].text == str(EMPTY_LIBRARY)
    kb.close()


def test_ask_on_an_empty_library_from_the_command_line(kdesk_factory):
    kd = kdesk_factory()
    res = kd.run("ask", "What do kea eat?", "--json", timeout=120)
    assert res.rc == 0, res.stderr
    out = res.json()
    assert out["answer"] == str(EMPTY_LIBRARY) and out["hits"] == [] and out["route"]["use_rag"] is False


def test_search_on_an_empty_library_finds_nothing_without_loading_a_model(tmp_path, monkeypatch):
    import desktop_app.core.library.knowledge as knowledge

    def no_model(*_a, **_k):
        raise AssertionError("a model was loaded to search an empty library")

    monkeypatch.setattr(knowledge, "make_embedder", no_model)
    kb = KnowledgeBase(tmp_path / "data", Config())
    assert kb.search("What do kea eat?") == []
    kb.close()


def test_search_on_an_empty_library_from_the_command_line_says_why(kdesk_factory):
    kd = kdesk_factory()
    res = kd.run("search", "kea", timeout=120)
    assert res.rc == 0, res.stderr
    assert res.stdout.strip() == str(EMPTY_LIBRARY)
    out = kd.run("search", "kea", "--json", timeout=120).json()
    assert out["hits"] == [] and out["note"] == str(EMPTY_LIBRARY)

"""The data folder is never indexed: not by `add` of a folder that holds it, not by `sync`, not by
the GUI's folder watcher; adding it (or its index) is refused with a reason. Real `kdesk` processes
on the product's OpenAI-compatible embedder client (a local hashing server, see conftest.py)."""

from __future__ import annotations

import os
from pathlib import Path


def _docs(kd) -> dict[str, dict]:
    res = kd.run("list", "--json", timeout=120)
    assert res.rc == 0, res.stderr
    return {d["name"]: d for d in res.json()["documents"]}


def _files(folder: Path) -> set[str]:
    return {p.relative_to(folder).as_posix() for p in folder.rglob("*") if p.is_file()}


def test_adding_a_folder_that_holds_the_data_folder_leaves_the_data_folder_out(
    tmp_path, kdesk_cls, shared_embeddings_server
):
    home = tmp_path / "Documents"
    home.mkdir()
    (home / "a.md").write_text("# Alpha\nThe kea is an alpine parrot.\n", encoding="utf-8")
    (home / "b.md").write_text("# Beta\nThe kakapo is a flightless parrot.\n", encoding="utf-8")
    kd = kdesk_cls(home / "kd", shared_embeddings_server.url)  # the library lives inside Documents
    for _ in range(2):  # the second run must not find the first run's copies or index files
        res = kd.run("add", str(home), "--json", timeout=300)
        assert res.rc == 0, res.stderr
        skipped = res.json()["skipped"]
        assert [s["name"] for s in skipped if "data folder" in s["reason"]] == [str(home / "kd")]
    assert set(_docs(kd)) == {"Documents/a.md", "Documents/b.md"}
    assert _files(home / "kd" / "knowledge") == {"Documents/a.md", "Documents/b.md"}


def test_another_librarys_data_folder_inside_an_added_folder_is_left_out(
    tmp_path, kdesk_factory, kdesk_cls, shared_embeddings_server
):
    src = tmp_path / "share"
    src.mkdir()
    (src / "notes.md").write_text("# Notes\nMacaws eat clay.\n", encoding="utf-8")
    other = kdesk_cls(src / "team-library", shared_embeddings_server.url)
    assert other.run("add", str(src / "notes.md"), timeout=300).rc == 0  # a real library, indexed
    kd = kdesk_factory()
    res = kd.run("add", str(src), "--json", timeout=300)
    assert res.rc == 0, res.stderr
    reasons = {s["name"]: s["reason"] for s in res.json()["skipped"]}
    assert "another Knowledge Desk library" in reasons[str(src / "team-library")]
    assert set(_docs(kd)) == {"share/notes.md"}


def test_adding_the_data_folder_or_its_index_is_refused_with_a_reason(tmp_path, kdesk_factory):
    kd = kdesk_factory()
    (tmp_path / "x.md").write_text("# X\nA lorikeet drinks nectar.\n", encoding="utf-8")
    assert kd.run("add", str(tmp_path / "x.md"), timeout=300).rc == 0
    for target, words in (
        (kd.data_dir, "own data folder"),
        (kd.data_dir / "index", "inside Knowledge Desk's data folder"),
    ):
        res = kd.run("add", str(target), "--json", timeout=300)
        assert res.rc == 1, res.stdout + res.stderr  # nothing could be added
        failed = res.json()["failed"]
        assert failed[0]["name"] == str(target) and words in failed[0]["error"]
        assert "Traceback" not in res.stderr
    # A file already in the knowledge folder is indexed in place: nothing is copied.
    res = kd.run("add", str(kd.data_dir / "knowledge" / "x.md"), "--json", timeout=300)
    assert res.rc == 0 and res.json()["unchanged"] == ["x.md"]
    assert set(_docs(kd)) == {"x.md"}


def test_sync_never_indexes_a_data_folder_or_a_link_into_the_index(tmp_path, kdesk_factory):
    kd = kdesk_factory()
    knowledge = kd.data_dir / "knowledge"
    (knowledge / "real.md").parent.mkdir(parents=True, exist_ok=True)
    (knowledge / "real.md").write_text("# Real\nCockatoos are loud.\n", encoding="utf-8")
    assert kd.run("sync", timeout=300).rc == 0
    # What an older version left behind: a copy of a whole data folder inside the knowledge folder.
    old = knowledge / "old-copy" / "kd"
    (old / "knowledge").mkdir(parents=True)
    (old / "knowledge" / "note.md").write_text("# Note\nA copied note.\n", encoding="utf-8")
    (old / "index").mkdir()
    (old / "index" / "embedders.json").write_text("{}", encoding="utf-8")
    os.symlink(next((kd.data_dir / "index").rglob("bm25.json")), knowledge / "innocent.txt")
    res = kd.run("sync", "--json", timeout=300)
    assert res.rc == 0, res.stderr
    assert set(_docs(kd)) == {"real.md"}

"""Links in the knowledge folder never lead out of it (issue 44): `sync`, `reindex`, `add` of a
folder inside it and the window's watcher read no file outside the knowledge folder, however the link
gets there (a file link, a chain, a link through a linked folder, `..` after a link, one swapped
after the scan). The link is listed as failed with where it leads; what an older version indexed
through it leaves every index. Links that stay inside are fine; a second name of a file is skipped.
Real SQLite, Chroma and the product's OpenAI-compatible embedder client on a hashing server, whose
requests show what was read."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from desktop_app.core.config import Config
from desktop_app.core.library import switching
from desktop_app.core.library.documents import ParseError
from desktop_app.core.library.knowledge import KnowledgeBase
from desktop_app.core.paths import OutsideFolder, open_regular

SECRET = "zebrasecret"  # a word only the file outside holds
OUTSIDE = "a link to outside the knowledge folder ("


@pytest.fixture
def kb(tmp_path, embeddings_server):
    cfg = Config()
    cfg.embedding.model, cfg.embedding.url = "openai:hash", embeddings_server.url
    kb = KnowledgeBase(tmp_path / "data", config=cfg)
    yield kb
    kb.close()


@pytest.fixture
def secret(tmp_path) -> Path:
    """/…/outside/secret.txt and a folder beside it that a link may lead to."""
    outside = tmp_path / "outside"
    (outside / "deeper").mkdir(parents=True)
    path = outside / "secret.txt"
    path.write_text(f"root:x:0:0 {SECRET} password line\n", encoding="utf-8")
    return path


def _embedded(server) -> str:
    """Every text the embedder was sent."""
    return "\n".join(
        t
        for r in server.script.requests
        for t in ([r["input"]] if isinstance(r["input"], str) else r["input"])
    )


def _links_out(knowledge: Path, secret: Path) -> set[str]:
    """Every way out the issue names; returns their names."""
    outside = secret.parent
    os.symlink(secret, knowledge / "passwd.txt")  # absolute
    os.symlink(os.path.relpath(secret, knowledge), knowledge / "relative.txt")  # ../../outside/secret.txt
    os.symlink(secret, knowledge / ".hop.txt")  # hidden: never indexed itself, but a link may lead to it
    os.symlink(".hop.txt", knowledge / "chain.txt")  # points inside, to a link that points out
    (knowledge / "sub").mkdir()
    os.symlink("../chain.txt", knowledge / "sub" / "deep.txt")
    os.symlink(outside, knowledge / "linked")  # a folder link (never walked)
    os.symlink("linked/secret.txt", knowledge / "through.txt")  # a file link through it
    os.symlink(outside / "deeper", knowledge / "up")
    # Read as written, knowledge/up/../secret.txt is knowledge/secret.txt; the kernel goes up from
    # outside/deeper, to outside/secret.txt.
    os.symlink("up/../secret.txt", knowledge / "dotdot.txt")
    return {"passwd.txt", "relative.txt", "chain.txt", "sub/deep.txt", "through.txt", "dotdot.txt"}


def test_sync_reads_nothing_through_a_link_out_and_says_where_it_leads(kb, secret, embeddings_server):
    k = kb.knowledge_dir
    out = _links_out(k, secret)
    (k / "a.md").write_text("# Kea\nThe kea is an alpine parrot.\n", encoding="utf-8")
    os.symlink("a.md", k / "same.md")  # a second name of a.md: indexed once
    (k / ".drafts").mkdir()
    (k / ".drafts" / "kaka.md").write_text("# Kaka\nThe kaka is a forest parrot.\n", encoding="utf-8")
    os.symlink(".drafts/kaka.md", k / "kaka.md")  # a link that stays inside: fine

    report = kb.sync()
    assert sorted(report.added) == ["a.md", "kaka.md"]
    failed = {n: str(why) for n, why in report.failed}
    assert set(failed) == out
    assert all(
        why == f"{OUTSIDE}{secret}): never read; copy the file in to index it" for why in failed.values()
    )
    assert [(n, str(why)) for n, why in report.skipped] == [
        ("same.md", "a link to a.md, which is indexed under its own name")
    ]
    docs = {d.name: d for d in kb.list_documents()}
    assert {n for n, d in docs.items() if d.status == "failed"} == out
    assert str(docs["passwd.txt"].error).startswith(OUTSIDE) and docs["passwd.txt"].chunks == 0
    assert {n for n, d in docs.items() if d.status == "indexed"} == {"a.md", "kaka.md"}
    assert SECRET not in _embedded(embeddings_server)  # never read, so never embedded
    assert all(SECRET not in h.text for h in kb.search(f"{SECRET} root password"))
    assert [h.source for h in kb.search("kea alpine parrot")].count("a.md") == 1  # not twice (same.md)

    embeddings_server.script.requests.clear()  # the searches sent the question itself
    again = kb.sync()  # said again, nothing read
    assert {n for n, _ in again.failed} == out and sorted(again.unchanged) == ["a.md", "kaka.md"]
    assert SECRET not in _embedded(embeddings_server)
    (k / "passwd.txt").unlink()  # what the reason says: the file copied in is indexed
    (k / "passwd.txt").write_text(secret.read_text(encoding="utf-8"), encoding="utf-8")
    assert kb.sync().updated == ["passwd.txt"]
    assert {d.name: d.status for d in kb.list_documents()}["passwd.txt"] == "indexed"


def test_what_an_older_version_indexed_through_a_link_out_leaves_every_index(kb, secret, embeddings_server):
    k = kb.knowledge_dir
    (k / "a.md").write_text("# Kea\nThe kea is an alpine parrot.\n", encoding="utf-8")
    # As an older version left it: the file's text indexed under the link's name (Chroma, keyword, dense).
    (k / "passwd.txt").write_text(secret.read_text(encoding="utf-8"), encoding="utf-8")
    (k / "same.md").write_text("# Kea\nThe kea is an alpine parrot.\n", encoding="utf-8")
    kb.sync()
    doc_id = kb.doc_id("passwd.txt")
    assert (
        kb.store.chunks_of([doc_id])
        and doc_id in kb.keyword.doc_ids()
        and doc_id in kb.opened_dense.doc_ids()
    )
    assert any(SECRET in h.text for h in kb.search(f"{SECRET} password"))
    (k / "passwd.txt").unlink()
    os.symlink(secret, k / "passwd.txt")
    (k / "same.md").unlink()
    os.symlink("a.md", k / "same.md")

    report = kb.sync()
    assert [n for n, _ in report.failed] == ["passwd.txt"] and report.removed == ["same.md"]
    assert kb.store.chunks_of([doc_id]) == []
    assert doc_id not in kb.keyword.doc_ids() and doc_id not in kb.opened_dense.doc_ids()
    assert all(SECRET not in h.text for h in kb.search(f"{SECRET} password"))
    kb.close()
    reopened = KnowledgeBase(kb.data_dir, config=kb.config)  # what is on disk, not in this process
    try:
        assert all(SECRET not in h.text for h in reopened.search(f"{SECRET} password"))
        assert {d.name: d.status for d in reopened.list_documents()} == {
            "a.md": "indexed",
            "passwd.txt": "failed",
        }
    finally:
        reopened.close()


def test_reindex_add_and_a_model_switch_apply_the_same_rule(kb, secret, embeddings_server):
    k = kb.knowledge_dir
    out = _links_out(k, secret)
    (k / "sub" / "b.md").write_text("# Tui\nThe tui sings at dawn.\n", encoding="utf-8")
    report = kb.add([k / "sub"])  # a folder inside the knowledge folder: indexed in place
    assert report.added == ["sub/b.md"] and [n for n, _ in report.failed] == ["sub/deep.txt"]
    named = [k / "passwd.txt", k / "linked", k / "linked" / "secret.txt"]  # refused, nothing copied in
    report = kb.add(named)
    assert [(n, str(why)[: len(OUTSIDE)]) for n, why in report.failed] == [(str(n), OUTSIDE) for n in named]
    assert not list(k.glob("passwd (*")) and not (k / "secret.txt").exists() and not (k / "outside").exists()
    report = kb.reindex()
    assert {n for n, _ in report.failed} == out and report.added == ["sub/b.md"]
    assert {d.name for d in kb.list_documents() if d.status == "failed"} == out
    # The model switch's fill (the same scan, in batches): the new index lists them failed too.
    old = kb.embedder_name
    assert switching.start(kb, "openai:hash2", embeddings_server.url) is not None
    assert switching.fill(kb, batch_seconds=0.0)
    switched = KnowledgeBase(kb.data_dir)  # config.toml now names the new model
    try:
        assert switched.embedder_name != old
        assert {d.name for d in switched.list_documents() if d.status == "failed"} == out
    finally:
        switched.close()
    assert SECRET not in _embedded(embeddings_server)


def test_a_link_swapped_after_the_scan_is_caught_on_the_open_file(kb, secret, embeddings_server, monkeypatch):
    from desktop_app.core.library import sync as syncing
    from desktop_app.core.library.reading import chunk_file

    k = kb.knowledge_dir
    root = k.resolve()
    inside = k / "a.md"
    inside.write_text("# Kea\nThe kea is an alpine parrot.\n", encoding="utf-8")
    link = k / "swap.txt"
    os.symlink(secret, link)

    # The open itself: the file opened is compared with the resolved path (device, inode).
    with pytest.raises(OutsideFolder):
        open_regular(link, inside=root)
    real_open = os.open

    def swapped(path, flags, *args, **kw):  # the link leads out at the open, inside right after
        fd = real_open(path, flags, *args, **kw)
        if Path(path) == link:
            link.unlink()
            os.symlink("a.md", link)
        return fd

    monkeypatch.setattr(os, "open", swapped)
    with pytest.raises(OutsideFolder):
        open_regular(link, inside=root)
    monkeypatch.setattr(os, "open", real_open)
    link.unlink()
    os.symlink(secret, link)

    # The sync: the link looked inside when scanned (the scan's check made to miss it), out when read.
    monkeypatch.setattr(syncing, "_inside_files", lambda files, root: (dict(files), {}))
    report = kb.sync()
    assert [(n, str(why)[: len(OUTSIDE)]) for n, why in report.failed] == [("swap.txt", OUTSIDE)]
    assert SECRET not in _embedded(embeddings_server)
    # The parser opens the resolved path, checked again: a link out when parsed is refused.
    with pytest.raises(ParseError) as refused:
        chunk_file(kb.config.index, 500, link, "swap.txt", "swap-0", 10)
    assert str(refused.value.message).startswith(OUTSIDE)


def test_kdesk_sync_and_list_say_why_a_link_out_is_never_read(kdesk_factory, tmp_path):
    kd = kdesk_factory()
    knowledge = kd.data_dir / "knowledge"
    knowledge.mkdir(parents=True)
    secret = tmp_path / "passwd"
    secret.write_text(f"root:x:0:0 {SECRET}\n", encoding="utf-8")
    os.symlink(secret, knowledge / "passwd.txt")
    (knowledge / "a.md").write_text("# Kea\nThe kea is an alpine parrot.\n", encoding="utf-8")
    why = f"{OUTSIDE}{secret}): never read; copy the file in to index it"

    res = kd.run("sync", "--json", timeout=300)
    assert res.rc == 0 and "Traceback" not in res.stderr, res.stderr
    assert res.json()["added"] == ["a.md"] and res.json()["failed"] == [{"name": "passwd.txt", "error": why}]
    res = kd.run("list", timeout=120)  # the row, status failed, with why
    row = next(line for line in res.stdout.splitlines() if line.startswith("passwd.txt"))
    assert row.split()[1] == "failed" and row.endswith(why)


def test_every_link_below_the_knowledge_folder_is_followed_to_its_end(kb, secret):
    from desktop_app.core.paths import resolve_inside

    k = kb.knowledge_dir
    root = k.resolve()
    _links_out(k, secret)
    (k / "a.md").write_text("# Kea\n", encoding="utf-8")
    os.symlink(k / "sub", k / "alias")  # a folder link that stays inside
    for path in (k / "linked" / "secret.txt", k / "up" / ".." / "secret.txt", k / "alias" / "deep.txt"):
        with pytest.raises(OutsideFolder) as out:
            resolve_inside(path, root)
        assert out.value.target == str(secret), path
    assert resolve_inside(k / "a.md", root) == k / "a.md"  # no link: the path itself
    assert resolve_inside(k / "sub" / ".." / "a.md", root) == root / "a.md"
    assert resolve_inside(k / "alias" / ".." / "a.md", root) == root / "a.md"

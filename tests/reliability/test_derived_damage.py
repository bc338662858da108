"""Damage to each derived file under index/ (issue 44), done behind the library's back as SQLite's
own corrupt-database tests do: truncated, emptied, random bytes written at an offset, deleted.

Each case asserts what a user needs: the knowledge folder is unchanged, a message names the damaged
file, search answers from what survived (the vector store's texts, when they survived), the damaged
file is kept beside itself (never deleted), and the next sync gives back, for 20 questions, the same
set of top-10 sources as before the damage (order may differ among near-ties).
"""

from __future__ import annotations

import hashlib
import logging
import random
import shutil
from pathlib import Path

import pytest

from desktop_app.core.config import Config
from desktop_app.core.library.damage import StoreDamaged
from desktop_app.core.library.knowledge import KnowledgeBase

TOP = 10


def top_sources(kb: KnowledgeBase, questions: list[str]) -> dict[str, frozenset[str]]:
    return {q: frozenset(h.source for h in kb.search(q, top_k=TOP)) for q in questions}


def _folder_digest(folder: Path) -> dict[str, str]:
    return {
        p.relative_to(folder).as_posix(): hashlib.sha256(p.read_bytes()).hexdigest()
        for p in sorted(folder.rglob("*"))
        if p.is_file()
    }


@pytest.fixture(scope="module")
def pristine(tmp_path_factory, minilm, twenty) -> tuple[Path, dict[str, frozenset[str]]]:
    """A library indexed, then rebuilt once by `reindex` (so its index pointer exists), and its
    top-10 sources for every question."""
    data = tmp_path_factory.mktemp("pristine") / "data"
    docs, questions = twenty
    kb = KnowledgeBase(data, config=Config(), embedder=minilm)
    for name, text in docs.items():
        path = kb.knowledge_dir / name
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text + "\n", encoding="utf-8")
    kb.sync()
    kb.reindex()
    baseline = top_sources(kb, questions)
    assert kb._generation_pointer.is_file()
    kb.close()
    return data, baseline


def _damage(path: Path, how: str, seed: int = 0) -> None:
    if how == "deleted":
        shutil.rmtree(path) if path.is_dir() else path.unlink()
    elif how == "zero":
        path.write_bytes(b"")
    elif how == "truncated":
        size = path.stat().st_size
        with open(path, "r+b") as f:
            f.truncate(min(1000, size // 2))
    elif how == "bytes":  # 6 KB of noise from offset 100 (the issue's own case for the manifest)
        noise = random.Random(seed).randbytes(6000)
        with open(path, "r+b") as f:
            f.seek(min(100, path.stat().st_size // 4))
            f.write(noise)
    else:
        raise ValueError(how)


def _derived(kb: KnowledgeBase, which: str) -> Path:
    return {
        "manifest": kb.collection_dir / "manifest.sqlite3",
        "pointer": kb._generation_pointer,
        "keyword": kb.collection_dir / "bm25" / "bm25.json",
        "dense": kb.collection_dir / "dense" / "rows.json",
        "vectors": kb.collection_dir / "dense" / "vectors.npy",
        "store": kb.index_dir / "chroma" / "chroma.sqlite3",
    }[which]


CASES = [
    (which, how)
    for which in ("manifest", "pointer", "keyword", "dense", "vectors", "store")
    for how in ("truncated", "zero", "bytes", "deleted")
]


@pytest.mark.parametrize(("which", "how"), CASES, ids=[f"{w}-{h}" for w, h in CASES])
def test_damage_is_named_set_aside_and_rebuilt(tmp_path, pristine, minilm, twenty, caplog, which, how):
    source, baseline = pristine
    docs, questions = twenty
    data = tmp_path / "data"
    shutil.copytree(source, data)
    kb = KnowledgeBase(data, config=Config(), embedder=minilm)
    target = _derived(kb, which)
    kb.close()
    knowledge = _folder_digest(data / "knowledge")
    _damage(target, how)

    kb = KnowledgeBase(data, config=Config(), embedder=minilm)
    caplog.set_level(logging.WARNING)
    told: list[str] = []
    try:  # a reader first: search answers from what survived
        hits = kb.search(questions[0], top_k=TOP)
        told += kb.search_warnings()
    except StoreDamaged as exc:  # the vector store's texts did not survive: said, with what to do
        assert which == "store"
        hits, told = [], [str(exc)]
        assert "kdesk sync" in str(exc)
    told += [r.getMessage() for r in caplog.records]
    named = str(target)
    if which in ("dense", "vectors"):  # the dense index is the folder of both files
        named = str(target.parent)
    elif which == "store" and how in ("zero", "deleted"):  # an empty store: its folder is named
        named = str(target.parent)
    assert any(named in line for line in told), (named, told)
    store_lost = which == "store"
    if not store_lost:
        assert hits and hits[0].source == "recipes/dumplings.md", [h.source for h in hits]

    report = kb.sync()  # a writer: sets aside what is damaged and rebuilds it
    assert not report.failed
    assert top_sources(kb, questions) == baseline
    if how != "deleted" and (which, how) != ("store", "zero"):  # kept beside itself, never deleted
        # (an emptied store file is no damage to SQLite: an empty store, filled again by the sync)
        aside = target.parent if which in ("dense", "vectors", "store") else target
        parent = aside.parent
        assert list(parent.glob(aside.name + ".damaged-*")), sorted(p.name for p in parent.iterdir())
    kb.close()
    assert _folder_digest(data / "knowledge") == knowledge
    # And a new process finds a sound library: nothing more to redo.
    again = KnowledgeBase(data, config=Config(), embedder=minilm)
    assert again.sync().unchanged == sorted(docs)
    again.close()


def test_reindex_works_whatever_is_damaged(tmp_path, pristine, minilm, twenty):
    """Every derived file damaged at once: `reindex` still rebuilds the library from its folder."""
    source, baseline = pristine
    docs, questions = twenty
    data = tmp_path / "data"
    shutil.copytree(source, data)
    kb = KnowledgeBase(data, config=Config(), embedder=minilm)
    targets = [_derived(kb, w) for w in ("manifest", "keyword", "dense", "store")]
    pointer = _derived(kb, "pointer")
    kb.close()
    for i, target in enumerate(targets):
        _damage(target, "bytes", seed=i)
    pointer.write_bytes(b"\x00\xffnot a build\n")
    kb = KnowledgeBase(data, config=Config(), embedder=minilm)
    report = kb.reindex()
    assert sorted(report.added) == sorted(docs) and not report.failed
    assert top_sources(kb, questions) == baseline
    kb.close()

"""Chunk seals (seals.py, checked by integrity.py): a keyed hash of each chunk's id, text, metadata and vector."""

from __future__ import annotations

import os
import stat

import numpy as np
import pytest

from desktop_app.core.library.chroma_client import StoreError, make_client
from desktop_app.core.library.documents import Chunk
from desktop_app.core.library.seals import KEY_FILE, MAC_FIELD, NEAR_FIELD, Sealer, chunk_key_of
from desktop_app.core.library.store import ChromaStore

META = {"doc_id": "d1", "source": "notes/été.md", "page": -1, "chunk_index": 0, "ocr": False, "lang": "en"}


def _unit(seed: int, dim: int = 384) -> np.ndarray:
    v = np.random.default_rng(seed).standard_normal(dim).astype(np.float32)
    return v / np.linalg.norm(v)


def test_a_sealed_chunk_checks_and_any_change_to_it_does_not():
    sealer = Sealer(b"k" * 32)
    vec = _unit(0)
    meta = sealer.seal("d1-chunk-0", "the kea", META, vec)
    assert len(meta[MAC_FIELD]) == 64 and sealer.check("d1-chunk-0", "the kea", meta, vec)

    assert not sealer.check("d1-chunk-1", "the kea", meta, vec)  # moved to another id
    assert not sealer.check("d1-chunk-0", "the keas", meta, vec)
    assert not sealer.check("d1-chunk-0", "the kea", {**meta, "source": "other.md"}, vec)
    assert not sealer.check("d1-chunk-0", "the kea", {**meta, "ocr": 0}, vec)  # bool and int differ
    assert not sealer.check("d1-chunk-0", "the kea", {k: v for k, v in meta.items() if k != "page"}, vec)
    assert not sealer.check("d1-chunk-0", "the kea", meta, _unit(1))
    assert not sealer.check("d1-chunk-0", "the kea", meta, None)
    assert not sealer.check("d1-chunk-0", "the kea", {**meta, NEAR_FIELD: "0,1"}, vec)
    assert not Sealer(b"j" * 32).check("d1-chunk-0", "the kea", meta, vec)  # another library's key


def test_the_vector_seal_survives_the_drift_chroma_gives_but_not_a_nudge():
    """Chroma hands a cosine vector back up to one float32 ulp off per component (1.3e-7 relative,
    measured): that passes; moving one component by two grid steps (3e-5) does not."""
    sealer = Sealer(os.urandom(32))
    rng = np.random.default_rng(7)
    for seed in range(200):
        vec = _unit(seed)
        meta = sealer.seal("c", "t", META, vec)
        ulps = rng.integers(-2, 3, size=vec.shape)
        drifted = vec + ulps * np.spacing(np.abs(vec))
        assert sealer.check("c", "t", meta, drifted.astype(np.float32))
        assert not sealer.check("c", "t", meta, vec * np.float32(3.0))  # would scale the dense cosines
        nudged = vec.copy()
        nudged[seed % len(vec)] += 3e-5
        assert not sealer.check("c", "t", meta, nudged)


def test_lone_surrogates_in_stored_strings_are_sealed_as_they_are():
    sealer = Sealer(b"k" * 32)
    name = os.fsdecode(b"\xe9t\xe9.txt")  # a non-UTF-8 file name as Python holds it
    meta = sealer.seal("c", "text", {**META, "source": name}, _unit(3))
    assert sealer.check("c", "text", meta, _unit(3))
    assert not sealer.check("c", "text", {**meta, "source": "\ufffdt\ufffd.txt"}, _unit(3))


def test_the_chunk_key_is_made_once_private_and_never_replaced(tmp_path):
    key = chunk_key_of(tmp_path)
    path = tmp_path / KEY_FILE
    assert len(key) == 32 and chunk_key_of(tmp_path) == key
    if os.name == "posix":
        assert stat.S_IMODE(path.stat().st_mode) == 0o600
    path.write_text("short\n")
    with pytest.raises(StoreError, match="chunk key"):
        chunk_key_of(tmp_path)
    assert path.read_text() == "short\n"


def test_a_store_leaves_out_foreign_chunks_and_reports_them(tmp_path):
    """The embedded store too: a chunk changed on disk (or by anything else) is not returned."""
    store = ChromaStore(make_client(tmp_path), "chunks__test__16", sealer=Sealer(b"k" * 32))
    store.strict = True
    seen: list[list[str]] = []
    store.on_foreign = seen.append
    chunks = [Chunk(f"d1-chunk-{i}", "d1", f"text {i}", "a.md", None, [], i, 2, 0, 6) for i in range(2)]
    vecs = np.stack([_unit(i, 16) for i in range(2)])
    store.upsert(chunks, vecs)
    assert [h.chunk_id for h in store.get(["d1-chunk-0", "d1-chunk-1"])] == ["d1-chunk-0", "d1-chunk-1"]

    store.collection.update(ids=["d1-chunk-1"], documents=["forged"], embeddings=[vecs[1].tolist()])
    assert [h.chunk_id for h in store.get(["d1-chunk-0", "d1-chunk-1"])] == ["d1-chunk-0"]
    assert [h.chunk_id for h in store.chunks_of(["d1"])] == ["d1-chunk-0"]
    assert [r[0] for r in store.records()] == ["d1-chunk-0"]  # never into the dense index
    assert [[h.chunk_id for h in hits] for hits in store.query(vecs[1:], 2)] == [["d1-chunk-0"]]
    assert seen == [["d1-chunk-1"]] * 4


def test_sync_checks_seals_in_turn_and_repairs_the_embedded_store(tmp_path, minilm, monkeypatch):
    """The embedded index is checked the same way: one page of seals a sync, in turn (a page of one
    chunk here), so a chunk changed on disk is found within as many syncs as there are chunks."""
    from desktop_app.core.config import Config
    from desktop_app.core.library import integrity
    from desktop_app.core.library.knowledge import KnowledgeBase

    monkeypatch.setattr(integrity, "SAMPLE_CHUNKS", 1)
    kb = KnowledgeBase(tmp_path / "data", config=Config(), embedder=minilm)
    for name in ("a", "b", "c"):
        (kb.knowledge_dir / f"{name}.md").write_text(f"# {name}\n\nThe {name} note counts {ord(name)} kea.\n")
    assert len(kb.sync().added) == 3 and kb.store.count() == 3
    got = kb.store.collection.get(ids=[kb.doc_id("c.md") + "-chunk-0"], include=["metadatas", "embeddings"])
    kb.store.collection.upsert(
        ids=got["ids"],
        documents=["The c note counts 5 kea."],
        metadatas=got["metadatas"],
        embeddings=got["embeddings"],
    )
    repaired = [[(n, str(why)) for n, why in kb.sync().repaired] for _ in range(3)]
    assert sorted(r for r in repaired if r) == [
        [("c.md", "re-indexed: its chunks in the vector store were changed outside the app")]
    ]
    assert "counts 99 kea" in kb.get_chunk(kb.doc_id("c.md") + "-chunk-0").text
    kb.close()


def test_a_replaced_chunk_key_re_embeds_every_document(tmp_path, minilm):
    from desktop_app.core.config import Config
    from desktop_app.core.library.knowledge import KnowledgeBase

    data = tmp_path / "data"
    kb = KnowledgeBase(data, config=Config(), embedder=minilm)
    for name in ("a", "b"):
        (kb.knowledge_dir / f"{name}.md").write_text(f"# {name}\n\nThe {name} note counts {ord(name)} kea.\n")
    assert len(kb.sync().added) == 2
    kb.close()
    (data / KEY_FILE).unlink()  # a new key is made: every seal is wrong now

    again = KnowledgeBase(data, config=Config(), embedder=minilm)
    report = again.sync()
    assert [(n, str(why)) for n, why in report.repaired] == [(n, "re-indexed: this library's chunk key changed") for n in ("a.md", "b.md")]
    assert sorted(report.updated) == ["a.md", "b.md"]
    assert "counts 98 kea" in again.search("how many kea does the b note count")[0].text
    assert again.search_warnings() == [] and again.sync().changed == 0
    again.close()

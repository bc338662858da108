"""The exact in-memory dense index (index/dense.py) and how the KnowledgeBase keeps it in step."""

from __future__ import annotations

from dataclasses import replace

import numpy as np
import pytest

from desktop_app.core.config import Config
from desktop_app.core.library.dense import DenseIndex
from desktop_app.core.library.knowledge import KnowledgeBase
from desktop_app.core.library.retrieval import Retriever

DIM = 8


def unit(rng: np.random.Generator, n: int) -> np.ndarray:
    v = rng.normal(size=(n, DIM)).astype(np.float32)
    return v / np.linalg.norm(v, axis=1, keepdims=True)


def fill(index: DenseIndex, rng: np.random.Generator, docs: dict[str, int], scope: str = "shared") -> dict:
    vecs = {}
    for doc, n in docs.items():
        v = unit(rng, n)
        ids = [f"{doc}-chunk-{i}" for i in range(n)]
        index.upsert(ids, [doc] * n, [scope] * n, v)
        vecs.update(zip(ids, v))
    return vecs


def brute(vecs: dict, q: np.ndarray, k: int) -> list[str]:
    return sorted(vecs, key=lambda cid: -float(vecs[cid] @ q))[:k]


def test_top_is_the_exact_nearest_chunks_and_scores_are_cosines(tmp_path):
    rng = np.random.default_rng(0)
    index = DenseIndex(tmp_path, DIM)
    vecs = fill(index, rng, {f"d{i}": 3 for i in range(20)})
    q = unit(rng, 2)
    scores = index.scores(q)
    for qi in range(2):
        top = scores.top(qi, 7)
        assert [cid for cid, _ in top] == brute(vecs, q[qi], 7)
        assert top[0][1] == pytest.approx(float(vecs[top[0][0]] @ q[qi]), abs=1e-6)
        assert scores.of(qi, "d3-chunk-1") == pytest.approx(float(vecs["d3-chunk-1"] @ q[qi]), abs=1e-6)
        best = scores.best_of_doc(qi, "d5")
        assert best[0] == max((f"d5-chunk-{i}" for i in range(3)), key=lambda c: float(vecs[c] @ q[qi]))
    assert scores.of(0, "nope") is None and scores.best_of_doc(0, "nope") is None
    assert len(index.scores(q).top(0, 1000)) == 60  # k above the size: everything, once


def test_upsert_replaces_a_documents_chunks_and_delete_drops_them(tmp_path):
    rng = np.random.default_rng(1)
    index = DenseIndex(tmp_path, DIM)
    fill(index, rng, {"a": 4, "b": 2})
    fill(index, rng, {"a": 1})  # "a" re-embedded with fewer chunks: its old rows are gone
    assert len(index) == 3 and index.doc_ids() == {"a", "b"}
    ids = [cid for cid, _ in index.scores(unit(rng, 1)).top(0, 10)]
    assert sorted(ids) == ["a-chunk-0", "b-chunk-0", "b-chunk-1"]
    index.delete_docs(["b", "missing"])
    assert index.doc_ids() == {"a"} and len(index) == 1


def test_scopes_hide_other_assistants_chunks(tmp_path):
    rng = np.random.default_rng(2)
    index = DenseIndex(tmp_path, DIM)
    fill(index, rng, {"s": 3})
    fill(index, rng, {"lab": 3}, scope="lab")
    q = unit(rng, 1)
    shared = index.scores(q, {"shared"})
    assert {cid.split("-")[0] for cid, _ in shared.top(0, 10)} == {"s"}
    assert shared.of(0, "lab-chunk-0") is None and shared.best_of_doc(0, "lab") is None
    both = index.scores(q, {"shared", "lab"})
    assert len(both.top(0, 10)) == 6


def test_flush_persists_and_an_unflushed_change_forces_a_rebuild(tmp_path):
    rng = np.random.default_rng(3)
    index = DenseIndex(tmp_path, DIM)
    vecs = fill(index, rng, {"a": 2, "b": 3})
    index.flush()
    again = DenseIndex(tmp_path, DIM)
    assert not again.needs_rebuild and again.doc_ids() == {"a", "b"}
    q = unit(rng, 1)[0]
    assert [c for c, _ in again.scores(q[None]).top(0, 5)] == brute(vecs, q, 5)
    assert DenseIndex(tmp_path, DIM + 1).needs_rebuild  # another model's dimension: not trusted
    again.delete_docs(["a"])  # then the process dies before flush()
    assert DenseIndex(tmp_path, DIM).needs_rebuild
    (tmp_path / "dirty").unlink()
    (tmp_path / "vectors.npy").write_bytes(b"garbage")
    assert DenseIndex(tmp_path, DIM).needs_rebuild


DOCS = {
    "macaw.md": "# Scarlet macaw\n\nThe scarlet macaw has red, yellow and blue plumage and a pale face.",
    "grey.md": "# African grey parrot\n\nA medium-sized grey parrot with a red tail, famous for talking.",
    "pasta.md": "# Carbonara\n\nCook spaghetti in salted water. Mix eggs, pecorino and black pepper.",
    "@lab/collar.md": "# Collar manual\n\nFirmware QX-9313 fixes the GPS drift of the tracking collar.",
}


def make_kb(root, embedder, **retrieval) -> KnowledgeBase:
    cfg = Config()
    cfg.retrieval = replace(cfg.retrieval, **retrieval)
    kb = KnowledgeBase(root, config=cfg, embedder=embedder)
    for name, text in DOCS.items():
        path = kb.knowledge_dir / name
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text, encoding="utf-8")
    return kb


def stored_vectors(kb: KnowledgeBase) -> dict[str, np.ndarray]:
    return {cid: vec for cid, _, _, vec in kb.store.records()}


def test_knowledge_base_keeps_the_dense_index_in_step_with_the_store(tmp_path, counting_embedder):
    kb = make_kb(tmp_path / "data", counting_embedder)
    assert not kb.sync().failed
    dense = kb.dense
    assert dense is not None and dense.doc_ids() == kb.store.doc_ids() and len(dense) == kb.store.count()
    (kb.knowledge_dir / "grey.md").write_text("# Kea\n\nAn alpine parrot of New Zealand.", encoding="utf-8")
    (kb.knowledge_dir / "pasta.md").unlink()
    kb.sync()
    assert dense.doc_ids() == kb.store.doc_ids()
    q = np.asarray(counting_embedder.embed_queries(["alpine parrot"]), dtype=np.float32)
    for cid, vec in stored_vectors(kb).items():  # the changed document's new vectors, not the old
        assert dense.scores(q).of(0, cid) == pytest.approx(float(vec @ q[0]), abs=1e-5)
    assert kb.search("alpine parrot", top_k=1)[0].source == "grey.md"
    kb.close()

    # Lost or never flushed: rebuilt from Chroma's stored vectors, never by re-embedding.
    (kb.collection_dir / "dense" / "dirty").touch()
    reopened = KnowledgeBase(tmp_path / "data", config=kb.config, embedder=counting_embedder)
    before = counting_embedder.documents_embedded
    assert reopened.dense.doc_ids() == reopened.store.doc_ids()
    assert counting_embedder.documents_embedded == before
    assert not (reopened.collection_dir / "dense" / "dirty").exists()
    reopened.close()


def test_exact_and_approximate_dense_search_agree(tmp_path, minilm):
    kb = make_kb(tmp_path / "data", minilm)
    kb.sync()
    exact = Retriever(kb.store, kb.keyword, minilm, kb.config.retrieval, use_keyword=False, dense=kb.dense)
    hnsw = Retriever(kb.store, kb.keyword, minilm, kb.config.retrieval, use_keyword=False)
    for query, scope in (("red and blue plumage", None), ("GPS drift firmware", "lab"), ("GPS drift", None)):
        a, b = exact.search(query, top_k=3, scope=scope), hnsw.search(query, top_k=3, scope=scope)
        assert [h.chunk_id for h in a] == [h.chunk_id for h in b]
        assert [h.vector_score for h in a] == pytest.approx([h.vector_score for h in b], abs=1e-4)
    assert all(h.scope == "shared" for h in exact.search("GPS drift", top_k=5))  # lab stays hidden
    kb.close()


def test_a_knowledge_base_too_big_for_memory_uses_chroma(tmp_path, minilm):
    kb = make_kb(tmp_path / "data", minilm, exact_dense_mb=0.004)  # 4 kB: less than the 4 chunks (6 kB)
    kb.sync()
    assert kb.dense is None and not (kb.collection_dir / "dense").exists()
    assert kb.retriever.dense is None
    assert kb.search("scarlet macaw plumage", top_k=1)[0].source == "macaw.md"
    kb.close()

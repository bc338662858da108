"""A model that fails at search time never takes search down (issue 36 item 7): a reranker whose
tokenizer and model disagree, an embedder that cannot encode the question. Real tiny model
folders, a real knowledge base."""

from __future__ import annotations

from pathlib import Path

import pytest

from desktop_app.core.ask.assistant import Assistant, Conversation
from desktop_app.core.config import Config
from desktop_app.core.events import Warning
from desktop_app.core.library.knowledge import KnowledgeBase
from desktop_app.core.models import failures
from desktop_app.core.models.status import model_status
from desktop_app.core.tasks import Cancelled

NOTES = {
    "kea.md": "# Kea\n\nThe kea is an alpine parrot from New Zealand that eats roots and seeds.\n",
    "macaw.md": "# Macaw\n\nThe red macaw is a parrot of the rain forest; it eats fruit and nuts.\n",
    "pasta.md": "# Pasta\n\nFresh pasta needs flour and eggs, kneaded for ten minutes.\n",
    "owl.md": "# Owl\n\nThe owl hunts mice at night in the forest.\n",
}


@pytest.fixture(autouse=True)
def _new_session():
    failures.forget_session()
    yield
    failures.forget_session()


def _library(tmp_path: Path, minilm, reranker: str = "none", embedder=None) -> KnowledgeBase:
    cfg = Config()
    cfg.retrieval.reranker = reranker
    cfg.retrieval.rerank_decisive_margin = 0.0  # always call the reranker: a clear lead would skip it
    kb = KnowledgeBase(tmp_path / "data", config=cfg, embedder=embedder or minilm)
    for name, text in NOTES.items():
        (kb.knowledge_dir / name).write_text(text, encoding="utf-8")
    assert len(kb.sync().added) == len(NOTES)
    return kb


def _reranker_row(kb: KnowledgeBase):
    return next(r for r in model_status(kb.data_dir, kb.config) if r.role == "reranker")


def test_a_failing_reranker_leaves_the_fused_ranking_and_warns_once(tmp_path, minilm, mismatched_reranker):
    kb = _library(tmp_path, minilm, reranker=str(mismatched_reranker))
    fused = kb.retriever.candidates(["red parrot"], scope=None, coarse_k=kb.config.retrieval.coarse_k)[0]
    hits = kb.search("red parrot", top_k=3)
    assert [h.chunk_id for h in hits] == [h.chunk_id for h in fused[:3]]
    assert all(h.rerank_score is None and h.score == h.fused_score for h in hits)
    [warning] = kb.search_warnings()
    assert "broken-reranker" in warning and "IndexError: index out of range in self" in warning
    # Skipped for the rest of the session: no second warning, no second try.
    assert kb.search("owl at night", top_k=2) and kb.search_warnings() == []
    assert [str(w) for w in kb.model_failures()] == [warning]
    kb.close()


def test_kdesk_models_shows_the_failed_reranker_until_its_files_change(tmp_path, minilm, mismatched_reranker):
    kb = _library(tmp_path, minilm, reranker=str(mismatched_reranker))
    assert _reranker_row(kb).active is not None
    kb.search("red parrot")
    row = _reranker_row(kb)
    assert row.active is None and row.path == str(mismatched_reranker)
    assert "broken-reranker failed (IndexError" in str(row.reason)
    failures.forget_session()  # the next process: the record in the data folder still says so
    assert "failed" in str(_reranker_row(kb).reason)
    config = mismatched_reranker / "config.json"
    config.write_text(config.read_text(encoding="utf-8").replace('"vocab_size": 2', '"vocab_size": 3'))
    assert _reranker_row(kb).active is not None  # a changed folder is tried again
    kb.close()


def test_the_answer_notes_a_failed_reranker_once_per_session(tmp_path, minilm, mismatched_reranker):
    kb = _library(tmp_path, minilm, reranker=str(mismatched_reranker))
    assistant = Assistant(kb, None, kb.config)
    first = list(assistant.ask("What does the kea eat?", Conversation(), mode="always"))
    second = list(assistant.ask("What does the macaw eat?", Conversation(), mode="always"))
    notes = [str(e.message) for e in first if isinstance(e, Warning)]
    assert any("broken-reranker failed" in n for n in notes)
    # A catalogue message, so the window shows it in the reader's language.
    assert any(
        getattr(e.message, "code", "") == "model.reranker_failed" for e in first if isinstance(e, Warning)
    )
    assert not any("failed" in str(e.message) for e in second if isinstance(e, Warning))
    kb.close()


class FailingQueries:
    """A real embedder whose query encoding fails (documents still embed: the library was built)."""

    def __init__(self, inner, error: Exception) -> None:
        self.inner, self.error = inner, error
        self.name, self.dim, self.max_chars = "broken-embedder", inner.dim, inner.max_chars

    def embed_documents(self, texts):
        return self.inner.embed_documents(texts)

    def embed_queries(self, texts):
        raise self.error


def test_a_failing_query_embedder_falls_back_to_keyword_ranking(tmp_path, minilm):
    kb = _library(tmp_path, minilm, embedder=FailingQueries(minilm, RuntimeError("CUDA out of memory")))
    hits = kb.search("pasta flour eggs", top_k=2)
    assert hits[0].source == "pasta.md" and hits[0].vector_score is None
    [warning] = kb.search_warnings()
    assert "broken-embedder failed on the question (RuntimeError: CUDA out of memory)" in warning
    assert kb.search("owl") and kb.search_warnings() == []
    kb.close()


def test_cancelling_a_search_is_not_a_model_failure(tmp_path, minilm):
    kb = _library(tmp_path, minilm, embedder=FailingQueries(minilm, Cancelled()))
    with pytest.raises(Cancelled):
        kb.search("pasta")
    assert kb.model_failures() == []
    kb.close()


def test_latency_bench_says_the_reranker_was_skipped_because_it_failed(tmp_path, minilm, mismatched_reranker):
    from desktop_app.core.desk import Desk
    from kdesk_lab.latency import run_latency_bench

    _library(tmp_path, minilm, reranker=str(mismatched_reranker)).close()
    cfg = Config()
    cfg.retrieval.reranker = str(mismatched_reranker)
    with Desk(tmp_path / "data", cfg, embedder=minilm) as desk:
        report = run_latency_bench(desk, ["What does the kea eat?"], runs=1, modes=("always",))
    assert report["reranker"] == "broken-reranker"
    [skipped] = report["skipped"]
    assert "broken-reranker failed (IndexError: index out of range in self)" in skipped

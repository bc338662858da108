"""The knowledge base end to end on real documents: real parsers, real MiniLM, real Chroma."""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest

from desktop_app.core.config import Config
from desktop_app.core.library.knowledge import KnowledgeBase
from desktop_app.core.library.manifest import INDEXED, PENDING


def _corpus(shared_data: Path, dest: Path) -> Path:
    """A small mixed folder of real files: PDFs (incl. encrypted), DOCX, Markdown."""
    dest.mkdir(parents=True)
    pdfs = shared_data / "docs" / "pypdf"
    picks = sorted(pdfs.rglob("*.pdf"))
    for p in [p for p in picks if "encryption" not in p.parts][:4]:
        shutil.copy(p, dest / p.name)
    enc = dest / "encryption"
    enc.mkdir()
    for p in sorted((pdfs / "resources" / "encryption").glob("*.pdf"))[:4]:
        shutil.copy(p, enc / p.name)
    for p in sorted((shared_data / "docs" / "python-docx").rglob("*.docx"))[:3]:
        shutil.copy(p, dest / p.name)
    (dest / "notes.md").write_text(
        "# Parrots\n\nThe scarlet macaw has red, yellow and blue plumage.\n\n"
        "## Diet\n\nMacaws eat seeds, nuts and fruit.\n",
        encoding="utf-8",
    )
    return dest


def _kb(tmp_path: Path, embedder) -> KnowledgeBase:
    return KnowledgeBase(tmp_path / "data", config=Config(), embedder=embedder)


def test_add_indexes_real_documents_and_reports_failures(tmp_path, shared_data, counting_embedder):
    src = _corpus(shared_data, tmp_path / "src")
    kb = _kb(tmp_path, counting_embedder)
    report = kb.add([src])
    docs = {d.name: d for d in kb.list_documents()}
    assert docs, "nothing listed"
    assert report.added and set(report.added) == set(docs)
    for d in docs.values():
        assert d.status in ("indexed", "failed")
        if d.status == "indexed":
            assert d.chunks > 0 and len(d.sha256) == 64
        else:
            assert d.error  # every failure says why
    # At least one encrypted PDF needs a password, and says so.
    enc = [d for n, d in docs.items() if "/encryption/" in n and d.status == "failed"]
    assert any("password" in str(d.error or "") for d in enc)
    hits = kb.search("scarlet macaw plumage colours", top_k=3)
    assert hits and hits[0].source.endswith("notes.md")
    assert hits[0].vector_score is not None and 0 < hits[0].vector_score <= 1
    kb.close()


def test_sync_reembeds_only_changed_files(tmp_path, counting_embedder):
    kb = _kb(tmp_path, counting_embedder)
    k = kb.knowledge_dir
    (k / "a.md").write_text("# A\n\nAlpha is the first letter.\n", encoding="utf-8")
    (k / "b.md").write_text("# B\n\nBeta is the second letter.\n", encoding="utf-8")
    (k / "c.txt").write_text("Gamma is the third letter.", encoding="utf-8")
    first = kb.sync()
    assert sorted(first.added) == ["a.md", "b.md", "c.txt"]
    embedded = counting_embedder.documents_embedded

    # Unchanged: nothing embedded at all.
    again = kb.sync()
    assert again.changed == 0 and counting_embedder.documents_embedded == embedded

    # Touch without changing content: hashed, not re-embedded.
    (k / "a.md").write_text("# A\n\nAlpha is the first letter.\n", encoding="utf-8")
    assert kb.sync().changed == 0 and counting_embedder.documents_embedded == embedded

    # Change one, delete one: exactly the changed file's chunks are embedded.
    (k / "b.md").write_text("# B\n\nBeta was changed to talk about bees.\n", encoding="utf-8")
    (k / "c.txt").unlink()
    report = kb.sync()
    assert report.updated == ["b.md"] and report.removed == ["c.txt"]
    b_chunks = {d.name: d.chunks for d in kb.list_documents()}["b.md"]
    assert counting_embedder.documents_embedded == embedded + b_chunks
    assert [h.source for h in kb.search("bees", top_k=1)] == ["b.md"]
    assert not any(h.source == "c.txt" for h in kb.search("gamma third letter", top_k=5))
    assert kb.store.doc_ids() == {kb.doc_id("a.md"), kb.doc_id("b.md")}
    kb.close()


def test_crash_mid_indexing_leaves_no_document_marked_indexed_with_missing_chunks(
    tmp_path, counting_embedder
):
    kb = _kb(tmp_path, counting_embedder)
    kb.config.index.batch_size = 1
    for i in range(12):
        body = "\n\n".join(f"Paragraph {j} of file {i} about topic {i * j}." * 8 for j in range(6))
        (kb.knowledge_dir / f"doc{i:02d}.md").write_text(f"# Doc {i}\n\n{body}\n", encoding="utf-8")
    counting_embedder.fail_after = 20
    with pytest.raises(RuntimeError, match="simulated crash"):
        kb.sync()
    rows = kb.manifest.all()
    stored = kb.store.chunks_of([e.doc_id for e in rows.values()])
    per_doc: dict[str, int] = {}
    for h in stored:
        per_doc[h.doc_id] = per_doc.get(h.doc_id, 0) + 1
    assert any(e.status == PENDING for e in rows.values())
    for e in rows.values():
        if e.status == INDEXED:
            assert per_doc.get(e.doc_id, 0) == e.chunks  # all chunks present

    # Restart: the next sync finishes the job and a second one does nothing.
    counting_embedder.fail_after = None
    kb.close()
    kb2 = _kb(tmp_path, counting_embedder)
    kb2.sync()
    assert all(e.status == INDEXED for e in kb2.manifest.all().values())
    assert kb2.sync().changed == 0
    assert kb2.keyword.doc_ids() == {e.doc_id for e in kb2.manifest.all().values()}
    kb2.close()


def test_remove_deletes_file_chunks_and_row(tmp_path, counting_embedder):
    kb = _kb(tmp_path, counting_embedder)
    (kb.knowledge_dir / "sub").mkdir()
    (kb.knowledge_dir / "sub" / "x.md").write_text("# X\n\nxylophones are loud.\n", encoding="utf-8")
    (kb.knowledge_dir / "y.md").write_text("# Y\n\nyaks are hairy.\n", encoding="utf-8")
    kb.sync()
    assert kb.remove(["sub"]) == ["sub/x.md"]
    assert not (kb.knowledge_dir / "sub").exists()
    assert [d.name for d in kb.list_documents()] == ["y.md"]
    assert kb.store.doc_ids() == {kb.doc_id("y.md")}
    kb.close()


def test_changing_the_embedding_model_uses_a_separate_collection(tmp_path, minilm):
    kb = _kb(tmp_path, minilm)
    (kb.knowledge_dir / "a.md").write_text("# A\n\nApples.\n", encoding="utf-8")
    kb.sync()
    first = kb.collection

    class Renamed:
        name = "other-model"
        dim = minilm.dim
        max_chars = minilm.max_chars
        embed_documents = staticmethod(minilm.embed_documents)
        embed_queries = staticmethod(minilm.embed_queries)

    kb2 = KnowledgeBase(tmp_path / "data", config=Config(), embedder=Renamed())
    assert kb2.collection != first
    assert kb2.list_documents() == []  # the new model starts empty, the old index is untouched
    assert kb2.sync().added == ["a.md"]
    assert [d.name for d in _kb(tmp_path, minilm).list_documents()] == ["a.md"]


def test_scopes_are_enforced_by_metadata_filters(tmp_path, minilm):
    kb = _kb(tmp_path, minilm)
    src = tmp_path / "s.md"
    src.write_text("# Secret\n\nThe private launch code is walrus.\n", encoding="utf-8")
    kb.add([src], scope="alice")
    pub = tmp_path / "p.md"
    pub.write_text("# Public\n\nThe public mascot is a walrus.\n", encoding="utf-8")
    kb.add([pub])
    assert {h.scope for h in kb.search("walrus", top_k=5)} == {"shared"}
    assert {h.scope for h in kb.search("walrus", top_k=5, scope="alice")} == {"shared", "alice"}
    assert {h.scope for h in kb.search("walrus", top_k=5, scope="bob")} == {"shared"}

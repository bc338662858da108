"""`reindex` builds the new index beside the one in use and switches only when it is complete: a
failed, cancelled or killed rebuild leaves the old index answering searches; what it left behind is
dropped by the next writer."""

from __future__ import annotations

import signal
import time
from pathlib import Path

import pytest

from desktop_app.core.config import Config
from desktop_app.core.library.knowledge import KnowledgeBase
from desktop_app.core.tasks import Cancelled, SimpleTask

DOCS = {
    "kea.md": "# Kea\nThe kea is an alpine parrot that opens rubbish bins.\n",
    "kakapo.md": "# Kakapo\nThe kakapo is a flightless nocturnal parrot.\n",
    "notes/galah.md": "# Galah\nA pink and grey cockatoo of the outback.\n",
}


def _library(root: Path, embedder) -> KnowledgeBase:
    kb = KnowledgeBase(root / "data", config=Config(), embedder=embedder)
    for name, text in DOCS.items():
        path = kb.knowledge_dir / name
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text, encoding="utf-8")
    kb.sync()
    return kb


def _builds(kb: KnowledgeBase) -> tuple[list[str], list[str]]:
    """The chunk collections in Chroma and the index folders, of this model."""
    names = [c if isinstance(c, str) else c.name for c in kb.chroma_client.list_collections()]
    base = kb._base_collection
    return sorted(n for n in names if n.startswith(base)), sorted(
        p.name for p in kb.index_dir.iterdir() if p.is_dir() and p.name.startswith(base)
    )


def _answers(kb: KnowledgeBase) -> None:
    assert kb.search("flightless nocturnal parrot")[0].source == "kakapo.md"
    assert {d.name: d.status for d in kb.list_documents()} == dict.fromkeys(DOCS, "indexed")


def test_reindex_switches_to_the_new_build_and_drops_the_old(tmp_path, counting_embedder):
    kb = _library(tmp_path, counting_embedder)
    reader = KnowledgeBase(kb.data_dir, config=Config(), embedder=counting_embedder)  # another window
    _answers(reader)
    before = _builds(kb)
    report = kb.reindex()
    assert sorted(report.added) == sorted(DOCS)
    after = _builds(kb)
    assert len(after[0]) == len(after[1]) == 1 and after != before  # one build, the new one
    assert kb.generation and kb.collection.endswith("__" + kb.generation)
    _answers(kb)
    _answers(reader)  # the reader follows the switch
    reader.close()
    kb.close()
    reopened = KnowledgeBase(kb.data_dir, config=Config(), embedder=counting_embedder)
    _answers(reopened)
    assert reopened.sync().unchanged == sorted(DOCS)  # nothing to redo
    reopened.close()


def test_a_reindex_that_fails_midway_keeps_the_old_index(tmp_path, counting_embedder):
    kb = _library(tmp_path, counting_embedder)
    before = _builds(kb)
    counting_embedder.fail_after = counting_embedder.documents_embedded + 1  # dies in the rebuild
    with pytest.raises(RuntimeError, match="simulated crash"):
        kb.reindex()
    counting_embedder.fail_after = None
    _answers(kb)
    assert _builds(kb) == before  # the half-built index is gone
    kb.close()
    _answers(KnowledgeBase(kb.data_dir, config=Config(), embedder=counting_embedder))


def test_a_cancelled_reindex_keeps_the_old_index_which_answers_meanwhile(tmp_path, counting_embedder):
    kb = _library(tmp_path, counting_embedder)
    before = _builds(kb)
    task = SimpleTask()
    calls = counting_embedder.calls

    seen: list[str] = []

    class CancelOnProgress(SimpleTask):
        def progress(self, done, total, message=""):
            if total and not task.cancelled():
                seen.append(kb.search("flightless nocturnal parrot")[0].source)  # mid-rebuild
                task.cancel()

        def cancelled(self):
            return task.cancelled()

    with pytest.raises(Cancelled):
        kb.reindex(CancelOnProgress())
    assert counting_embedder.calls == calls  # stopped before its first batch
    assert seen == ["kakapo.md"]  # searches meanwhile are answered by the index in use
    _answers(kb)
    assert _builds(kb) == before


@pytest.mark.slow
def test_a_killed_reindex_leaves_the_old_index_in_use(kdesk_cls, slow_embeddings_server, tmp_path):
    kd = kdesk_cls(tmp_path / "data", slow_embeddings_server.url)
    knowledge = kd.data_dir / "knowledge"
    knowledge.mkdir()
    for i in range(40):
        (knowledge / f"doc{i:02d}.md").write_text(
            f"# Doc {i}\n\nParrot {i} " + "macaw kea kakapo " * 200, encoding="utf-8"
        )
    (knowledge / "owl.md").write_text("# Owl\nThe morepork is a small brown owl.\n", encoding="utf-8")
    assert kd.run("sync", timeout=300).rc == 0
    index = kd.data_dir / "index"
    old_dirs = {p.name for p in index.iterdir() if p.is_dir()}

    slow_embeddings_server.script.delay = 2.0  # every encoder call of the rebuild takes 2 s
    try:
        proc = kd.popen("reindex")
        deadline = time.monotonic() + 120
        building: list[Path] = []
        while time.monotonic() < deadline and proc.poll() is None and not building:
            building = [p for p in index.iterdir() if p.is_dir() and p.name not in old_dirs]
            time.sleep(0.05)
        assert building and proc.poll() is None, "the rebuild never started beside the old index"
        time.sleep(1.0)  # inside its first encoder call
        proc.send_signal(signal.SIGKILL)
        proc.communicate(timeout=60)
        assert proc.returncode == -signal.SIGKILL  # killed mid-rebuild, not finished
    finally:
        slow_embeddings_server.script.delay = 0.05
    assert not list(index.glob("*.current"))  # never switched

    found = kd.run("search", "morepork owl", "--json", timeout=300)
    assert found.rc == 0 and found.json()["hits"][0]["source"] == "owl.md"
    listing = kd.run("list", "--json", timeout=300).json()["documents"]
    assert len(listing) == 41 and {d["status"] for d in listing} == {"indexed"}

    res = kd.run("sync", "--json", timeout=300)  # the next writer drops the half-built index
    assert res.rc == 0 and not res.json()["added"] and not res.json()["removed"]
    assert {p.name for p in index.iterdir() if p.is_dir()} == old_dirs

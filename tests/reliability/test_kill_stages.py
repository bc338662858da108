"""`kill -9` at each stage of sync, reindex and a model switch (issue 44): while parsing, embedding,
writing the vector store, writing the manifest, switching the index pointer, taking over the new
model. The kill lands at a named call (kill_at.py), not at a random time (test_crash_consistency.py
does those). Each case asserts: the knowledge folder unchanged, the next sync (reindex for a switch)
restores the top-10 sources of before for 20 questions, every document indexed once (the store
holds exactly the chunks the manifest lists) and a second sync has nothing to do.
"""

from __future__ import annotations

import hashlib
import os
import shutil
import subprocess
import sys
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

import pytest

from desktop_app.core.library import switching
from desktop_app.core.library.knowledge import KnowledgeBase

KILL_AT = Path(__file__).with_name("kill_at.py")
EMBED = "desktop_app.core.models.embeddings.openai_compat:OpenAICompatEmbedder.embed_documents"
STAGES = [
    # (command, stage, function killed at, its call number)
    ("sync", "parsing", "desktop_app.core.library.parse_worker:ParseWorker.chunk_file", 5),
    ("sync", "embedding", EMBED, 2),
    ("sync", "writing the store", "desktop_app.core.library.store:ChromaStore.upsert", 2),
    ("sync", "writing the manifest", "desktop_app.core.library.manifest:Manifest.put_many", 6),
    ("reindex", "embedding", EMBED, 2),
    ("reindex", "switching the pointer", "desktop_app.core.library.knowledge:KnowledgeBase._switch_generation", 1),
    ("models use", "filling", "desktop_app.core.library.store:ChromaStore.upsert", 2),
    ("models use", "taking over", "desktop_app.core.library.switching:_take_over", 1),
]


def _digest(folder: Path) -> dict[str, str]:
    return {
        p.relative_to(folder).as_posix(): hashlib.sha256(p.read_bytes()).hexdigest()
        for p in sorted(folder.rglob("*"))
        if p.is_file()
    }


def _open(data: Path) -> KnowledgeBase:
    return KnowledgeBase(data)  # its config.toml: the test server's hashing embedder


def _top_sources(kb: KnowledgeBase, questions: list[str]) -> dict[str, frozenset[str]]:
    return {q: frozenset(h.source for h in kb.search(q, top_k=10)) for q in questions}


@pytest.fixture(scope="module")
def reference(tmp_path_factory, kdesk_cls, shared_embeddings_server, twenty):
    """A library of the twenty documents, synced without a kill, and its top-10 sources."""
    docs, questions = twenty
    kd = kdesk_cls(tmp_path_factory.mktemp("reference") / "data", shared_embeddings_server.url)
    for name, text in docs.items():
        path = kd.data_dir / "knowledge" / name
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text + "\n", encoding="utf-8")
    with _open(kd.data_dir) as kb:
        assert sorted(kb.sync().added) == sorted(docs)
        baseline = _top_sources(kb, questions)
    return kd.data_dir, baseline


def _kill(source: Path, data: Path, command: str, target: str, n: int, url: str):
    """Copy the library (a sync starts from its knowledge folder alone), then run the command under
    kill_at.py; returns the folder's digest before, and the finished process."""
    if command == "sync":  # a first sync of the folder, killed
        shutil.copytree(source / "knowledge", data / "knowledge")
        shutil.copy2(source / "config.toml", data / "config.toml")
    else:  # an indexed library
        shutil.copytree(source, data)
    knowledge = _digest(data / "knowledge")
    args = {"sync": ["sync"], "reindex": ["reindex"]}.get(command, ["models", "use", "openai:hash2", "--url", url])
    env = dict(os.environ, HF_HUB_OFFLINE="1", ANONYMIZED_TELEMETRY="False")
    done = subprocess.run(
        [sys.executable, str(KILL_AT), target, str(n), "--data-dir", str(data), *args],
        capture_output=True,
        text=True,
        env=env,
        timeout=300,
    )
    return knowledge, done


@pytest.fixture(scope="module")
def killed(tmp_path_factory, reference, shared_embeddings_server):
    """Every stage's killed command, run side by side (each in its own data folder): the process
    start and imports are most of each run's time."""
    source, _ = reference
    root = tmp_path_factory.mktemp("killed")
    with ThreadPoolExecutor(max_workers=4) as pool:
        runs = {
            (command, stage): pool.submit(
                _kill, source, root / f"data{i}", command, target, n, shared_embeddings_server.url
            )
            for i, (command, stage, target, n) in enumerate(STAGES)
        }
        return {key: (root / f"data{i}", *run.result()) for i, (key, run) in enumerate(runs.items())}


@pytest.mark.parametrize(("command", "stage"), [s[:2] for s in STAGES], ids=[f"{c}-{s}" for c, s, _, _ in STAGES])
def test_kill_at_a_stage_then_recovery_restores_the_results(reference, killed, twenty, command, stage):
    docs, questions = twenty
    _, baseline = reference
    data, knowledge, done = killed[command, stage]
    assert done.returncode == -9, (stage, done.returncode, done.stderr[-2000:])
    assert _digest(data / "knowledge") == knowledge

    if command == "models use":  # the model in use answered all along; `kdesk reindex` goes on with the fill
        with _open(data) as kb:
            assert _top_sources(kb, questions) == baseline
            assert switching.fill(kb)  # what `kdesk reindex` runs while a switch is pending
    with _open(data) as kb:
        if command == "models use":
            assert kb.embedder_name.startswith("openai:hash2")  # the new model took over
        else:
            kb.sync()
        entries = kb.manifest.all()
        assert {n: e.status for n, e in entries.items()} == dict.fromkeys(docs, "indexed")
        assert kb.store.count() == sum(e.chunks for e in entries.values())  # each chunk stored once
        assert _top_sources(kb, questions) == baseline
        assert kb.sync().unchanged == sorted(docs)
    assert _digest(data / "knowledge") == knowledge

"""SIGKILL `kdesk add / remove / reindex` at random points, restart, and check nothing is lost or torn.

After every kill and restart: the manifest, the Chroma collection and the BM25 index hold exactly the
files in the knowledge folder (same doc ids, same chunk counts), every document that was "indexed" at
the moment of the kill is still indexed with the same content hash, and a second `sync` does no work.
The embedder is the product's OpenAI-compatible client on a local hashing server with a small delay
per request, so indexing takes long enough to be cut in the middle of a batch.
"""

from __future__ import annotations

import random
import shutil
import signal
import sqlite3
import time
from pathlib import Path

import pytest

from desktop_app.core.config import load_config
from desktop_app.core.library.knowledge import KnowledgeBase

pytestmark = pytest.mark.slow

N_DOCS = 160
WORDS = "parrot macaw cockatoo lorikeet kea kakapo budgie conure amazon caique seed nut fruit flock".split()

# Filled by the tests, printed by test_zz_summary (and copied into docs/reliability.md).
KILLS: list[dict] = []


def _make_corpus(root: Path, seed: int = 0) -> Path:
    rng = random.Random(seed)
    folder = root / "corpus"
    for i in range(N_DOCS):
        sub = folder / f"group{i % 4}"
        sub.mkdir(parents=True, exist_ok=True)
        paras = []
        for p in range(5):
            words = " ".join(rng.choice(WORDS) for _ in range(120))
            paras.append(f"## Part {p}\nDocument {i} paragraph {p}: {words}.")
        (sub / f"doc{i:03d}.md").write_text(f"# Doc {i}\n\n" + "\n\n".join(paras) + "\n", encoding="utf-8")
    return folder


def _manifest_rows(data_dir: Path) -> dict[str, tuple[str, str]]:
    """name -> (status, sha256) read straight from the SQLite manifest (as it is on disk right now)."""
    rows: dict[str, tuple[str, str]] = {}
    for db in (data_dir / "index").glob("*/manifest.sqlite3"):
        try:  # a rebuild's folder may be made or dropped between the glob and the open
            con = sqlite3.connect(f"file:{db}?mode=ro", uri=True, timeout=10)
        except sqlite3.OperationalError:
            continue
        try:
            for name, status, sha in con.execute("SELECT name, status, sha256 FROM documents"):
                rows[name] = (status, sha)
        except sqlite3.OperationalError:  # a rebuild's new manifest (reindex), still being made
            continue
        finally:
            con.close()
    return rows


def _index_changing(data_dir: Path) -> bool:
    """True once the manifest shows work in progress: a row pending, or rows already dropped."""
    rows = _manifest_rows(data_dir)
    return len(rows) < N_DOCS or any(status != "indexed" for status, _ in rows.values())


def _wait_for(predicate, timeout: float) -> bool:
    end = time.monotonic() + timeout
    while time.monotonic() < end:
        if predicate():
            return True
        time.sleep(0.02)
    return False


def _kill_at_random(
    kd, args: tuple[str, ...], started, seed: int, window: float, slot: tuple[int, int]
) -> dict:
    """Start kdesk, wait until `started()` says real work began, sleep a random time, SIGKILL.

    The time is random within slot k of n equal slices of `window`, so a handful of seeds still covers
    the start, the middle and the end of the work."""
    proc = kd.popen(*args)
    k, n = slot
    try:
        assert _wait_for(lambda: started() or proc.poll() is not None, 300), "kdesk never started working"
        delay = window * (k + random.Random(seed).random()) / n
        time.sleep(delay)
        finished_first = proc.poll() is not None
        if not finished_first:
            proc.send_signal(signal.SIGKILL)
        proc.wait(timeout=60)
    finally:
        if proc.poll() is None:
            proc.kill()
        proc.communicate()
    rows = _manifest_rows(kd.data_dir)
    return {
        "op": args[0],
        "seed": seed,
        "delay_s": round(delay, 2),
        "killed": not finished_first,
        "rows_at_kill": len(rows),
        "indexed_at_kill": sum(status == "indexed" for status, _ in rows.values()),
    }


def _check_consistent(kd, server_url: str, expect_names: set[str] | None = None) -> dict[str, str]:
    """Manifest == Chroma == BM25 == the knowledge folder; returns name -> sha256."""
    cfg = load_config(kd.data_dir / "config.toml")
    cfg.embedding.url = server_url
    with KnowledgeBase(kd.data_dir, config=cfg) as kb:
        on_disk = set(kb.scan())
        if expect_names is not None:
            assert on_disk == expect_names
        entries = kb.manifest.all()
        assert set(entries) == on_disk, sorted(set(entries) ^ on_disk)[:10]
        not_indexed = {n: e.status for n, e in entries.items() if e.status != "indexed"}
        assert not not_indexed, not_indexed
        want = {e.doc_id: e.chunks for e in entries.values()}
        stored = kb.store.doc_ids()
        assert stored == set(want), (len(stored), len(want))
        hits = kb.store.chunks_of(sorted(want))
        per_doc: dict[str, int] = {}
        for h in hits:
            per_doc[h.doc_id] = per_doc.get(h.doc_id, 0) + 1
        assert per_doc == want  # no torn document: every chunk there, none left over
        assert kb.keyword.doc_ids() == set(want)
        result = {n: e.sha256 for n, e in entries.items()}
    # Chroma caches one client per path in-process; the next kdesk subprocess writes behind its back.
    from chromadb.api.client import SharedSystemClient

    SharedSystemClient.clear_system_cache()
    return result


def _assert_second_sync_is_idle(kd) -> None:
    res = kd.run("sync", "--json", timeout=300)
    assert res.rc == 0, res.stderr[-2000:]
    r = res.json()
    assert (r["added"], r["updated"], r["removed"], r["failed"]) == ([], [], [], [])


@pytest.fixture(scope="module")
def corpus(tmp_path_factory) -> Path:
    return _make_corpus(tmp_path_factory.mktemp("crash"))


@pytest.fixture(scope="module")
def reference(tmp_path_factory, corpus, kdesk_cls, slow_embeddings_server):
    """A fully indexed data dir (copied for each remove/reindex kill) and how long indexing took."""
    kd = kdesk_cls(tmp_path_factory.mktemp("ref") / "data", slow_embeddings_server.url)
    t0 = time.monotonic()
    proc = kd.popen("add", str(corpus), "--json")
    assert _wait_for(lambda: any((kd.data_dir / "knowledge").rglob("*.md")) or proc.poll() is not None, 300)
    t_work = time.monotonic()
    out, err = proc.communicate(timeout=600)
    assert proc.returncode == 0, err[-2000:]
    work = time.monotonic() - t_work
    names = set(_check_consistent(kd, slow_embeddings_server.url))
    assert len(names) == N_DOCS
    print(f"\nreference add: {time.monotonic() - t0:.1f} s total, {work:.1f} s of copying + indexing")
    return kd, work, names


def _clone(reference, kdesk_cls, tmp_path, url):
    kd_ref, _, _ = reference
    shutil.copytree(kd_ref.data_dir, tmp_path / "data")
    return kdesk_cls(tmp_path / "data", url)


@pytest.mark.parametrize(("seed", "slot"), [(1, 0), (2, 1), (3, 2)])
def test_kill_during_add_then_add_again_loses_nothing(
    seed, slot, corpus, reference, kdesk_cls, slow_embeddings_server, tmp_path
):
    _, work, all_names = reference
    url = slow_embeddings_server.url
    kd = kdesk_cls(tmp_path / "data", url)
    started = lambda: (kd.data_dir / "knowledge").exists() and any((kd.data_dir / "knowledge").rglob("*.md"))  # noqa: E731
    info = _kill_at_random(kd, ("add", str(corpus)), started, seed, work, (slot, 3))
    at_kill = _manifest_rows(kd.data_dir)
    finished = {n: sha for n, (status, sha) in at_kill.items() if status == "indexed"}

    res = kd.run("add", str(corpus), "--json", timeout=600)  # the user simply tries again
    assert res.rc == 0, res.stderr[-2000:]
    after = _check_consistent(kd, url, expect_names=all_names)  # no "doc (2).md" duplicates either
    assert all(after[n] == sha for n, sha in finished.items())
    _assert_second_sync_is_idle(kd)
    KILLS.append(info)


@pytest.mark.parametrize(("seed", "slot"), [(4, 0), (5, 1)])
def test_kill_during_remove_then_sync_is_consistent(
    seed, slot, reference, kdesk_cls, slow_embeddings_server, tmp_path
):
    url = slow_embeddings_server.url
    kd = _clone(reference, kdesk_cls, tmp_path, url)
    started = lambda: _index_changing(kd.data_dir)  # noqa: E731
    doomed = ("corpus/group1", "corpus/group2")
    info = _kill_at_random(kd, ("remove", *doomed), started, seed, 1.5, (slot, 2))
    at_kill = _manifest_rows(kd.data_dir)
    finished = {n: sha for n, (st, sha) in at_kill.items() if st == "indexed" and not n.startswith(doomed)}

    res = kd.run("sync", "--json", timeout=600)  # what the app does on its next start
    assert res.rc == 0, res.stderr[-2000:]
    after = _check_consistent(kd, url)  # whatever is still on disk is fully indexed, nothing else
    assert all(after[n] == sha for n, sha in finished.items())
    res = kd.run("remove", *doomed, "--json", timeout=300)  # finishing the removal works too
    names = _check_consistent(kd, url)
    assert not any(n.startswith(doomed) for n in names) and len(names) == N_DOCS // 2
    _assert_second_sync_is_idle(kd)
    KILLS.append(info)


@pytest.mark.parametrize(("seed", "slot"), [(6, 0), (7, 1)])
def test_kill_during_reindex_then_sync_restores_everything(
    seed, slot, reference, kdesk_cls, slow_embeddings_server, tmp_path
):
    _, work, all_names = reference
    url = slow_embeddings_server.url
    kd = _clone(reference, kdesk_cls, tmp_path, url)
    started = lambda: _index_changing(kd.data_dir)  # noqa: E731
    info = _kill_at_random(kd, ("reindex",), started, seed, work, (slot, 2))
    at_kill = _manifest_rows(kd.data_dir)
    finished = {n: sha for n, (st, sha) in at_kill.items() if st == "indexed"}

    res = kd.run("sync", "--json", timeout=600)
    assert res.rc == 0, res.stderr[-2000:]
    after = _check_consistent(kd, url, expect_names=all_names)
    assert all(after[n] == sha for n, sha in finished.items())
    _assert_second_sync_is_idle(kd)
    KILLS.append(info)


def test_zz_kill_summary():
    """Prints what the kills hit (run with -s); at least one kill must have landed mid-work."""
    for k in KILLS:
        print(k)
    if KILLS:
        assert any(k["killed"] for k in KILLS)

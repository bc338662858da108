"""ChromaStore on a real embedded Chroma: ids-only queries and vector reads agree with full hits."""

from __future__ import annotations

import numpy as np
import pytest

from desktop_app.core.library.chroma_client import make_client
from desktop_app.core.library.documents import Chunk
from desktop_app.core.library.store import ChromaStore


def _chunks(n: int) -> list[Chunk]:
    return [
        Chunk(
            id=f"d{i}-chunk-0",
            doc_id=f"d{i}",
            text=f"text {i}",
            source=f"f{i}.md",
            page=None,
            heading_path=[],
            chunk_index=0,
            total_chunks=1,
            char_start=0,
            char_end=6,
            section_index=0,
            scope="shared",
        )
        for i in range(n)
    ]


def test_query_ids_matches_full_query_and_vectors_round_trip(tmp_path):
    rng = np.random.default_rng(3)
    vecs = rng.standard_normal((40, 16)).astype(np.float32)
    vecs /= np.linalg.norm(vecs, axis=1, keepdims=True)
    store = ChromaStore(make_client(tmp_path), "chunks__test__16")
    store.upsert(_chunks(40), vecs)
    q = vecs[[5, 17]] + 0.01
    full = store.query(q, 7)
    light = store.query_ids(q, 7)
    assert [[h.chunk_id for h in hits] for hits in full] == [[cid for cid, _ in row] for row in light]
    assert light[0][0][0] == "d5-chunk-0" and light[1][0][0] == "d17-chunk-0"
    for hits, row in zip(full, light):
        for h, (_, score) in zip(hits, row):
            assert abs(h.vector_score - score) < 1e-6
    got = store.vectors(["d3-chunk-0", "d9-chunk-0", "missing"])
    assert set(got) == {"d3-chunk-0", "d9-chunk-0"}
    assert np.allclose(got["d9-chunk-0"], vecs[9], atol=1e-6)
    assert store.query_ids(np.zeros((0, 16), dtype=np.float32), 3) == []
    assert store.vectors([]) == {}


_WRITER = """
import sys
from pathlib import Path
import numpy as np
from desktop_app.core.library.chroma_client import make_client
from desktop_app.core.library.store import ChromaStore
from tests.unit.library.test_store import _chunks
store = ChromaStore(make_client(Path(sys.argv[1])), "chunks__test__16")
chunks = _chunks(30)[2:]
store.upsert(chunks, np.eye(30, 16, dtype=np.float32)[2:])
"""


def test_a_reader_reads_the_vectors_another_process_wrote_after_it_loaded_the_index(tmp_path):
    """Chroma's core keeps the HNSW index it loaded: without a refresh, reading vectors another
    `kdesk add` wrote since fails with "Error finding id" however often it is tried."""
    import subprocess
    import sys
    from pathlib import Path

    store = ChromaStore(make_client(tmp_path), "chunks__test__16")
    store.upsert(_chunks(2), np.eye(2, 16, dtype=np.float32))
    assert set(store.vectors(["d0-chunk-0", "d1-chunk-0"])) == {"d0-chunk-0", "d1-chunk-0"}  # loaded
    root = Path(__file__).resolve().parents[3]
    subprocess.run([sys.executable, "-c", _WRITER, str(tmp_path)], check=True, cwd=root, timeout=120)

    got = store.vectors(["d1-chunk-0", "d7-chunk-0", "d29-chunk-0"])
    assert set(got) == {"d1-chunk-0", "d7-chunk-0", "d29-chunk-0"}
    assert np.allclose(got["d7-chunk-0"], np.eye(30, 16, dtype=np.float32)[7])
    assert [h.chunk_id for h in store.get(["d12-chunk-0"])] == ["d12-chunk-0"]
    assert store.query_ids(np.eye(30, 16, dtype=np.float32)[[9]], 1)[0][0][0] == "d9-chunk-0"


def test_a_read_error_of_another_kind_is_not_tried_again(tmp_path, monkeypatch):
    from chromadb.errors import InternalError

    store = ChromaStore(make_client(tmp_path), "chunks__test__16")
    store.upsert(_chunks(2), np.eye(2, 16, dtype=np.float32))
    calls = []

    def broken_get(*args, **kwargs):
        calls.append(1)
        raise InternalError("Error executing plan: something else")

    monkeypatch.setattr(store.collection, "get", broken_get)
    with pytest.raises(InternalError):
        store.get(["d1-chunk-0"])
    assert len(calls) == 1

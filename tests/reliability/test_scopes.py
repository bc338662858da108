"""Scopes are enforced on every path: randomized documents in several assistant scopes plus the shared
one, randomized queries, and no search may ever return a chunk from a scope it should not see.

Scope names are chosen to trip naive filters: one is a prefix of another ("bird" / "birds"), one is
Chinese, one contains a dash. Files reach their scope both ways: `kb.add(..., scope=...)` and files
written straight into `knowledge/@<scope>/...` and picked up by `sync`.
"""

from __future__ import annotations

import random

import pytest

from desktop_app.core.config import Config
from desktop_app.core.library.knowledge import KnowledgeBase

SCOPES = ["bird", "birds", "鹦鹉", "kea-lab"]
VOCAB = (
    "parrot macaw cockatoo lorikeet kea kakapo budgie conure seed nut fruit flock feather beak "
    "nest forest island river 鹦鹉 种子 森林 羽毛"
).split()


def _visible(scope: str | None) -> set[str]:
    return {"shared"} if scope in (None, "shared") else {"shared", scope}


@pytest.mark.parametrize("seed", [11, 12, 13])
def test_randomized_searches_never_cross_scopes(seed, tmp_path, shared_embeddings_server):
    rng = random.Random(seed)
    cfg = Config()
    cfg.embedding.model = "openai:hash"
    cfg.embedding.url = shared_embeddings_server.url
    cfg.retrieval.top_k = 20
    cfg.retrieval.reranker = "none"
    owner: dict[str, str] = {}  # source -> scope it was put in
    with KnowledgeBase(tmp_path / "data", config=cfg) as kb:
        staging = tmp_path / "staging"
        staging.mkdir()
        for i in range(60):
            scope = rng.choice(["shared", "shared", *SCOPES])
            text = " ".join(rng.choice(VOCAB) for _ in range(rng.randint(20, 300)))
            name = f"doc{i:02d}.md"
            if rng.random() < 0.5:  # through add(scope=...)
                f = staging / name
                f.write_text(f"# {name}\n{text}\n", encoding="utf-8")
                report = kb.add([f], scope=scope)
                assert not report.failed, report.failed
                rel = report.added[0]
            else:  # written into the folder by hand, picked up by sync
                rel = name if scope == "shared" else f"@{scope}/notes/{name}"
                path = kb.knowledge_dir / rel
                path.parent.mkdir(parents=True, exist_ok=True)
                path.write_text(f"# {name}\n{text}\n", encoding="utf-8")
            owner[rel] = scope
        kb.sync()
        listed = {d.name: d.scope for d in kb.list_documents()}
        assert listed == owner  # the manifest agrees with where each file lives

        checked = 0
        for _ in range(40):
            scope = rng.choice([None, "shared", "nobody", *SCOPES])
            queries = [" ".join(rng.choice(VOCAB) for _ in range(rng.randint(1, 4))) for _ in range(3)]
            for hits in (kb.search(queries[0], scope=scope), kb.search_many(queries, scope=scope)):
                for h in hits:
                    assert h.scope in _visible(scope), (scope, h.source, h.scope)
                    assert owner[h.source] in _visible(scope), (scope, h.source)
                    checked += 1
        assert checked > 100  # the searches did return hits to check
        # And each scope does see its own documents (the filter is not simply "shared only").
        for scope in SCOPES:
            own = [s for s, o in owner.items() if o == scope]
            if own:
                word = (kb.knowledge_dir / own[0]).read_text(encoding="utf-8").split()[2]
                hits = kb.search(word, top_k=50, scope=scope)
                assert any(owner[h.source] == scope for h in hits), scope

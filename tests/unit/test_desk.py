"""The Desk owns the config and the services built from it; a change rebuilds only what depends on it."""

from __future__ import annotations

import copy
from pathlib import Path

from desktop_app.core.config import Config
from desktop_app.core.desk import Desk, changed_sections


def _note(desk: Desk) -> None:
    folder = desk.knowledge_dir
    folder.mkdir(parents=True, exist_ok=True)
    (folder / "kea.md").write_text("# Kea\nThe kea lives in the mountains of New Zealand and eats roots.\n")
    (folder / "macaw.md").write_text("# Macaw\nThe scarlet macaw lives in rainforests and eats palm nuts.\n")
    desk.kb.sync()


def test_services_are_built_once_and_shared(tmp_path: Path, minilm) -> None:
    with Desk(tmp_path / "data", Config(), embedder=minilm) as desk:
        assert desk.kb is desk.kb
        assert desk.assistant is desk.assistant
        assert desk.assistant.kb is desk.kb
        assert desk.identifier.kb is desk.kb
        # The assistant's photo flow is the Desk's one identifier, not a copy of its own.
        assert desk.assistant.identifier is desk.identifier
        assert desk.chat_model is None and not desk.chat.active


def test_retrieval_settings_reach_the_next_search_without_reopening(tmp_path: Path, minilm) -> None:
    with Desk(tmp_path / "data", Config(), embedder=minilm) as desk:
        _note(desk)
        kb, assistant = desk.kb, desk.assistant
        before = desk.kb.search("where does the kea live")
        new = copy.deepcopy(desk.config)
        new.retrieval.dense_weight, new.retrieval.keyword_weight = 1.0, 0.0
        assert desk.apply_config(new) == {"retrieval"}
        assert desk.kb is kb  # same collection: nothing reopened...
        assert desk.kb.retriever.config.dense_weight == 1.0  # ...but the next search uses the new weights
        after = desk.kb.search("where does the kea live")
        assert [h.fused_score for h in after] != [h.fused_score for h in before]
        assert desk.assistant is not assistant and desk.assistant.config.retrieval.dense_weight == 1.0
        new.retrieval.dense_weight = 0.5  # the Desk keeps its own copy: later edits change nothing
        assert desk.config.retrieval.dense_weight == 1.0


def test_another_embedding_model_means_another_knowledge_base(tmp_path: Path, minilm) -> None:
    with Desk(tmp_path / "data", Config(), embedder=minilm) as desk:
        kb = desk.kb
        new = copy.deepcopy(desk.config)
        new.embedding.model = "openai:text-embedding-3-small"
        new.embedding.url = "http://127.0.0.1:9/v1"
        assert desk.apply_config(new) == {"embedding"}
        assert desk.kb is not kb


def test_a_changed_language_model_is_closed_and_replaced(tmp_path: Path, minilm) -> None:
    cfg = Config()
    cfg.llm.backend, cfg.llm.url = "openai", "http://127.0.0.1:9/v1"
    with Desk(tmp_path / "data", cfg, embedder=minilm) as desk:
        first = desk.chat_model
        closed: list[bool] = []
        first.close = lambda: closed.append(True)  # type: ignore[method-assign]
        new = copy.deepcopy(desk.config)
        new.llm.backend = "none"
        assert desk.apply_config(new) == {"llm"}
        assert closed == [True]
        assert desk.chat_model is None and desk.assistant.chat_model is None


def test_interface_settings_rebuild_nothing(tmp_path: Path, minilm) -> None:
    with Desk(tmp_path / "data", Config(), embedder=minilm) as desk:
        kb, assistant, identifier = desk.kb, desk.assistant, desk.identifier
        new = copy.deepcopy(desk.config)
        new.ui.language = "zh_CN"
        assert changed_sections(desk.config, new) == {"ui"}
        desk.apply_config(new)
        assert (desk.kb, desk.assistant, desk.identifier) == (kb, assistant, identifier)
        assert desk.apply_config(copy.deepcopy(new)) == set()


def test_a_slow_build_never_blocks_reading_what_is_built(tmp_path: Path, minilm, monkeypatch) -> None:
    """The window reads the knowledge base on the UI thread while a worker may be loading the image
    classifier (seconds): the read must not wait for that build."""
    import threading
    import time

    from desktop_app.core.identify import flow

    started = threading.Event()
    real_init = flow.Identifier.__init__

    def slow_init(self, *args, **kwargs) -> None:
        started.set()
        time.sleep(2.0)
        real_init(self, *args, **kwargs)

    monkeypatch.setattr(flow.Identifier, "__init__", slow_init)
    with Desk(tmp_path / "data", Config(), embedder=minilm) as desk:
        kb, assistant = desk.kb, desk.assistant
        builder = threading.Thread(target=lambda: desk.identifier)
        builder.start()
        assert started.wait(10)
        t0 = time.perf_counter()
        assert desk.kb is kb and desk.assistant is assistant
        assert time.perf_counter() - t0 < 0.5
        builder.join()

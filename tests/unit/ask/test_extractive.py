"""The no-LLM answerer and the backend factory."""

from __future__ import annotations

from pathlib import Path

from desktop_app.core.ask.budget import fit_blocks
from desktop_app.core.ask.extractive import extractive_answer, terms
from desktop_app.core.config import Config
from desktop_app.core.library.documents import Hit
from desktop_app.core.models.llm.factory import make_chat_model, resolve_chat_model
from desktop_app.core.models.llm.openai_compat import OpenAIChatModel


def hit(i: int, text: str) -> Hit:
    return Hit(f"d{i}-chunk-0", f"d{i}", text, f"doc{i}.md", None, 0, 1, 1.0)


def test_extractive_answer_picks_matching_sentences_and_cites_them():
    blocks = fit_blocks(
        [
            hit(1, "The macaw is large. African grey parrots eat palm nuts and seeds. They are grey."),
            hit(2, "Budgerigars come from Australia. Grey parrots also eat snails in the wild."),
        ],
        2000,
    )
    ex = extractive_answer("What do African grey parrots eat?", blocks, max_sentences=2)
    assert ex.text.startswith("No language model is configured; these are the most relevant passages.")
    assert "\n\nAfrican grey parrots eat palm nuts and seeds. [1]\n" in ex.text  # the lead
    assert "- Grey parrots also eat snails in the wild. [2]" in ex.text  # a supporting sentence
    assert ex.cited == [1, 2]


def test_extractive_answer_in_chinese_uses_bigrams_and_a_chinese_note():
    blocks = fit_blocks(
        [hit(1, "虎皮鹦鹉原产于澳大利亚。它们主要吃草籽，也吃水果。人工饲养寿命约十年。")], 2000
    )
    ex = extractive_answer("虎皮鹦鹉吃什么？", blocks, max_sentences=1)
    assert ex.text.startswith("未配置语言模型")
    assert "草籽" in ex.text or "原产于" in ex.text
    assert ex.cited == [1]
    assert "鹦鹉" in terms("虎皮鹦鹉")


def test_extractive_answer_without_passages_says_so():
    assert "no relevant passages" in extractive_answer("What is it?", []).text


def test_factory_defaults_to_no_model_with_a_reason():
    choice = resolve_chat_model(Config())
    assert choice.model is None and "extractive" in str(choice.reason)
    assert make_chat_model(Config()) is None


def test_factory_builds_an_openai_client_from_config():
    cfg = Config()
    cfg.llm.backend, cfg.llm.url, cfg.llm.model, cfg.llm.timeout = (
        "openai",
        "http://127.0.0.1:9/v1",
        "qwen",
        12,
    )
    model = make_chat_model(cfg)
    assert isinstance(model, OpenAIChatModel)
    assert (model.base_url, model.model, model.timeout) == ("http://127.0.0.1:9/v1", "qwen", 12)
    model.close()


def test_factory_explains_a_missing_gguf(tmp_path):
    cfg = Config()
    cfg.llm.backend, cfg.llm.gguf = "gguf", "nope.gguf"
    choice = resolve_chat_model(cfg, tmp_path)
    assert choice.model is None and "not found" in str(choice.reason)


def test_factory_finds_a_gguf_in_the_data_dirs_models_folder_without_starting_it(tmp_path: Path):
    (tmp_path / "models").mkdir()
    (tmp_path / "models" / "tiny.gguf").write_bytes(b"GGUF")
    cfg = Config()
    cfg.llm.backend, cfg.llm.gguf = "gguf", "tiny.gguf"
    choice = resolve_chat_model(cfg, tmp_path)
    assert choice.backend == "gguf" and choice.model is not None
    assert not choice.model.server.running  # lazily started on first use


def test_hard_wrapped_pdf_lines_do_not_cut_sentences():
    from desktop_app.core.ask.sentences import split_sentences

    text = "Cannister shot is a tin cylin-\nder filled with balls. These bills are made of\nlead and iron.\n\n- a list item stays apart\n鹦鹉是一种\n聪明的鸟类。"
    assert split_sentences(text) == [
        "Cannister shot is a tin cylinder filled with balls.",
        "These bills are made of lead and iron.",
        "- a list item stays apart",
        "鹦鹉是一种聪明的鸟类。",
    ]

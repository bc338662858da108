"""Which runtime runs the local embedder and reranker (models/runtime.py), what `kdesk models` says
about it, and that the chosen format's outputs agree with float32's."""

from __future__ import annotations

import shutil
from pathlib import Path

import numpy as np
import pytest

from desktop_app.core.config import Config
from desktop_app.core.models import runtime
from desktop_app.core.models.onnx_export import export_reranker
from desktop_app.core.models.rerank import CrossEncoderReranker
from desktop_app.core.models.runtime import choose_runtime, count_params
from desktop_app.core.models.status import format_status, model_status

LARGE = 600_000_000  # Qwen3-Embedding-0.6B
BF16_CPU = frozenset({"avx2", "avx512f", "avx512_bf16"})
AVX2_CPU = frozenset({"avx2", "fma"})


@pytest.fixture(autouse=True)
def _no_forced_dtype(monkeypatch):
    monkeypatch.delenv("KDESK_TORCH_DTYPE", raising=False)


def test_large_model_runs_in_bfloat16_on_a_cpu_with_bf16_units():
    rt = choose_runtime(LARGE, flags=BF16_CPU, cuda=False, mps=False)
    assert (rt.device, rt.dtype) == ("cpu", "bfloat16")
    assert "AVX512-BF16" in str(rt.describe())
    amx = choose_runtime(LARGE, flags=frozenset({"amx_bf16", "amx_tile"}), cuda=False, mps=False)
    assert amx.dtype == "bfloat16"


def test_large_model_stays_float32_on_a_cpu_without_bf16_units():
    rt = choose_runtime(LARGE, flags=AVX2_CPU, cuda=False, mps=False)
    assert (rt.device, rt.dtype) == ("cpu", "float32")
    assert "no bfloat16 units" in str(rt.reason)


def test_small_model_stays_float32_even_with_bf16_units():
    rt = choose_runtime(22_000_000, flags=BF16_CPU, cuda=False, mps=False)
    assert (rt.device, rt.dtype) == ("cpu", "float32")


def test_reranker_stays_float32_on_a_cpu_with_bf16_units():
    # bfloat16 reordered the full-size reranker's candidates (Spearman 0.81): float32 is kept.
    rt = choose_runtime(LARGE, flags=BF16_CPU, cuda=False, mps=False, role="reranker")
    assert (rt.engine, rt.device, rt.dtype) == ("torch", "cpu", "float32")
    assert "ordered candidates differently" in str(rt.reason)


def test_a_folders_onnx_export_wins_on_a_cpu_but_not_over_a_gpu_nor_over_native_bf16_for_an_embedder():
    rt = choose_runtime(LARGE, flags=BF16_CPU, cuda=False, mps=False, onnx=True, role="reranker")
    assert (rt.engine, rt.dtype) == ("onnxruntime", "float32")
    rt = choose_runtime(LARGE, flags=frozenset({"avx2"}), cuda=False, mps=False, onnx=True)
    assert (rt.engine, rt.dtype) == ("onnxruntime", "float32")  # an embedder without bf16 units
    rt = choose_runtime(LARGE, flags=BF16_CPU, cuda=False, mps=False, onnx=True)
    assert (rt.engine, rt.dtype) == ("torch", "bfloat16")  # faster than the export where native
    assert choose_runtime(LARGE, flags=BF16_CPU, cuda=True, mps=False, onnx=True).engine == "torch"


def test_a_gpu_is_used_automatically_and_cpu_setting_keeps_the_cpu():
    assert choose_runtime(LARGE, flags=AVX2_CPU, cuda=True, mps=False).device == "cuda"
    assert choose_runtime(22_000_000, flags=AVX2_CPU, cuda=False, mps=True).device == "mps"
    rt = choose_runtime(LARGE, "cpu", flags=BF16_CPU, cuda=True, mps=False)
    assert (rt.device, rt.dtype) == ("cpu", "bfloat16")


def test_env_forces_the_number_format(monkeypatch):
    monkeypatch.setenv("KDESK_TORCH_DTYPE", "float32")
    rt = choose_runtime(LARGE, flags=BF16_CPU, cuda=False, mps=False)
    assert rt.dtype == "float32" and "KDESK_TORCH_DTYPE=float32" in str(rt.reason)


def test_parameter_count_from_config_matches_the_models_size(tmp_path):
    # Qwen3-Embedding-0.6B's published config: 595,776,512 parameters.
    (tmp_path / "config.json").write_text(
        '{"hidden_size": 1024, "num_hidden_layers": 28, "intermediate_size": 3072, '
        '"vocab_size": 151669, "hidden_act": "silu"}'
    )
    assert 0.9 < count_params(tmp_path) / 595_776_512 < 1.1
    assert count_params(tmp_path / "absent") == 0


def test_kdesk_models_says_which_runtime_runs_the_reranker_and_why(tiny_cross_encoder, monkeypatch, tmp_path):
    config = Config()
    config.retrieval.reranker = str(tiny_cross_encoder)
    config.embedding.device = "cpu"
    row = next(r for r in model_status(tmp_path / "data", config) if r.role == "reranker")
    assert str(row.runtime) == "torch float32 on cpu: a small model: bfloat16 gains little on a CPU"
    assert "runtime: torch float32 on cpu" in format_status([row])
    monkeypatch.setattr(runtime, "BF16_MIN_PARAMS", 0)
    monkeypatch.setattr(runtime, "cpu_flags", lambda: BF16_CPU)
    row = next(r for r in model_status(tmp_path / "data", config) if r.role == "reranker")
    assert str(row.runtime).startswith("torch float32 on cpu: in bfloat16 the reranker ordered candidates")
    assert row.to_dict()["runtime"] == str(row.runtime)


def test_bfloat16_embedder_vectors_match_float32_within_its_tolerance(tmp_path_factory, monkeypatch):
    from desktop_app.core.models.embeddings.st import SentenceTransformerEmbedder
    from kdesk_lab.fullsize import build

    folder: Path = build("qwen3-embedding-0.6b", tmp_path_factory.mktemp("qwen"), tiny=True)
    docs = ["the parrot eats seeds and fruit", "a red macaw flies over the forest at night"]
    monkeypatch.setenv("KDESK_TORCH_DTYPE", "float32")
    ref = SentenceTransformerEmbedder(folder, device="cpu")
    monkeypatch.setenv("KDESK_TORCH_DTYPE", "bfloat16")
    mine = SentenceTransformerEmbedder(folder, device="cpu")
    d32, d16 = ref.embed_documents(docs), mine.embed_documents(docs)
    q32, q16 = ref.embed_queries(["what do parrots eat?"]), mine.embed_queries(["what do parrots eat?"])
    assert next(mine.model.parameters()).dtype.__repr__() == "torch.bfloat16"
    assert d16.dtype == np.float32
    # bfloat16 keeps 8 bits of mantissa: cosine >= 0.999 to float32 (the bar for a runtime).
    assert np.min(np.sum(d32 * d16, axis=1)) >= 0.999
    assert float(np.sum(q32 * q16)) >= 0.999


def _export_without_segments(src: Path, dst: Path) -> Path:
    """A copy of the tiny cross-encoder whose onnx/model.onnx takes no token_type_ids, which BERT's
    pairs need (the product's own export always has them: onnx_export.py)."""

    import torch
    from transformers import AutoModelForSequenceClassification

    shutil.copytree(src, dst)
    model = AutoModelForSequenceClassification.from_pretrained(str(dst)).eval()
    (dst / "onnx").mkdir()
    ids = torch.ones((2, 8), dtype=torch.long)
    names = ["input_ids", "attention_mask"]
    torch.onnx.export(
        model,
        (ids, torch.ones_like(ids)),
        str(dst / "onnx" / "model.onnx"),
        input_names=names,
        output_names=["logits"],
        dynamic_axes={n: {0: "batch", 1: "seq"} for n in names},
        dynamo=False,
    )
    return dst


def test_reranker_runs_the_folders_onnx_export_with_torch_float32s_scores(tiny_cross_encoder, tmp_path):
    folder = Path(shutil.copytree(tiny_cross_encoder, tmp_path / "with-onnx"))
    export_reranker(folder)  # the folder's own export, as `kdesk models fetch` makes it
    texts = ["parrot macaw fly", "pasta egg", "red blue green seed", "kakapo night forest"]
    mine = CrossEncoderReranker(folder, device="cpu")
    assert mine.runtime.engine == "onnxruntime"
    got = mine.score("parrot talk", texts)
    ref = CrossEncoderReranker(tiny_cross_encoder, device="cpu").score("parrot talk", texts)
    assert np.max(np.abs(got - ref)) < 1e-5
    config = Config()
    config.retrieval.reranker = str(folder)
    config.embedding.device = "cpu"
    row = next(r for r in model_status(tmp_path / "data", config) if r.role == "reranker")
    assert str(row.runtime).startswith("onnxruntime float32 on cpu: the folder has its own ONNX export")


def test_an_onnx_export_the_model_cannot_use_falls_back_to_torch(tiny_cross_encoder, tmp_path):
    # BERT pairs need segment ids: an export without them would score other inputs.
    folder = _export_without_segments(tiny_cross_encoder, tmp_path / "no-segments")
    mine = CrossEncoderReranker(folder, device="cpu")
    got = mine.score("parrot talk", ["parrot macaw fly", "pasta egg"])
    assert mine.runtime.engine == "torch"
    ref = CrossEncoderReranker(tiny_cross_encoder, device="cpu").score(
        "parrot talk", ["parrot macaw fly", "pasta egg"]
    )
    assert np.max(np.abs(got - ref)) < 1e-6


def test_embedder_runs_the_folders_onnx_export_with_torch_float32s_vectors(tmp_path_factory):
    import torch
    from transformers import AutoModel

    from desktop_app.core.models.embeddings.st import SentenceTransformerEmbedder
    from kdesk_lab.fullsize import build

    folder: Path = build("qwen3-embedding-0.6b", tmp_path_factory.mktemp("qwen-onnx"), tiny=True)
    ref = SentenceTransformerEmbedder(folder, device="cpu")
    docs = ["the parrot eats seeds and fruit", "a red macaw flies over the forest at night"]
    d32, q32 = ref.embed_documents(docs), ref.embed_queries(["what do parrots eat?"])
    model = AutoModel.from_pretrained(str(folder), dtype=torch.float32).eval()

    class Hidden(torch.nn.Module):
        def __init__(self, m):
            super().__init__()
            self.m = m

        def forward(self, input_ids, attention_mask):
            return self.m(input_ids=input_ids, attention_mask=attention_mask).last_hidden_state

    ids = torch.ones((2, 8), dtype=torch.long)
    mask = torch.ones_like(ids)
    mask[0, :2] = 0
    seq, batch = torch.export.Dim("seq"), torch.export.Dim("batch")
    (folder / "onnx").mkdir()
    torch.onnx.export(
        Hidden(model),
        (ids, mask),
        str(folder / "onnx" / "model.onnx"),
        input_names=["input_ids", "attention_mask"],
        output_names=["last_hidden_state"],
        dynamic_shapes={"input_ids": {0: batch, 1: seq}, "attention_mask": {0: batch, 1: seq}},
        dynamo=True,
    )
    mine = SentenceTransformerEmbedder(folder, device="cpu")
    d, q = mine.embed_documents(docs), mine.embed_queries(["what do parrots eat?"])
    assert mine.runtime.engine == "onnxruntime" and mine.dim == ref.dim
    assert np.max(np.abs(d - d32)) < 1e-5 and np.max(np.abs(q - q32)) < 1e-5

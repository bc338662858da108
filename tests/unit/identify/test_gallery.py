"""Reference gallery: labels from paths, calibrated neighbours, and change detection through the KB."""

from __future__ import annotations

import hashlib
import shutil
from pathlib import Path

import numpy as np
import pytest

from desktop_app.core.identify.classifier import get_classifier
from desktop_app.core.identify.gallery import (
    COLLECTION,
    FEATURE_VERSION,
    GalleryHandler,
    GalleryMatch,
    fit_reference,
    gallery_for,
    label_for,
    label_probabilities,
    photo_handler,
    score_labels,
)


class HashEmbedder:
    """A tiny deterministic text embedder (bag of hashed words): no model needed for text notes."""

    name = "test-hash"
    dim = 64
    max_chars = 2000

    def _embed(self, texts):
        out = np.zeros((len(texts), self.dim), dtype=np.float32)
        for i, t in enumerate(texts):
            for w in t.lower().split():
                out[i, int(hashlib.md5(w.encode()).hexdigest(), 16) % self.dim] += 1.0
        out /= np.linalg.norm(out, axis=1, keepdims=True) + 1e-9
        return out

    def embed_documents(self, texts):
        return self._embed(texts)

    def embed_queries(self, texts):
        return self._embed(texts)


def test_label_comes_from_the_folder_or_the_file_stem():
    assert label_for("parrots/photos/Scarlet Macaw/1.jpg") == "Scarlet Macaw"
    assert label_for("金刚鹦鹉_2.jpg") == "金刚鹦鹉"
    assert label_for("parrots/金刚鹦鹉_2.jpg", photo_folder=False) == "金刚鹦鹉"
    assert label_for("parrots/photos/kea_01.png") == "kea"
    assert label_for("@zoo/Kea/IMG 3.jpg") == "Kea"
    assert label_for("Scarlet Macaw (3).png") == "Scarlet Macaw"
    assert label_for("parrots/photos/12.jpg") == "parrots"


def test_probabilities_aggregate_per_label_and_keep_room_for_none_of_these():
    matches = [
        GalleryMatch("a", "Galah", "", 0.90),
        GalleryMatch("b", "Galah", "", 0.80),
        GalleryMatch("c", "Kea", "", 0.70),
    ]
    scores, reject = label_probabilities(matches, temperature=0.05, reject_similarity=0.7)
    assert [s.label for s in scores] == ["Galah", "Kea"]
    assert scores[0].photos == 2 and scores[0].similarity == pytest.approx(0.90)
    assert scores[0].probability > 0.9
    assert sum(s.probability for s in scores) + reject == pytest.approx(1.0)
    # far from every reference photo: "none of these" takes almost all the mass
    scores, reject = label_probabilities([GalleryMatch("c", "Kea", "", 0.3)], 0.05, 0.7)
    assert reject > 0.99 and scores[0].probability < 0.01
    assert label_probabilities([]) == ([], 1.0)


def _unit(v):
    v = np.asarray(v, dtype=np.float64)
    return v / np.linalg.norm(v)


def test_ridge_head_weighs_every_photo_of_a_label_and_keeps_room_for_none_of_these():
    rng = np.random.default_rng(0)
    a, b = _unit(rng.normal(size=16)), _unit(rng.normal(size=16))
    # Label A: three photos around direction a; label B: one photo at b.
    feats = np.stack([_unit(a + 0.3 * rng.normal(size=16)) for _ in range(3)] + [b])
    ref = fit_reference(feats, ["A", "A", "A", "B"], ["a1", "a2", "a3", "b1"], ["1", "2", "3", "4"], 2.0)
    assert ref.names == ["A", "B"] and ref.coef.shape == (4, 2)
    scores, none = score_labels(ref, _unit(b + 0.05 * a), temperature=0.05, reject_similarity=0.7)
    assert scores[0].label == "B" and scores[0].source == "b1" and scores[0].photos == 1
    assert scores[1].photos == 3  # more photos do not outvote the closer label
    assert sum(s.probability for s in scores) + none == pytest.approx(1.0)
    assert scores[0].probability > 0.5
    # Far from every reference: "none of these" takes almost all the mass.
    far = _unit(rng.normal(size=16) - a - b)
    scores, none = score_labels(ref, far, temperature=0.05, reject_similarity=0.7)
    assert none > 0.99 and scores[0].probability < 0.01
    # The fit is deterministic (it is refitted whenever the gallery changes).
    again = fit_reference(feats, ["A", "A", "A", "B"], ["a1", "a2", "a3", "b1"], ["1", "2", "3", "4"], 2.0)
    assert np.array_equal(ref.coef, again.coef)
    assert score_labels(fit_reference(np.zeros((0, 16)), [], [], []), b) == ([], 1.0)


@pytest.fixture
def photo_kb(tmp_path, shared_data):
    from desktop_app.core.library.knowledge import KnowledgeBase

    get_classifier().load()
    kb = KnowledgeBase(tmp_path / "data", embedder=HashEmbedder(), photo_handler=photo_handler)
    src = shared_data / "images" / "parrots"
    photos = kb.knowledge_dir / "parrots" / "photos"
    for label, folder in (("Scarlet Macaw", "ara_macao"), ("African Grey", "jako_grey")):
        (photos / label).mkdir(parents=True)
        shutil.copy(src / folder / "1.jpg", photos / label / "1.jpg")
    (kb.knowledge_dir / "parrots" / "notes.md").write_text("# Scarlet Macaw\n\nRed, yellow and blue.\n")
    yield kb, src
    kb.close()


def test_sync_indexes_photos_in_their_own_collection_and_follows_changes(photo_kb):
    kb, src = photo_kb
    report = kb.sync()
    macaw, grey = "parrots/photos/Scarlet Macaw/1.jpg", "parrots/photos/African Grey/1.jpg"
    assert {macaw, grey, "parrots/notes.md"} <= set(report.added) and not report.failed
    handler = gallery_for(kb)
    assert isinstance(handler, GalleryHandler) and handler.collection.name == COLLECTION
    assert handler.stored_doc_ids() == {kb.doc_id(macaw), kb.doc_id(grey)}
    assert handler.labels() == ["African Grey", "Scarlet Macaw"]
    kinds = {d.name: (d.kind, d.chunks) for d in kb.list_documents()}
    assert kinds[macaw] == ("image", 1)
    # Each reference photo is stored as two views: the centre crop and its mirror image.
    got = handler.collection.get(include=["embeddings", "metadatas"])
    assert sorted(got["ids"]) == sorted(kb.doc_id(r) + s for r in (macaw, grey) for s in ("", "#flip"))
    views = {i: np.asarray(e) for i, e in zip(got["ids"], got["embeddings"], strict=True)}
    centre, mirror = views[kb.doc_id(macaw)], views[kb.doc_id(macaw) + "#flip"]
    assert 0.5 < float(centre @ mirror) < 0.999  # the same bird, not the same vector

    # Nothing changed: nothing is re-embedded.
    calls: list[str] = []
    original = handler.index
    handler.index = lambda doc_id, path, rel, scope: calls.append(rel) or original(doc_id, path, rel, scope)
    report = kb.sync()
    assert calls == [] and macaw in report.unchanged

    # Another scarlet macaw photo replaces the first: only that file is re-embedded.
    before = np.array(handler.collection.get(ids=[kb.doc_id(macaw)], include=["embeddings"])["embeddings"][0])
    shutil.copy(src / "ara_macao" / "2.jpg", kb.knowledge_dir / macaw)
    report = kb.sync()
    assert report.updated == [macaw] and calls == [macaw]
    after = np.array(handler.collection.get(ids=[kb.doc_id(macaw)], include=["embeddings"])["embeddings"][0])
    assert float(before @ after) < 0.999

    # Its nearest neighbour is itself, labelled from the folder.
    query = get_classifier().classify(src / "ara_macao" / "2.jpg").feature
    top = handler.nearest(query, k=2)[0]
    assert top.label == "Scarlet Macaw" and top.similarity > 0.99

    # A deleted photo leaves the gallery; a broken one fails with a readable reason.
    (kb.knowledge_dir / grey).unlink()
    (kb.knowledge_dir / "parrots" / "photos" / "Scarlet Macaw" / "2.jpg").write_bytes(b"")
    report = kb.sync()
    assert grey in report.removed
    assert report.failed and "empty" in str(report.failed[0][1])
    assert handler.stored_doc_ids() == {kb.doc_id(macaw)}
    assert sorted(handler.collection.get(include=[])["ids"]) == [kb.doc_id(macaw), kb.doc_id(macaw) + "#flip"]
    scores, _ = handler.label_scores(query)  # the ridge head is refitted without the removed photo
    assert [s.label for s in scores] == ["Scarlet Macaw"]


def test_a_gallery_of_an_older_feature_version_is_dropped_and_rebuilt(photo_kb):
    kb, src = photo_kb
    kb.sync()
    names = {"parrots/photos/Scarlet Macaw/1.jpg", "parrots/photos/African Grey/1.jpg"}
    # What a previous release left: its own collection, and none of the current one.
    client = kb.chroma_client
    client.delete_collection(COLLECTION)
    old = client.get_or_create_collection(
        "gallery__efficientnet-lite0__1280", metadata={"hnsw:space": "cosine"}
    )
    old.upsert(ids=[kb.doc_id(n) for n in names], embeddings=[[1.0] + [0.0] * 1279] * 2)

    handler = GalleryHandler(kb)  # what opening the app does
    assert handler.count() == 2  # first use re-embeds the manifest's photos
    collections = {c if isinstance(c, str) else c.name for c in client.list_collections()}
    assert COLLECTION in collections and "gallery__efficientnet-lite0__1280" not in collections
    assert handler.stored_doc_ids() == {kb.doc_id(n) for n in names}
    query = get_classifier().classify(src / "jako_grey" / "1.jpg").feature
    assert handler.label_scores(query)[0][0].label == "African Grey"


def test_a_rebuilt_gallery_never_reads_a_photo_through_a_link_out(photo_kb, tmp_path):
    import os

    kb, _src = photo_kb
    kb.sync()
    macaw, grey = "parrots/photos/Scarlet Macaw/1.jpg", "parrots/photos/African Grey/1.jpg"
    outside = tmp_path / "outside.jpg"  # swapped for a link out after it was indexed, before a sync
    shutil.move(kb.knowledge_dir / grey, outside)
    os.symlink(outside, kb.knowledge_dir / grey)
    kb.chroma_client.delete_collection(COLLECTION)  # a gallery rebuilt from the manifest's photos
    handler = GalleryHandler(kb)
    assert handler.count() == 1 and handler.stored_doc_ids() == {kb.doc_id(macaw)}


def test_a_gallery_of_a_newer_feature_version_is_kept_for_the_newer_app(photo_kb):
    kb, _src = photo_kb
    kb.sync()
    newer = COLLECTION.rsplit("__v", 1)[0] + f"__v{FEATURE_VERSION + 1}"
    kb.chroma_client.get_or_create_collection(newer, metadata={"hnsw:space": "cosine"}).upsert(
        ids=["x"], embeddings=[[1.0] + [0.0] * 1279]
    )
    GalleryHandler(kb).ensure_current()  # what opening the app does: older galleries are dropped
    collections = {c if isinstance(c, str) else c.name for c in kb.chroma_client.list_collections()}
    assert {COLLECTION, newer} <= collections
    assert kb.chroma_client.get_collection(newer).count() == 1  # never rewritten downwards


def test_scoped_photos_are_only_seen_in_their_scope(photo_kb):
    kb, src = photo_kb
    private = kb.knowledge_dir / "@zoo" / "Kea"
    private.mkdir(parents=True)
    shutil.copy(src / "cokatoo_galah" / "Galah.jpg", private / "1.jpg")
    kb.sync()
    handler = gallery_for(kb)
    assert "Kea" not in handler.labels() and "Kea" in handler.labels("zoo")
    feature = get_classifier().classify(private / "1.jpg").feature
    assert all(m.label != "Kea" for m in handler.nearest(feature, k=5))
    assert handler.nearest(feature, k=5, scope="zoo")[0].label == "Kea"
    assert all(s.label != "Kea" for s in handler.label_scores(feature)[0])
    assert handler.label_scores(feature, scope="zoo")[0][0].label == "Kea"


def test_leave_one_out_gallery_hides_every_view_of_the_query_photo(shared_data):
    from desktop_app.core.config import IdentifyConfig
    from kdesk_lab.identify import MemoryGallery

    src = shared_data / "images" / "parrots"
    photos = [(lab, src / lab / f"{i}.jpg") for lab in ("ara_macao", "jako_white") for i in (1, 2, 3)]
    classifier = get_classifier()
    feats, owner = [], []
    for i, (_, path) in enumerate(photos):
        views = classifier.embed_views(path)
        assert views.shape == (2, 1280)
        feats += list(views)
        owner += [i, i]
    mem = MemoryGallery(
        np.stack(feats), [photos[i][0] for i in owner], [str(photos[i][1]) for i in owner], owner
    )
    query = classifier.classify(photos[0][1]).feature
    scores, _ = mem.label_scores(query, cfg=IdentifyConfig())
    assert scores[0].source == str(photos[0][1]) and scores[0].similarity > 0.99
    mem.exclude = 0
    scores, _ = mem.label_scores(query, cfg=IdentifyConfig())
    assert all(s.source != str(photos[0][1]) for s in scores) and scores[0].similarity < 0.99
    assert scores[0].label == "ara_macao" and scores[0].photos == 2
    assert [m.source for m in mem.nearest(query, k=10)].count(str(photos[0][1])) == 0


def test_candidates_and_the_decision_carry_the_chinese_name_their_notes_give(tmp_path, shared_data):
    from desktop_app.core.events import Classified, Decision
    from desktop_app.core.identify.flow import Identifier
    from desktop_app.core.library.knowledge import KnowledgeBase

    src = shared_data / "images" / "parrots"
    notes = Path(__file__).resolve().parents[3] / "knowledge" / "parrots"
    with KnowledgeBase(tmp_path / "data", embedder=HashEmbedder(), photo_handler=photo_handler) as kb:
        for folder in ("ara_macao", "jako_grey"):
            (kb.knowledge_dir / "parrots" / "photos" / folder).mkdir(parents=True)
            for i in (1, 2):
                shutil.copy(src / folder / f"{i}.jpg", kb.knowledge_dir / "parrots" / "photos" / folder)
        for note in ("scarlet-macaw.md", "african-grey-parrot.md"):  # "Gallery label: ara_macao" ...
            shutil.copy(notes / note, kb.knowledge_dir / "parrots" / note)
        kb.sync()
        events = list(Identifier(kb).run(src / "ara_macao" / "3.jpg"))
    candidates = next(e for e in events if isinstance(e, Classified)).candidates
    zh = {c.name: c.zh for c in candidates}
    assert zh["ara_macao"] == "绯红金刚鹦鹉" and zh["jako_grey"] == "非洲灰鹦鹉"
    assert zh["macaw"] == "金刚鹦鹉"  # no note names ImageNet's "macaw": the classifier's own name
    decision = next(e for e in events if isinstance(e, Decision))
    assert decision.final_name == "ara_macao" and decision.zh_names["ara_macao"] == "绯红金刚鹦鹉"
    # and the English name their titles give, for an English window and `kdesk identify`
    titles = {c.name: c.title for c in candidates}
    assert titles["ara_macao"] == "Scarlet Macaw" and titles["jako_grey"] == "African Grey Parrot"
    assert titles["macaw"] is None  # no note is titled after ImageNet's label
    assert decision.titles["ara_macao"] == "Scarlet Macaw"


def test_the_desk_gives_its_library_the_gallery_and_a_bare_library_refuses_photos(tmp_path):
    """The library never imports identification: the Desk hands it the gallery as its photo handler;
    a knowledge base built without one fails a photo with the reason instead of indexing it."""
    from desktop_app.core.desk import Desk
    from desktop_app.core.library.knowledge import KnowledgeBase

    get_classifier().load()
    with Desk(tmp_path / "desk", embedder=HashEmbedder()) as desk:
        assert isinstance(desk.kb.handler_for(".jpg"), GalleryHandler)
    with KnowledgeBase(tmp_path / "bare", embedder=HashEmbedder()) as kb:
        assert kb.handler_for(".jpg") is None
        (kb.knowledge_dir / "photos").mkdir()
        (kb.knowledge_dir / "photos" / "kea.jpg").write_bytes(b"\xff\xd8 not read: the handler is missing")
        report = kb.sync()
        assert [name for name, _ in report.failed] == ["photos/kea.jpg"]

"""The optional image-text model role: a tiny random-weight CLIP that the test saves itself (nothing
is downloaded), found in a models folder, reported by `kdesk models`, and used for the gallery."""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pytest
from PIL import Image, ImageDraw

from desktop_app.core import paths
from desktop_app.core.config import Config
from desktop_app.core.identify.classifier import FEATURE_DIM, get_classifier
from desktop_app.core.identify.gallery import (
    COLLECTION,
    GalleryHandler,
    collection_name,
    gallery_for,
    photo_handler,
)
from desktop_app.core.identify.image_text import (
    ImageTextModel,
    feature_model,
    find_image_model,
    load_image_model,
)
from desktop_app.core.library.images import load_image
from desktop_app.core.models import registry
from desktop_app.core.models.status import model_status

DIM = 16  # the tiny model's projection size
LETTERS = "abcdefghijklmnopqrstuvwxyz"


def save_tiny_clip(folder: Path) -> Path:
    """A CLIP with 2-layer, 32-wide towers on 32x32 images, and a letter-level BPE tokenizer."""
    import torch
    from transformers import CLIPConfig, CLIPImageProcessor, CLIPModel, CLIPTokenizer

    vocab = {c: i for i, c in enumerate(LETTERS)} | {c + "</w>": 26 + i for i, c in enumerate(LETTERS)}
    vocab |= {"<|startoftext|>": 52, "<|endoftext|>": 53}
    tower = {"hidden_size": 32, "intermediate_size": 64, "num_hidden_layers": 2, "num_attention_heads": 2}
    config = CLIPConfig(
        text_config=tower
        | {
            "vocab_size": 54,
            "max_position_embeddings": 32,
            "bos_token_id": 52,
            "eos_token_id": 53,
            "pad_token_id": 53,
        },
        vision_config=tower | {"image_size": 32, "patch_size": 16},
        projection_dim=DIM,
    )
    torch.manual_seed(0)
    CLIPModel(config).save_pretrained(folder)
    CLIPImageProcessor(size={"shortest_edge": 32}, crop_size={"height": 32, "width": 32}).save_pretrained(
        folder
    )
    CLIPTokenizer(vocab=vocab, merges=[]).save_pretrained(folder)
    return folder


@pytest.fixture(scope="module")
def tiny_models(tmp_path_factory) -> Path:
    """A models folder holding `tiny-clip/`."""
    models = tmp_path_factory.mktemp("models")
    save_tiny_clip(models / "tiny-clip")
    return models


@pytest.fixture
def models_env(tiny_models, tmp_path, monkeypatch) -> Path:
    """$KDESK_MODELS is the tiny models folder; the repository's models/ is out of sight."""
    monkeypatch.setenv("KDESK_MODELS", str(tiny_models))
    monkeypatch.setattr(paths, "REPO_ROOT", tmp_path / "repo")
    return tiny_models


def config(image_model: str) -> Config:
    cfg = Config()
    cfg.identify.image_model = image_model
    return cfg


def shape_photo(colour: tuple[int, int, int], shape: str, shift: int = 0, size: int = 96) -> Image.Image:
    img = Image.new("RGB", (size, size), (235, 235, 225))
    box = (16 + shift, 20, 76 + shift, 80)
    draw = ImageDraw.Draw(img)
    (draw.ellipse if shape == "circle" else draw.rectangle)(box, fill=colour)
    return img


def shapes_library(tmp_path: Path, cfg: Config):
    """A KnowledgeBase holding two reference photos each of a red circle and a blue square (not
    yet synced). The library holds photos only: no text is ever embedded."""
    from desktop_app.core.library.knowledge import KnowledgeBase

    class NoText:
        name, dim, max_chars = "test-no-text", 8, 1000

    kb = KnowledgeBase(tmp_path / "data", config=cfg, embedder=NoText(), photo_handler=photo_handler)
    photos = kb.knowledge_dir / "shapes" / "photos"
    for label, colour, shape in (
        ("Red Circle", (200, 30, 30), "circle"),
        ("Blue Square", (30, 60, 200), "square"),
    ):
        (photos / label).mkdir(parents=True)
        for i in (1, 2):
            shape_photo(colour, shape, shift=6 * i).save(photos / label / f"{i}.png")
    return kb


def by_role(statuses) -> dict:
    return {s.role: s for s in statuses}


def test_a_local_folder_is_found_reported_and_loaded_offline(models_env, tmp_path, capsys):
    from desktop_app.cli.main import main

    folder = models_env / "tiny-clip"
    data = tmp_path / "data"
    data.mkdir()
    (data / "config.toml").write_text('[identify]\nimage_model = "tiny-clip"\n', encoding="utf-8")
    assert main(["--data-dir", str(data), "models", "--json"]) == 0
    image = next(r for r in json.loads(capsys.readouterr().out)["roles"] if r["role"] == "image")
    assert image["active"] == "tiny-clip (local folder)" and image["path"] == str(folder)
    assert find_image_model(config("tiny-clip"), data) == folder  # the app loads what `kdesk models` says

    model = load_image_model(config("tiny-clip"), data)
    assert isinstance(model, ImageTextModel) and model is load_image_model(config(str(folder)), None)
    assert (model.name, model.dim) == ("tiny-clip", DIM)
    model.load()
    photo = shape_photo((200, 30, 30), "circle")
    views = model.embed_views(photo)
    assert views.shape == (2, DIM) and np.allclose(np.linalg.norm(views, axis=1), 1.0, atol=1e-5)
    assert np.allclose(views[0], model.embed_image(photo), atol=1e-5)  # row 0 is the query side
    texts = model.embed_texts(["a red circle", "kea"])
    assert texts.shape == (2, DIM) and np.allclose(np.linalg.norm(texts, axis=1), 1.0, atol=1e-5)
    assert model.embed_texts([]).shape == (0, DIM)
    assert model.logit_scale == pytest.approx(np.exp(2.6592), rel=1e-4)  # CLIP's initial temperature


def test_auto_picks_an_installed_manifest_model_and_none_disables_it(models_env, tmp_path, monkeypatch):
    manifest = tmp_path / "manifest.toml"
    manifest.write_text(
        '[[model]]\nid = "tiny-clip-b"\nrole = "image"\nsource = "huggingface"\nrepo_id = "kdesk-test/tiny-clip"\n'
        'folder = "tiny-clip"\nlicense = "MIT"\nrequires = ["transformers", "torch"]\n'
        '[[model.files]]\npath = "config.json"\n[[model.files]]\npath = "model.safetensors"\n',
        encoding="utf-8",
    )
    monkeypatch.setattr(registry, "default_manifest_path", lambda: manifest)
    st = by_role(model_status(tmp_path / "data", config("auto"), manifest))["image"]
    assert st.active_id == "tiny-clip-b" and st.path == str(models_env / "tiny-clip")
    assert find_image_model(config("auto"), tmp_path / "data") == models_env / "tiny-clip"

    st = by_role(model_status(tmp_path / "data", config("none"), manifest))["image"]
    assert st.active is None and "disabled" in str(st.reason) and "EfficientNet-Lite0" in str(st.reason)
    assert find_image_model(config("none"), tmp_path / "data") is None
    assert feature_model(config("none"), tmp_path / "data") is get_classifier()


def test_nothing_installed_falls_back_to_the_classifier_and_says_how_to_fetch(tmp_path, monkeypatch, capsys):
    from desktop_app.cli.main import main

    monkeypatch.setenv("KDESK_MODELS", str(tmp_path / "empty"))
    monkeypatch.setattr(paths, "REPO_ROOT", tmp_path / "repo")
    st = by_role(model_status(tmp_path / "data", Config()))["image"]
    assert st.active is None and "bundled EfficientNet-Lite0 features" in str(st.reason)
    assert st.install_command == "kdesk models fetch image"
    assert [a.id for a in st.models] == ["clip-vit-base-patch32"]
    assert feature_model(Config(), tmp_path / "data") is get_classifier()
    st = by_role(model_status(tmp_path / "data", config("not-there")))["image"]
    assert st.active is None and "not a CLIP-like model folder" in str(st.reason)

    # The fetcher knows the role (offline here: it fails at once and installs nothing).
    code = main(
        ["models", "fetch", "image", "--endpoint", "http://127.0.0.1:9", "--dest", str(tmp_path / "m")]
    )
    assert code == 1 and "cannot reach http://127.0.0.1:9" in capsys.readouterr().err
    assert not (tmp_path / "m" / "clip-vit-base-patch32").exists()


def test_the_gallery_is_keyed_by_its_feature_model_and_never_mixes_vectors(models_env, tmp_path):
    kb = shapes_library(tmp_path, config("tiny-clip"))
    photos = kb.knowledge_dir / "shapes" / "photos"
    try:
        report = kb.sync()
        assert len(report.added) == 4 and not report.failed
        clip_gallery = gallery_for(kb)
        assert isinstance(clip_gallery.features, ImageTextModel)
        assert (
            clip_gallery.collection.name == collection_name("tiny-clip", DIM) == "gallery__tiny-clip__16__v2"
        )
        got = clip_gallery.collection.get(include=["embeddings"])
        assert len(got["ids"]) == 8 and np.asarray(got["embeddings"]).shape == (8, DIM)  # two views a photo

        query_path = photos / "Red Circle" / "1.png"
        scores, none = clip_gallery.label_scores(clip_gallery.features.embed_image(load_image(query_path)))
        assert {s.label for s in scores} == {"Red Circle", "Blue Square"}
        best = max(scores, key=lambda s: s.similarity)
        assert best.label == "Red Circle" and best.similarity > 0.999
        assert sum(s.probability for s in scores) + none == pytest.approx(1.0)

        # Back to the bundled classifier: another collection, the CLIP one dropped, photos re-embedded.
        default = GalleryHandler(kb)
        assert default.count() == 4
        names = {c if isinstance(c, str) else c.name for c in kb.chroma_client.list_collections()}
        assert COLLECTION in names and clip_gallery.collection_name not in names
        got = default.collection.get(
            ids=[kb.doc_id("shapes/photos/Red Circle/1.png")], include=["embeddings"]
        )
        stored = np.asarray(got["embeddings"][0])
        assert stored.shape == (FEATURE_DIM,)
        assert np.allclose(stored, get_classifier().embed_image(load_image(query_path)), atol=1e-4)

        # The same switch through the settings: the library builds a gallery on the classifier.
        kb.apply_config(config("none"))
        assert gallery_for(kb).features is get_classifier()
        assert gallery_for(kb).collection_name == COLLECTION
    finally:
        kb.close()


def test_identify_queries_the_gallery_in_its_model_space_and_names_notes_only_species_by_eye(
    models_env, tmp_path
):
    """The flow embeds the photo with the gallery's image-text model (not the classifier's 1280-d
    feature) and scores species known only from notes zero-shot against the gallery's leaders."""
    from desktop_app.core.identify.flow import Identifier
    from desktop_app.core.identify.vote import notes_only_species
    from desktop_app.core.library.documents import Hit

    cfg = config("tiny-clip")
    cfg.identify.high = cfg.identify.medium = cfg.identify.medium_retrieve_below = 1.01  # always retrieve
    kb = shapes_library(tmp_path, cfg)
    note = "# Green Triangle (Trigonia viridis)\n\nChinese: 绿三角.\n\n**Colours:** green and yellow."
    hit = Hit(
        "tri-0",
        "tri",
        note,
        "shapes/green-triangle.md",
        None,
        0,
        1,
        1.0,
        heading_path=[note.splitlines()[0][2:]],
    )
    try:
        kb.sync()
        ident = Identifier(kb, None, cfg, search=lambda queries, k, scope: [hit])
        query = tmp_path / "q.png"
        shape_photo((200, 30, 30), "circle", shift=3).save(query)
        result = ident.identify(query)
        gallery = [c for c in result.candidates if c.source == "gallery"]
        assert [c.name for c in gallery[:1]] == ["Red Circle"]
        assert ident.last_feature is not None and ident.last_feature.shape == (DIM,)
        by_eye = ident.zero_shot(notes_only_species([hit], ident.gallery_labels), result.candidates)
        assert set(by_eye) == {"Green Triangle"} and 0.0 < by_eye["Green Triangle"] < 1.0
        assert result.decision is not None and result.decision.final_name in ("Red Circle", "Blue Square")
    finally:
        kb.close()

"""EfficientNet-Lite0 on real photos (../shared/data/images/coral) and its label file."""

from __future__ import annotations

import threading

import numpy as np
import pytest

from desktop_app.core.identify.classifier import (
    FEATURE_DIM,
    centre_crop,
    get_classifier,
    imagenet_labels,
    preprocess,
)
from desktop_app.core.library.images import load_image

PARROT_GROUP = "parrot"


@pytest.fixture(scope="session")
def classifier():
    """The process-wide classifier: loaded once, shared by every vision test."""
    clf = get_classifier()
    clf.load()
    return clf


def test_labels_file_has_the_1000_classes_in_model_order_with_chinese_bird_names():
    labels = imagenet_labels()
    assert len(labels) == 1000
    assert labels[0].synset == "n01440764" and labels[0].name == "tench"
    assert labels[88].name == "macaw" and labels[88].zh == "金刚鹦鹉" and labels[88].group == PARROT_GROUP
    assert {lab.name for lab in labels if lab.group == PARROT_GROUP} == {
        "African grey",
        "macaw",
        "sulphur-crested cockatoo",
        "lorikeet",
    }
    birds = [lab for lab in labels if lab.group]
    assert len(birds) == 59 and all(lab.zh for lab in birds)
    assert all(lab.definition for lab in labels)


def test_preprocess_resizes_short_side_crops_and_normalises():
    from PIL import Image

    img = Image.new("RGB", (512, 300), (255, 127, 0))
    assert centre_crop(img).size == (224, 224)
    x = preprocess(img)
    assert x.shape == (3, 224, 224) and x.dtype == np.float32
    assert np.allclose(x[:, 100, 100], [(255 - 127) / 128, 0.0, -127 / 128])


def test_scarlet_macaw_photo_has_macaw_in_top5(classifier, shared_data):
    result = classifier.classify(shared_data / "images" / "coral" / "parrot.jpg")
    names = [lab.name for lab in result.labels]
    assert "macaw" in names
    assert names[0] == "macaw" and result.labels[0].score > 0.5
    assert result.feature.shape == (FEATURE_DIM,)
    assert abs(float(np.linalg.norm(result.feature)) - 1.0) < 1e-4
    assert result.saliency is not None and result.saliency.shape == (7, 7)


def test_owl_photo_is_not_called_a_parrot(classifier, shared_data):
    result = classifier.classify(shared_data / "images" / "coral" / "owl.jpg")
    assert result.labels[0].group != PARROT_GROUP
    assert sum(lab.score for lab in result.labels if lab.group == PARROT_GROUP) < 0.1


def test_chickadee_is_a_bird_and_features_tell_photos_apart(classifier, shared_data):
    coral = shared_data / "images" / "coral"
    bird, parrot = classifier.classify_many([coral / "bird.bmp", coral / "parrot.jpg"])
    assert bird.labels[0].name == "chickadee" and bird.labels[0].zh == "山雀"
    again = classifier.classify(load_image(coral / "parrot.jpg"))
    assert float(parrot.feature @ again.feature) > 0.999  # deterministic
    assert float(parrot.feature @ bird.feature) < 0.8


def test_classifier_is_safe_to_call_from_several_threads(classifier, shared_data):
    path = shared_data / "images" / "coral" / "parrot.jpg"
    expected = classifier.classify(path).feature
    results: list[np.ndarray] = []
    threads = [
        threading.Thread(target=lambda: results.append(classifier.classify(path).feature)) for _ in range(3)
    ]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert len(results) == 3 and all(np.allclose(r, expected, atol=1e-5) for r in results)


def test_folded_batchnorm_gives_the_unfolded_models_outputs(classifier, shared_data):
    import contextlib
    import io

    import torch
    from efficientnet_lite_pytorch import EfficientNet

    from desktop_app.core.identify.classifier import MODEL_NAME, default_weights_path, fold_batchnorm

    with contextlib.redirect_stdout(io.StringIO()):
        plain = EfficientNet.from_pretrained(
            MODEL_NAME, weights_path=str(default_weights_path()), num_classes=1000
        ).eval()
    x = torch.from_numpy(preprocess(load_image(shared_data / "images" / "coral" / "parrot.jpg")))[None]
    with torch.inference_mode():
        expected = plain.extract_features(x)
        assert fold_batchnorm(plain) == 49  # stem, head, and every block's convolutions
        assert not any(isinstance(m, torch.nn.BatchNorm2d) for m in plain.modules())
        folded = plain.extract_features(x)
    assert torch.allclose(folded, expected, atol=1e-3)
    pooled = expected.mean(dim=(2, 3))[0].numpy()
    feature = classifier.embed([shared_data / "images" / "coral" / "parrot.jpg"])[0]
    assert float(feature @ (pooled / np.linalg.norm(pooled))) > 0.9999

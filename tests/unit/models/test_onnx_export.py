"""A reranker's ONNX export made on this machine (core/models/onnx_export.py), as `kdesk models fetch`
makes it after the download: torch's exporter on the real folder, checked against torch float32,
then chosen by the runtime and scoring as torch does."""

from __future__ import annotations

import shutil
from pathlib import Path

import numpy as np
import pytest

from desktop_app.core.models.onnx_export import ExportError, export_reranker
from desktop_app.core.models.rerank import CrossEncoderReranker

TEXTS = ["parrot macaw fly", "pasta egg", "red blue green seed", "kakapo night forest", "vet"]


def test_an_export_is_made_checked_and_then_chosen_with_torch_float32s_scores(tiny_cross_encoder, tmp_path):
    folder = Path(shutil.copytree(tiny_cross_encoder, tmp_path / "tiny-reranker"))
    assert CrossEncoderReranker(folder, device="cpu").runtime.engine == "torch"  # as downloaded

    path, diff = export_reranker(folder)
    assert path == folder / "onnx" / "model.onnx" and path.is_file() and diff <= 1e-5
    assert not list(folder.glob(".onnx*"))  # no work folder left behind
    mine = CrossEncoderReranker(folder, device="cpu")
    assert mine.runtime.engine == "onnxruntime"
    ref = CrossEncoderReranker(tiny_cross_encoder, device="cpu").score("parrot talk", TEXTS)
    got = mine.score("parrot talk", TEXTS)
    assert np.max(np.abs(got - ref)) < 1e-5 and np.ptp(ref) > 1e-3  # scores that differ, kept

    stamp = path.stat().st_mtime_ns
    assert export_reranker(folder) == (path, 0.0) and path.stat().st_mtime_ns == stamp  # made once


def test_a_folder_the_export_cannot_check_is_left_as_it_was(mismatched_reranker):
    before = sorted(p.name for p in mismatched_reranker.iterdir())
    with pytest.raises(ExportError, match="broken-reranker: its ONNX export could not be made"):
        export_reranker(mismatched_reranker)
    assert sorted(p.name for p in mismatched_reranker.iterdir()) == before
    assert CrossEncoderReranker(mismatched_reranker, device="cpu").runtime.engine == "torch"


def test_kdesk_models_fetch_gives_a_downloaded_reranker_its_export(
    tiny_cross_encoder, fake_hub, tmp_path, capsys, monkeypatch
):
    """The whole path a user takes: `kdesk models fetch reranker` from a hub (a fake one on
    127.0.0.1), then `kdesk models` says the export runs it; a second fetch makes nothing again."""
    import hashlib
    import json

    from desktop_app.cli.main import main

    files = {p.name: p.read_bytes() for p in sorted(tiny_cross_encoder.iterdir()) if p.is_file()}
    hub = fake_hub("kdesk-test/tiny-reranker", files)
    entries = "".join(
        f'[[model.files]]\npath = "{name}"\nsize = {len(data)}\nsha256 = "{hashlib.sha256(data).hexdigest()}"\n'
        for name, data in files.items()
    )
    manifest = tmp_path / "manifest.toml"
    manifest.write_text(
        'schema = 1\n[[model]]\nid = "tiny-reranker"\nrole = "reranker"\nsource = "huggingface"\n'
        'repo_id = "kdesk-test/tiny-reranker"\nrevision = "main"\nfolder = "tiny-reranker"\n'
        f'license = "MIT"\n{entries}',
        encoding="utf-8",
    )
    from desktop_app.core.models import fetch as fetch_mod

    real_specs_for = fetch_mod.specs_for
    monkeypatch.setattr(fetch_mod, "specs_for", lambda target, _manifest=None: real_specs_for(target, manifest))
    dest = tmp_path / "models"
    args = ["--data-dir", str(tmp_path / "data"), "models", "fetch", "reranker", "--endpoint", hub.url]
    assert main([*args, "--dest", str(dest), "--json"]) == 0
    [result] = json.loads(capsys.readouterr().out)["fetched"]  # nothing but the JSON on stdout
    assert result["status"] == "installed"
    assert result["export"].startswith("ONNX export made: onnx/model.onnx, scores within")
    folder = dest / "tiny-reranker"
    assert (folder / "onnx" / "model.onnx").is_file()
    assert CrossEncoderReranker(folder, device="cpu").runtime.engine == "onnxruntime"
    assert main([*args, "--dest", str(dest)]) == 0
    out = capsys.readouterr().out
    assert "tiny-reranker: already installed" in out and "has its ONNX export" in out


def test_an_onnx_folder_of_something_else_is_kept_and_the_model_stays_on_torch(tiny_cross_encoder, tmp_path):
    folder = Path(shutil.copytree(tiny_cross_encoder, tmp_path / "tiny-reranker"))
    (folder / "onnx").mkdir()
    (folder / "onnx" / "notes.txt").write_text("the user's own file", encoding="utf-8")
    with pytest.raises(ExportError, match="tiny-reranker: its ONNX export could not be made"):
        export_reranker(folder)
    assert [p.name for p in (folder / "onnx").iterdir()] == ["notes.txt"]
    assert not list(folder.glob(".onnx*"))
    assert CrossEncoderReranker(folder, device="cpu").runtime.engine == "torch"

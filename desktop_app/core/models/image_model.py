"""The image role's decision: which image-text model (CLIP-like) serves the gallery and zero-shot
naming, and why. identify/image_text.py loads what it decides, and `kdesk models` reports it
(status.py), so what is reported is what runs."""

from __future__ import annotations

import json
from dataclasses import dataclass
from pathlib import Path

from desktop_app.core.config import Config
from desktop_app.core.messages import Text, message
from desktop_app.core.models import reasons
from desktop_app.core.models.registry import (
    Availability,
    ModelSpec,
    availability,
    load_manifest,
    spec_by_folder_or_id,
)
from desktop_app.core.paths import find_model, models_dirs

IMAGE_FALLBACK = message(reasons.IMAGE_FALLBACK)
# transformers dual encoders whose get_image_features and get_text_features share one space.
IMAGE_TEXT_TYPES = frozenset({"clip", "siglip", "siglip2", "chinese_clip", "altclip", "metaclip_2"})
_WEIGHTS = (
    "model.safetensors",
    "pytorch_model.bin",
    "model.safetensors.index.json",
    "pytorch_model.bin.index.json",
)


def is_image_text_folder(path: Path) -> bool:
    """A local transformers image-text model (CLIP-like): config.json of a known type, and weights."""
    try:
        config = json.loads((path / "config.json").read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return False
    return (
        isinstance(config, dict)
        and config.get("model_type") in IMAGE_TEXT_TYPES
        and any((path / w).is_file() for w in _WEIGHTS)
    )


@dataclass(frozen=True)
class ImageModelChoice:
    """Which image-text model serves the gallery and zero-shot naming, and why."""

    path: Path | None  # the folder to load; None: the bundled classifier's features
    model_id: str | None  # the manifest id; None for a local folder (or when path is None)
    reason: Text
    install_command: str | None = None  # what would install the missing model


def choose_image_model(
    setting: str, specs: list[ModelSpec], avails: list[Availability], data_dir: Path | None
) -> ImageModelChoice:
    """identify.image_model: "auto" (the first installed manifest model of role image), "none", or a
    manifest id / folder name / path of a CLIP-like transformers folder."""
    setting = setting.strip() or "auto"
    if setting.lower() in ("none", "off", "false"):
        why = message(reasons.IMAGE_DISABLED, setting=setting, fallback=IMAGE_FALLBACK)
        return ImageModelChoice(None, None, why)
    if setting.lower() == "auto":
        for a in avails:
            if a.installed and a.path:
                return ImageModelChoice(Path(a.path), a.id, 'identify.image_model = "auto"')
        fetch = avails[0].install_command if avails else None
        return ImageModelChoice(
            None, None, message(reasons.NO_IMAGE_MODEL, fallback=IMAGE_FALLBACK), fetch
        )
    spec = spec_by_folder_or_id(specs, setting)
    listed = next((a for a in avails if spec and a.id == spec.id), None)
    if listed and listed.installed and listed.path:
        return ImageModelChoice(Path(listed.path), listed.id, f'identify.image_model = "{setting}"')
    found = find_model(setting, data_dir)
    if found is not None and is_image_text_folder(found):  # named on purpose: used even if not as published
        why = (
            str(
                message(
                    reasons.WITH_WARNING, reason=f'identify.image_model = "{setting}"', problem=listed.reason
                )
            )
            if listed
            else message(reasons.IMAGE_NOT_LISTED, setting=setting)
        )
        return ImageModelChoice(found, None, why)
    if listed:
        why = str(
            message(reasons.IMAGE_MISSING, setting=setting, reason=listed.reason, fallback=IMAGE_FALLBACK)
        )
        return ImageModelChoice(None, None, why, listed.install_command)
    dirs = ", ".join(map(str, models_dirs(data_dir)))
    return ImageModelChoice(
        None,
        None,
        message(reasons.IMAGE_NOT_FOUND, setting=setting, dirs=dirs, fallback=IMAGE_FALLBACK),
    )


def resolve_image_model(
    cfg: Config, data_dir: Path | None = None, manifest: Path | None = None
) -> ImageModelChoice:
    """The image role's decision for these settings (what `kdesk models` reports and the app loads)."""
    specs = [s for s in load_manifest(manifest) if s.role == "image"]
    avails = [availability(s, data_dir) for s in specs]
    return choose_image_model(cfg.identify.image_model, specs, avails, data_dir)

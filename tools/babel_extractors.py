"""Babel extractors for texts that are not in Python source (babel.cfg's ``[extractors]``).

Run ``pybabel`` from the repository root as ``python -m babel.messages.frontend`` so ``tools`` imports.
"""

from __future__ import annotations

import tomllib
from collections.abc import Iterator
from typing import Any, BinaryIO


def extract_manifest(
    fileobj: BinaryIO, keywords: Any, comment_tags: Any, options: dict[str, Any]
) -> Iterator[tuple[int, None, str, list[str]]]:
    """models/manifest.toml: each model's description and licence note, which Settings › Models
    shows as tooltips in the window's language (a bare licence name, "MIT", is not a sentence)."""
    text = fileobj.read().decode("utf-8")
    lines = text.splitlines()
    for entry in tomllib.loads(text).get("model", []):
        for key in ("description", "license"):
            value = entry.get(key)
            if value and len(value.split()) >= 3:
                yield _line_of(lines, key, value), None, value, [f"models/manifest.toml: {key}"]


def _line_of(lines: list[str], key: str, value: str) -> int:
    for number, line in enumerate(lines, 1):
        if line.startswith(f"{key} =") and value[:20] in line:
            return number
    return 0

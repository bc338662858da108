"""The import contract (pyproject.toml [tool.importlinter], docs/architecture.md "Layers"): run by the
README's test command as well as by .ci/run, so a new upward import or cycle fails either."""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
import tomllib
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
LINT = "import sys; from importlinter.cli import lint_imports_command; sys.exit(lint_imports_command())"


def _lint(root: Path) -> subprocess.CompletedProcess[str]:
    """lint-imports on the package under ``root`` (this repository's contract), without its cache."""
    env = {**os.environ, "PYTHONPATH": str(root), "COLUMNS": "200"}  # report lines unwrapped
    return subprocess.run(
        [sys.executable, "-c", LINT, str(ROOT / "pyproject.toml"), "--no-cache"],
        cwd=root,
        env=env,
        capture_output=True,
        text=True,
        timeout=120,
    )


def test_the_package_keeps_its_import_contract():
    res = _lint(ROOT)
    assert res.returncode == 0, res.stdout + res.stderr
    assert "0 broken" in res.stdout


def test_the_contract_has_no_ignore_list_and_counts_type_checking_imports():
    config = tomllib.loads((ROOT / "pyproject.toml").read_text(encoding="utf-8"))["tool"]["importlinter"]
    assert "exclude_type_checking_imports" not in config
    contracts = config["contracts"]
    assert {c["type"] for c in contracts} >= {"layers", "acyclic_siblings"}
    assert all("ignore_imports" not in c for c in contracts)


def test_an_upward_import_under_type_checking_breaks_the_contract(tmp_path):
    # A copy of the package in which the library imports identification for a type hint only.
    package = tmp_path / "desktop_app"
    shutil.copytree(ROOT / "desktop_app", package, ignore=shutil.ignore_patterns("__pycache__"))
    folder = package / "core" / "library" / "folder.py"
    folder.write_text(
        folder.read_text(encoding="utf-8")
        + "\nfrom typing import TYPE_CHECKING\n\nif TYPE_CHECKING:\n"
        + "    from desktop_app.core.identify.result import IdentifyResult  # noqa: F401\n",
        encoding="utf-8",
    )
    res = _lint(tmp_path)
    assert res.returncode == 1, res.stdout + res.stderr
    assert "desktop_app.core.library.folder -> desktop_app.core.identify.result" in res.stdout

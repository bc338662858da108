"""Small real servers on 127.0.0.1 that misbehave on cue, shared by the reliability tests.

The embeddings server computes hashed bag-of-words vectors: fake semantics, but real HTTP, so the
client under test (retries, timeouts, batching) runs exactly as it would against Ollama or TEI. It also
gives the subprocess tests a cheap, deterministic embedder through the product's own config
(``embedding.model = "openai:hash"``) instead of a test-only hook in product code.
"""

from __future__ import annotations

import hashlib
import json
import re
import socket
import threading
import time
from collections.abc import Iterator
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

import pytest

HASH_DIM = 64


def hashed_bow(text: str, dim: int = HASH_DIM) -> list[float]:
    """Deterministic bag-of-words vector: shared words -> shared dimensions -> similar vectors."""
    vec = [0.0] * dim
    for tok in re.findall(r"\w+", text.lower()):
        h = int.from_bytes(hashlib.md5(tok.encode("utf-8")).digest()[:4], "little")
        vec[h % dim] += 1.0
    if not any(vec):
        vec[0] = 1.0
    return vec


@dataclass
class ServerScript:
    """What the server does next: a queue of faults consumed one per request, then normal answers."""

    # "500", "503", "429", "401", "404", "400", "drop", "badjson", "stall:<s>", "short"
    faults: list[str] = field(default_factory=list)
    requests: list[dict] = field(default_factory=list)
    headers: list = field(default_factory=list)  # each request's headers (case-insensitive lookup)
    times: list[float] = field(default_factory=list)  # when each request arrived (time.monotonic)
    lock: threading.Lock = field(default_factory=threading.Lock)
    delay: float = 0.0  # seconds added to every answer (widens kill windows in crash tests)
    keep_requests: bool = True

    def next_fault(self) -> str | None:
        with self.lock:
            return self.faults.pop(0) if self.faults else None


class _EmbeddingsHandler(BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"
    script: ServerScript  # set on the subclass per server

    def log_message(self, *args: object) -> None:  # keep test output quiet
        pass

    def _send(self, status: int, body: bytes, ctype: str = "application/json") -> None:
        self.send_response(status)
        self.send_header("Content-Type", ctype)
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)

    def do_POST(self) -> None:  # noqa: N802 - http.server's naming
        length = int(self.headers.get("Content-Length") or 0)
        raw = self.rfile.read(length)
        if not self.path.rstrip("/").endswith("/v1/embeddings"):
            self._send(404, b'{"error": "not found"}')
            return
        payload = json.loads(raw)
        if self.script.keep_requests:
            with self.script.lock:
                self.script.requests.append(payload)
                self.script.headers.append(self.headers)
                self.script.times.append(time.monotonic())
        if self.script.delay:
            time.sleep(self.script.delay)
        fault = self.script.next_fault()
        if fault == "drop":
            # Abort the connection without any response: the client sees a reset / remote close.
            self.connection.setsockopt(
                socket.SOL_SOCKET, socket.SO_LINGER, b"\x01\x00\x00\x00\x00\x00\x00\x00"
            )
            self.close_connection = True
            self.connection.close()
            return
        if fault and fault.startswith("stall:"):
            time.sleep(float(fault.split(":", 1)[1]))
        elif fault in ("500", "503", "429", "401", "404", "400"):
            self._send(int(fault), b'{"error": {"message": "scripted failure"}}')
            return
        elif fault == "badjson":
            self._send(200, b"<html>proxy error</html>", "text/html")
            return
        inputs = payload["input"]
        if isinstance(inputs, str):
            inputs = [inputs]
        if fault == "short":
            inputs = inputs[:-1]
        data = [{"object": "embedding", "index": i, "embedding": hashed_bow(t)} for i, t in enumerate(inputs)]
        data.reverse()  # legal per the spec; the client must sort by index
        body = json.dumps({"object": "list", "data": data, "model": payload.get("model")}).encode()
        self._send(200, body)


class EmbeddingsServer:
    """A threaded /v1/embeddings server on a free loopback port."""

    def __init__(self) -> None:
        self.script = ServerScript()
        handler = type("Handler", (_EmbeddingsHandler,), {"script": self.script})
        self.httpd = ThreadingHTTPServer(("127.0.0.1", 0), handler)
        self.httpd.daemon_threads = True
        # Clients killed mid-request (crash tests) reset the connection: expected, not worth a traceback.
        self.httpd.handle_error = lambda request, client_address: None
        self.port = self.httpd.server_address[1]
        self.url = f"http://127.0.0.1:{self.port}"
        self._thread = threading.Thread(target=self.httpd.serve_forever, args=(0.05,), daemon=True)

    def __enter__(self) -> EmbeddingsServer:
        self._thread.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self.httpd.shutdown()
        self.httpd.server_close()


@pytest.fixture
def embeddings_server() -> Iterator[EmbeddingsServer]:
    with EmbeddingsServer() as server:
        yield server


@pytest.fixture(scope="session")
def shared_embeddings_server() -> Iterator[EmbeddingsServer]:
    """One fault-free server for the subprocess tests that only need cheap vectors."""
    with EmbeddingsServer() as server:
        server.script.keep_requests = False  # long sessions: do not grow without bound
        yield server


@pytest.fixture
def free_port() -> int:
    """A loopback port that was free a moment ago (for servers started as subprocesses)."""
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


# -- generated inputs ------------------------------------------------------------------------------


def _pdf_escape(s: str) -> bytes:
    return s.replace("\\", "\\\\").replace("(", "\\(").replace(")", "\\)").encode("latin-1", "replace")


def write_text_pdf(path, pages: list[list[str]]) -> None:
    """A minimal valid PDF with one text content stream per page (Helvetica, WinAnsi): enough for a
    real text layer that pypdf extracts, without a PDF library."""
    objects: list[bytes] = []  # object i+1

    def add(body: bytes) -> int:
        objects.append(body)
        return len(objects)

    catalog = add(b"")  # filled in below
    pages_id = add(b"")
    font = add(b"<< /Type /Font /Subtype /Type1 /BaseFont /Helvetica /Encoding /WinAnsiEncoding >>")
    kids = []
    for lines in pages:
        ops = [b"BT /F1 11 Tf 14 TL 50 790 Td"]
        for line in lines:
            ops.append(b"(" + _pdf_escape(line) + b") Tj T*")
        ops.append(b"ET")
        stream = b"\n".join(ops)
        content = add(b"<< /Length %d >>\nstream\n" % len(stream) + stream + b"\nendstream")
        kids.append(
            add(
                b"<< /Type /Page /Parent %d 0 R /MediaBox [0 0 595 842] /Resources << /Font << /F1 %d 0 R >> >> "
                b"/Contents %d 0 R >>" % (pages_id, font, content)
            )
        )
    objects[catalog - 1] = b"<< /Type /Catalog /Pages %d 0 R >>" % pages_id
    objects[pages_id - 1] = b"<< /Type /Pages /Kids [%s] /Count %d >>" % (
        b" ".join(b"%d 0 R" % k for k in kids),
        len(kids),
    )
    out = bytearray(b"%PDF-1.4\n%\xe2\xe3\xcf\xd3\n")
    offsets = []
    for i, body in enumerate(objects, 1):
        offsets.append(len(out))
        out += b"%d 0 obj\n" % i + body + b"\nendobj\n"
    xref = len(out)
    out += b"xref\n0 %d\n0000000000 65535 f \n" % (len(objects) + 1)
    out += b"".join(b"%010d 00000 n \n" % off for off in offsets)
    out += b"trailer\n<< /Size %d /Root %d 0 R >>\nstartxref\n%d\n%%%%EOF\n" % (
        len(objects) + 1,
        catalog,
        xref,
    )
    path.write_bytes(bytes(out))


# Twenty documents of many kinds (a recipe, a leaflet, a manual, a policy, a paper...) in English and
# Chinese, one question each: the damage and kill tests compare their top-10 sources before and after.
TWENTY_DOCS = {
    "recipes/dumplings.md": "# Pork dumplings\nMix minced pork, cabbage and ginger. Fold the filling into wrappers and steam for twelve minutes.",
    "recipes/番茄炒蛋.md": "# 番茄炒蛋\n鸡蛋打散后先炒至凝固盛出，再炒番茄出汁，最后倒回鸡蛋，加少许糖和盐。",
    "leaflets/ibuprofen.txt": "Ibuprofen 200 mg tablets. Adults take one or two tablets every four to six hours. Do not exceed six tablets in 24 hours. Take with food.",
    "leaflets/阿莫西林.txt": "阿莫西林胶囊用于敏感细菌引起的感染。对青霉素过敏者禁用。成人每次一粒，每日三次。",
    "manuals/kettle.md": "# Kettle manual\nDescale the kettle every month with white vinegar. Never fill above the MAX mark. The lid opens with the button on the handle.",
    "manuals/router.md": "# Router setup\nHold the reset button for ten seconds to restore factory settings. The default Wi-Fi password is printed on the label underneath.",
    "policies/leave.md": "# Annual leave policy\nEmployees receive twenty days of paid annual leave. Unused leave of up to five days carries over to the next year.",
    "policies/报销制度.md": "# 差旅报销制度\n出差住宿标准为每晚不超过五百元。报销须在出差结束后三十天内提交，并附发票原件。",
    "papers/sleep.md": "# Sleep and memory\nIn a study of 120 students, a night of sleep after learning improved recall by 20 percent compared with staying awake.",
    "papers/soil.md": "# Soil carbon\nCover crops raised soil organic carbon by 0.3 percent over five years in the trial plots of clay loam.",
    "garden/tomatoes.md": "# Growing tomatoes\nPlant tomatoes after the last frost, two feet apart, in full sun. Water deeply twice a week and pinch out side shoots.",
    "garden/月季.md": "# 月季养护\n月季喜阳光，每天至少六小时日照。春季修剪枯枝，开花期每两周施一次磷钾肥。",
    "travel/kyoto.md": "# Kyoto in autumn\nThe maple leaves peak in mid November. Buy a one-day bus pass for 700 yen to reach the temples.",
    "travel/成都.md": "# 成都三日游\n第一天去大熊猫繁育研究基地，最好早上八点前到。第二天逛宽窄巷子，晚上吃火锅。",
    "finance/budget.md": "# Household budget\nSave fifteen percent of take-home pay. Keep an emergency fund of three months of expenses in a savings account.",
    "history/silk-road.md": "# The Silk Road\nThe Han dynasty envoy Zhang Qian travelled west in 138 BC, opening routes that carried silk to Central Asia.",
    "pets/rabbit.md": "# Rabbit care\nRabbits need unlimited hay, fresh greens daily and a large run. Their teeth grow all their life.",
    "sports/badminton.md": "# Badminton rules\nA game is played to 21 points; at 20 all, a side must lead by two. The shuttle landing on the line is in.",
    "car/tyres.md": "# Tyre care\nCheck tyre pressure monthly when the tyres are cold. Replace tyres when the tread depth falls below 1.6 mm.",
    "tea/oolong.md": "# Brewing oolong\nRinse the leaves once, then steep at 95 degrees for about one minute, adding ten seconds for each later infusion.",
}
TWENTY_QUESTIONS = [
    "how long do I steam the dumplings",
    "番茄炒蛋先炒什么",
    "maximum ibuprofen tablets a day",
    "青霉素过敏能吃阿莫西林吗",
    "how do I descale the kettle",
    "router factory reset",
    "how many days of annual leave carry over",
    "出差住宿标准是多少",
    "does sleep improve recall",
    "cover crops soil organic carbon",
    "how far apart should tomatoes be planted",
    "月季需要多少日照",
    "when do the Kyoto maple leaves peak",
    "成都大熊猫基地几点到",
    "how big should an emergency fund be",
    "who was Zhang Qian",
    "what do rabbits eat",
    "badminton score at 20 all",
    "minimum tyre tread depth",
    "oolong steeping temperature",
]

@pytest.fixture(scope="session")
def twenty() -> tuple[dict[str, str], list[str]]:
    """TWENTY_DOCS and TWENTY_QUESTIONS."""
    return TWENTY_DOCS, TWENTY_QUESTIONS


# -- the real CLI in a subprocess --------------------------------------------------------------------


@dataclass
class RunResult:
    rc: int
    stdout: str
    stderr: str
    seconds: float
    max_rss_mb: float  # peak resident memory of the kdesk process itself (wait4 rusage)

    def json(self) -> dict:
        return json.loads(self.stdout)


class Kdesk:
    """`python -m desktop_app.cli.main --data-dir DIR ...` with a config the test controls."""

    def __init__(self, data_dir, embeddings_url: str, **config: dict) -> None:
        import tomli_w

        self.data_dir = data_dir
        data_dir.mkdir(parents=True, exist_ok=True)
        cfg: dict = {"embedding": {"model": "openai:hash", "url": embeddings_url}}
        for section, values in config.items():
            cfg.setdefault(section, {}).update(values)
        (data_dir / "config.toml").write_text(tomli_w.dumps(cfg), encoding="utf-8")

    def argv(self, *args: str) -> list[str]:
        import sys

        return [sys.executable, "-m", "desktop_app.cli.main", "--data-dir", str(self.data_dir), *args]

    def popen(self, *args: str, **kw):
        import os
        import subprocess

        env = dict(os.environ, HF_HUB_OFFLINE="1", TRANSFORMERS_OFFLINE="1", ANONYMIZED_TELEMETRY="False")
        return subprocess.Popen(
            self.argv(*args), stdout=subprocess.PIPE, stderr=subprocess.PIPE, env=env, text=True, **kw
        )

    def run(self, *args: str, timeout: float = 600) -> RunResult:
        """Run to completion; measure the child's own peak RSS (not the test process's)."""
        import os
        import tempfile

        t0 = time.monotonic()
        with tempfile.TemporaryFile("w+") as out, tempfile.TemporaryFile("w+") as err:
            import subprocess

            env = dict(os.environ, HF_HUB_OFFLINE="1", TRANSFORMERS_OFFLINE="1", ANONYMIZED_TELEMETRY="False")
            p = subprocess.Popen(self.argv(*args), stdout=out, stderr=err, env=env, text=True)
            timer = threading.Timer(timeout, p.kill)
            timer.start()
            # ru_maxrss from wait4 is polluted on Linux: exec keeps the forking parent's (this test
            # session's, torch loaded) high-water mark. The child's own VmHWM is exact; poll it.
            hwm = [0]
            done = threading.Event()

            def poll() -> None:
                while not done.is_set():
                    try:
                        with open(f"/proc/{p.pid}/status") as f:
                            for line in f:
                                if line.startswith("VmHWM:"):
                                    hwm[0] = max(hwm[0], int(line.split()[1]))
                    except (OSError, ValueError):
                        pass
                    done.wait(0.05)

            poller = threading.Thread(target=poll, daemon=True)
            poller.start()
            try:
                _, status, usage = os.wait4(p.pid, 0)
            finally:
                timer.cancel()
                done.set()
                poller.join()
            p.returncode = os.waitstatus_to_exitcode(status)
            out.seek(0)
            err.seek(0)
            return RunResult(
                rc=p.returncode,
                stdout=out.read(),
                stderr=err.read(),
                seconds=time.monotonic() - t0,
                max_rss_mb=(hwm[0] or usage.ru_maxrss) / 1024,  # kilobytes
            )


@pytest.fixture
def kdesk_factory(tmp_path, shared_embeddings_server):
    """Make a Kdesk over a fresh data dir; extra config sections as keyword dicts."""

    def make(name: str = "data", **config: dict) -> Kdesk:
        return Kdesk(tmp_path / name, shared_embeddings_server.url, **config)

    return make


@pytest.fixture
def make_pdf():
    """write_text_pdf(path, pages: list[list[str]]) as a fixture."""
    return write_text_pdf


@pytest.fixture(scope="module")
def slow_embeddings_server() -> Iterator[EmbeddingsServer]:
    """A server that takes 50 ms per request: indexing lasts long enough to be killed mid-batch."""
    with EmbeddingsServer() as server:
        server.script.keep_requests = False
        server.script.delay = 0.05
        yield server


@pytest.fixture(scope="session")
def kdesk_cls() -> type[Kdesk]:
    return Kdesk

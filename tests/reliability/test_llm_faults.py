"""LLM faults end to end: a real knowledge base, the real `kdesk ask` and Assistant, and a scripted
/v1/chat/completions server on 127.0.0.1 that fails on cue (real servers cannot be made to).

Each fault must end in a fallback or a clear message within the configured timeout, and the same
conversation must keep working afterwards. (Unit-level fault tests of the client itself are in
tests/unit/test_llm_openai.py; this file checks the whole path a user runs.)
"""

from __future__ import annotations

import json
import socket
import struct
import threading
import time
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

import pytest

from desktop_app.core.ask.assistant import Assistant, Conversation
from desktop_app.core.config import load_config
from desktop_app.core.events import Answer, RouteDecided, Warning
from desktop_app.core.library.knowledge import KnowledgeBase
from desktop_app.core.models.llm.openai_compat import OpenAIChatModel

TIMEOUT = 2.0  # llm.timeout and router.timeout for every test here
ROUTE = json.dumps({"is_followup": False, "use_rag": True, "search_query": "African grey parrot diet"})
DOCS = {
    "grey.md": "# African grey\nAfrican grey parrots eat palm nuts, seeds, fruit and snails in the wild.\n",
    "macaw.md": "# Scarlet macaw\nThe scarlet macaw lives in humid forests of South America and eats clay.\n",
    "budgie.md": "# Budgerigar\nBudgerigars come from Australia and eat grass seeds.\n",
}
FAULTS = ["down", "reset", "stall", "http500", "router_garbage", "cites_9"]


class ScriptedLLM:
    """Router requests (they carry response_format or the routing prompt) and answer requests are
    scripted separately: `mode` picks the fault for the next questions."""

    def __init__(self) -> None:
        self.mode = "ok"
        self.release = threading.Event()
        llm = self

        class Handler(BaseHTTPRequestHandler):
            protocol_version = "HTTP/1.1"

            def log_message(self, *args) -> None:
                pass

            def _sse(self, pieces: list[str], done: bool = True) -> None:
                self.send_response(200)
                self.send_header("Content-Type", "text/event-stream")
                self.send_header("Connection", "close")
                self.end_headers()
                for p in pieces:
                    chunk = {"choices": [{"index": 0, "delta": {"content": p}, "finish_reason": None}]}
                    self.wfile.write(b"data: " + json.dumps(chunk).encode() + b"\n\n")
                    self.wfile.flush()
                if done:
                    self.wfile.write(b"data: [DONE]\n\n")
                self.close_connection = True

            def do_POST(self) -> None:  # noqa: N802
                body = json.loads(self.rfile.read(int(self.headers.get("Content-Length", 0))) or b"{}")
                if not self.path.endswith("/chat/completions"):  # e.g. llama.cpp's /tokenize: not here
                    self.send_response(404)
                    self.send_header("Content-Length", "0")
                    self.end_headers()
                    return
                first = body.get("messages", [{}])[0].get("content", "")
                router = "response_format" in body or "route" in first.lower()
                mode = llm.mode
                if mode == "http500":
                    data = b'{"error": {"code": 500, "message": "CUDA out of memory"}}'
                    self.send_response(500)
                    self.send_header("Content-Type", "application/json")
                    self.send_header("Content-Length", str(len(data)))
                    self.end_headers()
                    self.wfile.write(data)
                    return
                if router:
                    if mode == "router_garbage":
                        self._sse(["Sure! I'd say use_rag is probably {yes"])
                    else:
                        self._sse([ROUTE])
                    return
                if mode == "reset":
                    self._sse(["African grey parrots eat "], done=False)
                    self.connection.setsockopt(socket.SOL_SOCKET, socket.SO_LINGER, struct.pack("ii", 1, 0))
                    self.connection.close()
                elif mode == "stall":
                    self._sse(["African grey parrots "], done=False)
                    llm.release.wait(30)  # the 30 s stall; the client must give up after TIMEOUT
                elif mode == "cites_9":
                    self._sse(["They eat palm nuts [1] and snails [9]."])
                else:
                    self._sse(["They eat palm nuts, seeds and fruit [1]."])

        self.httpd = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.httpd.daemon_threads = True
        self.httpd.handle_error = lambda request, client_address: None
        self.url = f"http://127.0.0.1:{self.httpd.server_address[1]}/v1"
        threading.Thread(target=self.httpd.serve_forever, args=(0.05,), daemon=True).start()

    def close(self) -> None:
        self.release.set()
        self.httpd.shutdown()
        self.httpd.server_close()


@pytest.fixture(scope="module")
def llm_server():
    srv = ScriptedLLM()
    yield srv
    srv.close()


@pytest.fixture(scope="module")
def indexed(tmp_path_factory, kdesk_cls, shared_embeddings_server):
    src = tmp_path_factory.mktemp("llmdocs")
    for name, text in DOCS.items():
        (src / name).write_text(text, encoding="utf-8")
    kd = kdesk_cls(
        tmp_path_factory.mktemp("llm") / "data",
        shared_embeddings_server.url,
        llm={"backend": "openai", "model": "scripted", "timeout": TIMEOUT, "connect_timeout": 1.0},
        router={"timeout": TIMEOUT},
    )
    res = kd.run("add", *(str(src / n) for n in DOCS), "--json", timeout=300)
    assert res.rc == 0 and len(res.json()["added"]) == 3, res.stderr[-2000:]
    return kd


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def _expect(fault: str, out: dict) -> None:
    warnings = " | ".join(out["warnings"])
    if fault in ("down", "reset", "stall", "http500"):
        assert out["answer_by"] == "extractive", out
        assert "showing the most relevant passages" in warnings
        assert out["citations"] and out["citations"][0]["source"] in DOCS
    if fault == "down":
        assert out["route"]["by"] == "heuristic"
    if fault == "http500":
        assert "500" in warnings or "out of memory" in warnings.lower()
    if fault == "router_garbage":
        assert out["route"]["by"] == "heuristic" and out["answer_by"] == "llm"
    if fault == "cites_9":
        assert "[9]" in warnings and "3 source block" in warnings
        assert [c["n"] for c in out["citations"]] == [1] and "[9]" not in out["answer"]


@pytest.mark.parametrize("fault", FAULTS)
def test_kdesk_ask_survives_llm_fault_within_the_timeout(fault, indexed, llm_server):
    llm_server.mode = "ok" if fault == "down" else fault
    url = f"http://127.0.0.1:{_free_port()}/v1" if fault == "down" else llm_server.url
    res = indexed.run("ask", "What do African grey parrots eat?", "--llm-url", url, "--json", timeout=120)
    assert res.rc == 0, res.stderr[-2000:]
    assert "Traceback" not in res.stderr
    out = res.json()
    assert out["answer"].strip()
    _expect(fault, out)
    # The router and the answer each get at most TIMEOUT (plus slack for a busy CI box). The search in
    # between is not the LLM's time: a cold process loads the index first.
    t = out["timing"]
    llm_ms = t["route_ms"] + t["answer_ms"] - max(t["route_ms"], t.get("retrieved_ms", 0))
    assert t["route_ms"] < (TIMEOUT + 2) * 1000, t
    assert llm_ms < (2 * TIMEOUT + 3) * 1000, t
    print(
        f"\n{fault}: {llm_ms:.0f} ms in the LLM path, answer by {out['answer_by']}; warnings: {out['warnings']}"
    )


def test_one_conversation_survives_every_fault_in_a_row(indexed, llm_server, shared_embeddings_server):
    """The GUI's case: one long-lived Assistant and Conversation, faults one after another, then a
    healthy server again. Every question gets an answer in time; the history keeps every turn."""
    cfg = load_config(indexed.data_dir / "config.toml")
    cfg.embedding.url = shared_embeddings_server.url
    down = OpenAIChatModel.from_config(
        type(cfg.llm)(**{**cfg.llm.__dict__, "url": f"http://127.0.0.1:{_free_port()}/v1"})
    )
    up = OpenAIChatModel.from_config(type(cfg.llm)(**{**cfg.llm.__dict__, "url": llm_server.url}))
    with KnowledgeBase(indexed.data_dir, config=cfg) as kb:
        assert kb.search("warm up the index")  # load once, so the timings below are the LLM's
        conv = Conversation()
        for i, fault in enumerate([*FAULTS, "ok"]):
            llm_server.mode = "ok" if fault == "down" else fault
            assistant = Assistant(kb, down if fault == "down" else up, cfg)
            t0 = time.monotonic()
            events = list(assistant.ask(f"What do African grey parrots eat? ({i})", conv))
            took = time.monotonic() - t0
            answers = [e for e in events if isinstance(e, Answer)]
            assert len(answers) == 1 and answers[0].text.strip(), (fault, events)
            assert took < 2 * TIMEOUT + 3, (fault, took)
            assert any(isinstance(e, RouteDecided) for e in events)
            if fault in ("down", "reset", "stall", "http500"):
                assert answers[0].by == "extractive"
                assert any(isinstance(e, Warning) for e in events)
        assert answers[0].by == "llm" and [c.n for c in answers[0].citations] == [1]
        assert answers[0].citations[0].source == "grey.md"
        assert len(conv.history) == 2 * (len(FAULTS) + 1)
    down.close()
    up.close()

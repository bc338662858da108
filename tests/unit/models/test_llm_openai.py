"""The OpenAI-compatible client and the Assistant under faults a real server will not produce on
demand: a stall, a reset mid-stream, HTTP 500, garbage in the stream, a refused response_format.
A scripted stdlib HTTP server on 127.0.0.1 plays each one; the real llama.cpp server is covered
in tests/integration/test_llama_server.py."""

from __future__ import annotations

import json
import os
import socket
import struct
import subprocess
import sys
import threading
import time
from collections.abc import Callable
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path

import pytest

from desktop_app.core.ask.assistant import Assistant, Conversation
from desktop_app.core.ask.prompts import SEARCH_TOOL
from desktop_app.core.config import Config
from desktop_app.core.events import Answer, RouteDecided, Token, Warning
from desktop_app.core.library.documents import Hit
from desktop_app.core.models.llm.base import LLMError
from desktop_app.core.models.llm.openai_compat import OpenAIChatModel, normalize_base_url
from desktop_app.core.tasks import Cancelled, SimpleTask

Script = Callable[[dict], tuple]  # request body -> (action, payload)


def sse(pieces: list[str]) -> bytes:
    out = b""
    for p in pieces:
        chunk = {"choices": [{"index": 0, "delta": {"content": p}, "finish_reason": None}]}
        out += b"data: " + json.dumps(chunk).encode() + b"\n\n"
    return out


class FakeLLM:
    """A scripted /v1/chat/completions: each request's body picks what the server does."""

    def __init__(self, script: Script) -> None:
        self.script = script
        self.requests: list[dict] = []
        self.headers: list = []  # each request's headers (case-insensitive lookup)
        self.paths: list[str] = []
        self.release = threading.Event()  # ends stalls when the test is done
        fake = self

        class Handler(BaseHTTPRequestHandler):
            protocol_version = "HTTP/1.1"

            def log_message(self, *args) -> None:
                pass

            def do_POST(self) -> None:
                body = json.loads(self.rfile.read(int(self.headers.get("Content-Length", 0))) or b"{}")
                fake.requests.append(body)
                fake.headers.append(self.headers)
                fake.paths.append(self.path)
                action, payload = fake.script(body)
                if action == "json":
                    data = json.dumps(payload).encode()
                    self.send_response(200)
                    self.send_header("Content-Type", "application/json")
                    self.send_header("Content-Length", str(len(data)))
                    self.end_headers()
                    self.wfile.write(data)
                    return
                if action == "status":
                    code, message = payload
                    data = json.dumps({"error": {"code": code, "message": message}}).encode()
                    self.send_response(code)
                    self.send_header("Content-Type", "application/json")
                    self.send_header("Content-Length", str(len(data)))
                    self.end_headers()
                    self.wfile.write(data)
                    return
                self.send_response(200)
                self.send_header("Content-Type", "text/event-stream")
                self.send_header("Connection", "close")
                self.end_headers()
                if action == "stream":
                    self.wfile.write(sse(payload) + b"data: [DONE]\n\n")
                elif action == "garbage":
                    self.wfile.write(sse(payload) + b"data: {this is not json\n\n")
                elif action == "error_event":
                    error = {"error": {"message": "context length exceeded", "type": "server_error"}}
                    self.wfile.write(sse(payload) + b"data: " + json.dumps(error).encode() + b"\n\n")
                elif action == "stall":
                    self.wfile.write(sse(payload))
                    self.wfile.flush()
                    fake.release.wait(30)
                elif action == "reset":
                    self.wfile.write(sse(payload))
                    self.wfile.flush()
                    # SO_LINGER 0: close with a TCP reset, as a crashed server would
                    self.connection.setsockopt(socket.SOL_SOCKET, socket.SO_LINGER, struct.pack("ii", 1, 0))
                    self.connection.close()
                self.close_connection = True

        self.server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.server.daemon_threads = True
        self.url = f"http://127.0.0.1:{self.server.server_address[1]}/v1"
        threading.Thread(target=self.server.serve_forever, daemon=True).start()

    def close(self) -> None:
        self.release.set()
        self.server.shutdown()
        self.server.server_close()


@pytest.fixture
def fake_llm():
    servers: list[FakeLLM] = []

    def start(script: Script) -> FakeLLM:
        servers.append(FakeLLM(script))
        return servers[-1]

    yield start
    for s in servers:
        s.close()


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def hits() -> list[Hit]:
    return [
        Hit(
            "a-chunk-0",
            "a",
            "African grey parrots eat palm nuts, seeds and fruit. They also eat snails.",
            "parrots.md",
            None,
            0,
            2,
            0.8,
            vector_score=0.8,
        ),
        Hit(
            "b-chunk-0",
            "b",
            "The scarlet macaw lives in humid forests of South America.",
            "macaw.pdf",
            3,
            0,
            1,
            0.6,
            vector_score=0.6,
        ),
        Hit(
            "c-chunk-0",
            "c",
            "Budgerigars come from Australia and eat grass seeds.",
            "budgie.md",
            None,
            0,
            1,
            0.5,
            vector_score=0.5,
        ),
    ]


class FakeKB:
    def __init__(self) -> None:
        self.config = Config()
        self.queries: list[str] = []

    def search(self, query: str, top_k: int | None = None, scope: str | None = None) -> list[Hit]:
        self.queries.append(query)
        return hits()

    def is_empty(self) -> bool:
        return False


ROUTE_JSON = json.dumps({"is_followup": False, "use_rag": True, "search_query": "African grey parrot diet"})


def is_router(body: dict) -> bool:
    return "response_format" in body or "route" in body["messages"][0]["content"]


# ---------------------------------------------------------------------------- client
def test_normalize_base_url_adds_v1_only_when_there_is_no_path():
    assert normalize_base_url("http://127.0.0.1:8080") == "http://127.0.0.1:8080/v1"
    assert normalize_base_url("127.0.0.1:11434/v1/") == "http://127.0.0.1:11434/v1"
    assert normalize_base_url("http://h/api/v1/chat/completions") == "http://h/api/v1"


def test_stream_yields_pieces_in_order(fake_llm):
    srv = fake_llm(lambda body: ("stream", ["Par", "rots", " talk."]))
    model = OpenAIChatModel(srv.url, "m", timeout=5)
    assert list(model.stream([{"role": "user", "content": "hi"}])) == ["Par", "rots", " talk."]
    assert srv.requests[0]["stream"] is True and srv.requests[0]["model"] == "m"


def test_server_down_is_a_readable_unreachable_error():
    model = OpenAIChatModel(f"http://127.0.0.1:{free_port()}/v1", timeout=5, connect_timeout=1)
    t0 = time.monotonic()
    with pytest.raises(LLMError) as err:
        list(model.stream([{"role": "user", "content": "hi"}]))
    assert err.value.kind == "unreachable" and "cannot reach the language model" in str(err.value)
    assert time.monotonic() - t0 < 3


def test_stall_after_first_token_ends_within_the_configured_timeout(fake_llm):
    srv = fake_llm(lambda body: ("stall", ["Parrots"]))
    model = OpenAIChatModel(srv.url, timeout=1.0)
    got: list[str] = []
    t0 = time.monotonic()
    with pytest.raises(LLMError) as err:
        for piece in model.stream([{"role": "user", "content": "hi"}]):
            got.append(piece)
    assert got == ["Parrots"]
    assert err.value.kind == "timeout" and "within 1 s" in str(err.value)
    assert time.monotonic() - t0 < 2.0


def test_cancel_stops_a_stalled_stream_promptly(fake_llm):
    srv = fake_llm(lambda body: ("stall", ["a"]))
    model = OpenAIChatModel(srv.url, timeout=30)
    task = SimpleTask()
    threading.Timer(0.3, task.cancel).start()
    t0 = time.monotonic()
    with pytest.raises(Cancelled):
        list(model.stream([{"role": "user", "content": "hi"}], cancel=task))
    assert time.monotonic() - t0 < 1.5


def test_http_500_is_reported_with_the_servers_message(fake_llm):
    srv = fake_llm(lambda body: ("status", (500, "model crashed: out of memory")))
    model = OpenAIChatModel(srv.url, timeout=5)
    with pytest.raises(LLMError, match="HTTP 500: model crashed: out of memory") as err:
        list(model.stream([{"role": "user", "content": "hi"}]))
    assert err.value.kind == "http"


def test_connection_reset_mid_stream_is_a_protocol_error(fake_llm):
    srv = fake_llm(lambda body: ("reset", ["Parrots eat"]))
    model = OpenAIChatModel(srv.url, timeout=5)
    got: list[str] = []
    with pytest.raises(LLMError, match="lost mid-answer") as err:
        for piece in model.stream([{"role": "user", "content": "hi"}]):
            got.append(piece)
    assert got == ["Parrots eat"] and err.value.kind == "protocol"


def test_garbage_in_the_stream_is_a_protocol_error(fake_llm):
    srv = fake_llm(lambda body: ("garbage", ["ok"]))
    model = OpenAIChatModel(srv.url, timeout=5)
    with pytest.raises(LLMError, match="garbled stream"):
        list(model.stream([{"role": "user", "content": "hi"}]))


def test_refused_json_schema_falls_back_to_json_object_then_plain_text(fake_llm):
    def script(body: dict) -> tuple:
        fmt = (body.get("response_format") or {}).get("type")
        if fmt in ("json_schema", "json_object"):
            return "status", (400, f"response_format {fmt} not supported")
        return "stream", ['{"ok": true}']

    srv = fake_llm(script)
    model = OpenAIChatModel(srv.url, timeout=5)
    schema = {"type": "object", "properties": {"ok": {"type": "boolean"}}}
    assert "".join(model.stream([{"role": "user", "content": "x"}], json_schema=schema)) == '{"ok": true}'
    assert [(r.get("response_format") or {}).get("type") for r in srv.requests] == [
        "json_schema",
        "json_object",
        None,
    ]
    assert model.structured == "text"  # remembered: the next call asks for plain text at once
    list(model.stream([{"role": "user", "content": "x"}], json_schema=schema))
    assert len(srv.requests) == 4 and "response_format" not in srv.requests[3]


def test_an_error_event_inside_the_stream_is_reported_with_the_servers_words(fake_llm):
    srv = fake_llm(lambda body: ("error_event", ["Parrots"]))
    model = OpenAIChatModel(srv.url, timeout=5)
    got: list[str] = []
    with pytest.raises(LLMError, match="error mid-answer: context length exceeded") as err:
        for piece in model.stream([{"role": "user", "content": "hi"}]):
            got.append(piece)
    assert got == ["Parrots"] and err.value.kind == "http"


def test_a_server_that_ignores_stream_true_is_read_as_one_reply(fake_llm):
    srv = fake_llm(lambda body: _message({"content": "Parrots talk."}))
    model = OpenAIChatModel(srv.url, timeout=5)
    assert list(model.stream([{"role": "user", "content": "hi"}])) == ["Parrots talk."]


def test_a_refused_key_is_an_http_error_not_a_format_to_downgrade(fake_llm):
    srv = fake_llm(lambda body: ("status", (401, "invalid api key")))
    model = OpenAIChatModel(srv.url, "m", "sk-wrong", timeout=5)
    with pytest.raises(LLMError, match="HTTP 401: invalid api key") as err:
        list(model.stream([{"role": "user", "content": "x"}], json_schema={"type": "object"}))
    assert err.value.kind == "http" and len(srv.requests) == 1 and model.structured == "json_schema"


def test_the_api_key_is_sent_as_a_bearer_token_and_no_key_sends_no_header(fake_llm):
    srv = fake_llm(lambda body: ("stream", ["ok"]))
    list(OpenAIChatModel(srv.url, "m", "sk-test-123", timeout=5).stream([{"role": "user", "content": "x"}]))
    list(OpenAIChatModel(srv.url, "m", timeout=5).stream([{"role": "user", "content": "x"}]))
    assert srv.headers[0]["Authorization"] == "Bearer sk-test-123"
    assert srv.headers[1]["Authorization"] is None


def test_count_tokens_asks_the_servers_tokenize_and_stops_asking_where_there_is_none(fake_llm):
    srv = fake_llm(lambda body: ("json", {"tokens": [1, 2, 3]}))
    model = OpenAIChatModel(srv.url.removesuffix("/v1"), timeout=5)
    assert model.count_tokens("grey parrots") == 3
    assert srv.paths == ["/tokenize"] and srv.requests == [{"content": "grey parrots"}]
    other = fake_llm(lambda body: ("status", (404, "no such endpoint")))
    model = OpenAIChatModel(other.url, timeout=5)
    assert model.count_tokens("x") is None and model.count_tokens("y") is None
    assert len(other.requests) == 1  # remembered: a server without /tokenize is not asked again


def test_importing_the_clients_does_not_import_the_openai_package():
    """`kdesk --help` and the window's start import these modules; `openai` (~1 s of CPU with its
    client's set-up) is imported in the background once a client is built."""
    code = (
        "import sys\n"
        "from desktop_app.core.models.llm.openai_compat import OpenAIChatModel\n"
        "from desktop_app.core.models.embeddings.openai_compat import OpenAICompatEmbedder\n"
        "print('openai' in sys.modules)\n"
        "import time\n"
        "OpenAIChatModel('http://127.0.0.1:9', 'm'); OpenAICompatEmbedder('m', 'http://127.0.0.1:9')\n"
        "t0 = time.monotonic()\n"
        "while 'openai._client' not in sys.modules and time.monotonic() - t0 < 60: time.sleep(0.05)\n"
        "print('openai._client' in sys.modules)\n"
    )
    root = Path(__file__).resolve().parents[3]
    env = {**os.environ, "PYTHONPATH": str(root)}
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, env=env, timeout=90)
    assert out.returncode == 0, out.stderr
    assert out.stdout.split() == ["False", "True"]


def _message(msg: dict) -> tuple:
    return "json", {"choices": [{"index": 0, "message": {"role": "assistant", **msg}}]}


def test_chat_reads_native_tool_calls(fake_llm):
    call = {
        "id": "c9",
        "type": "function",
        "function": {"name": "search_knowledge", "arguments": '{"query": "macaw"}'},
    }
    srv = fake_llm(lambda body: _message({"content": None, "tool_calls": [call]}))
    turn = OpenAIChatModel(srv.url, timeout=5).chat([{"role": "user", "content": "x"}], [SEARCH_TOOL])
    assert [(c.id, c.name, c.arguments) for c in turn.tool_calls] == [
        ("c9", "search_knowledge", {"query": "macaw"})
    ]
    assert srv.requests[0]["tools"] == [SEARCH_TOOL] and "stream" not in srv.requests[0]


def test_chat_reads_a_tool_call_written_as_text(fake_llm):
    # Qwen2.5-Coder-0.5B behind llama.cpp does this: the call arrives as the message's content.
    text = '{"name": "search_knowledge", "arguments": {"query": " African grey parrots eat"}}'
    srv = fake_llm(lambda body: _message({"content": text}))
    turn = OpenAIChatModel(srv.url, timeout=5).chat([{"role": "user", "content": "x"}], [SEARCH_TOOL])
    assert turn.content == "" and turn.tool_calls[0].arguments == {"query": " African grey parrots eat"}
    srv2 = fake_llm(lambda body: _message({"content": 'Use {"name": "other_tool"} next time.'}))
    turn = OpenAIChatModel(srv2.url, timeout=5).chat([{"role": "user", "content": "x"}], [SEARCH_TOOL])
    assert turn.tool_calls == [] and turn.content.startswith("Use")


# ---------------------------------------------------------------------------- assistant under faults
def make_assistant(url: str, timeout: float = 5.0) -> tuple[Assistant, FakeKB]:
    kb = FakeKB()
    kb.config.llm.timeout = timeout
    kb.config.router.timeout = timeout
    model = OpenAIChatModel(url, timeout=timeout, context_window=2048, max_tokens=128)
    return Assistant(kb, model, kb.config), kb


def answer_of(events) -> Answer:
    answers = [e for e in events if isinstance(e, Answer)]
    assert len(answers) == 1
    return answers[0]


@pytest.mark.parametrize("fault", ["reset", "stall", "status", "garbage"])
def test_llm_fault_mid_answer_falls_back_to_cited_passages_and_conversation_goes_on(fake_llm, fault):
    broken = {"on": True}

    def script(body: dict) -> tuple:
        if is_router(body):
            return "stream", [ROUTE_JSON]
        if broken["on"]:
            return {
                "reset": ("reset", ["Parrots eat "]),
                "stall": ("stall", ["Parrots eat "]),
                "status": ("status", (500, "internal error")),
                "garbage": ("garbage", ["Parrots eat "]),
            }[fault]
        return "stream", ["They eat palm nuts [1]."]

    srv = fake_llm(script)
    assistant, _ = make_assistant(srv.url, timeout=1.5)
    conv = Conversation()
    t0 = time.monotonic()
    events = list(assistant.ask("What do African grey parrots eat?", conv))
    assert time.monotonic() - t0 < 4.0  # router + answer, each bounded by the 1.5 s limit
    warnings = [str(e.message) for e in events if isinstance(e, Warning)]
    assert warnings and "showing the most relevant passages" in warnings[0]
    answer = answer_of(events)
    assert answer.by == "extractive" and answer.text.startswith("The language model failed")
    assert answer.citations and answer.citations[0].source == "parrots.md"
    broken["on"] = False  # the server recovers: the same conversation answers normally
    answer = answer_of(list(assistant.ask("And what do they eat in the wild?", conv)))
    assert answer.by == "llm" and [c.n for c in answer.citations] == [1]
    assert len(conv.history) == 4


def test_server_down_gives_heuristic_route_and_extractive_answer():
    assistant, kb = make_assistant(f"http://127.0.0.1:{free_port()}/v1", timeout=2)
    kb.config.router.decisive_hit_score = 0  # ask the (absent) model even for a clear question
    events = list(assistant.ask("What do African grey parrots eat?"))
    route = next(e for e in events if isinstance(e, RouteDecided))
    assert route.by == "heuristic" and route.use_rag and "cannot reach" in str(route.reason)
    assert answer_of(events).by == "extractive"


def test_invalid_router_json_falls_back_to_heuristics(fake_llm):
    srv = fake_llm(lambda body: ("stream", ["Sure! I think use_rag maybe"] if is_router(body) else ["Hi!"]))
    assistant, _ = make_assistant(srv.url)
    events = list(assistant.ask("hello there"))
    route = next(e for e in events if isinstance(e, RouteDecided))
    assert route.by == "heuristic" and route.use_rag is False
    assert answer_of(events).text == "Hi!"


def test_answer_citing_a_missing_block_drops_it_with_a_warning(fake_llm):
    srv = fake_llm(
        lambda body: ("stream", [ROUTE_JSON] if is_router(body) else ["Palm nuts [1] and snails [9]."])
    )
    assistant, _ = make_assistant(srv.url)
    events = list(assistant.ask("What do African grey parrots eat?"))
    assert any(isinstance(e, Warning) and "[9]" in str(e.message) and "3 source" in str(e.message) for e in events)
    answer = answer_of(events)
    assert answer.text == "Palm nuts [1] and snails." and [c.n for c in answer.citations] == [1]
    assert "".join(e.text for e in events if isinstance(e, Token)) == "Palm nuts [1] and snails [9]."


def test_openai_environment_variables_never_reach_the_configured_server(fake_llm, monkeypatch):
    """openai reads OPENAI_ORG_ID, OPENAI_PROJECT_ID and OPENAI_CUSTOM_HEADERS (meant for OpenAI's
    own API); a local or third-party server must get only what the user set in the app."""
    monkeypatch.setenv("OPENAI_ORG_ID", "org-secret")
    monkeypatch.setenv("OPENAI_PROJECT_ID", "proj-secret")
    monkeypatch.setenv("OPENAI_CUSTOM_HEADERS", "X-Leak: 1\nAuthorization: Bearer sk-from-env")
    srv = fake_llm(lambda body: ("stream", ["ok"]))
    list(OpenAIChatModel(srv.url, "m", "sk-test-123", timeout=5).stream([{"role": "user", "content": "x"}]))
    list(OpenAIChatModel(srv.url, "m", timeout=5).stream([{"role": "user", "content": "x"}]))
    for headers in srv.headers:
        assert headers["OpenAI-Organization"] is None and headers["OpenAI-Project"] is None
        assert headers["X-Leak"] is None
    assert srv.headers[0]["Authorization"] == "Bearer sk-test-123"
    assert srv.headers[1]["Authorization"] is None

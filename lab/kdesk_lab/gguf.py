"""`kdesk bench gguf`: the in-process llama.cpp server's speed under each thread/poll/batch setting.

Each setting starts its own server (``GGUFServer``, as the app does) and answers a few RAG-sized
prompts (a nonce first, so llama.cpp's prompt cache never serves them); the server's own timings
give prompt tokens/s and generated tokens/s, and the client's clock the first streamed token. With
``busy`` every setting runs twice: on the machine as it is, and beside a process that keeps one
core busy (what the embedder or the window does while a question is answered).
"""

from __future__ import annotations

import json
import os
import statistics
import subprocess
import sys
import time
from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any

import httpx

from desktop_app.core.models.llm.gguf import GGUFServer
from kdesk_lab.index import load_average

# ~650 tokens of passages, the size of a typical answer prompt's context.
_PASSAGE = (
    "[{n}] The African grey parrot (Psittacus erithacus) lives in the rainforests of West and Central "
    "Africa. It feeds on palm nuts, seeds, fruits and leafy matter, and has been seen eating snails. "
    "Flocks roost in tall trees and fly out at dawn to feed. Experts regard it as one of the most "
    "intelligent birds: captive birds learn hundreds of words and use them in context. "
)


@dataclass(frozen=True)
class Setting:
    threads: int
    batch_threads: int
    poll: int
    batch: int = 512

    @property
    def label(self) -> str:
        return f"t{self.threads}/b{self.batch_threads} poll {self.poll} batch {self.batch}"


DEFAULT_SETTINGS = (
    Setting(1, 1, 50),  # llama.cpp's polling, one thread for everything (the earlier default)
    Setting(1, 1, 0),
    Setting(1, 2, 0),
    Setting(2, 2, 0),
    Setting(2, 2, 50),
    Setting(1, 2, 50),
)


@dataclass
class Row:
    setting: str
    load: str  # "as is" or "one core busy"
    prompt_tokens: int
    prompt_tps: float  # prompt tokens per second (server timings), median
    gen_tps: float  # generated tokens per second after the first, median
    first_token_ms: float  # client clock, median
    total_ms: float
    load_avg: list[float] = field(default_factory=list)


def parse_setting(text: str) -> Setting:
    """``T/B/POLL[/BATCH]``, e.g. ``1/2/0`` or ``1/2/0/256``."""
    parts = [int(p) for p in text.split("/")]
    if len(parts) not in (3, 4) or min(parts) < 0 or parts[0] < 1 or parts[1] < 1:
        raise ValueError(f"a setting is THREADS/BATCH_THREADS/POLL[/BATCH], not {text!r}")
    return Setting(*parts)


@contextmanager
def one_core_busy() -> Iterator[None]:
    """A child process that spins one core for as long as the block runs."""
    proc = subprocess.Popen([sys.executable, "-c", "while True: pass"])
    try:
        time.sleep(0.5)
        yield
    finally:
        proc.kill()
        proc.wait()


def _prompt(nonce: int, passages: int) -> list[dict[str, str]]:
    context = "".join(_PASSAGE.format(n=i + 1) for i in range(passages))
    return [
        {"role": "system", "content": f"Request {nonce}. Answer from the passages, citing [n].\n\n{context}"},
        {"role": "user", "content": "What does the African grey parrot eat?"},
    ]


def _one(base: str, model: str, nonce: int, passages: int, max_tokens: int) -> tuple[float, float, dict]:
    """(first token ms, total ms, server timings) for one streamed answer."""
    body = {
        "model": model,
        "messages": _prompt(nonce, passages),
        "max_tokens": max_tokens,
        "temperature": 0.0,
        "stream": True,
        "timings_per_token": False,
    }
    t0 = time.perf_counter()
    first = None
    timings: dict[str, Any] = {}
    with httpx.stream("POST", base + "/chat/completions", json=body, timeout=600, trust_env=False) as r:
        r.raise_for_status()
        for line in r.iter_lines():
            if not line.startswith("data: ") or line == "data: [DONE]":
                continue
            chunk = json.loads(line[6:])
            delta = (chunk.get("choices") or [{}])[0].get("delta", {})
            if first is None and delta.get("content"):
                first = (time.perf_counter() - t0) * 1000
            timings = chunk.get("timings") or timings
    total = (time.perf_counter() - t0) * 1000
    return first if first is not None else total, total, timings


def measure(
    gguf: Path, setting: Setting, runs: int, passages: int, max_tokens: int, load: str
) -> Row:
    server = GGUFServer(
        gguf, 4096, setting.threads, batch_threads=setting.batch_threads, batch=setting.batch, poll=setting.poll
    )
    try:
        base = server.start()
        _one(base, gguf.stem, -1, 1, 4)  # warm-up: pages the weights in
        firsts, totals, ptps, gtps, ntok = [], [], [], [], 0
        for i in range(runs):
            first, total, t = _one(base, gguf.stem, time.time_ns() + i, passages, max_tokens)
            firsts.append(first)
            totals.append(total)
            if t:
                ntok = int(t.get("prompt_n", 0))
                ptps.append(float(t.get("prompt_per_second", 0.0)))
                gtps.append(float(t.get("predicted_per_second", 0.0)))
    finally:
        server.stop()
    med = statistics.median
    return Row(
        setting.label,
        load,
        ntok,
        round(med(ptps), 1) if ptps else 0.0,
        round(med(gtps), 1) if gtps else 0.0,
        round(med(firsts)),
        round(med(totals)),
        load_average(),
    )


def run_gguf_bench(
    gguf: Path,
    settings: Sequence[Setting] = DEFAULT_SETTINGS,
    *,
    runs: int = 2,
    passages: int = 8,
    max_tokens: int = 32,
    busy: bool = True,
    progress: Any = None,
) -> dict[str, Any]:
    rows: list[Row] = []
    for setting in settings:
        for load in ("as is", "one core busy") if busy else ("as is",):
            if progress:
                progress(f"{setting.label}, {load} ...")
            if load == "as is":
                rows.append(measure(gguf, setting, runs, passages, max_tokens, load))
            else:
                with one_core_busy():
                    rows.append(measure(gguf, setting, runs, passages, max_tokens, load))
    return {
        "model": gguf.name,
        "cores": os.cpu_count(),
        "runs": runs,
        "max_tokens": max_tokens,
        "rows": [asdict(r) for r in rows],
    }


def format_gguf(report: dict[str, Any]) -> str:
    head = (
        f"{report['model']} on {report['cores']} cores, {report['runs']} answers a row "
        f"(median), {report['max_tokens']} tokens each"
    )
    lines = [
        head,
        f"{'setting':<28}{'load':<15}{'prompt':>7}{'prompt t/s':>11}{'gen t/s':>9}"
        f"{'1st tok ms':>11}{'total ms':>10}  load avg",
    ]
    for r in report["rows"]:
        lines.append(
            f"{r['setting']:<28}{r['load']:<15}{r['prompt_tokens']:>7}{r['prompt_tps']:>11}"
            f"{r['gen_tps']:>9}{r['first_token_ms']:>11}{r['total_ms']:>10}  {r['load_avg']}"
        )
    return "\n".join(lines)

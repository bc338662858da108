"""`kdesk bench switch`: a switch to another embedding model while the library keeps answering.

On the first N documents of a BEIR folder (SciFact), written as Markdown into a fresh data folder:

1. ``kdesk sync`` indexes them with the model in use (the bundled MiniLM unless --from says otherwise);
2. ``kdesk models use MODEL`` (a real process) fills the new model's index; meanwhile this process
   searches the old index with the benchmark's queries, one every --search-every seconds, and times
   each (a KnowledgeBase opened as a reader, as a window would be);
3. once --kill-at of the documents are in the new index, the fill is killed (SIGKILL);
4. ``kdesk reindex`` (a new process) continues it, to the end or until --max-seconds (then SIGTERM:
   what it reached is reported).

Every text the fill processes hand to the encoder is logged (sha1 of the text, the model) by a small
wrapper that runs the CLI (``python -m kdesk_lab.switch``): a text embedded twice across the kill
is counted. Reported: the search latency from the old index during the fill (p50, p95, max, count),
the fill's documents/s in each process (encoder loading excluded: from its first finished batch),
the documents done at the kill and redone after it, whether the takeover happened, and the load average.
"""

from __future__ import annotations

import hashlib
import os
import signal
import sqlite3
import statistics
import subprocess
import sys
import tempfile
import time
from dataclasses import asdict, dataclass, field
from pathlib import Path

from kdesk_lab.index import load_average
from kdesk_lab.retrieval import file_name, load_beir, markdown

EMBED_LOG = "KDESK_BENCH_EMBED_LOG"  # the wrapper appends "model sha1" per text embedded here


@dataclass
class Phase:
    """One fill process: how far it got and how fast."""

    command: str
    seconds: float = 0.0
    done_start: int = 0
    done_end: int = 0
    docs_per_s: float | None = None  # from its first finished batch to its end
    ended: str = ""  # "killed", "finished", "stopped" (SIGTERM at --max-seconds), "failed rc=N"


@dataclass
class SwitchBenchResult:
    documents: int
    model: str
    old_model: str
    sync_seconds: float
    phases: list[Phase] = field(default_factory=list)
    search_ms: list[float] = field(default_factory=list)
    idle_search_ms: list[float] = field(default_factory=list)  # the same searches before the fill started
    search_top_ok: int = 0  # searches whose first hit was a document of the library (not empty)
    done_at_kill: int = 0
    embedded_texts: int = 0
    embedded_twice: int = 0  # texts the new model encoded more than once (the batch in flight at the kill)
    took_over: bool = False
    load: dict[str, list[float]] = field(default_factory=dict)

    def to_dict(self) -> dict:
        return asdict(self) | {
            "search": _percentiles(self.search_ms),
            "idle_search": _percentiles(self.idle_search_ms),
        }


def _percentiles(values: list[float]) -> dict[str, float | int | None]:
    if not values:
        return {"count": 0, "p50": None, "p95": None, "max": None}
    ordered = sorted(values)
    return {
        "count": len(values),
        "p50": round(statistics.median(ordered), 1),
        "p95": round(ordered[min(len(ordered) - 1, int(0.95 * len(ordered)))], 1),
        "max": round(ordered[-1], 1),
    }


def _new_index_done(index: Path, base_prefix: str, old_dirs: set[str]) -> int:
    """Documents the new model's manifest records as indexed (read as another process would)."""
    for p in index.iterdir():
        if p.is_dir() and p.name not in old_dirs and p.name.startswith(base_prefix):
            db_path = p / "manifest.sqlite3"
            if db_path.exists():
                try:
                    with sqlite3.connect(f"file:{db_path}?mode=ro", uri=True, timeout=1) as db:
                        return db.execute(
                            "SELECT count(*) FROM documents WHERE status = 'indexed'"
                        ).fetchone()[0]
                except sqlite3.Error:
                    return 0
    return 0


def _kdesk(data_dir: Path, *args: str, log: Path) -> subprocess.Popen:
    env = dict(os.environ, HF_HUB_OFFLINE="1", TRANSFORMERS_OFFLINE="1", ANONYMIZED_TELEMETRY="False")
    env[EMBED_LOG] = str(log)
    cmd = [sys.executable, "-m", "kdesk_lab.switch", "--data-dir", str(data_dir), *args]
    return subprocess.Popen(cmd, env=env, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)


def run_switch_bench(
    beir_dir: Path,
    model: str,
    *,
    documents: int = 1000,
    old_model: str = "default",
    kill_at: float = 0.5,
    max_seconds: float = 3000.0,
    search_every: float = 2.0,
    work_dir: Path | None = None,
    log=print,
) -> SwitchBenchResult:
    """Run the switch described in the module docstring; ``log`` is told each step."""
    from desktop_app.core.config import Config, save_config
    from desktop_app.core.library.knowledge import KnowledgeBase

    data = load_beir(beir_dir)
    corpus = list(data.corpus.items())[:documents]
    queries = list(data.queries.values())[:50] or ["a question"]
    root = Path(tempfile.mkdtemp(prefix="kdesk-switch-", dir=work_dir))
    data_dir = root / "data"
    knowledge = data_dir / "knowledge"
    knowledge.mkdir(parents=True)
    config = Config()
    config.embedding.model = old_model
    save_config(config, data_dir / "config.toml")
    used: set[str] = set()
    for did, (title, text) in corpus:
        (knowledge / file_name(did, used)).write_text(markdown(title, text), encoding="utf-8")
    embed_log = root / "embedded.log"
    result = SwitchBenchResult(len(corpus), model, old_model, 0.0)
    result.load["start"] = load_average()

    log(f"sync: {len(corpus)} documents with {old_model} ...")
    t0 = time.monotonic()
    sync = _kdesk(data_dir, "sync", log=root / "old-embedded.log")
    out, _ = sync.communicate()
    if sync.returncode != 0:
        raise ValueError(f"kdesk sync failed: {out[-2000:]}")
    result.sync_seconds = round(time.monotonic() - t0, 1)
    index = data_dir / "index"
    old_dirs = {p.name for p in index.iterdir() if p.is_dir()}

    reader = KnowledgeBase(data_dir)  # the old model's index, as a window has it open
    reader.search(queries[0])  # its model loaded before any timing
    result.old_model = reader.embedder_name
    query_at = [0]

    def search_once(into: list[float]) -> None:
        q = queries[query_at[0] % len(queries)]
        query_at[0] += 1
        started = time.perf_counter()
        hits = reader.search(q)
        into.append(round((time.perf_counter() - started) * 1000, 1))
        result.search_top_ok += bool(hits) and into is result.search_ms

    for _ in range(20):  # without a fill running: the reference
        search_once(result.idle_search_ms)
    query_at[0] = 0
    result.load["fill"] = load_average()

    def watch(proc: subprocess.Popen, phase: Phase, until: int | None, deadline: float) -> None:
        """Search while the fill runs; kill it at ``until`` documents, stop it at the deadline."""
        started = time.monotonic()
        first_batch: tuple[float, int] | None = None
        last_search = 0.0
        phase.done_start = _new_index_done(index, "chunks_", old_dirs)
        while proc.poll() is None:
            done = _new_index_done(index, "chunks_", old_dirs)
            if first_batch is None and done > phase.done_start:
                first_batch = (time.monotonic(), done)
            if until is not None and done >= until:
                proc.send_signal(signal.SIGKILL)
                phase.ended = "killed"
                break
            if time.monotonic() > deadline:
                proc.send_signal(signal.SIGTERM)
                phase.ended = "stopped"
                break
            if time.monotonic() - last_search >= search_every:
                last_search = time.monotonic()
                search_once(result.search_ms)
            time.sleep(0.2)
        out, _ = proc.communicate()
        phase.seconds = round(time.monotonic() - started, 1)
        phase.done_end = _new_index_done(index, "chunks_", old_dirs)
        if not phase.ended:
            phase.ended = "finished" if proc.returncode == 0 else f"failed rc={proc.returncode}"
        if phase.ended.startswith("failed"):
            log(out[-3000:])
        if first_batch is not None and phase.done_end > first_batch[1]:
            span = time.monotonic() - first_batch[0]
            phase.docs_per_s = round((phase.done_end - first_batch[1]) / span, 3) if span > 0 else None
        log(
            f"{phase.command}: {phase.ended} after {phase.seconds} s at {phase.done_end}/{len(corpus)} documents"
        )

    deadline = time.monotonic() + max_seconds
    first = Phase(f"kdesk models use {model}")
    log(f"{first.command} (killed at {kill_at:.0%}) ...")
    watch(
        _kdesk(data_dir, "models", "use", model, log=embed_log),
        first,
        max(1, int(len(corpus) * kill_at)),
        deadline,
    )
    result.phases.append(first)
    result.done_at_kill = first.done_end
    second = Phase("kdesk reindex")
    log(f"{second.command} (continues) ...")
    watch(_kdesk(data_dir, "reindex", log=embed_log), second, None, deadline)
    result.phases.append(second)
    result.load["end"] = load_average()
    reader.close()

    from desktop_app.core.config import load_config

    result.took_over = load_config(data_dir / "config.toml").embedding.model == model
    lines = embed_log.read_text(encoding="utf-8").split() if embed_log.exists() else []
    texts = [h for h in lines[1::2]]
    result.embedded_texts = len(texts)
    result.embedded_twice = len(texts) - len(set(texts))
    return result


def format_switch(r: SwitchBenchResult) -> str:
    s, idle = _percentiles(r.search_ms), _percentiles(r.idle_search_ms)
    lines = [
        f"switch {r.old_model} -> {r.model} on {r.documents} documents (old index synced in {r.sync_seconds} s)",
        f"search from the old index before the fill: p50 {idle['p50']} ms, p95 {idle['p95']} ms over {idle['count']}",
        f"search from the old index during the fill: p50 {s['p50']} ms, p95 {s['p95']} ms, max {s['max']} ms "
        f"over {s['count']} searches ({r.search_top_ok} with hits)",
    ]
    for p in r.phases:
        rate = f"{p.docs_per_s} docs/s" if p.docs_per_s else "no rate"
        lines.append(
            f"  {p.command}: {p.ended} after {p.seconds} s, {p.done_start} -> {p.done_end} documents, {rate}"
        )
    lines.append(
        f"killed at {r.done_at_kill} documents; texts encoded by the fills {r.embedded_texts}, "
        f"encoded twice {r.embedded_twice} (the batch in flight at the kill)"
    )
    lines.append(f"takeover: {'yes' if r.took_over else 'no (incomplete)'}; load average {r.load}")
    return "\n".join(lines)


def _logging_embedders(path: str) -> None:
    """Log every text the product's embedder encodes (sha1, model), for counting what is encoded twice."""
    from desktop_app.core.library import knowledge

    made = knowledge.make_embedder

    def make(config, data_dir=None):
        embedder = made(config, data_dir)
        inner = embedder.embed_documents

        def embed_documents(texts):
            vectors = inner(texts)
            with open(path, "a", encoding="utf-8") as fh:  # after success: a killed call left no line
                for t in texts:
                    fh.write(f"{embedder.name.replace(' ', '_')} {hashlib.sha1(t.encode()).hexdigest()}\n")
            return vectors

        embedder.embed_documents = embed_documents
        return embedder

    knowledge.make_embedder = make


if __name__ == "__main__":  # the CLI, with its embedders logged (run_switch_bench's processes)
    if os.environ.get(EMBED_LOG):
        _logging_embedders(os.environ[EMBED_LOG])
    from desktop_app.cli.main import main

    sys.exit(main())

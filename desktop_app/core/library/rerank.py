"""The reranker under its old name for the lab's benchmarks (desktop_app/bench): it is a model, in
core/models/rerank.py. Remove once the lab imports it from there."""

from desktop_app.core.models.rerank import load_reranker  # noqa: F401 - re-exported

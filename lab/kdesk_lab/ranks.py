"""Rank agreement of two score lists, shared by the benchmarks that check a runtime against float32."""

from __future__ import annotations

from collections.abc import Sequence


def spearman(a: Sequence[float], b: Sequence[float]) -> float:
    """Spearman's rank correlation (no ties in float scores): Pearson's of the ranks."""
    import numpy as np

    ra, rb = np.argsort(np.argsort(a)), np.argsort(np.argsort(b))
    return float(np.corrcoef(ra, rb)[0, 1])

"""The domain sets of `kdesk bench domains` (lab/kdesk_lab/domains/): every question well formed, its
files present, and every answerable question's gold written in its document, so a score on them
measures the app and not a typo in the set."""

from __future__ import annotations

import json
from collections import Counter
from pathlib import Path

import pytest

from kdesk_lab.answers import normalize
from kdesk_lab.domains import KINDS

SETS = Path(__file__).resolve().parents[3] / "lab" / "kdesk_lab" / "domains"


def questions(name: str) -> list[dict]:
    lines = (SETS / name / "questions.jsonl").read_text(encoding="utf-8").splitlines()
    return [json.loads(line) for line in lines if line.strip()]


@pytest.mark.parametrize("name", ["tune", "heldout"])
def test_a_domain_set_is_well_formed(name):
    rows = questions(name)
    assert len(rows) >= 80
    assert not [i for i, n in Counter(r["id"] for r in rows).items() if n > 1]
    domains = {r["domain"] for r in rows}
    assert len(domains) >= 8
    for r in rows:
        assert r["kind"] in KINDS and r["language"] in ("en", "zh") and r["doc_language"] in ("en", "zh")
        files = r["file"] if isinstance(r["file"], list) else [r["file"]] if r["file"] else []
        for f in files:
            assert (SETS / name / f).is_file(), (r["id"], f)
        if r["kind"] == "passages":
            text = normalize((SETS / name / files[0]).read_text(encoding="utf-8"), r["doc_language"])
            assert any(normalize(g, r["doc_language"]) in text for g in r["gold"]), r["id"]
        else:
            assert r["gold"] == [], r["id"]
    # Both languages, both ways, in every set: questions in the other language than their pages.
    pairs = Counter((r["language"], r["doc_language"]) for r in rows if r["kind"] == "passages")
    assert all(pairs[p] >= 4 for p in [("en", "en"), ("zh", "zh"), ("en", "zh"), ("zh", "en")]), pairs

"""`kdesk bench scale`: one knowledge base grown in steps from tiny sources the test writes."""

from __future__ import annotations

import json
from dataclasses import replace
from pathlib import Path

import pytest

from desktop_app.core.config import Config
from kdesk_lab.scale import (
    DISK_PARTS,
    SCALE_MODES,
    corpus_prefix,
    extrapolate,
    fit,
    format_scale,
    load_source,
    plot_scale,
    run_scale_bench,
)

PNG = b"\x89PNG\r\n\x1a\n"
TOPICS = ["parrots", "glaciers", "volcanoes", "bees", "comets", "tides", "ferns", "owls", "salt"]
ZH = ["鹦鹉", "冰川", "火山", "蜜蜂", "彗星", "潮汐"]


def _jsonl(path: Path, rows: list[dict]) -> None:
    path.write_text("".join(json.dumps(r, ensure_ascii=False) + "\n" for r in rows), encoding="utf-8")


@pytest.fixture
def sources(tmp_path: Path) -> list[Path]:
    """A BEIR folder (15 English and Chinese abstracts) and a QA folder (3 articles, one stored twice)."""
    beir = tmp_path / "abstracts"
    (beir / "qrels").mkdir(parents=True)
    docs = [
        {"_id": f"e{i}", "title": t.title(), "text": f"Notes on {t}: where {t} are found and why. " * 3}
        for i, t in enumerate(TOPICS)
    ]
    docs += [
        {"_id": f"z{i}", "title": t, "text": f"{t}是自然界中常见的现象，科学家研究{t}的成因。" * 4}
        for i, t in enumerate(ZH)
    ]
    _jsonl(beir / "corpus.jsonl", docs)
    _jsonl(
        beir / "queries.jsonl",
        [{"_id": "1", "text": "where are glaciers found"}, {"_id": "2", "text": "火山的成因"}],
    )
    (beir / "qrels" / "test.tsv").write_text("query-id\tcorpus-id\tscore\n1\te1\t1\n2\tz2\t1\n")
    qa = tmp_path / "articles"
    (qa / "storage").mkdir(parents=True)
    for name, title in (("a1", "Kea"), ("a2", "Great_Wall"), ("a3", "Kea")):
        text = "Kea are alpine parrots." if title == "Kea" else "The wall is long. " * 200
        (qa / "storage" / f"{name}.txt.clean").write_text(f"{title}\n\n\n{text}\n", encoding="utf-8")
    _jsonl(qa / "qa.jsonl", [{"question": "Where do kea live?"}, {"question": "How long is the wall?"}])
    return [beir, qa]


def test_sources_and_repeats(sources):
    beir, qa = (load_source(p) for p in sources)
    assert len(beir.docs) == 15 and beir.queries == ["where are glaciers found", "火山的成因"]
    assert [d[1] for d in qa.docs] == ["Kea", "Great Wall"]  # a3 repeats a1: one document
    ids = [d[0] for d in corpus_prefix(beir.docs, 32)]
    assert len(set(ids)) == 32 and ids[15] == ids[0] + "~2" and ids[31] == ids[1] + "~3"


def test_fits():
    assert fit([1, 2, 3], [3, 5, 7]) == pytest.approx((1.0, 2.0))
    a, b = fit([10, 100], [1, 2], "log")
    assert a + b * 2.302585 * 3 == pytest.approx(3.0, rel=1e-4)  # ln(1000)
    assert fit([5], [4]) == (4.0, 0.0)


def _step(n: int, docs_per_s: float, rss: float, chroma: float, disk: float, p95: dict) -> dict:
    return {
        "documents": n,
        "docs_per_s": docs_per_s,
        "chunks_per_doc": 2.5,
        "rss_peak_mb": rss,
        "chroma_rss_peak_mb": chroma,
        "disk_mb": {"total": disk},
        "queries": {m: {"p95_ms": v} for m, v in p95.items()},
    }


def test_extrapolation_fits_every_size_and_reports_slopes_and_limits(tmp_path: Path):
    # RSS and disk grow on straight lines; fused p95 bends upward at the third size, so a fit over
    # the first two sizes alone would say something else at 1M documents.
    steps = [
        _step(1000, 8.0, 1000, 100, 40, {"keyword": 5, "fused": 20, "fused-hnsw": 20}),
        _step(5000, 8.0, 1100, 300, 200, {"keyword": 9, "fused": 30, "fused-hnsw": 25}),
        _step(20000, 8.0, 1475, 1050, 800, {"keyword": 24, "fused": 90, "fused-hnsw": 30}),
    ]
    result = {"steps": steps, "handover_docs": 100_000, "machine_mb": 24_000.0}
    ex = extrapolate(result)
    seg = ex["slopes"]["per_1000_docs"]
    assert [(s["from"], s["to"]) for s in seg] == [(1000, 5000), (5000, 20000)]
    assert seg[0]["rss_peak_mb"] == 25.0 and seg[1]["rss_peak_mb"] == 25.0
    assert seg[0]["fused_p95_ms"] == 2.5 and seg[1]["fused_p95_ms"] == 4.0
    fits = ex["slopes"]["fit"]
    assert fits["rss_peak_mb"] == {"per_1000_docs": 25.0} and fits["disk_mb"] == {"per_1000_docs": 40.0}
    assert "per_doubling" in fits["fused-hnsw_p95_ms"]
    # The fit runs through all three sizes: its slope lies between the two segments' ones.
    assert 2.5 < fits["fused_p95_ms"]["per_1000_docs"] < 4.0 + 1e-9
    t100k, t1m = ex["targets"]["100000"], ex["targets"]["1000000"]
    assert t100k["rss_peak_mb"] == pytest.approx(1000 + 25 * 99, abs=0.2)
    assert t100k["dense_search"] == "exact" and t1m["dense_search"] == "hnsw"
    assert (
        t1m["app_fused_p95_ms"] == t1m["fused-hnsw_p95_ms"]
        and t100k["app_fused_p95_ms"] == t100k["fused_p95_ms"]
    )
    assert t100k["index_hours"] == pytest.approx(100_000 / 8 / 3600, abs=0.01)
    lim = ex["limits"]
    # fused p95 (exact) reaches 100 ms a little past 20k documents, before the handover.
    assert 20_000 < lim["fused_p95_docs"] < 30_000
    # Both processes together: 1050 + 75 MB per 1000 documents reach 24 GB around 300k documents.
    assert lim["memory_docs"] == pytest.approx((24_000 - 1050) / 0.075, rel=0.02)
    text = format_scale(
        {
            **result,
            "sources": {},
            "queries_by_source": {},
            "unique_docs": 1,
            "embedder": "e",
            "dim": 384,
            "chroma": "child",
            "queries": 3,
            "load_start": [],
            "load_end": [],
            "exact_dense_mb": 512,
            "handover_chunks": 250_000,
            "steps": [
                {
                    **s,
                    "repeats": 0,
                    "added": 1,
                    "seconds": 1.0,
                    "encoder_share": 0.9,
                    "chunks": 1,
                    "dense_search": "exact",
                    "rss_mb": 1,
                    "chroma_rss_mb": 1,
                    "load": [],
                    "queries": {m: {"p50_ms": 1, **q} for m, q in s["queries"].items()},
                }
                for s in steps
            ],
            "extrapolation": ex,
        }
    )
    assert "5,000 -> 20,000: RSS +25.00 MB" in text and "fit over all sizes" in text
    assert "passes 100 ms" in text and "fused at ~2" in text
    steps[0]["disk_mb"]["chroma"] = steps[1]["disk_mb"]["chroma"] = steps[2]["disk_mb"]["chroma"] = 30
    paths = plot_scale(result, tmp_path)  # with the 100 ms and the machine's memory drawn in
    assert len(paths) == 4 and all(p.read_bytes()[:8] == PNG for p in paths)


@pytest.mark.timeout(150)
def test_grows_one_knowledge_base_and_measures_each_size(sources, tmp_path: Path, minilm):
    # A tiny exact-search budget (40 chunks of 384 floats): the handover happens within the run.
    config = Config()
    config.retrieval = replace(config.retrieval, exact_dense_mb=40 * 384 * 4 / 1e6)
    work = tmp_path / "kb"
    r = run_scale_bench(
        [6, 17, 34],
        sources=sources,
        config=config,
        embedder=minilm,
        work_dir=work,
        n_queries=4,
        log=lambda m: None,
    )
    assert r.unique_docs == 17 and r.sources == {"abstracts": 15, "articles": 2} and r.queries == 4
    assert [s.documents for s in r.steps] == [6, 17, 34] and [s.repeats for s in r.steps] == [0, 0, 17]
    assert [s.added for s in r.steps] == [6, 11, 17]
    assert len(list((work / "knowledge").iterdir())) == 34  # repeats under their own file names
    assert r.handover_chunks == 40 and r.handover_docs > 0
    for prev, s in zip([None, *r.steps], r.steps):
        assert s.docs_per_s > 0 and 0 < s.encoder_share <= 1
        assert s.chunks >= s.documents and s.chunks_added == s.chunks - (prev.chunks if prev else 0)
        assert set(s.queries) == set(SCALE_MODES)
        assert all(0 < t.p50_ms <= t.p95_ms for t in s.queries.values())
        assert set(s.disk_mb) == set(DISK_PARTS) | {"other", "total"}
        assert s.disk_mb["chroma"] > 0 and s.disk_mb["documents"] > 0
        assert s.disk_mb["total"] >= sum(v for k, v in s.disk_mb.items() if k != "total") - 0.05
        assert s.rss_peak_mb > 0 and s.chroma_rss_peak_mb > 0 and len(s.load) == 3
        # The app's own decision, as predicted from the chunks and the dimension.
        assert s.dense_search == ("hnsw" if s.chunks > r.handover_chunks else "exact")
        assert prev is None or (s.chunks > prev.chunks and s.disk_mb["total"] > prev.disk_mb["total"])
    assert {s.dense_search for s in r.steps} == {"exact", "hnsw"}

    saved = json.loads(json.dumps(r.to_dict()))  # what --json OUT writes and --replot reads
    targets = extrapolate(saved)["targets"]
    assert targets["1000000"]["dense_search"] == "hnsw" and targets["100000"]["index_hours"] > 0
    assert targets["1000000"]["disk_mb"] >= targets["100000"]["disk_mb"] > 0
    assert "app_fused_p95_ms" in targets["100000"]
    text = format_scale(saved)
    assert "extrapolation" in text and "1,000,000 docs" in text and "34 docs (17 repeats)" in text
    paths = plot_scale(saved, tmp_path / "plots")
    assert sorted(p.name for p in paths) == ["disk.png", "docs_per_s.png", "query_p95.png", "rss.png"]
    assert all(p.read_bytes()[:8] == PNG for p in paths)

    from desktop_app.cli.main import main

    (tmp_path / "saved.json").write_text(json.dumps(saved), encoding="utf-8")
    replot = tmp_path / "replot"
    assert main(["bench", "scale", "--replot", str(tmp_path / "saved.json"), "--plot", str(replot)]) == 0
    assert len(list(replot.glob("*.png"))) == 4


def test_cli_refuses_bad_sizes():
    from desktop_app.cli.main import main

    assert main(["bench", "scale", "--sizes", "10,x"]) == 2
    assert main(["bench", "scale", "--sizes", "0"]) == 2

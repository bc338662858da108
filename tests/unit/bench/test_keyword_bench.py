"""`kdesk bench keyword` (plain whole-document BM25 per tokenizer) on a tiny BEIR folder the test writes."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

from kdesk_lab.keyword import (
    TOKENIZERS,
    format_keyword_result,
    make_tokenizer,
    run_keyword_bench,
)
from kdesk_lab.retrieval import load_beir

ROOT = Path(__file__).resolve().parents[3]
CORPUS = [
    ("d1", "金刚鹦鹉", "金刚鹦鹉是一种羽毛鲜艳的大型鹦鹉，生活在美洲的热带雨林。"),
    ("d2", "大熊猫", "大熊猫主要以竹子为食，生活在中国四川的山区。"),
    ("d3", "长城", "长城是中国古代的军事防御工程，全长两万多公里。"),
    ("d4", "African grey parrot", "African greys are grey parrots known for mimicking human speech."),
    ("d5", "Carbonara", "Spaghetti with eggs, pecorino cheese, guanciale and black pepper."),
    ("d6", "Kakapo", "The kakapo is a flightless nocturnal parrot from New Zealand."),
]
QUERIES = [  # id, text, relevant doc, kind (None: no kind)
    ("q1", "金刚鹦鹉生活在哪里？", "d1", "zh"),
    ("q2", "大熊猫吃什么？", "d2", "zh"),
    ("q3", "长城有多长？", "d3", "zh"),
    ("q4", "which parrot can imitate speech?", "d4", "en"),
    ("q5", "pasta with eggs and cheese", "d5", "en"),
    ("q6", "flightless nocturnal parrot", "d6", None),
]


@pytest.fixture
def beir(tmp_path: Path) -> Path:
    folder = tmp_path / "mini-beir"
    (folder / "qrels").mkdir(parents=True)
    with open(folder / "corpus.jsonl", "w", encoding="utf-8") as fh:
        for did, title, text in CORPUS:
            fh.write(json.dumps({"_id": did, "title": title, "text": text}, ensure_ascii=False) + "\n")
    with open(folder / "queries.jsonl", "w", encoding="utf-8") as fh:
        for qid, text, _, kind in QUERIES:
            q = {"_id": qid, "text": text} | ({"kind": kind} if kind else {})
            fh.write(json.dumps(q, ensure_ascii=False) + "\n")
    lines = ["query-id\tcorpus-id\tscore"] + [f"{q}\t{d}\t1" for q, _, d, _ in QUERIES]
    (folder / "qrels" / "test.tsv").write_text("\n".join(lines) + "\n", encoding="utf-8")
    return folder


def test_variants_differ_only_on_chinese():
    text = "The parrots' BM25算法的原理"
    got = {name: make_tokenizer(name)(text) for name in TOKENIZERS if name != "app"}
    english = ["parrot", "bm25"]  # stopword dropped, stemmed: the app's English analysis everywhere
    bigrams = ["算法", "法的", "的原", "原理"]
    assert got["bigram"] == english + bigrams
    assert got["chars+bigrams"] == english + list("算法的原理") + bigrams
    jieba_words = got["jieba"][2:]
    assert got["jieba"][:2] == english and "".join(jieba_words) == "算法的原理"
    assert got["union"] == english + jieba_words + bigrams
    assert all(make_tokenizer(n)("鹦") == ["鹦"] for n in TOKENIZERS)  # a 1-character run is itself
    with pytest.raises(ValueError):
        make_tokenizer("nope")


def test_every_variant_runs_with_per_kind_figures(beir: Path):
    assert load_beir(beir).kinds == {"q1": "zh", "q2": "zh", "q3": "zh", "q4": "en", "q5": "en"}
    r = run_keyword_bench(beir, TOKENIZERS, log=lambda m: None)
    assert r.documents == 6 and r.queries == 6
    assert r.kinds == {"(none)": 1, "en": 2, "zh": 3}
    assert list(r.tokenizers) == list(TOKENIZERS)
    for t in r.tokenizers.values():
        assert t.ndcg_at_10 >= 0.9 and t.recall_at_10 == 1.0
        assert set(t.kinds) == {"(none)", "en", "zh"} and t.kinds["zh"].queries == 3
        assert t.index_seconds >= t.tokenize_seconds >= 0 and t.query_p50_ms > 0 and t.vocabulary > 0
    # English analysis is shared: every variant scores the English queries alike.
    assert len({t.kinds["en"].ndcg_at_10 for t in r.tokenizers.values()}) == 1
    text = format_keyword_result(r)
    assert "nDCG@10" in text and "zh (3)" in text and "chars+bigrams" in text
    json.dumps(r.to_dict())


def test_limit_and_no_kinds(beir: Path):
    lines = (beir / "queries.jsonl").read_text(encoding="utf-8").splitlines()
    stripped = [json.dumps({"_id": json.loads(x)["_id"], "text": json.loads(x)["text"]}) for x in lines]
    (beir / "queries.jsonl").write_text("\n".join(stripped) + "\n", encoding="utf-8")
    r = run_keyword_bench(beir, ["bigram"], limit_queries=2, log=lambda m: None)
    assert r.queries == 2 and r.kinds == {} and r.tokenizers["bigram"].kinds == {}
    assert "per-kind" not in format_keyword_result(r)
    with pytest.raises(ValueError):
        run_keyword_bench(beir, ["nope"], log=lambda m: None)


def test_cli_prints_json(beir: Path, capsys):
    from desktop_app.cli.main import main

    assert main(["bench", "keyword", "--beir", str(beir), "--tokenizers", "bigram,app", "--json"]) == 0
    out = json.loads(capsys.readouterr().out)
    assert list(out["tokenizers"]) == ["bigram", "app"]
    assert out["tokenizers"]["app"]["kinds"]["zh"]["queries"] == 3
    assert main(["bench", "keyword", "--beir", str(beir), "--tokenizers", "bigram,nope"]) == 2
    assert "--tokenizers takes" in capsys.readouterr().err
    assert main(["bench", "keyword", "--beir", str(beir / "nowhere")]) == 2


def test_make_traditional(beir: Path, tmp_path: Path):
    script = str(ROOT / "lab" / "benchmarks" / "make_traditional.py")
    # Without OpenCC: a clear message, no traceback.
    blocked = f"import sys, runpy; sys.modules['opencc'] = None; sys.argv = ['x', {str(beir)!r}, 'out']; "
    done = subprocess.run(
        [sys.executable, "-c", blocked + f"runpy.run_path({script!r}, run_name='__main__')"],
        capture_output=True,
        text=True,
        cwd=tmp_path,
    )
    assert done.returncode != 0 and "pip install opencc" in done.stderr
    # With it (the lab's install brings it): the conversion itself.
    out = tmp_path / "trad"
    subprocess.run([sys.executable, script, str(beir), str(out)], check=True, capture_output=True)
    corpus = [json.loads(x) for x in (out / "corpus.jsonl").read_text(encoding="utf-8").splitlines()]
    assert corpus[0] == {"_id": "d1", "title": "金剛鸚鵡", "text": corpus[0]["text"]}
    assert "熱帶雨林" in corpus[0]["text"]
    queries = [json.loads(x) for x in (out / "queries.jsonl").read_text(encoding="utf-8").splitlines()]
    assert queries[0] == {"_id": "q1", "text": "金剛鸚鵡生活在哪裡？", "kind": "zh"}
    assert (out / "qrels" / "test.tsv").read_text() == (beir / "qrels" / "test.tsv").read_text()

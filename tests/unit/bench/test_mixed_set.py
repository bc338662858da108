"""lab/benchmarks/mixed-zh: the committed BEIR files are exactly what make_set.py writes, and the set is as
hard and as answerable as its README says (kinds, counts, shared genera, names on the right pages)."""

from __future__ import annotations

import importlib.util
import json
import re
from collections import Counter
from pathlib import Path

import pytest

SET_DIR = Path(__file__).resolve().parents[3] / "lab" / "benchmarks" / "mixed-zh"
FILES = ("corpus.jsonl", "queries.jsonl", "qrels/test.tsv")
KINDS = ("zh-name", "zh-latin", "zh-english", "en-name", "en-latin", "zh-code", "en-code", "cross-lingual")


@pytest.fixture(scope="module")
def make_set():
    spec = importlib.util.spec_from_file_location("mixed_zh_make_set", SET_DIR / "make_set.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


@pytest.fixture(scope="module")
def data(make_set):
    return make_set.generate()


@pytest.fixture(scope="module")
def committed():
    corpus = [
        json.loads(line) for line in (SET_DIR / "corpus.jsonl").read_text(encoding="utf-8").splitlines()
    ]
    queries = [
        json.loads(line) for line in (SET_DIR / "queries.jsonl").read_text(encoding="utf-8").splitlines()
    ]
    lines = (SET_DIR / "qrels" / "test.tsv").read_text(encoding="utf-8").splitlines()
    qrels = [tuple(line.split("\t")) for line in lines[1:]]
    return {"corpus": corpus, "queries": queries, "qrels": qrels, "header": lines[0]}


def doc_text(d: dict) -> str:
    return d["title"] + "\n" + d["text"]


def test_committed_files_are_exactly_what_make_set_writes(make_set, tmp_path: Path):
    make_set.build(tmp_path / "a")
    make_set.build(tmp_path / "b")
    for rel in FILES:
        first = (tmp_path / "a" / rel).read_bytes()
        assert first == (tmp_path / "b" / rel).read_bytes(), f"{rel} differs between two runs"
        assert first == (SET_DIR / rel).read_bytes(), (
            f"{rel} is stale: run python lab/benchmarks/mixed-zh/make_set.py"
        )


def test_beir_shape_and_every_qrel_points_at_a_real_doc_and_query(committed):
    assert committed["header"] == "query-id\tcorpus-id\tscore"
    docs = {d["_id"] for d in committed["corpus"]}
    queries = {q["_id"] for q in committed["queries"]}
    assert len(docs) == len(committed["corpus"]) and len(queries) == len(committed["queries"])  # unique ids
    assert all(set(d) == {"_id", "title", "text"} and d["title"] and d["text"] for d in committed["corpus"])
    assert all(set(q) == {"_id", "text", "kind"} and q["kind"] in KINDS for q in committed["queries"])
    for qid, did, score in committed["qrels"]:
        assert qid in queries and did in docs and score == "1"
    per_query = Counter(qid for qid, _, _ in committed["qrels"])
    assert set(per_query) == queries and set(per_query.values()) == {1}  # exactly one relevant page each
    assert len({q["text"] for q in committed["queries"]}) == len(queries)  # no duplicate questions


def test_the_set_loads_through_the_benchmark_loader():
    from kdesk_lab.retrieval import load_beir

    beir = load_beir(SET_DIR)
    assert len(beir.corpus) >= 140 and len(beir.qrels) == len(beir.queries) >= 300


def test_counts_per_kind_and_document_type(data, make_set):
    kinds = Counter(q["kind"] for q in data["queries"])
    assert set(kinds) == set(KINDS)
    assert all(n >= 30 for n in kinds.values()), kinds
    assert sum(kinds.values()) >= 300
    info = make_set.summary(data)
    assert info["species_pages"] >= 110 and info["product_pages"] >= 30 and info["documents"] >= 140
    share = info["species_pages_without_english"] / info["species_pages"]
    assert 0.15 <= share <= 0.20, share
    # three or more phrasings of every kind are in use
    used: dict[str, set[str]] = {}
    for m in data["meta"].values():
        for _, kind, template in m["questions"]:
            used.setdefault(kind, set()).add(template)
    assert all(len(used[k]) >= 3 for k in KINDS), {k: len(v) for k, v in used.items()}


def test_no_parrots(make_set):
    assert not any(
        "Psittac" in s["family"] or "鹦鹉" in s["zh"] or "鹦" in s["family"] for s in make_set.SPECIES
    )
    assert not any(
        w in (s["en"] or "").lower() for s in make_set.SPECIES for w in ("parrot", "macaw", "cockatoo")
    )


def test_every_binomial_is_on_exactly_one_page_and_genera_are_shared(data, make_set):
    texts = {d["_id"]: doc_text(d) for d in data["corpus"]}
    for doc_id, m in data["meta"].items():
        if m["type"] != "species":
            continue
        latin = m["species"]["latin"]
        holders = [i for i, t in texts.items() if latin in t]
        assert holders == [doc_id], (latin, holders)
    genera = Counter(s["latin"].split()[0] for s in make_set.SPECIES)
    shared = {g: n for g, n in genera.items() if n >= 2}
    assert len(shared) >= 15 and max(shared.values()) >= 4, shared
    assert (
        genera["Panthera"] == 5 and genera["Vulpes"] >= 3 and genera["Acer"] >= 3 and genera["Quercus"] >= 3
    )
    epithets = Counter(s["latin"].split()[1] for s in make_set.SPECIES)
    assert epithets["sinensis"] >= 4 and epithets["vulgaris"] >= 3  # the same epithet across genera


def test_names_that_look_alike(make_set):
    zh = [s["zh"] for s in make_set.SPECIES]
    assert {"雪豹", "云豹", "金钱豹", "赤狐", "北极狐"} <= set(zh)
    words = Counter(w.lower() for s in make_set.SPECIES if s["en_page"] for w in s["en"].split())
    assert words["fox"] >= 3 and words["leopard"] >= 2 and words["maple"] >= 3 and words["red"] >= 5
    series = Counter(re.match(r"[A-Z]+", p["code"]).group() for p in make_set.PRODUCTS)
    assert series["KD"] >= 4 and series["RX"] >= 3 and series["X"] >= 4


def test_english_names_are_where_the_kinds_say(data):
    corpus_lower = "\n".join(doc_text(d) for d in data["corpus"]).lower()
    for m in data["meta"].values():
        if m["type"] != "species":
            continue
        s = m["species"]
        if s["en_page"]:
            assert s["en"] in m_text(data, m), s["zh"]
        else:
            # no English common name anywhere on its page: only ASCII words of the binomial, genus names of
            # sibling references, IUCN/CITES codes and units
            page = m_text(data, m)
            allowed = {
                w
                for o in data["meta"].values()
                if o["type"] == "species"
                for w in o["species"]["latin"].split()
            }
            allowed |= {"IUCN", "CITES", "I", "II", "III", "LC", "NT", "VU", "EN", "CR", "EW", "EX", "DD"}
            allowed |= {"m", "cm", "mm", "kg", "g", "t"}
            assert set(re.findall(r"[A-Za-z]+", page)) <= allowed, (
                s["zh"],
                set(re.findall(r"[A-Za-z]+", page)) - allowed,
            )
            if s["en"]:  # the cross-lingual name is on no page at all
                assert s["en"].lower() not in corpus_lower, s["en"]


def m_text(data: dict, m: dict) -> str:
    doc_id = next(i for i, o in data["meta"].items() if o is m)
    return next(doc_text(d) for d in data["corpus"] if d["_id"] == doc_id)


def test_each_question_names_its_page_the_way_its_kind_says(data):
    docs = {d["_id"]: d for d in data["corpus"]}
    queries = {q["_id"]: q for q in data["queries"]}
    for doc_id, m in data["meta"].items():
        page = doc_text(docs[doc_id])
        for qid, kind, _ in m["questions"]:
            q = queries[qid]["text"]
            ascii_words = re.findall(r"[A-Za-z]{3,}", q)
            if m["type"] == "product":
                code = m["product"]["code"]
                assert kind in ("zh-code", "en-code") and code in q and code in page
                assert (kind == "zh-code") == bool(re.search(r"[\u4e00-\u9fff]", q)), q
                continue
            s = m["species"]
            han = bool(re.search(r"[\u4e00-\u9fff]", q))
            if kind == "zh-name":
                names = (s["zh"],) + s["alias"]
                assert han and any(n in q for n in names) and not ascii_words, q
            elif kind in ("zh-latin", "en-latin"):
                assert s["latin"] in q and han == (kind == "zh-latin"), q
            elif kind in ("zh-english", "en-name"):
                assert s["en_page"] and s["en"].lower() in q.lower() and s["en"].lower() in page.lower(), q
                assert han == (kind == "zh-english"), q
            elif kind == "cross-lingual":
                assert not s["en_page"] and s["en"].lower() in q.lower() and not han, q
                assert s["en"].lower() not in page.lower()
            else:
                raise AssertionError(f"{kind} on a species page")


def test_some_pages_use_question_words_in_ordinary_sentences(data):
    texts = [doc_text(d) for d in data["corpus"]]
    for word in ("名字", "名称", "哪里", "什么", "学名", "叫做", "称为"):
        n = sum(word in t for t in texts)
        assert 3 <= n or word == "学名", (word, n)
        assert n < len(texts) or word == "学名", (word, n)  # a template word is not on every page either


def test_the_set_stays_small():
    assert sum((SET_DIR / rel).stat().st_size for rel in FILES) < 400_000

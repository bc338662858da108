"""KeywordIndex: tokenization, incremental updates, scopes, persistence and recovery."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from desktop_app.core.library.bm25 import FILE_NAME, KeywordIndex, query_terms, tokenize, weighted_scores
from desktop_app.core.library.documents import Chunk


def chunk(doc_id: str, i: int, text: str, scope: str = "shared", heading: list[str] | None = None) -> Chunk:
    return Chunk(
        id=f"{doc_id}-chunk-{i}",
        doc_id=doc_id,
        text=text,
        source=f"{doc_id}.txt",
        page=None,
        heading_path=heading or [],
        chunk_index=i,
        total_chunks=1,
        char_start=0,
        char_end=len(text),
        scope=scope,
    )


def fill(index: KeywordIndex) -> None:
    index.upsert(
        [
            chunk("parrots", 0, "African grey parrots are known for their intelligence and mimicry."),
            chunk("parrots", 1, "Macaws have long tails and bright red, blue and yellow feathers."),
            chunk("cooking", 0, "Boil the pasta in salted water for ten minutes."),
            chunk("zh", 0, "金刚鹦鹉的羽毛颜色鲜艳，尾巴很长。"),
        ]
    )


def test_tokenize_stems_english_and_drops_stopwords():
    assert tokenize("The parrots were flying") == ["parrot", "fli"]


def test_tokenize_gives_chinese_words_and_bigrams_within_mixed_text():
    tokens = tokenize("BM25算法的原理")
    assert tokens[0] == "bm25"
    assert {"算法", "原理"} <= set(tokens)  # jieba words
    assert {"法的", "的原"} <= set(tokens)  # character bigrams
    assert tokenize("鸟") == ["鸟"]
    assert tokenize("  ,,, ") == []


def test_latin_pieces_of_chinese_text_are_names():
    tokens = tokenize("学名：Panthera uncia；英文名：Snow Leopard。雪豹生活在高山。")
    # the words, as in English text, plus one name term per piece
    assert {"panthera", "uncia", "snow", "leopard"} <= set(tokens)
    assert {"_panthera_uncia", "_snow_leopard"} <= set(tokens)
    # a piece of one word is a name too: the page of "KD-3300 Pro" does not name "KD-3300"
    assert "_kd-3300" in tokenize("KD-3300 产品规格") and "_kd-3300" not in tokenize("无线吸尘器 KD-3300 Pro")
    assert "_kd-3300_pro" in tokenize("# 无线吸尘器 KD-3300 Pro（升级版）")
    assert "_lion" in tokenize("英文名为 Lion。") and "_lion" not in tokenize("英文名为 Lion's Mane。")
    # numbers with units inside Chinese: their words, and the code as a name
    assert {"12v", "1", "5a", "_12v/1.5a"} <= set(tokenize("输入为 12V/1.5A，最大功耗 15 W"))
    assert {"802", "11ax", "wi", "fi", "6", "_wi-fi_6", "_802.11ax"} <= set(tokenize("支持 Wi-Fi 6（802.11ax）"))
    # Markdown around a name is not part of it
    assert {"_x7_pro", "_rx-580t"} <= set(tokenize("**X7 Pro** 对比 | RX-580T |"))
    # English text has no name terms: word pairs would change English ranking (docs)
    assert tokenize("The snow leopard (Panthera uncia) lives in KD-3300 country") == [
        "snow", "leopard", "panthera", "uncia", "live", "kd", "3300", "countri"
    ]


def test_traditional_and_simplified_chinese_give_the_same_terms():
    assert tokenize("戲曲鑼鼓所運用的敲擊樂器") == tokenize("戏曲锣鼓所运用的敲击乐器")
    assert query_terms("臺灣的學名為 Ursus thibetanus 的熊") == query_terms("台湾的学名为 Ursus thibetanus 的熊")


def test_query_terms_weigh_a_chinese_run_as_its_words_and_offer_names():
    terms, weights = query_terms("学名为 Panthera uncia 的动物叫什么名字？")
    by_term: dict[str, float] = {}
    for t, w in zip(terms, weights):
        by_term[t] = by_term.get(t, 0.0) + w
    assert by_term["panthera"] == by_term["uncia"] == by_term["_panthera_uncia"] == 1.0
    # "的动物叫什么名字": 5 jieba words and 7 bigrams weigh 5 in all
    cjk = [w for t, w in zip(terms, weights) if t[0] >= "\u3400" and t not in ("学名", "为", "名为")]
    assert sum(cjk) == pytest.approx(5.0)
    # an English question offers its words and word pairs as names, which only names in Chinese
    # text match
    terms, weights = query_terms("What is the rated power of the PM-220 Max?")
    assert {"_pm-220", "_pm-220_max", "_rate_power", "_max"} <= set(terms) and set(weights) == {1.0}
    assert query_terms("鸟") == (["鸟"], [1.0])


def test_an_exact_latin_name_in_a_chinese_question_ranks_its_page_first(tmp_path: Path):
    """Many Chinese terms must not drown two Latin ones, nor may a question word that happens to
    be rare in the library outrank the binomial itself."""
    index = KeywordIndex(tmp_path)
    page = "{zh}，学名 {latin}，英文名 {en}。{zh}生活在{where}，以{food}为食，体长约 {n} cm。"
    animals = [
        ("雪豹", "Panthera uncia", "Snow Leopard", "高山", "岩羊"),
        ("金钱豹", "Panthera pardus", "Leopard", "森林", "鹿"),
        ("虎", "Panthera tigris", "Tiger", "森林", "野猪"),
        ("狮", "Panthera leo", "Lion", "草原", "斑马"),
        ("云豹", "Neofelis nebulosa", "Clouded Leopard", "森林", "猴"),
        ("猞猁", "Lynx lynx", "Eurasian Lynx", "针叶林", "野兔"),
        ("赤狐", "Vulpes vulpes", "Red Fox", "草原", "鼠"),
        ("北极狐", "Vulpes lagopus", "Arctic Fox", "冻原", "旅鼠"),
    ]
    chunks = [
        chunk(latin.split()[1], 0, page.format(zh=zh, latin=latin, en=en, where=where, food=food, n=60 + i))
        for i, (zh, latin, en, where, food) in enumerate(animals)
    ]
    # One page holds the question's words 叫 and 名字, each as rare as the binomial.
    chunks.append(chunk("naming", 0, "兔狲的名字来源于蒙古语，当地人也叫它洋猞猁。学名 Otocolobus manul。"))
    index.upsert(chunks)
    assert index.search_docs("学名为 Panthera uncia 的动物叫什么名字？", 1)[0][0] == "uncia"
    assert index.search_docs("Snow Leopard 叫什么名字？主要生活在哪里？", 1)[0][0] == "uncia"
    assert index.search_docs("Where does the clouded leopard live?", 1)[0][0] == "nebulosa"
    assert index.search_docs("Vulpes lagopus 吃什么？", 1)[0][0] == "lagopus"


def test_search_ranks_matching_chunk_first_with_positive_scores(tmp_path: Path):
    index = KeywordIndex(tmp_path)
    fill(index)
    hits = index.search("which parrot mimics speech?", k=5)
    assert hits[0][0] == "parrots-chunk-0"
    assert all(score > 0 for _, score in hits)
    assert [s for _, s in hits] == sorted((s for _, s in hits), reverse=True)
    assert index.search("金刚鹦鹉的尾巴", k=3)[0][0] == "zh-chunk-0"


def test_search_leaves_out_chunks_without_any_query_term(tmp_path: Path):
    index = KeywordIndex(tmp_path)
    fill(index)
    assert [cid for cid, _ in index.search("pasta", k=10)] == ["cooking-chunk-0"]
    assert index.search("submarine", k=10) == []
    assert index.search("the of and", k=10) == []  # stopwords only


def test_search_respects_k(tmp_path: Path):
    index = KeywordIndex(tmp_path)
    index.upsert([chunk(f"d{i}", 0, f"parrot number {i}") for i in range(20)])
    assert len(index.search("parrot", k=7)) == 7


def test_upsert_replaces_all_previous_chunks_of_a_document(tmp_path: Path):
    index = KeywordIndex(tmp_path, translate=False)  # "macaw" would find the Chinese page's 金刚鹦鹉
    fill(index)
    index.upsert([chunk("parrots", 0, "Cockatoos raise their crest when excited.")])
    assert index.search("macaw tails", k=5) == []
    assert index.search("cockatoo crest", k=5)[0][0] == "parrots-chunk-0"
    assert index.doc_ids() == {"parrots", "cooking", "zh"}
    assert len(index) == 3


def test_delete_docs_removes_their_chunks(tmp_path: Path):
    index = KeywordIndex(tmp_path, translate=False)
    fill(index)
    index.delete_docs(["parrots", "unknown-doc"])
    assert index.doc_ids() == {"cooking", "zh"}
    assert index.search("parrot", k=5) == []


def test_a_question_finds_pages_in_the_other_language_by_its_words_translations(tmp_path: Path):
    index = KeywordIndex(tmp_path)
    fill(index)
    assert index.search("macaw tails", k=5)[0][0] == "parrots-chunk-1"  # its own language first
    assert "zh-chunk-0" in [c for c, _ in index.search("macaw tails", k=5)]  # 金刚鹦鹉, 尾巴
    assert index.search("尾巴很长的鹦鹉", k=5)[0][0] == "zh-chunk-0"
    assert "parrots-chunk-1" in [c for c, _ in index.search("尾巴很长的鹦鹉", k=5)]  # tail, parrot
    # Only what the library holds is looked for: no Chinese page, no Chinese terms.
    english = KeywordIndex(tmp_path / "en")
    english.upsert([chunk("cooking", 0, "Boil the pasta in salted water for ten minutes.")])
    assert english.query_terms("How long do I boil pasta?") == query_terms("How long do I boil pasta?")
    off = KeywordIndex(tmp_path / "off", translate=False)
    fill(off)
    assert "zh-chunk-0" not in [c for c, _ in off.search("macaw tails", k=5)]


def test_scopes_filter_search(tmp_path: Path):
    index = KeywordIndex(tmp_path)
    index.upsert([chunk("a", 0, "parrot shared notes")])
    index.upsert([chunk("b", 0, "parrot notes of the vet", scope="vet")])
    assert {c for c, _ in index.search("parrot", 5, scopes={"shared"})} == {"a-chunk-0"}
    assert {c for c, _ in index.search("parrot", 5, scopes={"shared", "vet"})} == {"a-chunk-0", "b-chunk-0"}
    assert {c for c, _ in index.search("parrot", 5)} == {"a-chunk-0", "b-chunk-0"}


def test_heading_path_is_searchable_in_every_chunk(tmp_path: Path):
    index = KeywordIndex(tmp_path)
    index.upsert([chunk("d", 3, "they eat seeds and fruit", heading=["Kakapo"])])
    assert index.search("kakapo", 5)[0][0] == "d-chunk-3"


def test_flush_persists_and_a_new_instance_reloads(tmp_path: Path):
    index = KeywordIndex(tmp_path)
    fill(index)
    before = index.search("parrot intelligence", 5)
    index.flush()
    assert not list(tmp_path.glob("*.tmp"))
    again = KeywordIndex(tmp_path)
    assert again.load_error is None
    assert again.doc_ids() == {"parrots", "cooking", "zh"}
    assert again.search("parrot intelligence", 5) == before


def test_changes_after_flush_are_not_persisted_until_next_flush(tmp_path: Path):
    index = KeywordIndex(tmp_path)
    fill(index)
    index.flush()
    index.delete_docs(["cooking"])
    assert "cooking" in KeywordIndex(tmp_path).doc_ids()
    index.flush()
    assert "cooking" not in KeywordIndex(tmp_path).doc_ids()


def test_search_sees_updates_made_after_the_model_was_built(tmp_path: Path):
    index = KeywordIndex(tmp_path)
    fill(index)
    assert index.search("kiwi", 5) == []
    index.upsert([chunk("kiwi", 0, "The kiwi is a flightless bird.")])
    assert index.search("kiwi", 5)[0][0] == "kiwi-chunk-0"


def test_corrupt_file_starts_empty_with_a_reason_and_is_set_aside(tmp_path: Path):
    (tmp_path / FILE_NAME).write_text("{not json", encoding="utf-8")
    index = KeywordIndex(tmp_path)
    assert index.doc_ids() == set()
    assert index.load_error and "double quotes" in index.load_error  # JSON's own words
    (aside,) = tmp_path.glob(f"{FILE_NAME}.damaged-*")  # kept beside it, never deleted
    assert aside.read_text(encoding="utf-8") == "{not json"
    fill(index)  # the KnowledgeBase re-feeds it
    index.flush()
    assert KeywordIndex(tmp_path).doc_ids() == {"parrots", "cooking", "zh"}


def test_file_from_another_tokenizer_version_is_discarded(tmp_path: Path):
    index = KeywordIndex(tmp_path)
    fill(index)
    index.flush()
    data = json.loads((tmp_path / FILE_NAME).read_text(encoding="utf-8"))
    data["tokenizer"] = "old"
    (tmp_path / FILE_NAME).write_text(json.dumps(data), encoding="utf-8")
    assert KeywordIndex(tmp_path).doc_ids() == set()


def test_missing_directory_and_empty_index_are_fine(tmp_path: Path):
    index = KeywordIndex(tmp_path / "not" / "yet")
    assert index.search("anything", 5) == []
    index.flush()
    assert (tmp_path / "not" / "yet" / FILE_NAME).exists()


def test_chunk_with_no_terms_does_not_break_the_index(tmp_path: Path):
    index = KeywordIndex(tmp_path)
    index.upsert([chunk("empty", 0, "... !!!"), chunk("full", 0, "parrot")])
    assert index.search("parrot", 5) == [("full-chunk-0", index.search("parrot", 5)[0][1])]
    assert index.doc_ids() == {"empty", "full"}


def test_score_chunks_gives_scores_for_named_chunks_only(tmp_path: Path):
    index = KeywordIndex(tmp_path)
    fill(index)
    top = dict(index.search("parrot intelligence", 5))
    got = index.score_chunks("parrot intelligence", ["parrots-chunk-0", "cooking-chunk-0", "nope"])
    assert got["parrots-chunk-0"] == top["parrots-chunk-0"]
    assert got["cooking-chunk-0"] == 0.0
    assert "nope" not in got


def test_search_docs_scores_whole_documents_even_when_terms_are_spread_over_chunks(tmp_path: Path):
    index = KeywordIndex(tmp_path)
    index.upsert(
        [
            chunk("kakapo", 0, "The kakapo is a flightless parrot.", heading=["Kakapo"]),
            chunk("kakapo", 1, "It is active at night and feeds on rimu fruit.", heading=["Kakapo"]),
            chunk("kea", 0, "The kea is an alpine parrot that is active by day.", heading=["Kea"]),
            chunk("pasta", 0, "Boil the pasta at night or by day.", heading=["Pasta"]),
        ]
    )
    docs = index.search_docs("flightless parrot active at night", k=5)
    # No chunk of the kakapo holds all three terms; the document does.
    assert docs[0][0] == "kakapo" and docs[0][1] > docs[1][1] > 0
    assert [d for d, _ in docs] == ["kakapo", "kea", "pasta"]
    assert index.search_docs("kakapo", k=1, scopes={"other"}) == []
    assert index.score_docs("flightless parrot active at night", ["kakapo", "nope"]) == {"kakapo": docs[0][1]}
    # Its best chunk for the query comes first; with no matching chunk, chunk order.
    assert [c for c, _ in index.best_chunks("rimu fruit", "kakapo", 2)] == [
        "kakapo-chunk-1",
        "kakapo-chunk-0",
    ]
    assert [c for c, _ in index.best_chunks("zebra", "kakapo", 1)] == ["kakapo-chunk-0"]


def test_document_terms_count_overlap_and_repeated_headings_once(tmp_path: Path):
    overlap = "Rangers weigh every kakapo each month."
    one = KeywordIndex(tmp_path / "one")
    one.upsert([chunk("d", 0, "Kakapo nest on the ground. " + overlap, heading=["Kakapo"])])
    split = KeywordIndex(tmp_path / "split")
    split.upsert(
        [
            chunk("d", 0, "Kakapo nest on the ground. " + overlap, heading=["Kakapo"]),
            chunk("d", 1, overlap + " They breed in rimu years.", heading=["Kakapo"]),
        ]
    )
    for index in (one, split):
        index.upsert([chunk("other", 0, "Kea live in the mountains.", heading=["Kea"])])
    entries = split._entries
    assert entries["d-chunk-1"].skip == len(tokenize(overlap))  # no name terms in English text
    # The split document scores "weigh" no higher than the single chunk: the repeated heading
    # and the overlap sentence are not counted twice (only "rimu"/"breed"/"year" were added).
    assert split.score_docs("weigh", ["d"])["d"] < one.score_docs("weigh", ["d"])["d"] * 1.01
    split.flush()
    again = KeywordIndex(tmp_path / "split")
    assert again.search_docs("rimu kakapo", 2) == split.search_docs("rimu kakapo", 2)
    assert again._entries["d-chunk-1"].skip == entries["d-chunk-1"].skip


def test_the_bm25s_internals_read_are_what_they_were():
    """weighted_scores and KeywordIndex.doc_freq read bm25s' index internals (pyproject.toml pins
    the minor): if a bm25s release moves them, this fails here rather than ranking quietly wrong."""
    import bm25s
    import numpy as np

    docs = [["grey", "parrot", "parrot"], ["macaw", "tail"], ["parrot", "macaw", "seed"], [""]]
    model = bm25s.BM25()
    model.index(docs, show_progress=False)
    assert {"data", "indices", "indptr", "num_docs"} <= set(model.scores)
    assert model.scores["num_docs"] == len(docs)
    assert set(model.vocab_dict) == {t for d in docs for t in d}
    indptr = model.scores["indptr"]
    df = {t: int(indptr[i + 1] - indptr[i]) for t, i in model.vocab_dict.items()}
    assert (df["parrot"], df["macaw"], df["grey"]) == (2, 2, 1)  # a term's column: the documents holding it
    for terms in (["parrot"], ["macaw", "seed"], ["grey", "tail", "parrot"]):
        expected = model.get_scores(terms)  # the public API, with every weight 1
        assert np.allclose(weighted_scores(model, terms, [1.0] * len(terms)), expected, rtol=1e-6)
    weighted = weighted_scores(model, ["parrot", "seed"], [2.0, 0.5])
    expected = 2.0 * model.get_scores(["parrot"]) + 0.5 * model.get_scores(["seed"])
    assert np.allclose(weighted, expected, rtol=1e-6)
    assert weighted_scores(model, ["absent"], [1.0]) is None

"""`kdesk bench conversations`: its pages, scripts and per-turn scoring, and one small real run."""

from __future__ import annotations

from types import SimpleNamespace

from kdesk_lab.conversations import (
    load_facts,
    names_it,
    run_conversations_bench,
    says_not_in_notes,
    scripts_for,
    summarise,
    write_prose,
    write_repo,
    write_zh_fields,
)


def test_the_chinese_field_pages_are_written_as_the_held_out_base_is(tmp_path):
    species = write_zh_fields(tmp_path, load_facts()[:1])
    page = (tmp_path / species[0].doc).read_text(encoding="utf-8").splitlines()
    assert page[0] == "# 绯红金刚鹦鹉"
    assert [line.split("：")[0] for line in page[2:]] == [
        "- 英文名",
        "- 学名",
        "- 分布",
        "- 体长",
        "- 食性",
        "- 羽色",
    ]
    assert species[0].facts["where"] and species[0].facts["name"] == "绯红金刚鹦鹉"


def test_a_page_without_a_diet_expects_not_in_the_notes(tmp_path):
    facts = [f for f in load_facts() if f["diet_en"] is None][:1]
    assert facts, "some species' pages must say nothing of the diet"
    for write in (write_zh_fields, write_prose):
        (sp,) = write(tmp_path / write.__name__, facts)
        assert sp.facts["diet"] is None
        page = (tmp_path / write.__name__ / sp.doc).read_text(encoding="utf-8")
        assert not any(w in page for w in (" eats ", " feeds on ", "Its food", "食性"))


def test_the_repo_style_reads_its_gold_from_each_notes_own_fields(tmp_path):
    species = {s.key: s for s in write_repo(tmp_path, load_facts())}
    kea = species["kea"]
    assert kea.doc == "parrots/kea.md" and kea.facts["where"] == "Southern Alps of New Zealand"
    assert kea.facts["size"] == "48" and kea.facts["diet"] is None  # the repo's notes never give it


def test_scripts_cover_photo_follow_ups_a_language_switch_and_a_second_photo(tmp_path):
    a, b = write_prose(tmp_path, load_facts()[:2])
    scripts = list(scripts_for(a, tmp_path / "a.jpg", b, tmp_path / "b.jpg"))
    names = {(s.name, s.lang) for s in scripts}
    assert {
        ("photo", "en"),
        ("photo", "zh"),
        ("text", "en"),
        ("switch", "zh"),
        ("second-photo", "en"),
    } <= names
    switch = next(s for s in scripts if s.name == "switch" and s.lang == "en")
    assert [t.lang for t in switch.turns] == ["en", "zh", "en"]
    second = next(s for s in scripts if s.name == "second-photo")
    assert second.turns[2].kind == "photo" and second.turns[3].subject == b.key


def test_scoring_names_a_species_by_any_of_its_names_and_reads_not_in_the_notes(tmp_path):
    (sp,) = write_zh_fields(tmp_path, load_facts()[:1])
    assert names_it("Where does Scarlet Macaw live", sp) and names_it("绯红金刚鹦鹉有多大", sp)
    assert not names_it("Where does macaw live", sp)
    assert says_not_in_notes(
        SimpleNamespace(text="The notes about the Kea do not say what it eats.", refused=False)
    )
    assert says_not_in_notes(SimpleNamespace(text="关于啄羊鹦鹉的笔记没有提到它吃什么。", refused=False))
    assert not says_not_in_notes(SimpleNamespace(text="Seeds and fruit. [1]", refused=False))


def test_a_small_run_scores_every_turn_per_style_and_language():
    result = run_conversations_bench(styles=["zh-fields"], photos="none", limit=2, scripts=["single"])
    assert result.turns and all(t.style == "zh-fields" and t.script == "single" for t in result.turns)
    summary = summarise(result.turns)["zh-fields"]
    assert set(summary["by_lang"]) == {"en", "zh"} and summary["all"]["turns"] == len(result.turns)
    name = [t for t in result.turns if t.fact == "name"]
    assert name and all(t.gold_ok and t.cited_ok for t in name)  # the page's title for its Latin name


def test_an_answer_over_candidates_is_scored_on_the_turn_species_item_alone(tmp_path):
    from desktop_app.core.ask.conversation import Conversation
    from desktop_app.core.events import Answer, Citation, RouteDecided
    from kdesk_lab.conversations import Script, Turn, _run_turn

    scarlet, green = write_zh_fields(tmp_path, load_facts()[:2])
    by_key = {scarlet.key: scarlet, green.key: green}

    class Hedging:
        def __init__(self, items: list[str]) -> None:
            self.items = items

        def ask(self, question, conv):
            yield RouteDecided(
                True, f"Where does {scarlet.en} live / Where does {green.en} live", True, "heuristic"
            )
            text = "\n".join(["The photo could be any of these in your notes: ...", "", *self.items])
            yield Answer(
                text, [Citation(1, scarlet.doc, None, "c", ""), Citation(2, green.doc, None, "d", "")]
            )

    def score(items: list[str], about=scarlet):
        conv = Conversation(subject_options=[scarlet.title, green.title])
        turn = Turn("ask", "Where does it live?", "en", about.key, "where")
        return _run_turn(
            Hedging(items),
            conv,
            "zh-fields",
            Script("photo", "en", [turn]),
            1,
            turn,
            by_key,
            Answer,
            RouteDecided,
        )

    right = [
        f"- If it is the {scarlet.title}: {scarlet.facts['where']} [1]",
        f"- If it is the {green.title}: elsewhere [2]",
    ]
    row = score(right)
    assert row.gold_ok and row.cited_ok and not row.refused
    assert not row.subject_ok  # no one subject was searched: the species is still open
    # The species' range under another candidate's name is not its answer.
    swapped = [f"- If it is the {green.title}: {scarlet.facts['where']} [1]"]
    assert not score(swapped).gold_ok

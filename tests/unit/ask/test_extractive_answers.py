"""The extractive answer leads with the sentence that answers, by question type, in both languages."""

from __future__ import annotations

import pytest

from desktop_app.core.ask.budget import fit_blocks
from desktop_app.core.ask.extractive import extractive_answer, question_type
from desktop_app.core.library.documents import Hit


def blocks_of(*texts: str, sources: tuple[str, ...] | None = None):
    hits = [
        Hit(
            f"d{i}-chunk-0",
            f"d{i}",
            text,
            (sources or ())[i - 1] if sources else f"doc{i}.md",
            None,
            0,
            1,
            1.0,
        )
        for i, text in enumerate(texts, 1)
    ]
    return fit_blocks(hits, 4000)


def first_line(text: str) -> str:
    """The answer's lead: the line after the note."""
    return text.split("\n\n")[1].splitlines()[0]


@pytest.mark.parametrize(
    ("question", "kind"),
    [
        ("Who wrote the Emancipation Proclamation?", "person"),
        ("Whose portrait is on the coin?", "person"),
        ("When did Lincoln begin his political career?", "date"),
        ("In what year was the treaty signed?", "date"),
        ("Where was Coolidge born?", "place"),
        ("How many species of elephant are there?", "number"),
        ("How much did the canal cost?", "number"),
        ("Which river forms the border?", "which"),
        ("Why did the army retreat?", "reason"),
        ("What do beetles eat?", "diet"),
        ("徐夫人最先嫁给了谁？", "person"),
        ("耶律乙辛在什么时候被封为赵王？", "date"),
        ("他出生于哪一年？", "date"),
        ("浪花鱼在什么地方栖息？", "range"),
        ("真君庙位于哪里？", "place"),
        ("这座桥有多少个桥墩？", "number"),
        ("他为什么离开了球队？", "reason"),
        ("哪个公司发行了这款游戏？", "which"),
        ("月代的发型是什么样的？", "other"),
    ],
)
def test_question_types(question: str, kind: str):
    assert question_type(question) == kind


def test_who_leads_with_the_sentence_naming_the_person_not_the_wordier_intro():
    blocks = blocks_of(
        "徐夫人是三国时期吴国孙权的夫人，吴郡富春人，徐夫人的祖父徐真与孙坚交好。"
        "徐夫人最先嫁给了同郡的陆尚，陆尚去世后，孙权娶她为妻。"
        "后来孙权迁居秣陵，徐夫人因妒忌被废，留在吴郡。"
    )
    ex = extractive_answer("徐夫人最先嫁给了谁？", blocks)
    assert ex.text.startswith("未配置语言模型")
    assert "陆尚" in ex.lead and "祖父" not in ex.lead
    assert first_line(ex.text).endswith("[1]")


def test_when_leads_with_the_asked_event_not_the_adjacent_year():
    blocks = blocks_of(
        "耶律乙辛是辽朝的权臣，出身于五院部。"
        "清宁五年（1059年），被辽道宗任命为南院枢密使，封赵王。"
        "清宁九年（1063年），辽道宗又任命耶律乙辛为北院枢密使，进封魏王。"
    )
    ex = extractive_answer("耶律乙辛在什么时候被封为赵王？", blocks)
    assert ex.lead.startswith("清宁五年") and "清宁九年" not in ex.lead


def test_when_prefers_the_sentence_with_a_date_near_the_question_words():
    blocks = blocks_of(
        "Lincoln's political career was long and often difficult for him and his family. "
        "He began his political career in 1832, at age 23, with a campaign for the Illinois "
        "General Assembly. He studied law on his own and was admitted to the bar."
    )
    ex = extractive_answer("When did Lincoln begin his political career?", blocks)
    assert "1832" in ex.lead


def test_an_abbreviation_does_not_cut_the_answering_sentence():
    blocks = blocks_of(
        "Ford was commissioned in the U.S. Naval Reserve on April 13, 1942, as an ensign. "
        "He served on the light aircraft carrier Monterey."
    )
    ex = extractive_answer("When was Ford commissioned in the U.S. Naval Reserve?", blocks)
    assert ex.lead == "Ford was commissioned in the U.S. Naval Reserve on April 13, 1942, as an ensign."


def test_how_many_prefers_the_sentence_with_a_number():
    blocks = blocks_of(
        "The African elephant species are among the best studied large mammals. "
        "Researchers now recognise two species of African elephant, the bush and the forest elephant. "
        "Species of elephant differ in the shape of their ears."
    )
    ex = extractive_answer("How many species of African elephant are there?", blocks)
    assert "two species" in ex.lead


def test_where_prefers_the_sentence_with_a_place_in_chinese():
    blocks = blocks_of(
        "浪花鱼为辐鳍鱼纲银汉鱼目浪花鱼科的其中一种鱼类，体形细长。"
        "本鱼栖息于沿岸碎波带，即使在潮池亦可见到。"
        "体长可达10公分。"
    )
    ex = extractive_answer("浪花鱼在什么地方栖息？", blocks)
    assert "沿岸碎波带" in ex.lead


def test_why_prefers_the_sentence_giving_a_reason():
    blocks = blocks_of(
        "The army retreated across the river in early May. "
        "The army retreated because its supply lines had been cut by the spring floods. "
        "The river was high that year."
    )
    ex = extractive_answer("Why did the army retreat?", blocks)
    assert "because" in ex.lead


def test_a_restatement_of_the_question_loses_to_the_sentence_that_adds_the_answer():
    blocks = blocks_of(
        "Cleveland died in 1908. Cleveland died from a heart attack with his wife at his side. "
        "He was buried in Princeton."
    )
    ex = extractive_answer("What did Cleveland die from?", blocks)
    assert "heart attack" in ex.lead


def test_who_with_a_pronoun_lead_brings_the_sentence_that_names_the_person():
    blocks = blocks_of(
        "In 1764, Watt married his cousin Margaret Miller, with whom he had five children. "
        "She died in childbirth in 1772. In 1777 he married again."
    )
    ex = extractive_answer("Who died in childbirth in 1772?", blocks)
    assert "Margaret Miller" in ex.lead and "1772" in ex.lead


def test_a_sentence_about_someone_else_does_not_win_on_the_asked_word():
    blocks = blocks_of(
        "机器人世界杯让有着不同兴趣爱好和能力的参赛者组成团队，协同工作。",
        "尚恩在爱尔兰斯莱戈郡长大，有两个兄弟、三个姊妹。他的爱好是骑马，曾从马背上摔下来。",
    )
    ex = extractive_answer("尚恩有什么爱好？", blocks)
    assert "骑马" in ex.lead and ex.cited[0] == 2


def test_lead_then_at_most_two_cited_supporting_sentences():
    blocks = blocks_of(
        "African grey parrots eat palm nuts and seeds. They are grey. The macaw is large.",
        "Budgerigars come from Australia. Grey parrots also eat snails in the wild.",
    )
    ex = extractive_answer("What do African grey parrots eat?", blocks)
    body = ex.text.split("\n\n", 1)[1]
    assert ex.text.startswith("No language model is configured; these are the most relevant passages.")
    assert first_line(ex.text) == "African grey parrots eat palm nuts and seeds. [1]"
    assert ex.lead == "African grey parrots eat palm nuts and seeds."
    assert 1 <= len(ex.support) <= 2
    assert all(line.startswith("- ") and line.endswith("]") for line in body.splitlines()[2:])
    assert "Grey parrots also eat snails in the wild. [2]" in body


def test_duplicate_passages_never_take_two_citation_slots():
    text = "Grey parrots eat palm nuts and seeds. They also eat snails and fruit in the wild."
    blocks = blocks_of(text, text.replace("fruit", "fruits"), "Macaws eat clay to bind toxins from seeds.")
    ex = extractive_answer("What do grey parrots eat?", blocks)
    assert 2 not in ex.cited
    assert ex.text.count("palm nuts") == 1


def test_a_chinese_answer_has_no_comma_initial_fragment():
    blocks = blocks_of("该作品于1998年发行.，销量超过100万份。续作于2001年推出，销量为50万份。")
    ex = extractive_answer("该作品的销量是多少？", blocks)
    for line in ex.text.split("\n\n", 1)[1].splitlines():
        assert not line.lstrip("- ").startswith(("，", ","))


def test_a_chinese_answer_worded_otherwise_than_its_question_is_found():
    blocks = blocks_of(
        "郭麐是清代文学家，著有《灵芬馆诗话》，郭麐与袁枚交好，郭麐晚年居于嘉善。"
        "卒于道光十一年（1831年），年六十五。"
    )
    ex = extractive_answer("郭麐在哪一年去世？", blocks)
    assert "道光十一年" in ex.lead


def test_a_habit_question_finds_the_habitat_sentence():
    # 生活习性 is answered by where the fish lives (栖息), not by its name line
    blocks = blocks_of(
        "青斑阿南鱼，又称青点鹦鲷，为隆头鱼科的其中一种。青斑阿南鱼分布于印度洋及太平洋。"
        "青斑阿南鱼体长可达二十七公分。青斑阿南鱼的体色为绿色。本鱼栖息在礁区水流湍急处，白天觅食，晚上钻沙而眠。"
        "青斑阿南鱼具性转变的行为。"
    )
    ex = extractive_answer("青斑阿南鱼的生活习性是怎样的？", blocks)
    assert "栖息在礁区" in ex.text


@pytest.mark.parametrize(
    ("question", "sentence", "short"),
    [
        (
            "When was Coolidge born?",
            "John Calvin Coolidge Jr. was born in Plymouth, Windsor County, Vermont, on July 4 1872, "
            "the only U.S. President to be born on the fourth of July.",
            "July 4 1872",
        ),
        (
            "How old was Lincoln in 1816?",  # the question's own year is not the answer
            "Lincoln was just seven years old when, in 1816, the family moved to Indiana.",
            "seven years",
        ),
        ("郭麐在哪一年去世？", "郭麐，字祥伯，卒于1831年，享年六十五岁。", "1831年"),
        # the measure word asked for picks the number: 多少场 -> 场, not the age
        ("罗利马为列斯联上阵多少场？", "他37岁退役，为列斯联共上阵703场，攻入九十球。", "703场"),
        ("How many living species of African elephants are there?", "No number is given here.", ""),
        # a bare year is no count, and a price wants money, not a year
        ("How many children did Cleveland have?", "In 1904 his daughter Ruth died.", ""),
        ("吴淞路闸桥拆除花了多少钱？", "该桥于2009年拆除，耗资3000万元。", "3000万元"),
        ("吴淞路闸桥拆除花了多少钱？", "该桥于2009年拆除。", ""),
        # names are not picked (too often the wrong capitalised words); the sentence answers
        ("Who determined the boiling point?", "Anders Celsius determined it in 1742.", ""),
        ("What shape are a leopard's rosettes?", "They are circular in East Africa.", ""),
    ],
)
def test_short_answer_is_the_date_or_number_nearest_the_question(question, sentence, short):
    from desktop_app.core.ask.extractive import question_type, short_answer

    assert short_answer(question, question_type(question), sentence) == short


def test_the_short_answer_leads_and_the_sentence_that_says_it_follows():
    blocks = blocks_of(
        "Calvin Coolidge was the thirtieth President. He was born in Plymouth, Vermont, on July 4 "
        "1872. He died in 1933."
    )
    ex = extractive_answer("When was Coolidge born?", blocks)
    body = ex.text.split("\n\n", 1)[1]
    assert body.startswith("**July 4 1872** [1]\n")
    assert "He was born in Plymouth, Vermont, on July 4 1872. [1]" in body
    assert ex.short == "July 4 1872" and ex.cited == [1]


def test_no_short_answer_when_the_sentence_is_about_the_subject_but_not_what_is_asked():
    """李成栋有几个儿子？ over a page that never counts his sons: the best sentence names him, not
    his sons, so no number is put forward as the answer (it read "**一**")."""
    blocks = blocks_of("李成栋，字廷贞，山西人。原为李闯军部将，降明、降清，一生叛降无常。")
    ex = extractive_answer("李成栋有几个儿子？", blocks)
    assert ex.short == "" and not first_line(ex.text).startswith("**")


# ------------------------------------------------------------------------------ facts of species notes
def _note(i: int, source: str, text: str) -> object:
    from desktop_app.core.ask.budget import ContextBlock
    from desktop_app.core.library.documents import Hit

    title = text.splitlines()[0].lstrip("# ").strip()
    hit = Hit(f"{source}#0", source, text, source, None, 0, 1, 1.0, heading_path=[title])
    return ContextBlock(i, hit, text)


KEA = (
    "# Kea (Nestor notabilis)\n\nChinese: 啄羊鹦鹉.\n\n**Colours:** Olive green body; bright orange red under the "
    "wings.\n\n**Where and size:** Southern Alps of New Zealand; about 48 cm."
)
KAKAPO = (
    "# Kakapo (Strigops habroptilus)\n\n**Where and size:** New Zealand; critically endangered; about 60 cm."
)
SCARLET_ZH = (
    "# 绯红金刚鹦鹉\n\n- 英文名：Scarlet Macaw\n- 学名：Ara macao\n- 分布：墨西哥南部至亚马孙盆地的湿润低地森林\n"
    "- 体长：81–96 厘米\n- 羽色：全身鲜红，翼上有黄色带"
)


@pytest.mark.parametrize(
    "question, kind",
    [
        ("Where does the kea live?", "range"),
        ("它分布在哪里？", "range"),
        ("How big is it?", "size"),
        ("它有多大？", "size"),
        ("What does a kea eat?", "diet"),
        ("它吃什么？", "diet"),
        ("What colour is a kea?", "colour"),
        ("What is the scientific name of the kea?", "latin"),
        ("学名为 Ara macao 的鹦鹉叫什么名字？", "name"),
        ("What is the parrot with the scientific name Ara macao called?", "name"),
        ("Where was Lincoln born?", "place"),  # a place, not a species' range
    ],
)
def test_question_types_of_species_facts(question: str, kind: str):
    assert question_type(question) == kind


def test_a_where_question_quotes_the_subjects_range_clause_not_its_colours():
    ex = extractive_answer(
        "Where does the kea live?", [_note(1, "kakapo.md", KAKAPO), _note(2, "kea.md", KEA)]
    )
    assert ex.lead == "Kea: Southern Alps of New Zealand" and ex.cited == [2]
    assert "Colours" not in ex.text and "Kakapo" not in ex.text  # another species' range answers nothing


def test_a_size_question_quotes_the_size_clause_of_a_field_giving_two_kinds():
    ex = extractive_answer("它有多大？", [_note(1, "kea.md", KEA)], about="Kea有多大")
    assert ex.lead == "Kea：about 48 cm." and ex.cited == [1]


def test_a_fact_the_subjects_note_lacks_is_said_to_be_missing():
    ex = extractive_answer("What does a kea eat?", [_note(1, "kea.md", KEA), _note(2, "kakapo.md", KAKAPO)])
    assert "The notes about the Kea do not say what it eats." in ex.text and ex.cited == [1]
    zh = extractive_answer("它吃什么？", [_note(1, "kea.md", KEA)], about="Kea吃什么")
    assert "关于Kea的笔记没有提到它吃什么。" in zh.text


def test_a_question_for_a_pages_name_is_answered_with_its_title():
    blocks = [_note(1, "kea.md", KEA), _note(2, "scarlet.md", SCARLET_ZH)]
    ex = extractive_answer("学名为 Ara macao 的鹦鹉叫什么名字？", blocks)
    assert "**绯红金刚鹦鹉** [2]" in ex.text and "学名：Ara macao" in ex.text


def test_an_english_question_about_a_chinese_field_list_quotes_its_range_line():
    ex = extractive_answer("Where does the Scarlet Macaw live?", [_note(1, "scarlet.md", SCARLET_ZH)])
    assert ex.lead == "绯红金刚鹦鹉: 墨西哥南部至亚马孙盆地的湿润低地森林" and ex.cited == [1]


def test_a_line_quoted_from_another_note_says_whose_it_is():
    blocks = [
        _note(1, "a.md", "# Galah\n\nChinese: 粉红凤头鹦鹉.\n\nGalahs eat seeds from the ground."),
        _note(2, "b.md", "# Corella\n\nChinese: 凤头鹦鹉.\n\nCorellas eat seeds and bulbs."),
    ]
    ex = extractive_answer("Which parrots eat seeds?", blocks)
    assert "- (Corella) Corellas eat seeds and bulbs. [2]" in ex.text or "- (Galah)" in ex.text


def test_an_articles_lines_are_quoted_without_a_note_name():
    blocks = [
        _note(1, "a.md", "# Ducks\n\nDucks eat seeds and snails."),
        _note(2, "b.md", "# Geese\n\nGeese eat seeds and grass."),
    ]
    ex = extractive_answer("Which birds eat seeds?", blocks)
    assert "(Geese)" not in ex.text and "(Ducks)" not in ex.text

"""Structure read as structure in any domain's documents: labelled fields, FAQ pairs, table rows,
tiers of a list, the word a question asks about; and a "not said" claim only of a species note."""

from __future__ import annotations

from desktop_app.core.ask.budget import ContextBlock
from desktop_app.core.ask.extractive import extractive_answer, table_rows
from desktop_app.core.ask.sentences import split_sentences
from desktop_app.core.library.documents import Hit


def block(text: str, source: str = "doc.md", title: str = "", n: int = 1) -> ContextBlock:
    hit = Hit(f"{source}#0", source, text, source, None, 0, 1, 1.0, heading_path=[title] if title else [])
    return ContextBlock(n, hit, text)


def lead(question: str, *blocks: ContextBlock) -> str:
    ex = extractive_answer(question, list(blocks), note="")
    return ex.lead


RECIPE = (
    "# Coq au Vin\n\n**Origin:** Burgundy, France\n**Course:** Main\n**Serves:** 6\n"
    "**Cook time:** 2 hours 15 minutes\n\nCoq au vin began as a farmhouse way of making a tough old "
    "rooster tender: a long, slow braise in red wine."
)


def test_labelled_fields_keep_their_own_lines():
    assert "**Origin:** Burgundy, France" in split_sentences(RECIPE)
    assert "**Serves:** 6" in split_sentences(RECIPE)


def test_a_recipe_without_a_where_line_is_never_said_to_lack_one():
    ex = extractive_answer("Where does coq au vin come from?", [block(RECIPE, "coq.md", "Coq au Vin")], note="")
    assert not ex.refused and "do not say" not in ex.text
    assert "Burgundy" in ex.text


def test_an_faq_answer_is_quoted_not_its_question():
    faq = (
        "# Starter FAQ\n\nQ: How long does a new starter take to become active?\n"
        "A: Usually 7 to 10 days from the first mix of flour and water.\n\n"
        "Q: Which flour should I use?\nA: Begin with wholemeal rye, which feeds the culture well."
    )
    got = lead("How many days until a new starter becomes active?", block(faq))
    assert "7 to 10 days" in got and not got.startswith("Q:")
    zh = "问：试用期多长时间？\n答：一般为3个月，表现优秀的可以申请提前转正。\n\n问：工牌在哪里领？\n答：入职当天在前台领取。"
    assert "3个月" in lead("新员工试用期多长时间？", block(zh))


def test_a_table_row_is_read_with_its_header():
    table = "| Model | Capacity | Power |\n|---|---|---|\n| K17 | 1.7 L | 2200 W |\n| K20 | 2.0 L | 2400 W |"
    assert "Model: K17; Capacity: 1.7 L; Power: 2200 W." in table_rows(table)
    assert "K20" in lead("What capacity does the K20 have?", block(table))


def test_the_tier_holding_the_questions_number_is_chosen():
    policy = (
        "年休假天数按累计工作年限确定：\n\n- 累计工作满1年不满10年：每年5天\n"
        "- 累计工作满10年不满20年：每年10天\n- 累计工作满20年及以上：每年15天\n\n员工连续工作满12个月以上的，享受带薪年休假。"
    )
    assert "满10年不满20年" in lead("我工作12年了，每年能休几天年假？", block(policy))
    ratios = (
        "Use these ratios of starter : flour : water by weight:\n- Below 20 °C: 1:1:1, once a day\n"
        "- 20 to 25 °C: 1:2:2, every 12 hours\n- Above 25 °C: 1:5:5, every 12 hours"
    )
    assert "1:2:2" in lead("My kitchen is 22 degrees. What ratio should I feed my starter at?", block(ratios))


def test_the_word_asked_about_must_be_in_the_answer():
    intro = block("# Carbonara\n\nCarbonara is one of the four classic pastas of Rome.", "carbonara.md", "Carbonara")
    items = block(
        "## Ingredients (serves 4)\n\n- 400 g spaghetti\n- 150 g guanciale, cut into strips", "carbonara.md",
        "Carbonara", 2,
    )  # fmt: skip
    assert "150 g guanciale" in lead("How much guanciale do I need for carbonara for four people?", intro, items)
    specs = block("## Specifications\n\n- Model: K17\n- Capacity: 1.7 L\n- Power: 2200 W", "kettle.md", "Kettle K17")
    assert "2200 W" in lead("How many watts is the K17 kettle?", specs)


def test_a_species_note_without_the_fact_says_so_as_a_refusal():
    kea = "# Kea (Nestor notabilis)\n\nChinese: 啄羊鹦鹉.\n\n**Colours:** Olive green body.\n"
    ex = extractive_answer("What does the kea eat?", [block(kea, "kea.md", "Kea (Nestor notabilis)")], note="")
    assert ex.refused and "do not say" in ex.text

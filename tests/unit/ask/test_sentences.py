"""Sentence splitting: abbreviations, initials, decimals, colon lists, Chinese clauses, hard wraps."""

from __future__ import annotations

import re

import pytest

from desktop_app.core.ask.sentences import clauses, split_sentences, unwrap

# (text, expected sentences); compared with runs of whitespace collapsed. Written for issue 22's
# comparison of segmenters (pysbd, sentencex, blingfire): each of those failed 5-9 of them.
CASES = [
    (
        "He served in the U.S. Naval Reserve during the war. He later became a lawyer.",
        ["He served in the U.S. Naval Reserve during the war.", "He later became a lawyer."],
    ),
    (
        "Dr. Smith arrived at 5 p.m. on Monday. The meeting began.",
        ["Dr. Smith arrived at 5 p.m. on Monday.", "The meeting began."],
    ),
    (
        "Many birds, e.g. parrots and crows, can use tools. They are smart.",
        ["Many birds, e.g. parrots and crows, can use tools.", "They are smart."],
    ),
    (
        "Some metals, i.e. iron, rust quickly. Others do not.",
        ["Some metals, i.e. iron, rust quickly.", "Others do not."],
    ),
    (
        "The version was 1.5 when released. Version 2.0 followed in 2010.",
        ["The version was 1.5 when released.", "Version 2.0 followed in 2010."],
    ),
    (
        "The Lord of the Rings was written by J. R. R. Tolkien. It was published in 1954.",
        ["The Lord of the Rings was written by J. R. R. Tolkien.", "It was published in 1954."],
    ),
    (
        "Mr. Jones lives on Baker St. near the station. He is retired.",
        ["Mr. Jones lives on Baker St. near the station.", "He is retired."],
    ),
    (
        "The list includes: apples, pears, and plums. Fruit is healthy.",
        ["The list includes: apples, pears, and plums.", "Fruit is healthy."],
    ),
    (
        "The ingredients are:\n- flour\n- sugar\n- eggs\n\nMix them well.",
        ["The ingredients are: - flour - sugar - eggs", "Mix them well."],
    ),
    (
        "Lincoln was born on February 12, 1809, in Kentucky. He died in 1865.",
        ["Lincoln was born on February 12, 1809, in Kentucky.", "He died in 1865."],
    ),
    (
        '"Where are you going?" she asked. He did not answer.',
        ['"Where are you going?" she asked.', "He did not answer."],
    ),
    (
        "The company, Acme Inc., was founded in 1901. It makes anvils.",
        ["The company, Acme Inc., was founded in 1901.", "It makes anvils."],
    ),
    (
        "It cost $3.50 per pound in 1900. Prices rose later.",
        ["It cost $3.50 per pound in 1900.", "Prices rose later."],
    ),
    ("See Fig. 3 for details. The results are clear.", ["See Fig. 3 for details.", "The results are clear."]),
    ("He moved to the U.S. He lived there for years.", ["He moved to the U.S.", "He lived there for years."]),
    (
        "Washington, D.C. is the capital. It lies on the Potomac.",
        ["Washington, D.C. is the capital.", "It lies on the Potomac."],
    ),
    ("The temperature was 98.6 °F. That is normal.", ["The temperature was 98.6 °F.", "That is normal."]),
    (
        "Gen. Grant captured Vicksburg in July 1863. The siege lasted 47 days.",
        ["Gen. Grant captured Vicksburg in July 1863.", "The siege lasted 47 days."],
    ),
    (
        "He studied at St. John's College. Then he left.",
        ["He studied at St. John's College.", "Then he left."],
    ),
    (
        "Avogadro's number is approx. 6.022 x 10^23. It is a constant.",
        ["Avogadro's number is approx. 6.022 x 10^23.", "It is a constant."],
    ),
    ("Wait... what happened next? Nobody knows!", ["Wait... what happened next?", "Nobody knows!"]),
    (
        "Prof. Einstein published in 1905. No. 4 was the key paper.",
        ["Prof. Einstein published in 1905.", "No. 4 was the key paper."],
    ),
    (
        "The treaty was signed in\nParis in 1783. It ended the\nwar.",
        ["The treaty was signed in Paris in 1783.", "It ended the war."],
    ),
    (
        "The cylin-\nder was made of iron. It held powder.",
        ["The cylinder was made of iron.", "It held powder."],
    ),
    ("Mt. Everest is 8,849 m tall. It is in Nepal.", ["Mt. Everest is 8,849 m tall.", "It is in Nepal."]),
    ("Vol. 2, pp. 33-45, covers this. Read it.", ["Vol. 2, pp. 33-45, covers this.", "Read it."]),
    (
        "He was born c. 1750 in Virginia. His father was a farmer.",
        ["He was born c. 1750 in Virginia.", "His father was a farmer."],
    ),
    (
        "Abraham Lincoln (February 12, 1809 - April 15, 1865) was the 16th President. He led the Union.",
        ["Abraham Lincoln (February 12, 1809 - April 15, 1865) was the 16th President.", "He led the Union."],
    ),
    (
        "The vote was 5 vs. 4 in favour. The law passed.",
        ["The vote was 5 vs. 4 in favour.", "The law passed."],
    ),
    ("Jan. 1 is a holiday. So is Dec. 25.", ["Jan. 1 is a holiday.", "So is Dec. 25."]),
    (
        "Steps:\n1. Open the lid.\n2. Pour the water.\n\nWait ten minutes.",
        ["Steps: 1. Open the lid. 2. Pour the water.", "Wait ten minutes."],
    ),
    (
        "Yahoo! is a web company. It was founded in 1994.",
        ["Yahoo! is a web company.", "It was founded in 1994."],
    ),
    (
        "徐夫人是陆尚的妻子。她最先嫁给了陆尚，后来改嫁。",
        ["徐夫人是陆尚的妻子。", "她最先嫁给了陆尚，后来改嫁。"],
    ),
    ("清宁五年，他被封为王；清宁九年，他去世。", ["清宁五年，他被封为王；", "清宁九年，他去世。"]),
    # a quoted couplet is one sentence; the quote's own full stop does not end the line early
    (
        "曾起草告示称「金钱鼠尾，乃新朝之雅政；峨冠博带，实亡国之陋规」。后被罢官。",
        ["曾起草告示称「金钱鼠尾，乃新朝之雅政；峨冠博带，实亡国之陋规」。", "后被罢官。"],
    ),
    ("他说：“我来了。”然后离开。", ["他说：“我来了。”", "然后离开。"]),
    ("他说：“我们走吧！”然后离开了。", ["他说：“我们走吧！”", "然后离开了。"]),
    ("真的吗？是的！", ["真的吗？", "是的！"]),
    (
        "该作品于1998年发行，销量超过100万份。续作于2001年推出。",
        ["该作品于1998年发行，销量超过100万份。", "续作于2001年推出。"],
    ),
    ("价格为3.5元。很便宜。", ["价格为3.5元。", "很便宜。"]),
    ("鹦鹉是一种\n聪明的鸟类。它们会说话。", ["鹦鹉是一种聪明的鸟类。", "它们会说话。"]),
    (
        "《战国无双3》是由光荣和ω-force开发的。本作以三大故事为主轴。",
        ["《战国无双3》是由光荣和ω-force开发的。", "本作以三大故事为主轴。"],
    ),
    ("他毕业于U.S. Naval Academy。之后参军。", ["他毕业于U.S. Naval Academy。", "之后参军。"]),
    (
        "主要产品包括：手机、电脑、平板。公司成立于1987年。",
        ["主要产品包括：手机、电脑、平板。", "公司成立于1987年。"],
    ),
    ("他走了……再也没回来。", ["他走了……再也没回来。"]),
    ("第一，要勤奋；第二，要诚实。", ["第一，要勤奋；", "第二，要诚实。"]),
    ("这是什么?答案是鹦鹉。", ["这是什么?", "答案是鹦鹉。"]),
    ("他出生于公元前221年，卒于公元前210年。", ["他出生于公元前221年，卒于公元前210年。"]),
    ("（1）准备材料。（2）开始制作。", ["（1）准备材料。", "（2）开始制作。"]),
    ("太好了！！我们赢了。", ["太好了！！", "我们赢了。"]),
    ("1.5版于2010年发布。2.0版随后推出。", ["1.5版于2010年发布。", "2.0版随后推出。"]),
    ("他曾任美国总统（1861年—1865年）。他被刺杀。", ["他曾任美国总统（1861年—1865年）。", "他被刺杀。"]),
]


@pytest.mark.parametrize(("text", "expected"), CASES)
def test_tricky_sentences_split_where_a_reader_would(text: str, expected: list[str]):
    assert [re.sub(r"\s+", " ", s) for s in split_sentences(text)] == expected


def test_no_sentence_starts_with_a_comma_or_closing_mark():
    text = "他生于1900年.，后来迁居上海。”这是引文。1.5，是一个数。"
    assert not any(s[0] in "，,、：:；;”」）)" for s in split_sentences(text))


def test_a_long_list_does_not_swallow_the_sentences_after_its_colon():
    items = "\n".join(f"* Item {i} is a long sentence of its own. It goes on for a while." for i in range(3))
    got = split_sentences("Other varieties include:\n" + items)
    assert got[0] == "Other varieties include:" and len(got) == 7


def test_unwrap_joins_hard_wrapped_lines_but_keeps_structure():
    assert (
        unwrap("a tin cylin-\nder and\nmore\n\n# Heading\n- item")
        == "a tin cylinder and more\n\n# Heading\n- item"
    )
    assert unwrap("鹦鹉是一种\n聪明的鸟类。") == "鹦鹉是一种聪明的鸟类。"


def test_clauses_split_at_commas_and_semicolons_keeping_their_marks():
    assert clauses("清宁五年，他被封为王；后来去世。") == ["清宁五年，", "他被封为王；", "后来去世。"]
    assert clauses("In 1832, Lincoln ran for office; he lost.") == [
        "In 1832,",
        "Lincoln ran for office;",
        "he lost.",
    ]

"""Linking gallery labels to the notes that describe them: names in any form (names.py)."""

from __future__ import annotations

from pathlib import Path

import pytest

from desktop_app.core.identify.names import (
    EXACT,
    GENERIC,
    MENTION,
    NoteNames,
    chinese_names,
    chinese_of,
    english_title,
    english_titles,
    link_level,
    name_key,
    note_names,
    notes_about,
    species_title,
)
from desktop_app.core.library.documents import Hit

NOTES = Path(__file__).resolve().parents[3] / "knowledge" / "parrots"


def _note(file: str) -> NoteNames:
    text = (NOTES / file).read_text(encoding="utf-8")
    return note_names(text.splitlines()[0].lstrip("# "), text, f"parrots/{file}")


def _hit(source: str, text: str, chunk_index: int = 0) -> Hit:
    title = [text.splitlines()[0][2:]] if text.startswith("# ") else []
    return Hit(f"{source}-{chunk_index}", source, text, source, None, chunk_index, 1, 1.0, heading_path=title)


def test_singular_keys_make_plural_and_case_and_separators_agree():
    assert name_key("Lovebirds") == name_key("lovebird") == "lovebird"
    assert name_key("ara_Blue-headed_Macaw") == "ara blue headed macaw"
    assert name_key("Parakeets") == "parakeet" and name_key("Cockatoos") == "cockatoo"
    assert name_key("Psittacus") == "psittacus"  # Latin -us is not a plural


@pytest.mark.parametrize(
    ("label", "level"),
    [
        ("love", EXACT),  # the note's "Gallery label:" line
        ("Lovebird", EXACT),  # title, singular
        ("情侣鹦鹉", EXACT),  # Chinese name line
        ("爱情鸟", EXACT),  # the alternative Chinese name in brackets
        ("Rosy Faced Lovebird", GENERIC),  # the note is about the group the label ends with
        ("Agapornis roseicollis", GENERIC),  # "Agapornis spp." names the genus
        ("桃脸情侣鹦鹉", GENERIC),  # a Chinese name ending with the note's
        ("Scarlet Macaw", 0),
        ("Kakapo", 0),
    ],
)
def test_a_generic_plural_note_links_to_its_species_in_every_form(label, level):
    assert link_level(label, _note("lovebirds.md")) == level


@pytest.mark.parametrize(
    "label", ["ara_macao", "Scarlet Macaw", "Ara macao", "绯红金刚鹦鹉", "scarlet-macaws"]
)
def test_a_species_note_links_by_folder_latin_english_and_chinese_names(label):
    assert link_level(label, _note("scarlet-macaw.md")) == EXACT


def test_look_alikes_do_not_link_to_each_others_notes():
    names = _note("scarlet-macaw.md")
    for label in ("Green-winged Macaw", "macaw", "Blue-and-yellow Macaw", "红绿金刚鹦鹉"):
        assert link_level(label, names) == 0


def test_notes_about_prefers_the_note_named_after_the_label_over_one_mentioning_it():
    catalina = _hit("parrots/catalina.md", "# Catalina Macaw (Ara hybrid)\n\nA hybrid of the Scarlet Macaw.")
    scarlet = _hit("parrots/scarlet.md", "# Red parrots\n\nChinese: 绯红金刚鹦鹉. Latin: Ara macao.")
    # Neither note is named "Scarlet Macaw"; the Latin name links the second one.
    assert notes_about([catalina, scarlet], "Scarlet Macaw", min_level=GENERIC) == []
    assert notes_about([catalina, scarlet], "Ara macao") == [scarlet]
    assert notes_about([catalina], "Scarlet Macaw", min_level=MENTION) == [catalina]
    assert notes_about([catalina], "Scarlet Macaw", min_level=GENERIC) == []


def test_species_title_needs_a_species_note_not_any_document():
    assert species_title([_hit("k.md", "# Kakapo (Strigops habroptilus)\n\nGreen.")]) == "Kakapo"
    assert (
        species_title([_hit("k.md", "# 鸮鹦鹉\n\nChinese: 鸮鹦鹉. Latin: Strigops habroptilus.")]) == "鸮鹦鹉"
    )
    assert species_title([_hit("c.md", "# Keeping Parrots (A Guide)\n\nFeed them well.")]) == ""


def test_a_note_about_one_species_is_not_the_note_of_a_look_alike_named_after_it():
    # "Sulphur-crested Cockatoo (Cacatua galerita)" names one species; only a group note
    # ("Lovebirds (Agapornis spp.)") stands for the species whose names end like it.
    sulphur = note_names("Sulphur-crested Cockatoo (Cacatua galerita)", "Chinese: 大葵花凤头鹦鹉.")
    assert link_level("Lesser Sulphur-crested Cockatoo", sulphur) == 0
    assert link_level("Sulphur-crested Cockatoo", sulphur) == EXACT
    macaws = note_names("Macaws", "Chinese: 金刚鹦鹉.")
    assert link_level("Scarlet Macaw", macaws) == GENERIC and link_level("绯红金刚鹦鹉", macaws) == GENERIC


def test_a_label_with_a_qualifier_in_brackets_links_by_the_name_before_it():
    grey = note_names("African Grey Parrot (Psittacus erithacus)", "Chinese: 非洲灰鹦鹉.")
    assert link_level("African Grey Parrot (pale)", grey) == GENERIC
    assert link_level("非洲灰鹦鹉（浅灰）", grey) == GENERIC


def test_latin_is_read_where_notes_put_it_not_from_any_capitalised_pair_of_words():
    # "Rosy lovebirds" looks like "Genus species" but is a title's common name: a group note.
    assert link_level("Peach-faced Rosy Lovebird", note_names("Rosy lovebirds")) == GENERIC
    italic = [_hit("k.md", "# Kakapo *Strigops habroptilus*\n\nGreen.")]
    assert species_title(italic) == "Kakapo"
    assert link_level("Strigops habroptilus", note_names("Kakapo *Strigops habroptilus*")) == EXACT


def test_chinese_names_come_from_the_note_named_exactly_after_the_label():
    notes = [
        _hit(f"parrots/{f}", (NOTES / f).read_text(encoding="utf-8"))
        for f in ("scarlet-macaw.md", "african-grey-pale.md", "lovebirds.md", "kakapo.md")
    ]
    assert chinese_of(notes[0].text) == "绯红金刚鹦鹉"
    assert chinese_of("# Kea\n\n中文名：啄羊鹦鹉。\n") == "啄羊鹦鹉"
    assert chinese_of("# Kea\n\nChinese: none given.\n") == ""  # no Chinese on the line
    names = chinese_names(
        ["ara_macao", "Scarlet Macaw", "jako_white", "love", "Kakapo", "macaw", "bee eater", "绯红金刚鹦鹉"],
        notes,
    )
    assert names == {
        "ara_macao": "绯红金刚鹦鹉",  # its "Gallery label:" line
        "Scarlet Macaw": "绯红金刚鹦鹉",  # its title
        "jako_white": "非洲灰鹦鹉（浅灰）",
        "love": "情侣鹦鹉（爱情鸟）",
        "Kakapo": "鸮鹦鹉",
        "绯红金刚鹦鹉": "绯红金刚鹦鹉",  # a Chinese label is its own Chinese name
    }  # "macaw" names no note here: a genus word is not one species' name


def test_english_titles_name_a_terse_label_by_its_notes_title():
    notes = [
        _hit(f"parrots/{f}", (NOTES / f).read_text(encoding="utf-8"))
        for f in ("scarlet-macaw.md", "african-grey-pale.md", "lovebirds.md", "kakapo.md")
    ]
    notes.append(_hit("parrots/zh.md", "# 鸮鹦鹉\n\nChinese: 鸮鹦鹉. Latin: Strigops habroptilus.\n"))
    assert english_title("African Grey Parrot (pale-grey set) (Psittacus erithacus)") == (
        "African Grey Parrot (pale-grey set)"  # the Latin goes; the set's own words stay
    )
    assert english_title("Kakapo *Strigops habroptilus*") == "Kakapo"
    assert english_title("鸮鹦鹉") == ""  # a Chinese title is no English name
    titles = english_titles(["ara_macao", "Scarlet Macaw", "jako_white", "love", "Kakapo", "macaw"], notes)
    assert titles == {
        "ara_macao": "Scarlet Macaw",  # linked by its "Gallery label:" line
        "jako_white": "African Grey Parrot (pale-grey set)",
        "love": "Lovebirds",
    }  # "Scarlet Macaw" and "Kakapo" are their titles already; "macaw" names no note


def test_a_class_that_begins_one_notes_name_is_named_by_that_notes_english_name():
    """ImageNet's "African grey" is the library's one "African Grey Parrot", also when the page is
    Chinese and gives its English name on a line; "macaw" is no single note's name however few
    macaw notes there are, since a qualifier in front names another species."""
    zh_page = _hit(
        "parrots/african-grey-parrot.md",
        "# 非洲灰鹦鹉\n- 英文名：African Grey Parrot\n- 学名：Psittacus erithacus\n- 分布：赤道非洲的雨林\n",
    )
    scarlet = _hit("parrots/scarlet-macaw.md", (NOTES / "scarlet-macaw.md").read_text(encoding="utf-8"))
    assert english_titles(["African grey", "macaw"], [zh_page, scarlet]) == {"African grey": "African Grey Parrot"}
    # Two notes both begin with the class's words: neither is named.
    pale = _hit("parrots/african-grey-pale.md", (NOTES / "african-grey-pale.md").read_text(encoding="utf-8"))
    assert english_titles(["African grey"], [zh_page, pale]) == {}

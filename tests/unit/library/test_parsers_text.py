"""Text-like parsers: encoding detection, binary and empty files, Markdown and HTML sections."""

from __future__ import annotations

import codecs
from pathlib import Path

import pytest

from desktop_app.core.library.documents import ParseError
from desktop_app.core.library.parsers import IMAGE_SUFFIXES, SUPPORTED_SUFFIXES, parse_file
from desktop_app.core.library.parsers.text import decode_bytes

SIMPLIFIED = "知识库是一个本地桌面助手，可以回答关于文档的问题。金刚鹦鹉的羽毛颜色鲜艳，主要以坚果为食。"
TRADITIONAL = "知識庫是一個本地桌面助手，可以回答關於文件的問題。金剛鸚鵡的羽毛顏色鮮豔，主要以堅果為食。"


def _write(tmp_path: Path, name: str, data: bytes) -> Path:
    path = tmp_path / name
    path.write_bytes(data)
    return path


def test_suffix_sets_cover_the_documented_formats() -> None:
    for suffix in (".md", ".txt", ".csv", ".json", ".html", ".xml", ".rst", ".log", ".yaml", ".pdf", ".docx"):
        assert suffix in SUPPORTED_SUFFIXES
    assert {".jpg", ".png", ".webp", ".tiff"} <= IMAGE_SUFFIXES
    assert not SUPPORTED_SUFFIXES & IMAGE_SUFFIXES


def test_gbk_text_decodes_as_simplified_chinese(tmp_path: Path) -> None:
    path = _write(tmp_path, "gbk.txt", SIMPLIFIED.encode("gbk"))
    [section] = parse_file(path)
    assert section.text == SIMPLIFIED
    assert section.metadata["encoding"] == "gb18030"


def test_big5_text_decodes_as_traditional_chinese(tmp_path: Path) -> None:
    path = _write(tmp_path, "big5.txt", TRADITIONAL.encode("big5"))
    [section] = parse_file(path)
    assert section.text == TRADITIONAL
    assert section.metadata["encoding"] == "cp950"


@pytest.mark.parametrize("word", ["鹦鹉", "你好", "这是测试", "中文"])
def test_short_gbk_words_are_not_mistaken_for_big5(word: str) -> None:
    assert decode_bytes(word.encode("gbk"))[0] == word


@pytest.mark.parametrize("word", ["鸚鵡", "你好", "這是測試", "中文"])
def test_short_big5_words_are_not_mistaken_for_gbk(word: str) -> None:
    assert decode_bytes(word.encode("big5"))[0] == word


def test_gb18030_only_characters_decode(tmp_path: Path) -> None:
    text = "表情符号 😀 与扩展汉字 𠀀"  # four-byte GB18030 sequences, not in GBK
    path = _write(tmp_path, "gb18030.txt", text.encode("gb18030"))
    assert parse_file(path)[0].text == text


@pytest.mark.parametrize(
    ("encoding", "data_prefix"),
    [
        ("utf-8-sig", b""),
        ("utf-16", b""),  # with BOM (Python writes one)
        ("utf-16-le", codecs.BOM_UTF16_LE),
        ("utf-16-be", codecs.BOM_UTF16_BE),
        ("utf-32", b""),
    ],
)
def test_files_with_a_bom_decode(tmp_path: Path, encoding: str, data_prefix: bytes) -> None:
    text = "Parrots 鹦鹉 can talk.\nSecond line."
    path = _write(tmp_path, "bom.txt", data_prefix + text.encode(encoding))
    [section] = parse_file(path)
    assert section.text == text
    assert "\ufeff" not in section.text


def test_utf16_without_bom_is_recognised(tmp_path: Path) -> None:
    text = "Plain ASCII notes saved as UTF-16 without a byte order mark.\n"
    path = _write(tmp_path, "nobom.txt", text.encode("utf-16-le"))
    assert parse_file(path)[0].text == text


def test_windows_newlines_are_normalised(tmp_path: Path) -> None:
    path = _write(tmp_path, "crlf.txt", b"one\r\ntwo\r\n")
    assert parse_file(path)[0].text == "one\ntwo\n"


def test_cp1252_text_falls_back_to_a_western_code_page(tmp_path: Path) -> None:
    text = "café résumé naïve déjà vu, the parrot said."
    path = _write(tmp_path, "latin.txt", text.encode("cp1252"))
    assert parse_file(path)[0].text == text


def test_binary_file_named_txt_is_rejected(tmp_path: Path) -> None:
    data = bytes(range(256)) * 64 + b"\x89PNG\r\n\x1a\n\x00\x00\x00\rIHDR"
    path = _write(tmp_path, "photo.txt", data)
    with pytest.raises(ParseError, match="binary file: not text"):
        parse_file(path)


def test_control_character_soup_without_nuls_is_binary(tmp_path: Path) -> None:
    data = bytes(b for b in range(1, 32) if b not in (9, 10, 13)) * 200
    path = _write(tmp_path, "blob.log", data)
    with pytest.raises(ParseError, match="binary file"):
        parse_file(path)


@pytest.mark.parametrize("content", [b"", b"   \n\t\r\n  ", codecs.BOM_UTF8, codecs.BOM_UTF8 + b"\n\n"])
def test_empty_and_blank_files_are_rejected(tmp_path: Path, content: bytes) -> None:
    path = _write(tmp_path, "empty.txt", content)
    with pytest.raises(ParseError, match="empty document: no text"):
        parse_file(path)


def test_unknown_suffix_is_rejected_with_its_name(tmp_path: Path) -> None:
    path = _write(tmp_path, "thing.xyz", b"hello")
    with pytest.raises(ParseError, match=r"unsupported file type: \.xyz"):
        parse_file(path)


def test_images_are_not_parsed_as_text(tmp_path: Path) -> None:
    path = _write(tmp_path, "parrot.JPG", b"\xff\xd8\xff\xe0")
    with pytest.raises(ParseError, match="image"):
        parse_file(path)


def test_missing_file_is_a_parse_error(tmp_path: Path) -> None:
    with pytest.raises(ParseError, match="file not found"):
        parse_file(tmp_path / "gone.md")


def test_markdown_splits_at_headings_and_keeps_the_path(tmp_path: Path) -> None:
    md = (
        "# Guide\n\nIntro text.\n\n## Install\n\nRun the installer.\n\n"
        "```bash\n# a comment, not a heading\necho hi\n```\n\n"
        "## Use\n\n### Search\n\nType a query.\n\n# Appendix\n\nMore.\n"
    )
    sections = parse_file(_write(tmp_path, "guide.md", md.encode()))
    assert [s.heading_path for s in sections] == [
        ["Guide"],
        ["Guide", "Install"],
        ["Guide", "Use", "Search"],
        ["Appendix"],
    ]
    assert sections[1].text.startswith("## Install")
    assert "# a comment, not a heading" in sections[1].text  # fenced code is not split
    assert all(s.page is None for s in sections)


def test_markdown_without_headings_is_one_section(tmp_path: Path) -> None:
    sections = parse_file(_write(tmp_path, "notes.markdown", b"just text\n\nmore text\n"))
    assert len(sections) == 1
    assert sections[0].heading_path == []


def test_markdown_text_before_the_first_heading_is_kept(tmp_path: Path) -> None:
    sections = parse_file(_write(tmp_path, "pre.md", b"Preamble.\n\n# Title\n\nBody.\n"))
    assert [(s.heading_path, s.text) for s in sections] == [
        ([], "Preamble."),
        (["Title"], "# Title\n\nBody."),
    ]


def test_html_drops_scripts_and_styles_and_keeps_headings(tmp_path: Path) -> None:
    html = (
        "<!doctype html><html><head><title>Page</title><style>body{color:red}</style>"
        '<script>alert("x")</script></head><body><h1>Parrots</h1>'
        "<p>Parrots are <b>birds</b> &amp; clever.</p><script>var s = '<p>hidden</p>';</script>"
        "<h2>Diet</h2><ul><li>Seeds</li><li>Fruit</li></ul></body></html>"
    )
    sections = parse_file(_write(tmp_path, "page.html", html.encode()))
    assert [s.heading_path for s in sections] == [["Parrots"], ["Parrots", "Diet"]]
    joined = "\n".join(s.text for s in sections)
    assert "Parrots are birds & clever." in joined
    assert "Seeds" in joined and "Fruit" in joined
    for hidden in ("alert", "hidden", "color:red", "<p>", "Page"):
        assert hidden not in joined


def test_a_line_break_in_an_html_heading_keeps_the_words_apart(tmp_path: Path) -> None:
    html = "<h1>Chapter 1<br/>Loomings</h1><p>Call me Ishmael.</p><h2>Part<br>two</h2><p>More.</p>"
    sections = parse_file(_write(tmp_path, "chapter.html", html.encode()))
    assert [s.heading_path for s in sections] == [["Chapter 1 Loomings"], ["Chapter 1 Loomings", "Part two"]]
    assert sections[0].text == "Chapter 1 Loomings\n\nCall me Ishmael."


def test_html_declared_charset_is_honoured(tmp_path: Path) -> None:
    html = '<html><head><meta charset="big5"></head><body><p>鸚鵡</p></body></html>'
    sections = parse_file(_write(tmp_path, "big5.htm", html.encode("big5")))
    assert sections[0].text == "鸚鵡"


def test_xml_declared_encoding_is_honoured(tmp_path: Path) -> None:
    xml = '<?xml version="1.0" encoding="GBK"?><birds><bird>金刚鹦鹉</bird></birds>'
    [section] = parse_file(_write(tmp_path, "birds.xml", xml.encode("gbk")))
    assert section.text == xml


def test_html_with_an_unclosed_skipped_element_still_shows_the_body(tmp_path: Path) -> None:
    html = "<html><head><noscript><link rel=x><body><p>Visible text.</p></body></html>"
    sections = parse_file(_write(tmp_path, "broken.html", html.encode()))
    assert sections[0].text == "Visible text."


def test_sixteen_bit_binary_data_is_not_taken_for_utf16(tmp_path: Path) -> None:
    data = b"".join(i.to_bytes(2, "little") for i in range(1, 30)) * 100
    with pytest.raises(ParseError, match="binary file"):
        parse_file(_write(tmp_path, "samples.txt", data))


@pytest.mark.parametrize(
    ("name", "content"),
    [
        ("data.json", '{"name": "macaw", "diet": ["nuts", "fruit"]}'),
        ("feed.xml", "<birds><bird>macaw</bird></birds>"),
        ("conf.yaml", "bird: macaw\n"),
    ],
)
def test_structured_text_formats_are_kept_as_text(tmp_path: Path, name: str, content: str) -> None:
    [section] = parse_file(_write(tmp_path, name, content.encode()))
    assert section.text == content


@pytest.mark.slow
def test_large_text_file_parses_in_linear_time(tmp_path: Path) -> None:
    import time

    paragraph = ("The quick brown parrot jumps over the lazy dog. " * 20 + "\n\n").encode()
    path = tmp_path / "big.log"
    with path.open("wb") as fh:
        for _ in range(50 * 1024 * 1024 // len(paragraph)):
            fh.write(paragraph)
    started = time.perf_counter()
    sections = parse_file(path)
    assert time.perf_counter() - started < 20
    assert len(sections) == 1
    assert len(sections[0].text) > 49 * 1024 * 1024

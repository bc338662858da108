"""Core messages: codes with parameters, rendered in the caller's language, parsed back from text."""

from __future__ import annotations

import string
from pathlib import Path

import pytest

from desktop_app.core import messages as m

ZH = {
    "test: {name} failed: {reason}": "测试：{name} 失败：{reason}",
    "test: the disk is full": "测试：磁盘已满",
    "test: {score:.0%} sure": "测试：{score:.0%} 确定",
}


@pytest.fixture(autouse=True)
def _catalogue():
    m.define("test.failed", "test: {name} failed: {reason}")
    m.define("test.full", "test: the disk is full")
    m.define("test.score", "test: {score:.0%} sure")
    yield
    for code in ("test.failed", "test.full", "test.score"):
        m.CATALOGUE.pop(code, None)


def test_render_in_english_and_through_a_translation():
    msg = m.message("test.failed", name="a.pdf", reason=m.message("test.full"))
    assert str(msg) == "test: a.pdf failed: test: the disk is full"
    assert msg.render(lambda t: ZH.get(t, t)) == "测试：a.pdf 失败：测试：磁盘已满"
    assert m.message("test.score", score=0.86).render(lambda t: ZH.get(t, t)) == "测试：86% 确定"


def test_user_error_text_is_the_english_rendering():
    exc = m.UserError("test.failed", name="b.docx", reason="no body")
    assert str(exc) == "test: b.docx failed: no body"
    assert exc.message.code == "test.failed"


def test_a_stored_english_text_is_read_back_as_its_message_with_its_nested_reason():
    text = "test: c.txt failed: test: the disk is full"
    assert m.parse(text) == m.Message("test.failed", {"name": "c.txt", "reason": "test: the disk is full"})
    assert m.render(m.from_english(text), lambda t: ZH.get(t, t)) == "测试：c.txt 失败：测试：磁盘已满"
    # A format spec cannot apply to a parsed string: the text is kept as it was written.
    assert m.render(m.from_english("test: 86% sure"), lambda t: ZH.get(t, t)) == "测试：86% 确定"
    assert m.render(m.from_english("someone else's error"), lambda t: ZH.get(t, t)) == "someone else's error"


def test_unknown_code_and_conflicting_definition_are_errors():
    with pytest.raises(KeyError):
        m.message("test.nope")
    with pytest.raises(ValueError):
        m.define("test.full", "another text")


def _sample(template: str) -> dict[str, object]:
    """A value per field: a number where the field has a format spec, else a marked word."""
    return {
        name: 1234.5 if spec else f"<{name}>"
        for _, name, spec, _ in string.Formatter().parse(template)
        if name is not None
    }


def test_every_catalogue_message_is_parsed_back_from_its_english_text():
    # The app's real catalogue: a stored reason, note or status must come back as its message,
    # or the GUI would show it in English.
    from desktop_app.core.desk import MESSAGE_MODULES

    assert MESSAGE_MODULES  # imported with the Desk: every module that defines messages
    catalogue = m.catalogue()
    for code, template in catalogue.items():
        if code.startswith("test."):
            continue
        text = str(m.message(code, **_sample(template)))
        found = m.parse(text)
        assert found is not None, code
        assert catalogue[found.code] == template, (code, found.code)


def test_the_desk_imports_every_module_that_defines_messages():
    # messages.py imports nothing above it: the Desk, which wires the layers, loads every catalogue
    # module, so a stored text parses back in any process that has one. A new module must be listed.
    import desktop_app
    from desktop_app.core.desk import MESSAGE_MODULES

    root = Path(desktop_app.__file__).parent
    defining = {
        ".".join(path.relative_to(root.parent).with_suffix("").parts)
        for path in root.rglob("*.py")
        if "bench" not in path.parts and path.name != "messages.py" and "= define(" in path.read_text("utf-8")
    }
    assert defining == {module.__name__ for module in MESSAGE_MODULES}


def test_a_parse_error_carries_its_message_and_keeps_the_english_text():
    from desktop_app.core.library import reasons
    from desktop_app.core.library.documents import ParseError

    exc = ParseError(reasons.ENCRYPTED, label="PDF")
    assert str(exc) == "encrypted PDF: a password is required"
    assert exc.message == m.Message(reasons.ENCRYPTED, {"label": "PDF"})
    nested = str(ParseError(reasons.ZIP_DAMAGED, label="XLSX", reason=str(m.message(reasons.ZIP_ENDS_EARLY))))
    zh = {
        "corrupt {label}: the ZIP archive is damaged ({reason})": "{label} 已损坏：ZIP 压缩包已损坏（{reason}）",
        "its compressed data ends early": "压缩数据提前结束",
    }
    assert (
        m.render(m.from_english(nested), lambda t: zh.get(t, t)) == "XLSX 已损坏：ZIP 压缩包已损坏（压缩数据提前结束）"
    )


def test_a_message_is_stored_as_its_code_and_parameters_and_read_back_whole():
    msg = m.message("test.failed", name="a.pdf", reason=m.message("test.full"))
    stored = m.dump(msg)
    assert m.load(stored) == msg
    assert m.load(m.dump("someone else's error")) == "someone else's error"  # no message: a text
    assert m.load(None) is None and m.dump(None) is None
    # A code this version does not know (a newer version's) reads as the English stored with it.
    newer = stored.replace('"test.failed"', '"test.from_the_future"')
    assert m.load(newer) == "test: a.pdf failed: test: the disk is full"


def test_an_exception_given_as_a_parameter_stands_for_its_message():
    from desktop_app.core.library import reasons
    from desktop_app.core.library.documents import ParseError

    inner = ParseError(reasons.ENCRYPTED, label="PDF")
    outer = m.message("test.failed", name="a.pdf", reason=inner)
    assert outer.params["reason"] == inner.message  # translated with the outer one
    assert m.message_of(RuntimeError(m.message("test.full"))) == m.message("test.full")
    assert m.message_of(RuntimeError("plain")) == "plain" and m.message_of(RuntimeError()) == "RuntimeError"


def test_json_and_the_cli_get_english_and_a_message_formats_and_hashes_like_a_value():
    from dataclasses import dataclass

    @dataclass
    class Row:
        reason: m.Text
        notes: list

    row = Row(m.message("test.full"), [m.message("test.score", score=0.5), "as is"])
    assert m.english(row) == {"reason": "test: the disk is full", "notes": ["test: 50% sure", "as is"]}
    assert f"{m.message('test.full'):>25}" == "   test: the disk is full"
    assert len({m.message("test.full"), m.message("test.full")}) == 1


def test_a_plural_message_takes_the_form_its_count_needs_and_parses_back_from_either():
    m.define_plural("test.pages", "test: {count} page", "test: {count} pages")
    try:
        assert str(m.message("test.pages", count=1)) == "test: 1 page"
        assert str(m.message("test.pages", count=4)) == "test: 4 pages"
        assert m.parse("test: 4 pages") == m.Message("test.pages", {"count": "4"})
        assert m.parse("test: 1 page") == m.Message("test.pages", {"count": "1"})
    finally:
        m.CATALOGUE.pop("test.pages", None)
        m.PLURALS.pop("test.pages", None)


def test_the_app_flattens_a_message_to_english_only_at_its_cli_and_json_edge():
    """A message stays data until it is shown (issue 35): ``str(message(...))`` only where the CLI or
    JSON renders English, and in ``pip_command``, whose frozen-build text fills a command slot."""
    import desktop_app

    root = Path(desktop_app.__file__).resolve().parent
    allowed = {"core/packages.py"}
    found = [
        f"{path.relative_to(root).as_posix()}:{n}"
        for path in sorted(root.rglob("*.py"))
        for n, line in enumerate(path.read_text(encoding="utf-8").splitlines(), 1)
        if "str(message(" in line
        and path.relative_to(root).as_posix() not in allowed
        and path.relative_to(root).parts[0] != "cli"
    ]
    assert found == []


def test_lines_render_one_per_line_and_read_back_from_json():
    m.define("test.lines_seen", "Seen {what}.")
    lines = [m.message("test.lines_seen", what="red"), "  a model's words  ", ""]
    assert m.render_lines(lines) == "Seen red.\na model's words"
    assert m.render_lines(lines, lambda t: t.replace("Seen", "Gesehen")) == "Gesehen red.\na model's words"
    assert m.lines_from_json([m.to_json(t) for t in lines]) == lines
    assert m.lines_from_json("one text") == ["one text"] and m.lines_from_json(None) == []

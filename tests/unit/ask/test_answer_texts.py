"""Every text an answer shows is a catalogue message (ask/notes.py), translated by the .po and
checked by tests/gui/test_i18n.py; an {"en": ..., "zh": ...} dict in core/ask is a prompt to a
language model, never a text the user reads (issue 43 item 5, issue 45 item 1)."""

from __future__ import annotations

import ast
from pathlib import Path

import desktop_app.core.ask as ask_package
from desktop_app.core.ask import notes
from desktop_app.core.ask.question import FACT_KINDS
from desktop_app.core.messages import message

ASK = Path(ask_package.__file__).parent
# The prompts sent to a language model, in the question's language: the only en/zh dicts allowed.
# A new one is added here by name; an answer text is a define() in notes.py.
PROMPTS = {
    "prompts.py": {
        "ROUTER_SYSTEM",
        "_ANSWER_TAIL",
        "ANSWER_SYSTEM",
        "ANSWER_SYSTEM_TRANSLATE",
        "CONTEXT_HEADER",
        "NO_CONTEXT_NOTE",
        "CHAT_SYSTEM",
        "AGENT_SYSTEM",
        "MAP_SYSTEM",
        "REDUCE_SYSTEM",
        "OUTLINE_SYSTEM",
        "SIDE_HEADER",
        "CITE_REMINDER",
    },
}


def _is_text(node: ast.expr) -> bool:
    """A string, an f-string or a concatenation with one (not a number: ``{"en": 12, "zh": 5}``)."""
    if isinstance(node, ast.Constant):
        return isinstance(node.value, str)
    if isinstance(node, ast.BinOp):
        return _is_text(node.left) or _is_text(node.right)
    return isinstance(node, ast.JoinedStr)


def _is_text_dict(node: ast.AST) -> bool:
    if not isinstance(node, ast.Dict):
        return False
    values = {k.value: v for k, v in zip(node.keys, node.values) if isinstance(k, ast.Constant)}
    return "en" in values and "zh" in values and (_is_text(values["en"]) or _is_text(values["zh"]))


def text_dicts(source: str) -> list[tuple[str | None, int]]:
    """Each en/zh text dict of a module: the module-level name it is assigned under (None inside a
    function or an expression) and its line."""
    found = []
    for stmt in ast.parse(source).body:
        name = None
        if isinstance(stmt, ast.Assign) and len(stmt.targets) == 1 and isinstance(stmt.targets[0], ast.Name):
            name = stmt.targets[0].id
        elif isinstance(stmt, ast.AnnAssign) and isinstance(stmt.target, ast.Name):
            name = stmt.target.id
        found += [(name, node.lineno) for node in ast.walk(stmt) if _is_text_dict(node)]
    return found


def test_the_scan_finds_a_text_dict_by_its_name_or_inside_a_function():
    source = (
        'NOTE = {"en": "No model.", "zh": "没有模型。"}\n'
        'SIZES = {"en": 12, "zh": 5}\n'
        'NESTED = {"summary": {"en": "Sum " + TAIL["en"], "zh": f"{x}"}}\n'
        "def answer(lang):\n"
        '    return {"en": "Nothing found.", "zh": "没有找到。"}[lang]\n'
    )
    assert text_dicts(source) == [("NOTE", 1), ("NESTED", 3), (None, 5)]


def test_no_module_of_core_ask_keeps_an_answer_text_in_an_en_zh_dict():
    offenders = []
    seen: dict[str, set[str]] = {}
    for path in sorted(ASK.glob("*.py")):
        for name, line in text_dicts(path.read_text(encoding="utf-8")):
            if name in PROMPTS.get(path.name, set()):
                seen.setdefault(path.name, set()).add(name)
            else:
                offenders.append(f"core/ask/{path.name}:{line} {name or '(unnamed)'}")
    assert not offenders, "answer texts belong in ask/notes.py as define() calls: " + ", ".join(offenders)
    assert seen == PROMPTS  # a prompt gone from the source leaves this list too


def test_every_fact_kind_has_its_words_and_the_answer_reads_them_in_its_language():
    assert set(notes.FACT_WHAT) == set(FACT_KINDS)
    said = message(notes.NOT_SAID, subject="Kea", what=message(notes.FACT_WHAT["diet"]))
    assert notes.written(said, "en") == "The notes about the Kea do not say what it eats."
    assert notes.written(said, "zh") == "关于Kea的笔记没有提到它吃什么。"
    assert notes.written_forms(notes.WHICH_ONE) == ("Which one is it?", "是哪一种？")

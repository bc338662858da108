"""Texts from the core (why a file failed, an answer's note, a model's status) in a Chinese window:
stored and sent as messages ({code, params}), shown in the UI language; the CLI and JSON say them in English."""

from __future__ import annotations

from pathlib import Path

import pytest

from desktop_app.core import events as ev
from desktop_app.core.ask import notes
from desktop_app.core.config import Config
from desktop_app.core.messages import message
from desktop_app.core.models import reasons as model_reasons
from desktop_app.core.tasks import STOPPED
from desktop_app.gui.chat.messages import AnswerMessage
from desktop_app.gui.i18n import set_language
from desktop_app.gui.knowledge.model import COLUMNS

ENCRYPTED = Path("/work/shared/data/docs/pypdf/resources/libreoffice-writer-password.pdf")
ERROR_COLUMN = COLUMNS.index("Error")


def _error_of(window, name: str) -> tuple[str, str]:
    model = window.knowledge.model
    row = next(i for i, doc in enumerate(model.rows) if doc.name == name)
    index = model.index(row, ERROR_COLUMN)
    return model.data(index), model.data(index, 3)  # display text, tooltip (ToolTipRole)


def test_a_failed_batch_and_the_status_bar_speak_chinese(make_window, drop, qtbot, tmp_path):
    if not ENCRYPTED.is_file():
        pytest.skip("the shared pypdf resources are not on this machine")
    unsupported = tmp_path / "notes.xyz"
    unsupported.write_text("no parser for this suffix\n", encoding="utf-8")
    window = make_window(Config())
    set_language("zh_CN")
    with qtbot.waitSignal(window.knowledge.batch_finished, timeout=120_000):
        drop(window.knowledge, [ENCRYPTED, unsupported])
    qtbot.waitUntil(lambda: any(d.name == ENCRYPTED.name and d.error for d in window.knowledge.model.rows))

    # The manifest keeps the English reason (kdesk list prints it); the table shows it in Chinese.
    text, tooltip = _error_of(window, ENCRYPTED.name)
    assert text == "PDF 已加密：需要密码"
    assert "PDF 已加密：需要密码" in tooltip
    stored = next(d for d in window.ctx.kb.list_documents() if d.name == ENCRYPTED.name)
    assert str(stored.error) == "encrypted PDF: a password is required"
    # The batch's outcome list: the failure and the file that was never copied in, with its suffix.
    items = [window.knowledge.errors.item(i).text() for i in range(window.knowledge.errors.count())]
    assert f"{ENCRYPTED.name}: PDF 已加密：需要密码" in items
    assert any(item.endswith(f"{unsupported}: 不支持的文件类型：.xyz") for item in items), items

    # The status bar: no language model, no reranker; the tooltips say why in Chinese (the
    # command to run stays as it is).
    llm_tip = window.status_labels["llm"].toolTip()
    assert "未配置语言模型：回答为摘录式（引用的段落）" in llm_tip, llm_tip
    assert "no language model" not in llm_tip
    reranker_tip = window.status_labels["reranker"].toolTip()
    assert "重排序" in reranker_tip and "not installed" not in reranker_tip, reranker_tip

    # Back to English: the same rows and tooltips re-render from the stored text.
    set_language("en")
    assert _error_of(window, ENCRYPTED.name)[0] == "encrypted PDF: a password is required"
    assert "no language model configured" in window.status_labels["llm"].toolTip()


def test_an_answers_notes_follow_the_language(qtbot):
    answer = AnswerMessage(question="what?")
    qtbot.addWidget(answer)
    try:
        set_language("zh_CN")
        # The core sends its notes as messages (a third-party error inside stays as written).
        answer.handle_event(ev.Warning(message(notes.SEARCH_FAILED, error="index locked")))
        answer.handle_event(ev.Warning(message(STOPPED)))
        # A language model failure nests its reason and when it happened in the fallback note.
        fallback = (
            "cannot reach the language model at http://127.0.0.1:9/v1: connection refused "
            "(before answering); showing the most relevant passages instead"
        )
        refused = message(
            model_reasons.LLM_UNREACHABLE,
            where="http://127.0.0.1:9/v1",
            reason=message(model_reasons.LLM_CONNECTION_REFUSED),
        )
        answer.handle_event(
            ev.Warning(message(notes.FALLBACK, error=refused, when=message(notes.BEFORE_ANSWERING)))
        )
        assert answer.notes.text().split("\n") == [
            "搜索失败：index locked",
            "已停止",
            "无法连接位于 http://127.0.0.1:9/v1 的语言模型：连接被拒绝（回答之前）；改为显示最相关的段落",
        ]
        set_language("en")
        assert answer.notes.text() == f"search failed: index locked\nstopped\n{fallback}"
    finally:
        set_language("en")


def test_the_note_before_an_extractive_answer_follows_the_language(qtbot):
    # An English question without a language model: the core writes its note in English; a Chinese
    # window shows the note in Chinese and the quoted passage as written.
    note = "No language model is configured; these are the most relevant passages."
    text = f"{note}\n\nParrots crack seeds with their beaks. [1]"
    answer = AnswerMessage(question="what do parrots eat?")
    qtbot.addWidget(answer)
    try:
        set_language("zh_CN")
        answer.handle_event(ev.Answer(text, [], by="extractive"))
        shown = answer.body.toPlainText()
        assert shown.startswith("未配置语言模型；以下是最相关的段落。"), shown
        assert "Parrots crack seeds with their beaks." in shown
        assert "No language model" not in shown
        assert answer.copy_text().startswith(note)  # the answer itself is unchanged
        set_language("en")
        assert answer.body.toPlainText().startswith(note)
    finally:
        set_language("en")


def test_a_refusal_written_in_chinese_is_shown_in_an_english_window(qtbot):
    # A Chinese question's refusal (a saved conversation holds it as text): the window finds the
    # catalogue message by its Chinese rendering and shows it in its own language.
    text = "你的文档似乎没有回答这个问题。下面列出的是最接近的相关段落。"
    answer = AnswerMessage(question="北京明天的天气怎么样？")
    qtbot.addWidget(answer)
    answer.handle_event(ev.Answer(text, [], by="evidence", refused=True))
    assert answer.body.toPlainText() == str(message(notes.NOT_ANSWERED))
    assert answer.copy_text() == text

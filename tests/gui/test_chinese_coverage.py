"""A Chinese window says everything in Chinese: with content in every panel (documents, one that
failed, an answer, a refusal, an identification card, the viewer on a citation, Settings on every
tab, the conversations list), no visible sentence holds three or more English words, unless they
are the user's (document text, a question, a file or species name) or a name (a model, a path, a
command)."""

from __future__ import annotations

import re
import shutil
from pathlib import Path

import pytest
from PySide6.QtCore import QAbstractListModel, QModelIndex
from PySide6.QtGui import Qt, QTextDocument  # QtGui's Qt also has mightBeRichText
from PySide6.QtWidgets import (
    QAbstractButton,
    QAbstractItemView,
    QApplication,
    QComboBox,
    QGroupBox,
    QHeaderView,
    QLabel,
    QLineEdit,
    QMenuBar,
    QPlainTextEdit,
    QProgressBar,
    QStatusBar,
    QTabBar,
    QTextEdit,
    QWidget,
)

from desktop_app.core.models.registry import load_manifest
from desktop_app.gui.i18n import set_language

REPO = Path(__file__).resolve().parents[2]
NOTES = ("scarlet-macaw.md", "blue-and-yellow-macaw.md", "african-grey-parrot.md", "kakapo.md", "galah.md")
PHOTO_LABELS = ("ara_macao", "ara_ararauna", "jako_grey", "cokatoo_galah")
QUESTION = "What do the crazy ones do?"
REFUSED = "What is Abraham Lincoln's favourite ice cream flavour?"
QUESTION_ZH = "绯红金刚鹦鹉的翅膀是什么颜色？"

_WORD = re.compile(r"\b(?:[A-Za-z]{2,}|[aAI])\b(?:['’][a-z]+)?")
_SPLIT = re.compile(r"(?<=[.!?])\s+|[。！？；\n…·|•]+")
_CJK = re.compile(r"[\u2e80-\u9fff\u3000-\u303f\uff00-\uffef]+")  # Chinese text and its punctuation
# Names, not sentences: products and formats a Chinese interface writes in Latin letters.
_NAMES = {
    "ImageNet", "Ollama", "OpenAI", "LM", "Studio", "GPT4All", "Chroma", "Markdown", "Hugging", "Face",
    "MiniLM", "Qwen", "SmolLM", "CLIP", "EfficientNet", "SigLIP", "PyPI", "Word", "PowerPoint", "Excel",
}  # fmt: skip
MODEL_NAMES = ["Universal Sentence Encoder"]


def _plain(text: str) -> str:
    if Qt.mightBeRichText(text):
        doc = QTextDocument()
        doc.setHtml(text)
        return doc.toPlainText()
    return text


def _where(w: QWidget) -> str:
    chain, p = [], w
    while p is not None and len(chain) < 4:
        chain.append(f"{type(p).__name__}{'#' + p.objectName() if p.objectName() else ''}")
        p = p.parentWidget()
    return " < ".join(chain)


def _model_texts(view: QAbstractItemView) -> list[str]:
    model = view.model()
    out: list[str] = []
    if model is None:
        return out
    header = view.header() if hasattr(view, "header") else getattr(view, "horizontalHeader", lambda: None)()
    if header is not None and header.isVisible():
        out += [str(model.headerData(i, Qt.Horizontal, Qt.DisplayRole) or "") for i in range(header.count())]

    def walk(parent: QModelIndex) -> None:
        columns = 1 if isinstance(model, QAbstractListModel) else model.columnCount(parent)
        for row in range(model.rowCount(parent)):
            for col in range(columns):
                index = model.index(row, col, parent)
                for role in (Qt.DisplayRole, Qt.ToolTipRole):
                    value = model.data(index, role)
                    if isinstance(value, str):
                        out.append(value)
            first = model.index(row, 0, parent)
            if not isinstance(model, QAbstractListModel) and model.rowCount(first):
                walk(first)

    walk(QModelIndex())
    return out


def visible_texts(root: QWidget) -> list[tuple[str, str]]:
    """(where, text) of everything a user can read in ``root`` as it is shown now."""
    out: list[tuple[str, str]] = []
    for w in [root, *root.findChildren(QWidget)]:
        if not w.isVisible():
            continue
        where = _where(w)
        texts = []
        if w.isWindow():
            texts.append(w.windowTitle())
        if w.toolTip():
            out.append((where + " (tooltip)", _plain(w.toolTip())))
        if isinstance(w, QLabel):
            texts.append(_plain(w.text()))
        if isinstance(w, QAbstractButton):
            texts.append(w.text().replace("&", ""))
        if isinstance(w, QGroupBox):
            texts.append(w.title())
        if isinstance(w, QTabBar):
            texts += [w.tabText(i) for i in range(w.count())] + [w.tabToolTip(i) for i in range(w.count())]
        if isinstance(w, QComboBox):
            texts += [w.itemText(i) for i in range(w.count())]
        if isinstance(w, QLineEdit):
            texts.append(w.placeholderText())
        if isinstance(w, (QTextEdit, QPlainTextEdit)):
            texts += [w.toPlainText(), w.placeholderText()]
        if isinstance(w, QAbstractItemView) and not isinstance(w, QHeaderView):  # headers: with their view
            texts += [_plain(t) for t in _model_texts(w)]
        if isinstance(w, QProgressBar) and w.isTextVisible():
            texts.append(w.text())
        if isinstance(w, QStatusBar):
            texts.append(w.currentMessage())
        if isinstance(w, QMenuBar):
            for action in w.actions():
                texts.append(action.text().replace("&", ""))
                if action.menu() is not None:
                    texts += [a.text().replace("&", "") for a in action.menu().actions()]
        out += [(where, t) for t in texts if t and t.strip()]
    return out


def _norm(text: str) -> str:
    return " ".join(re.sub(r"[*#_`>\[\]]+", " ", text).split()).lower()


class Allowed:
    """What may stay English: the user's content and names (files, species, models, paths)."""

    def __init__(self, names: list[str], content: list[str]) -> None:
        self.names = sorted({n for n in names if n}, key=len, reverse=True)
        self.content = _norm("\n".join(content))

    def _without_names(self, text: str) -> str:
        for name in self.names:
            text = text.replace(name, " ")
        return text

    def english_words(self, text: str) -> list[str]:
        text = self._without_names(text)
        # URLs, paths, file names, `code`, commands; hyphenated names (all-MiniLM-L6-v2, ara_macao)
        text = re.sub(r"\S+://\S+|\S*[/\\]\S*|\S+\.[A-Za-z0-9]{1,5}\b|`[^`]*`", " ", text)
        text = re.sub(r"kdesk [a-z ]+|pip install \S+|\b\w+(?:[-_]\w+)+\b", " ", text)
        words = [m.group(0) for m in _WORD.finditer(text)]
        return [
            w for w in words
            if w not in _NAMES and not (len(w) > 1 and w.isupper()) and not re.search(r"\d", w)
        ]  # fmt: skip

    def quoted(self, text: str) -> bool:
        """Is this English run the user's (a document's passage, a question)?"""
        for variant in (text, self._without_names(text)):
            core = _norm(re.sub(r"^[^A-Za-z]+|[^A-Za-z]+$", "", variant))
            if core and core in self.content:
                return True
        return False

    def offends(self, sentence: str) -> bool:
        """Three or more English words in a run between Chinese text that is not the user's."""
        return any(len(self.english_words(run)) >= 3 and not self.quoted(run) for run in _CJK.split(sentence))


def offenders(roots: list[QWidget], allowed: Allowed) -> list[str]:
    found: list[str] = []
    for root in roots:
        for where, text in visible_texts(root):
            for sentence in _SPLIT.split(text):
                sentence = sentence.strip()
                if sentence and allowed.offends(sentence):
                    line = f"{where}: {sentence!r}"
                    if line not in found:
                        found.append(line)
    return found


def _library(tmp_path: Path, shared_data: Path) -> Path:
    """The parrots notes (the repo's knowledge/parrots) and reference photos (shared data)."""
    folder = tmp_path / "parrots"
    for note in NOTES:
        (folder).mkdir(exist_ok=True)
        shutil.copy(REPO / "knowledge" / "parrots" / note, folder / note)
    for label in PHOTO_LABELS:
        photos = folder / "photos" / label
        photos.mkdir(parents=True)
        for photo in sorted((shared_data / "images" / "parrots" / label).glob("*.jpg"))[:2]:
            shutil.copy(photo, photos / photo.name)
    return folder


@pytest.mark.slow
def test_a_chinese_window_with_content_everywhere_has_no_english_sentences(
    make_window, qtbot, drop, shared_data, tmp_path, screenshot
):
    window = make_window()
    pdfs = shared_data / "docs" / "pypdf" / "resources"
    files = [_library(tmp_path, shared_data), pdfs / "crazyones.pdf", pdfs / "encrypted-file.pdf"]
    with qtbot.waitSignal(window.knowledge.batch_finished, timeout=240_000):
        drop(window.knowledge, files)
    window.ctx.runner.wait_idle(60_000)
    qtbot.waitUntil(
        lambda: (
            any(d.status == "failed" for d in window.knowledge.model.rows)
            and all(d.status in ("indexed", "failed") for d in window.knowledge.model.rows)
        ),
        timeout=30_000,
    )

    # Answers in English and Chinese, a refusal and an identification card in the chat; the viewer
    # on a citation.
    with qtbot.waitSignal(window.chat.answer_finished, timeout=120_000):
        window.chat.ask(QUESTION_ZH)
    with qtbot.waitSignal(window.chat.answer_finished, timeout=120_000) as answered:
        window.chat.ask(QUESTION)
    answer = answered.args[0]
    with qtbot.waitSignal(window.chat.answer_finished, timeout=120_000) as refused:
        window.chat.ask(REFUSED)
    assert refused.args[0].answer.refused
    with qtbot.waitSignal(window.chat.identify_finished, timeout=240_000) as identified:
        drop(window.chat, [shared_data / "images" / "coral" / "parrot.jpg"])
    card = identified.args[0]
    assert card.decision is not None and card.candidates
    assert answer.answer.citations
    window.open_citation(answer.answer.citations[0])
    qtbot.waitUntil(lambda: window.viewer.isVisible() and window.viewer.mode == "pdf", timeout=20_000)
    window.ctx.runner.wait_idle(30_000)
    dialog = window.open_settings()

    set_language("zh_CN")
    QApplication.processEvents()

    kb = window.ctx.kb
    content = [QUESTION, REFUSED, QUESTION_ZH]
    for doc in kb.list_documents():
        content += [h.text for h in kb.chunks_of(doc.doc_id)]
    names = [d.name for d in kb.list_documents()] + [Path(d.name).name for d in kb.list_documents()]
    names += [str(window.ctx.data_dir), str(window.ctx.knowledge_dir)]
    names += [c.name for c in card.candidates] + [c.name.replace("_", " ") for c in card.candidates]
    names += [str(s.name) for s in window.ctx.status.values() if s.name]  # the models in the status bar
    names += MODEL_NAMES + [n for m in load_manifest() for n in (m.id, m.folder, m.repo_id, m.package)]
    allowed = Allowed(names, content)

    # The walk sees what it should: the card and the viewer, in Chinese.
    seen = "\n".join(text for _, text in visible_texts(window))
    assert card.decision_name.text() in seen and _CJK.search(card.reasoning.text())
    assert window.viewer.title.text() in seen and "第 1 页" in window.viewer.title.text()
    found = offenders([window], allowed)
    screenshot(window, "zh-window-with-content")
    screenshot(card, "zh-identification-card")
    tabs = dialog.findChild(QTabBar)
    for i in range(tabs.count()):
        tabs.setCurrentIndex(i)
        QApplication.processEvents()
        found += [f"Settings › {tabs.tabText(i)} › {line}" for line in offenders([dialog], allowed)]
    dialog.reject()
    assert not found, f"{len(found)} English sentences in the Chinese window:\n" + "\n".join(found)

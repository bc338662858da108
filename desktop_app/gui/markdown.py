"""Safe Markdown rendering for untrusted text (answers quote documents verbatim).

Rules: raw HTML is shown as text (Qt's ``MarkdownNoHTML``), image syntax becomes a plain link and
every link whose scheme is not our own ``cite:`` is turned back into plain text, and the browser
never loads a resource (``loadResource`` returns nothing and records the request for tests).
Citation markers ``[n]`` become ``cite:n`` anchors; clicks are handled by the chat, never by Qt.
Headings are demoted to bold body text: an answer quoting a note's ``# Title`` must not open
with a giant line.
"""

from __future__ import annotations

import html
import re

from PySide6.QtCore import QUrl, Signal
from PySide6.QtGui import QFont, QTextBlockFormat, QTextCharFormat, QTextCursor, QTextDocument, QTextFormat
from PySide6.QtWidgets import QTextBrowser

CITE_SCHEME = "cite"
_CITE_RE = re.compile(r"\[(\d{1,3})\](?!\()")
_IMAGE_RE = re.compile(r"!\[")

MARKDOWN_FEATURES = QTextDocument.MarkdownFeature(
    QTextDocument.MarkdownFeature.MarkdownDialectGitHub.value
    | QTextDocument.MarkdownFeature.MarkdownNoHTML.value
)


def link_citations(text: str, known: set[int] | None = None) -> str:
    """Turn ``[n]`` into ``[[n]](cite:n)``; only numbers in ``known`` when given."""

    def repl(m: re.Match[str]) -> str:
        n = int(m.group(1))
        if known is not None and n not in known:
            return m.group(0)
        return f"[\\[{n}\\]]({CITE_SCHEME}:{n})"

    return _CITE_RE.sub(repl, text)


def set_safe_markdown(doc: QTextDocument, text: str, citations: set[int] | None = None) -> None:
    """Render untrusted Markdown into ``doc`` with no HTML, no images and only cite: links."""
    text = _IMAGE_RE.sub("\\!\\[", text)  # images are shown as their text, never fetched
    text = link_citations(text, citations)
    doc.setMarkdown(text, MARKDOWN_FEATURES)
    strip_foreign_links(doc)
    demote_headings(doc)


def demote_headings(doc: QTextDocument) -> None:
    """Render every heading as a bold paragraph of body size."""
    cursor = QTextCursor(doc)
    block = doc.begin()
    while block.isValid():
        if block.blockFormat().headingLevel() > 0:
            cursor.setPosition(block.position())
            fmt = QTextBlockFormat(block.blockFormat())
            fmt.setHeadingLevel(0)
            cursor.setBlockFormat(fmt)
            cursor.setPosition(block.position() + block.length() - 1, QTextCursor.KeepAnchor)
            body = QTextCharFormat()
            body.setProperty(QTextFormat.FontSizeAdjustment, 0)
            body.setFontWeight(QFont.Bold)
            cursor.mergeCharFormat(body)
            cursor.mergeBlockCharFormat(body)
        block = block.next()


def markdown_to_plain(text: str) -> str:
    """The text of untrusted Markdown without its markup (``**x**`` -> x, ``# T`` -> T); raw
    HTML stays as its characters. For one-line snippets, where Markdown has no room to render."""
    doc = QTextDocument()
    doc.setMarkdown(_IMAGE_RE.sub("\\!\\[", text), MARKDOWN_FEATURES)
    return doc.toPlainText()


def strip_foreign_links(doc: QTextDocument) -> None:
    """Remove every anchor that is not ``cite:n`` and every image from ``doc``."""
    cursor = QTextCursor(doc)
    block = doc.begin()
    while block.isValid():
        it = block.begin()
        while not it.atEnd():
            frag = it.fragment()
            if frag.isValid():
                fmt = frag.charFormat()
                href = fmt.anchorHref()
                if fmt.isImageFormat():
                    cursor.setPosition(frag.position())
                    cursor.setPosition(frag.position() + frag.length(), QTextCursor.KeepAnchor)
                    cursor.insertText("[image]", QTextCharFormat())
                elif (fmt.isAnchor() or href) and not is_cite_url(QUrl(href)):
                    clean = QTextCharFormat(fmt)
                    clean.setAnchor(False)
                    clean.setAnchorHref("")
                    clean.setFontUnderline(False)
                    clean.clearForeground()
                    cursor.setPosition(frag.position())
                    cursor.setPosition(frag.position() + frag.length(), QTextCursor.KeepAnchor)
                    cursor.setCharFormat(clean)
            it += 1
        block = block.next()


def plain_tooltip(text: str) -> str:
    """Tooltips guess rich text from content; escape it so document text stays text (its line
    breaks kept)."""
    return "<qt>" + html.escape(text).replace("\n", "<br>") + "</qt>" if text else ""


def is_cite_url(url: QUrl) -> bool:
    return url.scheme() == CITE_SCHEME and url.path().isdigit()


def anchors_of(doc: QTextDocument) -> list[str]:
    """Every anchor href left in a document (tests and debugging)."""
    out: list[str] = []
    block = doc.begin()
    while block.isValid():
        it = block.begin()
        while not it.atEnd():
            frag = it.fragment()
            if frag.isValid() and frag.charFormat().anchorHref():
                out.append(frag.charFormat().anchorHref())
            it += 1
        block = block.next()
    return out


def has_images(doc: QTextDocument) -> bool:
    block = doc.begin()
    while block.isValid():
        it = block.begin()
        while not it.atEnd():
            frag = it.fragment()
            if frag.isValid() and frag.charFormat().isImageFormat():
                return True
            it += 1
        block = block.next()
    return False


class SafeTextBrowser(QTextBrowser):
    """A read-only view for untrusted rich text: loads nothing, opens nothing by itself."""

    citation_clicked = Signal(int)

    def __init__(self, parent=None) -> None:
        super().__init__(parent)
        self.setOpenLinks(False)
        self.setOpenExternalLinks(False)
        self.resource_requests: list[str] = []  # every URL Qt asked us to load (none honoured)
        self.anchorClicked.connect(self._on_anchor)

    def loadResource(self, type_: int, name: QUrl):  # noqa: N802 - Qt override
        self.resource_requests.append(name.toString())
        return None

    def _on_anchor(self, url: QUrl) -> None:
        if is_cite_url(url):
            self.citation_clicked.emit(int(url.path()))

    def set_markdown(self, text: str, citations: set[int] | None = None) -> None:
        set_safe_markdown(self.document(), text, citations)

"""Untrusted text (documents quoted in answers) renders as text: no HTML, no fetches, no file links."""

from __future__ import annotations

from PySide6.QtCore import Qt
from PySide6.QtGui import QFont
from PySide6.QtWidgets import QLabel

from desktop_app.core import events as ev
from desktop_app.gui.chat.messages import AnswerMessage
from desktop_app.gui.markdown import SafeTextBrowser, anchors_of, has_images, markdown_to_plain

HOSTILE = """# Parrot care
<script>alert('owned')</script>
<img src="http://127.0.0.1:9/tracker.png"> <iframe src="http://127.0.0.1:9/"></iframe>
[open me](file:///etc/passwd) and ![pixel](http://127.0.0.1:9/pixel.gif)
<a href="javascript:alert(1)">click</a> <style>body{display:none}</style>
Parrots need **fresh water** daily [1].
"""


def test_hostile_markdown_shows_as_text_with_only_citation_links(qtbot):
    browser = SafeTextBrowser()
    qtbot.addWidget(browser)
    browser.set_markdown(HOSTILE, citations={1})
    browser.show()
    qtbot.wait(50)
    text = browser.toPlainText()
    # Raw HTML is visible as text, never interpreted.
    assert "<script>alert('owned')</script>" in text
    assert '<img src="http://127.0.0.1:9/tracker.png">' in text
    assert "<style>" in text
    # The only link left is our own citation anchor; file:, http:, javascript: are plain text.
    assert anchors_of(browser.document()) == ["cite:1"]
    assert not has_images(browser.document())
    # Nothing was fetched: Qt never even asked for a remote or local resource.
    assert browser.resource_requests == []
    assert "fresh water" in text


def test_clicking_a_foreign_link_does_nothing_and_citations_are_ours(qtbot):
    browser = SafeTextBrowser()
    qtbot.addWidget(browser)
    clicked: list[int] = []
    browser.citation_clicked.connect(clicked.append)
    from PySide6.QtCore import QUrl

    browser.anchorClicked.emit(QUrl("file:///etc/passwd"))
    browser.anchorClicked.emit(QUrl("http://127.0.0.1:9/"))
    browser.anchorClicked.emit(QUrl("cite:2"))
    assert clicked == [2]
    assert browser.source().isEmpty()  # openLinks is off: Qt navigated nowhere


def test_streamed_answer_with_hostile_quote_renders_safely(qtbot):
    message = AnswerMessage()
    qtbot.addWidget(message)
    for piece in HOSTILE.split(" "):
        message.handle_event(ev.Token(piece + " "))
    message.handle_event(
        ev.Answer(text=HOSTILE, citations=[ev.Citation(n=1, source="care.md", page=None, text="x")])
    )
    message.show()
    qtbot.wait(100)
    assert anchors_of(message.body.document()) == ["cite:1"]
    assert message.body.resource_requests == []
    assert [c.text() for c in message.chips] == ["[1] care.md"]


def test_hostile_document_through_the_whole_app_stays_text(make_window, qtbot, drop, tmp_path):
    """A document with HTML, remote images and file: links: indexed, cited, viewed, never executed."""
    window = make_window()
    hostile = tmp_path / "hostile.md"
    hostile.write_text(
        "# Cockatoo diet\n\n"
        "<script>fetch('http://127.0.0.1:9/steal')</script> Cockatoos eat seeds, nuts and berries. "
        '<img src="http://127.0.0.1:9/tracker.png"> [see the diet list](file:///etc/passwd) '
        "![pixel](http://127.0.0.1:9/pixel.gif) <a href='javascript:alert(1)'>more about cockatoo diet</a>\n",
        encoding="utf-8",
    )
    with qtbot.waitSignal(window.knowledge.batch_finished, timeout=60_000):
        drop(window.knowledge, [hostile])
    with qtbot.waitSignal(window.chat.answer_finished, timeout=60_000) as blocker:
        window.chat.ask("What do cockatoos eat?")
    answer = blocker.args[0]
    assert answer.citations and answer.citations[0].source == "hostile.md"
    # The answer quotes the document: its markup is text, its links are gone, nothing was loaded.
    assert set(anchors_of(answer.body.document())) <= {f"cite:{c.n}" for c in answer.citations}
    assert not has_images(answer.body.document())
    assert answer.body.resource_requests == []
    # Chip tooltips quote the chunk: escaped, so Qt's rich-text guess cannot render it.
    tip = answer.chips[0].toolTip()
    assert "<script>" not in tip and "&lt;script&gt;" in tip
    # The source view renders the note as answers are rendered: its HTML is visible as characters,
    # its links are plain text, and nothing is loaded.
    with qtbot.waitSignal(window.ctx.runner.job_finished, timeout=10_000):
        qtbot.mouseClick(answer.chips[0], Qt.LeftButton)
    view = window.viewer.text_view
    qtbot.waitUntil(lambda: "<script>" in view.toPlainText(), timeout=10_000)
    assert window.viewer.rendered and "see the diet list" in view.toPlainText()
    assert anchors_of(view.document()) == [] and not has_images(view.document())
    assert view.resource_requests == []


def _line_heights(browser: SafeTextBrowser) -> list[float]:
    """The height of each block's first line, laid out at the browser's width."""
    doc = browser.document()
    doc.setTextWidth(400)
    doc.documentLayout().documentSize()  # lays the document out
    heights = []
    block = doc.begin()
    while block.isValid():
        if block.text().strip():
            heights.append(block.layout().lineAt(0).height())
        block = block.next()
    return heights


def test_headings_in_an_answer_are_bold_body_text_never_larger(qtbot):
    """An extractive answer quoting a note's "# Title" must not open with a giant line."""
    browser = SafeTextBrowser()
    qtbot.addWidget(browser)
    browser.set_markdown(
        "# Red-shouldered Macaw (Diopsittaca nobilis)\n\n## Colours\n\nGreen with a red shoulder [1].", {1}
    )
    heights = _line_heights(browser)
    assert len(heights) == 3 and max(heights) == heights[-1]  # no heading line taller than body text
    block = browser.document().begin()
    assert block.text() == "Red-shouldered Macaw (Diopsittaca nobilis)"  # no "#" shown
    assert block.blockFormat().headingLevel() == 0
    assert block.begin().fragment().charFormat().fontWeight() == QFont.Bold
    assert anchors_of(browser.document()) == ["cite:1"]
    # Hostile HTML inside a heading stays text.
    browser.set_markdown("# <img src=http://127.0.0.1:9/x.png> Title <script>x()</script>")
    assert "<script>x()</script>" in browser.toPlainText() and not has_images(browser.document())
    assert browser.resource_requests == []


def test_evidence_snippets_drop_markdown_markup_and_keep_html_as_text(qtbot, shared_data):
    """The identification card's evidence: a note's "**Colours:**" shows as words, its "# Title" line
    is left out."""
    from desktop_app.core.library.documents import Hit
    from desktop_app.gui.identify.card import IdentifyCard

    card = IdentifyCard(shared_data / "images" / "coral" / "parrot.jpg")
    qtbot.addWidget(card)
    text = (
        "# African Grey Parrot (Psittacus erithacus)\n\n**Colours:** Grey body; *bright* red tail.\n\n"
        "<b>loud</b> [a link](http://127.0.0.1:9/) ![pixel](http://127.0.0.1:9/p.gif)"
    )
    card.handle_event(
        ev.Retrieved([Hit("g-0", "g", text, "parrots/african-grey-parrot.md", None, 0, 1, 0.5)])
    )
    snippet = next(label for label in card.findChildren(QLabel, "snippet"))
    shown = snippet.text()
    # The note's title line is left out (its chip names the note); the fields show as words.
    assert shown.startswith("Colours: Grey body; bright red tail.")
    assert "*" not in shown and "#" not in shown
    assert "<b>loud</b>" in shown and "a link" in shown  # HTML is text; a link is its words
    assert snippet.textFormat() == Qt.PlainText


def test_markdown_to_plain_keeps_html_and_drops_markup(qtbot):
    assert markdown_to_plain("## Diet\n**Seeds** and _fruit_ <i>x</i>") == "Diet\nSeeds and fruit <i>x</i>"

"""`kdesk bench summaries`: its documents (a paper with its abstract cut out, Wikipedia without its
lead), its key-term score and the check of a summary's paragraphs against the passages they cite."""

from __future__ import annotations

from collections import Counter

from desktop_app.core.ask.budget import ContextBlock
from desktop_app.core.library.documents import Hit, Section
from kdesk_lab.summaries import (
    Doc,
    _parts,
    content_terms,
    coverage,
    key_terms,
    papers,
    paragraph_support,
    wiki_articles,
)


def test_a_papers_abstract_is_the_reference_and_left_out_of_its_text(shared_data):
    found = {d.name: d for d in papers(shared_data)}
    dpr = found["multi-column.pdf"]
    body = "\n".join(p.text for p in dpr.parts)
    assert dpr.reference.startswith("Open-domain question answering relies on")
    assert dpr.reference[:80] not in body and "Introduction" in body[:200]


def test_a_wikipedia_articles_lead_is_the_reference(shared_data):
    article = wiki_articles(shared_data, limit=1)[0]
    assert article.kind == "wiki" and len(article.reference) >= 400
    assert article.reference[:100] not in "\n".join(p.text for p in article.parts)


def test_key_terms_are_the_references_rare_terms_that_its_document_holds():
    parts = _parts("kea.md", [Section("A mountain parrot of New Zealand that eats roots and insects.")])
    doc = Doc("kea.md", "wiki", "en", parts, "The kea is a mountain parrot. Keas eat roots.")
    keys = key_terms(doc, Counter(), 1)
    assert keys == set(content_terms("mountain parrot roots eat", "en"))
    assert coverage("Mountain parrots.", keys, "en") == 0.5


def test_each_paragraph_is_checked_against_the_passages_it_cites():
    hit = Hit("k-0", "k", "The kea lives in the Southern Alps of New Zealand.", "kea.md", None, 0, 1, 0.0)
    blocks = [ContextBlock(1, hit, hit.text)]
    support = paragraph_support(
        "Keas live in the Southern Alps [1].\n\nPenguins swim in cold seas [1].", blocks, "en"
    )
    assert [p["cites"] for p in support] == [[1], [1]]
    assert support[0]["support"] == 1.0 and support[1]["support"] == 0.0

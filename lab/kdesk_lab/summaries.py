"""`kdesk bench summaries`: whole-document summaries against the summaries their authors wrote.

Documents (read in place from ../shared/data, never copied): papers whose abstract is cut out of
the text (the abstract is the reference), Wikipedia articles of the CMU QA set (the lead is the
reference, the body the document), and Chinese CMRC 2018 paragraphs (no written summary: the lead
sentences are the reference and the rest is the document, scored by key-term coverage). Each is
parsed and chunked by the app's own code and read back as whole.py reads an indexed document.

Systems, side by side in one run and held to the same number of sentences (the reference's):
the app's extractive summary (whole.extractive_summary), sumy's LexRank and TextRank (given the
app's sentence splitter and a plain word splitter, so no NLTK data is needed) and, with ``--gguf``,
the model's map-reduce summary (whole.model_reading). Scores: ROUGE-L F1 (rouge-score; Chinese by
characters) and key-term coverage (the share of the reference's 15 highest tf-idf terms, among those
the document holds, that the summary holds).

``--long PDF --gguf PATH``: the model summarises one long PDF; every prompt is checked against the
context window, every paragraph of the summary against the passages it cites (the share of its
content terms found in them), and the time per page is reported.
"""

from __future__ import annotations

import json
import math
import re
import time
from collections import Counter
from collections.abc import Callable, Sequence
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any

from desktop_app.core.ask.budget import estimate_tokens
from desktop_app.core.ask.citations import parse_citations
from desktop_app.core.ask.sentences import split_sentences
from desktop_app.core.ask.whole import Part, Side, extractive_summary, model_reading, parts_of
from desktop_app.core.library.chunking import chunk_sections, make_doc_id
from desktop_app.core.library.documents import Hit, Section
from desktop_app.core.library.text_analysis import STOPWORDS_EN, answer_stemmer, jieba_module
from kdesk_lab.answers import shared_data_root
from kdesk_lab.index import load_average

SYSTEMS = ("kdesk", "lexrank", "textrank")
KEY_TERMS = 15


@dataclass
class Doc:
    name: str
    kind: str  # "paper" | "wiki" | "cmrc"
    lang: str
    parts: list[Part]
    reference: str
    pages: int = 0


# ------------------------------------------------------------------------------ documents
def _parts(name: str, sections: Sequence[Section]) -> list[Part]:
    """The sections as whole.py reads an indexed document back: chunked by the app, overlap dropped."""
    chunks = chunk_sections(sections, make_doc_id(name), name, size=1000, overlap=150)
    hits = [
        Hit(
            c.id,
            c.doc_id,
            c.text,
            c.source,
            c.page,
            c.chunk_index,
            c.total_chunks,
            0.0,
            heading_path=c.heading_path,
        )
        for c in chunks
    ]
    return parts_of(hits)


_ABSTRACT = re.compile(r"\bAbstract\b", re.I)
_INTRO = re.compile(r"\n\s*(?:1\.?|I\.?)?\s*Introduction\b", re.I)


def _may_be_paper(path: Path) -> bool:
    """A PDF of at most 40 pages whose first page says "Abstract" (read cheaply, before parsing it whole)."""
    import logging

    import pypdf

    logging.getLogger("pypdf").setLevel(logging.ERROR)
    try:
        reader = pypdf.PdfReader(path)
        return len(reader.pages) <= 40 and bool(_ABSTRACT.search(reader.pages[0].extract_text() or ""))
    except Exception:  # noqa: BLE001 - broken and encrypted test PDFs are not papers
        return False


def papers(root: Path) -> list[Doc]:
    """PDF papers in the shared data whose first page has an abstract: the abstract is cut out."""
    from desktop_app.core.library.parsers import parse_file

    found: dict[str, Doc] = {}  # one copy of each paper (by its abstract): the one with the most pages
    for path in sorted((root / "docs").rglob("*.pdf")):
        if not _may_be_paper(path):
            continue
        try:
            sections = parse_file(path)
        except Exception:  # noqa: BLE001 - broken and encrypted test PDFs are not papers
            continue
        first = sections[0].text if sections else ""
        a, b = _ABSTRACT.search(first[:3000]), _INTRO.search(first)
        if not a or not b or b.start() <= a.end():
            continue
        reference = first[a.end() : b.start()].strip(" .\n")
        body = [Section(first[b.start() :], sections[0].page, sections[0].heading_path)] + sections[1:]
        if len(reference) < 300 or sum(len(s.text) for s in body) < 3000:
            continue
        key = " ".join(reference.split())[:200]
        if key not in found or len(sections) > found[key].pages:
            found[key] = Doc(path.name, "paper", "en", _parts(path.name, body), reference, len(sections))
    return list(found.values())


def wiki_articles(root: Path, limit: int, offset: int = 0) -> list[Doc]:
    """CMU QA Wikipedia articles: the lead (before the first section break) is the reference."""
    out: list[Doc] = []
    for path in sorted((root / "qa" / "cmu_wikiqa" / "storage").glob("*.txt.clean")):
        text = path.read_text(encoding="utf-8", errors="replace")
        title, _, rest = text.strip().partition("\n")
        lead, sep, body = rest.strip().partition("\n\n\n")
        if not sep or len(lead) < 400 or len(body) < 4000 or len(body) > 60000:
            continue
        name = f"{title.strip()}.txt"
        out.append(Doc(name, "wiki", "en", _parts(name, [Section(body.strip())]), lead.strip()))
        if len(out) >= offset + limit:
            break
    return out[offset:]


def cmrc_paragraphs(root: Path, limit: int, offset: int = 0) -> list[Doc]:
    """Chinese CMRC 2018 paragraphs (no written summary): the first two sentences are the reference."""
    out: list[Doc] = []
    with open(root / "retrieval" / "cmrc2018_dev" / "corpus.jsonl", encoding="utf-8") as f:
        for line in f:
            row = json.loads(line)
            sentences = split_sentences(row["text"])
            if len(row["text"]) < 700 or len(sentences) < 8:
                continue
            lead, body = "".join(sentences[:2]), "".join(sentences[2:])
            name = f"{row['title']}.txt"
            out.append(Doc(name, "cmrc", "zh", _parts(name, [Section(body)]), lead))
            if len(out) >= offset + limit:
                break
    return out[offset:]


# ------------------------------------------------------------------------------ baselines
class _Words:
    """sumy's tokenizer protocol over the app's sentence splitter: no NLTK data is needed."""

    def __init__(self, lang: str) -> None:
        self.lang = lang

    def to_sentences(self, text: str) -> list[str]:
        return split_sentences(text)

    def to_words(self, text: str) -> list[str]:
        if self.lang == "zh":
            return [w for w in jieba_module().lcut(text) if w.strip() and re.search(r"\w", w)]
        return re.findall(r"[A-Za-z0-9]+(?:'[a-z]+)?", text)


def sumy_summary(doc: Doc, method: str, n: int) -> list[str]:
    """``n`` sentences chosen by sumy's LexRank or TextRank over the same sentences as the app's."""
    from sumy.models.dom import ObjectDocumentModel, Paragraph
    from sumy.models.dom import Sentence as SumySentence
    from sumy.nlp.stemmers import Stemmer
    from sumy.summarizers.lex_rank import LexRankSummarizer
    from sumy.summarizers.text_rank import TextRankSummarizer
    from sumy.utils import get_stop_words

    words = _Words(doc.lang)
    paragraphs = [Paragraph([SumySentence(s, words) for s in split_sentences(p.text)]) for p in doc.parts]
    language = "chinese" if doc.lang == "zh" else "english"
    stemmer = (lambda w: w) if doc.lang == "zh" else Stemmer(language)
    summarizer = (LexRankSummarizer if method == "lexrank" else TextRankSummarizer)(stemmer)
    summarizer.stop_words = get_stop_words(language)
    return [str(s) for s in summarizer(ObjectDocumentModel(paragraphs), n)]


# ------------------------------------------------------------------------------ scores
class _Chars:
    """rouge-score's tokenizer protocol, one token per character (Chinese ROUGE)."""

    def tokenize(self, text: str) -> list[str]:
        return [c for c in text if re.match(r"\w", c)]


def _scorer(lang: str) -> Callable[[str, str], float]:
    from rouge_score import rouge_scorer

    if lang == "zh":
        scorer = rouge_scorer.RougeScorer(["rougeL"], tokenizer=_Chars())
    else:
        scorer = rouge_scorer.RougeScorer(["rougeL"], use_stemmer=True)
    return lambda ref, pred: scorer.score(ref, pred)["rougeL"].fmeasure


def content_terms(text: str, lang: str) -> list[str]:
    """Stemmed English words (no stop words), or Chinese words of two characters or more."""
    if lang == "zh":
        return [w for w in jieba_module().lcut(text) if len(w) >= 2 and re.fullmatch(r"[\u3400-\u9fff]+", w)]
    stem = answer_stemmer()
    return [
        stem(w) for w in re.findall(r"[a-z][a-z0-9-]+", text.lower()) if w not in STOPWORDS_EN and len(w) > 2
    ]


def key_terms(doc: Doc, df: Counter[str], n_docs: int) -> set[str]:
    """The reference's highest tf-idf terms among those its document holds."""
    body = set(content_terms("\n".join(p.text for p in doc.parts), doc.lang))
    tf = Counter(t for t in content_terms(doc.reference, doc.lang) if t in body)
    weight = {t: c * math.log((n_docs + 1) / (df[t] + 0.5)) for t, c in tf.items()}
    return set(sorted(weight, key=lambda t: (-weight[t], t))[:KEY_TERMS])


def coverage(summary: str, keys: set[str], lang: str) -> float | None:
    if not keys:
        return None
    return len(keys & set(content_terms(summary, lang))) / len(keys)


# ------------------------------------------------------------------------------ the run
@dataclass
class Row:
    doc: str
    kind: str
    lang: str
    sentences: int  # the length every system is held to
    rouge_l: dict[str, float] = field(default_factory=dict)
    key_terms: dict[str, float | None] = field(default_factory=dict)
    seconds: dict[str, float] = field(default_factory=dict)


def _model_summary(assistant: Any, doc: Doc) -> str:
    from desktop_app.core.ask.question import Question
    from desktop_app.core.events import Answer

    q = Question.read("总结这篇文档" if doc.lang == "zh" else "Summarize this document")
    for event in model_reading(assistant, q, [Side(doc.name, [doc.name])], [doc.parts], "summary", None):
        if isinstance(event, Answer):
            return re.sub(r"\s*[\[【][\d,，\s]+[\]】]", "", event.text)
    return ""


def run_summaries_bench(
    root: Path | None = None,
    limit: int = 40,
    offset: int = 0,
    gguf: Path | None = None,
    model_limit: int = 6,
    progress: Callable[[str], None] = lambda line: None,
) -> dict[str, Any]:
    """Score every system on every document (``limit`` of each set after the first ``offset``: the
    first 40 tuned the app's ranking); the model (``gguf``) on the first ``model_limit`` of each set."""
    root = root or shared_data_root()
    docs = papers(root) + wiki_articles(root, limit, offset) + cmrc_paragraphs(root, limit, offset)
    systems = list(SYSTEMS)
    assistant = _assistant(gguf) if gguf else None
    if assistant is not None:
        systems.append("model")
    df: dict[str, Counter[str]] = {"en": Counter(), "zh": Counter()}
    counts: Counter[str] = Counter()
    for doc in docs:
        df[doc.lang].update(set(content_terms("\n".join(p.text for p in doc.parts), doc.lang)))
        counts[doc.lang] += 1
    rows: list[Row] = []
    modelled: Counter[str] = Counter()
    try:
        for doc in docs:
            n = max(2, min(10, len(split_sentences(doc.reference))))
            keys = key_terms(doc, df[doc.lang], counts[doc.lang])
            score = _scorer(doc.lang)
            row = Row(doc.name, doc.kind, doc.lang, n)
            outputs: dict[str, str] = {}
            for system in systems:
                if system == "model" and modelled[doc.kind] >= model_limit:
                    continue
                t0 = time.perf_counter()
                if system == "kdesk":
                    text = "\n".join(s.text for s in extractive_summary(doc.parts, most=n))
                elif system == "model":
                    text = _model_summary(assistant, doc)
                    modelled[doc.kind] += 1
                else:
                    text = "\n".join(sumy_summary(doc, system, n))
                row.seconds[system] = round(time.perf_counter() - t0, 3)
                outputs[system] = text
                row.rouge_l[system] = round(score(doc.reference, text), 4)
                row.key_terms[system] = coverage(text, keys, doc.lang)
            rows.append(row)
            progress(f"{doc.kind} {doc.name}: " + " ".join(f"{k} {v:.3f}" for k, v in row.rouge_l.items()))
    finally:
        if assistant is not None:
            assistant.chat_model.close()
    return {"rows": [asdict(r) for r in rows], "table": _table(rows, systems), "load": load_average()}


def _mean(values: Sequence[float | None]) -> float | None:
    got = [v for v in values if v is not None]
    return round(sum(got) / len(got), 4) if got else None


def _table(rows: Sequence[Row], systems: Sequence[str]) -> list[dict[str, Any]]:
    out = []
    for kind in ("paper", "wiki", "cmrc"):
        mine = [r for r in rows if r.kind == kind]
        for system in systems:
            scored = [r for r in mine if system in r.rouge_l]
            if not scored:
                continue
            out.append(
                {
                    "set": kind,
                    "system": system,
                    "docs": len(scored),
                    "rouge_l": _mean([r.rouge_l[system] for r in scored]),
                    "key_terms": _mean([r.key_terms[system] for r in scored]),
                    "seconds": _mean([r.seconds[system] for r in scored]),
                }
            )
    return out


def format_summaries(report: dict[str, Any]) -> str:
    lines = [f"{'set':<6} {'system':<9} {'docs':>4} {'ROUGE-L':>8} {'key terms':>9} {'s/doc':>7}"]
    for t in report["table"]:
        lines.append(
            f"{t['set']:<6} {t['system']:<9} {t['docs']:>4} {t['rouge_l'] or 0:>8.4f} "
            f"{t['key_terms'] or 0:>9.3f} {t['seconds'] or 0:>7.2f}"
        )
    if report.get("load"):
        lines.append(f"load average: {' '.join(str(x) for x in report['load'])}")
    return "\n".join(lines)


# ------------------------------------------------------------------------------ a long PDF
class _Watched:
    """A chat model that records each prompt's size (estimated tokens) and the time of each call."""

    def __init__(self, inner: Any) -> None:
        self.inner = inner
        self.name = inner.name
        self.context_window = inner.context_window
        self.calls: list[dict[str, Any]] = []

    def stream(self, messages, json_schema=None, max_tokens=None, temperature=None, cancel=None, **kw):
        prompt = sum(estimate_tokens(m["content"]) + 8 for m in messages)
        t0 = time.perf_counter()
        out = []
        for piece in self.inner.stream(
            messages, json_schema=json_schema, max_tokens=max_tokens, temperature=temperature, cancel=cancel
        ):
            out.append(piece)
            yield piece
        self.calls.append(
            {"prompt_tokens": prompt, "max_tokens": max_tokens, "seconds": round(time.perf_counter() - t0, 1)}
        )

    def close(self) -> None:
        self.inner.close()


def _assistant(gguf: Path, watch: bool = False) -> Any:
    from desktop_app.core.ask.assistant import Assistant
    from desktop_app.core.config import Config
    from desktop_app.core.models.llm.factory import make_chat_model
    from kdesk_lab.answers import backend_config

    cfg = backend_config(Config(), str(gguf))
    cfg.llm.timeout = 900.0  # a 3,500-token map prompt on two busy cores takes minutes
    model = make_chat_model(cfg)
    return Assistant(None, _Watched(model) if watch else model, cfg)


def paragraph_support(text: str, blocks: Sequence[Any], lang: str) -> list[dict[str, Any]]:
    """Each paragraph of a summary: the passages it cites and the share of its content terms they hold."""
    by_n = {b.n: b for b in blocks}
    out = []
    for para in [p for p in re.split(r"\n\s*\n|\n(?=\s*[-*] )", text) if p.strip()]:
        cited, _bad = parse_citations(para, blocks)
        terms = set(content_terms(re.sub(r"[\[【][\d,，\s]+[\]】]", "", para), lang))
        held = set(content_terms("\n".join(by_n[n].hit.text for n in cited), lang)) if cited else set()
        share = len(terms & held) / len(terms) if terms else None
        out.append({"paragraph": para.strip()[:200], "cites": cited, "support": share})
    return out


def run_long_pdf(
    pdf: Path, gguf: Path, progress: Callable[[str], None] = lambda line: None
) -> dict[str, Any]:
    """The model's summary of one long PDF: prompt sizes against the window, paragraph support, time per page."""
    from desktop_app.core.ask.question import Question
    from desktop_app.core.events import Answer, Progress, Warning
    from desktop_app.core.library.parsers import parse_file

    sections = parse_file(pdf)
    pages = len({s.page for s in sections if s.page is not None})
    parts = _parts(pdf.name, sections)
    assistant = _assistant(gguf, watch=True)
    model = assistant.chat_model
    answer = None
    warnings = []
    t0 = time.perf_counter()
    try:
        q = Question.read("Summarize this document")
        for event in model_reading(assistant, q, [Side(pdf.name, [pdf.name])], [parts], "summary", None):
            if isinstance(event, Progress):
                progress(f"{event.what} ({time.perf_counter() - t0:.0f} s)")
            elif isinstance(event, Warning):
                warnings.append(str(event.message))
            elif isinstance(event, Answer):
                answer = event
    finally:
        model.close()
    seconds = time.perf_counter() - t0
    from desktop_app.core.ask.budget import ContextBlock

    own = {piece.hit.chunk_id: piece for part in parts for piece in part.pieces}  # whole chunks, not excerpts
    blocks = (
        [ContextBlock(c.n, own[c.chunk_id].hit, own[c.chunk_id].text) for c in answer.citations]
        if answer
        else []
    )
    support = paragraph_support(answer.text, blocks, "en") if answer else []
    shares = [p["support"] for p in support if p["support"] is not None]
    return {
        "pdf": str(pdf),
        "pages": pages,
        "chunks": sum(len(p.pieces) for p in parts),
        "seconds": round(seconds, 1),
        "seconds_per_page": round(seconds / max(1, pages), 2),
        "calls": len(model.calls),
        "largest_prompt_tokens": max(
            (c["prompt_tokens"] + (c["max_tokens"] or 0) for c in model.calls), default=0
        ),
        "context_window": model.context_window,
        "summary": answer.text if answer else "",
        "paragraphs": support,
        "paragraphs_supported": sum(1 for s in shares if s >= 0.5),
        "paragraphs_citing": sum(1 for p in support if p["cites"]),
        "mean_support": round(sum(shares) / len(shares), 3) if shares else None,
        "warnings": warnings,
        "load": load_average(),
    }

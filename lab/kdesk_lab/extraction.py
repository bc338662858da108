"""PDF text extraction measured against an independent extractor: ``python -m kdesk_lab.extraction``.

For every PDF under ``--docs`` (default ``../shared/data/docs``) that poppler's ``pdftotext`` can
read (Debian/Ubuntu: ``apt-get install poppler-utils``), the reference is pdftotext's text of the
whole file, NFKC-normalised. Two extractions are compared with it:

- ``before``: pypdf's plain ``extract_text()`` per page, which is what ``parse_pdf`` returned before
  the repairs in docs/pdf-extraction.md;
- ``after``: the sections ``parse_pdf`` returns now.

Words are lowercase runs of letters and digits (the BM25 tokenizer's split, without stemming).
Recall = reference words found (as a multiset) / reference words; precision = the same matches /
extracted words; "extra" counts extracted words beyond the reference's count of the same word
(duplicates, fragments of split words, glued words). Time is the parser's wall time per page.

The passage check indexes every document under ``--docs`` (PDFs with the extraction under test,
DOCX with the project's parser) in the project's BM25 ``KeywordIndex`` and queries it with passages
of the reference text (``--passage-words`` words, 6 and 12 by default, at 1/4, 1/2 and 3/4 of each
PDF with at least 300 reference words); a query is a hit when the top document's reference text
holds the passage (so an identical copy of a PDF counts as well as the PDF). "repaired" passages
start at the first reference word (4+ letters) that the ``before`` text lacks entirely and the
``after`` text has, i.e. a word that a ligature, a line-end hyphen or a split broke: the queries
this work is about.

``--joins`` lists every hyphenation and split repair of the ``after`` run; with ``--dict`` (a word
list such as /usr/share/dict/words) the joined words the list lacks are marked for review.
"""

from __future__ import annotations

import argparse
import json
import logging
import re
import shutil
import subprocess
import sys
import tempfile
import time
import unicodedata
from collections import Counter
from collections.abc import Callable
from dataclasses import asdict, dataclass
from pathlib import Path

from desktop_app.core.library import reasons
from desktop_app.core.library.documents import ParseError, Section

DEFAULT_DOCS = Path(__file__).resolve().parents[2].parent / "shared" / "data" / "docs"
_TOKEN = re.compile(r"[^\W_]+")


def words(text: str) -> Counter[str]:
    return Counter(_TOKEN.findall(text.lower()))


def reference_text(path: Path) -> str | None:
    """pdftotext's text of the whole file (NFKC), None when poppler cannot read it."""
    try:
        out = subprocess.run(
            ["pdftotext", "-q", "-enc", "UTF-8", str(path), "-"],
            capture_output=True,
            timeout=300,
            check=False,
        )
    except subprocess.TimeoutExpired:
        return None
    if out.returncode != 0:
        return None
    return unicodedata.normalize("NFKC", out.stdout.decode("utf-8", errors="replace"))


def parse_before(path: Path) -> list[Section]:
    """The parser before the repairs: pypdf's plain extraction, one section per page with text."""
    from pypdf import PdfReader

    from desktop_app.core.library.parsers.pdf import clean_text

    try:
        reader = PdfReader(path, strict=False)
        if reader.is_encrypted and not reader.decrypt(""):
            raise ParseError(reasons.ENCRYPTED, label="PDF")
        pages = [clean_text(page.extract_text() or "") for page in reader.pages]
    except ParseError:
        raise
    except (Exception, RecursionError) as exc:
        raise ParseError(reasons.CORRUPT, label="PDF", reason=exc) from exc
    sections = [Section(text=t, page=i + 1) for i, t in enumerate(pages) if t.strip()]
    if not sections:
        raise ParseError(reasons.EMPTY)
    return sections


def parse_after(path: Path) -> list[Section]:
    from desktop_app.core.library.parsers.pdf import parse_pdf

    return parse_pdf(path)


@dataclass
class Score:
    name: str
    pages: int
    reference_words: int
    matched: dict[str, int]  # per mode
    extracted: dict[str, int]
    seconds: dict[str, float]

    def recall(self, mode: str) -> float:
        return self.matched[mode] / self.reference_words

    def precision(self, mode: str) -> float:
        return self.matched[mode] / self.extracted[mode] if self.extracted[mode] else 0.0


def score(ref: Counter[str], got: Counter[str]) -> tuple[int, int]:
    """(matched, extracted) word counts of an extraction against the reference (multisets)."""
    return sum(min(n, got[w]) for w, n in ref.items()), sum(got.values())


class _Joins(logging.Handler):
    """Collects the parser's repair decisions (its debug records) during the ``after`` run."""

    def __init__(self) -> None:
        super().__init__(logging.DEBUG)
        self.records: list[tuple[str, str]] = []
        self.current = ""

    def emit(self, record: logging.LogRecord) -> None:
        message = record.getMessage()
        if message.startswith(("hyphenation joined", "split joined")):
            self.records.append((self.current, message))


def _timed(parse: Callable[[Path], list[Section]], path: Path) -> tuple[list[Section] | None, float]:
    start = time.perf_counter()
    try:
        sections = parse(path)
    except ParseError:
        sections = None
    return sections, time.perf_counter() - start


def _page_count(path: Path) -> int:
    from pypdf import PdfReader

    try:
        reader = PdfReader(path, strict=False)
        if reader.is_encrypted:
            reader.decrypt("")
        return len(reader.pages)
    except (Exception, RecursionError):
        return 0


def spread_passages(reference: str, n_words: int) -> list[str]:
    """Passages at 1/4, 1/2 and 3/4 of a reference text of 300+ words."""
    tokens = reference.split()
    if len(tokens) < 300:
        return []
    return [" ".join(tokens[len(tokens) * k // 4 :][:n_words]) for k in (1, 2, 3)]


def repaired_passage(reference: str, before: str, after: str, n_words: int) -> list[str]:
    """The passage starting at the first reference word (4+ letters) that the ``before`` extraction
    never has and the ``after`` one has: a word a ligature, a line-end hyphen or a split broke."""
    tokens = reference.split()
    if len(tokens) < 300:
        return []
    missing, found = words(before), words(after)
    for i, token in enumerate(tokens):
        parts = _TOKEN.findall(token.lower())
        if len(parts) == 1 and len(parts[0]) >= 4 and not missing[parts[0]] and found[parts[0]]:
            return [" ".join(tokens[i : i + n_words])]
    return []


def passage_check(
    sections: dict[str, dict[str, list[Section]]],
    references: dict[str, str],
    others: dict[str, list[Section]],
    queries: list[tuple[str, str]],
) -> dict[str, dict[str, object]]:
    """For each mode: how many (pdf, passage) queries rank a document holding the passage first
    in BM25 over every document, and the misses."""
    from desktop_app.core.library.bm25 import KeywordIndex
    from desktop_app.core.library.chunking import chunk_sections, make_doc_id

    squeezed = {name: _collapse_words(ref) for name, ref in references.items()}
    results: dict[str, dict[str, object]] = {}
    for mode, docs in sections.items():
        with tempfile.TemporaryDirectory() as tmp:
            index = KeywordIndex(Path(tmp))
            names = {}
            for name, doc_sections in {**docs, **others}.items():
                doc_id = make_doc_id(name)
                names[doc_id] = name
                index.upsert(chunk_sections(doc_sections, doc_id, name))
            hits, misses = 0, []
            for name, passage in queries:
                top = index.search_docs(passage, 1)
                top_name = names[top[0][0]] if top else None
                if top_name is not None and _collapse_words(passage) in squeezed.get(top_name, ""):
                    hits += 1
                else:
                    misses.append({"pdf": name, "passage": passage, "top": top_name})
        results[mode] = {"queries": len(queries), "first": hits, "misses": misses}
    return results


def _collapse_words(text: str) -> str:
    return " ".join(_TOKEN.findall(text.lower()))


def _other_documents(docs: Path) -> dict[str, list[Section]]:
    from desktop_app.core.library.parsers import parse_file

    out = {}
    for path in sorted(docs.rglob("*.docx")):
        try:
            out[str(path.relative_to(docs))] = parse_file(path)
        except ParseError:
            continue
    return out


def run(docs: Path, passage_words: list[int], joins: bool, dictionary: Path | None) -> dict[str, object]:
    if shutil.which("pdftotext") is None:
        raise SystemExit("pdftotext not found: install poppler-utils (it gives the reference text)")
    logging.getLogger("pypdf").setLevel(logging.ERROR)
    handler = _Joins()
    parser_log = logging.getLogger("desktop_app.core.library.parsers.pdf")
    parser_log.addHandler(handler)
    parser_log.setLevel(logging.DEBUG)
    parsers = {"before": parse_before, "after": parse_after}

    scores: list[Score] = []
    extracted_sections: dict[str, dict[str, list[Section]]] = {mode: {} for mode in parsers}
    joined: dict[str, dict[str, str]] = {mode: {} for mode in parsers}
    references: dict[str, str] = {}
    for path in sorted(docs.rglob("*.pdf")):
        name = str(path.relative_to(docs))
        ref_text = reference_text(path)
        if ref_text is None:
            continue
        ref = words(ref_text)
        results = {}
        for mode, parse in parsers.items():
            handler.current = name
            results[mode] = _timed(parse, path)
        if not sum(ref.values()) or all(sections is None for sections, _ in results.values()):
            continue
        references[name] = ref_text
        matched, extracted, seconds = {}, {}, {}
        for mode, (sections, elapsed) in results.items():
            text = "\n".join(s.text for s in sections or [])
            extracted_sections[mode][name] = sections or []
            joined[mode][name] = text
            matched[mode], extracted[mode] = score(ref, words(text))
            seconds[mode] = elapsed
        scores.append(Score(name, _page_count(path), sum(ref.values()), matched, extracted, seconds))
    parser_log.removeHandler(handler)

    others = _other_documents(docs)
    ref_total = sum(s.reference_words for s in scores)
    pages = sum(s.pages for s in scores)
    totals: dict[str, dict[str, float]] = {}
    for mode in parsers:
        matched_total = sum(s.matched[mode] for s in scores)
        extracted_total = sum(s.extracted[mode] for s in scores)
        substantial = [s for s in scores if s.reference_words >= 100]
        totals[mode] = {
            "recall": matched_total / ref_total,
            "precision": matched_total / extracted_total,
            # Per document, averaged over those with 100+ reference words (the pooled figures
            # above are mostly the 619-page DA-619p.pdf).
            "mean_recall": sum(s.recall(mode) for s in substantial) / len(substantial),
            "mean_precision": sum(s.precision(mode) for s in substantial) / len(substantial),
            "extra_words": extracted_total - matched_total,
            "ms_per_page": 1000 * sum(s.seconds[mode] for s in scores) / pages,
        }
    report: dict[str, object] = {
        "documents": len(scores),
        "pages": pages,
        "reference_words": ref_total,
        "totals": totals,
        "per_document": [
            {
                **asdict(s),
                "recall": {m: s.recall(m) for m in parsers},
                "precision": {m: s.precision(m) for m in parsers},
            }
            for s in scores
        ],
        "passages": {
            f"{n} words, {kind}": passage_check(extracted_sections, references, others, queries)
            for n in passage_words
            for kind, queries in (
                ("spread", [(m, p) for m, ref in references.items() for p in spread_passages(ref, n)]),
                (
                    "repaired",
                    [
                        (m, p)
                        for m, ref in references.items()
                        for p in repaired_passage(ref, joined["before"][m], joined["after"][m], n)
                    ],
                ),
            )
        },
    }
    if joins:
        known = set()
        if dictionary is not None:
            known = {w.strip().lower() for w in dictionary.read_text(errors="replace").split()}
        listed = []
        for doc, message in handler.records:
            joined = re.sub(r"[- ]", "", message.split(": ", 1)[1])
            listed.append(
                {"pdf": doc, "repair": message, "in_dictionary": joined.lower() in known if known else None}
            )
        report["joins"] = listed
    return report


def _print(report: dict[str, object]) -> None:
    print(
        f"{report['documents']} PDFs, {report['pages']} pages, {report['reference_words']} reference words\n"
    )
    print("| PDF | pages | ref words | recall before | recall after | precision before | precision after |")
    print("|---|---|---|---|---|---|---|")
    for s in report["per_document"]:  # type: ignore[union-attr]
        print(
            f"| {s['name']} | {s['pages']} | {s['reference_words']} | {s['recall']['before']:.3f} | "
            f"{s['recall']['after']:.3f} | {s['precision']['before']:.3f} | {s['precision']['after']:.3f} |"
        )
    print()
    for mode, t in report["totals"].items():  # type: ignore[union-attr]
        print(
            f"{mode}: recall {t['recall']:.4f}, precision {t['precision']:.4f}, mean over documents "
            f"{t['mean_recall']:.4f} / {t['mean_precision']:.4f}, extra words {t['extra_words']}, "
            f"{t['ms_per_page']:.1f} ms/page"
        )
    for kind, by_mode in report["passages"].items():  # type: ignore[union-attr]
        for mode, p in by_mode.items():
            print(f"passages of {kind}, {mode}: {p['first']}/{p['queries']} ranked their PDF first")
            for miss in p["misses"]:
                print(f"   miss: {miss['pdf']} -> {miss['top']}: {miss['passage']!r}")
    for j in report.get("joins", []):  # type: ignore[union-attr]
        mark = {True: "", False: "  [not in dictionary]", None: ""}[j["in_dictionary"]]
        print(f"   {j['pdf']}: {j['repair']}{mark}")


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--docs", type=Path, default=DEFAULT_DOCS)
    parser.add_argument("--passage-words", type=int, nargs="+", default=[6, 12])
    parser.add_argument("--joins", action="store_true", help="list every hyphenation and split repair")
    parser.add_argument("--dict", type=Path, default=None, help="word list to check joined words against")
    parser.add_argument("--json", action="store_true")
    args = parser.parse_args(argv)
    report = run(args.docs.resolve(), args.passage_words, args.joins or args.dict is not None, args.dict)
    if args.json:
        json.dump(report, sys.stdout, indent=1, ensure_ascii=False)
        print()
    else:
        _print(report)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())

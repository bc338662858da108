"""BM25 keyword index beside the vector store (bm25s), persisted as per-chunk tokens.

Two BM25 models share the stored tokens: one over chunks (which chunk of a document matches)
and one over whole documents (which document matches: a document's headings once plus its
chunks' text without the overlap repeated from the previous chunk). On SciFact, BM25 over whole
documents beats the best chunk of each document (nDCG@10 0.693 vs 0.681 test, 0.696 vs 0.685
train), and the retriever fuses at document level (retrieval.py).

bm25s builds a static index, so we keep every chunk's tokens (plus doc id and scope) on disk
and rebuild the bm25s models lazily on the first search after a change (a fraction of a second
for 10k chunks). If the persisted file is missing, corrupt or written by another tokenizer
version the index starts empty; the KnowledgeBase compares ``doc_ids()`` with its manifest and
re-feeds what is missing.

Terms: text_analysis.py, the one analyzer of the index and the assistant (stemmed words, jieba words
and bigrams of Chinese runs, name terms, weighted question terms).
"""

from __future__ import annotations

import contextlib
import json
import logging
import os
import threading
from collections.abc import Iterable
from dataclasses import dataclass
from pathlib import Path

import numpy as np

from desktop_app.core.library.bilingual import translated_terms
from desktop_app.core.library.datafolder import file_stamp, write_whole
from desktop_app.core.library.documents import Chunk
from desktop_app.core.library.languages import text_lang
from desktop_app.core.library.text_analysis import (
    HAN_RE,
    TOKENIZER_VERSION,
    plain_terms,
    query_terms,
    tokenize,
)
from desktop_app.core.sqlite_repair import set_aside

log = logging.getLogger(__name__)

FILE_NAME = "bm25.json"


def held(term: str, vocab: dict[str, int] | set[str]) -> bool:
    """Whether the index holds ``term``: as a term, or a Chinese word jieba split otherwise in the
    pages (布洛芬缓释胶囊) as all of its bigrams."""
    if term in vocab:
        return True
    return len(term) > 2 and bool(HAN_RE.fullmatch(term)) and all(term[i : i + 2] in vocab for i in range(len(term) - 1))


def weighted_scores(model, terms: list[str], weights: list[float]) -> np.ndarray | None:
    """BM25 scores of every document of a bm25s model for weighted query terms (None: no term
    is in the model's vocabulary). bm25s keeps each term's scores as a sparse column.

    Its public ``get_scores`` has no term weights, so this reads the index's internals
    (``scores``, ``vocab_dict``): pyproject.toml pins bm25s to the minor they were read from, and
    test_bm25.py checks them against ``get_scores``."""
    data, indices, indptr = model.scores["data"], model.scores["indices"], model.scores["indptr"]
    vocab = model.vocab_dict
    scores: np.ndarray | None = None
    for term, weight in zip(terms, weights):
        tid = vocab.get(term)
        if tid is None or weight == 0:
            continue
        if scores is None:
            scores = np.zeros(model.scores["num_docs"], dtype=np.float32)
        start, end = indptr[tid], indptr[tid + 1]
        scores[indices[start:end]] += weight * data[start:end]  # a column lists a document once
    return scores


@dataclass
class _Entry:
    doc_id: str
    scope: str
    terms: list[str]  # heading terms, then the chunk text's terms
    head: int = 0  # how many leading terms come from the heading path
    skip: int = 0  # text terms repeated from the previous chunk (overlap): not counted per document
    head_in_text: bool = False  # the text starts with its heading (a Markdown title line)
    lang: str = ""  # the chunk's language (languages.py): retrieval asks which encoder can read it

    def doc_terms(self, heading_changed: bool) -> list[str]:
        """This chunk's share of its document's terms: the heading when it changes, new text."""
        lead = self.terms[: self.head] if heading_changed and not self.head_in_text else []
        return lead + self.terms[self.head + self.skip :]


def overlap_chars(prev: str, text: str, min_len: int = 16) -> int:
    """Length of the longest suffix of ``prev`` that starts ``text`` (the chunker's overlap)."""
    if len(prev) < min_len or len(text) < min_len:
        return 0
    probe = text[:min_len]
    pos = prev.find(probe, max(0, len(prev) - len(text)))
    while pos >= 0:
        if text.startswith(prev[pos:]):
            return len(prev) - pos
        pos = prev.find(probe, pos + 1)
    return 0


def keyword_entries(chunks: list[Chunk]) -> list[tuple[str, _Entry]]:
    """Entries for the chunks of whole documents (overlap is found between consecutive chunks).
    Pure, so the indexer computes them (jieba and all) on its parsing thread."""
    out: list[tuple[str, _Entry]] = []
    prev: Chunk | None = None
    for c in sorted(chunks, key=lambda c: (c.doc_id, c.chunk_index)):
        heading = " ".join(c.heading_path)
        head_terms = tokenize(heading) if heading else []
        text_terms = tokenize(c.text)
        skip = 0
        if prev is not None and prev.doc_id == c.doc_id:
            n = overlap_chars(prev.text, c.text)
            skip = min(len(plain_terms(c.text[:n])), len(text_terms)) if n else 0
        last = c.heading_path[-1] if c.heading_path else ""
        in_text = bool(last) and last in c.text[: len(last) + 16]
        lang = c.lang or text_lang(c.text)
        out.append(
            (c.id, _Entry(c.doc_id, c.scope, head_terms + text_terms, len(head_terms), skip, in_text, lang))
        )
        prev = c
    return out


class KeywordIndex:
    """BM25 over chunks, persisted in ``directory/bm25.json``; not thread-safe for writers."""

    def __init__(self, directory: Path, translate: bool = True) -> None:
        self.directory = Path(directory)
        self.translate = translate  # a question's words in the library's other language too
        self.path = self.directory / FILE_NAME
        self._entries: dict[str, _Entry] = {}  # chunk_id -> entry, insertion-ordered
        self._by_doc: dict[str, list[str]] = {}
        self._dirty = False  # changed since the last flush
        self._model = None  # bm25s.BM25, rebuilt lazily
        self._model_ids: list[str] = []
        self._model_pos: dict[str, int] = {}
        self._last: dict[tuple, np.ndarray | None] = {}  # (model id, query) -> scores, a few recent
        self._masks: dict[tuple[str, frozenset[str]], np.ndarray] = {}  # (level, scopes) -> mask
        self._model_scopes: np.ndarray | None = None
        self._doc_model = None  # bm25s.BM25 over whole documents, built with the chunk model
        self._doc_ids: list[str] = []
        self._doc_pos: dict[str, int] = {}
        self._doc_scopes: np.ndarray | None = None
        self._langs: set[str] = set()  # the chunks' languages: a question is translated into the others
        self._lock = threading.RLock()
        self.load_error: str | None = None  # why the persisted state was discarded, if it was
        self.set_aside: Path | None = None  # where its damaged file went (damage.py), if it was
        self._load()

    # -- persistence -------------------------------------------------------------------------
    def _load(self) -> None:
        self._seen = file_stamp(self.path)  # before reading: a later replace is noticed
        if not self.path.exists():
            return
        try:
            data = json.loads(self.path.read_text(encoding="utf-8"))
            if data.get("tokenizer") != TOKENIZER_VERSION:  # another version's: rebuilt, not damage
                self.load_error = f"written by tokenizer {data.get('tokenizer')!r}"
                log.info("%s: %s; it is rebuilt", self.path, self.load_error)
                return
            for chunk_id, doc_id, scope, terms, head, skip, in_text, lang in data["chunks"]:
                entry = _Entry(
                    doc_id, scope, terms.split(" ") if terms else [], head, skip, bool(in_text), lang
                )
                self._add(chunk_id, entry)
        except (OSError, ValueError, KeyError, TypeError, AttributeError, EOFError) as exc:
            # Derived data, damaged: set aside, and the KnowledgeBase re-feeds every document.
            self.load_error = str(exc) or type(exc).__name__
            self._entries.clear()
            self._by_doc.clear()
            with contextlib.suppress(OSError):  # another process may have set it aside first
                self.set_aside = set_aside(self.path)

    def flush(self) -> None:
        """Persist atomically (tmp file + os.replace); a no-op when nothing changed."""
        with self._lock:
            if not self._dirty and self.path.exists():
                return
            self.directory.mkdir(parents=True, exist_ok=True)
            data = {
                "tokenizer": TOKENIZER_VERSION,
                "chunks": [
                    [cid, e.doc_id, e.scope, " ".join(e.terms), e.head, e.skip, int(e.head_in_text), e.lang]
                    for cid, e in self._entries.items()
                ],
            }
            write_whole(
                self.path,
                self.path.with_name(f"{self.path.name}.tmp{os.getpid()}"),
                lambda fh: json.dump(data, fh, ensure_ascii=False, separators=(",", ":")),
            )
            self._seen = file_stamp(self.path)
            self._dirty = False

    def reload_if_changed(self) -> bool:
        """Take what another process flushed since this one last read or wrote the file (never over
        unflushed changes of its own; a damaged file leaves the copy in memory). True if reloaded."""
        with self._lock:
            if self._dirty or file_stamp(self.path) == self._seen:
                return False
            fresh = KeywordIndex(self.directory, self.translate)
            if fresh.load_error:
                return False
            for name, value in vars(fresh).items():
                if name != "_lock":
                    setattr(self, name, value)
            return True

    # -- updates -----------------------------------------------------------------------------
    def _add(self, chunk_id: str, entry: _Entry) -> None:
        self._entries[chunk_id] = entry
        self._by_doc.setdefault(entry.doc_id, []).append(chunk_id)

    def _drop_doc(self, doc_id: str) -> None:
        for chunk_id in self._by_doc.pop(doc_id, []):
            self._entries.pop(chunk_id, None)

    def upsert(self, chunks: list[Chunk], prepared: list[tuple[str, _Entry]] | None = None) -> None:
        """Index chunks, replacing every previously indexed chunk of their documents
        (``prepared``: their ``keyword_entries``, when already computed)."""
        if not chunks:
            return
        if prepared is None:
            prepared = keyword_entries(chunks)
        with self._lock:
            for doc_id in {c.doc_id for c in chunks}:
                self._drop_doc(doc_id)
            for chunk_id, entry in prepared:
                if chunk_id in self._entries:  # same id under another doc: keep one copy
                    old = self._entries[chunk_id]
                    self._by_doc[old.doc_id].remove(chunk_id)
                self._add(chunk_id, entry)
            self._changed()

    def delete_docs(self, doc_ids: Iterable[str]) -> None:
        with self._lock:
            removed = False
            for doc_id in doc_ids:
                if doc_id in self._by_doc:
                    self._drop_doc(doc_id)
                    removed = True
            if removed:
                self._changed()

    def _changed(self) -> None:
        self._dirty = True
        self._model = None
        self._doc_model = None
        self._last = {}

    def doc_of(self, chunk_id: str) -> str | None:
        entry = self._entries.get(chunk_id)
        return entry.doc_id if entry is not None else None

    def languages(self) -> set[str]:
        """The languages of the indexed chunks (languages.py's names: "zh", "latin", ...)."""
        with self._lock:
            self._ensure_model()
            return set(self._langs)

    def lang_of(self, chunk_id: str) -> str:
        """The chunk's language ("" when unknown)."""
        entry = self._entries.get(chunk_id)
        return entry.lang if entry is not None else ""

    def doc_ids(self) -> set[str]:
        with self._lock:
            return set(self._by_doc)

    def __len__(self) -> int:
        return len(self._entries)

    # -- search ------------------------------------------------------------------------------
    def _ensure_model(self) -> None:
        if self._model is not None or not self._entries:
            return
        import bm25s

        # bm25s sets its logger to DEBUG on import ("Building index from tokens" on every search):
        # give the level back to the app's logging set-up (--verbose in the CLI).
        logging.getLogger("bm25s").setLevel(logging.NOTSET)
        ids = list(self._entries)
        model = bm25s.BM25()
        # An empty token list would break bm25s' vocabulary; "" is its own empty token.
        model.index([self._entries[c].terms or [""] for c in ids], show_progress=False)
        docs: list[list[str]] = []
        for chunk_ids in self._by_doc.values():
            terms: list[str] = []
            heading: list[str] | None = None
            for cid in chunk_ids:  # chunk order (upsert adds a document's chunks in order)
                e = self._entries[cid]
                cur = e.terms[: e.head]
                terms += e.doc_terms(cur != heading)
                heading = cur
            docs.append(terms or [""])
        doc_model = bm25s.BM25()
        doc_model.index(docs, show_progress=False)
        self._model_ids = ids
        self._model_pos = {c: i for i, c in enumerate(ids)}
        self._masks = {}
        self._model_scopes = np.array([self._entries[c].scope for c in ids], dtype=object)
        self._doc_ids = list(self._by_doc)
        self._doc_pos = {d: i for i, d in enumerate(self._doc_ids)}
        self._doc_scopes = np.array([self._entries[c[0]].scope for c in self._by_doc.values()], dtype=object)
        self._doc_model = doc_model
        self._langs = {e.lang for e in self._entries.values()}
        self._model = model

    def _scores(self, model, query: str) -> np.ndarray | None:
        """BM25 scores of every entry of a model; recent queries' are kept (retrieval asks for
        the same query's chunk and document scores several times)."""
        key = (id(model), query)
        if key in self._last:
            return self._last[key]
        scores = weighted_scores(model, *self.query_terms(query))
        if len(self._last) >= 16:
            self._last.pop(next(iter(self._last)))
        self._last[key] = scores
        return scores

    def query_terms(self, query: str) -> tuple[list[str], list[float]]:
        """A question's weighted terms, with its words in the library's other language (an English
        question over Chinese pages, bilingual.py) where the library holds them."""
        terms, weights = query_terms(query)
        chinese, english = "zh" in self._langs, "latin" in self._langs
        if self.translate and (chinese or english):
            vocab = self._doc_model.vocab_dict if self._doc_model is not None else {}
            more, more_weights = translated_terms(query, lambda t: held(t, vocab), chinese=chinese, english=english)
            terms, weights = terms + more, weights + more_weights
        return terms, weights

    def _masked(self, level: str, scores: np.ndarray, scopes: set[str] | None) -> np.ndarray:
        if scopes is None:
            return scores
        key = (level, frozenset(scopes))
        mask = self._masks.get(key)
        if mask is None:
            where = self._model_scopes if level == "chunk" else self._doc_scopes
            mask = self._masks[key] = np.isin(where, list(scopes))
        return np.where(mask, scores, 0.0)

    @staticmethod
    def _top(scores: np.ndarray, k: int) -> np.ndarray:
        candidates = np.flatnonzero(scores > 0)
        if candidates.size > k:
            top = np.argpartition(-scores[candidates], k - 1)[:k]
            candidates = candidates[top]
        return candidates[np.argsort(-scores[candidates], kind="stable")]

    def search(self, query: str, k: int, scopes: set[str] | None = None) -> list[tuple[str, float]]:
        """(chunk_id, BM25 score) best first; chunks sharing no term with the query are left out."""
        return self._search("chunk", query, k, scopes)

    def search_docs(self, query: str, k: int, scopes: set[str] | None = None) -> list[tuple[str, float]]:
        """(doc_id, BM25 score of the whole document) best first; no-match documents left out."""
        return self._search("doc", query, k, scopes)

    def _search(self, level: str, query: str, k: int, scopes: set[str] | None) -> list[tuple[str, float]]:
        if k <= 0:
            return []
        with self._lock:
            self._ensure_model()
            model, ids = (
                (self._model, self._model_ids) if level == "chunk" else (self._doc_model, self._doc_ids)
            )
            if model is None:
                return []
            scores = self._scores(model, query)
            if scores is None:
                return []
            scores = self._masked(level, scores, scopes)
        return [(ids[i], float(scores[i])) for i in self._top(scores, k)]

    def score_docs(self, query: str, doc_ids: Iterable[str]) -> dict[str, float]:
        """Whole-document BM25 scores of given documents (0.0: no query term; unknown ids left out)."""
        with self._lock:
            self._ensure_model()
            model = self._doc_model
            if model is None:
                return {}
            pos = [(d, self._doc_pos[d]) for d in doc_ids if d in self._doc_pos]
            scores = self._scores(model, query)
        if scores is None:
            return {d: 0.0 for d, _ in pos}
        return {d: float(scores[i]) for d, i in pos}

    def doc_freq(self, terms: Iterable[str]) -> tuple[int, dict[str, int]]:
        """How many documents there are, and how many hold each term (0: none does)."""
        with self._lock:
            self._ensure_model()
            model = self._doc_model
            if model is None:
                return 0, {t: 0 for t in terms}
            vocab, indptr = model.vocab_dict, model.scores["indptr"]
            n = len(self._doc_ids)
        out: dict[str, int] = {}
        for t in terms:
            i = vocab.get(t)
            out[t] = 0 if i is None else int(indptr[i + 1] - indptr[i])
        return n, out

    def best_chunks(self, query: str, doc_id: str, n: int) -> list[tuple[str, float]]:
        """A document's ``n`` chunks that match the query best (chunk BM25), best first; its first
        chunks when none matches on its own (the document matched on terms spread over chunks)."""
        with self._lock:
            self._ensure_model()
            chunk_ids = list(self._by_doc.get(doc_id, ()))
            if self._model is None or not chunk_ids:
                return []
            scores = self._scores(self._model, query)
            pos = self._model_pos
        scored = [(c, float(scores[pos[c]]) if scores is not None else 0.0) for c in chunk_ids]
        scored.sort(key=lambda cs: -cs[1])  # stable: equal scores keep chunk order
        return scored[:n]

    def score_chunks(self, query: str, chunk_ids: Iterable[str]) -> dict[str, float]:
        """BM25 scores of given chunks for a query (0.0 when no term matches; unknown ids left out)."""
        with self._lock:
            self._ensure_model()
            model = self._model
            if model is None:
                return {}
            pos = [(c, self._model_pos[c]) for c in chunk_ids if c in self._model_pos]
            scores = self._scores(model, query)
            if scores is None:
                return {c: 0.0 for c, _ in pos}
        return {c: float(scores[i]) for c, i in pos}

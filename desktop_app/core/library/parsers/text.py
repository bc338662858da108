"""Plain text, Markdown, HTML and other text formats: encoding detection and sections.

(CSV and TSV are read as tables by sheets.py, with ``decode_bytes`` from here.)

Encoding order: BOM (UTF-8/16/32), UTF-16 without BOM (ASCII-range NUL pattern), strict UTF-8,
then GB18030 (a superset of GBK/GB2312) against Big5 (cp950), scored by how many decoded
characters are the common characters of each standard, then charset-normalizer as a last guess.
Everything is linear in the file size so a 50 MB log stays cheap.
"""

from __future__ import annotations

import codecs
import re
from html.parser import HTMLParser
from pathlib import Path

import charset_normalizer

from desktop_app.core.library import reasons
from desktop_app.core.library.documents import ParseError, Section
from desktop_app.core.library.parsers.limits import Budget

TEXT_SUFFIXES = frozenset(
    {
        ".md",
        ".markdown",
        ".txt",
        ".text",
        ".json",
        ".html",
        ".htm",
        ".xml",
        ".rst",
        ".log",
        ".yaml",
        ".yml",
    }
)
MARKDOWN_SUFFIXES = frozenset({".md", ".markdown"})
HTML_SUFFIXES = frozenset({".html", ".htm"})

_SAMPLE_BYTES = 256 * 1024  # enough to judge an encoding; the whole file is decoded only once
_BOMS: tuple[tuple[bytes, str], ...] = (
    # UTF-32 first: its little-endian BOM starts with the UTF-16 one.
    (codecs.BOM_UTF32_LE, "utf-32-le"),
    (codecs.BOM_UTF32_BE, "utf-32-be"),
    (codecs.BOM_UTF8, "utf-8"),
    (codecs.BOM_UTF16_LE, "utf-16-le"),
    (codecs.BOM_UTF16_BE, "utf-16-be"),
)
# C0 controls that never occur in text (tab, newlines, form feed, vertical tab and ESC are allowed).
_CONTROL_BYTES = frozenset(range(0x20)) - {0x09, 0x0A, 0x0B, 0x0C, 0x0D, 0x1B}
_DECLARED_CHARSET = re.compile(rb"""(?:charset|encoding)\s*=\s*["']?\s*([A-Za-z0-9_.:-]{2,40})""", re.I)


# --------------------------------------------------------------------------- encoding


def decode_bytes(data: bytes, *, declared: bool = False) -> tuple[str, str]:
    """Decode a text file's bytes; returns ``(text, encoding)``.

    Raises ``ParseError(reasons.BINARY)`` for data that is not text. With ``declared``
    a ``charset=``/``encoding=`` declaration near the start (HTML, XML) is tried first.
    """
    for bom, encoding in _BOMS:
        if data.startswith(bom):
            return data[len(bom) :].decode(encoding, errors="replace"), encoding

    sample = data[:_SAMPLE_BYTES]
    utf16 = _sniff_utf16(sample)
    if utf16:
        try:
            text = data.decode(utf16)
        except UnicodeDecodeError:
            text = None  # not UTF-16 after all: the binary check below decides
        if text is not None:
            # 16-bit binary data (small integers) also has a NUL in every other byte.
            head = text[:8192]
            if sum(1 for ch in head if ord(ch) in _CONTROL_BYTES) > 0.05 * len(head):
                raise ParseError(reasons.BINARY)
            return text, utf16
    if _looks_binary(sample):
        raise ParseError(reasons.BINARY)

    if declared:
        match = _DECLARED_CHARSET.search(data[:4096])
        if match:
            name = _codec_name(match.group(1).decode("ascii", "ignore"))
            if name and name not in ("utf-16", "utf-32"):  # a declared UTF-16 without BOM is a lie here
                try:
                    return data.decode(name), name
                except (UnicodeDecodeError, LookupError):
                    pass

    try:
        return data.decode("utf-8"), "utf-8"
    except UnicodeDecodeError:
        pass

    encoding = _guess_cjk(sample) or _guess_other(sample)
    try:
        return data.decode(encoding), encoding
    except UnicodeDecodeError:
        # Mostly right but a few bad bytes (a truncated file, a stray byte): keep the text.
        return data.decode(encoding, errors="replace"), encoding


def _codec_name(label: str) -> str | None:
    try:
        name = codecs.lookup(label).name
    except LookupError:
        return None
    # GB2312/GBK declarations are routinely GB18030 in practice; Big5 ones cp950.
    return {"gb2312": "gb18030", "gbk": "gb18030", "big5": "cp950"}.get(name, name)


def _sniff_utf16(sample: bytes) -> str | None:
    """UTF-16 without a BOM shows up as NUL bytes on every other position for ASCII text."""
    n = len(sample) - len(sample) % 2
    if n < 4:
        return None
    even_nul = sample[0:n:2].count(0) / (n / 2)
    odd_nul = sample[1:n:2].count(0) / (n / 2)
    if odd_nul > 0.4 and even_nul < 0.05:
        return "utf-16-le"
    if even_nul > 0.4 and odd_nul < 0.05:
        return "utf-16-be"
    return None


def _looks_binary(sample: bytes) -> bool:
    if not sample:
        return False
    if b"\x00" in sample:
        return True
    controls = sum(1 for b in sample[:8192] if b in _CONTROL_BYTES)
    return controls / min(len(sample), 8192) > 0.05


def _incremental_decode(sample: bytes, encoding: str) -> str | None:
    """Decode a sample that may end inside a multi-byte character; None if it is not valid."""
    try:
        return codecs.getincrementaldecoder(encoding)().decode(sample, final=False)
    except UnicodeDecodeError:
        return None


def _common_ratio(text: str, encoding: str, lo: int, hi: int) -> float:
    """Share of non-ASCII characters whose 2-byte code in ``encoding`` lies in [lo, hi].

    GB2312 (hanzi at 0xB0A1-0xF7FE) holds the 6,763 usual simplified characters and Big5
    0xA440-0xC67E the 5,401 most used traditional ones; text decoded with the wrong codec
    lands mostly outside them (Big5 read as GB: ~40% inside; GBK read as Big5: ~55%).
    """
    total = common = 0
    for ch in text[:20000]:
        if ch < "\x80":
            continue
        total += 1
        try:
            code = ch.encode(encoding)
        except UnicodeEncodeError:
            continue
        if len(code) == 2 and lo <= int.from_bytes(code, "big") <= hi:
            common += 1
    return common / total if total else 0.0


def _guess_cjk(sample: bytes) -> str | None:
    scores: dict[str, float] = {}
    gb = _incremental_decode(sample, "gb18030")
    if gb is not None:
        scores["gb18030"] = _common_ratio(gb, "gb2312", 0xB0A1, 0xF7FE)
    big5 = _incremental_decode(sample, "cp950")
    if big5 is not None:
        scores["cp950"] = _common_ratio(big5, "cp950", 0xA440, 0xC67E)
    if not scores:
        return None
    best = max(scores, key=lambda k: (scores[k], k == "gb18030"))  # tie: GB18030, the wider set
    return best if scores[best] >= 0.5 else None


def _guess_other(sample: bytes) -> str:
    matches = charset_normalizer.from_bytes(sample)
    best = matches.best()
    if best is not None and best.encoding:
        # Short Western samples fit several code pages about equally well; the most common one,
        # cp1252, wins near-ties (charset-normalizer alone picks DOS Baltic for "café").
        tied = {m.encoding for m in matches if m.chaos <= best.chaos and m.coherence >= best.coherence - 0.1}
        name = _codec_name("cp1252" if "cp1252" in tied else best.encoding)
        if name:
            return name
    return "cp1252" if _incremental_decode(sample, "cp1252") is not None else "latin-1"


# --------------------------------------------------------------------------- formats


def parse_text_file(path: Path) -> list[Section]:
    """Sections of a text-like file, by suffix: Markdown headings, HTML headings, else one section."""
    suffix = path.suffix.lower()
    try:
        data = path.read_bytes()
    except OSError as exc:
        raise ParseError(reasons.UNREADABLE, reason=exc.strerror or exc) from exc
    text, encoding = decode_bytes(data, declared=suffix in HTML_SUFFIXES or suffix == ".xml")
    del data  # the bytes are not needed any more: keep peak memory to about one copy
    text = _normalize_newlines(text)
    if not text.strip():
        raise ParseError(reasons.EMPTY)

    if suffix in MARKDOWN_SUFFIXES:
        sections = split_markdown(text)
    elif suffix in HTML_SUFFIXES:
        sections = html_sections(text)
    else:
        sections = [Section(text=text)]
    sections = [s for s in sections if s.text.strip()]
    if not sections:
        raise ParseError(reasons.EMPTY)
    sections[0].metadata["encoding"] = encoding
    return sections


def _normalize_newlines(text: str) -> str:
    if "\r" in text:
        text = text.replace("\r\n", "\n").replace("\r", "\n")
    if "\x00" in text:  # NULs left over from a damaged UTF-16 file upset every later stage
        text = text.replace("\x00", "")
    return text


_ATX_HEADING = re.compile(r"^ {0,3}(#{1,6})(?:[ \t]+(.*?))?(?:[ \t]+#+)?[ \t]*$")
_FENCE = re.compile(r"^ {0,3}(`{3,}|~{3,})")


def split_markdown(text: str) -> list[Section]:
    """Split Markdown at ATX headings (``#``..``######``), outside fenced code blocks.

    Each section's text starts with its heading line; ``heading_path`` holds the enclosing
    headings, e.g. ``["Guide", "Install"]``. Sections that hold only a heading are dropped
    when the document has other content (their title lives on in the children's paths).
    """
    sections: list[Section] = []
    stack: list[tuple[int, str]] = []
    start = 0
    has_body = False
    fence: str | None = None
    pos = 0

    def close(end: int) -> None:
        body = text[start:end]
        if body.strip():
            sections.append(
                Section(
                    text=body.strip("\n"), heading_path=[t for _, t in stack], metadata={"_body": has_body}
                )
            )

    for line in text.splitlines(keepends=True):
        stripped = line.rstrip("\n")
        fence_match = _FENCE.match(stripped)
        if fence is not None:
            if (
                fence_match
                and fence_match.group(1)[0] == fence[0]
                and len(fence_match.group(1)) >= len(fence)
            ):
                fence = None
            has_body = has_body or bool(stripped.strip())
        elif fence_match:
            fence = fence_match.group(1)
            has_body = True
        else:
            heading = _ATX_HEADING.match(stripped) if stripped.lstrip(" ").startswith("#") else None
            if heading:
                close(pos)
                level = len(heading.group(1))
                title = (heading.group(2) or "").strip()
                while stack and stack[-1][0] >= level:
                    stack.pop()
                if title:
                    stack.append((level, title))
                start, has_body = pos, False
            elif stripped.strip():
                has_body = True
        pos += len(line)
    close(len(text))

    with_body = [s for s in sections if s.metadata["_body"]]
    kept = with_body or sections
    for s in kept:
        del s.metadata["_body"]
    return kept


class _HTMLText(HTMLParser):
    """Collects visible text, breaking into sections at h1..h6."""

    _SKIP = frozenset({"script", "style", "noscript", "template", "title", "svg", "iframe", "object"})
    _BLOCK = frozenset(
        {
            "p", "div", "br", "li", "ul", "ol", "tr", "table", "section", "article", "header",
            "footer", "nav", "aside", "main", "blockquote", "pre", "hr", "dt", "dd", "dl",
            "figure", "figcaption", "form", "fieldset", "address", "details", "summary", "body",
        }
    )  # fmt: skip
    _HEADINGS = {f"h{i}": i for i in range(1, 7)}

    def __init__(self, budget: Budget | None = None) -> None:
        super().__init__(convert_charrefs=True)
        self._budget = budget or Budget("HTML")
        self.sections: list[tuple[list[str], list[str]]] = [([], [])]  # (heading_path, blocks)
        self._stack: list[tuple[int, str]] = []
        self._skip_depth = 0
        self._pre_depth = 0
        self._heading: tuple[int, list[str]] | None = None
        self._buf: list[str] = []

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        self._budget.add_elements()
        if tag in self._BLOCK:
            self._budget.add_paragraphs()
        if tag == "body":
            self._skip_depth = 0  # an unclosed <noscript> or <svg> in the head must not hide the page
        if tag in self._SKIP:
            self._skip_depth += 1
            return
        if tag in self._HEADINGS:
            self._flush()
            self._heading = (self._HEADINGS[tag], [])
        elif self._heading is not None:
            if tag in self._BLOCK:  # "Chapter 1<br>Loomings": the words stay apart in the title
                self._heading[1].append(" ")
        elif tag in self._BLOCK or tag in ("td", "th"):
            if tag in ("td", "th"):
                self._buf.append(" | ")
            else:
                self._flush()
            if tag == "pre":
                self._pre_depth += 1

    def handle_startendtag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        if tag in ("br", "hr"):
            if self._heading is not None:
                self._heading[1].append(" ")
            else:
                self._flush()

    def handle_endtag(self, tag: str) -> None:
        if tag in self._SKIP:
            self._skip_depth = max(0, self._skip_depth - 1)
            return
        if tag in self._HEADINGS and self._heading is not None:
            level, parts = self._heading
            self._heading = None
            title = " ".join("".join(parts).split())
            if title:
                while self._stack and self._stack[-1][0] >= level:
                    self._stack.pop()
                self._stack.append((level, title))
                self.sections.append(([t for _, t in self._stack], [title]))
        elif tag in self._BLOCK:
            self._flush()
            if tag == "pre":
                self._pre_depth = max(0, self._pre_depth - 1)

    def handle_data(self, data: str) -> None:
        self._budget.add_chars(len(data))
        if self._skip_depth:
            return
        if self._heading is not None:
            self._heading[1].append(data)
        else:
            self._buf.append(data)

    def _flush(self) -> None:
        if not self._buf:
            return
        raw = "".join(self._buf)
        self._buf = []
        if self._pre_depth:
            block = raw.strip("\n")
        else:
            block = " ".join(raw.split()).strip(" |")
        if block.strip():
            self.sections[-1][1].append(block)

    def close(self) -> None:
        super().close()
        self._flush()


def html_sections(html: str, budget: Budget | None = None) -> list[Section]:
    """Visible text of an HTML page (no scripts or styles), one section per heading; ``budget``
    counts elements, blocks and characters against the limits (over a whole book for EPUB)."""
    parser = _HTMLText(budget)
    try:
        parser.feed(html)
        parser.close()
    except ParseError:  # a limit
        raise
    except Exception as exc:  # html.parser is lenient; this is a last line of defence
        raise ParseError(reasons.CORRUPT, label="HTML", reason=exc) from exc
    sections: list[Section] = []
    for path, blocks in parser.sections:
        # A heading with nothing under it is kept only when the page has nothing else.
        if len(blocks) == 1 and path and blocks[0] == path[-1]:
            continue
        if blocks:
            sections.append(Section(text="\n\n".join(blocks), heading_path=list(path)))
    if not sections:
        sections = [Section(text="\n\n".join(b), heading_path=list(p)) for p, b in parser.sections if b]
    return sections

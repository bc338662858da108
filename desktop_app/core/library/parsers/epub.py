"""EPUB: the chapters in reading order, each split at its headings like an HTML page.

An EPUB is a ZIP archive: META-INF/container.xml names the package document (OPF), whose
manifest lists the files and whose spine gives their reading order. Each spine document (XHTML)
is read by the HTML reader (``html_sections``). Text before a chapter's first heading, or a
whole chapter without headings, takes the chapter's title from the table of contents (the EPUB 3
navigation document, else the EPUB 2 NCX), so every section says which chapter it is.

Bounded (limits.py): at most ``MAX_CHAPTERS`` chapters; the package document and tables of
contents are scanned (entity declarations refused, elements counted) before they are parsed;
a chapter whose DTD declares entities is refused rather than read with its declarations as
text, and the chapters' elements, blocks and characters are counted over the book as they are read.
"""

from __future__ import annotations

import posixpath
import xml.etree.ElementTree as ET
import zipfile
from pathlib import Path
from urllib.parse import unquote

from desktop_app.core.library import reasons
from desktop_app.core.library.documents import ParseError, Section
from desktop_app.core.library.parsers import progress
from desktop_app.core.library.parsers.limits import (
    MAX_CHAPTERS,
    Budget,
    check_tree,
    declares_entities,
    scan_xml,
)
from desktop_app.core.library.parsers.package import (
    OFFICE_FAMILIES,
    ZIP_READ_ERRORS,
    check_unpacked_size,
    office_family,
    open_zip,
    read_head,
    zip_reason,
)
from desktop_app.core.library.parsers.text import decode_bytes, html_sections
from desktop_app.core.messages import message

_KIND = message(reasons.EPUB_BOOK)
MAX_UNPACKED_BYTES = 10**9  # the whole archive, pictures included
MAX_PART_BYTES = 64 * 10**6  # one chapter or package document; a long novel's chapters are a few hundred kB
_CONTAINER = "META-INF/container.xml"
_DOCUMENT_TYPES = frozenset({"application/xhtml+xml", "text/html"})
# Font obfuscation (IDPF, Adobe) lists fonts in encryption.xml too; only other entries are DRM.
_FONT_OBFUSCATION = frozenset({"http://www.idpf.org/2008/embedding", "http://ns.adobe.com/pdf/enc#RC"})


def _local(tag: object) -> str:
    """An element's name without its namespace: sloppy writers get the namespaces wrong."""
    return tag.rsplit("}", 1)[-1] if isinstance(tag, str) else ""


def _resolve(base: str, href: str) -> str:
    """A manifest or TOC reference, relative to the part ``base``, as an archive member name."""
    href = unquote(href.split("#", 1)[0])
    return posixpath.normpath(posixpath.join(posixpath.dirname(base), href)).lstrip("/")


class _Book:
    def __init__(self, zf: zipfile.ZipFile) -> None:
        self._zf = zf
        self._names = set(zf.namelist())
        self.budget = Budget("EPUB")

    def read(self, name: str, what: str) -> bytes:
        if name not in self._names:
            raise ParseError(reasons.EPUB_MISSING[what], part=name)
        size = self._zf.getinfo(name).file_size
        if size > MAX_PART_BYTES:
            raise ParseError(
                reasons.EPUB_PART_TOO_LARGE, part=name, mb=size / 1e6, limit_mb=MAX_PART_BYTES / 1e6
            )
        try:
            return self._zf.read(name)
        except ZIP_READ_ERRORS as exc:
            raise ParseError(
                reasons.PART_CANNOT_UNPACK, label="EPUB", part=name, reason=zip_reason(exc)
            ) from exc

    def xml(self, name: str, what: str) -> ET.Element:
        data = self.read(name, what)
        check_tree("EPUB", name, scan_xml(data, "EPUB", name, self.budget))  # entities refused
        try:
            return ET.fromstring(data)
        except ET.ParseError as exc:
            line, column = exc.position
            raise ParseError(
                reasons.PART_NOT_WELL_FORMED, label="EPUB", part=name, line=line, column=column + 1
            ) from exc

    def package_document(self) -> str:
        if _CONTAINER not in self._names:
            family = office_family(self._zf)
            if family in OFFICE_FAMILIES:
                raise ParseError(
                    reasons.OTHER_FORMAT, label="EPUB", found=OFFICE_FAMILIES[family], kind=_KIND
                )
            raise ParseError(reasons.ZIP_NOT_KIND, label="EPUB", kind=_KIND, part=_CONTAINER)
        for element in self.xml(_CONTAINER, "its container file").iter():
            if _local(element.tag) == "rootfile" and (element.get("full-path") or "").strip():
                return unquote(element.get("full-path", "").strip()).lstrip("/")
        raise ParseError(reasons.EPUB_NO_ROOTFILE, part=_CONTAINER)

    def refuse_drm(self, documents: list[str]) -> None:
        """A book whose chapters are listed in encryption.xml is DRM-protected; fonts do not count."""
        if "META-INF/encryption.xml" not in self._names:
            return
        try:
            root = self.xml("META-INF/encryption.xml", "its encryption list")
        except ParseError:
            return  # damaged: the chapters themselves will show whether they can be read
        encrypted: set[str] = set()
        for data in root.iter():
            if _local(data.tag) != "EncryptedData":
                continue
            method = next(
                (e.get("Algorithm") for e in data.iter() if _local(e.tag) == "EncryptionMethod"), ""
            )
            if method in _FONT_OBFUSCATION:
                continue
            encrypted |= {
                unquote(e.get("URI") or "").lstrip("/")
                for e in data.iter()
                if _local(e.tag) == "CipherReference"
            }
        if encrypted & set(documents):
            raise ParseError(reasons.EPUB_DRM)

    def titles(self, manifest: dict[str, tuple[str, str, str]], toc_id: str) -> dict[str, str]:
        """Each document's first title in the table of contents: the EPUB 3 navigation document,
        else the EPUB 2 NCX. A damaged or missing table of contents gives no titles, not an error."""
        nav = next((href for href, _, props in manifest.values() if "nav" in props.split()), None)
        sources = []
        if nav:
            sources.append((nav, "nav"))
        if toc_id in manifest:
            sources.append((manifest[toc_id][0], "ncx"))
        for name, kind in sources:
            try:
                root = self.xml(name, "its table of contents")
            except ParseError:
                continue
            found: dict[str, str] = {}
            for target, title in _nav_entries(root) if kind == "nav" else _ncx_entries(root):
                if title and target:
                    found.setdefault(_resolve(name, target), title)
            if found:
                return found
        return {}

    def sections(self) -> list[Section]:
        opf = self.package_document()
        package = self.xml(opf, "its package document")
        manifest: dict[str, tuple[str, str, str]] = {}  # id -> (member name, media type, properties)
        spine: list[str] = []
        toc_id = ""
        for element in package.iter():
            name = _local(element.tag)
            if name == "item" and element.get("id") and element.get("href"):
                manifest[element.get("id", "")] = (
                    _resolve(opf, element.get("href", "")),
                    (element.get("media-type") or "").strip().lower(),
                    element.get("properties") or "",
                )
            elif name == "spine":
                toc_id = element.get("toc") or ""
            elif name == "itemref" and element.get("idref"):
                spine.append(element.get("idref", ""))
        documents = [manifest[i][0] for i in spine if i in manifest and manifest[i][1] in _DOCUMENT_TYPES]
        if not documents:
            raise ParseError(reasons.EPUB_NO_SPINE, part=opf)
        chapters = list(dict.fromkeys(documents))  # a document listed twice is read once
        if len(chapters) > MAX_CHAPTERS:
            raise ParseError(reasons.TOO_MANY_CHAPTERS, count=len(chapters), limit=MAX_CHAPTERS)
        self.refuse_drm(documents)
        titles = self.titles(manifest, toc_id)

        sections: list[Section] = []
        for number, document in enumerate(chapters, 1):
            progress.unit("chapter", number, len(chapters))
            data = self.read(document, "the chapter")
            if declares_entities(data):  # html.parser would index the declarations as text
                raise ParseError(reasons.XML_ENTITIES, label="EPUB", part=document)
            try:
                text, _ = decode_bytes(data, declared=True)
            except ParseError as exc:
                raise ParseError(reasons.EPUB_CHAPTER_NOT_TEXT, part=document) from exc
            del data
            title = titles.get(document)
            for section in html_sections(text, self.budget):
                if title and not section.heading_path:
                    section.heading_path = [title]
                    if not section.text.startswith(title):
                        section.text = f"{title}\n\n{section.text}"
                sections.append(section)
        return sections


def _text(element: ET.Element) -> str:
    return " ".join("".join(element.itertext()).split())


def _nav_entries(root: ET.Element) -> list[tuple[str, str]]:
    """(href, title) of the links in the navigation document's toc nav (else its first nav)."""
    navs = [e for e in root.iter() if _local(e.tag) == "nav"]
    toc = next(
        (n for n in navs if "toc" in (n.get("{http://www.idpf.org/2007/ops}type") or "").split()), None
    )
    chosen = toc if toc is not None else (navs[0] if navs else None)
    if chosen is None:
        return []
    return [(a.get("href") or "", _text(a)) for a in chosen.iter() if _local(a.tag) == "a"]


def _ncx_entries(root: ET.Element) -> list[tuple[str, str]]:
    """(src, title) of each navPoint of an NCX, in document order."""
    entries = []
    for point in root.iter():
        if _local(point.tag) != "navPoint":
            continue
        label = next((e for e in point if _local(e.tag) == "navLabel"), None)
        content = next((e for e in point if _local(e.tag) == "content"), None)
        if label is not None and content is not None:
            entries.append((content.get("src") or "", _text(label)))
    return entries


def parse_epub(path: Path) -> list[Section]:
    """Sections of an EPUB's chapters in reading order; an empty list when they have no text."""
    try:
        head = read_head(path, "EPUB", ".epub", _KIND)
        with open_zip(path, head, "EPUB", ".epub", _KIND) as zf:
            check_unpacked_size(zf, "EPUB", MAX_UNPACKED_BYTES)
            return _Book(zf).sections()
    except OSError as exc:
        raise ParseError(reasons.UNREADABLE, reason=exc.strerror or exc) from exc

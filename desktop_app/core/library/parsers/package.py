"""The checks every ZIP-based format shares (DOCX, PPTX, XLSX, EPUB) before its own parser runs.

An Office file that is not a ZIP archive is usually an OLE compound file: Office encrypts a
password-protected DOCX/PPTX/XLSX into one (an ``EncryptedPackage`` stream), and the old binary
.doc/.ppt/.xls formats are one. The stream names in the OLE directory tell which it is.
"""

from __future__ import annotations

import posixpath
import re
import xml.etree.ElementTree as ET
import zipfile
import zlib
from pathlib import Path
from types import ModuleType

from desktop_app.core.library import reasons
from desktop_app.core.library.documents import ParseError
from desktop_app.core.library.parsers.limits import MAX_ROOT_RELS_BYTES
from desktop_app.core.messages import Text, message
from desktop_app.core.packages import MissingPackage, require

_OLE_MAGIC = b"\xd0\xcf\x11\xe0\xa1\xb1\x1a\xe1"
_OLE_ENCRYPTED = "EncryptedPackage".encode("utf-16-le")
# The stream that marks each old binary format, and what it is called.
_OLE_FORMATS = (
    ("WordDocument", ".docx", message(reasons.OLD_WORD)),
    ("PowerPoint Document", ".pptx", message(reasons.OLD_POWERPOINT)),
    ("Workbook", ".xlsx", message(reasons.OLD_EXCEL)),
    ("Book", ".xlsx", message(reasons.OLD_EXCEL)),  # Excel 5/95
)
# The main part's folder in an Office package (its root officeDocument relationship), and the
# name of the format it makes.
OFFICE_FAMILIES = {
    "word": message(reasons.WORD_DOCX),
    "ppt": message(reasons.POWERPOINT_PPTX),
    "xl": message(reasons.EXCEL_XLSX),
}
_PKG_REL = "{http://schemas.openxmlformats.org/package/2006/relationships}Relationship"
# libxml2's errors at its own limits ("use XML_PARSE_HUGE option", "see xmlCtxtSetMaxAmplification",
# "Excessive depth in document"): parser internals no user can act on.
_LIBXML_LIMITS = re.compile(r"XML_PARSE_HUGE|MaxAmplification|amplification|Excessive depth|Huge input", re.I)

# What zipfile raises for a damaged member: bad CRC or header (BadZipFile), bad deflate data (zlib),
# cut-off data (EOFError), unknown compression (NotImplementedError), encryption (RuntimeError), a
# name in the member's header that is not UTF-8 (UnicodeDecodeError, a ValueError).
_UTF16_BOMS = (b"\xff\xfe", b"\xfe\xff")  # XML in UTF-16 (xml_members)
ZIP_READ_ERRORS = (zipfile.BadZipFile, zlib.error, EOFError, NotImplementedError, RuntimeError, ValueError)


def read_head(path: Path, label: str, suffix: str, kind: Text) -> bytes:
    """The file's first bytes, for ``open_zip``, after refusing an OLE compound file with the
    reason: encrypted, or an old binary Office format (``kind``: "a Word document")."""
    with path.open("rb") as fh:
        head = fh.read(len(_OLE_MAGIC))
        if head != _OLE_MAGIC:
            return head
        directory = fh.read()
    if _OLE_ENCRYPTED in directory:
        raise ParseError(reasons.ENCRYPTED, label=label)
    for stream, modern, old in _OLE_FORMATS:
        if stream.encode("utf-16-le") + b"\x00\x00" in directory:  # names end with a NUL
            if modern == suffix:
                raise ParseError(reasons.OLD_FORMAT_SAVE_AS, label=label, old=old, suffix=suffix)
            raise ParseError(reasons.OLD_FORMAT, label=label, old=old, kind=kind)
    raise ParseError(reasons.OLE_FILE, label=label, kind=kind)


def zip_reason(exc: BaseException) -> Text:
    """zipfile's and zlib's errors in words: their messages are cryptic or embed a ZipInfo repr."""
    text = " ".join(str(exc).split())
    if isinstance(exc, NotImplementedError):  # before RuntimeError, its base class
        return message(reasons.ZIP_FEATURE, error=text)
    if isinstance(exc, RuntimeError):
        return message(reasons.ZIP_PASSWORD)
    if isinstance(exc, EOFError):
        return message(reasons.ZIP_ENDS_EARLY)
    if isinstance(exc, zlib.error):
        return message(reasons.ZIP_DATA_DAMAGED, error=text)
    if isinstance(exc, UnicodeDecodeError):
        return message(reasons.ZIP_NAME_NOT_UTF8)
    if text.startswith("Bad CRC-32"):
        return message(reasons.ZIP_BAD_CRC)
    return text or type(exc).__name__


def open_zip(path: Path, head: bytes, label: str, suffix: str, kind: Text) -> zipfile.ZipFile:
    """The file as a ZIP archive, or a ParseError that says why it is not one."""
    try:
        return zipfile.ZipFile(path)
    except (zipfile.BadZipFile, NotImplementedError, EOFError, ValueError) as exc:
        if not head:
            raise ParseError(reasons.ZIP_EMPTY, label=label) from exc
        if not head.startswith(b"PK"):
            raise ParseError(reasons.NOT_ZIP, label=label, kind=kind, suffix=suffix) from exc
        if str(exc) == "File is not a zip file":  # a ZIP start but no directory at the end
            raise ParseError(reasons.ZIP_TRUNCATED, label=label) from exc
        raise ParseError(reasons.ZIP_DAMAGED, label=label, reason=zip_reason(exc)) from exc


def check_unpacked_size(zf: zipfile.ZipFile, label: str, limit: int) -> None:
    """Refuse a package whose members unpack to more than ``limit`` bytes, before any is read:
    a decompression bomb, or far more than a document of its kind holds."""
    total = sum(info.file_size for info in zf.infolist())
    if total > limit:
        raise ParseError(reasons.UNPACKS_TOO_LARGE, label=label, mb=total / 1e6, limit_mb=limit / 1e6)


def office_family(zf: zipfile.ZipFile) -> str | None:
    """The folder of an Office package's main part ("word", "ppt", "xl"), None when it has none."""
    try:
        if zf.getinfo("_rels/.rels").file_size > MAX_ROOT_RELS_BYTES:
            raise ValueError("root relationships too large")  # read before any scan: keep it small
        rels = ET.fromstring(zf.read("_rels/.rels"))
    except (KeyError, ET.ParseError, *ZIP_READ_ERRORS):  # damaged: judged by the folders below
        rels = ET.Element("none")
    for rel in rels.iter(_PKG_REL):
        if (rel.get("Type") or "").endswith("/officeDocument"):
            return (rel.get("Target") or "").lstrip("/").split("/")[0].lower() or None
    folders = {posixpath.dirname(name).split("/")[0].lower() for name in zf.namelist()}
    return next((family for family in OFFICE_FAMILIES if family in folders), None)


def check_office_family(zf: zipfile.ZipFile, family: str, label: str, kind: Text, main_part: str) -> None:
    """Refuse an Office package of another kind (a .docx renamed .pptx) or none (any ZIP)."""
    found = office_family(zf)
    if found == family:
        return
    if found in OFFICE_FAMILIES:
        raise ParseError(reasons.OTHER_FORMAT, label=label, found=OFFICE_FAMILIES[found], kind=kind)
    raise ParseError(reasons.ZIP_NOT_KIND, label=label, kind=kind, part=main_part)


def damaged_reason(exc: BaseException) -> Text:
    """Why a library (python-pptx, openpyxl) could not read a package, in words: a missing part
    (KeyError), XML that is not well-formed (lxml's and ElementTree's errors are SyntaxErrors) or
    not shaped as it should be, a value of the wrong type, a member that cannot be unpacked, or the library's own message."""
    if isinstance(exc, SyntaxError):
        if _LIBXML_LIMITS.search(str(exc)):  # libxml2's safety limits, which name its own options
            return message(reasons.XML_TOO_BIG)
        return message(reasons.PART_NOT_XML, error=" ".join(str(exc).split()))
    if isinstance(exc, KeyError):
        return message(reasons.PART_MISSING, part=exc.args[0] if exc.args else exc)
    text = " ".join(str(exc).split()) or type(exc).__name__
    if isinstance(exc, AttributeError):  # python-pptx picks element classes by tag: a damaged tag
        return message(reasons.PART_STRUCTURE)
    if isinstance(exc, ValueError | TypeError):  # openpyxl's typed attributes: "expected <class 'int'>"
        return message(reasons.PART_VALUE, error=text)
    if isinstance(exc, ZIP_READ_ERRORS):
        return message(reasons.PART_UNPACK, reason=zip_reason(exc))
    return text


def reader_library(module: str, feature: str) -> ModuleType:
    """The library a format is read with; missing (an install that predates it), the file is
    refused with the package to install and the command, instead of a bare ModuleNotFoundError."""
    try:
        return require(module, feature)
    except MissingPackage as exc:
        raise ParseError(exc.message.code, **exc.message.params) from exc


def xml_members(zf: zipfile.ZipFile) -> list[str]:
    """The members of a package that hold XML, by their first bytes, whatever their names: a
    library follows relationships to parts of any name (a sheet can be called "x.png")."""
    names = []
    for info in zf.infolist():
        if info.is_dir() or info.file_size == 0:
            continue
        try:
            with zf.open(info) as stream:
                head = stream.read(64)
        except ZIP_READ_ERRORS:
            continue  # a member that cannot be unpacked: the library says so if it needs it
        if head.startswith(_UTF16_BOMS) or head.lstrip(b"\xef\xbb\xbf \t\r\n").startswith(b"<"):
            names.append(info.filename)
    return names

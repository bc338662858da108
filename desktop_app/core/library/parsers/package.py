"""The checks every ZIP-based format shares (DOCX, PPTX, XLSX, EPUB) before its own parser runs.

An Office file that is not a ZIP archive is usually an OLE compound file: Office encrypts a
password-protected DOCX/PPTX/XLSX into one (an ``EncryptedPackage`` stream), and the old binary
.doc/.ppt/.xls formats are one. The stream names in the OLE directory tell which it is.
"""

from __future__ import annotations

import posixpath
import xml.etree.ElementTree as ET
import zipfile
import zlib
from pathlib import Path
from types import ModuleType

from desktop_app.core.library.documents import ParseError
from desktop_app.core.packages import MissingPackage, require

_OLE_MAGIC = b"\xd0\xcf\x11\xe0\xa1\xb1\x1a\xe1"
_OLE_ENCRYPTED = "EncryptedPackage".encode("utf-16-le")
# The stream that marks each old binary format, and what it is called.
_OLE_FORMATS = (
    ("WordDocument", ".docx", "an old binary Word (.doc) file"),
    ("PowerPoint Document", ".pptx", "an old binary PowerPoint (.ppt) file"),
    ("Workbook", ".xlsx", "an old binary Excel (.xls) file"),
    ("Book", ".xlsx", "an old binary Excel (.xls) file"),  # Excel 5/95
)
# The main part's folder in an Office package (its root officeDocument relationship), and the
# name of the format it makes.
OFFICE_FAMILIES = {
    "word": "a Word document (.docx)",
    "ppt": "a PowerPoint presentation (.pptx)",
    "xl": "an Excel workbook (.xlsx)",
}
_PKG_REL = "{http://schemas.openxmlformats.org/package/2006/relationships}Relationship"

# What zipfile raises for a damaged member: bad CRC or header (BadZipFile), bad deflate data (zlib),
# cut-off data (EOFError), unknown compression (NotImplementedError), encryption (RuntimeError), a
# name in the member's header that is not UTF-8 (UnicodeDecodeError, a ValueError).
ZIP_READ_ERRORS = (zipfile.BadZipFile, zlib.error, EOFError, NotImplementedError, RuntimeError, ValueError)


def read_head(path: Path, label: str, suffix: str, kind: str) -> bytes:
    """The file's first bytes, for ``open_zip``, after refusing an OLE compound file with the
    reason: encrypted, or an old binary Office format (``kind``: "a Word document")."""
    with path.open("rb") as fh:
        head = fh.read(len(_OLE_MAGIC))
        if head != _OLE_MAGIC:
            return head
        directory = fh.read()
    if _OLE_ENCRYPTED in directory:
        raise ParseError(f"encrypted {label}: a password is required")
    for stream, modern, old in _OLE_FORMATS:
        if stream.encode("utf-16-le") + b"\x00\x00" in directory:  # names end with a NUL
            if modern == suffix:
                raise ParseError(f"corrupt {label}: this is {old}; save it as {suffix}")
            raise ParseError(f"corrupt {label}: this is {old}, not {kind}")
    raise ParseError(f"corrupt {label}: this is an OLE compound file (an old Office format), not {kind}")


def zip_reason(exc: BaseException) -> str:
    """zipfile's and zlib's errors in words: their messages are cryptic or embed a ZipInfo repr."""
    text = " ".join(str(exc).split())
    if isinstance(exc, NotImplementedError):  # before RuntimeError, its base class
        return f"it uses a ZIP feature that cannot be read here: {text}"
    if isinstance(exc, RuntimeError):
        return "it is password-protected inside the archive"
    if isinstance(exc, EOFError):
        return "its compressed data ends early"
    if isinstance(exc, zlib.error):
        return f"its compressed data is damaged: {text}"
    if isinstance(exc, UnicodeDecodeError):
        return "a file name in it is not valid UTF-8"
    if text.startswith("Bad CRC-32"):
        return "its checksum does not match, so its data is damaged"
    return text or type(exc).__name__


def open_zip(path: Path, head: bytes, label: str, suffix: str, kind: str) -> zipfile.ZipFile:
    """The file as a ZIP archive, or a ParseError that says why it is not one."""
    try:
        return zipfile.ZipFile(path)
    except (zipfile.BadZipFile, NotImplementedError, EOFError, ValueError) as exc:
        if not head:
            raise ParseError(f"corrupt {label}: the file is empty") from exc
        if not head.startswith(b"PK"):
            raise ParseError(
                f"corrupt {label}: the file is not a ZIP archive, so it is not {kind} "
                f"(it may be another format renamed {suffix}, or badly damaged)"
            ) from exc
        if str(exc) == "File is not a zip file":  # a ZIP start but no directory at the end
            raise ParseError(
                f"corrupt {label}: the ZIP archive has no directory at its end, so the file is probably "
                "truncated (an incomplete download or copy)"
            ) from exc
        raise ParseError(f"corrupt {label}: the ZIP archive is damaged ({zip_reason(exc)})") from exc


def check_unpacked_size(zf: zipfile.ZipFile, label: str, limit: int) -> None:
    """Refuse a package whose members unpack to more than ``limit`` bytes, before any is read:
    a decompression bomb, or far more than a document of its kind holds."""
    total = sum(info.file_size for info in zf.infolist())
    if total > limit:
        raise ParseError(
            f"too large: the {label} unpacks to {total / 1e6:.1f} MB, more than the {limit / 1e6:g} MB "
            "that can be read; split it into smaller files"
        )


def office_family(zf: zipfile.ZipFile) -> str | None:
    """The folder of an Office package's main part ("word", "ppt", "xl"), None when it has none."""
    try:
        rels = ET.fromstring(zf.read("_rels/.rels"))
    except (KeyError, ET.ParseError, *ZIP_READ_ERRORS):  # damaged: judged by the folders below
        rels = ET.Element("none")
    for rel in rels.iter(_PKG_REL):
        if (rel.get("Type") or "").endswith("/officeDocument"):
            return (rel.get("Target") or "").lstrip("/").split("/")[0].lower() or None
    folders = {posixpath.dirname(name).split("/")[0].lower() for name in zf.namelist()}
    return next((family for family in OFFICE_FAMILIES if family in folders), None)


def check_office_family(zf: zipfile.ZipFile, family: str, label: str, kind: str, main_part: str) -> None:
    """Refuse an Office package of another kind (a .docx renamed .pptx) or none (any ZIP)."""
    found = office_family(zf)
    if found == family:
        return
    if found in OFFICE_FAMILIES:
        raise ParseError(f"corrupt {label}: the file is {OFFICE_FAMILIES[found]}, not {kind}")
    raise ParseError(f"corrupt {label}: the file is a ZIP archive but not {kind} (it has no {main_part})")


def damaged_reason(exc: BaseException) -> str:
    """Why a library (python-pptx, openpyxl) could not read a package, in words: a missing part
    (KeyError), XML that is not well-formed (lxml's and ElementTree's errors are SyntaxErrors) or
    not shaped as it should be, a value of the wrong type, a member that cannot be unpacked, or the library's own message."""
    if isinstance(exc, SyntaxError):
        return f"a part is not well-formed XML ({' '.join(str(exc).split())})"
    if isinstance(exc, KeyError):
        return f"a part it refers to is missing ({exc.args[0] if exc.args else exc})"
    text = " ".join(str(exc).split()) or type(exc).__name__
    if isinstance(exc, AttributeError):  # python-pptx picks element classes by tag: a damaged tag
        return "a part's XML does not have the structure it should"
    if isinstance(exc, ValueError | TypeError):  # openpyxl's typed attributes: "expected <class 'int'>"
        return f"a part holds a value that cannot be read ({text})"
    if isinstance(exc, ZIP_READ_ERRORS):
        return f"a part cannot be unpacked from the ZIP archive ({zip_reason(exc)})"
    return text


def reader_library(module: str, feature: str) -> ModuleType:
    """The library a format is read with; missing (an install that predates it), the file is
    refused with the package to install and the command, instead of a bare ModuleNotFoundError."""
    try:
        return require(module, feature)
    except MissingPackage as exc:
        raise ParseError(str(exc)) from exc

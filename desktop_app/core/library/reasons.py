"""Why a file could not be indexed: every reason as a catalogue message (``core/messages.py``).

The parsers, the OCR and the sync raise ``ParseError(CODE, **params)``; its English rendering is
what the manifest stores, ``kdesk list`` prints and the README quotes, so these texts are kept
exactly as they were. The GUI parses the stored text back and shows it in its language. The small
phrases that go inside a reason (a format's name, zipfile's trouble in words) are messages too:
a reason's parameter that is one of them is translated with it.
"""

from __future__ import annotations

from desktop_app.core.messages import define, define_plural

# Asked or listed before any document was added (kdesk list, the assistant's note).
EMPTY_LIBRARY = define(
    "library.empty",
    "Your library has no documents yet, so there is nothing to search. Add files (drop them on the "
    "window, or `kdesk add PATH`) and ask again.",
)

# What a file is, and what else it may be (the parameters of the reasons below).
NO_EXTENSION = define("doc.no_extension", "(no extension)")
NO_SUFFIX = define("doc.no_suffix", "(no suffix)")
WORD = define("doc.kind.word", "a Word document")
POWERPOINT = define("doc.kind.powerpoint", "a PowerPoint presentation")
EXCEL = define("doc.kind.excel", "an Excel workbook")
EPUB_BOOK = define("doc.kind.epub", "an EPUB book")
WORD_DOCX = define("doc.kind.word_docx", "a Word document (.docx)")
POWERPOINT_PPTX = define("doc.kind.powerpoint_pptx", "a PowerPoint presentation (.pptx)")
EXCEL_XLSX = define("doc.kind.excel_xlsx", "an Excel workbook (.xlsx)")
OLD_WORD = define("doc.kind.old_word", "an old binary Word (.doc) file")
OLD_POWERPOINT = define("doc.kind.old_powerpoint", "an old binary PowerPoint (.ppt) file")
OLD_EXCEL = define("doc.kind.old_excel", "an old binary Excel (.xls) file")
DOCM = define("doc.kind.docm", "a macro-enabled Word document (.docm)")
DOTX = define("doc.kind.dotx", "a Word template (.dotx)")
DOTM = define("doc.kind.dotm", "a macro-enabled Word template (.dotm)")
OTHER_PACKAGE = define("doc.kind.package", "a package of type {content_type}")

# zipfile's and zlib's errors in words (package.zip_reason).
ZIP_FEATURE = define("doc.zip.feature", "it uses a ZIP feature that cannot be read here: {error}")
ZIP_PASSWORD = define("doc.zip.password", "it is password-protected inside the archive")
ZIP_ENDS_EARLY = define("doc.zip.ends_early", "its compressed data ends early")
ZIP_DATA_DAMAGED = define("doc.zip.data_damaged", "its compressed data is damaged: {error}")
ZIP_NAME_NOT_UTF8 = define("doc.zip.name_not_utf8", "a file name in it is not valid UTF-8")
ZIP_BAD_CRC = define("doc.zip.bad_crc", "its checksum does not match, so its data is damaged")
# A library's failure to read a package in words (package.damaged_reason).
PART_NOT_XML = define("doc.part.not_xml", "a part is not well-formed XML ({error})")
PART_MISSING = define("doc.part.missing", "a part it refers to is missing ({part})")
PART_STRUCTURE = define("doc.part.structure", "a part's XML does not have the structure it should")
PART_VALUE = define("doc.part.value", "a part holds a value that cannot be read ({error})")
PART_UNPACK = define("doc.part.unpack", "a part cannot be unpacked from the ZIP archive ({reason})")

# The vector store: a shared Chroma server (chroma_client.py) or the local one (store.py).
CHROMA_URL_CREDENTIALS = define(
    "store.url_credentials",
    "index.chroma_url must not carry a user name or password: put the server token in the system keyring "
    "(the system keyring keeps it)",
)
CHROMA_URL_SCHEME = define(
    "store.url_scheme", "index.chroma_url: unsupported scheme {scheme}; use http:// or https://"
)
CHROMA_URL_PATH = define(
    "store.url_path", "index.chroma_url: give the server itself (https://host:port), without a path"
)
CHROMA_URL_PORT = define("store.url_port", "index.chroma_url: the port is not a number from 1 to 65535")
CHROMA_URL_HOST = define("store.url_host", "index.chroma_url: no host name")
CHROMA_CA_FILE = define("store.ca_file", "index.chroma_ca_file: cannot use {path}: {error}")
CHROMA_TOKEN_HEADER = define(
    "store.token_header", "index.chroma_token_header must be Authorization or X-Chroma-Token"
)
CHROMA_TOKEN_CHARS = define(
    "store.token_chars",
    "the Chroma server token can only hold ASCII letters, digits and punctuation "
    "(check it: keyring set knowledge-desk index.chroma_token)",
)
CHROMA_CERTIFICATE = define(
    "store.certificate",
    "{error}; for a private or self-signed certificate set index.chroma_ca_file to its CA file",
)
CHROMA_UNREACHABLE = define("store.unreachable", "cannot reach the Chroma server at {url}: {reason}")
CHROMA_CHECK_TOKEN = define(
    "store.check_token", "check the server token: keyring set knowledge-desk index.chroma_token"
)
CHROMA_NO_TOKEN = define(
    "store.no_token", "this desktop has no server token: keyring set knowledge-desk index.chroma_token"
)
CHROMA_REFUSED = define(
    "store.refused", "the Chroma server at {url} refused this library: not authorised ({hint})"
)
CHROMA_UNUSABLE = define("store.unusable", "cannot use the Chroma server at {url}: {error}")
STORE_UNREACHABLE = define("store.local_unreachable", "cannot reach the vector store at {location}: {error}")
STORE_COLLECTION = define("store.collection", "cannot open the vector collection {name}: {error}")

# Not copied into the knowledge folder at all (folder.py, fileops.py).
TOO_LARGE_FILE = define(
    "doc.too_large_file",
    "too large: {mb:.1f} MB > limit {limit_mb:g} MB (index.max_document_mb); split the file or raise the limit",
)
OWN_DATA_FOLDER = define("doc.own_data_folder", "Knowledge Desk's own data folder: never indexed")
OTHER_DATA_FOLDER = define(
    "doc.other_data_folder", "another Knowledge Desk library's data folder: never indexed"
)
REFUSE_DATA_FOLDER = define(
    "doc.refuse_data_folder",
    "this is Knowledge Desk's own data folder: its documents are already in the library "
    "(add files from elsewhere, or put them in {folder})",
)
REFUSE_INSIDE_DATA_FOLDER = define(
    "doc.refuse_inside_data_folder",
    "this is inside Knowledge Desk's data folder (derived index files, never indexed)",
)
NO_SUCH_FILE = define("doc.no_such_file", "no such file")
CANNOT_READ_SOURCE = define("doc.cannot_read_source", "cannot read ({reason})")
IS_A_FOLDER = define("doc.is_a_folder", "is a folder (use import_paths for folders)")
NOT_REGULAR = define("doc.not_regular", "not a regular file (a pipe or a device)")
OUTSIDE_KNOWLEDGE = define(
    "doc.outside_knowledge", "refusing to write {name} outside the knowledge folder (via a symlink)"
)
HIDDEN_FOLDER = define("doc.hidden_folder", "hidden folder")
HIDDEN_FILE = define("doc.hidden_file", "hidden file")
SYMLINKED_FOLDER = define("doc.symlinked_folder", "symlinked folder, not followed")
SYMLINK_OUTSIDE = define("doc.symlink_outside", "symlink to outside the dropped folder")
# Only regular files are read (paths.open_regular): a pipe, socket or device is left out.
NOT_REGULAR_KIND = define("doc.not_regular_kind", "not a regular file ({kind}): never read")
KIND_PIPE = define("doc.kind.pipe", "a named pipe")
KIND_SOCKET = define("doc.kind.socket", "a socket")
KIND_DEVICE = define("doc.kind.device", "a device")

# Progress lines (the knowledge panel shows them under its progress bar).
OCR_PAGE = define("doc.ocr_page", "{name}: OCR page {number}/{count}")
WAITING_FOR_WRITER = define("library.waiting", "waiting for {holder} to finish writing to the data folder")
BUSY_WRITER = define("library.busy", "busy: {holder} to finish writing to the data folder")

# Any file.
UNSUPPORTED = define("doc.unsupported", "unsupported file type: {suffix}")
NOT_A_FILE = define("doc.not_a_file", "not a file")
NOT_FOUND = define("doc.not_found", "file not found")
UNREADABLE = define("doc.unreadable", "unreadable file: {reason}")
CANNOT_READ = define("doc.cannot_read", "cannot read: {reason}")
PARSER_BUG = define("doc.parser_bug", "could not read: {error_type}: {error}")
FAILED = define("doc.failed", "failed")
EMPTY = define("doc.empty", "empty document: no text")
BINARY = define("doc.binary", "binary file: not text")
TOO_LARGE_TEXT = define(
    "doc.too_large_text",
    "too large: {mb:.1f} MB of text > limit {limit_mb:g} MB (index.max_document_mb); "
    "split the file or raise the limit",
)
ENCRYPTED = define("doc.encrypted", "encrypted {label}: a password is required")
CORRUPT = define("doc.corrupt", "corrupt {label}: {reason}")

# Office packages (DOCX, PPTX, XLSX) and EPUB books: ZIP archives.
OLD_FORMAT_SAVE_AS = define("doc.old_format_save_as", "corrupt {label}: this is {old}; save it as {suffix}")
OLD_FORMAT = define("doc.old_format", "corrupt {label}: this is {old}, not {kind}")
OLE_FILE = define(
    "doc.ole_file", "corrupt {label}: this is an OLE compound file (an old Office format), not {kind}"
)
ZIP_EMPTY = define("doc.zip_empty", "corrupt {label}: the file is empty")
NOT_ZIP = define(
    "doc.not_zip",
    "corrupt {label}: the file is not a ZIP archive, so it is not {kind} "
    "(it may be another format renamed {suffix}, or badly damaged)",
)
ZIP_TRUNCATED = define(
    "doc.zip_truncated",
    "corrupt {label}: the ZIP archive has no directory at its end, so the file is probably "
    "truncated (an incomplete download or copy)",
)
ZIP_DAMAGED = define("doc.zip_damaged", "corrupt {label}: the ZIP archive is damaged ({reason})")
UNPACKS_TOO_LARGE = define(
    "doc.unpacks_too_large",
    "too large: the {label} unpacks to {mb:.1f} MB, more than the {limit_mb:g} MB "
    "that can be read; split it into smaller files",
)
OTHER_FORMAT = define("doc.other_format", "corrupt {label}: the file is {found}, not {kind}")
ZIP_NOT_KIND = define(
    "doc.zip_not_kind", "corrupt {label}: the file is a ZIP archive but not {kind} (it has no {part})"
)
PART_CANNOT_UNPACK = define(
    "doc.part_cannot_unpack", "corrupt {label}: {part} cannot be unpacked from the ZIP archive ({reason})"
)
PART_NOT_WELL_FORMED = define(
    "doc.part_not_well_formed",
    "corrupt {label}: {part} is not well-formed XML (line {line}, column {column})",
)
DOCX_PART_TOO_LARGE = define(
    "doc.docx_part_too_large",
    "corrupt DOCX: {part} unpacks to {mb:.1f} MB, more than the {limit_mb:g} MB a Word document's part can hold",
)
DOCX_OTHER_PACKAGE = define(
    "doc.docx_other_package",
    "corrupt DOCX: the file is {kind}, not a Word document (.docx); save it as .docx",
)
DOCX_NO_BODY = define("doc.docx_no_body", "corrupt DOCX: {part} has no document body (no w:body element)")
DOCX_TOO_DEEP = define("doc.docx_too_deep", "corrupt DOCX: its XML is nested too deeply to be read")
PPTX_TOO_DEEP = define("doc.pptx_too_deep", "corrupt PPTX: its shapes are nested too deeply to be read")
TOO_MANY_CELLS = define(
    "doc.too_many_cells",
    "too large: the {label} has more than {cells:,} cells, more than can be indexed; split it into smaller files",
)
# A part of a book that is not in its archive, by what it is (one message each: a translation
# may put the words in another order).
EPUB_MISSING = {
    "its container file": define(
        "doc.epub_missing.container", "corrupt EPUB: its container file {part} is not in the archive"
    ),
    "its encryption list": define(
        "doc.epub_missing.encryption", "corrupt EPUB: its encryption list {part} is not in the archive"
    ),
    "its table of contents": define(
        "doc.epub_missing.toc", "corrupt EPUB: its table of contents {part} is not in the archive"
    ),
    "its package document": define(
        "doc.epub_missing.package", "corrupt EPUB: its package document {part} is not in the archive"
    ),
    "the chapter": define("doc.epub_missing.chapter", "corrupt EPUB: the chapter {part} is not in the archive"),
}
EPUB_PART_TOO_LARGE = define(
    "doc.epub_part_too_large",
    "too large: {part} unpacks to {mb:.1f} MB, more than the {limit_mb:g} MB one part of a book can hold",
)
EPUB_NO_ROOTFILE = define(
    "doc.epub_no_rootfile", "corrupt EPUB: {part} names no package document (no rootfile)"
)
EPUB_DRM = define(
    "doc.epub_drm",
    "encrypted EPUB: the book is protected by DRM (copy protection), so its text cannot be read",
)
EPUB_NO_SPINE = define("doc.epub_no_spine", "corrupt EPUB: {part} lists no chapters in its spine")
EPUB_CHAPTER_NOT_TEXT = define("doc.epub_chapter_not_text", "corrupt EPUB: the chapter {part} is not text")

# PDF and scanned pages.
PDF_NEEDS_CRYPTOGRAPHY = define(
    "doc.pdf_needs_cryptography", "encrypted PDF: the 'cryptography' package is needed to open it"
)
PDF_CANNOT_DECRYPT = define("doc.pdf_cannot_decrypt", "encrypted PDF: cannot decrypt ({reason})")
PDF_NO_PAGES = define("doc.pdf_no_pages", "empty document: the PDF has no pages")
PDF_NO_PAGE_READ = define("doc.pdf_no_page_read", "corrupt PDF: no page could be read ({reason})")
PDF_OCR_NO_TEXT = define_plural(
    "doc.pdf_ocr_no_text",
    "empty document: OCR found no text on its {count} scanned page",
    "empty document: OCR found no text on its {count} scanned pages",
)
PDF_NEEDS_OCR = define_plural(
    "doc.pdf_needs_ocr",
    "no text layer: scanned pages need OCR ({count} page)",
    "no text layer: scanned pages need OCR ({count} pages)",
)
PDF_NO_OCR = define(
    "doc.pdf_no_ocr", "no text layer: scanned pages need OCR, which is not installed ({reason})"
)
PDF_BLANK_PAGE = define(
    "doc.pdf_blank_page", "empty document: page 1 has no text (it is blank or a vector drawing)"
)
PDF_BLANK = define(
    "doc.pdf_blank", "empty document: the PDF has no text (its {count} pages are blank or vector drawings)"
)
OCR_TOO_MANY_PAGES = define(
    "doc.ocr_too_many_pages",
    "too many scanned pages: {count} pages without a text layer > limit {limit} "
    "(index.ocr_max_pages); split the file or raise the limit",
)
OCR_CANNOT_RENDER = define("doc.ocr_cannot_render", "scanned pages cannot be rendered for OCR: {reason}")

# Images: a picture of text is read by OCR, a photo becomes a reference photo.
IMAGE_IS_PHOTO = define(
    "doc.image_is_photo", "image file: {suffix} is handled as a reference photo, not a text document"
)
IMAGE_TOO_LITTLE_TEXT = define(
    "doc.image_too_little_text", "image file: too little text in it ({weight} < {minimum}): a photo"
)
NO_IMAGE_SUPPORT = define(
    "doc.no_image_support",
    "image support is not installed (reference photos need torch and the classifier packages)",
)
# The reasons a photo cannot be opened are in core/identify/texts.py.

# Limits on what one file may hold (parsers/limits.py): the parsers stream and stop at the first.
TOO_MANY_PARAGRAPHS = define(
    "doc.too_many_paragraphs",
    "too large: the {label} has more than {limit:,} paragraphs, the limit; split it into smaller files",
)
TOO_MANY_ELEMENTS = define(
    "doc.too_many_elements",
    "too large: the {label} has more than {limit:,} XML elements, the limit; split it into smaller files",
)
PART_TOO_MANY_ELEMENTS = define(
    "doc.part_too_many_elements",
    "too large: {part} of the {label} has more than {limit:,} XML elements in one piece, the limit; "
    "split it into smaller files",
)
TOO_MANY_CHARS = define(
    "doc.too_many_chars",
    "too large: the {label} has more than {limit:,} characters of text, the limit; split it into smaller files",
)
TOO_MANY_COLUMNS = define(
    "doc.too_many_columns",
    "too large: a row of the {label} has more than {limit:,} columns, the limit; split it into smaller files",
)
TOO_MANY_CHAPTERS = define(
    "doc.too_many_chapters",
    "too large: the EPUB has {count:,} chapters, more than the limit of {limit:,}; split it into smaller books",
)
XML_ENTITIES = define(
    "doc.xml_entities",
    "refused {label}: {part} declares XML entities, which are refused (they can expand without bound)",
)
XML_TOO_BIG = define("doc.xml_too_big", "its XML is too large or too deeply nested to be read")
PDF_PAGES_LOST = define(
    "doc.pdf_pages_lost",
    "corrupt PDF: none of its pages can be read; the file is probably truncated ({reason})",
)

# Tamper detection (integrity.py): chunks whose keyed hash does not match what this library wrote.
CHUNK_KEY_DAMAGED = define(
    "store.chunk_key_damaged",
    "{path} is damaged: it should hold this library's 64-character chunk key; restore it from a backup "
    "(deleting it makes the next sync re-index every document)",
)
FOREIGN_CHUNKS = define(
    "store.foreign_chunks",
    "{count} chunks read from {location} were left out: they are not what this library wrote (changed "
    "outside the app); the next sync re-indexes {names}",
)
REPAIR_MISSING = define(
    "store.repair_missing", "re-indexed: {found} of its {expected} chunks were in the vector store"
)
REPAIR_CHANGED = define(
    "store.repair_changed", "re-indexed: its chunks in the vector store were changed outside the app"
)
REPAIR_KEY = define("store.repair_key", "re-indexed: this library's chunk key changed")
REPAIRED = define(
    "store.repaired",
    "{count} documents had missing or altered chunks in {location} and are re-indexed from the "
    "knowledge folder",
)

# Bounded time and memory per file, progress inside one file (parse_worker.py, progress_lines.py).
# Where a parser is in a file (parsers/progress.py units); an unknown kind is shown as a part.
UNIT = {
    "page": define("doc.unit.page", "page {number}"),
    "slide": define("doc.unit.slide", "slide {number}"),
    "chapter": define("doc.unit.chapter", "chapter {number}"),
    "sheet": define("doc.unit.sheet", "sheet {number}"),
    "paragraph": define("doc.unit.paragraph", "paragraph {number}"),
    "row": define("doc.unit.row", "row {number}"),
    "part": define("doc.unit.part", "part {number}"),
    "OCR page": define("doc.unit.ocr_page", "OCR page {number}"),
}
READING_UNIT = define("doc.progress.reading_unit", "{name}: reading {unit}")
READING_UNIT_OF = define("doc.progress.reading", "{name}: reading {unit} of {count}")
READING_UNIT_ETA = define("doc.progress.reading_eta", "{name}: reading {unit} of {count}, {eta}")
EMBEDDING = define("doc.progress.embedding", "{name}: {done} of {total} chunks embedded")
EMBEDDING_ETA = define("doc.progress.embedding_eta", "{name}: {done} of {total} chunks embedded, {eta}")
ETA_SECONDS = define("doc.eta.seconds", "about {seconds} s left")
ETA_MINUTES = define("doc.eta.minutes", "about {minutes} min left")
TOO_SLOW_AT = define(
    "doc.too_slow_at", "took longer than {seconds:g} s at {unit} (index.max_seconds_per_unit)"
)
TOO_SLOW_OPENING = define(
    "doc.too_slow_opening", "took longer than {seconds:g} s to open (index.max_seconds_per_unit)"
)
TOO_MUCH_MEMORY = define(
    "doc.too_much_memory", "too large: it needed more than {mb:g} MB to read (index.max_parse_memory_mb)"
)
READER_DIED = define("doc.reader_died", "the file reader process stopped unexpectedly ({reason})")
READER_NO_START = define("doc.reader_no_start", "the file reader process did not start: {reason}")

# layers: an image that cannot be read (images.py: ParseError), for the parsers and identification alike
# (the codes kept). No file name: the library's lists and the CLI's "failed  NAME: reason" lines name
# the file already; identify adds it (identify/texts.py IMAGE_UNREADABLE).
IMAGE_CANNOT_OPEN = define("identify.image.cannot_open", "cannot open the file ({reason})")
IMAGE_TOO_LARGE = define(
    "identify.image.too_large",
    "image too large ({width}x{height} = {megapixels:.0f} megapixels; the limit is {limit:.0f}):"
    " possibly a decompression bomb",
)
IMAGE_BOMB = define("identify.image.bomb", "image too large, possibly a decompression bomb ({error})")
IMAGE_EMPTY = define("identify.image.empty", "the image file is empty")
IMAGE_NOT_IMAGE = define("identify.image.not_image", "not an image file or an unsupported image format")
IMAGE_TRUNCATED = define("identify.image.truncated", "the image file is truncated (incomplete download?)")
IMAGE_CORRUPT = define("identify.image.corrupt", "the image is corrupt ({error})")

# Collection (scope) names: what a new collection may be called (scopes.check_scope_name).
SCOPE_NAME_RULE = define(
    "scope.name.rule", "letters (any language, Chinese too), digits, - and _; at most {limit} characters"
)
SCOPE_NAME_INVALID = define("scope.name.invalid", "“{name}” cannot name a collection: use {rule}.")
SCOPE_NAME_EMPTY = define("scope.name.empty", "A collection needs a name: use {rule}.")

# -- switching the embedding model: the new index fills while the one in use answers (switching.py)
SWITCH_FILLING = define("library.switch.filling", "{model}: {done} of {total} documents embedded")
SWITCH_FILLING_ETA = define(
    "library.switch.filling_eta", "{model}: {done} of {total} documents embedded, {eta}"
)
SWITCH_STATUS = define("library.switch.status", "searching with {current}; {model} filling {done}/{total}")
SWITCH_STATUS_ETA = define(
    "library.switch.status_eta", "searching with {current}; {model} filling {done}/{total}, {eta}"
)
SWITCH_STATUS_PAUSED = define(
    "library.switch.status_paused", "searching with {current}; {model} paused at {done}/{total}"
)
SWITCH_STOPPED = define(
    "library.switch.stopped", "stopped at {done} of {total} documents: run `kdesk reindex` to continue"
)
SWITCH_DONE = define("library.switch.done", "{model} now answers searches ({total} documents)")

# -- issue 44: damaged derived files in index/ (damage.py): named, set aside, rebuilt
DAMAGED_MANIFEST = define(
    "index.damaged.manifest",
    "The index manifest {path} was damaged ({why}): it was set aside as {aside} and rebuilt; {kept} documents"
    " were read back from it, {pending} are indexed again from the knowledge folder by the next sync",
)
MISSING_MANIFEST = define(
    "index.damaged.manifest_missing",
    "The index manifest {path} was missing and has been rebuilt: {pending} documents are indexed again"
    " from the knowledge folder by the next sync",
)
DAMAGED_POINTER = define(
    "index.damaged.pointer",
    "{path} does not name a build of the index that is here ({why}): the build {build} answers instead",
)
DAMAGED_POINTER_ASIDE = define(
    "index.damaged.pointer_aside", "{path} was damaged: it was set aside as {aside} and now names {build}"
)
DAMAGED_DERIVED = define(
    "index.damaged.derived", "{path} was damaged ({why}): it was set aside as {aside} and is rebuilt"
)
MISSING_DERIVED = define("index.damaged.missing", "{path} was missing: it is rebuilt from the vector store")
DAMAGED_STORE = define(
    "index.damaged.store",
    "The vector store {path} was damaged ({why}): it was set aside as {aside}; every document is indexed"
    " again from the knowledge folder, and search finds each one again as soon as it is",
)
STORE_EMPTIED = define(
    "index.damaged.store_emptied",
    "The vector store {path} holds none of the {count} chunks the index lists: its files were removed or"
    " emptied. Run `kdesk sync` (or open the window) to index the knowledge folder again",
)
STORE_DAMAGED_ERROR = define(
    "index.damaged.store_error",
    "The vector store {path} is damaged ({why}). Run `kdesk sync` (or open the window): it is set aside"
    " and rebuilt from the knowledge folder, which holds every document",
)

# -- issue 44: links in the knowledge folder never lead out of it (folder.py, sync.py, reading.py)
LINK_OUTSIDE = define(
    "doc.link_outside",
    "a link to outside the knowledge folder ({target}): never read; copy the file in to index it",
)
LINK_DUPLICATE = define("doc.link_duplicate", "a link to {name}, which is indexed under its own name")

# -- issue 44: small fixes (a reader killed by signal 9, chunks of no document, who holds the writer lock)
READER_KILLED_TWICE = define(
    "doc.reader_killed_twice",
    "the file reader process was killed (signal 9, probably out of memory) twice",
)
FOREIGN_CHUNKS_NO_FILE = define(
    "store.foreign_chunks_no_file",
    "{count} chunks read from {location} were left out: they are not what this library wrote (changed "
    "outside the app) and belong to none of its files; the next sync deletes them",
)
HOLDER = define("library.holder", "{what} (process {pid}, since {since})")
HOLDER_ON_HOST = define("library.holder_on_host", "{what} (process {pid} on {host}, since {since})")
HOLDER_WINDOW = define("library.holder.window", "the Knowledge Desk window")
HOLDER_UNKNOWN = define("library.holder.unknown", "another Knowledge Desk process")

# -- issue 44: a full disk (diskspace.py)
DISK_FULL = define(
    "library.disk_full", "the disk holding {folder} is full: {free_mb} MB free, about {needed_mb} MB needed"
)
DISK_FULL_SEARCH = define(
    "library.disk_full_search",
    "the disk holding {folder} is full ({free_mb} MB free): search answers from the documents indexed "
    "before; free some space and run `kdesk sync` to finish indexing",
)

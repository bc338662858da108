"""The shared data types under their library name: they live in core/documents.py, below every layer
(events carry hits too); parsers, the index and the lab import them from here."""

from desktop_app.core.documents import (  # noqa: F401 - re-exported
    Chunk,
    DocumentInfo,
    Hit,
    ParseError,
    Section,
    page_label,
)

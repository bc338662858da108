"""The assistant's notes beside an answer (``Warning`` and ``Error`` events) as catalogue messages.

The events keep carrying English text (the CLI prints it, saved conversations store it); the GUI
parses each back to its message and shows it in the window's language (``core/messages.py``).
"""

from __future__ import annotations

from desktop_app.core.messages import define, define_plural

STOPPED = define("ask.stopped", "stopped")
EMPTY_QUESTION = define("ask.empty_question", "the question is empty")
SEARCH_FAILED = define("ask.search_failed", "search failed: {error}")
FALLBACK = define("ask.fallback", "{error} ({when}); showing the most relevant passages instead")
MID_ANSWER = define("ask.when.mid_answer", "mid-answer")
BEFORE_ANSWERING = define("ask.when.before_answering", "before answering")
EMPTY_ANSWER = define("ask.empty_answer", "the language model returned an empty answer")
CITATION_ONLY = define("ask.citation_only", "the language model answered with a citation only")
CITATIONS_DROPPED = define_plural(
    "ask.citations_dropped",
    "the answer cited {markers} but only {count} source block was given; those citations were dropped",
    "the answer cited {markers} but only {count} source blocks were given; those citations were dropped",
)
NOT_SAVED = define("ask.not_saved", "the conversation could not be saved: {error}")
# The empty library's note is library/reasons.EMPTY_LIBRARY (the CLI says it too).

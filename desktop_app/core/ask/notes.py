"""The assistant's notes beside an answer (``Warning`` and ``Error`` events) as catalogue messages.

The events carry the messages; the CLI prints their English, saved conversations store them as
{code, params}, and the window renders them in its language (``core/messages.py``). The stop note
is ``tasks.STOPPED``, shared with the photo flow.
"""

from __future__ import annotations

from desktop_app.core.messages import define, define_plural

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

# Whole documents (issue 37): a long reading's progress, and a model that failed mid-reading.
READING_PARTS = define("ask.whole.reading_parts", "reading {name}: part {done} of {total}")
FALLBACK_WHOLE = define(
    "ask.whole.fallback", "{error} ({when}); showing the document's own central sentences instead"
)

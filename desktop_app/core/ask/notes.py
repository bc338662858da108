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

# Conversation titles of a chat started with a photo (issue 38): the species it named.
PHOTO_UNCERTAIN_ONE = define("chat.title.uncertain_one", "Uncertain: {a}")
PHOTO_UNCERTAIN_TWO = define("chat.title.uncertain_two", "Uncertain: {a} or {b}")

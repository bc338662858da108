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

# Kinds of reading (issue 37): answers about the library's files, and documents a question names.
LIBRARY_TOTAL = define_plural(
    "ask.library.total", "You have {count} document in your library.", "You have {count} documents in your library."
)
LIBRARY_OF_FORMAT = define_plural(
    "ask.library.of_format",
    "{count} of your documents is a {format} file.",
    "{count} of your documents are {format} files.",
)
LIBRARY_FOLDER = define_plural("ask.library.folder", "{folder}: {count} document", "{folder}: {count} documents")
LIBRARY_TOP_FOLDER = define("ask.library.top_folder", "(top folder)")
LIBRARY_MORE = define_plural("ask.library.more", "… and {count} more", "… and {count} more")
LIBRARY_ABOUT = define_plural(
    "ask.library.about", "{count} document is about {subject}:", "{count} documents are about {subject}:"
)
LIBRARY_MENTION = define_plural(
    "ask.library.mention",
    "{count} more document mentions {subject}:",
    "{count} more documents mention {subject}:",
)
LIBRARY_ONLY_MENTION = define_plural(
    "ask.library.only_mention",
    "No document is about {subject}; {count} mentions it:",
    "No document is about {subject}; {count} mention it:",
)
LIBRARY_NONE_ABOUT = define("ask.library.none_about", "No document in your library is about or mentions {subject}.")
# "Which of my recipes call for an alcoholic drink?": no title names it, so the documents are
# ranked by a search of what the question asks, each with the passage that makes it close.
LIBRARY_CLOSEST = define_plural(
    "ask.library.closest",
    "By its text, this document is closest to what you ask:",
    "By their text, these {count} documents are closest to what you ask, closest first:",
)
LIBRARY_NONE_CLOSE = define("ask.library.none_close", "No document in your library is about what you ask.")
LIBRARY_NEW = define_plural(
    "ask.library.new",
    "Added or changed most recently ({date}): {count} document",
    "Added or changed most recently ({date}): {count} documents",
)
LIBRARY_COLLECTION = define_plural(
    "ask.library.collection", "“{name}” holds {count} document:", "“{name}” holds {count} documents:"
)
LIBRARY_COLLECTIONS = define_plural(
    "ask.library.collections",
    "Your documents are in {count} folder or collection:",
    "Your documents are in {count} folders or collections:",
)
DOCUMENT_NOT_FOUND = define(
    "ask.document.not_found", "I could not tell which document the question means: none is named so in your library."
)
DOCUMENT_CLOSEST = define("ask.document.closest", "The closest: {names}.")
DOCUMENT_NAME_IT = define(
    "ask.document.name_it", "Name a document by its title or file name, for example “{example}”."
)

# Whole documents (issue 37): a long reading's progress, and a model that failed mid-reading.
READING_PARTS = define("ask.whole.reading_parts", "reading {name}: part {done} of {total}")
FALLBACK_WHOLE = define(
    "ask.whole.fallback", "{error} ({when}); showing the document's own central sentences instead"
)

# -- issue 44: a damaged conversation store
STORE_REPAIRED = define_plural(
    "chats.store_repaired",
    "The conversation store {path} was damaged: it was set aside as {aside}; {count} conversation"
    " was kept in a new store.",
    "The conversation store {path} was damaged: it was set aside as {aside}; {count} conversations"
    " were kept in a new store.",
)
STORE_DAMAGED = define(
    "chats.store_damaged",
    "The conversation store {path} is damaged and could not be repaired: {error}. Nothing was deleted.",
)

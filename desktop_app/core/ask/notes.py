"""The assistant's texts as catalogue messages: its notes beside an answer (``Warning`` and
``Error`` events) and the answer's own words (the note an answer without a model opens with, a
refusal, a whole document's outline).

The events carry the messages; the CLI prints their English, saved conversations store them as
{code, params}, and the window renders them in its language (``core/messages.py``). The stop note
is ``tasks.STOPPED``, shared with the photo flow. An answer's own words are rendered into its text
in the question's language (``written``).
"""

from __future__ import annotations

from desktop_app.core.messages import (
    ENGLISH,
    Text,
    Translator,
    define,
    define_plural,
    message,
    render,
    translations,
)

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
    "By its text, {count} document is closest to what you ask:",
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

# -- issue 43 item 5 / issue 45 item 1: the answer's own words. An answer is written in the
# question's language, not the window's (``written``): it is stored, copied and given to the model as
# it reads. The window shows a few of these in its own language where an answer opens with one
# (gui/chat/messages.py ``shown_answer_text``); prompts to a model stay in prompts.py and whole.py.
NO_MODEL_PASSAGES = define(
    "ask.no_model.passages", "No language model is configured; these are the most relevant passages."
)
# The passages are in the other language and there is no model to translate them.
NO_MODEL_OTHER_LANGUAGE = define(
    "ask.no_model.other_language",
    "No language model is configured; these are the most relevant passages, quoted in their own"
    " language (translating them needs a language model).",
)
NO_MODEL_NOTHING_FOUND = define(
    "ask.no_model.nothing_found",
    "No language model is configured, and no relevant passages were found in your documents.",
)
NO_MODEL_CHAT = define(
    "ask.no_model.chat",
    "No language model is configured, so I can only answer from your documents. Ask about something"
    " in them, or set up a model in Settings.",
)
MODEL_FAILED_PASSAGES = define(
    "ask.model_failed.passages", "The language model failed; these are the most relevant passages."
)
MODEL_FAILED_NOTHING_FOUND = define(
    "ask.model_failed.nothing_found", "The language model is unavailable and no relevant passages were found."
)
NOT_ANSWERED = define(
    "ask.not_answered",
    "Your documents do not seem to answer this. The nearest passages are listed as related.",
)

# A follow-up to a photo whose class several notes fit equally (identify/specific.py): with no
# library it asks which; else each candidate's own note answers first (a list item each).
WHICH_SUBJECT = define(
    "ask.photo.which_subject",
    "The photo could be any of these in your notes: {names}. Which one do you mean?",
)
COULD_BE = define("ask.photo.could_be", "The photo could be any of these in your notes: {names}.")
IF_IT_IS = define("ask.photo.if_it_is", "If it is the {name}: {answer}")
NO_NOTE_FOUND = define("ask.photo.no_note", "no note about it was found.")
NOTE_DOES_NOT_ANSWER = define("ask.photo.note_does_not_answer", "its note does not seem to answer this.")
WHICH_ONE = define("ask.photo.which_one", "Which one is it?")

# A species note, there whole, that lacks the kind of fact asked (extractive.py); ``what`` is the
# kind in words (FACT_WHAT).
NOT_SAID = define("ask.fact.not_said", "The notes about the {subject} do not say {what}.")
NOT_SAID_OWN = define("ask.fact.not_said_own", "its note does not say {what}.")  # one of several candidates
FACT_WHAT = {
    "range": define("ask.fact.range", "where it lives"),
    "size": define("ask.fact.size", "how big it is"),
    "diet": define("ask.fact.diet", "what it eats"),
    "colour": define("ask.fact.colour", "what colour it is"),
    "latin": define("ask.fact.latin", "its scientific name"),
    "name": define("ask.fact.name", "its name"),
}

# A whole document read without a model (whole.py).
WHOLE_SUMMARY = define(
    "ask.whole.summary",
    "No language model is configured; this summary quotes the document's own most central sentences,"
    " section by section.",
)
WHOLE_ABOUT = define(
    "ask.whole.about",
    "No language model is configured; these are the sentences of {name} closest to the question.",
)
WHOLE_OUTLINE = define("ask.whole.outline", "The outline of {name}:")
WHOLE_NO_HEADINGS = define("ask.whole.no_headings", "{name} has no headings; its sections are its pages.")
WHOLE_PAGE = define("ask.whole.page", "p. {page}")  # a section of a document without headings
WHOLE_COMPARE_FIELDS = define(
    "ask.whole.compare_fields",
    "No language model is configured; these are the notes' own lines, side by side.",
)
WHOLE_COMPARE_SECTIONS = define(
    "ask.whole.compare_sections",
    "No language model is configured; these are each document's most central sentences, side by side.",
)
WHOLE_MORE_NOTES = define_plural("ask.whole.more_notes", "and {count} more note", "and {count} more notes")
WHOLE_NOTHING_READ = define("ask.whole.nothing_read", "{name} has no indexed text to read.")


ANSWER_LANGUAGES = ("en", "zh")  # what Question.language reads


def answer_language(lang: str) -> Translator:
    """The catalogue an answer to a question in ``lang`` ("en" or "zh", ``Question.language``) is
    written with."""
    return translations("zh_CN") if lang == "zh" else ENGLISH


def written(text: Text, lang: str) -> str:
    """``text`` as an answer to a question in ``lang`` writes it."""
    return render(text, answer_language(lang))


def written_forms(code: str) -> tuple[str, ...]:
    """The message ``code`` (one without parameters) as an answer in each language writes it: what
    an answer stored as text opens with."""
    return tuple(written(message(code), lang) for lang in ANSWER_LANGUAGES)

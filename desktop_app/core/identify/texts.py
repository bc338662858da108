"""The identify flow's sentences as catalogue messages (see core/messages.py).

The flow's events carry these messages (a reasoning is a list of lines, one sentence each); the
window renders them in its language, the CLI and JSON in English, and saved cards store them as
{code, params}. Parameters are names, colours and scores: the window localises those itself.
"""

from __future__ import annotations

from desktop_app.core.messages import define

# Flow (flow.py)
CONFIDENT = define("identify.confident", "The classifier is confident ({score:.0%}) that this is {name}.")
LOOKS_LIKE = define("identify.looks_like", "This looks like {name}.")
CANNOT = define("identify.cannot", "I can't identify this with confidence.")
ALSO_BY_EYE = define(
    "identify.also_by_eye",
    "Also possible, known only from your notes (no reference photos, matched to the photo by the"
    " image model): {names}.",
)
ALSO_BY_COLOUR = define(
    "identify.also_by_colour",
    "Also possible, known only from your notes (no reference photos, so not compared by eye): {names}.",
)
PHOTOS_POINT_TO = define("identify.photos_though", "The reference photos, though, point to {name}.")
# The most specific subject (specific.py): a class several notes share, narrowed by the photo's colours
SPECIFIC_FIT = define(
    "identify.specific_fit",
    "A {cls}; by its {colours} colours most likely the {name}; also possible: {also}.",
)
CLASS_TIED = define(
    "identify.class_tied",
    "A {cls}; its colours fit several of your notes equally: {names}.",
)
# The classifier's best guess is a class no note covers: a lower class of its top 5 that they do
NEXT_CLASS = define(
    "identify.next_class",
    "The image classifier's best guess is {top} ({top_score:.0%}), which none of your notes cover;"
    " of the classes they cover, {cls} fits next ({score:.0%}).",
)
NEXT_FIT = define(
    "identify.next_fit", "By its {colours} colours most likely the {name}; also possible: {also}."
)
NEXT_TIED = define("identify.next_tied", "Its colours fit several of your notes equally: {names}.")
NEXT_ONE = define("identify.next_one", "Your notes about it: {name}.")
WHICH_ONE = define("identify.which_one", "Which one is it: {names}?")
QUERY_COMPARE = define("identify.query_compare", "{names}: differences and identification keys")
QUERY_TRAITS = define("identify.query_traits", "{name}: appearance, colours and identification traits")

# The evidence vote (vote.py)
NO_CANDIDATES = define("identify.no_candidates", "There are no candidates to compare.")
NOT_YOURS = define(
    "identify.not_yours",
    "Not one of the species in your knowledge base: the photo ({colours}) is not close to any"
    " reference photo.",
)
NEAREST = define("identify.nearest", "Nearest guesses: {names}.")
OBSERVED = define("identify.observed", "Observed {colours}.")
POINT_TO = define("identify.point_to", "The reference photos point to {name} ({score:.0%}).")
# {runner} is "<name> <score>" in one field: two fields side by side would not parse back.
POINT_TO_NEXT = define(
    "identify.point_to_next", "The reference photos point to {name} ({score:.0%}; next {runner})."
)
NOTES_MENTION = define(
    "identify.notes_mention", "{name}: notes ({source}) mention {colours} of the observed colours."
)
NO_NOTES = define(
    "identify.no_notes",
    "There are no notes about {name} in the knowledge base, so the reference photos decide.",
)
OVERTURNED = define(
    "identify.overturned",
    "The reference photos put {leader} and {name} close together; the notes of {name} fit the observed"
    " colours clearly better.",
)
TIED = define("identify.tied", "{name} and {runner} are nearly tied.")
NOT_CLOSE = define(
    "identify.not_close",
    "The photo is not close to any reference photo ({reject:.0%} none of them), so this is only the"
    " nearest guess.",
)
NO_CLEAR_COLOURS = define("identify.no_clear_colours", "no clear colours")
FOLLOWUP = define(
    "identify.followup",
    "Please send a sharper photo showing the whole bird (head, beak, wings and tail) in good light,"
    " or add reference photos and notes for this kind to the knowledge base.",
)
FOLLOWUP_PAIR = define(
    "identify.followup_pair",
    "Please send a sharper photo showing the whole bird (head, beak, wings and tail) in good light,"
    " ideally one where the features that separate {first} from {second} are visible, or add"
    " reference photos and notes for this kind to the knowledge base.",
)
# An unsure card that agrees with itself (issue 34): the photo's request only for a blurry photo
# (sharpness.py), and no "not one of your species" when the notes offer one.
FOLLOWUP_VIEW = define(
    "identify.followup_view",
    "Please send a photo showing the whole bird (head, beak, wings and tail) in good light,"
    " or add reference photos and notes for this kind to the knowledge base.",
)
FOLLOWUP_VIEW_PAIR = define(
    "identify.followup_view_pair",
    "Please send a photo showing the whole bird (head, beak, wings and tail) in good light,"
    " ideally one where the features that separate {first} from {second} are visible, or add"
    " reference photos and notes for this kind to the knowledge base.",
)
NOT_CLOSE_NOTES = define(
    "identify.not_close_notes",
    "The photo ({colours}) is not close to any reference photo; your notes describe a species that may fit.",
)
# Without reference photos the leader is the image classifier's guess: not "the reference photos".
CLASSIFIER_POINTS_TO = define(
    "identify.classifier_points_to", "The image classifier points to {name} ({score:.0%})."
)
CLASSIFIER_POINTS_TO_NEXT = define(
    "identify.classifier_points_to_next",
    "The image classifier points to {name} ({score:.0%}; next {runner}).",
)
NO_NOTES_CLASSIFIER = define(
    "identify.no_notes_classifier",
    "There are no notes about {name} in the knowledge base, so the image classifier's guess stands.",
)

# The language model's decision (llm.py)
LLM_FAILED = define(
    "identify.llm_failed", "the language model failed ({error}); decided by the evidence vote"
)
LLM_INVALID = define(
    "identify.llm_invalid",
    "the language model's decision was not valid JSON naming a candidate; decided by the evidence vote",
)

# The visual description without a vision model (colours.py)
SEEN_BIRD = define("identify.seen_bird", "a bird with {colours} plumage")
SEEN_BIRD_FACE = define("identify.seen_bird_face", "a bird with {colours} plumage, {face} face")
SEEN_SUBJECT = define("identify.seen_subject", "a subject with {colours} colours")
SEEN_SUBJECT_FACE = define("identify.seen_subject_face", "a subject with {colours} colours, {face} face")
SUGGESTS = define("identify.suggests", "{seen}; the classifier suggests {labels}")

# A photo that cannot be read: its reason (library/images.py) named with the file.
IMAGE_UNREADABLE = define("identify.image.unreadable", "cannot read the photo {name}: {reason}")

"""The identify flow: confidence branches, feature queries, the no-LLM vote, the LLM decision, events."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from desktop_app.core.config import Config, IdentifyConfig
from desktop_app.core.events import (
    Answer,
    Candidate,
    Classified,
    Decision,
    Error,
    FeatureQueries,
    Retrieved,
    Warning,
)
from desktop_app.core.identify.classifier import get_classifier
from desktop_app.core.identify.colours import ColourProfile
from desktop_app.core.identify.flow import Identifier
from desktop_app.core.identify.gallery import GalleryMatch
from desktop_app.core.identify.llm import parse_decision
from desktop_app.core.identify.result import (
    HIGH,
    LOW,
    MEDIUM,
    UNCERTAIN,
    IdentifyResult,
    confidence_level,
    needs_retrieval,
)
from desktop_app.core.identify.vote import also_possible, evidence_vote, notes_only_species, rank_candidates
from desktop_app.core.library.documents import Hit
from desktop_app.core.messages import Message, render, render_lines

NOTES = {
    "Scarlet Macaw": "# Scarlet Macaw\n\n**Colours:** scarlet red body; a yellow band on the upper wing; blue flight "
    "feathers; bare white face.\n\nThe yellow wing band marks the species. A large parrot of the American tropics.",
    "Hyacinth Macaw": "# Hyacinth Macaw\n\n**Colours:** cobalt blue all over; yellow eye ring; black bill.\n\n"
    "The largest flying parrot.",
    "Galah": "# Galah\n\n**Colours:** rose pink face and breast; grey back and wings.\n\nA cockatoo of Australia.",
}


def _hit(name: str, text: str) -> Hit:
    slug = name.lower().replace(" ", "-")
    title = [text.splitlines()[0][2:]] if text.startswith("# ") else []
    return Hit(
        f"{slug}-chunk-0",
        slug,
        text,
        f"parrots/{slug}.md",
        None,
        0,
        1,
        1.0,
        vector_score=0.5,
        heading_path=title,
    )


class FakeSearch:
    """Word-overlap search over NOTES; records the queries it was asked."""

    def __init__(self) -> None:
        self.calls: list[list[str]] = []

    def __call__(self, queries, top_k, scope):
        self.calls.append(list(queries))
        hits = []
        for name, text in NOTES.items():
            words = {w for q in queries for w in q.lower().replace("/", " ").split() if len(w) > 3}
            overlap = sum(w in text.lower() for w in words)
            if overlap:
                hits.append((overlap, _hit(name, text)))
        return [h for _, h in sorted(hits, key=lambda x: -x[0])][:top_k]


class FakeGallery:
    def __init__(self, matches: list[tuple[str, float]]) -> None:
        self.matches = [
            GalleryMatch(f"id{i}", label, f"{label}/{i}.jpg", sim) for i, (label, sim) in enumerate(matches)
        ]

    def nearest(self, feature, k=10, scope=None):
        return self.matches[:k]


class FakeChat:
    name = "fake"
    context_window = 4096

    def __init__(self, reply: str) -> None:
        self.reply = reply
        self.schemas: list[dict] = []

    def stream(self, messages, json_schema=None, max_tokens=None, temperature=None, cancel=None):
        self.schemas.append(json_schema)
        yield self.reply

    def close(self) -> None:
        pass


@pytest.fixture(scope="module")
def coral(shared_data) -> Path:
    get_classifier().load()  # the process-wide model: loaded once for all vision tests
    return shared_data / "images" / "coral"


def _identifier(gallery, chat=None, **cfg) -> tuple[Identifier, FakeSearch]:
    config = Config()
    # Fixed calibration so the fake similarities below land in known levels whatever the defaults.
    cfg = {"temperature": 0.05, "reject_similarity": 0.70, "high": 0.8, "medium": 0.5, **cfg}
    for k, v in cfg.items():
        setattr(config.identify, k, v)
    search = FakeSearch()
    return Identifier(None, chat, config, search=search, gallery=gallery), search


# ------------------------------------------------------------------ the rule
def test_confidence_levels_follow_the_configured_thresholds():
    cfg = IdentifyConfig(high=0.8, medium=0.5)
    assert confidence_level(0.9, cfg) == HIGH
    assert confidence_level(0.8, cfg) == HIGH
    assert confidence_level(0.6, cfg) == MEDIUM
    assert confidence_level(0.49, cfg) == LOW


def test_parrot_set_rule_decides_when_to_retrieve():
    cfg = IdentifyConfig(medium_retrieve_below=0.65, unknown_retrieve_below=0.75)
    assert needs_retrieval(LOW, 0.45, cfg) is True
    assert needs_retrieval(MEDIUM, 0.60, cfg) is True
    assert needs_retrieval(MEDIUM, 0.70, cfg) is False
    assert needs_retrieval(HIGH, 0.95, cfg) is False
    assert needs_retrieval(None, 0.70, cfg) is True
    assert needs_retrieval(None, 0.80, cfg) is False


# ------------------------------------------------------------------ branches through the flow
def test_high_confidence_names_the_species_with_a_retrieved_summary(coral):
    ident, search = _identifier(
        FakeGallery([("Scarlet Macaw", 0.97), ("Scarlet Macaw", 0.95), ("Galah", 0.55)])
    )
    events = list(ident.run(coral / "parrot.jpg"))
    kinds = [type(e) for e in events]
    assert kinds == [Classified, FeatureQueries, Retrieved, Decision, Answer]
    cls = events[0]
    assert cls.confidence_level == HIGH and cls.low_confidence is False
    assert cls.candidates[0] == Candidate(
        "Scarlet Macaw", cls.candidates[0].score, "gallery", photo="Scarlet Macaw/0.jpg"
    )
    assert any(c.source == "imagenet" and c.name == "macaw" for c in cls.candidates)
    assert events[1].queries == []  # no feature queries on the confident path
    assert search.calls == [["Scarlet Macaw"]]
    assert events[3].final_name == "Scarlet Macaw"
    answer = events[4]
    assert "Scarlet Macaw" in answer.text and "yellow band" in answer.text
    assert answer.citations and answer.citations[0].source == "parrots/scarlet-macaw.md"


def test_medium_confidence_above_065_does_not_retrieve(coral):
    ident, search = _identifier(
        FakeGallery([("Scarlet Macaw", 0.80), ("Galah", 0.70)]), high=0.99, medium=0.5
    )
    result = ident.identify(coral / "parrot.jpg")
    assert result.confidence_level == MEDIUM and 0.65 <= result.confidence_score < 0.99
    assert result.low_confidence is False and result.feature_queries == []
    assert result.decision.final_name == "Scarlet Macaw"


def test_medium_confidence_below_065_runs_the_fallback(coral):
    ident, _ = _identifier(
        FakeGallery([("Scarlet Macaw", 0.78), ("Hyacinth Macaw", 0.76)]), high=0.9, medium=0.3
    )
    result = ident.identify(coral / "parrot.jpg")
    assert result.confidence_level == MEDIUM and result.confidence_score < 0.65
    assert result.low_confidence is True and len(result.feature_queries) == 3


def test_low_confidence_gathers_evidence_and_the_vote_picks_the_matching_colours(coral):
    gallery = FakeGallery([("Hyacinth Macaw", 0.72), ("Scarlet Macaw", 0.715), ("Galah", 0.71)])
    # A lower evidence lead than the default, so this real photo's colour match can override.
    ident, search = _identifier(gallery, vote_evidence_lead=0.2)
    events = list(ident.run(coral / "parrot.jpg"))
    assert [type(e) for e in events] == [Classified, FeatureQueries, Retrieved, Decision, Answer]
    cls, fq, retrieved, decision, answer = events
    assert cls.confidence_level == LOW and cls.low_confidence is True
    assert cls.candidates[0].name == "Hyacinth Macaw"  # the gallery alone would be wrong
    queries = [render(q) for q in fq.queries]  # shown as messages, searched as their English
    assert queries[0] == "Hyacinth Macaw / Scarlet Macaw / Galah: differences and identification keys"
    assert fq.queries[1] == fq.visual_description and "red" in render(fq.visual_description)
    assert queries[2].startswith("Hyacinth Macaw: appearance")
    assert search.calls[0] == queries  # one multi-query retrieval
    ids = [h.chunk_id for h in retrieved.hits]
    assert len(ids) == len(set(ids)) <= 6  # top 2 per query, deduplicated
    assert decision.final_name == "Scarlet Macaw" and decision.need_more_info is False
    assert "red" in render_lines(decision.reasoning)
    assert answer.text.startswith("This looks like Scarlet Macaw")
    assert "fit the observed colours clearly better" in render_lines(decision.reasoning)


def test_by_default_the_gallery_pick_stands_unless_the_notes_clearly_disagree(coral):
    # The same near-tie: Scarlet's notes match this photo better, but not by the default lead
    # (colour names are coarse; looser overrides cost accuracy on the parrot benchmarks).
    gallery = FakeGallery([("Hyacinth Macaw", 0.72), ("Scarlet Macaw", 0.715), ("Galah", 0.71)])
    ident, _ = _identifier(gallery)
    result = ident.identify(coral / "parrot.jpg")
    assert result.decision.final_name == "Hyacinth Macaw"
    assert ident.last_ranking[:3] == ["Hyacinth Macaw", "Scarlet Macaw", "Galah"]


def test_a_photo_far_from_every_reference_is_named_only_as_a_guess(coral):
    # p(none of these) between reject_tentative and reject_uncertain: the nearest label, with a
    # request for a better photo.
    gallery = FakeGallery([("Scarlet Macaw", 0.60), ("Hyacinth Macaw", 0.55)])
    ident, _ = _identifier(gallery, reject_tentative=0.5, reject_uncertain=0.999)
    result = ident.identify(coral / "parrot.jpg")
    d = result.decision
    assert d.final_name == "Scarlet Macaw" and d.need_more_info is True
    assert "nearest guess" in render_lines(d.reasoning) and "photo" in render(d.followup)


def test_owl_comes_out_low_and_uncertain_with_a_followup_request(coral):
    clf = get_classifier()
    parrots = clf.embed([coral / "parrot.jpg"])

    class RealGallery:  # the owl against a gallery holding a real macaw photo
        def nearest(self, feature, k=10, scope=None):
            sim = float(parrots[0] @ feature)
            return [GalleryMatch("p", "Scarlet Macaw", "Scarlet Macaw/1.jpg", sim)]

    ident, _ = _identifier(RealGallery())
    result = ident.identify(coral / "owl.jpg")
    assert result.confidence_level == LOW
    assert result.decision.final_name == UNCERTAIN
    assert result.decision.need_more_info is True and "photo" in render(result.decision.followup)
    assert "can't identify" in result.answer


# ------------------------------------------------------------------ the vote
def _profile(**shares: float) -> ColourProfile:
    return ColourProfile(dict(sorted(shares.items(), key=lambda kv: -kv[1])))


def test_vote_prefers_the_candidate_whose_notes_match_the_observed_colours():
    cands = [Candidate("Galah", 0.4, "gallery"), Candidate("Scarlet Macaw", 0.35, "gallery")]
    hits = [_hit(n, t) for n, t in NOTES.items()]
    d = evidence_vote(cands, _profile(red=0.5, blue=0.2, yellow=0.2, white=0.1), hits)
    assert d.final_name == "Scarlet Macaw" and d.need_more_info is False
    d = evidence_vote(cands, _profile(pink=0.6, grey=0.4), hits)
    assert d.final_name == "Galah"


def test_a_tie_the_notes_do_not_separate_names_the_gallery_leader_and_asks_for_a_better_photo():
    twin = "**Colours:** green body, red forehead."
    cands = [Candidate("Alpha Parrot", 0.30, "gallery"), Candidate("Beta Parrot", 0.29, "gallery")]
    hits = [_hit("Alpha Parrot", "Alpha Parrot. " + twin), _hit("Beta Parrot", "Beta Parrot. " + twin)]
    d = evidence_vote(cands, _profile(green=0.8, red=0.2), hits)
    assert d.final_name == "Alpha Parrot" and d.need_more_info is True
    assert "nearly tied" in render_lines(d.reasoning)
    assert "Alpha Parrot" in render(d.followup) and "Beta Parrot" in render(d.followup)


def test_without_notes_the_reference_photos_decide():
    # Absence of evidence is not evidence against: no notes for any candidate.
    cands = [Candidate("Black Headed Caique", 0.62, "gallery"), Candidate("Sun Conure", 0.20, "gallery")]
    d = evidence_vote(cands, _profile(yellow=0.4, green=0.4, grey=0.2), [])
    assert d.final_name == "Black Headed Caique" and d.need_more_info is False
    assert "There are no notes about Black Headed Caique" in render_lines(
        d.reasoning
    ) and "62%" in render_lines(d.reasoning)


def test_a_runner_ups_notes_never_overturn_a_leader_that_has_none():
    # Only the runner-up has notes, and they mention the photo's colours: that is no evidence
    # against the leader, whose notes are simply missing.
    cands = [Candidate("Black Headed Caique", 0.40, "gallery"), Candidate("Kakapo", 0.36, "gallery")]
    hits = [_hit("Kakapo", "# Kakapo (Strigops habroptilus)\n\n**Colours:** moss green, yellow and black.")]
    d = evidence_vote(cands, _profile(yellow=0.5, green=0.4, black=0.1), hits, margin=0.01)
    assert d.final_name == "Black Headed Caique"


def test_a_colour_every_contenders_note_mentions_separates_nothing():
    # Both notes mention green; only the leader's note has the photo's other colour (red).
    cands = [Candidate("Alpha Parrot", 0.40, "gallery"), Candidate("Beta Parrot", 0.38, "gallery")]
    hits = [
        _hit("Alpha Parrot", "Alpha Parrot: green body and a red forehead."),
        _hit("Beta Parrot", "Beta Parrot: green body and a blue crown."),
    ]
    rows = rank_candidates(cands, _profile(green=0.9, red=0.1), hits, evidence_lead=0.05)
    assert [r.candidate.name for r in rows] == ["Alpha Parrot", "Beta Parrot"]
    assert rows[0].separating == {"red"} and rows[1].separating == {"blue"}
    assert rows[0].match > rows[1].match


def test_a_photo_unlike_every_reference_is_not_one_of_your_species_with_guesses_second():
    cands = [Candidate("Black Cockatoo", 0.004, "gallery"), Candidate("Kakapo", 0.003, "gallery")]
    d = evidence_vote(cands, _profile(brown=0.7, white=0.3), [], reject=0.993)
    assert d.final_name == UNCERTAIN and d.need_more_info is True
    assert render_lines(d.reasoning).startswith("Not one of the species in your knowledge base")
    assert d.guesses == ["Black Cockatoo", "Kakapo"] and "Nearest guesses: Black Cockatoo" in render_lines(
        d.reasoning
    )


def test_species_known_only_from_notes_are_offered_when_their_colours_fit():
    cands = [Candidate("Scarlet Macaw", 0.5, "gallery"), Candidate("Galah", 0.2, "gallery")]
    hits = [
        _hit("Scarlet Macaw", NOTES["Scarlet Macaw"]),
        _hit(
            "Kakapo", "# Kakapo (Strigops habroptilus)\n\n**Colours:** moss green with yellow and black bars."
        ),
        _hit("Kea", "# Kea (Nestor notabilis)\n\n**Colours:** olive green; orange under the wings."),
        _hit("Macaw Care", "# Keeping macaws\n\nGreen and yellow toys are popular."),  # not a species note
    ]
    green = _profile(green=0.6, yellow=0.3, black=0.1)
    names = [c.name for c in cands]
    fits = also_possible(notes_only_species(hits, ["Scarlet Macaw", "Galah", *names]), green)
    assert fits == ["Kakapo"]
    # A species with reference photos is never "also possible", however well its notes fit.
    assert also_possible(notes_only_species(hits, ["Kakapo", *names]), green) == []


def test_vote_reads_notes_only_for_contenders_not_for_far_runner_ups():
    # Scarlet Macaw is far behind; the only text mentioning it is another species' note, which
    # must not be presented as its notes.
    cands = [Candidate("Galah", 0.60, "gallery"), Candidate("Scarlet Macaw", 0.05, "gallery")]
    hits = [
        _hit("Galah", NOTES["Galah"]),
        _hit("Catalina Macaw", "Catalina Macaw: a hybrid of Scarlet Macaw and blue-and-yellow macaw."),
    ]
    d = evidence_vote(cands, _profile(pink=0.6, grey=0.4), hits)
    assert d.final_name == "Galah"
    assert "Galah: notes (parrots/galah.md)" in render_lines(d.reasoning) and "catalina" not in render_lines(
        d.reasoning
    )


def test_vote_ignores_negated_colours_in_notes():
    cands = [Candidate("White Cockatoo", 0.5, "gallery"), Candidate("Galah", 0.5, "gallery")]
    hits = [
        _hit("White Cockatoo", "White Cockatoo: white all over, no yellow or pink crest."),
        _hit("Galah", NOTES["Galah"]),
    ]
    d = evidence_vote(cands, _profile(white=0.9, grey=0.1), hits)
    assert d.final_name == "White Cockatoo"


# ------------------------------------------------------------------ the LLM decision
def test_llm_decision_is_used_and_its_schema_allows_only_candidates(coral):
    reply = json.dumps(
        {
            "final_name": "Scarlet Macaw",
            "reasoning": "Red body, yellow wing band [1].",
            "need_more_info": False,
            "followup": "",
        }
    )
    chat = FakeChat(reply)
    ident, _ = _identifier(FakeGallery([("Hyacinth Macaw", 0.72), ("Scarlet Macaw", 0.715)]), chat=chat)
    result = ident.identify(coral / "parrot.jpg", question="What parrot is this?")
    assert result.decision.final_name == "Scarlet Macaw" and result.warnings == []
    enum = chat.schemas[-1]["properties"]["final_name"]["enum"]
    assert "Scarlet Macaw" in enum and "Hyacinth Macaw" in enum and enum[-1] == UNCERTAIN
    assert "macaw" in enum  # the ImageNet candidates are allowed too


def test_an_llm_in_doubt_does_not_hide_what_the_reference_photos_saw(coral):
    reply = json.dumps(
        {
            "final_name": UNCERTAIN,
            "reasoning": "The excerpts do not settle it.",
            "need_more_info": True,
            "followup": "",
        }
    )
    # The gallery clearly prefers Scarlet Macaw (Medium, so the LLM is asked).
    ident, _ = _identifier(FakeGallery([("Scarlet Macaw", 0.72), ("Galah", 0.60)]), chat=FakeChat(reply))
    result = ident.identify(coral / "parrot.jpg")
    assert result.confidence_level == MEDIUM and result.low_confidence
    d = result.decision
    assert d.final_name == UNCERTAIN and d.guesses == ["Scarlet Macaw"]
    assert "The reference photos, though, point to Scarlet Macaw" in render_lines(d.reasoning)


@pytest.mark.parametrize("reply", ["not json at all", '{"final_name": "Kakapo", "reasoning": "x"}'])
def test_llm_garbage_falls_back_to_the_vote(coral, reply):
    ident, _ = _identifier(
        FakeGallery([("Hyacinth Macaw", 0.72), ("Scarlet Macaw", 0.715)]),
        chat=FakeChat(reply),
        vote_evidence_lead=0.2,
    )
    events = list(ident.run(coral / "parrot.jpg"))
    warnings = [e for e in events if isinstance(e, Warning)]
    assert warnings and "evidence vote" in str(warnings[0].message)
    decision = next(e for e in events if isinstance(e, Decision))
    assert decision.final_name == "Scarlet Macaw"


def test_decision_replies_are_read_tolerantly_but_only_name_a_candidate():
    names = ["Scarlet Macaw", "Galah"]
    body = '{"final_name": "Galah", "reasoning": "pink face [1]", "need_more_info": false, "followup": ""}'
    for reply in (body, f"```json\n{body}\n```", f"```json\n{body}", f"Here it is: {body} Done."):
        assert parse_decision(reply, names) == Decision("Galah", ["pink face [1]"], False, "")
    assert parse_decision('{"final_name": "uncertain"}', names) == Decision(UNCERTAIN, [], True, "")
    assert parse_decision('{"final_name": "Kakapo"}', names) is None
    assert parse_decision("no decision [1]", names) is None


def test_unreadable_photo_yields_an_error_event(tmp_path):
    bad = tmp_path / "broken.jpg"
    bad.write_bytes(b"\xff\xd8\xff\xe0 not really a jpeg")
    ident, _ = _identifier(FakeGallery([]))
    events = list(ident.run(bad))
    assert len(events) == 1 and isinstance(events[0], Error)
    # Named once: the reason itself carries no file name (the library's lists name the file already).
    assert (
        str(events[0].message)
        == "cannot read the photo broken.jpg: the image file is truncated (incomplete download?)"
    )


def test_result_json_has_the_cli_contract_keys(coral):
    ident, _ = _identifier(FakeGallery([("Galah", 0.5)]))
    out = ident.identify(coral / "bird.bmp").to_dict()
    for key in (
        "candidates",
        "confidence_level",
        "low_confidence",
        "visual_description",
        "feature_queries",
        "hits",
        "decision",
    ):
        assert key in out
    assert out["confidence_level"] == LOW
    # The design's four keys first; the nearest guesses, notes-only species and Chinese names
    # extend them.
    assert list(out["decision"]) == [
        "final_name",
        "reasoning",
        "need_more_info",
        "followup",
        "guesses",
        "also_possible",
        "zh_names",
        "titles",
    ]
    assert out["candidates"][0] == {
        "name": "Galah",
        "score": out["candidates"][0]["score"],
        "source": "gallery",
        "photo": "Galah/0.jpg",
    }
    assert all(set(c) <= {"name", "score", "source", "zh"} for c in out["candidates"][1:])
    json.dumps(out)  # serialisable as is
    empty = IdentifyResult.from_events([])
    assert empty.confidence_level == LOW and empty.to_dict()["decision"] == {}


def test_assistant_identify_sets_the_conversation_subject(coral):
    from desktop_app.core.ask.assistant import Assistant, Conversation

    class NotesKB:  # no gallery: ImageNet alone names the bird
        config = Config()

        def search_many(self, queries, top_k=None, scope=None):
            return [_hit("macaw", "macaw: large, long-tailed, brightly coloured parrots.")]

        def search(self, query, top_k=None, scope=None):
            return self.search_many([query], top_k, scope)

    assistant = Assistant(NotesKB(), None)
    conv = Conversation()
    events = list(assistant.identify(coral / "parrot.jpg", conversation=conv))
    cls = next(e for e in events if isinstance(e, Classified))
    assert cls.candidates[0] == Candidate("macaw", cls.candidates[0].score, "imagenet", zh="金刚鹦鹉")
    assert cls.confidence_level == HIGH
    assert conv.last_subject == "macaw"
    assert conv.history[-1]["role"] == "assistant" and "macaw" in conv.history[-1]["content"]


def test_every_sentence_the_flow_writes_is_one_catalogue_message_per_line(coral):
    """The window renders the flow's texts in its language: each line is a catalogue message (its
    English the CLI's), except the notes' own sentences quoted in a confident answer."""
    runs = [
        (
            FakeGallery([("Hyacinth Macaw", 0.72), ("Scarlet Macaw", 0.715), ("Galah", 0.71)]),
            {},
            "parrot.jpg",
        ),
        (
            FakeGallery([("Scarlet Macaw", 0.60), ("Hyacinth Macaw", 0.55)]),
            {"reject_tentative": 0.5},
            "parrot.jpg",
        ),
        (FakeGallery([("Scarlet Macaw", 0.40)]), {}, "owl.jpg"),  # not one of yours, with guesses
        (FakeGallery([("Scarlet Macaw", 0.99)]), {}, "parrot.jpg"),  # sure: no retrieval
    ]
    texts = []
    for gallery, cfg, photo in runs:
        ident, _ = _identifier(gallery, **cfg)
        result = ident.identify(coral / photo)
        d = result.decision
        texts += [
            *d.reasoning,
            *([d.followup] if d.followup else []),
            result.visual_description,
            *result.feature_queries,
            *result.warnings,
        ]
        quoted = result.answer_lines[2:3] if result.hits and result.confidence_level == HIGH else []
        assert all(isinstance(q, str) for q in quoted)  # a note's sentences, as written
        texts += [line for line in result.answer_lines if line not in quoted]
        assert result.answer == render_lines(result.answer_lines)  # the CLI's English
    assert len(texts) > 20
    for text in texts:
        assert isinstance(text, Message) and text.code.startswith("identify."), text
    codes = {text.code for text in texts}
    assert {"identify.not_yours", "identify.not_close", "identify.confident", "identify.suggests"} <= codes


# ------------------------------------------------------------------ an unsure card that agrees with itself
def test_a_sharp_photo_is_asked_for_another_view_and_a_blurry_one_for_a_sharper_photo(coral, tmp_path):
    from PIL import Image, ImageFilter

    gallery = FakeGallery([("Scarlet Macaw", 0.60), ("Hyacinth Macaw", 0.55)])
    ident, _ = _identifier(gallery, reject_tentative=0.5, reject_uncertain=0.999)
    sharp = ident.identify(coral / "parrot.jpg").decision
    assert (
        sharp.need_more_info is True
        and "photo" in render(sharp.followup)
        and "sharper" not in render(sharp.followup)
    )
    blurred = tmp_path / "blurred.jpg"
    Image.open(coral / "parrot.jpg").convert("RGB").filter(ImageFilter.GaussianBlur(4)).save(blurred)
    blurry = ident.identify(blurred).decision
    assert blurry.need_more_info is True and "sharper photo" in render(blurry.followup)


def test_the_evidence_is_only_the_notes_of_what_the_card_names(coral):
    gallery = FakeGallery([("Hyacinth Macaw", 0.72), ("Scarlet Macaw", 0.715), ("Galah", 0.71)])
    ident, search = _identifier(gallery, vote_evidence_lead=0.2)
    events = list(ident.run(coral / "parrot.jpg"))
    found = {h.source for q in search.calls for h in FakeSearch()(q, 6, None)}
    retrieved = next(e for e in events if isinstance(e, Retrieved))
    answer = next(e for e in events if isinstance(e, Answer))
    assert "parrots/galah.md" in found  # the queries found the galah's note ...
    assert [h.source for h in retrieved.hits] == ["parrots/scarlet-macaw.md"]  # ... the card names the macaw
    assert [c.source for c in answer.citations] == ["parrots/scarlet-macaw.md"]


def test_an_unsure_decision_whose_notes_offer_a_species_does_not_say_not_one_of_yours(coral):
    frogmouth_note = "# Tawny Frogmouth (Podargus strigoides)\n\n**Colours:** grey and brown body, green-tinged; orange eyes."

    def search(queries, top_k, scope):
        return [_hit("Tawny Frogmouth", frogmouth_note), _hit("Galah", NOTES["Galah"])]

    clf = get_classifier()
    parrots = clf.embed([coral / "parrot.jpg"])

    class RealGallery:  # the owl against a gallery holding only a real macaw photo
        def nearest(self, feature, k=10, scope=None):
            return [GalleryMatch("p", "Scarlet Macaw", "Scarlet Macaw/1.jpg", float(parrots[0] @ feature))]

    ident, _ = _identifier(RealGallery())
    ident._search = search
    result = ident.identify(coral / "owl.jpg")
    d = result.decision
    assert d.final_name == UNCERTAIN and d.also_possible == ["Tawny Frogmouth"]
    assert "Not one of" not in render_lines(
        d.reasoning
    ) and "your notes describe a species that may fit" in render_lines(d.reasoning)
    assert "Also possible, known only from your notes" in result.answer and "Tawny Frogmouth" in result.answer
    assert [h.source for h in result.hits] == ["parrots/tawny-frogmouth.md"]  # not the galah's note


def test_without_reference_photos_the_classifier_not_the_photos_is_said_to_point():
    cands = [Candidate("kite", 0.08, "imagenet"), Candidate("macaw", 0.07, "imagenet")]
    d = evidence_vote(cands, _profile(red=0.6, pink=0.4), [])
    assert "The image classifier points to kite (8%; next macaw 7%)." in render_lines(d.reasoning)
    assert "reference photos" not in render_lines(
        d.reasoning
    ) and "image classifier's guess stands" in render_lines(d.reasoning)

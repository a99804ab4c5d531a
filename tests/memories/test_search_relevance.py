"""Search a person can trust: the relevance floor, query-aware keyword scores, titles as a field,
questions below answers, and deep links to the matched chunk."""

from __future__ import annotations

import json

import pytest
from django.core.management import call_command

from memories import embedding
from memories.models import ChunkTerm, MemoryChunk
from memories.search import (
    NO_WORDS,
    ONLY_COMMON_WORDS,
    SearchError,
    SearchFilters,
    hybrid_search,
    lexical,
    lexical_score,
    result_url,
)
from memories.search.questions import asks
from memories.selectors import memory_related
from memories.services import chat_message_send, memory_update
from tests.factories import make_memory

pytestmark = pytest.mark.django_db

NOTES = {
    "Spaghetti carbonara": "Recipe for two: spaghetti, guanciale, egg yolks, pecorino and black pepper. No cream.",
    "Dentist appointment": "Dr Patel at Smile Clinic, Tuesday at 15:30. Bring the insurance card.",
    "Postgres vacuum tuning": "Autovacuum falls behind on the events table; lower the scale factor to 0.02.",
    "Mortgage comparison": "Bank A has a fixed rate of 3.1% for ten years; Bank B a variable rate from 2.6%.",
    "Kubernetes runbook": "When a pod keeps restarting, read kubectl describe and the previous container logs.",
}


@pytest.fixture
def notes(user):
    return {title: make_memory(user, title=title, content=text) for title, text in NOTES.items()}


def titles(response):
    return [r.title for r in response.results]


# --- The relevance floor ---------------------------------------------------------------------


def test_a_query_that_matches_nothing_returns_nothing_but_says_what_is_hidden(user, notes):
    response = hybrid_search(user.pk, "xyzzy plugh")
    assert response.results == [] and response.weaker_count > 0 and response.reason == ""
    everything = hybrid_search(user.pk, "xyzzy plugh", min_score=0)
    assert len(everything.results) == len(NOTES), "minScore=0 returns every candidate, as before"


def test_the_floor_keeps_the_answer(user, notes):
    assert titles(hybrid_search(user.pk, "carbonara"))[0] == "Spaghetti carbonara"
    assert titles(hybrid_search(user.pk, "how do I fix a pod that keeps crashing"))[0] == "Kubernetes runbook"


def test_a_higher_min_score_returns_only_what_reaches_it(user, notes):
    response = hybrid_search(user.pk, "carbonara", min_score=0.99)
    assert response.results == [] and response.min_score == 0.99
    assert all(r.hybrid_score >= 0.2 for r in hybrid_search(user.pk, "carbonara pepper", min_score=0.2).results)


@pytest.mark.parametrize(
    ("query", "answer"),
    [("tooth doctor", "Dentist appointment"), ("that Roman pasta dish", "Spaghetti carbonara")],
)
def test_a_paraphrase_that_shares_no_word_is_a_good_match(user, notes, query, answer):
    response = hybrid_search(user.pk, query)
    assert titles(response)[:1] == [answer]
    first = response.results[0]
    assert first.parts["idfShare"] == 0 and first.good_match, "found by meaning alone"


@pytest.mark.parametrize(
    "query",
    [
        "Does vitamin D supplementation reduce fracture risk in older adults?",
        "What did the committee conclude about the 2019 budget report?",
        "tax rules in Brazil",
        "flights to New York in December",
    ],
)
def test_a_question_about_something_never_stored_shows_no_good_match(user, notes, query):
    response = hybrid_search(user.pk, query)
    assert response.results == [] and response.weaker_count > 0


@pytest.mark.parametrize("min_score", [-0.1, 1.01, 2, True, "0.5"])
def test_min_score_outside_0_1_is_refused(user, min_score):
    with pytest.raises(SearchError):
        hybrid_search(user.pk, "anything", min_score=min_score)


@pytest.mark.parametrize(
    ("query", "reason"), [("the what is it", ONLY_COMMON_WORDS), ("??? !!! -- ;", NO_WORDS), ("🎉🎉", NO_WORDS)]
)
def test_a_query_of_only_common_words_or_punctuation_is_empty_with_a_reason(user, notes, query, reason):
    response = hybrid_search(user.pk, query, min_score=0)
    assert response.results == [] and response.reason == reason


@pytest.mark.parametrize(
    "query", ["¿Dónde está la receta de carbonara?", "東京 ラーメン", "carbonara 🍝", "carbonara " * 199]
)
def test_other_languages_emoji_and_long_queries_still_answer(user, notes, query):
    assert isinstance(hybrid_search(user.pk, query[:2000]).results, list)


# --- Keyword scores follow how much of the query matched ---------------------------------------


def test_lexical_score_is_scaled_by_the_share_of_the_query_idf_matched():
    # The only candidate that matches one of five equally rare words does not score 1.0.
    assert lexical_score(2.0, 2.0, matched_idf=2.0, total_idf=10.0) == pytest.approx(0.2**0.5)
    assert lexical_score(2.0, 2.0, matched_idf=2.0, total_idf=10.0, form="coverage") == pytest.approx(0.2)
    assert lexical_score(9.0, 9.0, matched_idf=10.0, total_idf=10.0) == pytest.approx(1.0)
    assert lexical_score(0.0, 9.0, matched_idf=0.0, total_idf=10.0) == 0.0
    assert lexical_score(2.0, 2.0, 2.0, 10.0, form="relative") == 1.0  # BM25F / best alone, for comparison


def test_one_stray_word_does_not_make_a_strong_keyword_match(user, notes):
    mortgage = next(
        r
        for r in hybrid_search(user.pk, "how do I fix a pod that keeps crashing", min_score=0).results
        if r.title == "Mortgage comparison"
    )  # "fixed" shares a stem with "fix"
    assert mortgage.parts["lexical"] < 0.5 and not mortgage.good_match


# --- Titles count -----------------------------------------------------------------------------


def test_a_title_word_alone_finds_its_memory_first(user, notes):
    # The body of the Postgres note never says "postgres".
    first = hybrid_search(user.pk, "postgres").results[0]
    assert first.title == "Postgres vacuum tuning" and first.parts["lexical"] == 1.0


def test_the_title_counts_once_with_the_first_chunk_and_not_when_the_text_opens_with_it(user):
    long_text = " ".join(f"Autovacuum note {i}: lower the scale factor on busy tables." for i in range(60))
    memory = make_memory(user, title="Postgres vacuum tuning", content=long_text)
    title_lexemes = {"postgr", "vacuum", "tune"}
    by_position: dict[int, set[str]] = {}
    for position, lexeme in ChunkTerm.objects.filter(chunk__memory=memory).values_list("chunk__position", "lexeme"):
        by_position.setdefault(position, set()).add(lexeme)
    assert len(by_position) > 1 and title_lexemes <= by_position[0]
    assert all(not (title_lexemes & lexemes) for position, lexemes in by_position.items() if position > 0)
    # A text that already opens with its title is not given the title again (as in its embedding).
    repeated = make_memory(user, title="Postgres vacuum tuning", content="Postgres vacuum tuning\n\nAutovacuum lags.")
    assert ChunkTerm.objects.get(chunk__memory=repeated, lexeme="postgr").tf == 1  # the text's one mention
    titled = make_memory(user, title="Postgres vacuum tuning", content="Autovacuum lags.")
    assert ChunkTerm.objects.get(chunk__memory=titled, lexeme="postgr").tf == lexical.TITLE_WEIGHT


@pytest.mark.parametrize(
    ("title", "text", "embedded"),
    [
        ("Postgres vacuum tuning", "Autovacuum falls behind.", "Postgres vacuum tuning — Autovacuum falls behind."),
        ("Remind me what I need…", "Remind me what I need for carbonara", "Remind me what I need for carbonara"),
        ("", "Just text.", "Just text."),
        ("Notes", "notes from the meeting", "notes from the meeting"),
    ],
)
def test_a_chunk_is_embedded_with_its_title_as_context_once(title, text, embedded):
    assert embedding.chunk_embedding_text(title, text) == embedded


def test_each_chunk_records_the_hash_of_what_it_was_embedded_from(user):
    memory = make_memory(user, title="Postgres vacuum tuning", content="Autovacuum falls behind.")
    chunk = MemoryChunk.objects.get(memory=memory)
    assert chunk.embedding_key == embedding.embedding_key("Postgres vacuum tuning — Autovacuum falls behind.")


def test_a_new_title_re_embeds_and_re_indexes_the_chunks(user, notes):
    memory = notes["Dentist appointment"]
    before = MemoryChunk.objects.get(memory=memory).embedding_key
    memory_update(memory=memory, title="Orthodontist visit")
    assert MemoryChunk.objects.get(memory=memory).embedding_key != before
    assert titles(hybrid_search(user.pk, "orthodontist"))[0] == "Orthodontist visit"
    stale = [r for r in hybrid_search(user.pk, "dentist", min_score=0).results if r.memory_id == memory.pk]
    assert stale and stale[0].parts["bm25"] == 0, "the old title is no longer in the lexical index"


def test_reembed_updates_stale_chunks_once_and_resumes(user, notes):
    MemoryChunk.objects.filter(memory=notes["Postgres vacuum tuning"]).update(embedding_key="")
    first, second = [], []
    call_command("reembed", stdout=_Lines(first), stderr=_Lines([]))
    call_command("reembed", stdout=_Lines(second), stderr=_Lines([]))
    assert json.loads(first[-1])["reembedded"] == 1 and json.loads(second[-1])["reembedded"] == 0


class _Lines:
    def __init__(self, lines):
        self.lines = lines

    def write(self, text):
        self.lines.extend(line for line in text.splitlines() if line.strip())

    def flush(self):
        pass


# --- Questions below answers -------------------------------------------------------------------


@pytest.mark.parametrize(
    ("text", "kind"),
    [
        ("Remind me what I need for carbonara", "question"),
        ("When is my dentist appointment", "question"),
        ("Did I pay the rent?", "question"),
        ("I booked the dentist. Can you remind me? 🙏", "question"),
        ("Is there a spare key at mum's", "question"),
        ("Dentist on Tuesday at 3pm with Dr Patel.", ""),
        ("Do laundry on Sunday", ""),
        ("The party is at 8? No, at 9.", "question"),  # a question in a short message asks, wherever it is
        ("What a lovely day!", ""),
        ("Remind me where I parked", "question"),
        ("I forgot when the bins go out", "question"),
        ("Remind me to call Sam at 5.", ""),  # a reminder to keep, not a question
        ("I forgot to pay the gas bill.", ""),
        ("I forgot my umbrella at the office", ""),
        ("Where I parked: level 3, bay C42.", ""),  # a labelled note
        ("How to bake bread: mix flour, water and salt.", ""),
        ("What time: 3pm or 4pm?", "question"),
    ],
)
def test_a_message_that_asks_something_is_a_question(text, kind):
    assert asks(text) is (kind == "question")


def test_chat_questions_are_marked_and_rank_below_the_note_they_ask_about(user, notes):
    _, question = chat_message_send(owner=user, content="Remind me what I need for carbonara")
    _, statement = chat_message_send(owner=user, content="Bought guanciale for the carbonara tonight.")
    assert question.metadata["kind"] == "question" and "kind" not in statement.metadata
    ranked = hybrid_search(user.pk, "carbonara", group_by="memory").results
    order = [r.memory_id for r in ranked]
    assert order.index(notes["Spaghetti carbonara"].pk) < order.index(question.pk)
    assert all(not r.is_question for r in ranked[: order.index(question.pk)])


def test_a_question_with_no_note_to_answer_it_is_only_a_weaker_match(user, notes):
    _, question = chat_message_send(owner=user, content="What size were my running shoes again?")
    assert question.metadata["kind"] == "question"
    response = hybrid_search(user.pk, "running shoes size", group_by="memory")
    assert response.results == [] and response.weaker_count >= 1, "a question is not an answer"
    assert response.weaker_questions == 1, "and the page can say that only a question matched"
    everything = hybrid_search(user.pk, "running shoes size", group_by="memory", min_score=0.0).results
    assert question.pk in [r.memory_id for r in everything if not r.good_match]
    chat_only = hybrid_search(
        user.pk, "running shoes size", group_by="memory", filters=SearchFilters(sources=("chat",))
    )
    assert [r.memory_id for r in chat_only.results] == [question.pk], "searching what was said keeps it"
    make_memory(user, title="Running shoes", content="Pegasus 40, size 44.5 (UK 9.5); the wide fit pinches less.")
    beside = [r.memory_id for r in hybrid_search(user.pk, "running shoes size", group_by="memory").results]
    assert beside[-1] == question.pk and len(beside) == 2, "beside a note that answers it, it is shown after it"


def test_chat_related_memories_never_show_the_message_and_list_questions_last(user, notes):
    _, earlier = chat_message_send(owner=user, content="What do I put in carbonara?")
    _, message = chat_message_send(owner=user, content="Remind me what I need for carbonara")
    related = memory_related(user=user, memory=message)
    ids = [item["memory"].pk for item in related]
    assert message.pk not in ids and ids[0] == notes["Spaghetti carbonara"].pk
    kinds = [item["kind"] for item in related]
    assert kinds == sorted(kinds), "notes first, then questions"
    assert "Dentist appointment" not in [item["memory"].title for item in related], "the floor applies"
    assert earlier.pk in ids or len(related) >= 1


# --- Deep links --------------------------------------------------------------------------------


def test_results_carry_the_chunk_position_and_link_to_its_anchor(user):
    long = "\n\n".join(f"Paragraph {i}: " + ("filler words about nothing much. " * 40) for i in range(4))
    memory = make_memory(user, title="Long log", content=long + "\n\nThe zorblax invoice is at the very end.")
    result = hybrid_search(user.pk, "zorblax invoice").results[0]
    last = MemoryChunk.objects.filter(memory=memory).order_by("-position").first()
    assert result.chunk_id == last.pk and result.chunk_index == last.position > 0
    assert result.url == f"/memories/{memory.pk}/open?chunk={last.position}"
    assert result_url(memory.pk, 0) == f"/memories/{memory.pk}/open?chunk=0"


# --- API and page ------------------------------------------------------------------------------


def test_the_api_applies_the_floor_and_min_score_overrides_it(api, notes):
    body = api.post("/api/v1/search", {"query": "xyzzy plugh"}).json()
    assert body["results"] == [] and body["weakerCount"] > 0 and body["minScore"] is None
    assert body["floor"].startswith("vectorScore ≥ 0.34")
    body = api.post("/api/v1/search", {"query": "xyzzy plugh", "minScore": 0}).json()
    assert len(body["results"]) == len(NOTES) and body["minScore"] == 0 and body["floor"] == "hybridScore ≥ 0.00"
    assert not any(r["goodMatch"] for r in body["results"]), "shown on request, still not good matches"
    got = api.get("/api/v1/search", {"q": "postgres"}).json()["results"][0]
    assert got["title"] == "Postgres vacuum tuning" and got["chunkIndex"] == 0 and got["url"].endswith("/open?chunk=0")


@pytest.mark.parametrize("value", [-0.01, 1.5, "high"])
def test_the_api_refuses_min_score_outside_0_1(api, value):
    assert api.post("/api/v1/search", {"query": "ok", "minScore": value}).status_code == 422
    assert api.get("/api/v1/search", {"q": "ok", "minScore": value}).status_code == 422


def test_the_api_explains_a_query_of_only_common_words(api, notes):
    body = api.post("/api/v1/search", {"query": "what is the"}).json()
    assert body["results"] == [] and "common words" in body["reason"]


def test_the_search_page_says_no_memories_match_and_offers_weaker_matches(logged_in_client, notes):
    html = logged_in_client.get("/search/", {"q": "xyzzy plugh"}).content.decode()
    assert "No memories match" in html and "Show weaker matches" in html and "weaker=1" in html
    weaker = logged_in_client.get("/search/", {"q": "xyzzy plugh", "weaker": "1"}).content.decode()
    assert weaker.count('<a class="title"') == len(NOTES)
    found = logged_in_client.get("/search/", {"q": "postgres"}).content.decode()
    assert '/open?chunk=0"' in found
    empty = logged_in_client.get("/search/", {"q": "the"}).content.decode()
    assert "Nothing to search for" in empty


def test_the_search_page_says_when_only_questions_match(logged_in_client, user, notes):
    """A walk-through searched "carbonara" with only a chat question about it stored, and the page said
    nothing matched."""
    chat_message_send(owner=user, content="What size were my running shoes again?")
    html = logged_in_client.get("/search/", {"q": "running shoes size"}).content.decode()
    assert "Only your questions match" in html and "1 chat message asking about it is among" in html
    assert "No memories match" not in html
    body = logged_in_client.post(
        "/api/v1/search", {"query": "running shoes size"}, content_type="application/json"
    ).json()
    assert body["results"] == [] and body["weakerQuestions"] == 1

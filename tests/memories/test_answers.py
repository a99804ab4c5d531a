"""Extractive chat answers: the best sentences from the person's own memories, cited, never a stored question."""

from __future__ import annotations

import pytest

from memories.search.answers import (
    answer_question,
    content_words,
    is_question,
    split_sentences,
)
from memories.services import chat_message_send
from tests.factories import make_memory

pytestmark = pytest.mark.django_db


def test_sentences_are_split_by_spacy_and_by_blank_lines():
    text = "Dr. Smith arrived at 9 a.m. on Monday. He left early.\n\nBudget: 18,000 euros"
    assert split_sentences(text) == ["Dr. Smith arrived at 9 a.m. on Monday.", "He left early.", "Budget: 18,000 euros"]


def test_markdown_headings_are_never_sentences():
    text = "# Mortgage comparison\n\nBank A offers a fixed rate of 3.4%.\n## Decision\nWe took Bank A."
    assert split_sentences(text) == ["Bank A offers a fixed rate of 3.4%.", "We took Bank A."]


@pytest.mark.parametrize(
    ("sentence", "question"),
    [
        ("Where is the offsite?", True),
        ("where is the offsite", True),
        ("How much does it cost", True),
        ("The offsite is in Lisbon.", False),
        ("Whereas the budget is fixed.", False),
    ],
)
def test_questions_are_recognised(sentence, question):
    assert is_question(sentence) is question


def test_content_words_skip_stop_words_and_meet_inflections():
    assert content_words("Where will the offsite be planned?") & content_words("We planned the offsite") == {
        "offsi",
        "plann",
    }


def test_the_answer_quotes_the_sentence_that_answers_and_cites_memory_and_chunk(user):
    offsite = make_memory(
        user,
        title="Offsite",
        content="The product team offsite will take place in Lisbon in March. "
        "Alice books the hotel. We will review the roadmap on day one.",
    )
    make_memory(user, title="Soup", content="Soak the red lentils for one hour before cooking.")
    answer = answer_question(user=user, question="Where will the product team offsite take place?")
    assert 1 <= len(answer.sentences) <= 3
    best = answer.sentences[0]
    assert "Lisbon" in best.text
    assert (best.memory_id, best.memory_title, best.chunk_position) == (offsite.pk, "Offsite", 0)


def test_a_stored_chat_question_is_never_cited(user):
    make_memory(user, title="Offsite", content="The product team offsite will take place in Lisbon in March.")
    session, first = chat_message_send(owner=user, content="Where will the product team offsite take place?")
    _, second = chat_message_send(
        owner=user, session=session, content="Where will the product team offsite take place?"
    )
    answer = answer_question(user=user, question=second.content, exclude_memory_ids=[second.pk])
    assert answer.sentences
    assert all(s.memory_id not in (first.pk, second.pk) for s in answer.sentences)
    assert all(not s.text.endswith("?") for s in answer.sentences)


def test_nothing_relevant_gives_no_answer(user):
    make_memory(user, content="Soak the red lentils for one hour before cooking.")
    assert answer_question(user=user, question="Which tyres are on the car?").sentences == []


def test_other_users_memories_are_never_cited(user, other_user):
    make_memory(other_user, content="The product team offsite will take place in Lisbon in March.")
    assert answer_question(user=user, question="Where is the product team offsite?").sentences == []


def test_the_chat_page_leads_with_the_answer_then_related_memories(logged_in_client, user):
    offsite = make_memory(user, title="Offsite", content="The product team offsite will take place in Lisbon in March.")
    response = logged_in_client.post("/chat/", {"content": "Where is the product team offsite?"}, follow=True)
    html = response.content.decode()
    assert html.index("From your memories") < html.index("Related memories")
    assert f"/memories/{offsite.pk}/?chunk=0#chunk-0" in html
    assert "Lisbon" in html

"""Chat: each message is a memory (source=chat) and the reply lists related memories; sessions are private."""

from __future__ import annotations

import pytest

from memories import services
from memories.models import ChatSession, Memory
from tests.factories import make_memory

pytestmark = pytest.mark.django_db


def test_a_message_becomes_a_chat_memory_with_session_metadata(user):
    session, memory = services.chat_message_send(
        owner=user, content="We decided to move the launch to March because the vendor contract slipped."
    )
    assert memory.source == "chat" and memory.title == "We decided to move the launch to March…"
    assert memory.metadata["sessionId"] == session.pk and memory.metadata["messageIndex"] == 0
    assert memory.metadata["userId"] == user.pk and memory.metadata["timestamp"]
    assert "chat" in memory.tags
    session2, second = services.chat_message_send(owner=user, content="And QA starts in February.", session=session)
    assert session2.pk == session.pk and second.metadata["messageIndex"] == 1
    assert ChatSession.objects.get(pk=session.pk).message_count == 2


@pytest.mark.parametrize("content", ["", "   \n"])
def test_an_empty_message_is_refused(user, content):
    with pytest.raises(services.MemoryInputError):
        services.chat_message_send(owner=user, content=content)
    assert not Memory.objects.exists() and not ChatSession.objects.exists()


def test_a_message_over_the_limit_is_refused(user, settings):
    settings.KYBERNESIS_MAX_CHAT_MESSAGE_CHARS = 50
    with pytest.raises(services.MemoryTooLargeError):
        services.chat_message_send(owner=user, content="x" * 51)
    assert not Memory.objects.exists()


@pytest.mark.real_embedder  # "related" is by meaning: the fake embedder only matches shared words
def test_the_api_replies_with_related_memories(api, user, other_user):
    make_memory(user, content="The marketing budget for the product launch is 50,000 euros.", title="Budget")
    make_memory(user, content="Recipe: bake the sourdough bread at 230 degrees for 40 minutes.", title="Bread")
    make_memory(other_user, content="Secret launch budget of another user.", title="Not yours")
    response = api.post("/api/v1/chat/messages", {"content": "How much money do we have for the launch?"})
    assert response.status_code == 201, response.content
    body = response.json()
    assert body["memory"]["source"] == "chat" and body["memory"]["content"].startswith("How much money")
    titles = [item["title"] for item in body["related"]]
    assert titles == ["Budget"], "unrelated bread and another user's memory are left out"
    assert all(0 <= item["score"] <= 1 for item in body["related"])
    [lead, *_] = body["answer"]
    assert lead["text"] == "The marketing budget for the product launch is 50,000 euros."
    assert lead["memoryTitle"] == "Budget" and lead["chunkIndex"] == 0
    assert lead["url"] == f"/memories/{lead['memoryId']}/open?chunk=0"
    assert all("Secret" not in s["text"] for s in body["answer"]), "another user's memory is never cited"


def test_the_api_answer_is_empty_when_nothing_answers(api, user):
    make_memory(user, content="Recipe: bake the sourdough bread at 230 degrees for 40 minutes.", title="Bread")
    body = api.post("/api/v1/chat/messages", {"content": "What is the capital of Peru?"}).json()
    assert body["answer"] == []


def test_a_note_is_kept_and_not_answered_while_a_question_about_it_is(api, user, logged_in_client):
    """A message that asks nothing gets no answer quoted at it, only its related memories: "Parked on
    level 3" is not a question that the car-park note could answer."""
    make_memory(user, content="The car park at the station closes at midnight on weekdays.", title="Car park")
    note = api.post("/api/v1/chat/messages", {"content": "Parked the car on level 3 of the car park, bay C42."})
    body = note.json()
    assert note.status_code == 201 and body["asked"] is False and body["answer"] == []
    question = api.post(
        "/api/v1/chat/messages", {"sessionId": body["sessionId"], "content": "When does the car park close?"}
    ).json()
    assert question["asked"] is True
    assert question["answer"][0]["text"] == "The car park at the station closes at midnight on weekdays."

    page = logged_in_client.get("/chat/", {"session": body["sessionId"]}).content.decode()
    assert page.count("Noted: kept as a memory.") == 1
    assert "No sentence in your memories answers this directly." not in page
    assert "From your memories:" in page


def test_sessions_are_listed_and_reopened(api):
    first = api.post("/api/v1/chat/messages", {"content": "First message"}).json()
    api.post("/api/v1/chat/messages", {"sessionId": first["sessionId"], "content": "Second message"})
    api.post("/api/v1/chat/messages", {"content": "Another session"})
    sessions = api.get("/api/v1/chat/sessions").json()["items"]
    assert [s["messageCount"] for s in sessions] == [1, 2]
    detail = api.get(f"/api/v1/chat/sessions/{first['sessionId']}").json()
    assert [m["content"] for m in detail["messages"]] == ["First message", "Second message"]


def test_another_users_session_is_404(api, other_api):
    theirs = other_api.post("/api/v1/chat/messages", {"content": "private"}).json()["sessionId"]
    assert api.get(f"/api/v1/chat/sessions/{theirs}").status_code == 404
    assert api.post("/api/v1/chat/messages", {"sessionId": theirs, "content": "intrude"}).status_code == 404
    assert api.get("/api/v1/chat/sessions").json()["items"] == []


@pytest.mark.parametrize(
    ("body", "status"),
    [
        ({"content": ""}, 422),
        ({"content": "  "}, 422),
        ({}, 422),
        ({"content": 5}, 422),
        ({"content": "x" * 20_001}, 413),
    ],
)
def test_bad_chat_messages_get_clear_errors(api, body, status):
    response = api.post("/api/v1/chat/messages", body)
    assert response.status_code == status and response.json()["detail"]
    assert not Memory.objects.exists()


def test_the_chat_page_sends_and_reopens_sessions(logged_in_client, user):
    page = logged_in_client.get("/chat/")
    assert page.status_code == 200 and b"New chat" in page.content
    response = logged_in_client.post("/chat/", {"content": "Remember the dentist on Friday."})
    session = ChatSession.objects.get(owner=user)
    assert response.status_code == 302 and response["Location"] == f"/chat/?session={session.pk}"
    html = logged_in_client.get(response["Location"]).content.decode()
    assert "Remember the dentist on Friday." in html and "Saved as memory" in html


def test_the_chat_page_answers_htmx_with_the_panel_and_shows_errors(logged_in_client, user):
    ok = logged_in_client.post("/chat/", {"content": "Hello there"}, HTTP_HX_REQUEST="true")
    assert ok.status_code == 200 and 'id="chat-layout"' in ok.content.decode() and "<html" not in ok.content.decode()
    assert ok["HX-Push-Url"].startswith("/chat/?session=")
    bad = logged_in_client.post("/chat/", {"content": "   "}, HTTP_HX_REQUEST="true")
    assert bad.status_code == 422 and "The message is empty" in bad.content.decode()


def test_another_users_chat_page_is_404(logged_in_client, other_user):
    session, _ = services.chat_message_send(owner=other_user, content="private")
    assert logged_in_client.get(f"/chat/?session={session.pk}").status_code == 404
    assert logged_in_client.get("/chat/?session=abc").status_code == 404


def test_chat_messages_stored_before_they_were_classified_are_marked_by_the_migration(user):
    import importlib

    from django.apps import apps

    migration = importlib.import_module("memories.migrations.0025_memory_kind_chosen")
    session, question = services.chat_message_send(owner=user, content="Where did I park the car?")
    _, note = services.chat_message_send(owner=user, content="Parked on level 3, bay C42.", session=session)
    german = services.memory_create(owner=user, title=None, content="Wo habe ich das Auto geparkt", source="chat")
    chosen = services.memory_create(owner=user, title=None, content="Is the shop open?", source="chat")
    Memory.objects.filter(pk=question.pk).update(metadata={"sessionId": session.pk})  # as stored before
    Memory.objects.filter(pk=german.pk).update(metadata={})  # the API never classified one
    Memory.objects.filter(pk=note.pk).update(metadata={"sessionId": session.pk, "kind": "question"})  # an old mistake
    Memory.objects.filter(pk=chosen.pk).update(metadata={"kind": "note"}, kind_chosen_at=None)
    upload = make_memory(user, content="Where is the spare key? Under the blue pot.", title="Key")

    migration.classify_chat_memories(apps, None)
    migration.classify_chat_memories(apps, None)  # a second run changes nothing

    assert Memory.objects.get(pk=question.pk).metadata == {"sessionId": session.pk, "kind": "question"}
    assert Memory.objects.get(pk=german.pk).metadata == {"kind": "question"}
    assert Memory.objects.get(pk=note.pk).metadata == {"sessionId": session.pk}, "the rule's note has no kind"
    kept = Memory.objects.get(pk=chosen.pk)
    assert kept.metadata == {"kind": "note"} and kept.kind_chosen_at is not None, "a stored note is a choice"
    assert "kind" not in Memory.objects.get(pk=upload.pk).metadata, "only chat messages are classified"


def test_chat_memories_are_classified_again_by_the_revised_rule_keeping_chosen_kinds(user):
    import importlib

    from django.apps import apps
    from django.db import connection

    from memories.models import MemoryVersion

    migration = importlib.import_module("memories.migrations.0030_chat_kind_says_more_than_asks")
    told = "Finally finished the pottery course today and made a bowl for my mum. Have you tried it?"
    says = services.memory_create(owner=user, title=None, content=told, source="chat")
    asked = services.memory_create(owner=user, title=None, content="Where did I park the car?", source="chat")
    chosen = services.memory_create(owner=user, title=None, content=told, source="chat", kind="question")
    Memory.objects.filter(pk=says.pk).update(metadata={"sessionId": 4, "kind": "question"})  # the former rule's
    versions = MemoryVersion.objects.filter(pgh_obj_id=says.pk).count()

    with connection.schema_editor() as editor:
        migration.reclassify_chat_memories(apps, editor)
    migration.reclassify_chat_memories(apps, None)  # a second run changes nothing

    assert Memory.objects.get(pk=says.pk).metadata == {"sessionId": 4}, "the rule's note has no kind"
    assert Memory.objects.get(pk=asked.pk).metadata == {"kind": "question"}
    assert Memory.objects.get(pk=chosen.pk).metadata == {"kind": "question"}, "a chosen kind is kept"
    latest = MemoryVersion.objects.filter(pgh_obj_id=says.pk).order_by("-version").first()
    assert MemoryVersion.objects.filter(pgh_obj_id=says.pk).count() == versions + 1
    assert latest.pgh_context["kind"] == "system" and "question rule" in latest.pgh_context["label"]


def test_a_labelled_note_and_a_reminder_are_kept_as_notes_and_the_note_answers_later(api):
    """ "Where I parked: level 3" opens with a question word but labels what follows; "Remind me to
    ..." is a reminder to keep. Neither is answered, and the note is quoted when asked about."""
    note = api.post("/api/v1/chat/messages", {"content": "Where I parked: level 3 of the station car park, bay C42."})
    reminder = api.post("/api/v1/chat/messages", {"content": "Remind me to renew the parking permit in May."})
    assert note.json()["asked"] is False and reminder.json()["asked"] is False
    asked = api.post("/api/v1/chat/messages", {"content": "Where did I park the car?"}).json()
    assert asked["asked"] is True
    assert asked["answer"][0]["text"] == "Where I parked: level 3 of the station car park, bay C42."


def test_a_session_shown_again_replies_as_it_did_when_each_message_was_sent(api, logged_in_client):
    """Replies are worked out again when a session is shown: a message's reply leaves out the
    messages sent after it, so the note's related memories never list the question that followed,
    and the earlier question is not answered by the later note."""
    first = api.post("/api/v1/chat/messages", {"content": "Where is the spare bike key kept?"}).json()
    session = first["sessionId"]
    api.post("/api/v1/chat/messages", {"sessionId": session, "content": "The spare bike key is kept in the blue tin."})
    page = logged_in_client.get("/chat/", {"session": session}).content.decode()
    first_reply = page.split('class="chat-message reply"')[1].split('class="chat-message mine"')[0]
    assert "blue tin" not in first_reply, "the first reply predates the note"
    assert "No sentence in your memories answers this directly." in first_reply or "Nothing related" in first_reply
    asked_again = api.post("/api/v1/chat/messages", {"sessionId": session, "content": "Where is the spare bike key?"})
    assert asked_again.json()["answer"][0]["text"] == "The spare bike key is kept in the blue tin."

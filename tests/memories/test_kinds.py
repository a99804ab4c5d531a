"""Every chat memory is classified by one rule, whatever the door (page, API, batch, import), and a
person's "this is a note" or "this asks something" wins and is kept over later edits."""

from __future__ import annotations

import json

import pytest

from memories import services
from memories.models import Memory, content_hash
from memories.search import answers, hybrid_search
from memories.search.questions import asks, wants_answer
from portability import services as portability
from tests.factories import make_memory

pytestmark = pytest.mark.django_db


# --- The rule ---------------------------------------------------------------------------------------

ASKS = [
    # English, as before
    "Remind me what I need for the carbonara?",
    "when is the dentist?",
    "What pace should my long runs be at?",
    "how many eggs for carbonara",
    "Where did I park? It was the mall, level 3 or so.",
    'Did she say "why?"',
    "Why?",
    "Sounds great! Can you help me pick out the paint? Let's plan a session soon.",
    "Hey, where did we put the camping stove",
    "I'm out of coffee. Where did I buy the Ethiopian beans?",  # a short lead-in to the question
    # German
    "Wann ist der Zahnarzttermin",
    "Wo habe ich das Auto geparkt?",
    "Hast du den Schlüssel gesehen",
    "Brauche ich morgen einen Regenschirm",
    "Gibt es noch Milch",
    "Was kostet die Miete",
    "Ich habe vergessen, wo ich geparkt habe",
    "Bitte suche nach dem Rezept für Carbonara",
    "Erinnere mich an den Zahnarzttermin",
    # French
    "Quand est le rendez-vous chez le dentiste",
    "Où est la clé de la cave",
    "As-tu vu mes clés",
    "Est-ce que j'ai payé le loyer",
    "Rappelle-moi ce qu'il faut pour la carbonara",
    "bonjour comment vas tu ce soir",
    # Spanish
    "¿Dónde dejé las llaves",
    "Cuándo es la cita con el dentista",
    "Dime qué necesito para la carbonara",
    # Russian and Dutch
    "когда приём у стоматолога",
    "сколько стоит билет до Казани",
    "wanneer is de tandarts",
    "hoeveel kostte de iPad Air",
    # Japanese and Chinese
    "歯医者はいつですか",
    "駐車場はどこ？",
    "明日は雨が降るかな",
    "牙医预约是什么时候",
    "今天天气怎么样",
    "你记得钥匙在哪里吗",
]

NOTES = [
    "?",  # no word: nothing anyone could answer
    # Says more than it asks: what happened is the message, the question a turn of the conversation.
    "Finally finished the pottery course today and made a bowl for my mum. Have you tried it?",
    "Wir waren am Wochenende in Leipzig und haben das Bachmuseum besucht. Warst du schon mal dort?",
    "?!?",
    "Dentist on Tuesday at 3pm with Dr Patel.",
    "Remind me to call Sam at 5.",
    "Where I parked: level 3, bay C42.",
    'Mum always asks "have you eaten?" when I call.',
    'Mum always asks "have you eaten?"',
    "When I got home, the door was open.",
    "Was at the gym, left the keys in locker 12.",
    "Quand je suis arrivé, il pleuvait.",
    "Cuando llegué, la puerta estaba abierta.",
    "Когда я пришёл домой, дверь была открыта.",
    "Wanneer ik thuis kom, bel ik je.",
    "Und ich habe den Schlüssel unter den Topf gelegt.",
    "Gib es mir morgen zurück.",
    "今日は晴れです。",
    "静か。",
    "我什么都不想吃。",
    "我把钥匙放在花盆下面。",
    (
        "Carbonara for two: 200 g guanciale, 4 egg yolks, 50 g pecorino and black pepper. Cook the spaghetti "
        "for 9 minutes in salted water. Fry the guanciale until crisp, then take the pan off the heat. Toss "
        "the pasta with the yolks and the cheese, loosen it with pasta water and serve at once. Maybe "
        "rigatoni next time?"
    ),
]


@pytest.mark.parametrize("text", ASKS)
def test_a_message_that_asks_something_in_any_of_seven_languages_is_a_question(text):
    assert asks(text)


@pytest.mark.parametrize("text", NOTES)
def test_a_note_a_quoted_question_a_clause_and_a_long_note_ending_with_a_question_are_notes(text):
    assert not asks(text)


def test_a_note_that_also_asks_ranks_as_a_note_and_the_chat_still_answers_it(api):
    told = "Finally finished the pottery course today and made a bowl for my mum. Have you tried it?"
    sent = api.post("/api/v1/chat/messages", {"content": told}).json()
    assert (sent["memory"]["kind"], sent["asked"]) == ("note", True)
    chosen = api.post("/api/v1/memories", {"content": "Is the shop open?", "source": "chat", "kind": "note"}).json()
    assert answers.asks(Memory.objects.get(pk=chosen["id"])) is False, "a person's note is not answered"
    recipe = NOTES[-1]
    assert not asks(recipe) and not wants_answer(recipe), "a long note that merely ends with a question"


# --- Every door -------------------------------------------------------------------------------------


def test_a_chat_memory_created_through_the_api_is_classified(api):
    question = api.post("/api/v1/memories", {"content": "when is the dentist?", "source": "chat"})
    note = api.post("/api/v1/memories", {"content": "Dentist on Tuesday at 3pm.", "source": "chat"})
    upload = api.post("/api/v1/memories", {"content": "Where is the spare key? Under the blue pot."})
    assert question.status_code == 201
    assert (question.json()["kind"], question.json()["metadata"], question.json()["kindChosen"]) == (
        "question",
        {"kind": "question"},
        False,
    )
    assert (note.json()["kind"], note.json()["metadata"]) == ("note", {})
    assert upload.json()["kind"] is None and upload.json()["metadata"] == {}, "only chat messages have a kind"


def test_a_batch_of_chat_memories_is_classified_item_by_item(api):
    response = api.post(
        "/api/v1/memories/batch",
        {
            "items": [
                {"content": "Wo habe ich das Auto geparkt?", "source": "chat"},
                {"content": "Parked on level 3, bay C42.", "source": "chat"},
                {"content": "歯医者はいつですか", "source": "chat", "metadata": {"sessionId": "abc"}},
            ]
        },
    )
    assert response.status_code == 201
    items = response.json()["items"]
    assert [item["kind"] for item in items] == ["question", "note", "question"]
    assert items[2]["metadata"] == {"sessionId": "abc", "kind": "question"}


def test_the_chat_page_and_an_import_go_through_the_same_rule(user, logged_in_client, tmp_path):
    logged_in_client.post("/chat/", {"content": "Quand est le rendez-vous chez le dentiste"})
    assert Memory.objects.get(owner=user, source="chat").metadata["kind"] == "question"

    lines = [
        {"title": "q", "content": "Cuándo es la cita", "source": "chat", "metadata": {}},
        {"title": "n", "content": "La cita es el martes.", "source": "chat", "metadata": {}},
        {"title": "m", "content": "Is this a note?", "source": "chat", "metadata": {"kind": "note"}},
    ]
    for line in lines:
        line["contentHash"] = content_hash(line["content"])
    path = tmp_path / "memories.jsonl"
    path.write_text("".join(json.dumps(line) + "\n" for line in lines), encoding="utf-8")
    report = portability.import_path(owner=user, path=path)
    assert (report.created, report.failed) == (3, 0), report.errors
    imported = {m.title: m for m in Memory.objects.filter(owner=user, title__in=["q", "n", "m"])}
    assert imported["q"].kind == "question" and imported["n"].kind == "note"
    assert imported["m"].kind == "note" and imported["m"].kind_chosen, "the file's note is a choice"


# --- A caller's or a person's choice ------------------------------------------------------------------


def test_an_explicit_kind_given_on_create_is_kept_and_note_wins(api):
    as_field = api.post(
        "/api/v1/memories", {"content": "Is the shop open on Sunday?", "source": "chat", "kind": "note"}
    )
    in_metadata = api.post(
        "/api/v1/memories", {"content": "Where is the key?", "source": "chat", "metadata": {"kind": "note"}}
    )
    asks_anyway = api.post("/api/v1/memories", {"content": "Passport number", "source": "chat", "kind": "question"})
    assert (as_field.json()["kind"], as_field.json()["kindChosen"]) == ("note", True)
    assert as_field.json()["metadata"] == {"kind": "note"}
    assert (in_metadata.json()["kind"], in_metadata.json()["kindChosen"]) == ("note", True)
    assert (asks_anyway.json()["kind"], asks_anyway.json()["kindChosen"]) == ("question", True)


def test_a_kind_that_is_neither_question_nor_note_is_a_clear_422(api):
    bad = api.post("/api/v1/memories", {"content": "hello", "source": "chat", "kind": "reply"})
    assert bad.status_code == 422 and "'question' or 'note'" in json.dumps(bad.json())
    bad_meta = api.post("/api/v1/memories", {"content": "hello", "source": "chat", "metadata": {"kind": "reply"}})
    assert bad_meta.status_code == 422
    assert bad_meta.json()["detail"] == "metadata.kind of a chat message must be 'question' or 'note'"
    not_chat = api.post("/api/v1/memories", {"content": "hello", "kind": "note"})
    assert not_chat.status_code == 422 and "only a chat message has a kind" in not_chat.json()["detail"]
    assert Memory.objects.count() == 0, "nothing half-written"


def test_patch_kind_marks_a_question_as_a_note_and_back(api):
    memory = api.post("/api/v1/memories", {"content": "Is the shop open on Sunday?", "source": "chat"}).json()
    url = f"/api/v1/memories/{memory['id']}"

    noted = api.patch(url, {"kind": "note"})
    assert noted.status_code == 200
    assert (noted.json()["kind"], noted.json()["kindChosen"], noted.json()["metadata"]) == (
        "note",
        True,
        {"kind": "note"},
    )

    kept = api.patch(url, {"content": "Is the shop open on Saturday?"}).json()
    assert (kept["kind"], kept["kindChosen"]) == ("note", True), "the person's choice survives an edit"
    replaced = api.patch(url, {"metadata": {"sessionId": 4}}).json()
    assert replaced["metadata"] == {"sessionId": 4, "kind": "note"}, "new metadata without a kind keeps the choice"

    back = api.patch(url, {"kind": None}).json()
    assert (back["kind"], back["kindChosen"], back["metadata"]) == (
        "question",
        False,
        {"sessionId": 4, "kind": "question"},
    )


def test_patch_kind_with_another_value_or_on_a_document_is_a_clear_422(api):
    chat = api.post("/api/v1/memories", {"content": "Is the shop open?", "source": "chat"}).json()
    bad = api.patch(f"/api/v1/memories/{chat['id']}", {"kind": "statement"})
    assert bad.status_code == 422 and "'question' or 'note'" in json.dumps(bad.json())
    document = api.post("/api/v1/memories", {"content": "A recipe."}).json()
    refused = api.patch(f"/api/v1/memories/{document['id']}", {"kind": "note"})
    assert refused.status_code == 422
    assert (
        refused.json()["detail"] == "only a chat message has a kind (question or note); this memory's source is upload"
    )
    assert Memory.objects.get(pk=chat["id"]).metadata == {"kind": "question"}


def test_new_text_is_classified_again_unless_a_person_chose(user):
    memory = services.memory_create(owner=user, title=None, content="Parked on level 3.", source="chat")
    assert memory.kind == "note" and "kind" not in memory.metadata
    memory = services.memory_update(memory=memory, content="Where did I park?")
    assert memory.kind == "question" and memory.metadata == {"kind": "question"}
    memory = services.memory_update(memory=memory, content="Parked on level 4 after all.")
    assert memory.kind == "note" and memory.metadata == {}


def test_a_message_moved_out_of_chat_loses_its_kind(user):
    memory = services.memory_create(owner=user, title=None, content="Where did I park?", source="chat", kind="question")
    moved = services.memory_update(memory=memory, source="upload")
    assert moved.kind is None and "kind" not in moved.metadata and not moved.kind_chosen


# --- The memory page's toggle -----------------------------------------------------------------------


def test_the_memory_page_shows_the_kind_and_toggles_it_in_one_click(user, logged_in_client):
    memory = services.memory_create(owner=user, title=None, content="Is the shop open on Sunday?", source="chat")
    page = logged_in_client.get(f"/memories/{memory.pk}/").content.decode()
    assert "asks something" in page and 'value="note"' in page and "This is a note" in page

    swapped = logged_in_client.post(f"/memories/{memory.pk}/kind/", {"kind": "note"}, HTTP_HX_REQUEST="true")
    body = swapped.content.decode()
    assert swapped.status_code == 200 and 'id="kind-control"' in body and "<html" not in body
    assert "This asks something" in body and "let the rule decide" in body
    assert Memory.objects.get(pk=memory.pk).metadata == {"kind": "note"}

    plain = logged_in_client.post(f"/memories/{memory.pk}/kind/", {"kind": "auto"})
    assert plain.status_code == 302
    assert Memory.objects.get(pk=memory.pk).kind == "question"


def test_the_toggle_refuses_a_bad_value_a_document_and_another_users_memory(user, other_user, logged_in_client):
    memory = services.memory_create(owner=user, title=None, content="Is it open?", source="chat")
    bad = logged_in_client.post(f"/memories/{memory.pk}/kind/", {"kind": "maybe"}, HTTP_HX_REQUEST="true")
    assert bad.status_code == 422 and "Choose whether" in bad.content.decode()
    document = make_memory(user, "A recipe.", title="Recipe")
    assert "This is a note" not in logged_in_client.get(f"/memories/{document.pk}/").content.decode()
    refused = logged_in_client.post(f"/memories/{document.pk}/kind/", {"kind": "note"}, HTTP_HX_REQUEST="true")
    assert refused.status_code == 422 and "Only a chat message has a kind" in refused.content.decode()
    theirs = services.memory_create(owner=other_user, title=None, content="Is it open?", source="chat")
    assert logged_in_client.post(f"/memories/{theirs.pk}/kind/", {"kind": "note"}).status_code == 404
    assert logged_in_client.get(f"/memories/{memory.pk}/kind/").status_code == 405


# --- Search: a chat question never outranks the note it asks about ----------------------------------

PAIRS = [
    (
        "Spaghetti carbonara",
        "Recipe for two: spaghetti, guanciale, egg yolks, pecorino and black pepper. No cream.",
        "Remind me what I need for the carbonara?",
    ),
    ("Dentist appointment", "Dentist appointment with Dr Patel on Tuesday at 3pm.", "when is the dentist?"),
    (
        "Long run pace",
        "Long runs at an easy pace: 6:10 per km, heart rate under 145.",
        "What pace should my long runs be at?",
    ),
    (
        "Wifi at home",
        "The home wifi password is kiwi-harbour-42, network Lighthouse.",
        "What's the wifi password at home",
    ),
    (
        "Car insurance",
        "Car insurance renews on 14 March with Allianz, policy 88-231.",
        "When does the car insurance renew?",
    ),
    ("Bins", "The recycling bins go out every other Thursday evening.", "I forgot when the bins go out"),
    ("Spare key", "The spare key is under the blue flower pot by the back door.", "Where is the spare key?"),
    ("Passport", "Passport number X1234567, expires in June 2031.", "Find my passport number"),
    ("Zahnarzt", "Zahnarzttermin bei Dr. Weber am Donnerstag um 10 Uhr.", "Wann ist der Zahnarzttermin"),
    ("Anna's birthday", "Anna's birthday is on 2 May; she would like a cookbook.", "When is Anna's birthday?"),
    (
        "Boiler service",
        "Boiler service booked with Heatwise for 9 November, 8am to noon.",
        "Did I book the boiler service?",
    ),
]


@pytest.mark.real_embedder
def test_a_chat_question_created_through_the_api_never_outranks_the_note_it_asks_about(user, api):
    for title, note, _ in PAIRS:
        assert api.post("/api/v1/memories", {"title": title, "content": note}).status_code == 201
    asked = {}
    for title, _, question in PAIRS:
        response = api.post("/api/v1/memories", {"content": question, "source": "chat"}).json()
        assert response["kind"] == "question", question
        asked[title] = response["id"]
    for title, _, question in PAIRS:
        results = api.post("/api/v1/search", {"query": question}).json()["results"]
        ids = [r["memoryId"] for r in results]
        note_id = Memory.objects.get(owner=user, title=title).pk
        assert ids and ids[0] == note_id, (question, [r["title"] for r in results])
        assert asked[title] not in ids or ids.index(note_id) < ids.index(asked[title]), question
    ranked = hybrid_search(user.pk, "carbonara").results
    assert not ranked[0].is_question


def test_an_export_and_import_keep_a_chosen_kind(user, tmp_path):
    from tests.factories import UserFactory
    from tests.portability.test_export_import import export_bytes, import_bytes, unpack

    chosen = services.memory_create(owner=user, title="Shop", content="Is the shop open?", source="chat", kind="note")
    services.memory_create(owner=user, title="Park", content="Where did I park?", source="chat")
    records = {r["title"]: r for r in unpack(export_bytes(user))["memories"]}
    assert records["Shop"]["kindChosenAt"] and records["Park"]["kindChosenAt"] is None

    newcomer = UserFactory()
    report = import_bytes(newcomer, export_bytes(user), "export.zip", tmp_path)
    assert (report.created, report.failed) == (2, 0)
    shop, park = (Memory.objects.get(owner=newcomer, title=t) for t in ("Shop", "Park"))
    assert (shop.kind, shop.kind_chosen, shop.kind_chosen_at) == ("note", True, chosen.kind_chosen_at)
    assert (park.kind, park.kind_chosen) == ("question", False)


def test_an_exported_kind_the_rule_gave_is_given_again_by_todays_rule_on_import(user, tmp_path):
    from tests.factories import UserFactory
    from tests.portability.test_export_import import export_bytes, import_bytes

    told = "Finally finished the pottery course today and made a bowl for my mum. Have you tried it?"
    memory = services.memory_create(owner=user, title="Pottery", content=told, source="chat")
    Memory.objects.filter(pk=memory.pk).update(metadata={"kind": "question"})  # as the former rule stored it
    newcomer = UserFactory()
    report = import_bytes(newcomer, export_bytes(user), "export.zip", tmp_path)
    assert (report.created, report.failed) == (1, 0)
    imported = Memory.objects.get(owner=newcomer, title="Pottery")
    assert (imported.kind, imported.kind_chosen) == ("note", False), "the rule's kind is not a choice"

"""The HTMX pages: sign-up landing, login required everywhere, list, detail with chunks, add form."""

from __future__ import annotations

import re

import pytest
from django.test import Client

from memories.models import Memory
from tests.factories import make_memory

pytestmark = pytest.mark.django_db


def test_a_signed_out_visitor_sees_what_kybernesis_is_with_sign_in_and_sign_up():
    response = Client().get("/")
    assert response.status_code == 200
    page = response.content.decode()
    assert "self-hosted memory" in page
    assert 'href="/accounts/signup/"' in page and 'href="/accounts/login/"' in page


def test_every_page_needs_a_login():
    for url in ("/memories/", "/memories/new/", "/memories/1/"):
        response = Client().get(url)
        assert response.status_code == 302 and response["Location"].startswith("/accounts/login/")


def test_sign_up_with_email_and_password_signs_the_person_in():
    client = Client()
    response = client.post(
        "/accounts/signup/",
        {"email": "new@example.com", "password1": "a-Long-passphrase-42", "password2": "a-Long-passphrase-42"},
    )
    assert response.status_code == 302
    assert client.get("/memories/").status_code == 200


def test_the_list_shows_only_my_memories_with_tier_counts(logged_in_client, user, other_user):
    make_memory(user, content="My own note about gardening.")
    make_memory(other_user, content="Somebody else's secret.")
    response = logged_in_client.get("/memories/")
    assert b"My own note about gardening." in response.content
    assert b"secret" not in response.content
    assert response.context["tier_counts"] == {"hot": 1, "warm": 0, "archive": 0}


def test_the_list_filters_and_answers_htmx_with_just_the_results(logged_in_client, user):
    make_memory(user, content="Tagged note", manual_tags=["garden"])
    make_memory(user, content="Untagged note")
    response = logged_in_client.get("/memories/", {"tag": "garden"}, HTTP_HX_REQUEST="true")
    html = response.content.decode()
    assert "Tagged note" in html and "Untagged note" not in html
    assert "<html" not in html and 'id="results"' in html


def test_the_detail_page_shows_the_chunks(logged_in_client, user):
    content = "\n\n".join(f"Section {i}. " + "Detail about the engineering plan. " * 20 for i in range(5))
    memory = make_memory(user, content=content)
    response = logged_in_client.get(f"/memories/{memory.pk}/")
    html = response.content.decode()
    assert f"{memory.chunk_count} chunks" in html
    assert html.count('class="chunk"') == memory.chunk_count > 1


def test_source_code_is_shown_in_a_monospace_font_and_prose_is_not(logged_in_client, user):
    code = make_memory(user, content="def fib(n):\n    return n", metadata={"filename": "fib.py", "extension": "py"})
    note = make_memory(user, content="Plain prose about the garden.", metadata={"filename": "a.md", "extension": "md"})
    assert '<p class="mono">def fib(n):' in logged_in_client.get(f"/memories/{code.pk}/").content.decode()
    assert '<p class="mono">' not in logged_in_client.get(f"/memories/{note.pk}/").content.decode()


def test_another_users_memory_page_is_404(logged_in_client, other_user):
    theirs = make_memory(other_user)
    assert logged_in_client.get(f"/memories/{theirs.pk}/").status_code == 404
    assert logged_in_client.post(f"/memories/{theirs.pk}/delete/").status_code == 404
    assert Memory.objects.filter(pk=theirs.pk).exists()


def test_the_add_form_creates_a_memory_and_opens_it(logged_in_client, user):
    response = logged_in_client.post(
        "/memories/new/",
        {"title": "", "content": "Quarterly budget review notes.", "tags": "Finance, q4 review", "priority": "0.7"},
    )
    memory = Memory.objects.get(owner=user)
    assert response.status_code == 302 and response["Location"] == f"/memories/{memory.pk}/"
    assert (memory.title, memory.manual_tags, memory.priority) == (
        "Quarterly budget review notes.",
        ["finance", "q4-review"],
        0.7,
    )


@pytest.mark.parametrize(
    ("data", "message"),
    [
        ({"content": "   "}, "Content is empty"),
        ({"content": ""}, "This field is required."),
        ({"content": "ok", "priority": "3"}, "less than or equal to 1"),
        ({"content": "ok", "tags": "x" * 70}, "the limit is 64"),
    ],
)
def test_the_add_form_shows_errors_and_stores_nothing(logged_in_client, data, message):
    response = logged_in_client.post("/memories/new/", data)
    assert response.status_code == 422
    assert message in response.content.decode()
    assert not Memory.objects.exists()


def test_delete_from_the_page(logged_in_client, user):
    memory = make_memory(user)
    response = logged_in_client.post(f"/memories/{memory.pk}/delete/")
    assert response.status_code == 302
    assert not Memory.objects.exists()


def test_help_texts_carry_the_ids_their_fields_are_described_by(logged_in_client, user):
    memory = make_memory(user, content="Described.")
    for url in ("/memories/new/", f"/memories/{memory.pk}/edit/"):
        html = logged_in_client.get(url).content.decode()
        described = re.findall(r'aria-describedby="([^"]+)"', html)
        assert described, url
        for ids in described:
            for element_id in ids.split():
                if not element_id.endswith("_error"):  # error lists exist only once there is an error
                    assert f'id="{element_id}"' in html, (url, element_id)


def test_the_add_form_suggests_no_priority_it_would_not_use_and_counts_chunks_in_words(logged_in_client, user):
    html = logged_in_client.get("/memories/new/").content.decode()
    assert 'placeholder="0.5"' not in html and "Leave empty to have it set" in html
    response = logged_in_client.post("/memories/new/", {"content": "One short note."}, follow=True)
    assert "in 1 chunk." in response.content.decode()


def test_times_just_past_read_just_now_not_zero_minutes(logged_in_client, user):
    memory = make_memory(user, content="Fresh.")
    logged_in_client.post(f"/memories/{memory.pk}/edit/", {"title": "Fresh", "content": "Fresher.", "metadata": ""})
    html = logged_in_client.get(f"/memories/{memory.pk}/").content.decode()
    assert "(just now)" in html and "0\xa0minutes" not in html and "0 minutes" not in html

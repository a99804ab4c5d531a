"""The pages' forms and query strings get the same hostile strings as the API fuzzing: never a 500.

A refused value is a 4xx or the page again with a visible message; a `next` that is not a local path
sends the browser to the memory page instead.
"""

from __future__ import annotations

from urllib.parse import urlencode

import pytest
from django.test import Client

from memories.models import Memory
from tests.factories import make_memory

pytestmark = pytest.mark.django_db

HOSTILE = [
    "\u0000",
    "bad\u0000text",
    "\ud800",
    "x\udfffy",
    "\u202egpj.exe",
    "\u001b[31mred\u001b[0m",
    "a" * 5000,
    "99999999999999999999",
    "-1",
    "9999-12-31",
    "0001-01-01",
    "<script>alert(1)</script>",
    "'; DROP TABLE x; --",
    "%00",
    "../../etc/passwd",
    "\r\nSet-Cookie: x=1",
    "1e309",
    "NaN",
    "[]",
    "{}",
    " ",
    "abc",
    "//evil.example",
    "https://evil.example/",
    "/\\evil.example",
    "javascript:alert(1)",
]
IDS = [f"h{i}" for i in range(len(HOSTILE))]


@pytest.fixture
def browser(user):
    client = Client(raise_request_exception=False)
    client.force_login(user)
    return client


@pytest.fixture
def memory(user):
    return make_memory(user, "Alice met Bob in Berlin to plan the spring release.", title="Spring release")


def _ok(response):
    assert response.status_code < 500, (response.status_code, response.content[:500])


def _encoded(params: dict) -> str:
    """Form encoding as a hostile client does it: a lone surrogate goes out as its raw (invalid
    UTF-8) bytes, which no ordinary client library would produce."""
    return urlencode({k: v.encode("utf-8", "surrogatepass") for k, v in params.items()})


def _get(client, path: str, params: dict):
    return client.get(f"{path}?{_encoded(params)}")


def _post(client, path: str, data: dict):
    return client.post(path, _encoded(data), content_type="application/x-www-form-urlencoded")


@pytest.mark.parametrize("bad", HOSTILE, ids=IDS)
def test_page_query_strings_never_500(browser, memory, bad):
    for path, params in [
        ("/memories/", {"tag": bad, "tier": bad, "source": bad, "page": bad}),
        ("/memories/tags/", {"q": bad}),
        (
            "/search/",
            {
                "q": bad,
                "tag": bad,
                "created_before": bad,
                "created_after": bad,
                "min_priority": bad,
                "tier": bad,
                "source": bad,
            },
        ),
        ("/search/", {"q": "release", "created_before": bad}),
        ("/chat/", {"session": bad}),
        ("/graph/", {"q": bad, "tag": bad, "type": bad, "view": bad, "min_weight": bad, "limit": bad}),
        ("/sleep/", {"page": bad}),
        ("/connectors/", {"status": bad, "page": bad}),
        (f"/graph/entities/{memory.pk}/", {"from": bad}),
    ]:
        _ok(_get(browser, path, params))


@pytest.mark.parametrize("bad", HOSTILE, ids=IDS)
def test_page_forms_never_500(browser, memory, bad):
    _ok(_post(browser, "/memories/new/", {"title": bad, "content": bad, "tags": bad, "priority": bad}))
    _ok(_post(browser, "/memories/new/", {"title": bad, "content": "Fine words.", "tags": "ok"}))
    _ok(_post(browser, "/chat/", {"content": bad, "session": bad}))
    _ok(_post(browser, "/chat/", {"content": bad}))
    _ok(_post(browser, f"/memories/{memory.pk}/pin/", {"pinned": "1", "next": bad}))
    _ok(_post(browser, f"/memories/{memory.pk}/priority/", {"priority": bad, "next": bad}))
    _ok(_post(browser, f"/memories/{memory.pk}/tags/", {"tags": bad, "next": bad}))
    _ok(_post(browser, f"/memories/{memory.pk}/tags/", {"remove": bad, "next": bad}))
    _ok(_post(browser, "/upload/", {"tags": bad}))
    assert not Memory.objects.exclude(pk=memory.pk).filter(title__contains="\x1b").exists()


@pytest.mark.parametrize(
    "next_value",
    [
        "abc",
        "memories:list",
        "//evil.example/x",
        "https://evil.example/",
        "/\\evil.example",
        "javascript:alert(1)",
        "\u0000",
        "",
    ],
)
def test_a_next_that_is_not_a_local_path_goes_to_the_memory_page(browser, memory, next_value):
    for path, data in [
        (f"/memories/{memory.pk}/pin/", {"pinned": "1"}),
        (f"/memories/{memory.pk}/priority/", {"priority": "0.4"}),
        (f"/memories/{memory.pk}/tags/", {"tags": "x"}),
    ]:
        response = _post(browser, path, {**data, "next": next_value})
        assert response.status_code == 302, (path, response.status_code)
        assert response["Location"] == f"/memories/{memory.pk}/"


def test_a_local_next_is_followed(browser, memory):
    response = browser.post(f"/memories/{memory.pk}/pin/", {"pinned": "1", "next": "/memories/?tier=hot"})
    assert response["Location"] == "/memories/?tier=hot"


def test_the_tag_page_says_why_a_filter_was_ignored(browser, memory):
    response = browser.get("/memories/tags/", {"q": "bad\u0000"})
    assert response.status_code == 200
    assert "NUL" in response.content.decode()


def test_a_chat_message_with_a_nul_byte_is_refused_on_the_page(browser):
    response = browser.post("/chat/", {"content": "hello\u0000there"})
    assert response.status_code == 422
    assert not Memory.objects.exists()

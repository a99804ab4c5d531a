"""Hostile input at the API's front door: each answer is a 4xx with a reason, never a 500.

One test per defect of the hardening probe (NUL bytes, lone surrogates, huge integers and dates,
control and bidi characters, oversized and over-nested bodies, long file names, bearer before CSRF).
"""

from __future__ import annotations

import json

import pytest
from django.test import Client

from memories.models import Memory
from tests.factories import make_memory

pytestmark = pytest.mark.django_db

NUL = "bad\u0000text"
SURROGATE = "bad\ud800text"
HOSTILE = [NUL, SURROGATE]


def _post_raw(api, path: str, body: str, method: str = "post"):
    """json.dumps escapes a lone surrogate as \\ud800, exactly what a hostile client sends."""
    return getattr(Client(), method)(
        path, body, content_type="application/json", HTTP_AUTHORIZATION=f"Bearer {api.token}"
    )


def _refused(response, field: str):
    assert response.status_code == 422, response.content
    assert field in json.dumps(response.json()), response.json()


@pytest.mark.parametrize("bad", HOSTILE, ids=["nul", "surrogate"])
@pytest.mark.parametrize(
    "field, payload",
    [
        ("title", lambda bad: {"title": bad, "content": "fine words"}),
        ("content", lambda bad: {"content": bad}),
        ("metadata", lambda bad: {"content": "fine words", "metadata": {"author": bad}}),
        ("metadata", lambda bad: {"content": "fine words", "metadata": {bad: "value"}}),
        ("tags", lambda bad: {"content": "fine words", "tags": [bad]}),
    ],
)
def test_create_refuses_unstorable_text_naming_the_field(api, bad, field, payload):
    _refused(_post_raw(api, "/api/v1/memories", json.dumps(payload(bad))), field)
    _refused(_post_raw(api, "/api/v1/memories/batch", json.dumps({"items": [payload(bad)]})), field)
    assert not Memory.objects.exists()


@pytest.mark.parametrize("bad", HOSTILE, ids=["nul", "surrogate"])
def test_patch_and_chat_and_search_refuse_unstorable_text(api, user, bad):
    memory = make_memory(user)
    _refused(_post_raw(api, f"/api/v1/memories/{memory.pk}", json.dumps({"title": bad}), method="patch"), "title")
    _refused(
        _post_raw(api, f"/api/v1/memories/{memory.pk}", json.dumps({"metadata": {"k": bad}}), method="patch"),
        "metadata",
    )
    _refused(_post_raw(api, "/api/v1/chat/messages", json.dumps({"content": bad})), "content")
    _refused(_post_raw(api, "/api/v1/search", json.dumps({"query": bad})), "query")
    _refused(
        _post_raw(api, "/api/v1/search", json.dumps({"query": "ok", "filters": {"titleContains": bad}})),
        "titleContains",
    )
    _refused(_post_raw(api, "/api/v1/search", json.dumps({"query": "ok", "filters": {"tags": [bad]}})), "tags")


@pytest.mark.parametrize(
    "path, param",
    [
        ("/api/v1/memories", "tag"),
        ("/api/v1/tags", "prefix"),
        ("/api/v1/entities", "q"),
        ("/api/v1/graph", "tag"),
        ("/api/v1/search", "q"),
        ("/api/v1/search", "tag"),
        ("/api/v1/graph", "types"),
    ],
)
def test_query_parameters_with_a_nul_byte_are_refused_by_name(api, path, param):
    params = {"q": "ok"} if path.endswith("search") else {}
    _refused(api.get(path, {**params, param: NUL}), param)


@pytest.mark.parametrize(
    "path",
    [
        "/api/v1/memories",
        "/api/v1/entities",
        "/api/v1/relationships",
        "/api/v1/sleep/runs",
        "/api/v1/connectors/1/items",
    ],
)
def test_a_huge_offset_is_a_422_not_bigint_out_of_range(api, path):
    for offset in ("99999999999999999999", "-1"):
        response = api.get(path, {"offset": offset})
        assert response.status_code in (404, 422), (path, response.content)
        if path != "/api/v1/connectors/1/items":
            _refused(response, "offset")


@pytest.mark.parametrize(
    "path",
    [
        "/api/v1/memories/99999999999999999999",
        "/api/v1/uploads/99999999999999999999",
        "/api/v1/chat/sessions/99999999999999999999",
        "/api/v1/entities/99999999999999999999",
        "/api/v1/sleep/runs/99999999999999999999",
        "/api/v1/connectors/99999999999999999999",
    ],
)
def test_a_huge_id_in_the_path_is_refused(api, path):
    assert api.get(path).status_code == 422


@pytest.mark.parametrize(
    "params",
    [
        {"created_before": "9999-12-31"},
        {"createdBefore": "9999-12-31"},
        {"createdAfter": "0001-01-01T00:00:00"},
        {"updatedBefore": "9999-12-31T23:59:59+14:00"},
    ],
)
def test_search_dates_at_the_ends_of_the_calendar_are_refused_not_overflowed(api, params):
    response = api.get("/api/v1/search", {"q": "x", **params})
    assert response.status_code in (200, 422), response.content
    if "created_before" not in params:  # an unknown name is ignored, as every query parameter is
        assert response.status_code == 422 and "between" in response.json()["detail"]


def test_the_search_page_explains_a_date_out_of_range(logged_in_client):
    response = logged_in_client.get("/search/", {"q": "x", "created_before": "9999-12-31"})
    assert response.status_code == 422
    assert "between" in response.content.decode()


@pytest.mark.parametrize(
    "title, shown",
    [
        ("pay\u202egpj.exe", "paygpj.exe"),
        ("\u001b[31mred\u001b[0m alert", "red alert"),
        ("tab\tand\u0007bell", "tab andbell"),
        ("family 👨\u200d👩\u200d👧", "family 👨\u200d👩\u200d👧"),
    ],
)
def test_titles_lose_control_and_bidi_characters(api, title, shown):
    response = api.post("/api/v1/memories", {"title": title, "content": "Body text."})
    assert response.status_code == 201, response.content
    assert response.json()["title"] == shown
    memory = Memory.objects.get()
    response = api.patch(f"/api/v1/memories/{memory.pk}", {"title": "x\u202ey"})
    assert response.json()["title"] == "xy"


def test_a_body_over_the_limit_is_a_json_413(api, settings):
    settings.DATA_UPLOAD_MAX_MEMORY_SIZE = 1024
    response = api.post("/api/v1/memories", {"content": "x" * 5000})
    assert response.status_code == 413
    assert "larger than" in response.json()["detail"]


@pytest.mark.parametrize("depth", [40, 1000, 5000])
def test_deeply_nested_json_is_a_422_with_a_reason(api, depth):
    body = '{"content": "x", "metadata": {"a": ' + "[" * depth + "]" * depth + "}}"
    response = _post_raw(api, "/api/v1/memories", body)
    assert response.status_code == 422, response.content
    assert "nested" in response.json()["detail"]


def _multipart(files: list[tuple[str, bytes]]) -> tuple[bytes, str]:
    """Built by hand: Django's test client (and UploadedFile) would cut the name to 255 characters."""
    boundary = "----kybernesis-boundary"
    body = b""
    for name, data in files:
        body += (
            (
                f'--{boundary}\r\nContent-Disposition: form-data; name="files"; filename="{name}"\r\n'
                f"Content-Type: text/plain\r\n\r\n"
            ).encode()
            + data
            + b"\r\n"
        )
    return body + f"--{boundary}--\r\n".encode(), f"multipart/form-data; boundary={boundary}"


def test_a_very_long_file_name_refuses_only_that_file(api):
    body, content_type = _multipart([("a" * 5000 + ".txt", b"Long name."), ("ok.txt", b"Short name.")])
    response = Client().generic(
        "POST", "/api/v1/uploads", body, content_type=content_type, HTTP_AUTHORIZATION=f"Bearer {api.token}"
    )
    assert response.status_code == 200, response.content
    long_name, ok = response.json()["results"]
    assert long_name["status"] == "rejected" and "characters" in long_name["error"]
    assert ok["status"] == "created"


def test_an_invalid_bearer_token_on_a_post_is_401_not_a_csrf_403(user):
    client = Client(enforce_csrf_checks=True)
    response = client.post(
        "/api/v1/memories",
        {"content": "x"},
        content_type="application/json",
        HTTP_AUTHORIZATION="Bearer kyb_not-a-real-token",
    )
    assert response.status_code == 401
    client.force_login(user)  # even with a session, a wrong token is not a fallback to the cookie
    response = client.post(
        "/api/v1/memories",
        {"content": "x"},
        content_type="application/json",
        HTTP_AUTHORIZATION="Bearer kyb_not-a-real-token",
    )
    assert response.status_code == 401


def test_a_session_post_without_csrf_token_is_still_refused(user):
    client = Client(enforce_csrf_checks=True)
    client.force_login(user)
    response = client.post("/api/v1/memories", {"content": "x"}, content_type="application/json")
    assert response.status_code == 403
    assert not Memory.objects.exists()


def test_an_anonymous_post_is_401(db):
    response = Client(enforce_csrf_checks=True).post(
        "/api/v1/memories", {"content": "x"}, content_type="application/json"
    )
    assert response.status_code == 401


@pytest.mark.parametrize("number", ["NaN", "Infinity", "-Infinity"])
def test_metadata_holding_nan_or_infinity_is_a_422_naming_it_not_a_500(api, user, number):
    """Python's json reads these words, PostgreSQL's jsonb refuses them: unchecked, a create would be a 500."""
    body = '{"content": "fine words", "metadata": {"score": ' + number + "}}"
    _refused(_post_raw(api, "/api/v1/memories", body), "metadata.score")
    memory = make_memory(user)
    _refused(
        _post_raw(api, f"/api/v1/memories/{memory.pk}", '{"metadata": {"a": [1, NaN]}}', method="patch"), "metadata"
    )
    assert Memory.objects.count() == 1

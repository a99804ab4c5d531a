"""Token scopes across the whole JSON API, walked from its own OpenAPI schema: every operation that is not
a GET needs `write` unless it is declared a read, so an endpoint added tomorrow is refused to a
read-only token without anyone remembering to say so; and 0 writes get through (the database is
compared, table by table, before and after)."""

from __future__ import annotations

import re
from datetime import timedelta

import pytest
from django.apps import apps
from django.utils import timezone

from core.actors import ActorKind, current_actor
from core.models import ApiToken, RateCounter
from core.tokens import api_token_create, api_token_revoke
from kybernesis.api import api as kybernesis_api
from tests.conftest import ApiClient
from tests.factories import (
    ChatSessionFactory,
    ConnectorAccountFactory,
    EntityFactory,
    ImportJobFactory,
    SleepRunFactory,
    UploadJobFactory,
    make_memory,
)

# The only operations that read although their method is not GET. Declaring another one is a decision
# about what a read-only token may do: add it here on purpose.
DECLARED_READS = {("POST", "/api/v1/search")}
# Any working token may ask what it may do.
ANY_TOKEN = {("GET", "/api/v1/tokens/me")}
READ_METHODS = {"GET", "HEAD", "OPTIONS"}


def operations() -> list[tuple[str, str, dict]]:
    schema = kybernesis_api.get_openapi_schema()
    return [(method.upper(), path, op) for path, ops in schema["paths"].items() for method, op in ops.items()]


def _expected_scope(method: str, path: str) -> str:
    if (method, path) in ANY_TOKEN:
        return "any"
    if method in READ_METHODS or (method, path) in DECLARED_READS:
        return "read"
    return "write"


@pytest.fixture
def world(user):
    """One of everything a path can name, owned by the token's user, so a write that got through would
    find its object and change it."""
    memory = make_memory(user, "Ada met Grace in London to plan the analytical engine.", manual_tags=["engine"])
    return {
        "memory_id": memory.pk,
        "tag": "engine",
        "job_id": UploadJobFactory(owner=user).pk,
        "connector_id": ConnectorAccountFactory(owner=user).pk,
        "run_id": SleepRunFactory(owner=user).pk,
        "session_id": ChatSessionFactory(owner=user).pk,
        "entity_id": EntityFactory(owner=user).pk,
        "import_job_id": ImportJobFactory(owner=user).pk,
    }


def _path(path: str, world: dict) -> str:
    def fill(match):
        name = match.group(1)
        if name == "job_id" and path.startswith("/api/v1/import"):
            return str(world["import_job_id"])
        return str(world.get(name, 1))  # a parameter this test has not met (a version number): 1

    return re.sub(r"\{(\w+)\}", fill, path)


def _call(client: ApiClient, method: str, path: str):
    if method in READ_METHODS:
        return client.generic(method, path, **client._auth({}))
    return client.generic(method, path, data="{}", content_type="application/json", **client._auth({}))


def database_state() -> dict[str, list[str]]:
    """Every row of every table the project's models own, as text; the token's last use and the rate
    counters (which a refused request also moves) aside."""
    state = {}
    for model in apps.get_models():
        if model._meta.proxy or not model._meta.managed or model is RateCounter:
            continue
        rows = model._default_manager.order_by("pk").values()
        if model is ApiToken:
            rows = [{k: v for k, v in row.items() if k != "last_used_at"} for row in rows]
        state[model._meta.label] = [repr(sorted(row.items())) for row in rows]
    return state


def test_every_operation_states_its_scope_by_the_rule():
    seen = operations()
    assert len(seen) > 30
    for method, path, op in seen:
        assert op.get("x-token-scope") == _expected_scope(method, path), f"{method} {path}"
        if op["x-token-scope"] != "any":
            assert "403" in op["responses"], f"{method} {path} documents no 403"
    declared = {(m, p) for m, p, op in seen if op["x-token-scope"] == "read" and m not in READ_METHODS}
    assert declared == DECLARED_READS


def test_a_read_only_token_is_refused_every_write_and_nothing_changes(db, user, world):
    _, key = api_token_create(user=user, name="reader", scopes=["read"])
    client = ApiClient(token=key, raise_request_exception=False)
    writes = [(m, p) for m, p, op in operations() if op["x-token-scope"] == "write"]
    assert len(writes) >= 15
    before = database_state()
    for method, path in writes:
        response = _call(client, method, _path(path, world))
        assert response.status_code == 403, f"{method} {path}: {response.status_code} {response.content[:200]}"
        detail = response.json()["detail"]
        assert "lacks the 'write' scope" in detail and "(its scopes: read)" in detail, detail
        assert 'error="insufficient_scope", scope="write"' in response["WWW-Authenticate"]
    assert database_state() == before


def test_a_read_only_token_may_do_every_read(db, user, world):
    _, key = api_token_create(user=user, scopes=["read"])
    client = ApiClient(token=key, raise_request_exception=False)
    for method, path, op in operations():
        if op["x-token-scope"] in ("read", "any"):
            response = _call(client, method, _path(path, world))
            assert response.status_code not in (401, 403), f"{method} {path}: {response.content[:200]}"


def test_a_write_only_token_is_refused_every_read(db, user, world):
    _, key = api_token_create(user=user, scopes=["write"])
    client = ApiClient(token=key, raise_request_exception=False)
    for method, path, op in operations():
        if op["x-token-scope"] == "read":
            response = _call(client, method, _path(path, world))
            assert response.status_code == 403, f"{method} {path}"
            assert "lacks the 'read' scope" in response.json()["detail"]


def test_a_read_only_token_searches_by_post(db, user, world):
    _, key = api_token_create(user=user, scopes=["read"])
    response = ApiClient(token=key).post("/api/v1/search", {"query": "analytical engine"})
    assert response.status_code == 200
    assert response.json()["results"]


def test_a_browser_session_is_not_scoped(logged_in_client, user):
    response = logged_in_client.post(
        "/api/v1/memories", {"content": "Written from the browser."}, content_type="application/json"
    )
    assert response.status_code == 201


def test_an_expired_token_gets_401_with_the_date(db, user):
    token, key = api_token_create(user=user, expires_at=timezone.now() + timedelta(hours=1))
    ApiToken.objects.filter(pk=token.pk).update(expires_at=timezone.now() - timedelta(seconds=1))
    client = ApiClient(token=key)
    for response in (client.get("/api/v1/memories"), client.post("/api/v1/memories", {"content": "x"})):
        assert response.status_code == 401
        assert response.json()["detail"].startswith("this API token expired on ")
        assert 'error="invalid_token"' in response["WWW-Authenticate"]
    assert not user.memories.exists()


def test_a_revoked_token_gets_401_from_its_next_request(db, user):
    token, key = api_token_create(user=user)
    client = ApiClient(token=key)
    assert client.get("/api/v1/memories").status_code == 200
    api_token_revoke(token=token)
    response = client.get("/api/v1/memories")
    assert response.status_code == 401
    assert response.json()["detail"].startswith("this API token was revoked on ")


def test_refused_real_tokens_do_not_count_as_guesses(db, user, settings):
    settings.KYBERNESIS_API_AUTH_FAILURE_RATE = "2/m"
    token, key = api_token_create(user=user)
    api_token_revoke(token=token)
    for _ in range(4):
        assert ApiClient(token=key).get("/api/v1/memories").status_code == 401
    _, good = api_token_create(user=user)
    assert ApiClient(token=good).get("/api/v1/memories").status_code == 200


def test_refused_writes_count_against_the_rate_limit(db, user, settings):
    settings.KYBERNESIS_API_RATE = "3/m"
    _, key = api_token_create(user=user, scopes=["read"])
    client = ApiClient(token=key)
    answers = [client.post("/api/v1/memories", {"content": "x"}).status_code for _ in range(5)]
    assert answers[:3] == [403, 403, 403] and answers[3:] == [429, 429]
    assert client.post("/api/v1/memories", {"content": "x"})["Retry-After"]


def test_the_token_is_the_actor_of_what_it_changes(db, user, monkeypatch):
    from memories import services

    seen = []
    create = services.memory_create

    def recording(**kwargs):
        seen.append(current_actor())
        return create(**kwargs)

    monkeypatch.setattr("memories.api.services.memory_create", recording)
    token, key = api_token_create(user=user, name="laptop")
    assert ApiClient(token=key).post("/api/v1/memories", {"content": "A note from the laptop."}).status_code == 201
    assert [(a.kind, a.label, a.token_id, a.user_id) for a in seen] == [
        (ActorKind.TOKEN, "API token 'laptop'", token.pk, user.pk)
    ]
    assert current_actor().kind == ActorKind.SYSTEM  # nothing carries over past the request


def test_tokens_me_says_what_the_token_may_do(db, user, logged_in_client):
    token, key = api_token_create(user=user, name="agent", scopes=["read"])
    body = ApiClient(token=key).get("/api/v1/tokens/me").json()
    assert body["name"] == "agent" and body["scopes"] == ["read"] and body["prefix"] == token.prefix
    assert body["expiresAt"] is None and "keyHash" not in body
    _, write_only = api_token_create(user=user, scopes=["write"])
    assert ApiClient(token=write_only).get("/api/v1/tokens/me").json()["scopes"] == ["write"]
    response = logged_in_client.get("/api/v1/tokens/me")
    assert response.status_code == 404 and "not made with an API token" in response.json()["detail"]


@pytest.mark.urls("tests.kybernesis.scope_urls")
def test_an_endpoint_nobody_declared_is_a_write(db, user):
    _, reader = api_token_create(user=user, scopes=["read"])
    _, writer = api_token_create(user=user, scopes=["write"])
    read_client, write_client = ApiClient(token=reader), ApiClient(token=writer)
    for method in ("POST", "PUT", "PATCH", "DELETE"):
        assert _call(read_client, method, "/api/new/thing").status_code == 403, method
        assert _call(write_client, method, "/api/new/thing").status_code == 200, method
    assert _call(read_client, "GET", "/api/new/thing").status_code == 200
    assert _call(read_client, "POST", "/api/new/lookup").status_code == 200  # declared a read
    assert _call(write_client, "POST", "/api/new/lookup").status_code == 403

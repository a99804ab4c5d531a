"""Shared fixtures: users, API clients with bearer tokens, and the one embedding model per session."""

from __future__ import annotations

import pytest
from django.test import Client

from core.auth import api_token_create
from tests.factories import UserFactory


def pytest_sessionstart(session):
    """The data directory the embedded database lives in (settings themselves write nothing)."""
    from kybernesis.boot import prepare

    prepare()


@pytest.fixture(scope="session", autouse=True)
def _embedding_model_once():
    """Load the real model once for the whole session; every test that embeds shares it."""
    from memories import embedding

    embedding.get_model()


@pytest.fixture(scope="session", autouse=True)
def _spacy_model_once():
    """Load the spaCy pipeline once for the whole session; graph extraction shares it."""
    from graph import entities

    entities.get_nlp()


@pytest.fixture(autouse=True)
def _no_workers_left():
    """Stop any worker pool a test forked: its children would hold, among the descriptors they
    inherit, the pipe to the Playwright driver, and the session could not shut the driver down."""
    yield
    from core import workers

    workers.shutdown(wait=True)


@pytest.fixture
def user(db):
    return UserFactory()


@pytest.fixture
def other_user(db):
    return UserFactory()


class ApiClient(Client):
    """A test client that speaks JSON to /api/v1 with a bearer token."""

    def __init__(self, token: str | None = None, **kwargs):
        super().__init__(**kwargs)
        self.token = token

    def _auth(self, extra: dict) -> dict:
        if self.token and "HTTP_AUTHORIZATION" not in extra:
            extra["HTTP_AUTHORIZATION"] = f"Bearer {self.token}"
        return extra

    def get(self, path, data=None, **extra):
        return super().get(path, data, **self._auth(extra))

    def delete(self, path, data="", **extra):
        return super().delete(path, data, **self._auth(extra))

    def post(self, path, data=None, content_type="application/json", **extra):
        return super().post(path, data, content_type=content_type, **self._auth(extra))

    def patch(self, path, data=None, content_type="application/json", **extra):
        return super().patch(path, data, content_type=content_type, **self._auth(extra))


@pytest.fixture
def api(user):
    _, key = api_token_create(user=user)
    return ApiClient(token=key)


@pytest.fixture
def other_api(other_user):
    _, key = api_token_create(user=other_user)
    return ApiClient(token=key)


@pytest.fixture
def logged_in_client(user):
    client = Client()
    client.force_login(user)
    return client

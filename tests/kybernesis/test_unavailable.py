"""A database that cannot serve (pool exhausted, too many clients, gone) is a 503 with Retry-After, never a 500."""

from __future__ import annotations

import threading

import pytest
from django.contrib.sessions.backends.db import SessionStore
from django.db import OperationalError, connections

from kybernesis import db as kybernesis_db
from tests.conftest import ApiClient

TOO_MANY = "connection failed: FATAL:  sorry, too many clients already"


@pytest.fixture
def refusing_token_lookup(monkeypatch):
    def refuse(_token, **_lookup):
        raise OperationalError(TOO_MANY)

    monkeypatch.setattr("core.auth.api_token_find", refuse)


def test_an_api_request_the_database_refuses_gets_a_json_503_with_retry_after(db, refusing_token_lookup, settings):
    settings.KYBERNESIS_RETRY_AFTER_SECONDS = 3
    response = ApiClient(token="kyb_whatever", raise_request_exception=False).post(
        "/api/v1/search", {"query": "anything"}
    )
    assert response.status_code == 503
    assert response["Retry-After"] == "3"
    assert response["Content-Type"].startswith("application/json")
    assert "no free connection slots" in response.json()["detail"]


def test_an_api_request_still_gets_a_503_in_debug_mode(db, refusing_token_lookup, settings):
    settings.DEBUG = True
    response = ApiClient(token="kyb_whatever", raise_request_exception=False).get("/api/v1/memories")
    assert response.status_code == 503
    assert response["Retry-After"]


def test_a_page_whose_session_cannot_be_loaded_gets_a_busy_page_with_retry_after(logged_in_client, monkeypatch):
    # The session middleware queries the database before any view runs: the 500 handler answers.
    def refuse(self, *args, **kwargs):
        raise OperationalError("couldn't get a connection after 10.00 sec")

    monkeypatch.setattr(SessionStore, "load", refuse)
    logged_in_client.raise_request_exception = False
    response = logged_in_client.get("/memories/")
    assert response.status_code == 503
    assert response["Retry-After"]
    assert response["Content-Type"].startswith("text/html")
    body = response.content.decode()
    assert "Kybernesis is busy" in body
    assert "all database connections are busy" in body


def test_other_errors_stay_500s(db, monkeypatch):
    def broken(_token, **_lookup):
        raise RuntimeError("a real bug")

    monkeypatch.setattr("core.auth.api_token_find", broken)
    response = ApiClient(token="kyb_whatever", raise_request_exception=False).get("/api/v1/memories")
    assert response.status_code == 500
    assert response.json() == {"detail": "Internal server error"}


def test_database_settings_use_a_bounded_pool_instead_of_persistent_connections():
    pooled = kybernesis_db.database_settings("postgres://u:p@localhost:5432/k", pool_max=4, pool_timeout=2.5)
    assert pooled["OPTIONS"]["pool"] == {"min_size": 1, "max_size": 4, "timeout": 2.5}
    assert pooled["CONN_MAX_AGE"] == 0
    plain = kybernesis_db.database_settings("postgres://u:p@localhost:5432/k", conn_max_age=60)
    assert "pool" not in plain["OPTIONS"] and plain["CONN_MAX_AGE"] == 60
    # Either way a dead connection is noticed before use (Django hands the pool its check).
    assert pooled["CONN_HEALTH_CHECKS"] is plain["CONN_HEALTH_CHECKS"] is True


@pytest.mark.django_db(transaction=True)
def test_a_persistent_connection_that_died_is_replaced_before_the_next_task_uses_it():
    """A task worker keeps its connection for KYBERNESIS_DB_CONN_MAX_AGE seconds. When PostgreSQL
    ends it meanwhile (a restart, a failover), the health check that Django runs after
    close_old_connections (which django-q2 calls around every task) finds it dead and opens another,
    so the task does not fail on a closed connection."""
    from django.db import close_old_connections, connection

    assert connection.settings_dict["CONN_MAX_AGE"] > 0 and connection.settings_dict["CONN_HEALTH_CHECKS"]
    with connection.cursor() as cursor:
        cursor.execute("SELECT pg_backend_pid()")
        (pid,) = cursor.fetchone()
    other = connections.create_connection("default")
    try:
        with other.cursor() as cursor:
            cursor.execute("SELECT pg_terminate_backend(%s)", [pid])
    finally:
        other.close()

    close_old_connections()
    with connection.cursor() as cursor:
        cursor.execute("SELECT pg_backend_pid()")
        assert cursor.fetchone()[0] != pid


@pytest.mark.django_db(transaction=True)
def test_an_exhausted_pool_raises_the_error_that_becomes_a_503():
    """A real psycopg pool of one connection, held by another thread: the next checkout times out
    with an OperationalError, which the handlers above turn into a 503."""
    from psycopg_pool import ConnectionPool

    from kybernesis.unavailable import is_unavailable

    wrapper = connections["default"]
    params = wrapper.get_connection_params()
    params.pop("pool", None)
    held = threading.Event()
    release = threading.Event()
    with ConnectionPool(kwargs=params, min_size=1, max_size=1, timeout=0.3, open=True) as pool:

        def hold():
            with pool.connection():
                held.set()
                release.wait(10)

        thread = threading.Thread(target=hold)
        thread.start()
        held.wait(10)
        try:
            with pytest.raises(OperationalError) as caught, wrapper.wrap_database_errors:
                pool.getconn()
        finally:
            release.set()
            thread.join()
    assert is_unavailable(caught.value)

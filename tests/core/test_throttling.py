"""Rate limits (core.throttling): the rate format, the sliding-window estimate and its Retry-After,
counting in the shared table, and the wrong-token limit on the API and on MCP."""

from __future__ import annotations

import threading

import pytest
from django.db import connection, connections

from core import throttling
from core.auth import api_token_create
from core.models import RateCounter
from core.throttling import Limit, Rate, estimate, hit, parse_rate, retry_after
from core.tokens import api_token_revoke


@pytest.mark.parametrize(
    ("text", "rate"),
    [
        ("600/m", Rate(600, 60)),
        ("300/s", Rate(300, 1)),
        ("5000/h", Rate(5000, 3600)),
        ("20/5m", Rate(20, 300)),
        (" 10 / day ", Rate(10, 86400)),
        ("", None),
        (None, None),
    ],
)
def test_rates_are_read_as_requests_per_period(text, rate):
    assert parse_rate(text) == rate


@pytest.mark.parametrize("text", ["600", "600/fortnight", "many/m", "/m", "-1/m"])
def test_a_rate_that_is_not_one_says_what_one_looks_like(text):
    with pytest.raises(ValueError, match="600/m"):
        parse_rate(text)


def test_the_window_estimate_counts_the_previous_slot_by_how_much_it_still_overlaps():
    assert estimate(count=10, previous=0, elapsed=30, seconds=60) == 10
    assert estimate(count=10, previous=60, elapsed=30, seconds=60) == 40  # half of the previous slot
    assert estimate(count=10, previous=60, elapsed=59.9, seconds=60) == pytest.approx(10.1)


def test_retry_after_is_when_one_more_request_fits():
    rate = Rate(requests=10, seconds=60)
    # 5 now and 20 in the previous slot, 30 s in: 5 + 20 x (1 - t/60) <= 9 once t >= 48, 18 s from now.
    assert retry_after(count=5, previous=20, elapsed=30, rate=rate) == 18
    # This slot is full: only the next has room, once this slot's 12 x (1 - t/60) <= 9, 15 s into it.
    assert retry_after(count=12, previous=0, elapsed=50, rate=rate) == 10 + 15
    assert retry_after(count=9, previous=0, elapsed=1, rate=rate) == 1  # never less than a second


def counts(key: str) -> tuple[int, int]:
    row = RateCounter.objects.get(key=key)
    return row.count, row.previous


@pytest.mark.django_db
def test_a_request_is_counted_against_every_limit_at_once_and_a_refused_one_is_taken_back():
    limits = [Limit("account:1", Rate(3, 60)), Limit("address:a", Rate(100, 60))]
    assert [hit(limits, now=600.0) for _ in range(3)] == [None, None, None]
    assert counts("account:1") == (3, 0) and counts("address:a") == (3, 0)
    assert hit(limits, now=610.0) == 50 + 20  # the next slot has room 20 s into it: 3 x (1 - 20/60) <= 2
    assert counts("account:1") == (3, 0) and counts("address:a") == (3, 0), "the refused request is not counted"
    # Next minute: the three are the previous slot's, and count for less as it slides away.
    assert hit(limits, now=660.0 + 10) is not None  # 0 + 1 + 3 x 50/60 = 3.5 > 3
    assert hit(limits, now=660.0 + 40) is None  # 1 + 3 x 20/60 = 2
    assert counts("account:1") == (1, 3)
    # A slot with nothing before it starts afresh.
    assert hit(limits, now=900.0) is None and counts("account:1") == (1, 0)


@pytest.mark.django_db
def test_a_limit_that_is_off_counts_nothing():
    assert hit([Limit("account:1", None)]) is None
    assert not RateCounter.objects.exists()


@pytest.mark.django_db
def test_the_counts_table_is_unlogged():
    with connection.cursor() as cursor:
        cursor.execute("SELECT relpersistence FROM pg_class WHERE relname = 'core_ratecounter'")
        assert cursor.fetchone()[0] == "u"


@pytest.mark.django_db(transaction=True)
def test_concurrent_requests_on_their_own_connections_are_each_counted_once():
    limits = [Limit("account:9", Rate(10_000, 3600)), Limit("address:b", Rate(10_000, 3600))]
    start = threading.Barrier(8)
    answers: list = []

    def client():
        try:
            start.wait()
            answers.extend(hit(limits) for _ in range(25))
        except Exception as exc:  # surfaced below
            answers.append(exc)
        finally:
            connections.close_all()

    threads = [threading.Thread(target=client) for _ in range(8)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    assert answers == [None] * 200, "every request fits and none raised"
    assert counts("account:9")[0] == 200 and counts("address:b")[0] == 200


@pytest.mark.django_db
def test_wrong_tokens_from_one_address_lock_it_out_of_the_api_whatever_token_it_sends(client, user, settings):
    settings.KYBERNESIS_API_AUTH_FAILURE_RATE = "3/m"
    _, good = api_token_create(user=user)
    wrong = [client.get("/api/v1/memories", HTTP_AUTHORIZATION=f"Bearer kyb_wrong{i}").status_code for i in range(3)]
    assert wrong == [401, 401, 401]
    refused = client.get("/api/v1/memories", HTTP_AUTHORIZATION=f"Bearer {good}")
    assert refused.status_code == 429
    assert 1 <= int(refused["Retry-After"]) <= 2 * 60  # a sliding minute: into the next one at most
    assert refused.json()["detail"].startswith("Too many wrong API tokens from this address; try again in")
    # Another address is not affected, and its right token works.
    other = client.get("/api/v1/memories", HTTP_AUTHORIZATION=f"Bearer {good}", REMOTE_ADDR="10.0.0.9")
    assert other.status_code == 200


@pytest.mark.django_db
def test_right_tokens_never_count_as_failures(client, user, settings):
    settings.KYBERNESIS_API_AUTH_FAILURE_RATE = "2/m"
    _, good = api_token_create(user=user)
    assert {client.get("/api/v1/memories", HTTP_AUTHORIZATION=f"Bearer {good}").status_code for _ in range(5)} == {200}


@pytest.mark.django_db
def test_mcp_has_the_same_limits_as_the_api(client, user, settings):
    _, good = api_token_create(user=user)
    body = b'{"jsonrpc": "2.0", "id": 1, "method": "ping"}'
    headers = {"HTTP_ACCEPT": "application/json, text/event-stream", "content_type": "application/json"}

    settings.KYBERNESIS_API_RATE = "2/m"
    statuses = [client.post("/mcp", body, HTTP_AUTHORIZATION=f"Bearer {good}", **headers).status_code for _ in range(3)]
    assert statuses == [200, 200, 429]
    refused = client.post("/mcp", body, HTTP_AUTHORIZATION=f"Bearer {good}", **headers)
    assert refused["Retry-After"].isdigit()
    assert refused.json()["error"]["message"].startswith("Too many requests for this account or address")

    settings.KYBERNESIS_API_RATE = ""
    settings.KYBERNESIS_API_AUTH_FAILURE_RATE = "1/m"
    assert client.post("/mcp", body, HTTP_AUTHORIZATION="Bearer kyb_wrong", **headers).status_code == 401
    locked = client.post("/mcp", body, HTTP_AUTHORIZATION=f"Bearer {good}", **headers)
    assert locked.status_code == 429 and "wrong API tokens" in locked.json()["error"]["message"]


def test_the_ninja_throttle_keeps_its_wait_per_thread(rf):
    throttle = throttling.ApiRateThrottle()
    throttle._local.wait = 7
    seen = []
    thread = threading.Thread(target=lambda: seen.append(throttle.wait()))
    thread.start()
    thread.join()
    assert seen == [None] and throttle.wait() == 7


@pytest.mark.django_db
def test_a_revoked_token_from_a_locked_out_address_is_refused_as_a_guess_would_be(client, user, settings):
    # The lookup reads the address's wrong-token count in the token's own statement; the lock-out is
    # decided before anything about the token is said, so the 429 tells a guesser nothing.
    settings.KYBERNESIS_API_AUTH_FAILURE_RATE = "2/m"
    token, revoked = api_token_create(user=user)
    api_token_revoke(token=token)
    assert client.get("/api/v1/memories", HTTP_AUTHORIZATION=f"Bearer {revoked}").status_code == 401
    for i in range(2):
        client.get("/api/v1/memories", HTTP_AUTHORIZATION=f"Bearer kyb_wrong{i}")
    assert client.get("/api/v1/memories", HTTP_AUTHORIZATION=f"Bearer {revoked}").status_code == 429


@pytest.mark.django_db
def test_a_working_token_costs_one_statement_with_the_address_count_in_it(user, settings, django_assert_num_queries):
    from core.auth import api_token_find

    settings.KYBERNESIS_API_AUTH_FAILURE_RATE = "5/m"
    _, key = api_token_create(user=user)
    api_token_find(key)  # the first use writes last_used_at (at most once a minute)
    with django_assert_num_queries(1):
        token = api_token_find(key, failure_key="auth-failure:10.0.0.1")
    assert token.user == user and token.user.is_active

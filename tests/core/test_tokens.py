"""core.tokens: scopes and expiry dates as people type them, creating and revoking tokens, the
create_api_token command, and the upgrade that leaves every existing token its full scope."""

from __future__ import annotations

from datetime import UTC, date, datetime, timedelta
from io import StringIO

import pytest
from django.contrib.auth import get_user_model
from django.core.management import CommandError, call_command
from django.db import connection
from django.db.migrations.executor import MigrationExecutor
from django.http import Http404
from django.utils import timezone

from core.auth import TokenRefused, api_token_find
from core.models import ApiToken, TokenScope
from core.tokens import (
    TokenInputError,
    api_token_create,
    api_token_get,
    api_token_revoke,
    expiry_parse,
    scopes_clean,
)
from tests.factories import UserFactory

NOW = datetime(2026, 12, 3, 17, 0, tzinfo=UTC)


# --- Scopes as typed -----------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("given", "scopes"),
    [
        (["read"], ["read"]),
        (["write"], ["write"]),
        (["write", "read"], ["read", "write"]),  # canonical order
        ("read,write", ["read", "write"]),
        (["read, write"], ["read", "write"]),
        (["READ"], ["read"]),
        (["read", "read"], ["read"]),
        ([" read ", ""], ["read"]),
    ],
)
def test_scopes_are_named_in_any_order_and_case_and_come_out_canonical(given, scopes):
    assert scopes_clean(given) == scopes


@pytest.mark.parametrize("given", [["admin"], ["read", "delete"], "read,everything", ["*"]])
def test_an_unknown_scope_is_refused_by_name(given):
    with pytest.raises(TokenInputError, match="unknown scope") as caught:
        scopes_clean(given)
    assert caught.value.field == "scopes"
    assert "read and write" in str(caught.value)


@pytest.mark.parametrize("given", [[], "", None, [" , "]])
def test_no_scope_at_all_is_refused(given):
    with pytest.raises(TokenInputError, match="at least one scope"):
        scopes_clean(given)


def test_a_huge_unknown_scope_is_named_shortly():
    with pytest.raises(TokenInputError) as caught:
        scopes_clean(["x" * 10_000])
    assert len(str(caught.value)) < 200


# --- Expiry as typed -----------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("text", "after"),
    [("30d", timedelta(days=30)), ("2w", timedelta(days=14)), ("6m", timedelta(days=180)), ("1y", timedelta(days=365))],
)
def test_a_period_counts_from_now(text, after):
    assert expiry_parse(text, now=NOW) == NOW + after


@pytest.mark.parametrize("text", ["", "  ", None, "never", "NEVER"])
def test_no_expiry(text):
    assert expiry_parse(text, now=NOW) is None


def test_a_date_means_through_the_end_of_that_day():
    assert expiry_parse("2026-12-31", now=NOW) == datetime(2026, 12, 31, 23, 59, 59, tzinfo=UTC)
    assert expiry_parse(date(2026, 12, 3), now=NOW) == datetime(2026, 12, 3, 23, 59, 59, tzinfo=UTC)


def test_a_date_in_the_servers_time_zone(settings):
    settings.TIME_ZONE = "Europe/Berlin"
    with timezone.override("Europe/Berlin"):
        assert expiry_parse("2026-12-31", now=NOW).astimezone(UTC) == datetime(2026, 12, 31, 22, 59, 59, tzinfo=UTC)


@pytest.mark.parametrize("text", ["2026-12-02", "2020-01-01", date(2026, 12, 2)])
def test_a_past_date_is_refused(text):
    with pytest.raises(TokenInputError, match="in the past") as caught:
        expiry_parse(text, now=NOW)
    assert caught.value.field == "expires"


@pytest.mark.parametrize("text", ["0d", "tomorrow", "31/12/2026", "2026-02-30", "-5d", "5 days", "1h"])
def test_what_is_no_expiry_says_how_to_write_one(text):
    with pytest.raises(TokenInputError, match=r"past|YYYY-MM-DD"):
        expiry_parse(text, now=NOW)


def test_a_period_past_any_date_is_refused():
    with pytest.raises(TokenInputError, match="further away than any date"):
        expiry_parse("999999y", now=NOW)


# --- Creating and revoking -----------------------------------------------------------------------


def test_a_token_made_without_scopes_may_read_and_write(db):
    token, key = api_token_create(user=UserFactory())
    assert token.scopes == ["read", "write"]
    assert key.startswith("kyb_") and token.key_hash == ApiToken.hash_key(key) and key not in token.key_hash


def test_a_token_keeps_its_scopes_and_expiry(db):
    expires = timezone.now() + timedelta(days=3)
    token, key = api_token_create(user=UserFactory(), name="agent", scopes=["read"], expires_at=expires)
    token.refresh_from_db()
    assert token.scopes == ["read"] and token.expires_at == expires
    assert api_token_find(key) == token


def test_a_name_can_be_kept_unique_among_the_working_tokens_of_one_user(db):
    owner, other = UserFactory(), UserFactory()
    first, _ = api_token_create(user=owner, name="laptop", unique_name=True)
    with pytest.raises(TokenInputError, match="already have a working token named 'laptop'"):
        api_token_create(user=owner, name="laptop", unique_name=True)
    api_token_create(user=other, name="laptop", unique_name=True)  # someone else's name is theirs
    api_token_revoke(token=first)
    api_token_create(user=owner, name="laptop", unique_name=True)  # a revoked token's name is free again
    api_token_create(user=owner, name="laptop")  # a script's token of the same name on each run is not refused
    assert ApiToken.objects.filter(user=owner).count() == 3


def test_a_name_too_long_or_an_expiry_already_past_is_refused(db):
    with pytest.raises(TokenInputError, match="at most 100"):
        api_token_create(user=UserFactory(), name="x" * 101)
    with pytest.raises(TokenInputError, match="past"):
        api_token_create(user=UserFactory(), expires_at=timezone.now() - timedelta(seconds=1))
    assert not ApiToken.objects.exists()


def test_an_expired_token_is_refused_with_its_date(db):
    token, key = api_token_create(user=UserFactory(), expires_at=timezone.now() + timedelta(days=1))
    ApiToken.objects.filter(pk=token.pk).update(expires_at=datetime(2026, 1, 31, 23, 59, 59, tzinfo=UTC))
    with pytest.raises(TokenRefused) as caught:
        api_token_find(key)
    assert caught.value.reason == "this API token expired on 2026-01-31 23:59 UTC"
    assert caught.value.status_code == 401


def test_a_revoked_token_is_refused_at_once_and_revoking_twice_changes_nothing(db):
    token, key = api_token_create(user=UserFactory())
    api_token_revoke(token=token)
    first = token.revoked_at
    api_token_revoke(token=token)
    token.refresh_from_db()
    assert token.revoked_at == first and token.state == "revoked"
    with pytest.raises(TokenRefused, match="this API token was revoked on"):
        api_token_find(key)


def test_another_users_token_is_absent(db):
    owner, other = UserFactory(), UserFactory()
    token, _ = api_token_create(user=owner)
    assert api_token_get(user=owner, token_id=token.pk) == token
    for token_id in (token.pk, 0, -1, 2**63, 10**30):
        with pytest.raises(Http404):
            api_token_get(user=other, token_id=token_id)


def test_last_use_is_written_at_most_once_a_minute(db, django_assert_num_queries):
    token, key = api_token_create(user=UserFactory())
    with django_assert_num_queries(2):  # the lookup, and the first use
        api_token_find(key)
    token.refresh_from_db()
    first = token.last_used_at
    assert first is not None
    with django_assert_num_queries(1):  # within the minute: the lookup only
        api_token_find(key)
    ApiToken.objects.filter(pk=token.pk).update(last_used_at=first - timedelta(minutes=2))
    api_token_find(key)
    token.refresh_from_db()
    assert token.last_used_at > first


# --- The command ---------------------------------------------------------------------------------


def _command(*args) -> tuple[str, str]:
    out, err = StringIO(), StringIO()
    call_command("create_api_token", *args, stdout=out, stderr=err)
    return out.getvalue().strip().splitlines()[-1], err.getvalue()


@pytest.mark.parametrize(
    ("args", "scopes"),
    [
        ((), ["read", "write"]),
        (("--scope", "read"), ["read"]),
        (("--scope", "read", "--scope", "write"), ["read", "write"]),
        (("--scope", "write,read"), ["read", "write"]),
        (("--scope", "write"), ["write"]),
    ],
)
def test_the_command_gives_the_scopes_asked_for(db, args, scopes):
    user = UserFactory()
    key, err = _command(user.username, *args)
    token = api_token_find(key)
    assert token.scopes == scopes
    assert f"scopes: {', '.join(scopes)}" in err and "no expiry" in err


def test_the_command_sets_an_expiry_from_a_date_or_a_period(db):
    user = UserFactory()
    key, err = _command(user.username, "--name", "ci", "--expires", "30d")
    token = api_token_find(key)
    assert timedelta(days=29, hours=23) < token.expires_at - timezone.now() <= timedelta(days=30)
    assert "until " in err
    future = (timezone.localdate() + timedelta(days=2)).isoformat()
    key, _ = _command(user.username, "--expires", future)
    assert timezone.localdate(api_token_find(key).expires_at).isoformat() == future


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (("--scope", "admin"), "--scope: unknown scope 'admin'"),
        (("--scope", ","), "--scope: give a token at least one scope"),
        (("--expires", "2020-01-01"), "--expires: the expiry date 2020-01-01 is in the past"),
        (("--expires", "soon"), "--expires: 'soon' is not an expiry"),
        (("--expires", "0d"), "--expires: an expiry of 0 days is already past"),
    ],
)
def test_the_command_refuses_a_bad_scope_or_expiry_and_creates_nothing(db, args, message):
    with pytest.raises(CommandError) as caught:
        _command("newcomer", "--create-user", *args)
    assert str(caught.value).startswith(message)
    assert not get_user_model().objects.filter(username="newcomer").exists()
    assert not ApiToken.objects.exists()


def test_the_command_run_twice_with_one_name_makes_two_tokens(db):
    user = UserFactory()
    first, _ = _command(user.username, "--name", "deploy")
    second, _ = _command(user.username, "--name", "deploy")
    assert first != second and ApiToken.objects.filter(name="deploy").count() == 2


# --- The upgrade ---------------------------------------------------------------------------------


@pytest.mark.django_db(transaction=True)
def test_tokens_made_before_scopes_existed_keep_full_scope():
    user = UserFactory()
    executor = MigrationExecutor(connection)
    before, after = [("core", "0004_rate_counter")], executor.loader.graph.leaf_nodes("core")
    executor.migrate(before)
    try:
        with connection.cursor() as cursor:
            cursor.execute(
                "INSERT INTO memories_apitoken (user_id, name, prefix, key_hash, created_at)"
                " VALUES (%s, 'old', 'kyb_old', %s, now())",
                [user.pk, ApiToken.hash_key("kyb_old_token")],
            )
    finally:
        executor = MigrationExecutor(connection)
        executor.loader.build_graph()
        executor.migrate(after)
    token = ApiToken.objects.get(name="old")
    assert token.scopes == list(TokenScope.ALL)
    assert token.expires_at is None and token.revoked_at is None
    assert api_token_find("kyb_old_token") == token

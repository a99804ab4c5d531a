"""Management commands: create_api_token and the bench_ingest benchmark."""

from __future__ import annotations

import json
from io import StringIO

import pytest
from django.contrib.auth import get_user_model
from django.core.management import CommandError, call_command
from django.test import Client

from core.models import ApiToken
from memories.models import Memory

pytestmark = pytest.mark.django_db


def test_create_api_token_prints_a_working_token_on_its_last_line(user):
    out = StringIO()
    call_command("create_api_token", user.username, stdout=out, stderr=StringIO())
    token = out.getvalue().strip().splitlines()[-1]
    assert ApiToken.objects.get(user=user).key_hash == ApiToken.hash_key(token)
    response = Client().get("/api/v1/memories", HTTP_AUTHORIZATION=f"Bearer {token}")
    assert response.status_code == 200


def test_create_api_token_finds_users_by_email(user):
    out = StringIO()
    call_command("create_api_token", user.email.upper(), stdout=out, stderr=StringIO())
    assert ApiToken.objects.filter(user=user).count() == 1


def test_create_api_token_refuses_an_unknown_user_unless_asked_to_create_it():
    with pytest.raises(CommandError):
        call_command("create_api_token", "ghost", stdout=StringIO(), stderr=StringIO())
    call_command("create_api_token", "ghost", "--create-user", stdout=StringIO(), stderr=StringIO())
    ghost = get_user_model().objects.get(username="ghost")
    assert not ghost.has_usable_password()
    assert ApiToken.objects.filter(user=ghost).exists()


@pytest.mark.parametrize(
    "concurrency",
    [
        pytest.param("1"),
        # worker threads have their own connections: they must see committed rows
        pytest.param("2", marks=pytest.mark.django_db(transaction=True)),
    ],
)
def test_bench_ingest_runs_end_to_end_and_ends_with_json(concurrency):
    out = StringIO()
    call_command("bench_ingest", "--docs", "3", "--doc-chars", "1500", "--concurrency", concurrency, stdout=out)
    result = json.loads(out.getvalue().strip().splitlines()[-1])
    assert result["docs"] == 3 and result["chunks"] >= 3
    assert result["concurrency"] == int(concurrency)
    assert {
        "backend",
        "docs",
        "concurrency",
        "chunks",
        "seconds",
        "chunks_per_s",
        "encode_only_chunks_per_s",
        "overhead_ratio",
        "encode_batched_chunks_per_s",
        "batched_overhead_ratio",
    } == set(result)
    assert result["overhead_ratio"] > 0 and result["batched_overhead_ratio"] > 0
    assert not Memory.objects.exists()

"""The create_api_token management command."""

from __future__ import annotations

from io import StringIO

import pytest
from django.contrib.auth import get_user_model
from django.core.management import CommandError, call_command
from django.test import Client

from core.models import ApiToken

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

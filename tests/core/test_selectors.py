"""core.selectors.user_find: the one way the management commands find a user."""

from __future__ import annotations

import pytest

from core.selectors import user_find
from tests.factories import UserFactory

pytestmark = pytest.mark.django_db


def test_a_user_is_found_by_username_or_email_in_any_case():
    alice = UserFactory(username="alice", email="Alice@Example.com")
    assert user_find("alice") == alice
    assert user_find("alice@example.COM") == alice
    assert user_find("nobody") is None


def test_an_id_finds_a_user_only_when_asked():
    alice = UserFactory(username="alice")
    assert user_find(str(alice.pk)) is None
    assert user_find(str(alice.pk), by_id=True) == alice


def test_the_oldest_account_wins_when_a_username_is_another_users_email():
    first = UserFactory(username="shared@example.com", email="first@example.com")
    UserFactory(username="second", email="shared@example.com")
    assert user_find("shared@example.com") == first

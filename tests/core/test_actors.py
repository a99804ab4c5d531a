"""core.actors: who a change is made by, per door, and that it never leaks from one request to the next."""

from __future__ import annotations

import threading

import pytest
from django.test import RequestFactory

from core import actors
from core.actors import SYSTEM, Actor, ActorKind, ActorMiddleware, acting, current_actor


def test_outside_any_door_the_actor_is_the_system():
    assert current_actor() == SYSTEM


def test_acting_nests_and_restores():
    with acting(actors.SLEEP_AGENT):
        assert current_actor().kind == ActorKind.SLEEP
        with acting(Actor.connector("Google Drive")):
            assert current_actor().display == "Google Drive"
        assert current_actor().kind == ActorKind.SLEEP
    assert current_actor() == SYSTEM


def test_a_lazy_actor_is_made_once_on_first_use():
    made = []

    def make():
        made.append(1)
        return Actor.importer("ChatGPT export")

    with acting(make):
        assert current_actor().label == "ChatGPT export"
        assert current_actor().label == "ChatGPT export"
    assert made == [1]


def test_another_thread_does_not_see_this_threads_actor():
    seen = []
    with acting(actors.SLEEP_AGENT):
        thread = threading.Thread(target=lambda: seen.append(current_actor()))
        thread.start()
        thread.join()
    assert seen == [SYSTEM]


@pytest.mark.django_db
def test_the_middleware_acts_for_the_signed_in_person_and_resets(django_user_model):
    user = django_user_model.objects.create_user("ada", password="x")
    seen = []

    def view(request):
        seen.append(current_actor())
        return None

    for path in ("/memories/", "/admin/memories/memory/"):
        request = RequestFactory().get(path)
        request.user = user
        ActorMiddleware(view)(request)
    assert [a.kind for a in seen] == [ActorKind.PERSON, ActorKind.ADMIN]
    assert seen[0].user_id == user.pk and seen[0].label == "ada"
    assert current_actor() == SYSTEM


def test_a_token_actor_names_the_token():
    class Token:
        pk, user_id, name, prefix = 3, 7, "laptop", "kyb_abcdefgh"

    assert Actor.api_token(Token()).label == "API token 'laptop'"
    assert Actor.api_token(Token(), via_mcp=True).kind == ActorKind.MCP
    assert Actor.api_token(Token()).as_dict() == {
        "kind": "token",
        "label": "API token 'laptop'",
        "userId": 7,
        "tokenId": 3,
    }

"""factory_boy factories. Memories go through the real service so chunks and embeddings exist."""

from __future__ import annotations

import factory
from django.contrib.auth import get_user_model

from memories.services import memory_create


class UserFactory(factory.django.DjangoModelFactory):
    class Meta:
        model = get_user_model()

    username = factory.Sequence(lambda n: f"user{n}")
    email = factory.LazyAttribute(lambda o: f"{o.username}@example.com")
    password = factory.django.Password("correct horse battery staple")


def make_memory(owner, content: str = "A short note about the quarterly budget review.", **kwargs):
    kwargs.setdefault("title", "")
    return memory_create(owner=owner, content=content, **kwargs)

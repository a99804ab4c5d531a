"""A memory whose keyword extraction fails (YAKE's tokenizer on odd text) is still stored, with its
structural tags, and stays due for the sleep agent's tag step to try again."""

from __future__ import annotations

import pytest

from memories import auto_tags
from memories.auto_tags import needs_retag
from memories.models import Memory
from memories.services import memory_create

pytestmark = pytest.mark.django_db


def test_a_tokenizer_error_keeps_the_memory_and_leaves_it_due(user, monkeypatch):
    def broken(text, *, limit):
        raise TypeError("expected string or bytes-like object")

    monkeypatch.setattr(auto_tags, "content_keywords", broken)
    memory = memory_create(owner=user, title="odd", content="Some odd text.", metadata={"extension": "md"})
    stored = Memory.objects.get(pk=memory.pk)
    assert [t["tag"] for t in stored.auto_tags] == ["upload", "md"]
    assert stored.chunks.exists()
    assert needs_retag(
        auto_tagged_at=stored.auto_tagged_at,
        auto_tagged_hash=stored.auto_tagged_hash,
        content_hash=stored.content_hash,
        now=stored.created_at,
    )

"""Restore on real documents nobody on the team wrote: the long descriptions (README files) of the
installed packages, read from their dist-info METADATA. Each memory starts as one package's README,
is edited into another's, and is restored: it must be field-for-field its old self, and a search for
a sentence of the old text must find it first."""

from __future__ import annotations

import importlib.metadata
import re

import pytest

from memories import services
from memories.models import VERSIONED_FIELDS, Memory
from memories.search import hybrid_search
from memories.services.restore import memory_version_restore
from tests.factories import make_memory

pytestmark = [pytest.mark.slow, pytest.mark.real_embedder, pytest.mark.django_db]

DOCUMENTS = 12


def readmes(count: int) -> list[tuple[str, str]]:
    found: dict[str, str] = {}
    for dist in sorted(importlib.metadata.distributions(), key=lambda d: (d.metadata["Name"] or "").lower()):
        name, body = dist.metadata["Name"], dist.metadata.get_payload() or ""
        if name and 2_000 <= len(body) <= 30_000 and name not in found:
            found[name] = body
    return sorted(found.items())[:count]


def probe(text: str) -> str:
    """A sentence of the text long enough to name it: the longest line of plain words."""
    lines = [line.strip() for line in text.splitlines() if re.fullmatch(r"[A-Za-z ,.'-]{60,200}", line.strip())]
    return max(lines, key=len) if lines else text[:160]


def test_real_readmes_edited_and_restored_lose_nothing_and_are_found_again(user):
    docs = readmes(DOCUMENTS + 1)
    assert len(docs) > DOCUMENTS // 2, "too few package READMEs installed to run on"
    memories = [make_memory(user, body, title=name) for name, body in docs[:-1]]
    differences, found_first = 0, 0
    for i, memory in enumerate(memories):
        memory.refresh_from_db()
        before = {name: getattr(memory, name) for name in VERSIONED_FIELDS}
        other_name, other_body = docs[i + 1]
        services.memory_update(memory=memory, title=other_name, content=other_body, manual_tags=["edited"])
        restored = memory_version_restore(memory=memory, number=1)
        restored = Memory.objects.get(pk=restored.pk)
        differences += {name: getattr(restored, name) for name in VERSIONED_FIELDS} != before
    for memory, (_, body) in zip(memories, docs, strict=False):
        results = hybrid_search(user.pk, probe(body), limit=3).results
        found_first += bool(results) and results[0].memory_id == memory.pk
    print(f"real READMEs: {len(memories)} restored, {differences} differences, {found_first} found first")
    assert differences == 0
    assert found_first >= len(memories) * 0.9

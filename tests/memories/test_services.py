"""memory_create / memory_update / memory_delete: validation, chunking, embedding, atomicity."""

from __future__ import annotations

import numpy as np
import pytest

from memories import embedding, services
from memories.models import Memory, MemoryChunk, content_hash
from memories.services import MemoryInput, MemoryInputError, MemoryTooLargeError, chunk_copy, memory_create
from memories.services.memory import chunks_for
from tests.factories import make_memory

pytestmark = pytest.mark.django_db

LONG_TEXT = "\n\n".join(
    " ".join(f"Paragraph {p} sentence {s} explains the engineering priorities for the quarter." for s in range(8))
    for p in range(12)
)


def test_memory_create_stores_the_memory_and_every_chunk_with_an_embedding(user):
    memory = memory_create(owner=user, title="Roadmap", content=LONG_TEXT, manual_tags=[" Q1 Planning "])
    chunks = list(MemoryChunk.objects.filter(memory=memory))
    assert memory.chunk_count == len(chunks) > 3
    assert all(len(c.text) <= 1200 for c in chunks)
    assert all(c.owner_id == user.pk and c.tier == memory.tier for c in chunks)
    vectors = np.array([c.embedding for c in chunks])
    assert vectors.shape == (len(chunks), 384)
    assert np.allclose(np.linalg.norm(vectors, axis=1), 1.0, atol=1e-3)
    memory.refresh_from_db()
    assert memory.manual_tags == ["q1-planning"]
    assert memory.tags[0] == "q1-planning" and "upload" in memory.tags
    assert memory.auto_tags[0] == {"tag": "upload", "confidence": 1.0}
    assert memory.content_hash == content_hash(LONG_TEXT)


def test_chunk_embeddings_match_the_model_on_the_same_text(user):
    memory = make_memory(user, content="Alice works with the Product Team in San Francisco.")
    chunk = memory.chunks.get()
    assert np.allclose(chunk.embedding, embedding.embed_query(chunk.text), atol=1e-4)


def test_a_missing_title_becomes_the_first_line_of_the_content(user):
    memory = memory_create(owner=user, title="  ", content="\n  Meeting notes: launch plan  \nmore text")
    assert memory.title == "Meeting notes: launch plan"


def test_a_failure_while_embedding_leaves_no_memory_row(user, monkeypatch):
    def broken(*args, **kwargs):
        raise RuntimeError("model crashed")

    monkeypatch.setattr(embedding, "embed_texts", broken)
    with pytest.raises(RuntimeError):
        memory_create(owner=user, title="t", content=LONG_TEXT)
    assert not Memory.objects.filter(owner=user).exists()


def test_a_failure_while_storing_chunks_rolls_back_the_memory(user, monkeypatch):
    # The COPY of the chunks breaks after its first row is sent: nothing of the memory is kept.
    sent = []

    def broken(vector):
        if sent:
            raise RuntimeError("disk full")
        sent.append(vector)
        return real(vector)

    real = chunk_copy.vector_binary
    monkeypatch.setattr(chunk_copy, "vector_binary", broken)
    with pytest.raises(RuntimeError):
        memory_create(owner=user, title="t", content=LONG_TEXT)
    assert not Memory.objects.filter(owner=user).exists()
    assert not MemoryChunk.objects.filter(owner=user).exists()


@pytest.mark.parametrize(
    ("kwargs", "error", "field"),
    [
        ({"content": ""}, MemoryInputError, "content"),
        ({"content": " \n\t "}, MemoryInputError, "content"),
        ({"content": "a\x00b"}, MemoryInputError, "content"),
        ({"content": "ok", "priority": 1.5}, MemoryInputError, "priority"),
        ({"content": "ok", "priority": -0.1}, MemoryInputError, "priority"),
        ({"content": "ok", "source": "email"}, MemoryInputError, "source"),
        ({"content": "ok", "title": "t" * 501}, MemoryInputError, "title"),
        ({"content": "ok", "manual_tags": [""]}, MemoryInputError, "tags"),
        ({"content": "ok", "manual_tags": ["x" * 65]}, MemoryInputError, "tags"),
        ({"content": "ok", "manual_tags": [f"t{i}" for i in range(51)]}, MemoryInputError, "tags"),
        ({"content": "ok", "metadata": ["not", "a", "dict"]}, MemoryInputError, "metadata"),
    ],
)
def test_bad_input_is_refused_and_stores_nothing(user, kwargs, error, field):
    kwargs.setdefault("title", "t")
    with pytest.raises(error) as excinfo:
        memory_create(owner=user, **kwargs)
    assert excinfo.value.field == field
    assert not Memory.objects.exists()


def test_content_over_the_limit_is_too_large(user, settings):
    settings.KYBERNESIS_MAX_MEMORY_CHARS = 1000
    with pytest.raises(MemoryTooLargeError) as excinfo:
        memory_create(owner=user, title="big", content="x" * 1001)
    assert excinfo.value.status == 413
    assert not Memory.objects.exists()


def test_a_batch_embeds_once_and_keeps_input_order(user, monkeypatch):
    calls = []
    real = embedding.embed_texts
    monkeypatch.setattr(embedding, "embed_texts", lambda texts, **kw: calls.append(len(texts)) or real(texts, **kw))
    items = [MemoryInput(title=f"note {i}", content=f"Note number {i} about topic {i}.") for i in range(5)]
    memories = services.memory_create_many(owner=user, items=items)
    assert [m.title for m in memories] == [f"note {i}" for i in range(5)]
    assert calls == [5]
    assert MemoryChunk.objects.filter(owner=user).count() == 5


def test_one_bad_item_refuses_the_whole_batch_and_is_named(user):
    items = [
        MemoryInput(title="a", content="fine"),
        MemoryInput(title="b", content="   "),
        MemoryInput(title="c", content="also fine"),
    ]
    with pytest.raises(MemoryInputError) as excinfo:
        services.memory_create_many(owner=user, items=items)
    assert excinfo.value.index == 1 and "item 1" in str(excinfo.value)
    assert not Memory.objects.exists()


def test_a_batch_over_the_limit_is_refused(user, settings):
    settings.KYBERNESIS_MAX_BATCH_ITEMS = 3
    with pytest.raises(MemoryInputError):
        services.memory_create_many(owner=user, items=[MemoryInput(title="x", content="y")] * 4)


def test_update_with_the_same_content_neither_rechunks_nor_embeds(user, monkeypatch):
    memory = memory_create(owner=user, title="t", content=LONG_TEXT)
    chunk_ids = set(memory.chunks.values_list("id", flat=True))
    monkeypatch.setattr(embedding, "embed_texts", lambda *a, **k: pytest.fail("must not embed"))
    updated = services.memory_update(memory=memory, content=LONG_TEXT, title="t", priority=0.9)
    assert (updated.title, updated.priority) == ("t", 0.9)
    assert set(updated.chunks.values_list("id", flat=True)) == chunk_ids


def test_a_new_title_re_embeds_each_chunk_once_with_its_title_context(user, monkeypatch):
    # The title is embedded with every chunk ("title — chunk text"), so renaming changes what to embed.
    memory = memory_create(owner=user, title="t", content=LONG_TEXT)
    embedded = []
    real = embedding.embed_texts
    monkeypatch.setattr(embedding, "embed_texts", lambda texts, **kw: embedded.extend(texts) or real(texts, **kw))
    updated = services.memory_update(memory=memory, content=LONG_TEXT, title="Renamed")
    assert updated.title == "Renamed" and len(embedded) == updated.chunk_count
    assert all(text.startswith("Renamed — ") for text in embedded)
    embedded.clear()
    services.memory_update(memory=updated, title="Renamed")
    assert embedded == []


def test_update_with_new_content_embeds_only_the_changed_chunks(user, monkeypatch):
    memory = memory_create(owner=user, title="t", content=LONG_TEXT)
    embedded = []
    real = embedding.embed_texts
    monkeypatch.setattr(embedding, "embed_texts", lambda texts, **kw: embedded.extend(texts) or real(texts, **kw))
    new_content = LONG_TEXT + "\n\nA brand new closing paragraph about hiring."
    updated = services.memory_update(memory=memory, content=new_content)
    assert updated.content_hash == content_hash(new_content)
    assert updated.chunks.last().text.endswith("hiring.")
    assert 0 < len(embedded) < updated.chunk_count
    assert updated.chunk_count == len(chunks_for(new_content))


def test_update_keeps_the_combined_tags_in_step(user):
    memory = memory_create(owner=user, title="t", content="text", manual_tags=["alpha"])
    updated = services.memory_update(memory=memory, manual_tags=["Beta Tag"])
    assert updated.manual_tags == ["beta-tag"]
    assert updated.tags == ["beta-tag", "upload", "text"]


def test_update_refuses_bad_values_and_changes_nothing(user):
    memory = memory_create(owner=user, title="t", content="text", priority=0.4)
    with pytest.raises(MemoryInputError):
        services.memory_update(memory=memory, priority=2, title="changed")
    memory.refresh_from_db()
    assert (memory.title, memory.priority) == ("t", 0.4)


def test_delete_moves_the_memory_to_the_trash_and_a_purge_removes_it_and_its_chunks(user):
    memory = memory_create(owner=user, title="t", content=LONG_TEXT)
    services.memory_delete(memory=memory)
    assert not Memory.objects.exists() and Memory.all_objects.filter(pk=memory.pk).exists()
    services.memory_purge(owner=user, memory_id=memory.pk)
    assert not Memory.all_objects.exists()
    assert not MemoryChunk.objects.exists()

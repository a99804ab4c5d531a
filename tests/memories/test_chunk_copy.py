"""Chunks written by binary COPY (memories.services.chunk_copy): what is stored, and what is refused."""

from __future__ import annotations

import numpy as np
import pytest
from django.db import DataError, IntegrityError, transaction
from django.db.models.fields import AutoFieldMixin

from memories.embedding import EMBEDDING_DIMENSIONS
from memories.models import MemoryChunk
from memories.services.chunk_copy import _columns, chunks_insert
from tests.factories import make_memory

pytestmark = pytest.mark.django_db


def a_row(memory, position: int, vector, **fields) -> MemoryChunk:
    text = fields.pop("text", f"Chunk {position} of the harbour log, with the tide at {position} metres.")
    return MemoryChunk(
        owner_id=memory.owner_id,
        memory=memory,
        position=position,
        text=text,
        char_start=0,
        char_end=len(text),
        text_hash="h" * 64,
        embedding=vector,
        embedding_model="test-model",
        embedding_key="k" * 64,
        tier=memory.tier,
        language=fields.pop("language", "en"),
        **fields,
    )


def unit(seed: int) -> np.ndarray:
    vector = np.random.default_rng(seed).standard_normal(EMBEDDING_DIMENSIONS).astype(np.float32)
    return vector / np.linalg.norm(vector)


def test_every_column_of_a_chunk_is_written_but_the_key_and_the_generated_one():
    names, _, types = _columns()
    expected = [
        f.attname
        for f in MemoryChunk._meta.concrete_fields
        if not isinstance(f, AutoFieldMixin) and not getattr(f, "generated", False)
    ]
    assert list(names) == expected
    assert "search_vector" not in names and "id" not in names
    assert dict(zip(names, types, strict=True))["embedding"] == "bytea"


def test_copied_chunks_read_back_as_they_were_given(user):
    memory = make_memory(user, content="The harbour log.")
    MemoryChunk.objects.filter(memory=memory).delete()
    given = [unit(1), unit(2).tolist(), unit(3).astype(np.float64)]  # arrays, a list (as read back), float64
    with transaction.atomic():
        chunks_insert([a_row(memory, i, v, language=None if i == 2 else "en") for i, v in enumerate(given)])
    stored = list(MemoryChunk.objects.filter(memory=memory).order_by("position"))
    assert [c.position for c in stored] == [0, 1, 2]
    for chunk, vector in zip(stored, given, strict=True):
        assert np.allclose(np.asarray(chunk.embedding), np.asarray(vector, dtype=np.float32), atol=1e-7)
        assert chunk.owner_id == user.pk and chunk.embedding_model == "test-model" and chunk.pk is not None
    assert [c.language for c in stored] == ["en", "en", None]
    assert stored[0].text.startswith("Chunk 0 of the harbour log")
    # The generated column is filled in by PostgreSQL as for an INSERT: the text is searchable.
    assert MemoryChunk.objects.filter(memory=memory, search_vector="tide").count() == 3


def test_nothing_is_sent_for_no_rows():
    chunks_insert([])


@pytest.mark.parametrize(
    "vector",
    [
        np.full(EMBEDDING_DIMENSIONS, np.nan, dtype=np.float32),
        np.ones(EMBEDDING_DIMENSIONS - 1, dtype=np.float32),
    ],
    ids=["nan", "wrong-dimensions"],
)
def test_a_vector_postgresql_refuses_is_a_data_error_and_nothing_is_kept(user, vector):
    memory = make_memory(user, content="The harbour log.")
    before = MemoryChunk.objects.filter(memory=memory).count()
    with pytest.raises(DataError), transaction.atomic():
        chunks_insert([a_row(memory, 10, unit(4)), a_row(memory, 11, vector)])
    assert MemoryChunk.objects.filter(memory=memory).count() == before


def test_a_position_taken_twice_is_an_integrity_error(user):
    memory = make_memory(user, content="The harbour log.")
    taken = MemoryChunk.objects.filter(memory=memory).values_list("position", flat=True).first()
    with pytest.raises(IntegrityError), transaction.atomic():
        chunks_insert([a_row(memory, taken, unit(5))])


def test_a_two_dimensional_vector_is_refused_before_anything_is_sent(user):
    memory = make_memory(user, content="The harbour log.")
    with pytest.raises(ValueError, match="one-dimensional"), transaction.atomic():
        chunks_insert([a_row(memory, 20, np.ones((2, EMBEDDING_DIMENSIONS), dtype=np.float32))])

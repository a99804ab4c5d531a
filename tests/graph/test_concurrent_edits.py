"""Edits that race a delete or the graph task: a concurrent delete is a 404 rather than a 500, and the
graph holds nothing of a memory edited or deleted after its chunks were read. Many such edits in real
threads are tests/bench/test_stress_edits.py."""

from __future__ import annotations

import pytest

from graph.models import EntityMention
from memories.models import Memory, MemoryChunk

pytestmark = pytest.mark.django_db(transaction=True)


def test_an_edit_of_a_deleted_memory_is_a_404(api, user):
    from tests.factories import make_memory

    memory = make_memory(user, content="Alice Smith met Bob Jones in Paris.")
    assert api.delete(f"/api/v1/memories/{memory.pk}").status_code == 204
    assert api.patch(f"/api/v1/memories/{memory.pk}", {"content": "new"}).status_code == 404
    assert api.delete(f"/api/v1/memories/{memory.pk}").status_code == 404


def test_graph_extraction_skips_a_memory_edited_or_deleted_after_it_was_read(user):
    """The store step re-checks each memory under its row lock: content changed since the chunks
    were read (a newer extraction is queued) or the memory gone means nothing is written for it."""
    from graph.extraction import extract_texts
    from graph.services.ingest import _store_owner_graph
    from memories.services import memory_update
    from tests.factories import make_memory

    kept = make_memory(user, content="Alice Smith met Bob Jones in Paris.")
    edited = make_memory(user, content="Carol Diaz visited Berlin with Dave Brown.")
    gone = make_memory(user, content="Eve Stone flew to Tokyo for Initech.")
    chunks = list(MemoryChunk.objects.filter(memory__in=[kept, edited, gone]).values_list("id", "memory_id", "text"))
    hashes = dict(Memory.objects.filter(pk__in=[kept.pk, edited.pk, gone.pk]).values_list("pk", "content_hash"))
    graphs = extract_texts([text for _, _, text in chunks])
    items = [(chunk_id, memory_id, graph) for (chunk_id, memory_id, _), graph in zip(chunks, graphs, strict=True)]

    memory_update(memory=edited, content="Frank Moore wrote about Zephyr in London.")
    EntityMention.objects.filter(memory=edited).delete()  # as if only the newer extraction had not run yet
    Memory.objects.filter(pk=gone.pk).delete()

    _, written = _store_owner_graph(
        owner_id=user.pk, memory_ids=[kept.pk, edited.pk, gone.pk], items=items, hashes=hashes, entities_seen=set()
    )

    assert written == {kept.pk}
    assert set(EntityMention.objects.values_list("memory_id", flat=True)) == {kept.pk}

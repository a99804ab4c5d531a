"""stress_edits: concurrent edits and deletes of one memory with the worker running, in real threads."""

from __future__ import annotations

import pytest

from bench.management.commands.stress_edits import run_rounds
from graph.models import EntityMention, RelationshipEvidence
from memories.models import TRASH_LAYER, Memory, MemoryChunk

pytestmark = pytest.mark.django_db(transaction=True)


def test_patch_patch_delete_with_the_worker_running_never_fails():
    result = run_rounds(rounds=4, seed=1)

    assert result["errors"] == []
    assert result["server_errors"] == 0
    assert result["conflicts_given_up"] == 0
    statuses = result["statuses"]
    assert set(statuses) <= {"PATCH 200", "PATCH 404", "DELETE 204", "DELETE 404", "worker runs"}
    assert statuses["DELETE 204"] == 4
    assert statuses.get("PATCH 200", 0) + statuses.get("PATCH 404", 0) == 16
    # Every memory was deleted, and nothing of it is left behind in the graph.
    assert not Memory.objects.exists()
    # A delete moves to the trash: the chunks stay, in the trash layer that no index covers.
    assert not MemoryChunk.objects.exclude(tier=TRASH_LAYER).exists()
    assert not EntityMention.objects.exists()
    assert not RelationshipEvidence.objects.exists()

"""A connector sync names itself on the versions and activity of what it stores and changes."""

from __future__ import annotations

import pytest

from connectors.models import ConnectorItem
from memories.models import Activity, MemoryVersion
from tests.connectors.conftest import sync

pytestmark = pytest.mark.django_db


def labels(memory) -> list[str]:
    return [
        (v.pgh_context or {}).get("label")
        for v in MemoryVersion.objects.filter(pgh_obj_id=memory.pk).order_by("version")
    ]


def trail(memory) -> list[tuple[str, str]]:
    return [(a.kind, a.actor_label) for a in Activity.objects.filter(memory=memory).order_by("created_at", "id")]


def test_a_connector_sync_names_the_connector_and_an_update_from_the_source_is_synced(drive_account, fake_google):
    file = fake_google.add_file("Plan.txt", "text/plain", b"The plan is to ship in March.")
    sync(drive_account)
    memory = ConnectorItem.objects.get(account=drive_account, external_id=file.id).memory
    fake_google.edit_file(file.id, content=b"The plan is to ship in April.")
    sync(drive_account)
    assert labels(memory) == ["Google Drive sync", "Google Drive sync"]
    assert [kind for kind, _ in trail(memory)] == ["created", "synced"]
    assert {label for _, label in trail(memory)} == {"Google Drive sync"}

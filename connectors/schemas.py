"""In and Out schemas of the connectors API. JSON keys are camelCase, as in the spec."""

from __future__ import annotations

from datetime import datetime
from typing import Literal

from ninja import Schema
from pydantic import Field

from core.schemas import OutSchema

ItemStatus = Literal["synced", "skipped", "failed", "removed"]


class ItemCountsOut(OutSchema):
    synced: int
    skipped: int
    failed: int
    removed: int


class ConnectorOut(OutSchema):
    id: int
    provider: Literal["google-drive", "notion"]
    provider_name: str
    label: str
    status: Literal["ready", "queued", "syncing", "synced", "error", "reconnect_needed"]
    last_sync_at: datetime | None
    last_error: str | None
    item_counts: ItemCountsOut
    created_at: datetime

    @staticmethod
    def resolve_provider_name(account) -> str:
        return account.get_provider_display()

    @staticmethod
    def resolve_last_error(account) -> str | None:
        return account.last_error or None

    @staticmethod
    def resolve_item_counts(account) -> dict:
        return {
            "synced": account.synced_count,
            "skipped": account.skipped_count,
            "failed": account.failed_count,
            "removed": account.removed_count,
        }


class ConnectorListOut(OutSchema):
    items: list[ConnectorOut]


class ConnectorItemOut(OutSchema):
    id: int
    external_id: str
    title: str
    mime: str
    url: str
    remote_modified_at: datetime | None
    status: ItemStatus
    error: str | None
    memory_id: int | None
    updated_at: datetime

    @staticmethod
    def resolve_error(item) -> str | None:
        return item.error or None


class ConnectorItemsQuery(Schema):
    status: ItemStatus | None = None


class DisconnectQuery(Schema):
    deleteMemories: bool = Field(False, description="Also delete the memories this connector synced.")


class DisconnectOut(OutSchema):
    deleted_memories: int

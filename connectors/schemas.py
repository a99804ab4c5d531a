"""In and Out schemas of the connectors API. JSON keys are camelCase, as in the spec."""

from __future__ import annotations

from datetime import datetime
from typing import Literal

from ninja import Schema
from pydantic import Field

from core.schemas import MAX_OFFSET

ItemStatus = Literal["synced", "skipped", "failed", "removed"]


class ItemCountsOut(Schema):
    synced: int
    skipped: int
    failed: int
    removed: int


class ConnectorOut(Schema):
    id: int
    provider: Literal["google-drive", "notion"]
    providerName: str
    label: str
    status: Literal["ready", "queued", "syncing", "synced", "error", "reconnect_needed"]
    lastSyncAt: datetime | None
    lastError: str | None
    itemCounts: ItemCountsOut
    createdAt: datetime


class ConnectorListOut(Schema):
    items: list[ConnectorOut]


class ConnectorItemOut(Schema):
    id: int
    externalId: str
    title: str
    mime: str
    url: str
    remoteModifiedAt: datetime | None
    status: ItemStatus
    error: str | None
    memoryId: int | None
    updatedAt: datetime


class ConnectorItemPageOut(Schema):
    items: list[ConnectorItemOut]
    count: int
    limit: int
    offset: int


class ConnectorItemsQuery(Schema):
    status: ItemStatus | None = None
    limit: int = Field(50, ge=1, le=500)
    offset: int = Field(0, ge=0, le=MAX_OFFSET)


class DisconnectQuery(Schema):
    deleteMemories: bool = Field(False, description="Also delete the memories this connector synced.")


class DisconnectOut(Schema):
    deletedMemories: int

"""The connectors router: list connectors and their items, trigger a sync, disconnect."""

from __future__ import annotations

from django.http import HttpRequest
from ninja import Query, Router, Status
from ninja.errors import HttpError

from connectors import selectors, services
from connectors.models import ConnectorAccount, ConnectorItem
from connectors.schemas import (
    ConnectorItemPageOut,
    ConnectorItemsQuery,
    ConnectorListOut,
    ConnectorOut,
    DisconnectOut,
    DisconnectQuery,
)
from core.schemas import ErrorOut, Id

router = Router(tags=["connectors"])

ERRORS = {401: ErrorOut, 404: ErrorOut, 422: ErrorOut}


def connector_out(account: ConnectorAccount) -> dict:
    return {
        "id": account.pk,
        "provider": account.provider,
        "providerName": account.get_provider_display(),
        "label": account.label,
        "status": account.status,
        "lastSyncAt": account.last_sync_at,
        "lastError": account.last_error or None,
        "itemCounts": {"synced": account.synced_count, "skipped": account.skipped_count,
                       "failed": account.failed_count, "removed": account.removed_count},
        "createdAt": account.created_at,
    }


def item_out(item: ConnectorItem) -> dict:
    return {"id": item.pk, "externalId": item.external_id, "title": item.title, "mime": item.mime, "url": item.url,
            "remoteModifiedAt": item.remote_modified_at, "status": item.status, "error": item.error or None,
            "memoryId": item.memory_id, "updatedAt": item.updated_at}


@router.get("/connectors", response={200: ConnectorListOut, **ERRORS}, summary="List your connectors")
def list_connectors(request: HttpRequest):
    return {"items": [connector_out(a) for a in selectors.connector_list(user=request.auth)]}


@router.get("/connectors/{connector_id}", response={200: ConnectorOut, **ERRORS}, summary="Read a connector")
def get_connector(request: HttpRequest, connector_id: Id):
    return connector_out(selectors.connector_get(user=request.auth, account_id=connector_id))


@router.get("/connectors/{connector_id}/items", response={200: ConnectorItemPageOut, **ERRORS},
            summary="List a connector's synced items")
def list_items(request: HttpRequest, connector_id: Id, query: Query[ConnectorItemsQuery]):
    account = selectors.connector_get(user=request.auth, account_id=connector_id)
    qs = selectors.connector_items(account=account, status=query.status)
    page = list(qs[query.offset:query.offset + query.limit])
    return {"items": [item_out(i) for i in page], "count": qs.count(), "limit": query.limit, "offset": query.offset}


@router.post("/connectors/{connector_id}/sync", response={202: ConnectorOut, **ERRORS}, summary="Sync now")
def sync_connector(request: HttpRequest, connector_id: Id):
    """Queues a sync (a sync already running is not started twice). 422 when the connector needs a reconnect."""
    account = selectors.connector_get(user=request.auth, account_id=connector_id)
    try:
        account = services.connector_sync_request(account=account)
    except services.ConnectorRequestError as exc:
        raise HttpError(422, str(exc)) from exc
    return Status(202, connector_out(account))


@router.delete("/connectors/{connector_id}", response={200: DisconnectOut, **ERRORS}, summary="Disconnect")
def disconnect_connector(request: HttpRequest, connector_id: Id, query: Query[DisconnectQuery]):
    """Revokes the token and removes the connector. Synced memories are kept unless deleteMemories=true."""
    account = selectors.connector_get(user=request.auth, account_id=connector_id)
    deleted = services.connector_disconnect(account=account, delete_memories=query.deleteMemories)
    return {"deletedMemories": deleted}

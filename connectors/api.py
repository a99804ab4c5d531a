"""The connectors router: list connectors and their items, trigger a sync, disconnect."""

from django.http import HttpRequest
from ninja import Query, Router, Status
from ninja.errors import HttpError
from ninja.pagination import paginate

from connectors import selectors, services
from connectors.schemas import (
    ConnectorItemOut,
    ConnectorItemsQuery,
    ConnectorListOut,
    ConnectorOut,
    DisconnectOut,
    DisconnectQuery,
)
from core.pagination import LimitOffset
from core.schemas import ErrorOut, Id

router = Router(tags=["connectors"], by_alias=True)

ERRORS = {401: ErrorOut, 404: ErrorOut, 422: ErrorOut}


@router.get("/connectors", response={200: ConnectorListOut, **ERRORS}, summary="List your connectors")
def list_connectors(request: HttpRequest):
    return {"items": selectors.connector_list(user=request.auth)}


@router.get("/connectors/{connector_id}", response={200: ConnectorOut, **ERRORS}, summary="Read a connector")
def get_connector(request: HttpRequest, connector_id: Id):
    return selectors.connector_get(user=request.auth, account_id=connector_id)


@router.get(
    "/connectors/{connector_id}/items",
    response={200: list[ConnectorItemOut], **ERRORS},
    summary="List a connector's synced items",
)
@paginate(LimitOffset, default=50, maximum=500)
def list_items(request: HttpRequest, connector_id: Id, query: Query[ConnectorItemsQuery]):
    account = selectors.connector_get(user=request.auth, account_id=connector_id)
    return selectors.connector_items(account=account, status=query.status)


@router.post("/connectors/{connector_id}/sync", response={202: ConnectorOut, **ERRORS}, summary="Sync now")
def sync_connector(request: HttpRequest, connector_id: Id):
    """Queues a sync (a sync already running is not started twice). 422 when the connector needs a reconnect."""
    account = selectors.connector_get(user=request.auth, account_id=connector_id)
    try:
        account = services.connector_sync_request(account=account)
    except services.ConnectorRequestError as exc:
        raise HttpError(422, str(exc)) from exc
    return Status(202, account)


@router.delete("/connectors/{connector_id}", response={200: DisconnectOut, **ERRORS}, summary="Disconnect")
def disconnect_connector(request: HttpRequest, connector_id: Id, query: Query[DisconnectQuery]):
    """Revokes the token and removes the connector. Synced memories are kept unless deleteMemories=true."""
    account = selectors.connector_get(user=request.auth, account_id=connector_id)
    deleted = services.connector_disconnect(account=account, delete_memories=query.deleteMemories)
    return {"deleted_memories": deleted}

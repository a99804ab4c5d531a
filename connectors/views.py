"""Connector pages: the list with connect buttons, one connector with its items, sync and disconnect."""

from __future__ import annotations

from django.conf import settings
from django.contrib import messages
from django.core.paginator import Paginator
from django.shortcuts import redirect, render
from django.urls import reverse
from django.views.decorators.http import require_POST

from connectors import selectors, services
from connectors.models import ConnectorAccount, ConnectorItem
from core.redirects import redirect_back

ITEMS_PER_PAGE = 25
# While a sync waits or runs, the page refreshes its status by itself.
BUSY = {ConnectorAccount.Status.QUEUED, ConnectorAccount.Status.SYNCING}


def connector_list(request):
    accounts = list(selectors.connector_list(user=request.user))
    for account in accounts:
        account.login_url = selectors.connect_url(account.social_provider)
    context = {
        "accounts": accounts,
        "options": selectors.provider_options(request),
        "sync_minutes": settings.KYBERNESIS_CONNECTOR_SYNC_MINUTES,
        "polling": any(a.status in BUSY for a in accounts),
    }
    template = "connectors/list.html#accounts" if request.htmx else "connectors/list.html"
    return render(request, template, context)


def connector_detail(request, connector_id: int):
    account = selectors.connector_get(user=request.user, account_id=connector_id)
    status = request.GET.get("status") or ""
    if status not in ConnectorItem.Status.values:
        status = ""
    page = Paginator(selectors.connector_items(account=account, status=status or None), ITEMS_PER_PAGE).get_page(
        request.GET.get("page")
    )
    context = {
        "account": account,
        "page": page,
        "status": status,
        "statuses": ConnectorItem.Status,
        "polling": account.status in BUSY,
    }
    template = "connectors/detail.html#body" if request.htmx else "connectors/detail.html"
    return render(request, template, context)


@require_POST
def connector_sync(request, connector_id: int):
    account = selectors.connector_get(user=request.user, account_id=connector_id)
    try:
        account = services.connector_sync_request(account=account)
    except services.ConnectorRequestError as exc:
        messages.error(request, f"{exc}.")
    else:
        if account.status in BUSY:
            messages.info(request, f"{account.get_provider_display()} will sync in a moment; this page follows it.")
        elif account.status == ConnectorAccount.Status.SYNCED:
            messages.success(request, f"{account.get_provider_display()} is synced.")
        else:
            messages.error(request, f"The sync of {account.get_provider_display()} failed: {account.last_error}")
    return redirect_back(request, reverse("connectors:list"))


@require_POST
def connector_disconnect(request, connector_id: int):
    account = selectors.connector_get(user=request.user, account_id=connector_id)
    choice = request.POST.get("memories")
    if choice not in ("keep", "delete"):
        messages.error(request, "Choose whether to keep or delete the synced memories, then disconnect again.")
        return redirect("connectors:list")
    name = account.get_provider_display()
    deleted = services.connector_disconnect(account=account, delete_memories=choice == "delete")
    if choice == "delete":
        messages.success(
            request,
            f"Disconnected {name} and moved {deleted} synced memor{'y' if deleted == 1 else 'ies'} to the trash.",
        )
    else:
        messages.success(request, f"Disconnected {name}. Its synced memories are kept.")
    return redirect("connectors:list")

"""Writes for connectors: connect, sync (remote documents -> memories.services), request a sync, disconnect."""

from __future__ import annotations

import logging
from datetime import timedelta

from django.conf import settings
from django.db import transaction
from django.db.models import Count, Q
from django.utils import timezone

from connectors.models import PROVIDER_FOR_SOCIAL, ConnectorAccount, ConnectorItem, Provider
from connectors.providers.errors import (
    ConnectorError,
    ItemFailed,
    ItemGone,
    ItemSkipped,
    MalformedResponse,
    ReconnectNeeded,
    RemoteError,
)
from connectors.providers.google_drive import GoogleDriveSync
from connectors.providers.notion import NotionSync
from connectors.providers.sync import Content, ProviderSync, RemoteDocument, Sink
from core.actors import Actor, acting
from core.normalise import normalise_text
from core.schedules import schedule_ensure
from memories.models import Memory, Source, content_hash
from memories.services import (
    ARCHIVED_REASON,
    MAX_TITLE_CHARS,
    MemoryInputError,
    document_title,
    memories_trash,
    memory_archive,
    memory_create,
    memory_original_set,
    memory_update,
    title_as_stored,
)

logger = logging.getLogger(__name__)

# Keyed by Provider, looked up by an account's provider (a plain str equal to it).
SYNCS: dict[str, type[ProviderSync]] = {Provider.GOOGLE_DRIVE: GoogleDriveSync, Provider.NOTION: NotionSync}
# Items whose last attempt failed for a passing reason are fetched again at the start of each sync.
MAX_RETRIES_PER_SYNC = 200
SCHEDULE_NAME = "connectors: sync every connected account"


class ConnectorRequestError(ValueError):
    """A request about a connector that cannot be honoured; the message says why."""


# --- Connecting ----------------------------------------------------------------------------------


def _label(social_account) -> str:
    data = social_account.extra_data or {}
    if social_account.provider == "notion":
        user = (data.get("owner") or {}).get("user") or {}
        parts = [str(data.get("workspace_name") or ""), str(user.get("name") or "")]
        return " · ".join(p for p in parts if p)[:255]
    return str(data.get("email") or data.get("name") or "")[:255]


def connector_account_connect(*, user, social_account) -> ConnectorAccount | None:
    """Make (or revive) the connector for an OAuth account `user` just connected. Other allauth
    providers are ignored, and so is an account that belongs to someone else."""
    provider = PROVIDER_FOR_SOCIAL.get(social_account.provider)
    if provider is None or social_account.user_id != user.pk:
        return None
    with transaction.atomic():
        account, created = ConnectorAccount.objects.select_for_update().get_or_create(
            social_account=social_account,
            defaults={"owner": user, "provider": provider, "label": _label(social_account)},
        )
        if not created:
            account.label = _label(social_account) or account.label
            if account.status == ConnectorAccount.Status.RECONNECT:
                account.status = (
                    ConnectorAccount.Status.READY if not account.last_sync_at else ConnectorAccount.Status.SYNCED
                )
                account.last_error = ""
            account.save(update_fields=["label", "status", "last_error", "updated_at"])
    return account


def connector_account_unlink(*, social_account) -> None:
    """The OAuth account was removed in allauth's own settings page: its connectors can no longer sync."""
    ConnectorAccount.objects.filter(social_account=social_account).update(
        status=ConnectorAccount.Status.RECONNECT,
        last_error="The account was disconnected in your account settings. Reconnect it to sync again.",
        updated_at=timezone.now(),
    )


# --- Syncing -------------------------------------------------------------------------------------


def _iso(value) -> str:
    return value.isoformat().replace("+00:00", "Z") if value else ""


class ItemSink(Sink):
    """Receives what a provider found remotely and turns it into items and memories."""

    def __init__(self, account: ConnectorAccount):
        self.account = account
        self.notes: list[str] = []

    # --- helpers

    def _item(self, external_id: str) -> ConnectorItem | None:
        return (
            ConnectorItem.objects.filter(account=self.account, external_id=external_id).select_related("memory").first()
        )

    def _save(self, item: ConnectorItem | None, external_id: str, **fields) -> ConnectorItem:
        if item is None:
            item = ConnectorItem(account=self.account, external_id=external_id[:255])
        changed = [name for name, value in fields.items() if getattr(item, name) != value]
        if item.pk is not None and not changed:
            return item  # nothing new: the row (and its updated_at) stays as it is
        for name, value in fields.items():
            setattr(item, name, value)
        item.save()
        return item

    @staticmethod
    def _title(title: str) -> str:
        return " ".join((title or "").split())[:MAX_TITLE_CHARS]

    def _adoptable_memory(self, external_id: str) -> Memory | None:
        """A memory this owner kept from an earlier connection to the same remote item."""
        linked = ConnectorItem.objects.filter(account__owner=self.account.owner, memory__isnull=False).values("memory")
        return (
            Memory.objects.for_user(self.account.owner)
            .filter(source=Source.CONNECTOR, metadata__provider=self.account.provider, metadata__externalId=external_id)
            .exclude(pk__in=linked)
            .order_by("pk")
            .first()
        )

    # --- the Sink interface

    def document(self, doc: RemoteDocument) -> None:
        item = self._item(doc.external_id)
        if item is not None and item.memory is not None and item.memory.trashed_at is not None:
            # The person deleted this memory: a sync neither brings it back nor changes it while it is in
            # the trash. The item keeps its old remote time, so a newer version is applied after a restore.
            return
        title = self._title(doc.title)
        # The item, when the remote document has not changed since it was stored.
        unchanged = (
            item
            if item is not None
            and item.status != ConnectorItem.Status.REMOVED
            and not doc.recheck
            and doc.modified_at is not None
            and item.remote_modified_at == doc.modified_at
            else None
        )
        if unchanged is not None and unchanged.title == title:
            return
        common = {"title": title, "mime": doc.mime[:255], "url": doc.url[:2000]}
        if unchanged is not None and unchanged.memory is not None:
            # Renamed without a content change: nothing is downloaded or embedded, and the title follows
            # when it was the remote name (not the document's own title, nor one the person chose).
            memory = unchanged.memory
            if title and memory.title == title_as_stored(unchanged.title):
                memory_update(memory=memory, title=title, from_source=True)
            self._save(unchanged, doc.external_id, **common)
            return
        try:
            content = doc.load()
        except ItemGone:
            self.removed(doc.external_id)
            return
        except ItemSkipped as exc:
            self._save(
                item,
                doc.external_id,
                **common,
                status=ConnectorItem.Status.SKIPPED,
                error=str(exc),
                remote_modified_at=doc.modified_at,
            )
            return
        except (ItemFailed, MalformedResponse, RemoteError) as exc:
            # A network failure or a garbled answer may pass: leave the modified time empty so the item
            # is fetched again next time. A damaged file stays failed until it changes remotely.
            retry = isinstance(exc, MalformedResponse) or (isinstance(exc, RemoteError) and exc.transient)
            self._save(
                item,
                doc.external_id,
                **common,
                status=ConnectorItem.Status.FAILED,
                error=str(exc),
                remote_modified_at=None if retry else doc.modified_at,
            )
            return
        self._store(item, doc, content, common)

    def _store(self, item: ConnectorItem | None, doc: RemoteDocument, content: Content, common: dict) -> None:
        # The hash of the text as it is stored (normalised), so that unchanged text is seen as unchanged.
        digest = content_hash(normalise_text(content.text).text)
        # The document's own title when it declares one, else the remote name.
        title = document_title(content.title) or common["title"]
        notices = [*content.notices, *([content.note] if content.note else [])]
        metadata = {
            **content.metadata,
            "provider": self.account.provider,
            "externalId": doc.external_id,
            "url": doc.url,
            "remoteModifiedAt": _iso(doc.modified_at),
            "mime": doc.mime,
            "connectorId": self.account.pk,
        }
        memory = item.memory if item is not None else None
        if memory is None:
            memory = self._adoptable_memory(doc.external_id)
        try:
            with transaction.atomic():
                if memory is None:
                    memory = memory_create(
                        owner=self.account.owner,
                        title=title,
                        content=content.text,
                        source=Source.CONNECTOR,
                        metadata=metadata,
                        original=content.original,
                        notices=notices,
                    )
                else:
                    merged = {
                        key: value for key, value in {**memory.metadata, **metadata}.items() if key != ARCHIVED_REASON
                    }
                    changes: dict = {}
                    if title and memory.title != title_as_stored(title):
                        changes["title"] = title
                    if memory.content_hash != digest:
                        changes["content"], changes["notices"] = content.text, notices
                    if memory.metadata != merged:
                        changes["metadata"] = merged
                    if changes:
                        # Same id and manual tags; only chunks whose text changed are embedded again. A
                        # title the person chose stays (from_source).
                        memory = memory_update(memory=memory, **changes, from_source=True)
                    if content.is_file:
                        # The file changed: its original follows (or goes, if it can no longer be kept).
                        memory_original_set(memory=memory, original=content.original)
                self._save(
                    item,
                    doc.external_id,
                    **common,
                    status=ConnectorItem.Status.SYNCED,
                    error=content.note,
                    remote_modified_at=doc.modified_at,
                    content_hash=digest,
                    memory=memory,
                )
        except MemoryInputError as exc:
            self._save(
                item,
                doc.external_id,
                **common,
                status=ConnectorItem.Status.FAILED,
                error=f"cannot be stored as a memory: {exc}",
                remote_modified_at=doc.modified_at,
            )

    def skipped(self, *, external_id, title, mime, url, modified_at, reason) -> None:
        item = self._item(external_id)
        self._save(
            item,
            external_id,
            title=self._title(title),
            mime=mime[:255],
            url=url[:2000],
            status=ConnectorItem.Status.SKIPPED,
            error=reason,
            remote_modified_at=modified_at,
        )

    def failed(self, *, external_id, title, reason) -> None:
        if not external_id:
            self.notes.append(reason)
            return
        item = self._item(external_id)
        fields = {"status": ConnectorItem.Status.FAILED, "error": reason, "remote_modified_at": None}
        if title or item is None:
            fields["title"] = self._title(title)
        self._save(item, external_id, **fields)

    def removed(self, external_id: str) -> None:
        item = self._item(external_id)
        if item is None or item.status == ConnectorItem.Status.REMOVED:
            return
        where = self.account.get_provider_display()
        if item.memory is not None and item.memory.trashed_at is None:  # one in the trash stays there
            memory_archive(memory=item.memory, reason=f"deleted or trashed in {where}")
        self._save(
            item,
            external_id,
            status=ConnectorItem.Status.REMOVED,
            error=f"Deleted or trashed in {where}" + ("; its memory was archived" if item.memory_id else ""),
        )

    def checkpoint(self, *, cursor: str | None = None, state: dict | None = None) -> None:
        fields = ["updated_at"]
        if cursor is not None:
            self.account.cursor = cursor
            fields.append("cursor")
        if state is not None:
            self.account.sync_state = state
            fields.append("sync_state")
        self.account.save(update_fields=fields)
        connector_counts_refresh(account=self.account)

    def retry_ids(self) -> list[str]:
        return list(
            ConnectorItem.objects.filter(
                account=self.account, status=ConnectorItem.Status.FAILED, remote_modified_at__isnull=True
            )
            .exclude(external_id="")
            .order_by("id")
            .values_list("external_id", flat=True)[:MAX_RETRIES_PER_SYNC]
        )


def connector_counts_refresh(*, account: ConnectorAccount) -> ConnectorAccount:
    statuses = ConnectorItem.Status
    counts = ConnectorItem.objects.filter(account=account).aggregate(
        **{status.value: Count("id", filter=Q(status=status)) for status in statuses}
    )
    account.synced_count = counts[statuses.SYNCED]
    account.skipped_count = counts[statuses.SKIPPED]
    account.failed_count = counts[statuses.FAILED]
    account.removed_count = counts[statuses.REMOVED]
    account.save(update_fields=["synced_count", "skipped_count", "failed_count", "removed_count", "updated_at"])
    return account


def _claim(account_id: int) -> bool:
    """Mark the account as syncing unless a sync of it is already running (or it needs a reconnect).
    A claim older than the task timeout belongs to a worker that died and is taken over."""
    now = timezone.now()
    stale = now - timedelta(seconds=settings.Q_CLUSTER["timeout"])
    return bool(
        ConnectorAccount.objects.filter(pk=account_id)
        .exclude(status=ConnectorAccount.Status.RECONNECT)
        .filter(
            ~Q(status=ConnectorAccount.Status.SYNCING) | Q(sync_started_at__isnull=True) | Q(sync_started_at__lt=stale)
        )
        .update(status=ConnectorAccount.Status.SYNCING, sync_started_at=now, updated_at=now)
    )


def connector_sync(*, account_id: int) -> ConnectorAccount | None:
    """Run one sync of an account. Returns None when it was not run (already running, reconnect needed)."""
    if not _claim(account_id):
        return None
    account = ConnectorAccount.objects.select_related("owner").get(pk=account_id)
    sink = ItemSink(account)
    status, error = ConnectorAccount.Status.SYNCED, ""
    try:
        # What the sync stores or changes is the connector's doing (versions and activity name it).
        with acting(Actor.connector(f"{account.get_provider_display()} sync")):
            SYNCS[account.provider](account=account).run(sink)
    except ReconnectNeeded as exc:
        status, error = ConnectorAccount.Status.RECONNECT, str(exc)
    except ConnectorError as exc:
        status, error = ConnectorAccount.Status.ERROR, str(exc)
    except Exception as exc:
        logger.exception("sync of connector %s failed", account_id)
        status, error = ConnectorAccount.Status.ERROR, f"Unexpected error: {type(exc).__name__}: {exc}"
    if status == ConnectorAccount.Status.SYNCED and sink.notes:
        error = " ".join(dict.fromkeys(sink.notes))
    account.status, account.last_error, account.last_sync_at = status, error[:2000], timezone.now()
    account.save(update_fields=["status", "last_error", "last_sync_at", "updated_at"])
    return connector_counts_refresh(account=account)


def connector_sync_request(*, account: ConnectorAccount) -> ConnectorAccount:
    """Queue a sync now (the "Sync now" button and POST /connectors/{id}/sync)."""
    from django_q.tasks import async_task

    if account.status == ConnectorAccount.Status.RECONNECT:
        raise ConnectorRequestError(f"{account.get_provider_display()} needs to be reconnected before it can sync")
    # Shown (and polled) until a worker claims it; a sync already running keeps its status.
    ConnectorAccount.objects.filter(pk=account.pk).exclude(status=ConnectorAccount.Status.SYNCING).update(
        status=ConnectorAccount.Status.QUEUED, updated_at=timezone.now()
    )
    async_task(
        "connectors.tasks.sync_account",
        account.pk,
        task_name=f"connector sync {account.pk}",
        timeout=settings.KYBERNESIS_Q_LONG_TIMEOUT,
    )
    account.refresh_from_db()
    return account


def connector_sync_all() -> int:
    """Queue a sync of every account that can sync; the hourly schedule calls this."""
    from django_q.tasks import async_task

    ids = list(
        ConnectorAccount.objects.exclude(status=ConnectorAccount.Status.RECONNECT)
        .exclude(social_account__isnull=True)
        .values_list("pk", flat=True)
    )
    for account_id in ids:
        async_task(
            "connectors.tasks.sync_account",
            account_id,
            task_name=f"connector sync {account_id}",
            timeout=settings.KYBERNESIS_Q_LONG_TIMEOUT,
        )
    return len(ids)


def connector_schedule_ensure() -> None:
    """Create or update the one schedule that syncs every account; safe to call any number of times."""
    schedule_ensure(
        name=SCHEDULE_NAME, func="connectors.tasks.sync_all", minutes=settings.KYBERNESIS_CONNECTOR_SYNC_MINUTES
    )


# --- Disconnecting -------------------------------------------------------------------------------


def connector_disconnect(*, account: ConnectorAccount, delete_memories: bool) -> int:
    """Revoke our access, forget the tokens and the connector, and keep or delete its memories.
    Returns how many memories were deleted (moved to the trash)."""
    from allauth.socialaccount.models import SocialToken

    if account.social_account_id is not None:
        client = SYNCS[account.provider].client_class(account=account)
        client.max_retries = 0  # a person is waiting; a revoke that fails is only logged
        try:
            client.revoke()
        except (ConnectorError, OSError) as exc:
            logger.warning("revoking the token of connector %s failed: %s", account.pk, exc)
    memory_ids = list(account.items.filter(memory__isnull=False).values_list("memory_id", flat=True))
    with transaction.atomic():
        if account.social_account_id is not None:
            SocialToken.objects.filter(account_id=account.social_account_id).delete()
        account.delete()
        deleted = 0
        if delete_memories and memory_ids:
            # Into the trash, as every delete: restorable until purged.
            deleted = len(memories_trash(owner_id=account.owner_id, memory_ids=memory_ids))
    return deleted

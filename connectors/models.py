"""Connector accounts (one per connected Google Drive or Notion) and the remote items they synced."""

from __future__ import annotations

from django.conf import settings
from django.db import models

from core.querysets import OwnedQuerySet
from memories.models import Memory


class Provider(models.TextChoices):
    # The values are also the `provider` key of synced memories' metadata and their auto tag.
    GOOGLE_DRIVE = "google-drive", "Google Drive"
    NOTION = "notion", "Notion"


# allauth's provider id for each connector provider.
SOCIAL_PROVIDER = {Provider.GOOGLE_DRIVE: "google", Provider.NOTION: "notion"}
PROVIDER_FOR_SOCIAL = {social: provider for provider, social in SOCIAL_PROVIDER.items()}


class ConnectorAccount(models.Model):
    class Status(models.TextChoices):
        READY = "ready", "Ready to sync"
        QUEUED = "queued", "Waiting for the worker"
        SYNCING = "syncing", "Syncing"
        SYNCED = "synced", "Synced"
        ERROR = "error", "Sync failed"
        RECONNECT = "reconnect_needed", "Reconnect needed"

    owner = models.ForeignKey(settings.AUTH_USER_MODEL, on_delete=models.CASCADE, related_name="connector_accounts")
    provider = models.CharField(max_length=32, choices=Provider.choices)
    social_account = models.ForeignKey(
        "socialaccount.SocialAccount",
        null=True,
        blank=True,
        on_delete=models.SET_NULL,
        related_name="connector_accounts",
    )
    label = models.CharField(max_length=255, blank=True, default="", help_text="The remote account's name")
    # `cursor` is where the next incremental sync starts (Drive: a changes page token; Notion: the
    # newest last_edited_time stored). `sync_state` is the resume point inside a run that stopped
    # half-way, e.g. the files.list page token of a first sync.
    cursor = models.TextField(blank=True, default="")
    sync_state = models.JSONField(default=dict, blank=True)
    status = models.CharField(max_length=32, choices=Status.choices, default=Status.READY)
    last_error = models.TextField(blank=True, default="")
    sync_started_at = models.DateTimeField(null=True, blank=True)
    last_sync_at = models.DateTimeField(null=True, blank=True)
    synced_count = models.PositiveIntegerField(default=0)
    skipped_count = models.PositiveIntegerField(default=0)
    failed_count = models.PositiveIntegerField(default=0)
    removed_count = models.PositiveIntegerField(default=0)
    created_at = models.DateTimeField(auto_now_add=True)
    updated_at = models.DateTimeField(auto_now=True)

    objects = OwnedQuerySet.as_manager()

    class Meta:
        ordering = ["provider", "created_at", "id"]
        constraints = [
            models.UniqueConstraint(fields=["social_account"], name="connectoraccount_social_account_unique"),
            models.CheckConstraint(
                condition=models.Q(provider__in=Provider.values), name="connectoraccount_provider_valid"
            ),
        ]
        indexes = [models.Index(fields=["owner", "provider"], name="connectoraccount_owner_prov")]

    def __str__(self) -> str:
        return f"{self.get_provider_display()} · {self.label or self.owner}"

    @property
    def social_provider(self) -> str:
        return SOCIAL_PROVIDER[self.provider]


class ConnectorItemQuerySet(models.QuerySet):
    def for_user(self, user):
        if not getattr(user, "is_authenticated", False):
            return self.none()
        return self.filter(account__owner=user)


class ConnectorItem(models.Model):
    class Status(models.TextChoices):
        SYNCED = "synced", "Synced"
        SKIPPED = "skipped", "Skipped"
        FAILED = "failed", "Failed"
        # Deleted or trashed remotely: its memory is kept in the archive tier.
        REMOVED = "removed", "Removed remotely"

    account = models.ForeignKey(ConnectorAccount, on_delete=models.CASCADE, related_name="items")
    external_id = models.CharField(max_length=255)
    title = models.CharField(max_length=500, blank=True, default="")
    mime = models.CharField(max_length=255, blank=True, default="")
    url = models.URLField(max_length=2000, blank=True, default="")
    # The remote modified time last handled. It stays empty after a failure worth retrying (a network
    # error), so the next sync fetches the item again; failures in the content itself keep it, so an
    # unchanged broken file is not fetched again every hour.
    remote_modified_at = models.DateTimeField(null=True, blank=True)
    content_hash = models.CharField(max_length=64, blank=True, default="")
    memory = models.ForeignKey(Memory, null=True, blank=True, on_delete=models.SET_NULL, related_name="+")
    status = models.CharField(max_length=16, choices=Status.choices)
    error = models.TextField(blank=True, default="", help_text="Why it failed or was skipped, or a note")
    created_at = models.DateTimeField(auto_now_add=True)
    updated_at = models.DateTimeField(auto_now=True)

    objects = ConnectorItemQuerySet.as_manager()

    class Meta:
        ordering = ["title", "id"]
        constraints = [
            models.UniqueConstraint(fields=["account", "external_id"], name="connectoritem_account_external_unique"),
            models.CheckConstraint(
                condition=models.Q(status__in=["synced", "skipped", "failed", "removed"]),
                name="connectoritem_status_valid",
            ),
        ]
        indexes = [models.Index(fields=["account", "status"], name="connectoritem_account_status")]

    def __str__(self) -> str:
        return self.title or self.external_id

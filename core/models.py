"""API tokens (the bearer credentials every router accepts), task runs, and rate-limit counts."""

from __future__ import annotations

import hashlib
from datetime import datetime

from django.conf import settings
from django.contrib.postgres.fields import ArrayField
from django.db import models
from django.utils import timezone


class TokenScope:
    """What a token may do. `read`: search, list, get, the graph, export, and every other GET. `write`:
    everything that changes something (create, update, tag, pin, delete, upload, import, sync, start a
    sleep run…). The two are independent: a token has the scopes it was given, no more."""

    READ = "read"
    WRITE = "write"

    ALL = (READ, WRITE)
    DESCRIPTIONS = {
        READ: "search, list and read memories, the graph, sleep runs and exports",
        WRITE: "create, change, tag, pin and delete memories; upload, import, sync, start sleep runs",
    }


def all_scopes() -> list[str]:
    return list(TokenScope.ALL)


class ApiToken(models.Model):
    """A bearer token for the JSON API and MCP. Only its SHA-256 is stored; the token itself is shown once.

    A revoked token keeps its row, so what it did still names it in the activity trail."""

    user = models.ForeignKey(settings.AUTH_USER_MODEL, on_delete=models.CASCADE, related_name="api_tokens")
    name = models.CharField(max_length=100, blank=True, default="")
    prefix = models.CharField(max_length=12, editable=False)
    key_hash = models.CharField(max_length=64, unique=True, editable=False)
    # Tokens made before scopes existed were given every scope by the migration that added the field.
    scopes = ArrayField(models.CharField(max_length=20), default=all_scopes)
    expires_at = models.DateTimeField(null=True, blank=True)
    revoked_at = models.DateTimeField(null=True, blank=True)
    created_at = models.DateTimeField(auto_now_add=True)
    last_used_at = models.DateTimeField(null=True, blank=True)

    objects = models.Manager()

    class Meta:
        ordering = ["-created_at"]
        # The table keeps the name it had when tokens lived in memories.
        db_table = "memories_apitoken"

    def __str__(self) -> str:
        return f"{self.prefix}… ({self.user})"

    @staticmethod
    def hash_key(key: str) -> str:
        # Tokens carry 256 bits of randomness, so a fast hash is enough: nothing to brute-force.
        return hashlib.sha256(key.encode()).hexdigest()

    @property
    def label(self) -> str:
        return self.name or f"{self.prefix}…"

    def allows(self, scope: str) -> bool:
        return scope in self.scopes

    def is_expired(self, now: datetime | None = None) -> bool:
        return self.expires_at is not None and self.expires_at <= (now or timezone.now())

    @property
    def state(self) -> str:
        """active, expired or revoked: what the account page shows."""
        if self.revoked_at is not None:
            return "revoked"
        return "expired" if self.is_expired() else "active"

    def refusal(self, now: datetime | None = None) -> str | None:
        """Why this token opens nothing any more, or None while it is good."""
        if self.revoked_at is not None:
            return f"this API token was revoked on {_when(self.revoked_at)}"
        if self.is_expired(now):
            return f"this API token expired on {_when(self.expires_at)}"
        return None


def _when(moment: datetime | None) -> str:
    return timezone.localtime(moment).strftime("%Y-%m-%d %H:%M %Z") if moment else ""


class TaskRun(models.Model):
    """One execution of a background task by a worker: written when it starts, completed when it ends.

    A run with no finished_at either is still going or its worker died (killed, out of memory); the
    queue then hands the task to another worker, which records a run of its own. django-q2 keeps one
    result per task, so this table is what tells how often a task really ran, where and for how long."""

    task_id = models.CharField(max_length=32, db_index=True)
    name = models.CharField(max_length=100, blank=True, default="")
    func = models.CharField(max_length=255, db_index=True)
    args = models.JSONField(default=list, blank=True)
    host = models.CharField(max_length=255)
    pid = models.IntegerField()
    started_at = models.DateTimeField(db_index=True)
    finished_at = models.DateTimeField(null=True, blank=True)
    success = models.BooleanField(null=True)

    objects = models.Manager()

    class Meta:
        ordering = ["-started_at"]

    def __str__(self) -> str:
        return f"{self.func} on {self.host}:{self.pid} at {self.started_at:%Y-%m-%d %H:%M:%S}"


class RateCounter(models.Model):
    """Requests counted against one rate limit (core.throttling): a row per key ("account:7",
    "address:10.0.0.5", "auth-failure:…"), holding the current slot's count and the previous slot's.
    The table is UNLOGGED (migration 0004): counting writes no WAL, and a crash empties it."""

    key = models.CharField(max_length=200, primary_key=True)
    slot = models.BigIntegerField()
    count = models.IntegerField()
    previous = models.IntegerField()
    expires_at = models.BigIntegerField(help_text="Unix time after which the row counts for nothing")

    objects = models.Manager()

    def __str__(self) -> str:
        return f"{self.key}: {self.count} (+{self.previous} before)"

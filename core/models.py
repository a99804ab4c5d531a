"""API tokens (the bearer credentials every router accepts), task runs, and rate-limit counts."""

from __future__ import annotations

import hashlib

from django.conf import settings
from django.db import models


class ApiToken(models.Model):
    """A bearer token for the JSON API. Only its SHA-256 is stored; the token itself is shown once."""

    user = models.ForeignKey(settings.AUTH_USER_MODEL, on_delete=models.CASCADE, related_name="api_tokens")
    name = models.CharField(max_length=100, blank=True, default="")
    prefix = models.CharField(max_length=12, editable=False)
    key_hash = models.CharField(max_length=64, unique=True, editable=False)
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

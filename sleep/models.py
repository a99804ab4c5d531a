"""Sleep runs and their step runs: what each cycle did, where it stopped, and what failed."""

from __future__ import annotations

from django.conf import settings
from django.db import models
from django.db.models import Q


class SleepRunQuerySet(models.QuerySet):
    def visible_to(self, user):
        """A user sees their own runs and the global (all users) ones, nobody else's."""
        if not getattr(user, "is_authenticated", False):
            return self.none()
        return self.filter(Q(owner=user) | Q(owner__isnull=True))


class SleepRun(models.Model):
    class Trigger(models.TextChoices):
        SCHEDULED = "scheduled", "Scheduled"
        MANUAL = "manual", "Manual"

    class Status(models.TextChoices):
        QUEUED = "queued", "Queued"
        RUNNING = "running", "Running"
        COMPLETED = "completed", "Completed"
        FAILED = "failed", "Failed"
        INTERRUPTED = "interrupted", "Interrupted"

    ACTIVE = (Status.QUEUED, Status.RUNNING)

    trigger = models.CharField(max_length=16, choices=Trigger.choices)
    # null: a cycle over every user's memories (the hourly one); otherwise one user's memories.
    owner = models.ForeignKey(
        settings.AUTH_USER_MODEL, null=True, blank=True, on_delete=models.CASCADE, related_name="sleep_runs"
    )
    status = models.CharField(max_length=16, choices=Status.choices, default=Status.QUEUED)
    requested_at = models.DateTimeField(auto_now_add=True)
    started_at = models.DateTimeField(null=True, blank=True)
    completed_at = models.DateTimeField(null=True, blank=True)
    heartbeat_at = models.DateTimeField(null=True, blank=True)
    current_step = models.CharField(max_length=16, blank=True, default="")
    tasks_completed = models.PositiveIntegerField(default=0)
    tasks_failed = models.PositiveIntegerField(default=0)
    resumed_count = models.PositiveIntegerField(default=0)
    error_log = models.TextField(blank=True, default="")

    objects = SleepRunQuerySet.as_manager()

    class Meta:
        ordering = ["-requested_at", "-id"]
        indexes = [
            models.Index(fields=["status"], name="sleeprun_status"),
            models.Index(fields=["owner", "-requested_at"], name="sleeprun_owner_requested"),
        ]

    def __str__(self) -> str:
        return f"Sleep run {self.pk} ({self.status})"

    @property
    def duration_seconds(self) -> float | None:
        if not self.started_at:
            return None
        from django.utils import timezone

        return ((self.completed_at or timezone.now()) - self.started_at).total_seconds()


class SleepStepRun(models.Model):
    class Step(models.TextChoices):
        TAG = "tag", "Tag"
        LINK = "link", "Link"
        TIER = "tier", "Tier"
        SUMMARIZE = "summarize", "Summarize"

    class Status(models.TextChoices):
        PENDING = "pending", "Pending"
        RUNNING = "running", "Running"
        COMPLETED = "completed", "Completed"
        FAILED = "failed", "Failed"

    run = models.ForeignKey(SleepRun, on_delete=models.CASCADE, related_name="steps")
    step = models.CharField(max_length=16, choices=Step.choices)
    position = models.PositiveSmallIntegerField()
    status = models.CharField(max_length=16, choices=Status.choices, default=Status.PENDING)
    started_at = models.DateTimeField(null=True, blank=True)
    completed_at = models.DateTimeField(null=True, blank=True)
    # processed, changed, failed, duration_ms, batches, and whatever the step adds (moves, links…)
    metrics = models.JSONField(default=dict, blank=True)
    # The id of the last memory done: memories are walked in id order, so a resumed step starts after it.
    checkpoint = models.BigIntegerField(default=0)
    # [{"memoryId", "message", "traceback"}], the first MAX_ERRORS of them
    errors = models.JSONField(default=list, blank=True)

    class Meta:
        ordering = ["run_id", "position"]
        constraints = [models.UniqueConstraint(fields=["run", "step"], name="sleepsteprun_run_step_unique")]

    def __str__(self) -> str:
        return f"{self.run_id}/{self.step} ({self.status})"

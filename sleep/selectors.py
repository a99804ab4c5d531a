"""Reads of sleep runs: a user sees their own runs and the global ones (aggregate counts only)."""

from __future__ import annotations

from django.db.models import QuerySet
from django.shortcuts import get_object_or_404

from sleep.models import SleepRun


def sleep_run_list(*, user) -> QuerySet[SleepRun]:
    return SleepRun.objects.visible_to(user).prefetch_related("steps").order_by("-requested_at", "-id")


def sleep_run_get(*, user, run_id: int) -> SleepRun:
    """One visible run; anyone else's is a 404."""
    return get_object_or_404(SleepRun.objects.visible_to(user).prefetch_related("steps"), pk=run_id)


def sleep_run_details_visible(*, user, run: SleepRun) -> bool:
    """Errors name memories, so a global run's errors are shown to staff only; others see the counts."""
    return run.owner_id == user.pk or user.is_staff

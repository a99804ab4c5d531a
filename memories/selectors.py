"""Reads of memories: owner-scoped lists and lookups. Hybrid search lives in memories.search."""

from __future__ import annotations

from django.db.models import Count, QuerySet
from django.shortcuts import get_object_or_404

from memories.models import Memory


def memory_list(*, user, tier: str | None = None, source: str | None = None,
                tags: list[str] | None = None) -> QuerySet[Memory]:
    """The user's memories, newest first, with chunk counts; content is deferred."""
    qs = (Memory.objects.for_user(user).defer("content").annotate(chunk_count=Count("chunks"))
          .order_by("-created_at", "-id"))  # Meta.ordering is not applied to GROUP BY queries
    if tier:
        qs = qs.filter(tier=tier)
    if source:
        qs = qs.filter(source=source)
    if tags:
        qs = qs.filter(tags__contains=tags)
    return qs


def memory_get(*, user, memory_id: int) -> Memory:
    """One of the user's memories with its chunk count; another user's memory is a 404."""
    return get_object_or_404(Memory.objects.for_user(user).annotate(chunk_count=Count("chunks")), pk=memory_id)


def memory_tier_counts(*, user) -> dict[str, int]:
    """How many of the user's memories sit in each tier (every tier present, zeros included)."""
    counts = dict.fromkeys(("hot", "warm", "archive"), 0)
    for row in Memory.objects.for_user(user).values("tier").annotate(n=Count("id")):
        counts[row["tier"]] = row["n"]
    return counts

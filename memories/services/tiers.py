"""Tier writes: set-based retiering by the rules in memories.tier_rules, and pinning."""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from datetime import datetime, timedelta

from django.db import connection, transaction
from django.utils import timezone

from memories import tier_rules
from memories.models import ActivityKind, Memory, MemoryChunk, TierMove
from memories.services.activity import activity_record
from memories.services.history import recording, versions_prune
from memories.services.locking import memory_lock

# Set by memory_archive when a connector's item is gone at its source; it keeps the memory archived.
ARCHIVED_REASON = "archivedReason"


@dataclass
class BatchResult:
    """What a bulk service did to a batch: `failed` names each memory that could not be processed."""

    processed: int = 0
    changed: int = 0
    failed: list[tuple[int, str]] = field(default_factory=list)


def reloaded(memory: Memory) -> Memory:
    memory.refresh_from_db()
    memory.chunk_count = MemoryChunk.objects.filter(owner_id=memory.owner_id, memory=memory).count()
    return memory


def tier_facts(memory: Memory, *, relationships: int = 0, recent_connections: int = 0) -> tier_rules.TierFacts:
    return tier_rules.TierFacts(
        tier=memory.tier,
        priority=memory.priority,
        pinned=memory.pinned,
        has_manual_tags=bool(memory.manual_tags),
        created_at=memory.created_at,
        last_accessed_at=memory.last_accessed_at,
        access_count=memory.access_count,
        relationships=relationships,
        recent_connections=recent_connections,
        removed_at_source=ARCHIVED_REASON in memory.metadata,
    )


# One round trip gathers the facts of a batch of memories (never a trashed one: its chunks stay in the
# trash layer until it is restored); link counts come from the provider the
# graph registers (see register_link_counter), so this app never reads the graph's tables.
_TIER_FACTS_SQL = """
SELECT m.id, m.owner_id, m.tier, m.priority, m.pinned, cardinality(m.manual_tags) > 0, m.created_at,
       m.last_accessed_at, m.access_count, m.decay_score, m.tier_reason,
       (m.metadata -> 'archivedReason') IS NOT NULL
FROM memories_memory m WHERE {where} AND m.trashed_at IS NULL ORDER BY m.id LIMIT %(batch_size)s
"""

# (memory ids, recent_since, active_since) -> {memory id: (linked memories in use, of those linked
# recently)}. A link counts once per linked memory whatever its reason, and only while that memory is
# in use (opened or created since active_since, or pinned); it is recent when made or reinforced since
# recent_since.
LinkCounter = Callable[[Sequence[int], datetime, datetime], dict[int, tuple[int, int]]]
_link_counter: LinkCounter | None = None


def register_link_counter(counter: LinkCounter | None) -> None:
    """Let the app that owns memory links supply their counts to the tier rules."""
    global _link_counter
    _link_counter = counter


def _link_counts(
    memory_ids: Sequence[int], recent_since: datetime, active_since: datetime
) -> dict[int, tuple[int, int]]:
    if _link_counter is None or not memory_ids:
        return {}
    return _link_counter(memory_ids, recent_since, active_since)


_APPLY_TIERS_SQL = """
UPDATE memories_memory m SET tier = v.tier, decay_score = v.decay, tier_reason = v.reason,
       tier_changed_at = CASE WHEN m.tier <> v.tier THEN %(now)s ELSE m.tier_changed_at END
FROM unnest(%(ids)s::bigint[], %(tiers)s::text[], %(decays)s::float8[], %(reasons)s::text[]) AS v(id, tier, decay, reason)
WHERE m.id = v.id
"""

_CHUNK_TIERS_SQL = """
UPDATE memories_memorychunk c SET tier = v.tier
FROM unnest(%(ids)s::bigint[], %(tiers)s::text[]) AS v(id, tier)
WHERE c.memory_id = v.id AND c.tier <> v.tier
"""


@dataclass
class RetierResult(BatchResult):
    moved: int = 0
    moves: dict[str, int] = field(default_factory=dict)  # "hot→warm": count
    last_id: int | None = None


def memories_retier(
    *,
    owner=None,
    memory_ids: Sequence[int] | None = None,
    after_id: int = 0,
    batch_size: int = 5000,
    now=None,
    cause: str = TierMove.Cause.SLEEP,
) -> RetierResult:
    """Recompute decay and tier for one batch of memories, set-based: one query reads the facts of up
    to `batch_size` memories (by id, after `after_id`), the policy runs in Python, and three
    statements write the changed memories, move their chunks, and record each move. Callers walk a
    whole collection by passing the returned `last_id` as the next `after_id`."""
    now = now or timezone.now()
    policy = tier_rules.TierPolicy.from_settings()
    params: dict = {
        "batch_size": batch_size,
        "after_id": after_id,
        "recent_since": now - timedelta(days=policy.recent_connection_days),
        "active_since": now - timedelta(days=policy.active_link_days),
    }
    where = ["m.id > %(after_id)s"]
    if owner is not None:
        params["owner"] = owner.pk
        where.append("m.owner_id = %(owner)s")
    if memory_ids is not None:
        params["memory_ids"] = list(memory_ids)
        where.append("m.id = ANY(%(memory_ids)s)")
    result = RetierResult()
    with transaction.atomic():
        with connection.cursor() as cursor:
            cursor.execute(_TIER_FACTS_SQL.format(where=" AND ".join(where)), params)
            rows = cursor.fetchall()
        links = _link_counts([row[0] for row in rows], params["recent_since"], params["active_since"])
        changed: list[tuple] = []
        moves: list[TierMove] = []
        for (
            memory_id,
            owner_id,
            tier,
            priority,
            pinned,
            has_manual,
            created_at,
            last_accessed_at,
            access_count,
            decay,
            reason,
            removed,
        ) in rows:
            relationships, recent = links.get(memory_id, (0, 0))
            facts = tier_rules.TierFacts(
                tier=tier,
                priority=priority,
                pinned=pinned,
                has_manual_tags=has_manual,
                created_at=created_at,
                last_accessed_at=last_accessed_at,
                access_count=access_count,
                relationships=relationships,
                recent_connections=recent,
                removed_at_source=removed,
            )
            decision = tier_rules.evaluate_tier(facts, now=now, policy=policy)
            result.processed += 1
            result.last_id = memory_id
            if decision.tier != tier:
                moves.append(
                    TierMove(
                        owner_id=owner_id,
                        memory_id=memory_id,
                        from_tier=tier,
                        to_tier=decision.tier,
                        reason=decision.reason[:200],
                        cause=cause,
                        moved_at=now,
                    )
                )
                key = f"{tier}→{decision.tier}"
                result.moves[key] = result.moves.get(key, 0) + 1
            if decision.tier != tier or abs(decision.decay - decay) >= 0.0005 or decision.reason != reason:
                changed.append((memory_id, decision.tier, decision.decay, decision.reason[:200]))
        if changed:
            ids, tiers, decays, reasons = (list(column) for column in zip(*changed, strict=True))
            with connection.cursor() as cursor:
                cursor.execute(
                    _APPLY_TIERS_SQL, {"ids": ids, "tiers": tiers, "decays": decays, "reasons": reasons, "now": now}
                )
        if moves:
            with connection.cursor() as cursor:
                cursor.execute(
                    _CHUNK_TIERS_SQL, {"ids": [m.memory_id for m in moves], "tiers": [m.to_tier for m in moves]}
                )
            TierMove.objects.bulk_create(moves, batch_size=1000)
    result.changed = len(changed)
    result.moved = len(moves)
    return result


def memory_retier(*, memory: Memory, cause: str = TierMove.Cause.SLEEP) -> Memory:
    """Evaluate one memory's tier now; its chunks follow in the same transaction."""
    memories_retier(memory_ids=[memory.pk], cause=cause)
    return reloaded(memory)


def memory_pin(*, memory: Memory, pinned: bool) -> Memory:
    """Pin (the memory moves to hot at once and stays there) or unpin (the rules decide again)."""
    with recording(), transaction.atomic():
        locked = memory_lock(memory.pk)
        if locked.pinned != pinned:
            Memory.objects.filter(pk=memory.pk).update(pinned=pinned, updated_at=timezone.now())
            versions_prune(memory_ids=[memory.pk], latest=locked.version + 1)
            activity_record(memory=locked, kind=ActivityKind.PINNED if pinned else ActivityKind.UNPINNED)
        memories_retier(memory_ids=[memory.pk], cause=TierMove.Cause.PIN)
    return reloaded(memory)

"""SQL helpers the graph's writes share: the per-owner advisory lock and COPY."""

from __future__ import annotations

from collections.abc import Sequence

from django.db import connection

# Serialises graph writes per owner, so two workers extracting memories of one person cannot
# race on creating the same entity or recounting it.
_GRAPH_LOCK_NAMESPACE = 7_411


def lock_owner_graph(owner_id: int) -> None:
    with connection.cursor() as cursor:
        cursor.execute("SELECT pg_advisory_xact_lock(%s, %s)", [_GRAPH_LOCK_NAMESPACE, owner_id])


def lock_memories(memory_ids) -> set[int]:
    """Lock memories' rows FOR KEY SHARE in id order (the lock a foreign key to them takes anyway) and
    return the ids that still exist outside the trash. Taken before the owner's graph lock, as a memory edit or delete
    takes the memory's row first: one order everywhere, so the two wait for each other, never in a circle."""
    with connection.cursor() as cursor:
        cursor.execute(
            "SELECT id FROM memories_memory WHERE id = ANY(%s) AND trashed_at IS NULL ORDER BY id FOR KEY SHARE",
            [sorted(memory_ids)],
        )
        return {row[0] for row in cursor.fetchall()}


def copy_rows(table: str, columns: Sequence[str], rows: list[tuple]) -> None:
    """Bulk insert with COPY: no model objects and no per-row placeholders, for the thousands of
    mentions and evidence rows one batch writes. Callers have removed the rows they replace."""
    if not rows:
        return
    names = ", ".join(f'"{column}"' for column in columns)
    with connection.cursor() as cursor, cursor.copy(f"COPY {table} ({names}) FROM STDIN") as copy:
        for row in rows:
            copy.write_row(row)

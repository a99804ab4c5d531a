"""Benchmark: random trash / restore / purge sequences over a folder of real documents; last line is JSON.

Each document (a Markdown or text file) becomes a memory of a bench user, with the configured embedder
and its graph. Every sequence applies random operations to a few of them, then checks: a trashed
memory is found by no search (its own first line as the query, the query that finds it when it is
live), restored memories are field for field what they were (row, chunks with their vectors, entities
by key; links are counted apart, as a purged neighbour takes its links along), the lexical postings
equal a rebuild, and the restored memory is found again as before.
"""

from __future__ import annotations

import json
import random
import time
from pathlib import Path

from django.contrib.auth import get_user_model
from django.core.management.base import BaseCommand, CommandError
from django.http import Http404

from graph.models import EntityMention, MemoryLink
from graph.services import graph_ingest_memories
from memories.models import ChunkTerm, Memory, MemoryChunk
from memories.search import hybrid_search, lexical
from memories.services import (
    MemoryInput,
    memories_restore_from_trash,
    memories_trash,
    memory_create_many,
    memory_purge,
    memory_restore_from_trash,
)

BENCH_USER = "bench-trash"


def _state(memory_id: int) -> tuple:
    memory = Memory.all_objects.get(pk=memory_id)
    row = tuple(getattr(memory, f.attname) for f in Memory._meta.concrete_fields)
    chunks = tuple(
        (c.pk, c.position, c.text, c.tier, c.embedding_key, tuple(float(x) for x in c.embedding))
        for c in MemoryChunk.objects.filter(memory_id=memory_id).order_by("position")
    )
    links = tuple(
        sorted(
            MemoryLink.objects.filter(source_id=memory_id)
            .values_list("target_id", "reason", "score")
            .union(MemoryLink.objects.filter(target_id=memory_id).values_list("source_id", "reason", "score"))
        )
    )
    entities = tuple(
        sorted(set(EntityMention.objects.filter(memory_id=memory_id).values_list("entity__key", flat=True)))
    )
    return row, chunks, links, entities


def _postings(owner_id: int) -> list:
    return sorted(ChunkTerm.objects.filter(owner_id=owner_id).values_list("chunk_id", "lexeme", "tf"))


def _query_of(text: str) -> str:
    """The document's own summary line (a tldr page's "> ..." line), else its first words."""
    for line in text.splitlines():
        line = line.strip().lstrip(">#- ").strip()
        if len(line.split()) >= 3:
            return line[:200]
    return " ".join(text.split()[:12])


def _operate(owner, pk: int, action: str, *, counts: dict, purged: set[int], found) -> int:
    """Apply one operation; a trash is followed by a search for the memory. Returns 1 if it leaked."""
    try:
        if action == "trash":
            if not memories_trash(owner_id=owner.pk, memory_ids=[pk]):
                counts["refused"] += 1  # already in the trash
                return 0
            counts["trashed"] += 1
            return int(pk in found(pk, 50))
        if action == "restore":
            memory_restore_from_trash(owner=owner, memory_id=pk)
            counts["restored"] += 1
        else:
            memory_purge(owner=owner, memory_id=pk)
            counts["purged"] += 1
            purged.add(pk)
    except Http404:
        counts["refused"] += 1
    return 0


class Command(BaseCommand):
    help = "Random trash/restore/purge sequences over real documents: 0 differences and 0 leaks expected."

    def add_arguments(self, parser):
        parser.add_argument("--docs", required=True, help="a folder of .md or .txt files (kept outside the repo)")
        parser.add_argument("--limit", type=int, default=200)
        parser.add_argument("--sequences", type=int, default=50)
        parser.add_argument("--ops", type=int, default=6, help="operations per sequence")
        parser.add_argument("--seed", type=int, default=31)
        parser.add_argument("--user", default=BENCH_USER)

    def handle(self, *args, docs: str, limit: int, sequences: int, ops: int, seed: int, user: str, **options):
        files = sorted(p for p in Path(docs).iterdir() if p.suffix in (".md", ".txt"))[:limit]
        if len(files) < 4:
            raise CommandError(f"{docs} holds fewer than 4 .md or .txt files")
        owner, _ = get_user_model().objects.get_or_create(username=user, defaults={"email": f"{user}@localhost"})
        Memory.all_objects.filter(owner=owner).delete()
        lexical.reindex_owner(owner.pk)
        texts = [p.read_text(encoding="utf-8", errors="replace") for p in files]
        started = time.perf_counter()
        stored = memory_create_many(
            owner=owner, items=[MemoryInput(title=p.stem, content=t) for p, t in zip(files, texts, strict=True)]
        )
        query = {m.pk: _query_of(t) for m, t in zip(stored, texts, strict=True)}
        graph_ingest_memories(memory_ids=[m.pk for m in stored])
        load_s = time.perf_counter() - started

        def top_ids(memory_id: int, k: int = 10) -> list[int]:
            response = hybrid_search(owner.pk, query[memory_id], limit=k, group_by="memory", min_score=0.0)
            return [r.memory_id for r in response.results]

        first_before = {m.pk: top_ids(m.pk)[:1] == [m.pk] for m in stored}
        rng = random.Random(seed)
        live = [m.pk for m in stored]
        counts = {"operations": 0, "trashed": 0, "restored": 0, "purged": 0, "refused": 0}
        diff = {"purged_left": 0, "at_restore": 0, "entities": 0, "postings": 0}
        leaks = found_again = found_first_again = was_first = links_changed = 0
        control_changed = control_checked = 0
        for _ in range(sequences):
            chosen = rng.sample(live, min(4, len(live)))
            before = {pk: _state(pk) for pk in chosen}
            purged: set[int] = set()
            for _ in range(ops):
                pk = rng.choice(chosen)
                action = rng.choice(
                    ["trash", "trash", "restore", "purge"] if rng.random() < 0.15 else ["trash", "restore"]
                )
                counts["operations"] += 1
                leaks += _operate(owner, pk, action, counts=counts, purged=purged, found=top_ids)
            kept = [pk for pk in chosen if pk not in purged]
            for pk in chosen:
                if pk in purged:
                    diff["purged_left"] += Memory.all_objects.filter(pk=pk).exists()
                    live.remove(pk)
            memories_restore_from_trash(owner_id=owner.pk, memory_ids=kept)
            # At the restore, rows, chunks and links are what they were (less links to a memory purged).
            existing = set(Memory.all_objects.filter(owner=owner).values_list("pk", flat=True))
            for pk in kept:
                row, chunks, links, _ = _state(pk)
                expected_links = tuple(link for link in before[pk][2] if link[0] in existing)
                diff["at_restore"] += (row, chunks, links) != (*before[pk][:2], expected_links)
            # A control: the same refresh for as many memories nobody touched shows what it changes anyway.
            control = rng.sample([pk for pk in live if pk not in chosen], min(len(kept), len(live) - len(chosen)))
            control_before = {pk: _state(pk)[2] for pk in control}
            graph_ingest_memories(memory_ids=kept)  # the worker's job after a restore
            graph_ingest_memories(memory_ids=control)
            control_changed += sum(_state(pk)[2] != links for pk, links in control_before.items())
            control_checked += len(control)
            for pk in kept:
                after = _state(pk)
                # Entities come back by the same keys once the worker read it again; the link refresh
                # that follows rescores links against the collection as it is now, counted apart.
                diff["entities"] += after[3] != before[pk][3]
                links_changed += after[2] != before[pk][2]
                ids = top_ids(pk)
                found_again += pk in ids
                found_first_again += ids[:1] == [pk]
                was_first += first_before[pk]
            incremental = _postings(owner.pk)
            lexical.reindex_owner(owner.pk)
            diff["postings"] += incremental != _postings(owner.pk)
        self.stdout.write(
            json.dumps(
                {
                    "documents": len(stored),
                    "chunks": MemoryChunk.objects.filter(owner=owner).count(),
                    "load_s": round(load_s, 1),
                    "sequences": sequences,
                    **counts,
                    "differences": sum(diff.values()),
                    "differences_by_check": diff,
                    "restored_with_other_links": links_changed,
                    "untouched_refreshed": control_checked,
                    "untouched_with_other_links": control_changed,
                    "trashed_found_by_search": leaks,
                    "searches_while_trashed": counts["trashed"],
                    "restored_found_in_top10": found_again,
                    "restored_first": found_first_again,
                    "first_before_trash": was_first,
                }
            )
        )

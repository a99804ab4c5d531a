"""Memory links: create, rescore and expire them by graph.linkrules, keeping each link's evidence.

What two memories share is read by graph.services.linkevidence; whether that makes a link, and how
strong, is decided by graph.linkrules; this module writes the result and records it in the activity.
"""

from __future__ import annotations

import json
from collections import defaultdict
from collections.abc import Sequence
from datetime import datetime
from functools import partial

from django.db import connection, transaction
from django.db.models import Q
from django.utils import timezone

from core.retry import run_with_retry
from graph.linkrules import LINK_RULES_VERSION, link_details, link_verdict
from graph.maillinks import attachment_link_evidence, thread_link_evidence
from graph.models import MemoryLink
from graph.notelinks import note_link_evidence
from graph.services.linkevidence import pair_evidence
from graph.services.sql import lock_memories, lock_owner_graph
from memories.models import ActivityKind, Memory
from memories.services.activity import activities_record


def _links_evidence(owner_id: int, focus: set[int] | None) -> dict[tuple[int, int, str], tuple]:
    """(a, b, reason) -> (score, confidence, evidence, details) for every pair that has evidence: at
    most one link by content per pair (graph.linkrules decides it, and its reason is what carries it
    most), beside the certain links the material itself states."""
    content = MemoryLink.objects.filter(owner_id=owner_id, reason__in=CONTENT_REASONS)
    if focus is not None:
        content = content.filter(Q(source_id__in=focus) | Q(target_id__in=focus))
    judged = pair_evidence(owner_id, focus, content.values_list("source_id", "target_id"))
    verdicts = {pair: (verdict, evidence) for pair, evidence in judged.items() if (verdict := link_verdict(evidence))}
    found: dict[tuple[int, int, str], tuple] = {}
    for (a, b), (verdict, evidence) in _strongest(verdicts, focus).items():
        names = [name for name, _ in sorted([*evidence.entities, *evidence.tags], key=lambda item: -item[1])]
        found[(a, b, verdict.reason)] = (
            verdict.score,
            verdict.confidence,
            _evidence_text(names),
            link_details(evidence),
        )
    for reason, pairs in (
        (MemoryLink.Reason.LINKED_IN_NOTE, note_link_evidence(owner_id, focus)),
        (MemoryLink.Reason.MAIL_THREAD, thread_link_evidence(owner_id, focus)),
        (MemoryLink.Reason.MAIL_ATTACHMENT, attachment_link_evidence(owner_id, focus)),
    ):
        # Links the material itself states (a [[wikilink]], a reply's headers, an attachment): certain.
        for a, b in pairs:
            found[(a, b, reason)] = (1.0, 1.0, "", {})
    return found


CONTENT_REASONS = (MemoryLink.Reason.SEMANTIC, MemoryLink.Reason.SHARED_ENTITIES, MemoryLink.Reason.SHARED_TAGS)
PER_MEMORY = 12  # a memory's strongest links by content kept: a hub never links to thousands


def _strongest(verdicts: dict[tuple[int, int], tuple], focus: set[int] | None) -> dict[tuple[int, int], tuple]:
    """Each memory's PER_MEMORY strongest pairs; a pair stays if it is among either memory's (among a
    focus memory's, when only some memories are refreshed)."""
    ranked: dict[int, list] = defaultdict(list)
    for (a, b), (verdict, _) in verdicts.items():
        ranked[a].append((verdict.score, (a, b)))
        ranked[b].append((verdict.score, (a, b)))
    keep: set[tuple[int, int]] = set()
    for memory_id, pairs in ranked.items():
        if focus is not None and memory_id not in focus:
            continue
        pairs.sort(key=lambda item: (-item[0], item[1]))
        keep.update(pair for _, pair in pairs[:PER_MEMORY])
    return {pair: value for pair, value in verdicts.items() if pair in keep}


def _evidence_text(shared: list) -> str:
    """The shared names or tags, most distinctive first, as many as fit the field."""
    text = ""
    for item in shared[:5]:
        item = str(item).replace("|", "/")
        if len(text) + len(item) + 1 > 300:
            break
        text = f"{text}|{item}" if text else item
    return text


def memory_links_refresh(*, owner, memory_ids: Sequence[int] | None = None, expire_all: bool = False) -> dict:
    """Create, reinforce and expire the links of these memories (or of all the owner's memories).

    A link exists while its evidence does (graph.linkrules: meaning, or several rare shared things) and
    keeps that evidence, for the memory page and the API to say why the two are linked. "Reinforced"
    means the link was found again for a memory named in memory_ids (it was just created, changed or
    revisited), or its score rose; a refresh of everything (memory_ids=None) does not by itself make
    every link recent. Every link written carries LINK_RULES_VERSION, so the sleep agent knows which
    owners' links older rules made.

    With `expire_all`, the owner's whole evidence is read once and every link without evidence goes,
    not only those of these memories: the sleep cycle's one pass per owner instead of a refresh and
    then a memory_links_expire, which would read the same evidence twice.
    """
    owner_id = owner.pk if hasattr(owner, "pk") else int(owner)
    focus = None
    if memory_ids is not None:
        focus = set(Memory.objects.filter(owner_id=owner_id, pk__in=list(memory_ids)).values_list("pk", flat=True))
        if not focus and not expire_all:
            return {"created": 0, "reinforced": 0, "unchanged": 0, "expired": 0}
    # A deadlock with a delete of a neighbouring memory (whose row it is linked to) is retried, as is a
    # link to a memory deleted meanwhile.
    return run_with_retry(
        partial(_links_refresh, owner_id, focus, expire_all), vanished=True, label="memory_links_refresh"
    )


def _links_refresh(owner_id: int, focus: set[int] | None, expire_all: bool) -> dict:
    now = timezone.now()
    with transaction.atomic():
        if focus:
            # The memories' rows first, as every memory writer does (see core.retry); deleted ones drop out.
            focus = lock_memories(focus)
            if not focus and not expire_all:
                return {"created": 0, "reinforced": 0, "unchanged": 0, "expired": 0}
        lock_owner_graph(owner_id)
        found = _links_evidence(owner_id, None if expire_all else focus)
        # A trashed memory has no evidence now, yet its links stay for a restore to bring back.
        links = MemoryLink.objects.filter(owner_id=owner_id, source__trashed_at=None, target__trashed_at=None)
        if focus is not None and not expire_all:
            links = links.filter(Q(source_id__in=focus) | Q(target_id__in=focus))
        existing = {(link.source_id, link.target_id, link.reason): link for link in links}
        expired = [link.pk for key, link in existing.items() if key not in found]
        MemoryLink.objects.filter(pk__in=expired).delete()
        to_create, to_update = [], []
        reinforced = unchanged = 0
        for (a, b, reason), (score, confidence, evidence, details) in found.items():
            link = existing.get((a, b, reason))
            if link is None:
                to_create.append((a, b, reason, score, confidence, evidence, details))
                continue
            if (focus is not None and (a in focus or b in focus)) or score > link.score + 0.01:
                link.last_reinforced_at = now
                reinforced += 1
            elif (
                abs(score - link.score) < 1e-6
                and abs(confidence - link.confidence) < 1e-6
                and evidence == link.evidence
                and details == link.details
                and link.rules_version == LINK_RULES_VERSION
            ):
                unchanged += 1
                continue
            else:
                unchanged += 1
            to_update.append((link.pk, score, confidence, evidence, details, link.last_reinforced_at))
        _links_write(owner_id=owner_id, now=now, create=to_create, update=to_update)
        _links_record(owner_id, to_create)
    return {"created": len(to_create), "reinforced": reinforced, "unchanged": unchanged, "expired": len(expired)}


def _links_write(*, owner_id: int, now: datetime, create: list[tuple], update: list[tuple]) -> None:
    """New links (a, b, reason, score, confidence, evidence, details) and changed ones (id, score,
    confidence, evidence, details, reinforced at), each in one set-based statement; a whole-graph
    refresh touches tens of thousands."""
    with connection.cursor() as cursor:
        if create:
            a, b, reasons, scores, confidences, evidence, details = zip(*create, strict=True)
            cursor.execute(
                "INSERT INTO graph_memorylink (owner_id, source_id, target_id, reason, score, confidence, evidence, "
                "details, rules_version, created_at, last_reinforced_at) SELECT %s, v.a, v.b, v.reason, v.score, "
                "v.confidence, v.evidence, v.details::jsonb, %s, %s, %s FROM unnest(%s::bigint[], %s::bigint[], "
                "%s::varchar[], %s::float8[], %s::float8[], %s::varchar[], %s::text[]) "
                "AS v(a, b, reason, score, confidence, evidence, details) "
                "ON CONFLICT (source_id, target_id, reason) DO NOTHING",
                [
                    owner_id,
                    LINK_RULES_VERSION,
                    now,
                    now,
                    list(a),
                    list(b),
                    list(reasons),
                    list(scores),
                    list(confidences),
                    list(evidence),
                    [json.dumps(item) for item in details],
                ],
            )
        if update:
            ids, scores, confidences, evidence, details, reinforced = zip(*update, strict=True)
            cursor.execute(
                "UPDATE graph_memorylink l SET score = v.score, confidence = v.confidence, evidence = v.evidence, "
                "details = v.details::jsonb, rules_version = %s, last_reinforced_at = v.at "
                "FROM unnest(%s::bigint[], %s::float8[], %s::float8[], %s::varchar[], %s::text[], "
                "%s::timestamptz[]) AS v(id, score, confidence, evidence, details, at) WHERE l.id = v.id",
                [
                    LINK_RULES_VERSION,
                    list(ids),
                    list(scores),
                    list(confidences),
                    list(evidence),
                    [json.dumps(item) for item in details],
                    list(reinforced),
                ],
            )


LINKED_NAMED = 5  # the linked memories an activity entry names (it counts them all)


def _links_record(owner_id: int, created: list[tuple]) -> None:
    """One "linked" activity entry per memory that gained links, naming the memories it is now linked to."""
    if not created:
        return
    partners: dict[int, set[int]] = defaultdict(set)
    for a, b, *_ in created:
        partners[a].add(b)
        partners[b].add(a)
    titles = {
        m.pk: m for m in Memory.objects.filter(owner_id=owner_id, pk__in=list(partners)).only("pk", "owner_id", "title")
    }
    memories = [titles[pk] for pk in sorted(partners) if pk in titles]
    details = [
        {
            "count": len(partners[m.pk]),
            "with": [
                {"id": pk, "title": titles[pk].title} for pk in sorted(partners[m.pk])[:LINKED_NAMED] if pk in titles
            ],
        }
        for m in memories
    ]
    activities_record(memories=memories, kind=ActivityKind.LINKED, details=details)


def memory_links_outdated_owners() -> list[int]:
    """Owners with links that older link rules made (a smaller LINK_RULES_VERSION): the sleep agent's
    Link step rescores all their links, once, after the rules change."""
    return sorted(
        MemoryLink.objects.filter(rules_version__lt=LINK_RULES_VERSION).values_list("owner_id", flat=True).distinct()
    )


def memory_links_expire(*, owner) -> int:
    """Delete the owner's links whose evidence is gone (a whole-graph refresh); returns how many went."""
    return memory_links_refresh(owner=owner, memory_ids=[], expire_all=True)["expired"]

"""Re-typing: the entities an owner already has, typed and named again by the current rules.

Rules improve (the gazetteer grows, an alias is added), and a type voted by the mentions of the
first memories may lose the vote once more memories mention the name. This pass brings stored
entities up to date without extracting any text again: entities filed under an alias are merged
into the canonical one, the types the name alone settles are applied to every mention, names that
are not entities go, and every touched entity is recounted (its type is the majority of its
mentions across the collection)."""

from __future__ import annotations

from collections import defaultdict

from django.db import transaction

from graph.extraction import canonical_key, type_for_name
from graph.models import Entity, EntityMention
from graph.services.sql import lock_owner_graph
from graph.services.upkeep import entities_recount, entity_merge, owner_graph_normalise


def graph_owner_retype(*, owner_id: int) -> dict:
    """Merge alias entities, apply the types names settle, drop non-entities; returns counts."""
    with transaction.atomic():
        lock_owner_graph(owner_id)
        rows = list(Entity.objects.filter(owner_id=owner_id).values_list("pk", "key", "name", "type", "aliases"))
        by_key = {key: pk for pk, key, *_ in rows}
        retyped: dict[str, list[int]] = defaultdict(list)
        dropped: list[int] = []
        merges: list[tuple[int, int]] = []
        rekeyed = 0
        for pk, key, name, entity_type, aliases in rows:
            settled = type_for_name(name, key, entity_type)
            if settled is None:
                dropped.append(pk)
                continue
            wanted = canonical_key(name, settled)
            # A name shown from a key folded into this entity ("Megan" in "Megan Doyle") keeps the key.
            if wanted != key and wanted and wanted not in aliases:
                target = by_key.get(wanted)
                if target is None:
                    Entity.objects.filter(pk=pk).update(key=wanted)
                    by_key[wanted] = by_key.pop(key)
                    rekeyed += 1
                elif target != pk:
                    merges.append((pk, target))
            if settled != entity_type:
                retyped[settled].append(pk)
        for entity_type, ids in retyped.items():
            EntityMention.objects.filter(entity_id__in=ids).update(type=entity_type)
        Entity.objects.filter(pk__in=dropped).delete()
        for source, target in merges:
            if Entity.objects.filter(pk=source).exists() and Entity.objects.filter(pk=target).exists():
                entity_merge(source_id=source, target_id=target)
        touched = {pk for ids in retyped.values() for pk in ids} - set(dropped)
        entities_recount(entity_ids=touched)
        owner_graph_normalise(owner_id=owner_id)
    return {
        "entities": len(rows),
        "retyped": len(touched),
        "merged": len(merges),
        "rekeyed": rekeyed,
        "dropped": len(dropped),
    }

"""Re-typing: every entity of an owner typed again from all its mentions in the collection."""

from __future__ import annotations

from django.db import transaction

from graph.models import Entity
from graph.services.sql import lock_owner_graph
from graph.services.upkeep import entities_recount, owner_graph_normalise


def graph_owner_retype(*, owner_id: int) -> dict:
    """Type (and name) every entity of the owner again from all its mentions."""
    with transaction.atomic():
        lock_owner_graph(owner_id)
        ids = set(Entity.objects.filter(owner_id=owner_id).values_list("pk", flat=True))
        entities_recount(entity_ids=ids)
        owner_graph_normalise(owner_id=owner_id)
    return {"entities": len(ids)}

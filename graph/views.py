"""Graph pages: the topology page, the entity panel, and the memory panel on memory pages."""

from __future__ import annotations

from django.conf import settings
from django.shortcuts import get_object_or_404, render

from graph import selectors
from graph.forms import GraphFilterForm
from graph.selectors import MAX_GRAPH_NODES
from memories.models import Memory
from memories.selectors import tag_counts


def topology(request):
    """The graph drawn with cytoscape.js; filters are a plain GET form, so any view can be linked to."""
    form = GraphFilterForm(request.GET or None)
    data, error, focus, not_found = None, None, None, ""
    if form.is_bound and not form.is_valid():
        error = " ".join(
            f"{form.fields[name].label or name.replace('_', ' ').capitalize()}: {e}"
            for name, errors in form.errors.items()
            for e in errors
        )
    else:
        cleaned = form.cleaned_data if form.is_bound else {}
        view = cleaned.get("view") or "entities"
        if cleaned.get("q"):
            focus = selectors.entity_find(user=request.user, q=cleaned["q"])
            not_found = "" if focus else cleaned["q"]
        query = selectors.GraphQuery(
            view=view,
            entity_id=focus.pk if focus else None,
            types=tuple(cleaned.get("type") or ()),
            tag=cleaned.get("tag") or "",
            min_weight=cleaned.get("min_weight") or 0.0,
            limit=cleaned.get("limit") or settings.KYBERNESIS_GRAPH_NODE_LIMIT,
        )
        data = selectors.graph_view(user=request.user, query=query)
    more_url = None
    if data and data["truncated"] and data["limit"] < MAX_GRAPH_NODES:
        params = request.GET.copy()
        params["limit"] = min(MAX_GRAPH_NODES, data["limit"] + settings.KYBERNESIS_GRAPH_NODE_LIMIT)
        more_url = f"?{params.urlencode()}"
    context = {
        "form": form,
        "data": data,
        "groups": list_groups(data) if data else None,
        "error": error,
        "focus": focus,
        "not_found": not_found,
        "more_url": more_url,
        "tags": [t["tag"] for t in tag_counts(user=request.user, limit=200)],
    }
    return render(request, "graph/topology.html", context, status=422 if error else 200)


def list_groups(data: dict) -> dict:
    """The list view's sections: each cluster with its members (most salient first), the drawn nodes
    in no cluster, and the isolated ones, which the drawing hides at first."""
    members: dict[str | None, list[dict]] = {}
    isolated = []
    for node in data["nodes"]:
        if node["kind"] == "tag":
            continue
        if node["isolated"]:
            isolated.append(node)
        else:
            members.setdefault(node["cluster"], []).append(node)
    clusters = [
        {**cluster, "nodes": members[cluster["id"]]} for cluster in data["clusters"] if cluster["id"] in members
    ]
    drawn = sum(len(nodes) for nodes in members.values())
    return {"clusters": clusters, "loose": members.get(None, []), "isolated": isolated, "drawn": drawn}


def entity_detail(request, entity_id: int):
    """One entity: its memories (with the passage that names it) and its relationships. The topology
    page loads the panel part into its side panel; without JavaScript it is a page of its own."""
    entity = selectors.entity_get(user=request.user, entity_id=entity_id)
    context = {
        "entity": entity,
        "memories": selectors.entity_memories(entity=entity),
        "relationships": selectors.entity_relationships(entity=entity),
        "other_names": selectors.entity_other_names(entity=entity),
    }
    template = "graph/entity.html#panel" if request.htmx else "graph/entity.html"
    return render(request, template, context)


def memory_panel(request, memory_id: int):
    """A memory's entities and related memories; the memory page and the topology page load it."""
    memory = get_object_or_404(Memory.objects.for_user(request.user).defer("content"), pk=memory_id)
    context = {
        "memory": memory,
        "entities": selectors.memory_entities(memory=memory),
        "related": selectors.memory_links(memory=memory),
        "in_topology": request.GET.get("from") == "graph",
    }
    template = "graph/memory_panel.html#panel" if request.htmx else "graph/memory_panel.html"
    return render(request, template, context)

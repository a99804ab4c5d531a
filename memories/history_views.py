"""History and activity pages: a memory's versions, a diff between any two, restore, and the trails."""

from __future__ import annotations

from django.contrib import messages
from django.core.paginator import Paginator
from django.http import Http404
from django.shortcuts import redirect, render
from django.views.decorators.http import require_http_methods

from memories import diffs, history, selectors
from memories.services.restore import memory_version_restore

VERSIONS_PER_PAGE = 20
PANEL_VERSIONS = 5
ACTIVITY_PER_PAGE = 30
PANEL_ACTIVITY = 8

FIELD_LABELS = diffs.FIELD_LABELS


def _labels(names: list[str]) -> list[str]:
    return [FIELD_LABELS.get(name, name).lower() for name in names]


def memory_history(request, memory_id: int):
    """The memory's versions, newest first, with who made each and what it changed, and a form to
    compare any two (`?a=&b=`; the diff is shown under it). With `?panel=1` (the memory page loads it)
    only the newest few, as a fragment."""
    memory = selectors.memory_get(user=request.user, memory_id=memory_id)
    versions = history.memory_version_list(user=request.user, memory_id=memory.pk)
    if request.GET.get("panel"):
        rows = versions[:PANEL_VERSIONS]
        return render(
            request,
            "memories/history.html#panel",
            {"memory": memory, "rows": rows, "total": versions.count(), "labels": _row_labels(rows)},
        )
    page = Paginator(versions, VERSIONS_PER_PAGE).get_page(request.GET.get("page"))
    context = {"memory": memory, "page": page, "labels": _row_labels(page.object_list)}
    a, b = request.GET.get("a"), request.GET.get("b")
    status = 200
    if a and b:
        try:
            older, newer, changes = history.memory_versions_diff(user=request.user, memory_id=memory.pk, old=a, new=b)
        except Http404 as exc:
            context["compare_error"] = str(exc)
            status = 404
        else:
            context.update(older=older, newer=newer, changes=changes)
        context.update(a=a, b=b)
    template = "memories/history.html#compare" if request.htmx and a and b else "memories/history.html"
    return render(request, template, context, status=status)


def _row_labels(rows) -> dict[int, list[str]]:
    return {row.version.version: _labels(row.changed) for row in rows}


def memory_version(request, memory_id: int, number: str):
    """One version in full, with what it changed from the version before."""
    memory = selectors.memory_get(user=request.user, memory_id=memory_id)
    version, base, changes = history.memory_version_changes(user=request.user, memory_id=memory.pk, number=number)
    context = {
        "memory": memory,
        "version": version,
        "base": base,
        "changes": changes,
        "actor": history.actor_of(version.pgh_context),
    }
    return render(request, "memories/version.html", context)


@require_http_methods(["GET", "POST"])
def memory_version_restore_view(request, memory_id: int, number: str):
    """GET: what restoring the version would change, and a button to confirm. POST: restore it (through
    the memory update service: re-chunked, re-embedded, a new version) and go back to the memory."""
    memory = selectors.memory_get(user=request.user, memory_id=memory_id)
    version = history.memory_version(user=request.user, memory_id=memory.pk, number=number)
    if request.method == "POST":
        restored = memory_version_restore(memory=memory, number=version.version)
        if restored.version == memory.version:
            messages.info(
                request, f"Nothing to restore: “{restored.title}” is already as version {version.version} was."
            )
        else:
            messages.success(
                request,
                f"Restored version {version.version} of “{restored.title}”; the restore is version {restored.version}.",
            )
        return redirect("memories:detail", memory_id=memory.pk)
    current = history.memory_version(user=request.user, memory_id=memory.pk, number=memory.version)
    changes = diffs.version_diff(history.version_fields(current), history.version_fields(version))
    return render(
        request,
        "memories/version_restore.html",
        {"memory": memory, "version": version, "current": current, "changes": changes},
    )


def memory_activity(request, memory_id: int):
    """The memory's activity trail; `?panel=1` is the memory page's fragment of the newest entries."""
    memory = selectors.memory_get(user=request.user, memory_id=memory_id)
    trail = history.activity_trail(user=request.user, memory_id=memory.pk)
    if request.GET.get("panel"):
        return render(
            request,
            "memories/activity.html#panel",
            {"memory": memory, "entries": trail[:PANEL_ACTIVITY], "total": trail.count()},
        )
    page = Paginator(trail, ACTIVITY_PER_PAGE).get_page(request.GET.get("page"))
    template = "memories/activity.html#trail" if request.htmx else "memories/activity.html"
    return render(request, template, {"memory": memory, "page": page})


def account_activity(request):
    """Everything that happened to the account's memories, newest first, purged ones included."""
    page = Paginator(history.activity_trail(user=request.user), ACTIVITY_PER_PAGE).get_page(request.GET.get("page"))
    template = "memories/activity.html#trail" if request.htmx else "memories/activity.html"
    return render(request, template, {"memory": None, "page": page})

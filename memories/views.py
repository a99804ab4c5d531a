"""Memory pages: list, detail with chunks, and the add form. Thin: parse, call, render."""

from __future__ import annotations

from django.contrib import messages
from django.contrib.auth.decorators import login_not_required
from django.core.paginator import Paginator
from django.shortcuts import redirect, render
from django.utils.text import capfirst
from django.views.decorators.http import require_POST

from memories import selectors, services
from memories.forms import MemoryFilterForm, MemoryForm
from memories.models import Tier

PAGE_SIZE = 25


@login_not_required
def home(request):
    """Signed-in people go to their memories; anyone else starts at sign-up."""
    if request.user.is_authenticated:
        return redirect("memories:list")
    return redirect("account_signup")


def memory_list(request):
    filters = MemoryFilterForm(request.GET or None)
    cleaned = filters.cleaned_data if filters.is_valid() else {}
    tag = (cleaned.get("tag") or "").strip().lower()
    qs = selectors.memory_list(user=request.user, tier=cleaned.get("tier") or None,
                               source=cleaned.get("source") or None, tags=[tag] if tag else None)
    page = Paginator(qs, PAGE_SIZE).get_page(request.GET.get("page"))
    context = {
        "page": page,
        "filters": filters,
        "tier_counts": selectors.memory_tier_counts(user=request.user),
        "tiers": Tier,
        "querystring": _querystring_without_page(request),
    }
    template = "memories/list.html#results" if request.htmx else "memories/list.html"
    return render(request, template, context)


def _querystring_without_page(request) -> str:
    params = request.GET.copy()
    params.pop("page", None)
    return params.urlencode()


def memory_detail(request, memory_id: int):
    memory = selectors.memory_get(user=request.user, memory_id=memory_id)
    chunks = memory.chunks.only("position", "text", "char_start", "char_end", "tier")
    return render(request, "memories/detail.html", {"memory": memory, "chunks": chunks})


def memory_new(request):
    form = MemoryForm(request.POST or None)
    if request.method == "POST" and form.is_valid():
        data = form.cleaned_data
        try:
            memory = services.memory_create(owner=request.user, title=data["title"], content=data["content"],
                                            priority=data["priority"], manual_tags=data["tags"])
        except services.MemoryInputError as exc:
            form.add_error(exc.field if exc.field in form.fields else None, capfirst(str(exc)))
        else:
            messages.success(request, f"Saved “{memory.title}” in {memory.chunk_count} chunk(s).")
            return redirect("memories:detail", memory_id=memory.pk)
    return render(request, "memories/new.html", {"form": form}, status=422 if form.errors else 200)


@require_POST
def memory_delete(request, memory_id: int):
    memory = selectors.memory_get(user=request.user, memory_id=memory_id)
    title = memory.title
    services.memory_delete(memory=memory)
    messages.success(request, f"Deleted “{title}”.")
    return redirect("memories:list")

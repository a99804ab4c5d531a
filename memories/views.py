"""Memory pages: list, detail with chunks, and the add form. Thin: parse, call, render."""

from __future__ import annotations

import json
import math

from django.conf import settings
from django.contrib import messages
from django.contrib.auth.decorators import login_not_required
from django.core.paginator import Paginator
from django.http import Http404
from django.shortcuts import redirect, render
from django.urls import reverse
from django.utils import timezone
from django.utils.text import capfirst
from django.views.decorators.http import require_http_methods, require_POST

from core.redirects import redirect_back, safe_next
from core.text import text_problem
from memories import original_files, parsers, search, selectors, services
from memories.forms import (
    ChatForm,
    MemoryEditForm,
    MemoryFilterForm,
    MemoryForm,
    SearchForm,
    UploadForm,
)
from memories.models import Tier
from memories.search import answers
from memories.services import bulk
from memories.services.trash import purge_due_at
from memories.tag_rules import split_tags

PAGE_SIZE = 25


@login_not_required
def home(request):
    """Signed-in people go to their memories; anyone else sees what Kybernesis is, with sign-in and sign-up."""
    if request.user.is_authenticated:
        return redirect("memories:list")
    return render(request, "landing.html")


def memory_list(request):
    filters = MemoryFilterForm(request.GET or None)
    cleaned = filters.cleaned_data if filters.is_valid() else {}
    qs = selectors.memory_list(
        user=request.user,
        tier=cleaned.get("tier") or None,
        source=cleaned.get("source") or None,
        tags=[cleaned.get("tag") or ""],
        sort=cleaned.get("sort") or None,
    )
    page = Paginator(qs, PAGE_SIZE).get_page(request.GET.get("page"))
    context = {
        "page": page,
        "undo": request.session.pop(BULK_UNDO_NOTICE, None) and request.session.get(BULK_UNDO),
        "filters": filters,
        "tier_counts": selectors.memory_tier_counts(user=request.user),
        "tiers": Tier,
        "querystring": _querystring_without_page(request),
    }
    template = "memories/list.html#results" if request.htmx else "memories/list.html"
    return render(request, template, context)


BULK_UNDO = "memories_bulk_undo"
BULK_UNDO_NOTICE = "memories_bulk_undo_notice"


@require_http_methods(["GET", "POST"])
def memory_bulk(request):
    """Tag, pin, unpin or delete the memories ticked on the list. The first post shows a confirmation
    page; the confirmed post applies the action and leaves an undo button on the list. A GET (the
    confirmation page reloaded, or its address opened again) goes back to the list."""
    if request.method == "GET":
        return redirect("memories:list")
    ids, action, tag = request.POST.getlist("ids"), request.POST.get("action", ""), request.POST.get("tag", "")
    back = safe_next(request, reverse("memories:list"))
    try:
        if request.POST.get("confirmed") != "1":
            preview = bulk.memories_bulk_preview(owner=request.user, memory_ids=ids, action=action, tag=tag)
            return render(
                request,
                "memories/bulk_confirm.html",
                {"selected": preview.memories, "action": action, "tag": preview.tag, "next": back},
            )
        result = bulk.memories_bulk(owner=request.user, memory_ids=ids, action=action, tag=tag)
    except services.MemoryInputError as exc:
        messages.error(request, capfirst(str(exc)) + ".")
        return redirect(back)
    # The list shows the result once, in the bar that holds its Undo button (not again as a message).
    request.session[BULK_UNDO] = {"undo": result.undo, "message": result.message}
    request.session[BULK_UNDO_NOTICE] = True
    return redirect(back)


@require_http_methods(["GET", "POST"])
def memory_bulk_undo(request):
    if request.method == "GET":
        return redirect("memories:list")
    back = safe_next(request, reverse("memories:list"))
    record = request.session.pop(BULK_UNDO, None)
    if not record:
        messages.error(request, "There is nothing to undo: the last bulk action was already undone or has expired.")
        return redirect(back)
    try:
        messages.success(request, bulk.memories_bulk_undo(owner=request.user, undo=record["undo"]))
    except services.MemoryInputError as exc:
        messages.error(request, capfirst(str(exc)) + ".")
    return redirect(back)


def _querystring_without_page(request) -> str:
    params = request.GET.copy()
    params.pop("page", None)
    return params.urlencode()


def memory_detail(request, memory_id: int):
    """A memory with one page of its chunks; `?chunk=N` opens the page that holds chunk N.

    Showing this page is the one place a browser's open of a memory is counted (a search result's
    link redirects here and counts nothing itself). Moving to another page of its chunks
    (`?cpage=`) is the same reading, not another open."""
    memory = selectors.memory_get(user=request.user, memory_id=memory_id)
    if "cpage" not in request.GET:
        memory = services.memory_open(memory=memory)
    chunks = selectors.memory_chunk_page(memory=memory, page=request.GET.get("cpage"), chunk=request.GET.get("chunk"))
    original = selectors.memory_original(memory=memory)
    context = {
        "memory": memory,
        "chunks": chunks,
        "original": original,
        "original_opens": original is not None and original_files.inline_type(original.media_type) is not None,
        "mail": selectors.memory_mail(memory=memory),
        "chunk_languages": selectors.memory_chunk_languages(memory=memory) if memory.chunk_count > 1 else [],
        # Source code keeps its layout only in a monospace font.
        "is_code": (memory.metadata or {}).get("extension") in parsers.CODE_EXTENSIONS,
        **_tier_context(memory),
    }
    return render(request, "memories/detail.html", context)


def memory_open(request, memory_id: int):
    """A search result's link: a redirect to the memory page at the result's chunk
    (`?chunk=<position>`). The page it lands on counts the open, so this counts nothing."""
    memory = selectors.memory_get(user=request.user, memory_id=memory_id)
    url = reverse("memories:detail", args=[memory.pk])
    chunk = request.GET.get("chunk", "")
    if (
        chunk.isdigit()
        and len(chunk) < 10
        and memory.chunks.filter(owner_id=memory.owner_id, position=int(chunk)).exists()
    ):
        url += f"?chunk={chunk}#chunk-{chunk}"
    return redirect(url)


def memory_original(request, memory_id: int):
    """Open the memory's original in the browser: a PDF in its viewer, text as text/plain; a type that
    cannot be shown safely (HTML, SVG, Word) downloads instead. Only the owner gets it (else 404)."""
    original = selectors.memory_original_get(user=request.user, memory_id=memory_id)
    return original_files.response(original, inline=True)


def memory_original_download(request, memory_id: int):
    """The original, byte for byte, as an attachment with its own (sanitised) name."""
    original = selectors.memory_original_get(user=request.user, memory_id=memory_id)
    return original_files.response(original, inline=False)


def memory_edit(request, memory_id: int):
    """Change the title, content and metadata through the same service as the API's PATCH: changed chunks
    are re-embedded and the graph is re-extracted for new content."""
    memory = selectors.memory_get(user=request.user, memory_id=memory_id)
    initial = {
        "title": memory.title,
        "content": memory.content,
        "metadata": json.dumps(memory.metadata, indent=2, ensure_ascii=False) if memory.metadata else "",
    }
    form = MemoryEditForm(request.POST or None, initial=initial)
    if request.method == "POST" and form.is_valid():
        data = form.cleaned_data
        try:
            memory = services.memory_update(
                memory=memory, title=data["title"], content=data["content"], metadata=data["metadata"]
            )
        except services.MemoryInputError as exc:
            form.add_error(exc.field if exc.field in form.fields else None, capfirst(str(exc)))
        else:
            messages.success(request, f"Saved your changes to “{memory.title}”.")
            return redirect("memories:detail", memory_id=memory.pk)
    return render(request, "memories/edit.html", {"memory": memory, "form": form}, status=422 if form.errors else 200)


def _tier_context(memory) -> dict:
    return {
        "tier_history": selectors.memory_tier_history(memory=memory, limit=20),
        "max_manual_tags": services.MAX_MANUAL_TAGS,
    }


def _back(request, memory_id: int, error: str | None = None):
    """Without JavaScript a small form posts here and the browser goes back where it was."""
    if error:
        messages.error(request, error)
    return redirect_back(request, reverse("memories:detail", args=[memory_id]))


@require_POST
def memory_pin(request, memory_id: int):
    """Pin or unpin. From the list the row is swapped; from the memory page the tier card is."""
    memory = selectors.memory_get(user=request.user, memory_id=memory_id)
    memory = services.memory_pin(memory=memory, pinned=request.POST.get("pinned") == "1")
    if not request.htmx:
        messages.success(request, f"{'Pinned' if memory.pinned else 'Unpinned'} “{memory.title}”.")
        return _back(request, memory_id)
    if request.POST.get("from") == "list":
        # The re-rendered row's no-JavaScript fallback goes back to the list it came from, not to /pin/.
        row_next = safe_next(request, reverse("memories:list"))
        return render(request, "memories/list.html#row", {"memory": memory, "row_next": row_next})
    return render(
        request,
        "memories/detail.html#tier-card",
        {"memory": memory, "tier_message": f"{'Pinned' if memory.pinned else 'Unpinned'}.", **_tier_context(memory)},
    )


@require_POST
def memory_kind(request, memory_id: int):
    """Mark a chat message "this is a note" or "this asks something" (kind=note|question), or hand it
    back to the question rule (kind=auto). The choice is kept when the message is edited later."""
    memory = selectors.memory_get(user=request.user, memory_id=memory_id)
    choice = request.POST.get("kind", "")
    error = None
    if choice not in ("question", "note", "auto"):
        error = "Choose whether the message asks something or is a note."
    else:
        try:
            memory = services.memory_update(memory=memory, kind=None if choice == "auto" else choice)
        except services.MemoryInputError as exc:
            error = capfirst(str(exc)) + "."
    if not request.htmx:
        if not error:
            messages.success(request, _KIND_SAVED[memory.kind or "note"])
        return _back(request, memory_id, error)
    context = {"memory": memory, "kind_error": error, "kind_message": "" if error else "Saved."}
    return render(request, "memories/detail.html#kind", context, status=422 if error else 200)


_KIND_SAVED = {
    "question": "Marked as a message that asks something: search shows it after the notes that answer it.",
    "note": "Marked as a note: search ranks it like any other note.",
}


@require_POST
def memory_priority(request, memory_id: int):
    memory = selectors.memory_get(user=request.user, memory_id=memory_id)
    error = None
    try:
        priority = float(request.POST.get("priority", ""))
    except ValueError:
        error = "Priority must be a number from 0 to 1."
    else:
        try:
            memory = services.memory_update(memory=memory, priority=priority)
        except services.MemoryInputError as exc:
            error = capfirst(str(exc)) + "."
    if not request.htmx:
        return _back(request, memory_id, error)
    context = {"memory": memory, "priority_error": error, **_tier_context(memory)}
    return render(request, "memories/detail.html#tier-card", context, status=422 if error else 200)


@require_POST
def memory_tags(request, memory_id: int):
    """Add manual tags (comma-separated) or, with `remove`, take one away; the tag editor is re-rendered."""
    memory = selectors.memory_get(user=request.user, memory_id=memory_id)
    error = None
    try:
        if "remove" in request.POST:
            memory = services.memory_tag_remove(memory=memory, tag=request.POST["remove"])
        else:
            memory = services.memory_tags_add(memory=memory, tags=split_tags([request.POST.get("tags", "")]))
    except services.MemoryInputError as exc:
        error = capfirst(str(exc)) + "."
    if not request.htmx:
        return _back(request, memory_id, error)
    if "remove" in request.POST:
        message = f"Removed tag {request.POST['remove']}."
    else:
        message = f"Tags now: {', '.join(memory.manual_tags) or 'none'}."
    context = {
        "memory": memory,
        "tag_error": error,
        "tag_input": request.POST.get("tags", "") if error else "",
        "tag_message": message,
        **_tier_context(memory),
    }
    response = render(request, "memories/detail.html#tag-editor", context, status=422 if error else 200)
    if not error:
        response["HX-Trigger"] = "tier-changed"  # manual tags can move the memory between tiers
    return response


def memory_tier_card(request, memory_id: int):
    memory = selectors.memory_get(user=request.user, memory_id=memory_id)
    return render(request, "memories/detail.html#tier-card", {"memory": memory, **_tier_context(memory)})


def tag_list(request):
    """Every tag with how many memories carry it; each links to the memories with that tag."""
    prefix = request.GET.get("q", "")[:64]
    if problem := text_problem(prefix):
        messages.error(request, f"The tag filter {problem}; showing every tag.")
        prefix = ""
    tags = selectors.tag_counts(user=request.user, prefix=prefix)
    biggest = max((t["count"] for t in tags), default=1)
    for item in tags:  # font size grows with the square root of use, between 0.8 and 1.6 rem
        item["size"] = round(0.8 + 0.8 * (item["count"] / biggest) ** 0.5, 2)
    template = "memories/tags.html#cloud" if request.htmx else "memories/tags.html"
    return render(request, template, {"tags": tags, "q": prefix})


def trash_page(request):
    """The trash: what was deleted, by whom and when, and how long until it is purged; Restore, Delete
    forever and Empty trash (both of those ask first). htmx swaps the list after each action."""
    page = Paginator(selectors.trash_list(user=request.user), PAGE_SIZE).get_page(request.GET.get("page"))
    now = timezone.now()
    for memory in page.object_list:
        memory.purge_at = purge_due_at(memory)
        memory.days_left = max(0, math.ceil((memory.purge_at - now).total_seconds() / 86400))
    context = {"page": page, "trash_days": settings.KYBERNESIS_TRASH_DAYS}
    return render(request, "memories/trash.html#trash" if request.htmx else "memories/trash.html", context)


def _trash_done(request, message: str, *, error: bool = False):
    (messages.error if error else messages.success)(request, message)
    if request.htmx:
        response = trash_page(request)
        return response
    return redirect("memories:trash")


@require_POST
def trash_restore(request, memory_id: int):
    try:
        memory = services.memory_restore_from_trash(owner=request.user, memory_id=memory_id)
    except Http404 as exc:
        return _trash_done(request, str(exc), error=True)
    return _trash_done(request, f"Restored “{memory.title}”.")


@require_POST
def trash_purge(request, memory_id: int):
    title = next(iter(selectors.trash_list(user=request.user).filter(pk=memory_id).values_list("title", flat=True)), "")
    try:
        services.memory_purge(owner=request.user, memory_id=memory_id)
    except Http404 as exc:
        return _trash_done(request, str(exc), error=True)
    return _trash_done(request, f"Deleted “{title}” forever.")


@require_POST
def trash_empty(request):
    n = services.trash_empty(owner=request.user)
    if not n:
        return _trash_done(request, "The trash was already empty.")
    return _trash_done(request, f"Deleted {n} memor{'y' if n == 1 else 'ies'} forever.")


def memory_new(request):
    form = MemoryForm(request.POST or None)
    if request.method == "POST" and form.is_valid():
        data = form.cleaned_data
        try:
            # As the API's create: the same content twice (Save pressed again while a long note was
            # still embedding, a resent form) stores it once and leads to the memory that has it.
            memory = services.memory_create(
                owner=request.user,
                title=data["title"],
                content=data["content"],
                priority=data["priority"],
                manual_tags=data["tags"],
                unique=True,
            )
        except services.MemoryInputError as exc:
            form.add_error(exc.field if exc.field in form.fields else None, capfirst(str(exc)))
        else:
            if memory.created:
                n = memory.chunk_count
                messages.success(request, f"Saved “{memory.title}” in {n} chunk{'' if n == 1 else 's'}.")
            elif getattr(memory, "restored", False):
                messages.info(request, f"“{memory.title}” was in the trash with this content: it is restored.")
            else:
                messages.info(request, f"You already have this memory, “{memory.title}”: nothing was stored twice.")
            return redirect("memories:detail", memory_id=memory.pk)
    return render(request, "memories/new.html", {"form": form}, status=422 if form.errors else 200)


@require_POST
def memory_delete(request, memory_id: int):
    memory = selectors.memory_get(user=request.user, memory_id=memory_id)
    title = memory.title
    services.memory_delete(memory=memory)
    days = settings.KYBERNESIS_TRASH_DAYS
    messages.success(request, f"Moved “{title}” to the trash. You can restore it from there for {days} days.")
    return redirect("memories:list")


def upload(request):
    """Drag-and-drop upload. The drop zone posts one file per request (for per-file progress) and gets
    back that file's result row; without JavaScript the form posts every file at once."""
    form = UploadForm()
    results, error = None, None
    if request.method == "POST":
        files = request.FILES.getlist("files")
        try:
            results = services.upload_files(
                owner=request.user, files=files, manual_tags=split_tags([request.POST.get("tags", "")])
            )
        except services.MemoryInputError as exc:
            error = capfirst(str(exc))
    context = {
        "form": form,
        "results": results,
        "jobs": selectors.upload_jobs_active(user=request.user) if request.method == "GET" else [],
        "consume": selectors.consume_folder_status(user=request.user) if request.method == "GET" else None,
        "error": error,
        "max_files": settings.KYBERNESIS_MAX_FILES_PER_UPLOAD,
        "max_mb": settings.KYBERNESIS_MAX_UPLOAD_BYTES // (1024 * 1024),
    }
    if request.htmx:
        return render(request, "memories/upload.html#results", context, status=422 if error else 200)
    return render(request, "memories/upload.html", context, status=422 if error else 200)


def upload_job(request, job_id: int):
    """One queued upload's status row; it keeps polling itself until the job is done or failed."""
    job = selectors.upload_job_get(user=request.user, job_id=job_id)
    return render(request, "memories/upload.html#job", {"job": job})


@require_POST
def upload_job_cancel(request, job_id: int):
    """Cancel a queued upload (a long scan being read by OCR stops after its current page)."""
    job = services.upload_job_cancel(job=selectors.upload_job_get(user=request.user, job_id=job_id))
    if request.htmx:
        return render(request, "memories/upload.html#job", {"job": job})
    messages.info(
        request, f"Cancelled “{job.filename}”." if job.status == "cancelled" else f"“{job.filename}” is {job.status}."
    )
    return redirect("upload")


def chat(request):
    """Chat sessions: every message you send becomes a memory, and the reply lists what you already know."""
    session_id = request.POST.get("session") or request.GET.get("session")
    session = None
    if session_id:
        try:
            session = selectors.chat_session_get(user=request.user, session_id=int(session_id))
        except ValueError:
            raise Http404("No such chat session") from None
    form = ChatForm(initial={"session": session.pk if session else None})
    error = None
    if request.method == "POST":
        try:
            session, _ = services.chat_message_send(
                owner=request.user, content=request.POST.get("content", ""), session=session
            )
        except services.MemoryInputError as exc:
            error = capfirst(str(exc))
            form = ChatForm(request.POST)
        else:
            if not request.htmx:
                return redirect(f"{reverse('chat')}?session={session.pk}")
            form = ChatForm(initial={"session": session.pk})
    exchanges = answers.chat_exchanges(session=session) if session is not None else []
    context = {
        "session": session,
        "sessions": selectors.chat_session_list(user=request.user)[:50],
        "exchanges": exchanges,
        "form": form,
        "error": error,
    }
    template = "memories/chat.html#layout" if request.htmx else "memories/chat.html"
    response = render(request, template, context, status=422 if error else 200)
    if request.htmx and session is not None and not error:
        response["HX-Push-Url"] = f"{reverse('chat')}?session={session.pk}"
    return response


def search_page(request):
    """Live hybrid search with filters; the URL carries the query so a search can be shared.

    Only plausibly relevant results are shown (the relevance floor); `weaker=1` shows every candidate,
    which the page offers as "show weaker matches"."""
    form = SearchForm(request.GET or None)
    form.set_languages(selectors.memory_languages(user=request.user))
    response, error = None, None
    weaker = request.GET.get("weaker") == "1"
    if form.is_valid() and form.cleaned_data["q"].strip():
        data = form.cleaned_data
        try:
            filters = search.search_filters(
                tags=split_tags([data["tag"]]),
                source=data["source"],
                tier=data["tier"],
                min_priority=data["min_priority"],
                created_after=data["created_after"],
                created_before=data["created_before"],
                language=data["language"],
            )
            response = search.hybrid_search(
                request.user.pk,
                data["q"],
                limit=25,
                filters=filters,
                group_by=data["group"],
                min_score=0.0 if weaker else None,
            )
        except search.SearchError as exc:
            error = capfirst(str(exc))
    elif form.is_bound and not form.is_valid():
        error = " ".join(str(e) for errors in form.errors.values() for e in errors)
    params = request.GET.copy()
    params.pop("weaker", None)
    stronger_query = params.urlencode()
    params["weaker"] = "1"
    context = {
        "form": form,
        "response": response,
        "error": error,
        "weaker": weaker,
        "weaker_query": params.urlencode(),
        "stronger_query": stronger_query,
        "searched": bool(request.GET.get("q", "").strip()),
    }
    template = "memories/search.html#results" if request.htmx else "memories/search.html"
    return render(request, template, context, status=422 if error else 200)

"""The "Export and import" page: download everything, upload an export, notes, or an assistant's or mail
export, follow the imports."""

from __future__ import annotations

from django.conf import settings
from django.contrib import messages
from django.shortcuts import redirect, render

from memories import selectors
from memories.models import ImportJob
from memories.services import MemoryInputError
from portability import services
from portability.sources import reader_label


def portability_page(request):
    if request.method == "POST":
        upload = request.FILES.get("file")
        if upload is None:
            messages.error(
                request, "Choose a file to import: a ChatGPT or Claude export, mail, a Kybernesis export, or notes."
            )
        else:
            try:
                job = services.import_job_create(owner=request.user, upload=upload)
            except MemoryInputError as exc:
                messages.error(request, str(exc))
            else:
                messages.success(request, f"Importing {job.filename}: follow its progress below.")
        return redirect("portability:page")
    jobs = list(selectors.import_job_list(user=request.user))
    for job in jobs:
        job.kind_label = reader_label(job.kind) if job.kind else ""
    context = {
        "jobs": jobs,
        "active": any(j.status in (ImportJob.Status.PENDING, ImportJob.Status.RUNNING) for j in jobs),
        "max_import_mb": settings.KYBERNESIS_MAX_IMPORT_BYTES // (1024 * 1024),
        "trash_count": selectors.trash_count(user=request.user),
    }
    template = "portability/page.html#jobs" if request.htmx else "portability/page.html"
    return render(request, template, context)

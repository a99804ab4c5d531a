"""Sleep pages: run history with "Run now", and a run's steps with live progress while it runs."""

from __future__ import annotations

from django.contrib import messages
from django.core.paginator import Paginator
from django.shortcuts import redirect, render
from django.views.decorators.http import require_POST

from sleep import selectors
from sleep.models import SleepRun
from sleep.pipeline import STEPS, sleep_run_request

PAGE_SIZE = 20
COMMON_METRICS = ("processed", "changed", "failed", "batches")

# What each step's counts mean, in words: every step goes over memories, so "processed" is how many
# memories it checked and "changed" what it did to them.
STEP_SENTENCES = {
    "tag": [("processed", "{} memor{ies} checked"), ("changed", "{} re-tagged")],
    "link": [
        ("processed", "{} memor{ies} checked"),
        ("extracted", "{} read again for entities"),
        ("links_created", "{} link{s} made"),
        ("links_reinforced", "{} confirmed"),
        ("links_expired", "{} expired"),
        ("entities_retyped", "{} entit{ies} re-typed"),
        ("entities_merged", "{} merged as aliases"),
    ],
    "tier": [("processed", "{} memor{ies} evaluated"), ("moved", "{} moved to another tier")],
    "summarize": [("processed", "{} memor{ies} checked"), ("changed", "{} summar{ies} rewritten")],
}


def _plural(template: str, n: int) -> str:
    one = n == 1
    return template.replace("{ies}", "y" if one else "ies").replace("{s}", "" if one else "s").format(n)


def step_sentence(step: str, metrics: dict) -> str:
    """ "Tag: 19 memories checked, 4 re-tagged": what a step counted, said per step."""
    parts = [
        _plural(template, int(metrics[key]))
        for key, template in STEP_SENTENCES.get(step, [])
        if key in metrics and (key == "processed" or metrics[key])
    ]
    if metrics.get("failed"):
        parts.append(_plural("{} failed", int(metrics["failed"])))
    return ", ".join(parts)


def run_list(request):
    page = Paginator(selectors.sleep_run_list(user=request.user), PAGE_SIZE).get_page(request.GET.get("page"))
    active = any(run.status in SleepRun.ACTIVE for run in page.object_list)
    context = {"page": page, "active": active}
    template = "sleep/list.html#runs" if request.htmx else "sleep/list.html"
    return render(request, template, context)


@require_POST
def run_now(request):
    run, created = sleep_run_request(trigger=SleepRun.Trigger.MANUAL, owner=request.user)
    if created:
        messages.success(request, "Sleep cycle queued: tag → link → tier → summarize over your memories.")
    else:
        messages.info(request, "A sleep cycle is already running; here it is.")
    return redirect("sleep:detail", run_id=run.pk)


def run_detail(request, run_id: int):
    run = selectors.sleep_run_get(user=request.user, run_id=run_id)
    steps = sorted(run.steps.all(), key=lambda s: s.position)
    for step in steps:
        # The common counts first, in a fixed order, then what the step adds, alphabetically.
        keys = [k for k in COMMON_METRICS if k in step.metrics] + sorted(
            k for k in step.metrics if k not in COMMON_METRICS and k != "duration_ms"
        )
        step.metric_items = [(key.replace("_", " "), step.metrics[key]) for key in keys]
        step.sentence = step_sentence(step.step, step.metrics)
    context = {
        "run": run,
        "steps": steps,
        "detailed": selectors.sleep_run_details_visible(user=request.user, run=run),
        "step_names": [s.name for s in STEPS],
        "active": run.status in SleepRun.ACTIVE,
    }
    template = "sleep/detail.html#progress" if request.htmx else "sleep/detail.html"
    return render(request, template, context)

"""Small helpers for the HTMX pages' plain-form fallbacks."""

from __future__ import annotations

from django.shortcuts import redirect
from django.utils.http import url_has_allowed_host_and_scheme


def redirect_back(request, fallback: str):
    """Without JavaScript a small form posts and the browser goes back where it was: to the form's
    `next` when it is a URL on this site, otherwise to `fallback`."""
    target = request.POST.get("next", "")
    if target and url_has_allowed_host_and_scheme(target, allowed_hosts={request.get_host()}):
        return redirect(target)
    return redirect(fallback)

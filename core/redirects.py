"""Where a small no-JavaScript form may send the browser back to: a local path, or a fallback."""

from __future__ import annotations

from django.http import HttpRequest, HttpResponseRedirect
from django.utils.http import url_has_allowed_host_and_scheme

from core.text import text_problem


def safe_next(request: HttpRequest, fallback: str, *, field: str = "next") -> str:
    """The form's `next` when it is a path on this site (``/memories/?page=2``), else fallback.

    Anything else is ignored rather than guessed at: a bare word (``abc``, which ``redirect()``
    would try to reverse as a view name), another host, a scheme-relative ``//host`` or a control
    character.
    """
    target = request.POST.get(field, "") or ""
    if (
        target.startswith("/")
        and not target.startswith(("//", "/\\"))
        and text_problem(target) is None
        and not any(ord(ch) < 0x20 or ord(ch) == 0x7F for ch in target)
        and url_has_allowed_host_and_scheme(
            target, allowed_hosts={request.get_host()}, require_https=request.is_secure()
        )
    ):
        return target
    return fallback


def redirect_back(request: HttpRequest, fallback: str) -> HttpResponseRedirect:
    return HttpResponseRedirect(safe_next(request, fallback))

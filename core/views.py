"""The account's API tokens page: create a token (shown once), see each one's scopes and use, revoke one."""

from __future__ import annotations

from django.contrib import messages
from django.shortcuts import redirect, render
from django.views.decorators.http import require_http_methods

from core.forms import ApiTokenForm
from core.models import TokenScope
from core.tokens import TokenInputError, api_token_create, api_token_get, api_token_list, api_token_revoke


def _page(request, form: ApiTokenForm, *, new_key: str | None = None, new_token=None, status: int = 200):
    context = {
        "form": form,
        "tokens": api_token_list(user=request.user),
        "new_key": new_key,
        "new_token": new_token,
        "scope_descriptions": TokenScope.DESCRIPTIONS,
    }
    return render(request, "core/tokens.html", context, status=status)


@require_http_methods(["GET", "POST"])
def token_list(request):
    if request.method != "POST":
        return _page(request, ApiTokenForm())
    form = ApiTokenForm(request.POST)
    if form.is_valid():
        data = form.cleaned_data
        try:
            token, key = api_token_create(
                user=request.user,
                name=data["name"],
                scopes=data["scopes"],
                expires_at=data["expires"],
                unique_name=True,
            )
        except TokenInputError as exc:
            field = {"scopes": "scopes", "expires": "expires"}.get(exc.field, "name")
            form.add_error(field, str(exc)[0].upper() + str(exc)[1:] + ".")
        else:
            # The key is in this response only: nothing keeps it, so a reload cannot show it again.
            return _page(request, ApiTokenForm(), new_key=key, new_token=token)
    return _page(request, form, status=422)


@require_http_methods(["GET", "POST"])
def token_revoke(request, token_id: int):
    token = api_token_get(user=request.user, token_id=token_id)
    if request.method != "POST":
        return render(request, "core/token_revoke.html", {"token": token})
    if token.revoked_at is not None:
        messages.info(request, f"The token “{token.label}” was already revoked.")
    else:
        api_token_revoke(token=token)
        messages.success(request, f"Revoked the token “{token.label}”: it opens nothing any more.")
    return redirect("tokens:list")

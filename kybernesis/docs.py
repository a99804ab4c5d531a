"""The API docs page: django-ninja's Swagger renderer pointed at the swagger-ui-dist copy in static/vendor/."""

from __future__ import annotations

import json

from django.http import HttpRequest, HttpResponse
from django.shortcuts import render
from ninja.openapi.docs import Swagger, _csrf_needed


class VendoredSwagger(Swagger):
    """Swagger UI from our own static files, so the docs render with no network (ninja's own template
    falls back to a CDN when `ninja` is not an installed app)."""

    template = "api/docs.html"

    def render_page(self, request: HttpRequest, api, **kwargs) -> HttpResponse:
        self.settings["url"] = self.get_openapi_url(api, kwargs)
        context = {"swagger_settings": json.dumps(self.settings), "api": api, "add_csrf": _csrf_needed(api)}
        return render(request, self.template, context)

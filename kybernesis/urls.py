"""URL routes: pages, the JSON API under /api/v1/, accounts and admin."""

from django.contrib import admin
from django.contrib.auth.decorators import login_not_required
from django.templatetags.static import static
from django.urls import include, path
from django.views.generic import RedirectView

from kybernesis.api import api
from kybernesis.mcp_http import mcp_endpoint
from memories import views as memory_views

handler400 = "kybernesis.bad_request.handler400"
handler500 = "kybernesis.unavailable.handler500"

urlpatterns = [
    path("", memory_views.home, name="home"),
    path("favicon.ico", login_not_required(RedirectView.as_view(url=static("favicon.svg")))),
    path("memories/", include("memories.urls")),
    path("memories/data/", include("portability.urls")),
    path("upload/", memory_views.upload, name="upload"),
    path("chat/", memory_views.chat, name="chat"),
    path("search/", memory_views.search_page, name="search"),
    path("sleep/", include("sleep.urls")),
    path("connectors/", include("connectors.urls")),
    path("graph/", include("graph.urls")),
    path("accounts/tokens/", include("core.urls")),
    path("accounts/", include("allauth.urls")),
    path("admin/", admin.site.urls),
    path("api/v1/", api.urls),
    path("mcp", mcp_endpoint, name="mcp"),
]

"""A URLconf with an API nobody has written scope declarations for (test_token_scopes): the same bearer
authentication and scope decorator as the real API, and endpoints that say nothing about scopes."""

from django.urls import path
from ninja import NinjaAPI, Router

from core.auth import BearerTokenAuth, scope_declared, token_scope

api = NinjaAPI(urls_namespace="scope-test", auth=[BearerTokenAuth()], docs_url=None)
api.add_decorator(scope_declared, mode="view")
router = Router()


@router.api_operation(["GET", "POST", "PUT", "PATCH", "DELETE"], "/thing")
def thing(request):
    return {"method": request.method}


@router.post("/lookup")
@token_scope("read")
def lookup(request):
    return {"found": True}


api.add_router("/", router)
# Under /api/ as the real API is, so that the login-required middleware leaves it to its own auth.
urlpatterns = [path("api/new/", api.urls)]

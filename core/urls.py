"""The account's API tokens pages."""

from django.urls import path

from core import views

app_name = "tokens"
urlpatterns = [
    path("", views.token_list, name="list"),
    path("<int:token_id>/revoke/", views.token_revoke, name="revoke"),
]

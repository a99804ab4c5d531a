"""Connector pages."""

from django.urls import path

from connectors import views

app_name = "connectors"
urlpatterns = [
    path("", views.connector_list, name="list"),
    path("<int:connector_id>/", views.connector_detail, name="detail"),
    path("<int:connector_id>/sync/", views.connector_sync, name="sync"),
    path("<int:connector_id>/disconnect/", views.connector_disconnect, name="disconnect"),
]

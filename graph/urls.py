"""Graph pages."""

from django.urls import path

from graph import views

app_name = "graph"
urlpatterns = [
    path("", views.topology, name="topology"),
    path("entities/<int:entity_id>/", views.entity_detail, name="entity"),
    path("memories/<int:memory_id>/panel/", views.memory_panel, name="memory-panel"),
]

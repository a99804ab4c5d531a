"""The Export and import page."""

from django.urls import path

from portability import views

app_name = "portability"
urlpatterns = [
    path("", views.portability_page, name="page"),
]

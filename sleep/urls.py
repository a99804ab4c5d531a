"""Sleep pages."""

from django.urls import path

from sleep import views

app_name = "sleep"
urlpatterns = [
    path("", views.run_list, name="list"),
    path("run/", views.run_now, name="run"),
    path("<int:run_id>/", views.run_detail, name="detail"),
]

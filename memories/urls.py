"""Memory pages."""

from django.urls import path

from memories import views

app_name = "memories"
urlpatterns = [
    path("", views.memory_list, name="list"),
    path("new/", views.memory_new, name="new"),
    path("<int:memory_id>/", views.memory_detail, name="detail"),
    path("<int:memory_id>/delete/", views.memory_delete, name="delete"),
    path("uploads/jobs/<int:job_id>/", views.upload_job, name="upload_job"),
]

"""Memory pages."""

from django.urls import path

from memories import history_views, views

app_name = "memories"
urlpatterns = [
    path("", views.memory_list, name="list"),
    path("new/", views.memory_new, name="new"),
    path("bulk/", views.memory_bulk, name="bulk"),
    path("bulk/undo/", views.memory_bulk_undo, name="bulk_undo"),
    path("<int:memory_id>/", views.memory_detail, name="detail"),
    path("<int:memory_id>/edit/", views.memory_edit, name="edit"),
    path("<int:memory_id>/open", views.memory_open, name="open"),
    path("<int:memory_id>/original/", views.memory_original, name="original"),
    path("<int:memory_id>/original/download/", views.memory_original_download, name="original_download"),
    path("<int:memory_id>/delete/", views.memory_delete, name="delete"),
    path("<int:memory_id>/pin/", views.memory_pin, name="pin"),
    path("<int:memory_id>/kind/", views.memory_kind, name="kind"),
    path("<int:memory_id>/priority/", views.memory_priority, name="priority"),
    path("<int:memory_id>/tags/", views.memory_tags, name="tags"),
    path("<int:memory_id>/tier/", views.memory_tier_card, name="tier_card"),
    path("<int:memory_id>/history/", history_views.memory_history, name="history"),
    path("<int:memory_id>/history/<str:number>/", history_views.memory_version, name="version"),
    path(
        "<int:memory_id>/history/<str:number>/restore/",
        history_views.memory_version_restore_view,
        name="version_restore",
    ),
    path("<int:memory_id>/activity/", history_views.memory_activity, name="activity"),
    path("activity/", history_views.account_activity, name="account_activity"),
    path("tags/", views.tag_list, name="tag_list"),
    path("trash/", views.trash_page, name="trash"),
    path("trash/empty/", views.trash_empty, name="trash_empty"),
    path("trash/<int:memory_id>/restore/", views.trash_restore, name="trash_restore"),
    path("trash/<int:memory_id>/purge/", views.trash_purge, name="trash_purge"),
    path("uploads/jobs/<int:job_id>/", views.upload_job, name="upload_job"),
    path("uploads/jobs/<int:job_id>/cancel/", views.upload_job_cancel, name="upload_job_cancel"),
]

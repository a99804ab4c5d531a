from django.contrib import admin

from core.models import ApiToken, TaskRun


@admin.register(ApiToken)
class ApiTokenAdmin(admin.ModelAdmin):
    list_display = ("prefix", "name", "user", "created_at", "last_used_at")
    search_fields = ("prefix", "name", "user__email", "user__username")
    readonly_fields = ("prefix", "key_hash", "created_at", "last_used_at")
    raw_id_fields = ("user",)

    def has_add_permission(self, request):
        return False  # tokens are shown once at creation: use `manage.py create_api_token`


@admin.register(TaskRun)
class TaskRunAdmin(admin.ModelAdmin):
    list_display = ("func", "name", "host", "pid", "started_at", "finished_at", "success")
    list_filter = ("success", "func")
    search_fields = ("task_id", "name", "func", "host")
    date_hierarchy = "started_at"

    def has_add_permission(self, request):
        return False  # workers write runs; nobody adds one by hand

    def has_change_permission(self, request, obj=None):
        return False

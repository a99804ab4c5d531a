from django.contrib import admin

from core.models import ApiToken, TaskRun
from core.tokens import api_token_revoke


@admin.register(ApiToken)
class ApiTokenAdmin(admin.ModelAdmin):
    list_display = ("prefix", "name", "user", "scopes", "expires_at", "revoked_at", "created_at", "last_used_at")
    list_filter = ("revoked_at",)
    search_fields = ("prefix", "name", "user__email", "user__username")
    readonly_fields = ("prefix", "key_hash", "scopes", "expires_at", "revoked_at", "created_at", "last_used_at")
    raw_id_fields = ("user",)
    actions = ("revoke",)

    def has_add_permission(self, request):
        return False  # tokens are shown once at creation: the account page or `manage.py create_api_token`

    @admin.action(description="Revoke the selected tokens")
    def revoke(self, request, queryset):
        tokens = list(queryset.filter(revoked_at__isnull=True))
        for token in tokens:
            api_token_revoke(token=token)
        self.message_user(request, f"Revoked {len(tokens)} token{'' if len(tokens) == 1 else 's'}.")


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

from django.contrib import admin

from core.models import ApiToken


@admin.register(ApiToken)
class ApiTokenAdmin(admin.ModelAdmin):
    list_display = ("prefix", "name", "user", "created_at", "last_used_at")
    search_fields = ("prefix", "name", "user__email", "user__username")
    readonly_fields = ("prefix", "key_hash", "created_at", "last_used_at")
    raw_id_fields = ("user",)

    def has_add_permission(self, request):
        return False  # tokens are shown once at creation: use `manage.py create_api_token`

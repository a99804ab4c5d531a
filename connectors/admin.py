"""Django admin for connector accounts and their items."""

from django.contrib import admin

from connectors.models import ConnectorAccount, ConnectorItem


@admin.register(ConnectorAccount)
class ConnectorAccountAdmin(admin.ModelAdmin):
    list_display = (
        "__str__",
        "owner",
        "provider",
        "status",
        "last_sync_at",
        "synced_count",
        "skipped_count",
        "failed_count",
        "removed_count",
    )
    list_filter = ("provider", "status")
    search_fields = ("label", "owner__email", "owner__username")
    raw_id_fields = ("owner", "social_account")
    readonly_fields = (
        "cursor",
        "sync_state",
        "sync_started_at",
        "last_sync_at",
        "synced_count",
        "skipped_count",
        "failed_count",
        "removed_count",
        "created_at",
        "updated_at",
    )


@admin.register(ConnectorItem)
class ConnectorItemAdmin(admin.ModelAdmin):
    list_display = ("__str__", "account", "status", "mime", "remote_modified_at", "memory", "updated_at")
    list_filter = ("status", "account__provider")
    search_fields = ("title", "external_id", "error")
    raw_id_fields = ("account", "memory")
    readonly_fields = ("content_hash", "created_at", "updated_at")

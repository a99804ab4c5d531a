"""Django admin for sleep runs and their steps."""

from django.contrib import admin

from sleep.models import SleepRun, SleepStepRun


class SleepStepRunInline(admin.TabularInline):
    model = SleepStepRun
    fields = ("position", "step", "status", "started_at", "completed_at", "checkpoint", "metrics", "errors")
    readonly_fields = fields
    extra = 0
    can_delete = False

    def has_add_permission(self, request, obj=None):
        return False


@admin.register(SleepRun)
class SleepRunAdmin(admin.ModelAdmin):
    list_display = (
        "id",
        "trigger",
        "owner",
        "status",
        "current_step",
        "started_at",
        "completed_at",
        "tasks_completed",
        "tasks_failed",
    )
    list_filter = ("status", "trigger")
    raw_id_fields = ("owner",)
    readonly_fields = (
        "requested_at",
        "started_at",
        "completed_at",
        "heartbeat_at",
        "tasks_completed",
        "tasks_failed",
        "resumed_count",
        "error_log",
        "current_step",
    )
    inlines = [SleepStepRunInline]


@admin.register(SleepStepRun)
class SleepStepRunAdmin(admin.ModelAdmin):
    list_display = ("run", "step", "status", "started_at", "completed_at", "checkpoint")
    list_filter = ("step", "status")
    raw_id_fields = ("run",)

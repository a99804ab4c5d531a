"""Connectors: Google Drive and Notion syncs into memories."""

from django.apps import AppConfig

from core.schedules import ensure_after_migrate


class ConnectorsConfig(AppConfig):
    name = "connectors"
    verbose_name = "Connectors"

    def ready(self) -> None:
        from connectors import signals  # noqa: F401 - connects the allauth receivers

        # After every migrate, so the schedule exists (and follows KYBERNESIS_CONNECTOR_SYNC_MINUTES).
        ensure_after_migrate(self, "connectors.services.connector_schedule_ensure")

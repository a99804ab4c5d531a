"""Connectors: Google Drive and Notion syncs into memories."""
from django.apps import AppConfig
from django.db.models.signals import post_migrate


class ConnectorsConfig(AppConfig):
    name = "connectors"
    verbose_name = "Connectors"

    def ready(self) -> None:
        from connectors import signals

        # After every migrate, so the schedule exists (and follows KYBERNESIS_CONNECTOR_SYNC_MINUTES).
        post_migrate.connect(signals.ensure_schedule, sender=self, dispatch_uid="connectors.ensure_schedule")

from django.apps import AppConfig


class GraphConfig(AppConfig):
    name = "graph"
    verbose_name = "Knowledge graph"

    def ready(self) -> None:
        from graph import signals  # noqa: F401 - connects the receivers

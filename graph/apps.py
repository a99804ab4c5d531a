from django.apps import AppConfig


class GraphConfig(AppConfig):
    name = "graph"
    verbose_name = "Knowledge graph"

    def ready(self) -> None:
        from graph import signals  # noqa: F401 - connects the receivers
        from graph.selectors import memory_link_counts
        from memories.services.tiers import register_link_counter

        # The tier rules count a memory's links; the graph owns them and supplies the counts.
        register_link_counter(memory_link_counts)

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
        # A tag for a technology says what the graph calls it ("postgres" -> "postgresql").
        from graph.extraction import words_never_nouns
        from graph.vocabulary import CASE_SENSITIVE_ALIASES, TECH_ALIASES
        from memories.auto_tags import register_tag_vocabulary

        register_tag_vocabulary(
            aliases={
                alias.replace(" ", "-"): canonical.replace(" ", "-")
                for alias, canonical in TECH_ALIASES.items()
                if alias not in CASE_SENSITIVE_ALIASES
            },
            not_nouns=words_never_nouns,
        )

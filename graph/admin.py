"""Django admin for the knowledge graph."""

from django.contrib import admin

from graph.models import MemoryLink


@admin.register(MemoryLink)
class MemoryLinkAdmin(admin.ModelAdmin):
    list_display = ("source", "target", "reason", "score", "confidence", "owner", "last_reinforced_at")
    list_filter = ("reason",)
    raw_id_fields = ("owner", "source", "target")
    search_fields = ("source__title", "target__title")

"""Django admin for the knowledge graph."""

from django.contrib import admin

from graph.models import Entity, EntityMention, MemoryLink, Relationship, RelationshipEvidence


@admin.register(MemoryLink)
class MemoryLinkAdmin(admin.ModelAdmin):
    list_display = ("source", "target", "reason", "score", "confidence", "owner", "last_reinforced_at")
    list_filter = ("reason",)
    raw_id_fields = ("owner", "source", "target")
    search_fields = ("source__title", "target__title")


class EntityMentionInline(admin.TabularInline):
    model = EntityMention
    fields = ("memory", "chunk", "start", "end", "surface", "type")
    readonly_fields = fields
    extra = 0
    max_num = 0
    can_delete = False
    show_change_link = True


@admin.register(Entity)
class EntityAdmin(admin.ModelAdmin):
    list_display = ("name", "type", "salience", "mention_count", "memory_count", "owner", "last_seen")
    list_filter = ("type",)
    search_fields = ("name", "key", "aliases")
    raw_id_fields = ("owner",)
    # Counts and salience are derived from the mentions; editing them by hand would be undone.
    readonly_fields = ("key", "salience", "mention_count", "memory_count", "first_seen", "last_seen")
    inlines = [EntityMentionInline]


@admin.register(EntityMention)
class EntityMentionAdmin(admin.ModelAdmin):
    list_display = ("surface", "entity", "type", "memory", "chunk", "start", "end")
    list_filter = ("type",)
    search_fields = ("surface", "entity__name")
    raw_id_fields = ("owner", "entity", "memory", "chunk")


class RelationshipEvidenceInline(admin.TabularInline):
    model = RelationshipEvidence
    fields = ("memory", "chunk", "confidence", "sentence", "created_at")
    readonly_fields = fields
    extra = 0
    max_num = 0
    can_delete = False


@admin.register(Relationship)
class RelationshipAdmin(admin.ModelAdmin):
    list_display = ("source", "relation_type", "target", "weight", "confidence", "evidence_count", "owner", "last_seen")
    list_filter = ("relation_type",)
    search_fields = ("source__name", "target__name", "evidence")
    raw_id_fields = ("owner", "source", "target", "context_chunk")
    readonly_fields = ("weight", "confidence", "evidence_count", "evidence", "created_at", "last_seen")
    inlines = [RelationshipEvidenceInline]


@admin.register(RelationshipEvidence)
class RelationshipEvidenceAdmin(admin.ModelAdmin):
    list_display = ("relationship", "memory", "chunk", "confidence", "created_at")
    raw_id_fields = ("owner", "relationship", "memory", "chunk")
    search_fields = ("sentence",)

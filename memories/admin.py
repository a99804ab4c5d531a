"""Django admin for memories, chunks and API tokens."""

from django.contrib import admin
from django.db.models import Count

from memories.models import ChatSession, Memory, MemoryChunk, TierMove, UploadJob
from memories.services import memories_retier


class MemoryChunkInline(admin.TabularInline):
    model = MemoryChunk
    fields = ("position", "char_start", "char_end", "tier", "text")
    readonly_fields = fields
    extra = 0
    can_delete = False
    show_change_link = True

    def has_add_permission(self, request, obj=None):
        return False  # chunks are derived from the content, never written by hand


@admin.register(Memory)
class MemoryAdmin(admin.ModelAdmin):
    list_display = ("title", "owner", "source", "tier", "priority", "pinned", "chunk_total", "created_at")
    list_filter = ("tier", "source", "pinned", "created_at")
    search_fields = ("title", "content", "owner__email", "owner__username", "tags")
    readonly_fields = ("content_hash", "tags", "created_at", "updated_at", "auto_tags", "auto_tagged_at",
                       "tier", "tier_reason", "tier_changed_at", "decay_score", "summarized_hash")
    raw_id_fields = ("owner",)
    date_hierarchy = "created_at"
    inlines = [MemoryChunkInline]

    def get_queryset(self, request):
        return super().get_queryset(request).annotate(chunk_total=Count("chunks"))

    def save_model(self, request, obj, form, change):
        # The tier follows from priority, pinning and manual tags by the rules, and chunks follow it.
        super().save_model(request, obj, form, change)
        memories_retier(memory_ids=[obj.pk], cause=TierMove.Cause.EDIT)

    @admin.display(description="chunks", ordering="chunk_total")
    def chunk_total(self, obj):
        return obj.chunk_total


@admin.register(MemoryChunk)
class MemoryChunkAdmin(admin.ModelAdmin):
    list_display = ("__str__", "memory", "owner", "position", "tier", "char_start", "char_end")
    list_filter = ("tier",)
    search_fields = ("text", "memory__title")
    raw_id_fields = ("memory", "owner")
    readonly_fields = ("text_hash",)
    exclude = ("embedding",)


@admin.register(ChatSession)
class ChatSessionAdmin(admin.ModelAdmin):
    list_display = ("__str__", "owner", "message_count", "created_at", "updated_at")
    search_fields = ("title", "owner__email", "owner__username")
    raw_id_fields = ("owner",)


@admin.register(UploadJob)
class UploadJobAdmin(admin.ModelAdmin):
    list_display = ("filename", "owner", "status", "memory", "created_at", "updated_at")
    list_filter = ("status",)
    search_fields = ("filename", "owner__email", "owner__username")
    raw_id_fields = ("owner", "memory")
    exclude = ("text",)
    readonly_fields = ("error",)


@admin.register(TierMove)
class TierMoveAdmin(admin.ModelAdmin):
    list_display = ("memory", "from_tier", "to_tier", "reason", "cause", "moved_at", "owner")
    list_filter = ("to_tier", "cause", "moved_at")
    raw_id_fields = ("memory", "owner")
    date_hierarchy = "moved_at"

    def has_add_permission(self, request):
        return False  # moves are recorded by the tier rules, never written by hand

"""Django admin for memories, their versions and activity, chunks, chat sessions, upload jobs and tier moves.

Every write goes through memories.services, as the pages' and the API's do: an edited content is
re-chunked, changed chunks are re-embedded and re-indexed, and the graph is told to re-extract."""

from django import forms
from django.contrib import admin, messages
from django.db.models import Count
from django.http import Http404
from django.urls import reverse
from django.utils.html import format_html

from memories.history import actor_of
from memories.models import (
    Activity,
    ChatSession,
    ConsumedFile,
    Memory,
    MemoryChunk,
    MemoryVersion,
    TierMove,
    TrashedMemory,
    UploadJob,
)
from memories.services import (
    MemoryInputError,
    memories_restore_from_trash,
    memories_trash,
    memory_create,
    memory_delete,
    memory_pin,
    memory_purge,
    memory_update,
)
from memories.services.restore import memory_version_restore
from memories.services.trash import purge_due_at
from memories.services.validation import (
    clean_content,
    clean_metadata,
    clean_priority,
    clean_source,
    clean_tags,
    clean_title,
)

# The fields a person edits; everything else is derived by the services and shown read-only.
EDITABLE = ("title", "content", "source", "priority", "metadata", "manual_tags")


class MemoryAdminForm(forms.ModelForm):
    """Checks each field by the same rules as the API, so a bad value is shown on its field."""

    class Meta:
        model = Memory
        fields = ("owner", *EDITABLE, "pinned")

    def clean(self):
        data = super().clean()
        rules = {
            "content": lambda v: clean_content(v, index=None),
            "source": lambda v: clean_source(v, index=None),
            "priority": lambda v: clean_priority(v, index=None),
            "metadata": lambda v: clean_metadata(v, index=None),
            "manual_tags": lambda v: clean_tags(v or [], index=None),
        }
        for name, rule in rules.items():
            if name in data:
                try:
                    data[name] = rule(data[name])
                except MemoryInputError as exc:
                    self.add_error(name, str(exc))
        if "title" in data and "content" in data and "content" not in self.errors:
            try:
                data["title"] = clean_title(data["title"], data["content"], index=None)
            except MemoryInputError as exc:
                self.add_error("title", str(exc))
        return data


class MemoryChunkInline(admin.TabularInline):
    model = MemoryChunk
    fields = ("position", "char_start", "char_end", "tier", "text")
    readonly_fields = fields
    extra = 0
    can_delete = False
    show_change_link = True

    def has_add_permission(self, request, obj=None):
        return False  # chunks are derived from the content, never written by hand


class MemoryVersionInline(admin.TabularInline):
    """The memory's kept versions, newest first; each links to its own page, which can restore it."""

    model = MemoryVersion
    fk_name = "pgh_obj"
    fields = ("version_link", "pgh_created_at", "made_by", "title", "priority", "pinned", "manual_tags")
    readonly_fields = fields
    extra = 0
    can_delete = False
    ordering = ("-version",)
    verbose_name_plural = "versions (newest first)"

    def get_queryset(self, request):
        return super().get_queryset(request).defer("content", "summary", "metadata", "auto_tags")

    def has_add_permission(self, request, obj=None):
        return False  # versions are written by the database triggers, never by hand

    @admin.display(description="version")
    def version_link(self, obj):
        url = reverse("admin:memories_memoryversion_change", args=[obj.pk])
        return format_html('<a href="{}">v{}</a>', url, obj.version)

    @admin.display(description="made by")
    def made_by(self, obj):
        return actor_of(obj.pgh_context)["label"]


@admin.register(Memory)
class MemoryAdmin(admin.ModelAdmin):
    list_display = ("title", "owner", "source", "tier", "priority", "pinned", "chunk_total", "created_at")
    list_filter = ("tier", "source", "pinned", "created_at")
    search_fields = ("title", "content", "owner__email", "owner__username", "tags")
    form = MemoryAdminForm
    readonly_fields = (
        "content_hash",
        "tags",
        "created_at",
        "updated_at",
        "auto_tags",
        "auto_tagged_at",
        "tier",
        "tier_reason",
        "tier_changed_at",
        "decay_score",
        "summarized_hash",
        "summary",
        "preview",
        "access_count",
        "last_accessed_at",
        "notices",
        "title_edited_at",
    )
    raw_id_fields = ("owner",)
    date_hierarchy = "created_at"
    inlines = [MemoryVersionInline, MemoryChunkInline]
    actions = ["trash_selected"]

    def get_queryset(self, request):
        return super().get_queryset(request).annotate(chunk_total=Count("chunks"))

    def save_model(self, request, obj, form, change):
        data = form.cleaned_data
        if not change:
            created = memory_create(
                owner=data["owner"],
                **{name: data[name] for name in EDITABLE if name != "manual_tags"},
                manual_tags=data["manual_tags"],
            )
            obj.pk = created.pk
        else:
            changed = {name: data[name] for name in EDITABLE if name in form.changed_data}
            if changed:
                memory_update(memory=obj, **changed)
        if "pinned" in form.changed_data:
            memory_pin(memory=obj, pinned=bool(data["pinned"]))
        obj.refresh_from_db()

    def get_readonly_fields(self, request, obj=None):
        # A memory's chunks, graph and tags belong to its owner: it cannot be handed to someone else.
        return (*self.readonly_fields, "owner") if obj is not None else self.readonly_fields

    @admin.display(description="chunks", ordering="chunk_total")
    def chunk_total(self, obj):
        return obj.chunk_total

    # Deleting here moves to the trash, as from every other door; "Trash" below deletes forever.
    def delete_model(self, request, obj):
        memory_delete(memory=obj)

    def delete_queryset(self, request, queryset):
        for owner_id in set(queryset.values_list("owner_id", flat=True)):
            memories_trash(
                owner_id=owner_id, memory_ids=list(queryset.filter(owner_id=owner_id).values_list("pk", flat=True))
            )

    def get_deleted_objects(self, objs, request):
        # Nothing is deleted: the memory moves to the trash with its chunks, versions and links, so the
        # confirmation lists the memories alone and needs no permission on what hangs off them (the
        # read-only versions would otherwise refuse the whole delete).
        objs = list(objs)
        return [str(obj) for obj in objs], {Memory._meta.verbose_name_plural: len(objs)}, set(), []

    def get_actions(self, request):
        # Django's "Delete selected" would say the rows are deleted; here they go to the trash.
        actions = super().get_actions(request)
        actions.pop("delete_selected", None)
        return actions

    @admin.action(description="Move the selected memories to the trash", permissions=["delete"])
    def trash_selected(self, request, queryset):
        ids = list(queryset.values_list("pk", flat=True))
        self.delete_queryset(request, queryset)
        n = Memory.all_objects.filter(pk__in=ids, trashed_at__isnull=False).count()
        self.message_user(request, f"Moved {n} memor{'y' if n == 1 else 'ies'} to the trash.")


@admin.register(TrashedMemory)
class TrashedMemoryAdmin(admin.ModelAdmin):
    """The trash of every account: restore, or delete forever (the delete action asks first)."""

    list_display = ("title", "owner", "source", "trashed_at", "trashed_by", "purge_at")
    list_filter = ("source", "trashed_at")
    search_fields = ("title", "owner__email", "owner__username")
    fields = ("title", "owner", "source", "tier", "tags", "created_at", "trashed_at", "trashed_by", "purge_at")
    readonly_fields = fields
    actions = ["restore_selected"]
    ordering = ("-trashed_at", "-id")

    def has_add_permission(self, request):
        return False

    def has_change_permission(self, request, obj=None):
        return False  # a trashed memory is read-only until restored

    @admin.display(description="purged at")
    def purge_at(self, obj):
        return purge_due_at(obj)

    @admin.action(description="Restore the selected memories", permissions=["delete"])
    def restore_selected(self, request, queryset):
        n = 0
        for owner_id in set(queryset.values_list("owner_id", flat=True)):
            ids = list(queryset.filter(owner_id=owner_id).values_list("pk", flat=True))
            n += len(memories_restore_from_trash(owner_id=owner_id, memory_ids=ids))
        self.message_user(request, f"Restored {n} memor{'y' if n == 1 else 'ies'}.")

    def delete_model(self, request, obj):
        memory_purge(owner=obj.owner_id, memory_id=obj.pk)

    def delete_queryset(self, request, queryset):
        for owner_id, memory_id in queryset.values_list("owner_id", "pk"):
            memory_purge(owner=owner_id, memory_id=memory_id)


@admin.register(MemoryVersion)
class MemoryVersionAdmin(admin.ModelAdmin):
    """Read-only: versions are written by triggers. The one action restores a version through the same
    service as the pages and the API (re-chunked, re-embedded, a new version by this admin)."""

    list_display = ("__str__", "pgh_obj", "version", "pgh_created_at", "made_by", "title")
    list_filter = ("pgh_label", "pgh_created_at")
    search_fields = ("title", "pgh_obj__title")
    raw_id_fields = ("pgh_obj",)
    date_hierarchy = "pgh_created_at"
    actions = ["restore_version"]

    def get_readonly_fields(self, request, obj=None):
        return [field.name for field in self.model._meta.fields]

    def has_add_permission(self, request):
        return False

    def has_change_permission(self, request, obj=None):
        return False

    def has_delete_permission(self, request, obj=None):
        return False  # retention (KYBERNESIS_HISTORY_KEEP) and purging a memory remove versions

    @admin.display(description="made by")
    def made_by(self, obj):
        return actor_of(obj.pgh_context)["label"]

    def has_restore_permission(self, request):
        return request.user.has_perm("memories.change_memory")

    @admin.action(description="Restore the selected version (one)", permissions=["restore"])
    def restore_version(self, request, queryset):
        if queryset.count() != 1:
            self.message_user(request, "Choose exactly one version to restore.", messages.ERROR)
            return
        version = queryset.select_related("pgh_obj").get()
        try:
            restored = memory_version_restore(memory=version.pgh_obj, number=version.version)
        except Http404 as exc:
            self.message_user(request, str(exc), messages.ERROR)
            return
        self.message_user(
            request, f"Restored version {version.version} of “{restored.title}” as version {restored.version}."
        )


@admin.register(Activity)
class ActivityAdmin(admin.ModelAdmin):
    list_display = ("created_at", "kind", "memory_title", "actor_label", "owner")
    list_filter = ("kind", "actor_kind", "created_at")
    search_fields = ("memory_title", "actor_label", "owner__email", "owner__username")
    raw_id_fields = ("memory", "owner")
    date_hierarchy = "created_at"

    def get_readonly_fields(self, request, obj=None):
        return [field.name for field in self.model._meta.fields]

    def has_add_permission(self, request):
        return False

    def has_change_permission(self, request, obj=None):
        return False


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


@admin.register(ConsumedFile)
class ConsumedFileAdmin(admin.ModelAdmin):
    """The watched folder's files, as a record: the watcher writes them, nobody edits them."""

    list_display = ("name", "owner", "status", "memory", "destination", "filed", "created_at")
    list_filter = ("status", "filed")
    search_fields = ("name", "sha256", "owner__email", "owner__username")
    raw_id_fields = ("owner", "memory", "job")

    def has_add_permission(self, request):
        return False

    def has_change_permission(self, request, obj=None):
        return False


@admin.register(TierMove)
class TierMoveAdmin(admin.ModelAdmin):
    list_display = ("memory", "from_tier", "to_tier", "reason", "cause", "moved_at", "owner")
    list_filter = ("to_tier", "cause", "moved_at")
    raw_id_fields = ("memory", "owner")
    date_hierarchy = "moved_at"

    def has_add_permission(self, request):
        return False  # moves are recorded by the tier rules, never written by hand

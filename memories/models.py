"""Memories, their chunks and versions, activity, chat sessions, upload jobs, tier moves and the files of
the watched folder."""

from __future__ import annotations

import hashlib

import pghistory
import pgtrigger
from django.conf import settings
from django.contrib.postgres.fields import ArrayField
from django.contrib.postgres.indexes import GinIndex
from django.contrib.postgres.search import SearchVector, SearchVectorField
from django.core.validators import MaxValueValidator, MinValueValidator
from django.db import models
from pgvector.django import HnswIndex, VectorField

from core.language import detect_language
from core.querysets import OwnedQuerySet
from memories.embedding import EMBEDDING_DIMENSIONS


class Source(models.TextChoices):
    UPLOAD = "upload", "Upload"
    CHAT = "chat", "Chat"
    CONNECTOR = "connector", "Connector"


class Tier(models.TextChoices):
    HOT = "hot", "Hot"
    WARM = "warm", "Warm"
    ARCHIVE = "archive", "Archive"


ACTIVE_TIERS = ("hot", "warm")

# A chunk's `tier` is its storage layer: its memory's tier, or TRASH_LAYER while the memory is in the
# trash. Neither HNSW index covers that layer, so search never meets a trashed chunk and pays nothing
# to leave it out (docs/decisions/0014-trash-layer.md).
TRASH_LAYER = "trash"
CHUNK_LAYERS = [*Tier.choices, (TRASH_LAYER, "Trash")]


def content_hash(text: str) -> str:
    return hashlib.sha256(text.encode("utf-8", "surrogatepass")).hexdigest()


def combine_tags(manual_tags: list[str], auto_tags: list[dict]) -> list[str]:
    """Manual tags first, then auto tags not already present, without duplicates."""
    combined: list[str] = []
    for tag in [*manual_tags, *(item["tag"] for item in auto_tags)]:
        if tag not in combined:
            combined.append(tag)
    return combined


class MemoryQuerySet(OwnedQuerySet):
    def trashed(self) -> MemoryQuerySet:
        return self.filter(trashed_at__isnull=False)


class LiveMemoryManager(models.Manager.from_queryset(MemoryQuerySet)):  # type: ignore[misc]
    """`Memory.objects`: every read of memories leaves the trash out unless it asks for it through
    `Memory.all_objects` (the trash page, restore, purge, export with the trash, the admin's trash)."""

    def get_queryset(self) -> MemoryQuerySet:
        return super().get_queryset().filter(trashed_at__isnull=True)


# What a version of a memory keeps, and what makes a new one when it changes. Auto tags and the summary
# are here too: the sleep agent rewrites them, and a restore brings back what a version showed.
VERSIONED_FIELDS = ("title", "content", "manual_tags", "auto_tags", "summary", "priority", "pinned", "metadata")


def _version_bump_sql() -> str:
    """The new row's version: one more when a versioned field changed, else the stored one (so a stale
    object saved again cannot move the number back)."""
    new = ", ".join(f'NEW."{name}"' for name in VERSIONED_FIELDS)
    old = ", ".join(f'OLD."{name}"' for name in VERSIONED_FIELDS)
    return (
        f"IF ROW({new}) IS DISTINCT FROM ROW({old}) THEN NEW.version := OLD.version + 1; "
        "ELSE NEW.version := OLD.version; END IF; RETURN NEW;"
    )


class Memory(models.Model):
    owner = models.ForeignKey(settings.AUTH_USER_MODEL, on_delete=models.CASCADE, related_name="memories")
    title = models.CharField(max_length=500)
    content = models.TextField()
    summary = models.TextField(blank=True, default="")
    # A one-line preview for lists, and the content hash the summary was written from.
    preview = models.CharField(max_length=200, blank=True, default="")
    summarized_hash = models.CharField(max_length=64, blank=True, default="", editable=False)
    source = models.CharField(max_length=16, choices=Source.choices, default=Source.UPLOAD)
    metadata = models.JSONField(default=dict, blank=True)
    priority = models.FloatField(default=0.5, validators=[MinValueValidator(0.0), MaxValueValidator(1.0)])
    tier = models.CharField(max_length=16, choices=Tier.choices, default=Tier.HOT)
    # Why the tier rules put the memory where it is, and when it last moved (memories/tier_rules.py).
    tier_reason = models.CharField(max_length=200, blank=True, default="")
    tier_changed_at = models.DateTimeField(null=True, blank=True)
    pinned = models.BooleanField(default=False)
    decay_score = models.FloatField(default=0.0, validators=[MinValueValidator(0.0), MaxValueValidator(1.0)])
    access_count = models.PositiveIntegerField(default=0)
    last_accessed_at = models.DateTimeField(null=True, blank=True)
    created_at = models.DateTimeField(auto_now_add=True)
    updated_at = models.DateTimeField(auto_now=True)
    # When a person last changed the title, content or metadata (page or API); None if never edited.
    edited_at = models.DateTimeField(null=True, blank=True)
    # When a person chose the title (an edit, or a title given with the upload): a connector sync or a
    # re-extraction then never replaces it (memories.services.memory_update's from_source).
    title_edited_at = models.DateTimeField(null=True, blank=True)
    # When a person chose a chat message's kind (metadata.kind: "this is a note", "this asks
    # something"): an edit of its text then keeps the kind instead of asking the question rule again
    # (memories.services.kinds). None: the rule decides.
    kind_chosen_at = models.DateTimeField(null=True, blank=True)
    # What a reader should know about how the text was read: parts of the file that could not be read,
    # text repaired or dropped by the normalisation (core.normalise). Human-readable sentences.
    notices = models.JSONField(default=list, blank=True)
    content_hash = models.CharField(max_length=64, db_index=True, editable=False)
    # The ISO 639-1 code of the language most of the content is written in, "" when it cannot be told
    # (core.language); set from the content whenever it changes, so every write path keeps it true.
    # NULL only on rows stored before languages were read: the sleep agent's tag step reads them.
    language = models.CharField(max_length=8, null=True, blank=True, default=None, editable=False)  # noqa: DJ001
    # The id the memory has where it was imported from ("chatgpt:<conversation>:<message>"), or "":
    # importing the same export again, or a later one, finds it by this id and adds it once, whatever
    # its text (two "ok" messages are two messages). Unique per owner.
    import_key = models.CharField(max_length=300, blank=True, default="", editable=False)
    # Manual tags are the user's and are never touched by the system; auto tags are
    # [{"tag": str, "confidence": float}] written by memories.auto_tags; `tags` is their union,
    # manual first, kept in step on every write and indexed for filtering.
    manual_tags = ArrayField(models.CharField(max_length=64), default=list, blank=True)
    auto_tags = models.JSONField(default=list, blank=True)
    auto_tagged_at = models.DateTimeField(null=True, blank=True)
    # The content hash the auto tags were made from: a content change makes them due again.
    auto_tagged_hash = models.CharField(max_length=64, blank=True, default="", editable=False)
    tags = ArrayField(models.CharField(max_length=64), default=list, blank=True, editable=False)
    # Set while the memory is in the trash (memories.services.trash): it keeps everything but is out of
    # every read until restored, or purged KYBERNESIS_TRASH_DAYS later. `trashed_by` names who moved it.
    trashed_at = models.DateTimeField(null=True, blank=True, editable=False)
    trashed_by = models.CharField(max_length=200, blank=True, default="", editable=False)
    # The number of the memory's current version (MemoryVersion): 1 when stored, one more at each change
    # of a VERSIONED_FIELDS field, counted by the database whoever writes the row.
    version = models.PositiveIntegerField(default=1, db_default=1, editable=False)

    objects = LiveMemoryManager()
    all_objects = MemoryQuerySet.as_manager()

    # Not stored: the write services and selectors.with_chunk_count set them on the objects they hand
    # back, so a front door can show the chunk count and tell a new memory from a duplicate found.
    chunk_count: int
    created: bool
    restored: bool  # set by a create that found the content in the trash and restored that memory

    class Meta:
        ordering = ["-created_at", "-id"]
        verbose_name_plural = "memories"
        indexes = [
            GinIndex(fields=["tags"], name="memory_tags_gin"),
            models.Index(fields=["owner", "-created_at"], name="memory_owner_created"),
            models.Index(fields=["owner", "tier"], name="memory_owner_tier"),
            models.Index(fields=["owner", "source"], name="memory_owner_source"),
            models.Index(fields=["updated_at"], name="memory_updated"),
            models.Index(fields=["owner", "language"], name="memory_owner_language"),
            # Only trashed rows: the trash page reads it per owner, the purge sweep reads all of it.
            models.Index(
                fields=["owner", "-trashed_at"],
                name="memory_owner_trashed",
                condition=models.Q(trashed_at__isnull=False),
            ),
        ]
        constraints = [
            models.CheckConstraint(condition=models.Q(priority__gte=0, priority__lte=1), name="memory_priority_0_1"),
            models.CheckConstraint(condition=models.Q(tier__in=Tier.values), name="memory_tier_valid"),
            models.CheckConstraint(condition=models.Q(source__in=Source.values), name="memory_source_valid"),
            models.UniqueConstraint(
                fields=["owner", "import_key"], condition=~models.Q(import_key=""), name="memory_owner_import_key"
            ),
        ]
        triggers = [
            pgtrigger.Trigger(
                name="memory_version_next",
                when=pgtrigger.Before,
                operation=pgtrigger.Update,
                func=_version_bump_sql(),
            )
        ]

    def __str__(self) -> str:
        return self.title

    def save(self, *args, **kwargs):
        self.sync_derived_fields()
        update_fields = kwargs.get("update_fields")
        if update_fields is not None:
            # The language is written when it was loaded or read again; a deferred one is left as stored.
            derived = {"tags", "content_hash"} | ({"language"} - self.get_deferred_fields())
            kwargs["update_fields"] = {*update_fields, *derived}
        super().save(*args, **kwargs)

    def sync_derived_fields(self) -> None:
        """Recompute the fields derived from others; bulk writers call this since they skip save().
        The language is read again only when the content changed (or was never read)."""
        self.tags = combine_tags(self.manual_tags, self.auto_tags)
        digest = content_hash(self.content)
        unread = "language" not in self.get_deferred_fields() and self.language is None
        if digest != self.content_hash or not self.content_hash or unread:
            self.language = detect_language(self.content)
        self.content_hash = digest

    @property
    def kind(self) -> str | None:
        """A chat message's kind: "question" when it asks something, else "note"; None for a memory that
        is not a chat message (memories.services.kinds decides and stores it in metadata.kind)."""
        from memories.search.questions import NOTE, QUESTION  # the search package imports these models

        if self.source != Source.CHAT:
            return None
        return QUESTION if (self.metadata or {}).get("kind") == QUESTION else NOTE

    @property
    def kind_chosen(self) -> bool:
        """Whether a person chose the kind, rather than the question rule."""
        return self.kind_chosen_at is not None


class TrashManager(models.Manager.from_queryset(MemoryQuerySet)):  # type: ignore[misc]
    def get_queryset(self) -> MemoryQuerySet:
        return super().get_queryset().filter(trashed_at__isnull=False)


class TrashedMemory(Memory):
    """The trash as Django admin shows it: the same rows as Memory, only those in the trash."""

    objects = TrashManager()

    class Meta:
        proxy = True
        verbose_name = "memory in the trash"
        verbose_name_plural = "trash"


class MemoryChunk(models.Model):
    # owner is copied from the memory so that searches filter chunks without a join. Its index is
    # memorychunk_owner_vectors, which leads with it.
    owner = models.ForeignKey(settings.AUTH_USER_MODEL, on_delete=models.CASCADE, related_name="+", db_index=False)
    memory = models.ForeignKey(Memory, on_delete=models.CASCADE, related_name="chunks")
    position = models.PositiveIntegerField()
    text = models.TextField()
    char_start = models.PositiveIntegerField()
    char_end = models.PositiveIntegerField()
    text_hash = models.CharField(max_length=64)
    embedding = VectorField(dimensions=EMBEDDING_DIMENSIONS)
    # The weights that made `embedding` (search compares a query only with chunks of its own model),
    # and hash(model id with backend + the exact text embedded): stale when it differs from
    # memories.embedding.embedding_key() today, and then `manage.py reembed` embeds it again.
    # (Database defaults too, so bulk COPY loads that leave them out still work.)
    embedding_model = models.CharField(max_length=100, default="", db_default="")
    embedding_key = models.CharField(max_length=64, default="", db_default="", blank=True)
    tier = models.CharField(max_length=16, choices=CHUNK_LAYERS, default=Tier.HOT)
    # The chunk's own language (core.language), which differs from its memory's where a document mixes
    # languages; graph extraction and search read it per chunk.
    language = models.CharField(max_length=8, null=True, blank=True, default=None)  # noqa: DJ001
    # The text's lexemes, read only when the chunk's BM25 postings are written or removed
    # (memories.search.lexical); search reads the postings, so this column has no index of its own.
    search_vector = models.GeneratedField(
        expression=SearchVector("text", config="english"),
        output_field=SearchVectorField(),
        db_persist=True,
    )

    objects = OwnedQuerySet.as_manager()

    class Meta:
        ordering = ["memory_id", "position"]
        constraints = [
            models.UniqueConstraint(fields=["memory", "position"], name="memorychunk_memory_position_unique"),
        ]
        indexes = [
            # Storage layers: hot and warm chunks sit behind one HNSW index, archived chunks behind
            # their own, so a search restricted to hot and warm never reads an archived row.
            HnswIndex(
                name="memorychunk_hnsw_active",
                fields=["embedding"],
                m=16,
                ef_construction=64,
                opclasses=["vector_cosine_ops"],
                condition=models.Q(tier__in=ACTIVE_TIERS),
            ),
            HnswIndex(
                name="memorychunk_hnsw_archive",
                fields=["embedding"],
                m=16,
                ef_construction=64,
                opclasses=["vector_cosine_ops"],
                condition=models.Q(tier=Tier.ARCHIVE),
            ),
            # An owner's chunks by layer, with their vectors, read by an index-only scan when its chunks
            # are ranked exactly (memories.search.statement.exact_for): a chunk row is wider than
            # PostgreSQL's TOAST threshold, so in the table each vector costs a TOAST fetch, while the
            # index holds it inline (about 2 kB a chunk on disk). It is the table's only index that
            # leads with the owner, so that the planner cannot read the owner's rows another way.
            models.Index(
                fields=["owner", "tier", "embedding_model"],
                include=["id", "embedding"],
                name="memorychunk_owner_vectors",
            ),
        ]

    def __str__(self) -> str:
        return f"{self.memory_id}#{self.position}"


class TierMove(models.Model):
    """One move of a memory between tiers, with the rule that caused it, for the memory's history."""

    class Cause(models.TextChoices):
        SLEEP = "sleep", "Sleep cycle"
        PIN = "pin", "Pinned or unpinned"
        EDIT = "edit", "Edited"
        CONNECTOR = "connector", "Removed at the source"

    owner = models.ForeignKey(settings.AUTH_USER_MODEL, on_delete=models.CASCADE, related_name="+")
    memory = models.ForeignKey(Memory, on_delete=models.CASCADE, related_name="tier_moves")
    from_tier = models.CharField(max_length=16, choices=Tier.choices)
    to_tier = models.CharField(max_length=16, choices=Tier.choices)
    reason = models.CharField(max_length=200)
    cause = models.CharField(max_length=16, choices=Cause.choices, default=Cause.SLEEP)
    moved_at = models.DateTimeField()

    objects = OwnedQuerySet.as_manager()

    class Meta:
        ordering = ["-moved_at", "-id"]
        indexes = [models.Index(fields=["memory", "-moved_at"], name="tiermove_memory_moved")]

    def __str__(self) -> str:
        return f"{self.memory_id}: {self.from_tier} → {self.to_tier}"


class ChatSession(models.Model):
    """A conversation; each message the user sends in it is stored as a memory with source=chat."""

    owner = models.ForeignKey(settings.AUTH_USER_MODEL, on_delete=models.CASCADE, related_name="chat_sessions")
    title = models.CharField(max_length=200, blank=True, default="")
    # The conversation's id where it was imported from ("chatgpt:<id>", "claude:<uuid>"), or "" for a
    # session started here: a later export of the same conversation adds its new messages to it.
    import_key = models.CharField(max_length=300, blank=True, default="", editable=False)
    created_at = models.DateTimeField(auto_now_add=True)
    updated_at = models.DateTimeField(auto_now=True)
    message_count = models.PositiveIntegerField(default=0)

    objects = OwnedQuerySet.as_manager()

    class Meta:
        ordering = ["-updated_at", "-id"]
        indexes = [models.Index(fields=["owner", "-updated_at"], name="chatsession_owner_updated")]
        constraints = [
            models.UniqueConstraint(
                fields=["owner", "import_key"], condition=~models.Q(import_key=""), name="chatsession_owner_import_key"
            ),
        ]

    def __str__(self) -> str:
        return self.title or f"Chat {self.pk}"


class UploadJob(models.Model):
    """An upload being ingested in the background, a large text or a scan to read by OCR; the page
    and the API poll its status and, for OCR, its pages done."""

    class Status(models.TextChoices):
        PENDING = "pending", "Pending"
        PROCESSING = "processing", "Processing"
        DONE = "done", "Done"
        FAILED = "failed", "Failed"
        CANCELLED = "cancelled", "Cancelled"

    class Kind(models.TextChoices):
        TEXT = "text", "Text"  # the text is extracted; the worker chunks and embeds it
        OCR = "ocr", "OCR"  # the file waits at `path`; the worker reads its pages by OCR first

    owner = models.ForeignKey(settings.AUTH_USER_MODEL, on_delete=models.CASCADE, related_name="upload_jobs")
    filename = models.CharField(max_length=255)
    status = models.CharField(max_length=16, choices=Status.choices, default=Status.PENDING)
    error = models.TextField(blank=True, default="")
    # The extracted text waits here for the worker and is cleared once the memory exists.
    text = models.TextField(blank=True, default="")
    title = models.CharField(max_length=500)
    metadata = models.JSONField(default=dict, blank=True)
    manual_tags = ArrayField(models.CharField(max_length=64), default=list, blank=True)
    memory = models.ForeignKey(Memory, null=True, blank=True, on_delete=models.SET_NULL, related_name="+")
    kind = models.CharField(max_length=8, choices=Kind.choices, default=Kind.TEXT)
    # An OCR job's file, under KYBERNESIS_DATA_DIR/uploads until the job ends (memories.services.ocr_uploads).
    path = models.CharField(max_length=500, blank=True, default="")
    pages_done = models.PositiveIntegerField(default=0)
    pages_total = models.PositiveIntegerField(null=True, blank=True)  # pages to read by OCR
    # Times the job was queued again after its worker stopped (memories.services.jobs).
    recoveries = models.PositiveSmallIntegerField(default=0)
    created_at = models.DateTimeField(auto_now_add=True)
    updated_at = models.DateTimeField(auto_now=True)

    objects = OwnedQuerySet.as_manager()

    class Meta:
        ordering = ["-created_at"]

    def __str__(self) -> str:
        return f"{self.filename} ({self.status})"


class ChunkTerm(models.Model):
    """One posting of the lexical index: a stemmed term (lexeme) of a chunk with its BM25 weight.

    `impact` is the BM25 term-frequency part, tf·(k1+1) / (tf + k1·(1 − b + b·len/avglen)), fixed
    when the chunk is indexed; query time multiplies it by the term's current IDF. Postings are
    ordered by impact per term, so the best lexical candidates come straight off an index.
    """

    # Both foreign keys are covered by the composite indexes below; single-column ones would only
    # slow every insert into what is the largest table.
    owner = models.ForeignKey(settings.AUTH_USER_MODEL, on_delete=models.CASCADE, related_name="+", db_index=False)
    chunk = models.ForeignKey(MemoryChunk, on_delete=models.CASCADE, related_name="+", db_index=False)
    lexeme = models.TextField()
    tf = models.PositiveSmallIntegerField()
    impact = models.FloatField()

    objects = models.Manager()

    class Meta:
        constraints = [models.UniqueConstraint(fields=["chunk", "lexeme"], name="chunkterm_chunk_lexeme_unique")]
        # INCLUDE chunk_id: the best postings of a term are read straight off the index (index-only).
        indexes = [
            models.Index(fields=["owner", "lexeme", "-impact"], include=["chunk"], name="chunkterm_owner_lexeme_impact")
        ]

    def __str__(self) -> str:
        return f"{self.lexeme} in chunk {self.chunk_id}"


class TermStat(models.Model):
    """Document frequency of a lexeme among one owner's chunks (the N of IDF lives in CorpusStat)."""

    owner = models.ForeignKey(settings.AUTH_USER_MODEL, on_delete=models.CASCADE, related_name="+", db_index=False)
    lexeme = models.TextField()
    df = models.IntegerField(default=0)

    objects = models.Manager()

    class Meta:
        constraints = [models.UniqueConstraint(fields=["owner", "lexeme"], name="termstat_owner_lexeme_unique")]

    def __str__(self) -> str:
        return f"{self.lexeme}: {self.df}"


class CorpusStat(models.Model):
    """Per-owner totals for BM25: how many chunks are indexed and their summed length in lexemes."""

    owner = models.OneToOneField(settings.AUTH_USER_MODEL, on_delete=models.CASCADE, related_name="+", primary_key=True)
    chunk_count = models.BigIntegerField(default=0)
    total_length = models.BigIntegerField(default=0)
    # The language prefixes the owner's terms carry (memories.search.lexical.SNOWBALL): a query is read
    # in english and in each of them. Added to as chunks are indexed; a language whose chunks are all
    # gone stays listed until the owner is reindexed, which costs a query one reading more.
    languages = ArrayField(models.CharField(max_length=8), default=list, blank=True)

    objects = models.Manager()

    def __str__(self) -> str:
        return f"owner {self.owner_id}: {self.chunk_count} chunks"


class ImportJob(models.Model):
    """An import (an export zip, a JSON Lines file, Markdown notes, a ChatGPT or Claude export) run by a
    worker; the page shows its progress and, at the end, the report: created, duplicates, each item
    that failed and why, and what the reader left out on purpose (notices)."""

    class Status(models.TextChoices):
        PENDING = "pending", "Pending"
        RUNNING = "running", "Running"
        DONE = "done", "Done"
        FAILED = "failed", "Failed"

    owner = models.ForeignKey(settings.AUTH_USER_MODEL, on_delete=models.CASCADE, related_name="import_jobs")
    filename = models.CharField(max_length=255)
    # Where the uploaded file waits for the worker (under KYBERNESIS_DATA_DIR); removed when the job ends.
    path = models.CharField(max_length=500, blank=True, default="")
    # The path is a file or folder on the server (MCP's import_start), checked against the allowed
    # folders again when the worker reads it, and left where it is.
    server_path = models.BooleanField(default=False)
    status = models.CharField(max_length=16, choices=Status.choices, default=Status.PENDING)
    error = models.TextField(blank=True, default="")  # the whole source could not be read
    total = models.PositiveIntegerField(null=True, blank=True)
    processed = models.PositiveIntegerField(default=0)
    created = models.PositiveIntegerField(default=0)
    duplicates = models.PositiveIntegerField(default=0)
    failed = models.PositiveIntegerField(default=0)
    errors = models.JSONField(default=list, blank=True)  # [{"item": label, "error": reason}], the first 1,000
    # What was read, by content (portability.sources' registry): "export", "markdown", "chatgpt", ...
    kind = models.CharField(max_length=32, blank=True, default="")
    # Sentences on what the reader left out on purpose: branches not current, tool and system messages.
    notices = models.JSONField(default=list, blank=True)
    # Times the job was queued again after its worker stopped (memories.services.jobs).
    recoveries = models.PositiveSmallIntegerField(default=0)
    created_at = models.DateTimeField(auto_now_add=True)
    updated_at = models.DateTimeField(auto_now=True)
    finished_at = models.DateTimeField(null=True, blank=True)

    objects = OwnedQuerySet.as_manager()

    class Meta:
        ordering = ["-created_at", "-id"]

    def __str__(self) -> str:
        return f"import {self.filename} ({self.status})"


class PurgedMemory(models.Model):
    """That a memory was deleted forever from the trash, and when: a restore asked for later is told so
    (a 404 with the reason) rather than "unknown". Nothing of the memory's content is kept."""

    owner = models.ForeignKey(settings.AUTH_USER_MODEL, on_delete=models.CASCADE, related_name="+", db_index=False)
    memory_id = models.BigIntegerField()
    purged_at = models.DateTimeField()

    objects = OwnedQuerySet.as_manager()

    class Meta:
        constraints = [models.UniqueConstraint(fields=["owner", "memory_id"], name="purgedmemory_owner_memory_unique")]

    def __str__(self) -> str:
        return f"memory {self.memory_id} purged {self.purged_at:%Y-%m-%d}"


class Original(models.Model):
    """The file a memory was made from, as it arrived; its bytes sit in the originals store
    (memories/original_files.py) under the owner and their sha256, shared by the owner's memories that
    hold the same bytes and removed when the last of them goes."""

    owner = models.ForeignKey(settings.AUTH_USER_MODEL, on_delete=models.CASCADE, related_name="+")
    memory = models.OneToOneField(Memory, on_delete=models.CASCADE, related_name="original")
    name = models.CharField(max_length=255)  # with its extension, as the client or the source named it
    media_type = models.CharField(max_length=150)
    size = models.PositiveBigIntegerField()
    page_count = models.PositiveIntegerField(null=True, blank=True)  # PDFs (and nothing else, for now)
    sha256 = models.CharField(max_length=64)
    created_at = models.DateTimeField(auto_now_add=True)

    objects = OwnedQuerySet.as_manager()

    class Meta:
        indexes = [models.Index(fields=["owner", "sha256"], name="original_owner_sha256")]
        constraints = [
            models.CheckConstraint(condition=models.Q(sha256__regex=r"^[0-9a-f]{64}$"), name="original_sha256_hex"),
        ]

    def __str__(self) -> str:
        return self.name


class ConsumedFile(models.Model):
    """A file taken from the watched folder (KYBERNESIS_CONSUME_DIR): claimed by moving it into
    `processing/<claim>/`, ingested as an upload, then filed into done/ or failed/
    (memories.services.consume). The claim is unique, so a watcher that restarts finishes each file
    once; `filed` says the file and its .reason.txt reached their destination."""

    class Status(models.TextChoices):
        CLAIMED = "claimed", "Claimed"  # moved into processing/, not read yet (or read and rolled back)
        QUEUED = "queued", "Queued"  # an upload job (large text, OCR) is ingesting it in the worker
        CREATED = "created", "Created"
        DUPLICATE = "duplicate", "Duplicate"
        FAILED = "failed", "Failed"

    owner = models.ForeignKey(
        settings.AUTH_USER_MODEL, null=True, blank=True, on_delete=models.CASCADE, related_name="consumed_files"
    )
    # The inbox the file was dropped into (the watched folder, or an account's folder in it).
    root = models.CharField(max_length=1000)
    claim = models.CharField(max_length=32, unique=True)
    name = models.CharField(max_length=1000)  # where it was dropped, relative to `root`
    size = models.BigIntegerField(default=0)
    sha256 = models.CharField(max_length=64, blank=True, default="")
    status = models.CharField(max_length=16, choices=Status.choices, default=Status.CLAIMED)
    reason = models.TextField(blank=True, default="")
    memory = models.ForeignKey(Memory, null=True, blank=True, on_delete=models.SET_NULL, related_name="+")
    job = models.ForeignKey(UploadJob, null=True, blank=True, on_delete=models.SET_NULL, related_name="+")
    # The job is another file's (the same scan dropped twice while the first was being read).
    job_is_duplicate = models.BooleanField(default=False)
    attempts = models.PositiveSmallIntegerField(default=0)
    # Where the file went, relative to `root` (done/… or failed/…), chosen once so a restart files it
    # under the same name; blank until chosen, and for a file that vanished.
    destination = models.CharField(max_length=1000, blank=True, default="")
    filed = models.BooleanField(default=False)
    created_at = models.DateTimeField(auto_now_add=True)
    updated_at = models.DateTimeField(auto_now=True)

    objects = OwnedQuerySet.as_manager()

    class Meta:
        ordering = ["-created_at", "-id"]
        indexes = [models.Index(fields=["root", "filed"], name="consumed_file_unfiled")]

    def __str__(self) -> str:
        return f"{self.name} ({self.status})"


class ConsumeWatcher(models.Model):
    """What the watcher of a watched folder last said about it: when it was last alive, the files
    waiting per account, and the error that stops it (a folder it cannot write to, an unknown
    account). The upload page reads it; the watcher runs in a process of its own."""

    folder = models.CharField(max_length=1000, unique=True)
    host = models.CharField(max_length=255, blank=True, default="")
    pid = models.PositiveIntegerField(null=True, blank=True)
    started_at = models.DateTimeField(null=True, blank=True)
    seen_at = models.DateTimeField(null=True, blank=True)
    mode = models.CharField(max_length=16, blank=True, default="")  # inotify (or the platform's) | polling
    error = models.TextField(blank=True, default="")
    # {inbox root: {"waiting": n, "processing": n, "problem": text}}
    inboxes = models.JSONField(default=dict, blank=True)
    stopped = models.BooleanField(default=False)

    def __str__(self) -> str:
        return self.folder


class MemoryVersion(
    pghistory.create_event_model(
        Memory,
        # Row-level: an update that changes no versioned field (an access, a tier move) skips the trigger
        # on its WHEN clause, and the context is read from a setting with no table of its own to write.
        pghistory.InsertEvent("created", trigger_name="memory_version_created"),
        pghistory.UpdateEvent(
            "changed", condition=pghistory.AnyChange("version"), trigger_name="memory_version_changed"
        ),
        fields=[*VERSIONED_FIELDS, "version", "preview", "summarized_hash", "content_hash"],
        obj_field=pghistory.ObjForeignKey(related_name="versions", on_delete=models.CASCADE, db_constraint=True),
        # Who made the version (core.actors, set by memories.services.history.recording) in the row itself.
        context_field=pghistory.ContextJSONField(),
        context_id_field=None,
        model_name="MemoryVersion",
    )
):
    """One version of a memory, written by PostgreSQL triggers (django-pghistory) on every insert and on
    every update that changes a versioned field, whoever issues it: services, bulk updates, imports.
    `pgh_context` holds the actor ({"kind", "label", "userId", "tokenId"}) and, for a restore, the
    version restored from. See docs/decisions/0015-version-history-with-pghistory.md."""

    class Meta:
        ordering = ["-version"]
        constraints = [models.UniqueConstraint(fields=["pgh_obj", "version"], name="memoryversion_memory_version")]

    def __str__(self) -> str:
        return f"{self.pgh_obj_id} v{self.version}"


class ActivityKind(models.TextChoices):
    """What an activity entry says happened."""

    CREATED = "created", "Created"
    EDITED = "edited", "Edited"
    TAGGED = "tagged", "Tagged"
    PINNED = "pinned", "Pinned"
    UNPINNED = "unpinned", "Unpinned"
    LINKED = "linked", "Linked"
    SUMMARISED = "summarised", "Summarised"
    SYNCED = "synced", "Synced"
    RESTORED = "restored", "Restored a version"
    TRASHED = "trashed", "Moved to the trash"
    UNTRASHED = "untrashed", "Restored from the trash"
    PURGED = "purged", "Deleted forever"
    IMPORTED = "imported", "Imported"


class Activity(models.Model):
    """One entry of the activity trail: something that happened to a memory, and who did it. Tier moves
    are not stored here (TierMove has them); the trail's selector reads both."""

    Kind = ActivityKind

    owner = models.ForeignKey(settings.AUTH_USER_MODEL, on_delete=models.CASCADE, related_name="+", db_index=False)
    # Kept when the memory is purged (the entry that says so stays in the account's trail).
    memory = models.ForeignKey(Memory, null=True, blank=True, on_delete=models.SET_NULL, related_name="activity")
    memory_title = models.CharField(max_length=500, blank=True, default="")
    kind = models.CharField(max_length=16, choices=Kind.choices)
    detail = models.JSONField(default=dict, blank=True)
    actor_kind = models.CharField(max_length=16)
    actor_label = models.CharField(max_length=200, blank=True, default="")
    actor_user_id = models.BigIntegerField(null=True, blank=True)
    actor_token_id = models.BigIntegerField(null=True, blank=True)
    created_at = models.DateTimeField(db_index=False)

    objects = OwnedQuerySet.as_manager()

    class Meta:
        ordering = ["-created_at", "-id"]
        verbose_name_plural = "activity"
        indexes = [
            models.Index(fields=["owner", "-created_at", "-id"], name="activity_owner_created"),
            models.Index(fields=["memory", "-created_at", "-id"], name="activity_memory_created"),
        ]
        constraints = [
            models.CheckConstraint(condition=models.Q(kind__in=ActivityKind.values), name="activity_kind_valid")
        ]

    def __str__(self) -> str:
        return f"{self.kind} {self.memory_title}"

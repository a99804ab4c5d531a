"""In and Out schemas of the memories API. JSON keys are camelCase, as in the spec."""

from __future__ import annotations

from datetime import datetime
from typing import Annotated, Any, Literal

from django.core.exceptions import ObjectDoesNotExist
from ninja import Schema
from pydantic import AfterValidator, ConfigDict, Field

from core.language import language_name, parse_language_code
from core.schemas import Id, OutSchema
from core.text import CleanDict, CleanStr, clean_str
from memories.search import SearchFilters, result_url, search_filters
from memories.selectors import chat_session_messages, memory_tier_history
from memories.services.trash import purge_due_at

SourceName = Literal["upload", "chat", "connector"]
LANGUAGE_HELP = (
    "An ISO 639-1 code (en, de, ja, ...): only memories detected as written in that language; "
    '"und": memories whose language could not be told (too little text, numbers, filler).'
)


def _checked_language(value: str | None) -> str | None:
    parse_language_code(value)  # a ValueError that says why: a 422 naming the field
    return value


# A language filter as given: checked here, read by core.language.parse_language_code where it is used.
LanguageFilter = Annotated[
    str | None, Field(max_length=8, description=LANGUAGE_HELP), AfterValidator(_checked_language)
]
TierName = Literal["hot", "warm", "archive"]
KindName = Literal["question", "note"]
KIND_HELP = (
    'A chat message\'s kind: "question" (it asks something; search ranks it after the notes that answer '
    'it) or "note". Omitted: the question rule decides. Only a chat message (source "chat") has one.'
)


class StrictIn(Schema):
    # Unknown keys are refused rather than silently dropped, so a typo gets a 422 that names it.
    model_config = ConfigDict(extra="forbid", strict=True)


class MemoryIn(StrictIn):
    title: CleanStr | None = Field(None, description="Empty or missing: the first line of the content.")
    content: CleanStr
    tags: list[CleanStr] | None = Field(None, description="Manual tags; trimmed, lowercased, spaces become hyphens.")
    source: SourceName = "upload"
    priority: float | None = Field(None, description="0 to 1; omitted means the default.")
    metadata: CleanDict | None = None
    kind: KindName | None = Field(None, description=KIND_HELP)


class MemoryBatchIn(StrictIn):
    items: list[MemoryIn]


class MemoryPatchIn(StrictIn):
    title: CleanStr | None = None
    content: CleanStr | None = None
    tags: list[CleanStr] | None = None
    source: SourceName | None = None
    priority: float | None = None
    metadata: CleanDict | None = None
    kind: KindName | None = Field(
        None,
        description='"question" or "note": your choice, kept when the text changes later; null hands the kind '
        "back to the question rule. Only a chat message has one.",
    )


class AutoTagOut(OutSchema):
    tag: str
    confidence: float


class OriginalOut(OutSchema):
    """The file a memory was made from, kept as it arrived; `url` downloads it (GET, bearer auth)."""

    name: str
    media_type: str
    size: int
    page_count: int | None
    sha256: str
    url: str

    @staticmethod
    def resolve_url(original) -> str:
        return f"/api/v1/memories/{original.memory_id}/original"


class MemoryOut(OutSchema):
    id: int
    title: str
    source: str
    priority: float
    tier: str
    pinned: bool
    tags: list[str]
    auto_tags: list[AutoTagOut]
    manual_tags: list[str]
    summary: str
    metadata: dict[str, Any]
    kind: KindName | None = Field(
        None,
        description='A chat message\'s kind: "question" when it asks something (search ranks it after the '
        'notes), else "note"; null for a memory that is not a chat message. Change it with PATCH {"kind": ...}.',
    )
    kind_chosen: bool = Field(
        False, description="Whether a person chose the kind (true) or the question rule gave it (false)."
    )
    tier_reason: str
    tier_changed_at: datetime | None
    decay_score: float
    access_count: int
    created_at: datetime
    updated_at: datetime
    edited_at: datetime | None
    last_accessed_at: datetime | None
    chunk_count: int
    version: int = Field(..., description="The number of the current version (GET /memories/{id}/versions).")
    language: str = Field(
        "",
        description="The ISO 639-1 code of the language most of the content is written in; empty when it "
        "cannot be told (or not read yet).",
    )
    language_name: str = Field("", description='The language\'s English name ("German"); empty when unknown.')
    original: OriginalOut | None = Field(None, description="The kept original file, if any.")
    notices: list[str] = Field(
        default_factory=list,
        description="How the text was read, when a reader should know: parts that could not be read, text "
        "repaired or dropped as not text (for example glyph names from a PDF).",
    )

    @staticmethod
    def resolve_original(memory):
        try:
            return memory.original
        except ObjectDoesNotExist:
            return None

    @staticmethod
    def resolve_language(memory) -> str:
        return memory.language or ""

    @staticmethod
    def resolve_language_name(memory) -> str:
        return language_name(memory.language or "")

    @staticmethod
    def resolve_chunk_count(memory) -> int:
        # Lists annotate the count (selectors) and services set it; a lone memory may have to ask.
        count = getattr(memory, "chunk_count", None)
        return memory.chunks.filter(owner_id=memory.owner_id).count() if count is None else count


class TrashedMemoryOut(OutSchema):
    """A memory in the trash: what the trash lists, and when the scheduled purge deletes it."""

    id: int
    title: str
    source: str
    tier: str
    tags: list[str]
    created_at: datetime
    trashed_at: datetime
    trashed_by: str = Field(description="Who moved it to the trash (a person, an API token, MCP...), if known.")
    purge_at: datetime = Field(description="When it is deleted forever unless restored (KYBERNESIS_TRASH_DAYS).")
    chunk_count: int
    original_name: str | None = Field(None, description="The kept original file's name; it comes back on restore.")

    @staticmethod
    def resolve_purge_at(memory) -> datetime:
        return purge_due_at(memory)

    @staticmethod
    def resolve_original_name(memory) -> str | None:
        original = MemoryOut.resolve_original(memory)
        return original.name if original is not None else None


class TrashEmptiedOut(OutSchema):
    purged: int


class TierMoveOut(OutSchema):
    from_tier: str
    to_tier: str
    reason: str
    cause: str
    moved_at: datetime


class MemoryDetailOut(MemoryOut):
    content: str
    tier_history: list[TierMoveOut]

    @staticmethod
    def resolve_tier_history(memory) -> list:
        return list(memory_tier_history(memory=memory))


class TagsIn(StrictIn):
    tags: list[CleanStr] = Field(..., description="Manual tags to add; trimmed, lowercased, spaces become hyphens.")


class TagCountOut(OutSchema):
    tag: str
    count: int = Field(..., description="Memories carrying the tag, manual or auto.")
    manual: int = Field(..., description="Memories where it is a manual tag.")


class TagListOut(OutSchema):
    items: list[TagCountOut]


class MemoryBatchOut(OutSchema):
    items: list[MemoryOut]


class UploadResultOut(OutSchema):
    filename: str
    status: Literal["created", "duplicate", "queued", "rejected"]
    memory: MemoryOut | None = None
    error: str | None = None
    job_id: int | None = None
    status_url: str | None = None
    notices: list[str] = Field(
        default_factory=list, description="How the file was read (as the memory's notices); empty when rejected."
    )

    @staticmethod
    def resolve_job_id(result) -> int | None:
        return result.job.pk if result.job else None

    @staticmethod
    def resolve_status_url(result) -> str | None:
        return f"/api/v1/uploads/{result.job.pk}" if result.job else None


class UploadResultsOut(OutSchema):
    results: list[UploadResultOut]


class UploadJobOut(OutSchema):
    id: int
    filename: str
    status: Literal["pending", "processing", "done", "failed", "cancelled"]
    kind: Literal["text", "ocr"] = Field(description='"ocr": a scan or photo whose pages are read by OCR')
    pages_done: int = Field(description="Pages read by OCR so far")
    pages_total: int | None = Field(None, description="Pages to read by OCR (null: not an OCR job)")
    error: str | None = None
    memory: MemoryOut | None = None
    created_at: datetime
    updated_at: datetime

    @staticmethod
    def resolve_error(job) -> str | None:
        return job.error or None

    @staticmethod
    def resolve_memory(job):
        return job.memory if job.memory_id else None


class ChatMessageIn(StrictIn):
    sessionId: Id | None = None
    content: CleanStr


class RelatedMemoryOut(OutSchema):
    """From memory_related's items: {"memory", "chunkIndex", "url", "snippet", "score", "kind"}."""

    memory_id: int
    chunk_index: int = Field(description="Position of the matched chunk in its memory (0-based)")
    url: str = Field(description="The memory page at the matched chunk")
    title: str
    snippet: str
    score: float = Field(description="hybridScore of the message (as the query) against this memory")
    kind: str = Field(description='"question" for a chat message that asks something, else ""')
    source: str
    tier: str

    @staticmethod
    def resolve_memory_id(item) -> int:
        return item["memory"].pk

    @staticmethod
    def resolve_chunk_index(item) -> int:
        return item["chunkIndex"]

    @staticmethod
    def resolve_title(item) -> str:
        return item["memory"].title

    @staticmethod
    def resolve_source(item) -> str:
        return item["memory"].source

    @staticmethod
    def resolve_tier(item) -> str:
        return item["memory"].tier


class AnswerSentenceOut(OutSchema):
    """One sentence of the extractive answer (memories.search.answers.AnswerSentence)."""

    text: str = Field(description="The sentence, quoted from one of your memories")
    memory_id: int
    memory_title: str
    chunk_index: int = Field(description="Position of the chunk the sentence is in (0-based)")
    url: str = Field(description="Opens the memory at that chunk; following it counts as an access")
    score: float = Field(description="How well the sentence answers the message (meaning, shared words, chunk score)")

    @staticmethod
    def resolve_chunk_index(item) -> int:
        return item.chunk_position

    @staticmethod
    def resolve_url(item) -> str:
        return result_url(item.memory_id, item.chunk_position)


class ChatMessageOut(OutSchema):
    session_id: int
    memory: MemoryDetailOut
    asked: bool = Field(
        description="Whether the message asks something (a question, or a request such as 'find ...'); a note is "
        "kept as a memory and gets no answer"
    )
    answer: list[AnswerSentenceOut] = Field(
        description="The 1-3 sentences from your memories that best answer the message (empty when none does, "
        "and for a note)"
    )
    related: list[RelatedMemoryOut]


class ChatSessionOut(OutSchema):
    id: int
    title: str
    message_count: int
    created_at: datetime
    updated_at: datetime


class ChatSessionListOut(OutSchema):
    items: list[ChatSessionOut]


class ChatSessionDetailOut(ChatSessionOut):
    messages: list[MemoryDetailOut]

    @staticmethod
    def resolve_messages(session) -> list:
        return list(chat_session_messages(session=session))


MIN_SCORE_HELP = (
    "A floor on hybridScore, 0..1, instead of the default good-match rule (vectorScore at least "
    "KYBERNESIS_SEARCH_MIN_VECTOR_SCORE, or hybridScore at least KYBERNESIS_SEARCH_MIN_SCORE, or every word "
    "of the query found and hybridScore at least KYBERNESIS_SEARCH_MIN_KEYWORD_SCORE); 0 returns every candidate."
)


class _SearchFilterFields(Schema):
    model_config = ConfigDict(extra="forbid")

    tagsMode: Literal["any", "all"] = "any"
    minPriority: float | None = Field(None, ge=0, le=1)
    maxPriority: float | None = Field(None, ge=0, le=1)
    createdAfter: datetime | None = None
    createdBefore: datetime | None = None
    updatedAfter: datetime | None = None
    updatedBefore: datetime | None = None
    titleContains: clean_str(500) | None = None
    pinned: bool | None = None
    language: LanguageFilter = None


class SearchFiltersIn(_SearchFilterFields):
    tags: list[CleanStr] | None = None
    source: SourceName | list[SourceName] | None = None
    tier: TierName | list[TierName] | None = None
    tiers: list[TierName] | None = None

    def as_search_filters(self) -> SearchFilters:
        """These filters as search takes them, through its one mapper (which raises SearchError)."""
        return search_filters(
            tags=self.tags,
            tags_mode=self.tagsMode,
            source=self.source,
            tier=self.tier,
            tiers=self.tiers,
            min_priority=self.minPriority,
            max_priority=self.maxPriority,
            created_after=self.createdAfter,
            created_before=self.createdBefore,
            updated_after=self.updatedAfter,
            updated_before=self.updatedBefore,
            title_contains=self.titleContains,
            pinned=self.pinned,
            language=self.language,
        )


GROUP_BY_HELP = (
    '"memory" (the default): one result per memory, its best passage with up to two more of its matching '
    'passages in morePassages; the limit counts memories. "chunk": every matching passage is a result.'
)


class SearchQueryIn(_SearchFilterFields):
    """GET /search: the filters as query parameters (repeat tag, source and tier for several)."""

    q: CleanStr = Field(..., max_length=2000)
    limit: int = Field(10, ge=1, le=100)
    groupBy: Literal["memory", "chunk"] = Field("memory", description=GROUP_BY_HELP)
    minScore: float | None = Field(None, ge=0, le=1, description=MIN_SCORE_HELP)
    tag: list[CleanStr] = Field(default_factory=list)
    source: list[SourceName] = Field(default_factory=list)
    tier: list[TierName] = Field(default_factory=list)


class SearchIn(StrictIn):
    query: CleanStr = Field(..., max_length=2000)
    limit: int = Field(10, ge=1, le=100)
    filters: SearchFiltersIn | None = None
    groupBy: Literal["memory", "chunk"] = Field("memory", description=GROUP_BY_HELP)
    minScore: float | None = Field(None, ge=0, le=1, description=MIN_SCORE_HELP)


class PassageOut(OutSchema):
    """Another passage of the result's memory that matches the query."""

    chunk_id: int
    chunk_index: int = Field(description="Position of the chunk in its memory (0-based)")
    char_start: int = Field(description="Where the passage starts in the memory's content (a character offset)")
    char_end: int = Field(description="Where it ends (exclusive)")
    url: str = Field(description="The memory page at this passage")
    snippet: str
    hybrid_score: float
    vector_score: float
    metadata_score: float


class SearchResultOut(OutSchema):
    memory_id: int
    chunk_id: int = Field(description="The best passage's chunk")
    chunk_index: int = Field(
        description="Position of the chunk in its memory (0-based); the page anchor is #chunk-<chunkIndex>"
    )
    char_start: int = Field(description="Where the passage starts in the memory's content (a character offset)")
    char_end: int = Field(description="Where it ends (exclusive)")
    url: str = Field(description="The memory page at this chunk")
    passage_count: int = Field(
        description="How many of the memory's passages match the query (at or above minScore), this one included; "
        "1 with groupBy=chunk"
    )
    more_passages: list[PassageOut] = Field(
        description="With groupBy=memory: the next best of those passages, at most two, best first (empty with "
        "groupBy=chunk)"
    )
    kind: str = Field(description='"question" for a chat message that asks something, else ""')
    title: str
    snippet: str
    hybrid_score: float
    vector_score: float
    metadata_score: float
    good_match: bool = Field(
        description="Whether the result passes the good-match rule (see floor); false only with a minScore below it"
    )
    tier: str
    source: str
    tags: list[str]
    created_at: datetime


class SearchOut(OutSchema):
    results: list[SearchResultOut]
    min_score: float | None = Field(
        description="The hybridScore floor asked for with minScore; null: the good-match rule"
    )
    floor: str = Field(description="The floor applied, as a rule a person reads")
    weaker_count: int = Field(description="Candidates the floor left out; ask again with a lower minScore to see them")
    weaker_questions: int = Field(
        0,
        description="Of the memories left out, the chat messages that ask about the query and matched it: "
        "questions are weaker matches when no note matches (0 with minScore)",
    )
    reason: str | None = Field(
        None, description="Why nothing was searched (a query of only common words or punctuation)"
    )
    took_ms: float

    @staticmethod
    def resolve_took_ms(response) -> float:
        return round(response.took_ms, 2)

    @staticmethod
    def resolve_reason(response) -> str | None:
        return response.reason or None


# --- version history and activity --------------------------------------------------------------------


class ActorOut(OutSchema):
    kind: str = Field(..., description="person, token, mcp, sleep, connector, import, admin or system.")
    label: str = Field(
        ..., description='Who, as a person reads it: a user name, "API token \'laptop\'", "Google Drive".'
    )


class VersionOut(OutSchema):
    """One kept version, as listed: who made it, when, and which fields it changed from the one before."""

    version: int
    title: str
    created_at: datetime
    actor: ActorOut
    changed: list[str] = Field(
        ..., description="The fields that differ from the version before (empty for the first kept)."
    )
    restored_from: int | None = Field(None, description="The version this one restored, if it was a restore.")
    current: bool

    @staticmethod
    def resolve_version(row) -> int:
        return row.version.version

    @staticmethod
    def resolve_title(row) -> str:
        return row.version.title

    @staticmethod
    def resolve_created_at(row) -> datetime:
        return row.version.pgh_created_at


class VersionDetailOut(OutSchema):
    """Everything a version kept, and what changed from `diffFrom` (by default the version before)."""

    version: int
    created_at: datetime
    actor: ActorOut
    restored_from: int | None
    title: str
    content: str
    manual_tags: list[str]
    auto_tags: list[AutoTagOut]
    summary: str
    priority: float
    pinned: bool
    metadata: dict[str, Any]
    diff_from: int | None = Field(None, description="The version the changes are counted from.")
    changes: list[dict[str, Any]] = Field(
        default_factory=list,
        description="Per changed field: text fields as line diffs (kind text, lines with oldLine/newLine and "
        "word parts), tags as added/removed, priority and pin as old/new.",
    )


class ActivityOut(OutSchema):
    """One entry of the activity trail; `kind` is created, edited, tagged, pinned, unpinned, linked, summarised,
    synced, restored, trashed, untrashed, purged, imported or tier_moved."""

    kind: str
    memory_id: int | None
    memory_title: str
    at: datetime
    actor: ActorOut
    detail: dict[str, Any]

    @staticmethod
    def resolve_memory_title(entry) -> str:
        return entry.title or ""

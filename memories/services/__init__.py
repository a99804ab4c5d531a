"""Writes to memories, by concern: memory (create, update, delete), trash, tags, tiers, uploads, chat,
history (restore) and the activity trail.

Every public name is importable from here; front doors and other apps import from this package.
"""

from memories.services.access import memory_accesses_reset, memory_open
from memories.services.activity import activities_record, activity_record
from memories.services.chat import chat_message_send
from memories.services.memory import (
    MemoryInput,
    memory_archive,
    memory_create,
    memory_create_many,
    memory_delete,
    memory_summaries_save,
    memory_update,
)
from memories.services.ocr_uploads import ocr_upload_run
from memories.services.originals import memory_original_set, originals_collect
from memories.services.restore import memory_version_restore
from memories.services.tags import BatchResult, memories_autotag, memory_tag_remove, memory_tags_add
from memories.services.tiers import (
    ARCHIVED_REASON,
    RetierResult,
    memories_retier,
    memory_pin,
    memory_retier,
    reloaded,
)
from memories.services.trash import (
    memories_restore_from_trash,
    memories_trash,
    memory_purge,
    memory_restore_from_trash,
    trash_empty,
    trash_purge_expired,
)
from memories.services.upload_queue import upload_job_cancel
from memories.services.uploads import UploadResult, upload_files, upload_job_run
from memories.services.validation import (
    MAX_MANUAL_TAGS,
    MAX_METADATA_BYTES,
    MAX_TITLE_CHARS,
    MemoryInputError,
    MemoryTooLargeError,
    TagNotFoundError,
    document_title,
    title_as_stored,
)

__all__ = [
    "ARCHIVED_REASON",
    "MAX_MANUAL_TAGS",
    "MAX_METADATA_BYTES",
    "MAX_TITLE_CHARS",
    "BatchResult",
    "MemoryInput",
    "MemoryInputError",
    "MemoryTooLargeError",
    "RetierResult",
    "TagNotFoundError",
    "UploadResult",
    "activities_record",
    "activity_record",
    "chat_message_send",
    "document_title",
    "memories_autotag",
    "memories_restore_from_trash",
    "memories_retier",
    "memories_trash",
    "memory_accesses_reset",
    "memory_archive",
    "memory_create",
    "memory_create_many",
    "memory_delete",
    "memory_open",
    "memory_original_set",
    "memory_pin",
    "memory_purge",
    "memory_restore_from_trash",
    "memory_retier",
    "memory_summaries_save",
    "memory_tag_remove",
    "memory_tags_add",
    "memory_update",
    "memory_version_restore",
    "ocr_upload_run",
    "originals_collect",
    "reloaded",
    "title_as_stored",
    "trash_empty",
    "trash_purge_expired",
    "upload_files",
    "upload_job_cancel",
    "upload_job_run",
]

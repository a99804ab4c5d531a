"""The export query and the import job's Out schema of the portability API (camelCase keys)."""

from __future__ import annotations

from datetime import datetime
from typing import Literal

from ninja import Schema
from pydantic import Field

from core.schemas import OutSchema
from memories.models import ImportJob


class ExportQuery(Schema):
    vectors: bool = Field(
        True,
        description="Include each chunk's embedding, so an import with the same "
        "model reuses them instead of embedding again.",
    )
    trash: bool = Field(
        False,
        description="Include the memories in the trash, each with its trashedAt; an import puts them back in the trash.",
    )


class ImportErrorOut(OutSchema):
    item: str
    error: str


class ImportJobOut(OutSchema):
    id: int
    filename: str
    kind: str = Field(
        description="What the file was read as, by its content: export, markdown, chatgpt, claude (or mail)"
    )
    status: Literal["pending", "running", "done", "failed"]
    total: int | None
    processed: int
    created: int
    duplicates: int
    failed: int
    errors: list[ImportErrorOut]
    notices: list[str] = Field(
        description="What the reader left out on purpose, in sentences: for an assistant's export, messages on "
        "branches that were not current, tool and system messages, images"
    )
    error: str
    created_at: datetime
    updated_at: datetime
    finished_at: datetime | None
    status_url: str = Field(description="GET it to follow the job's progress and report")

    @staticmethod
    def resolve_status_url(job: ImportJob) -> str:
        return f"/api/v1/import/{job.pk}"

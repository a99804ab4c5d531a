"""The portability router: GET /export (a streamed zip), POST /import (202 with a job), GET /import/{id}."""

from __future__ import annotations

from django.http import HttpRequest, StreamingHttpResponse
from ninja import File, Query, Router, Status, UploadedFile

from core.schemas import ErrorOut
from memories import selectors
from portability import services
from portability.schemas import ExportQuery, ImportJobOut

router = Router(tags=["portability"], by_alias=True)
ERRORS = {401: ErrorOut, 404: ErrorOut, 413: ErrorOut, 422: ErrorOut}
# Operation ids are given rather than derived from this module's path: clients generated from the
# OpenAPI schema name their methods after them, and these are the names such clients already call.


@router.get(
    "/export",
    response={200: None, **ERRORS},
    summary="Export every memory as a zip",
    operation_id="memories_portability_api_export",
)
def export(request: HttpRequest, query: Query[ExportQuery]):
    """A zip, streamed as it is written: manifest.json (format version, embedding model id, counts),
    memories.jsonl (one memory a line, every field) and chat_sessions.jsonl."""
    response = StreamingHttpResponse(
        services.export_zip_stream(owner=request.auth, vectors=query.vectors, include_trash=query.trash),
        content_type="application/zip",
    )
    response["Content-Disposition"] = f'attachment; filename="{services.export_filename(request.auth)}"'
    return response


@router.post(
    "/import",
    response={202: ImportJobOut, **ERRORS},
    summary="Import an export, notes, or a ChatGPT or Claude export",
    operation_id="memories_portability_api_start_import",
)
def start_import(request: HttpRequest, file: File[UploadedFile]):
    """multipart `file`: a Kybernesis export zip or its memories.jsonl, Markdown notes (a zip of an Obsidian
    vault, or one .md), a ChatGPT export (its zip, or conversations.json) or a Claude export (its zip, or
    conversations.json). What the file is is told by its content, not its name; a file no reader takes
    is a 422 saying what it looks like. 202 with the job; a worker imports it, and GET statusUrl follows
    its progress and report (`kind` says what was read, `notices` what was left out on purpose)."""
    return Status(202, services.import_job_create(owner=request.auth, upload=file))


@router.get(
    "/import/{job_id}",
    response={200: ImportJobOut, **ERRORS},
    summary="Progress and report of an import",
    operation_id="memories_portability_api_import_status",
)
def import_status(request: HttpRequest, job_id: int):
    return selectors.import_job_get(user=request.auth, job_id=job_id)

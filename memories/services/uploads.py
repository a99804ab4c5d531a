"""Uploads: files into memories, with duplicate detection and a queue for large texts."""

from __future__ import annotations

import logging
from collections.abc import Sequence
from dataclasses import dataclass, field

from django.conf import settings
from django.db import transaction
from django_q.tasks import async_task

from core.actors import SYSTEM, Actor, acting
from core.formatting import megabytes
from memories.models import Memory, Source, UploadJob, content_hash
from memories.original_files import OriginalFile
from memories.parsers import Extracted, ExtractionError, InflateBudget, clean_filename, extract
from memories.services.memory import MemoryInput, PreparedInput, memory_create_many, memory_input_prepare
from memories.services.originals import StoredOriginal, original_from_upload, original_stage
from memories.services.upload_queue import OcrUpload, ocr_upload_queue
from memories.services.validation import MemoryInputError, MemoryTooLargeError, clean_tags, document_title

logger = logging.getLogger(__name__)

# Where a queued upload's job carries its staged original, the notices of its reading and whether its
# title was given (each removed from the memory's metadata).
ORIGINAL_KEY = "_original"
NOTICES_KEY = "_notices"
TITLE_CHOSEN_KEY = "_titleChosen"
_JOB_KEYS = (ORIGINAL_KEY, NOTICES_KEY, TITLE_CHOSEN_KEY)


@dataclass
class UploadResult:
    filename: str
    status: str  # created | duplicate | queued | rejected
    memory: Memory | None = None
    job: UploadJob | None = None
    error: str | None = None
    http_status: int = 200
    # How the file was read: its parser's notices and the normalisation's (also on the memory).
    notices: list[str] = field(default_factory=list)


def _existing_memory(owner, digest: str) -> Memory | None:
    return Memory.objects.for_user(owner).filter(content_hash=digest).order_by("pk").first()


def upload_files(
    *, owner, files: Sequence, manual_tags: Sequence[str] = (), title: str | None = None
) -> list[UploadResult]:
    """Turn uploaded files into memories: one result per file, in input order.

    A bad file is rejected with its reason and stores nothing, while the good files beside it are
    stored; identical content becomes a pointer to the memory that already holds it; text over
    KYBERNESIS_ASYNC_UPLOAD_CHARS, and a file with pages to read by OCR, is queued for a background
    worker. `files` are objects with
    `.name`, `.size` and `.read()` (Django's UploadedFile).

    A memory's title is `title` when given (for one file only), else the title the document declares
    (a PDF's metadata, a heading: memories.parsers), else the file name without its extension.
    """
    limit = settings.KYBERNESIS_MAX_FILES_PER_UPLOAD
    if len(files) > limit:
        files_word = "file" if limit == 1 else "files"
        raise MemoryTooLargeError(
            f"at most {limit} {files_word} can be uploaded at once; got {len(files)}", field="files"
        )
    if not files:
        raise MemoryInputError("no files were sent", field="files")
    title = _given_title(title, files)
    tags = clean_tags(list(manual_tags), index=None)
    # Decompressing (a .docx, PDF streams) is limited per file and, across the files, per request.
    budget = InflateBudget(settings.KYBERNESIS_MAX_REQUEST_INFLATED_BYTES)

    results: list[UploadResult] = []
    to_create: list[tuple[UploadResult, PreparedInput]] = []
    queued_with: dict[str, UploadResult] = {}  # content hash -> the file of this request queued with it
    copies: list[tuple[UploadResult, UploadResult]] = []
    ocr_queued: dict[str, UploadJob] = {}  # sha256 of a file -> its OCR job queued by this request
    for upload in files:
        result = UploadResult(filename=_client_name(upload), status="rejected")
        results.append(result)
        try:
            item = _upload_item(upload, tags, budget, title=title)
        except (ExtractionError, MemoryInputError) as exc:
            result.error = str(exc)
            result.http_status = getattr(exc, "status", 422)
            continue
        if isinstance(item, OcrUpload):
            result.notices = list(item.extracted.notices)
            result.status, result.memory, result.job = ocr_upload_queue(owner=owner, upload=item, queued=ocr_queued)
            continue
        result.notices = list(item.notices)
        if len(item.content) <= settings.KYBERNESIS_ASYNC_UPLOAD_CHARS:
            to_create.append((result, item))
            continue
        digest = content_hash(item.content)
        existing = _existing_memory(owner, digest)
        if existing is not None:
            result.status, result.memory = "duplicate", existing
        elif digest in queued_with:
            result.status = "duplicate"
            copies.append((result, queued_with[digest]))
        else:
            queued_with[digest] = result
            result.status = "queued"
            result.job = _upload_job_queue(owner=owner, item=item)

    if to_create:
        # Identical content (already stored, earlier in this request, or sent by a concurrent request)
        # is stored once; every other copy is reported as a duplicate of that memory.
        memories = memory_create_many(owner=owner, items=[item for _, item in to_create], unique=True)
        for (result, _), memory in zip(to_create, memories, strict=True):
            result.memory = memory
            result.status = "created" if memory.created else "duplicate"
    # A second copy of a queued file in the same request points at the first copy's job.
    for copy, first in copies:
        copy.memory, copy.job = first.memory, first.job
    return results


def _given_title(title: str | None, files: Sequence) -> str | None:
    if title is None or not title.strip():
        return None
    if len(files) > 1:
        raise MemoryInputError("a title can be given only when one file is uploaded", field="title")
    return title


def _client_name(upload) -> str:
    """The file name as the client sent it (see kybernesis.middleware), else Django's safe one."""
    return str(getattr(upload, "client_name", None) or upload.name or "")


def _upload_item(
    upload, tags: list[str], budget: InflateBudget, *, title: str | None = None
) -> PreparedInput | OcrUpload:
    name = clean_filename(_client_name(upload))
    max_bytes = settings.KYBERNESIS_MAX_UPLOAD_BYTES
    if upload.size is not None and upload.size > max_bytes:
        raise MemoryTooLargeError(f"the file is {megabytes(upload.size)}; the limit is {megabytes(max_bytes)}")
    data = upload.read(max_bytes + 1)
    if len(data) > max_bytes:
        raise MemoryTooLargeError(f"the file is over the limit of {megabytes(max_bytes)}")
    # Pages that need OCR are read by the task worker, never in the request.
    extracted = extract(name, data, budget=budget, max_inflated=settings.KYBERNESIS_MAX_INFLATED_BYTES, defer_ocr=True)
    if extracted.ocr_pages:
        return OcrUpload(name=name, data=data, extracted=extracted, manual_tags=tags)
    return upload_input(name=name, data=data, extracted=extracted, manual_tags=tags, title=title)


def upload_input(
    *, name: str, data: bytes, extracted: Extracted, manual_tags: list[str], title: str | None = None
) -> PreparedInput:
    """What an extracted file becomes, checked: an upload's, and a scan's once the worker read it by
    OCR. Its title is `title` when the person gave one, else the document's own, else the file name."""
    chosen = title is not None
    if title is None:
        title = document_title(extracted.title) or (name.rsplit(".", 1)[0] if "." in name.strip(".") else name)
    # The memory service's own checks, here rather than in the create, so one bad file is refused alone.
    item = memory_input_prepare(
        MemoryInput(
            title=title,
            content=extracted.text,
            source=Source.UPLOAD,
            metadata=extracted.metadata,
            manual_tags=manual_tags,
            notices=extracted.notices,
            title_chosen=chosen,
        ),
        index=None,
    )
    item.original = original_from_upload(name=name, data=data, metadata=extracted.metadata)
    return item


def _upload_job_queue(*, owner, item: PreparedInput) -> UploadJob:
    metadata = {**item.metadata, NOTICES_KEY: list(item.notices), TITLE_CHOSEN_KEY: item.title_chosen}
    if isinstance(item.original, OriginalFile):
        # The worker gets the text; the bytes wait in the store for the memory it makes.
        staged = original_stage(owner_id=owner.pk, original=item.original)
        metadata = {**metadata, ORIGINAL_KEY: staged.as_dict()}
    job = UploadJob.objects.create(
        owner=owner,
        filename=item.metadata.get("filename", item.title),
        title=item.title,
        text=item.content,
        metadata=metadata,
        manual_tags=list(item.manual_tags),
    )
    transaction.on_commit(
        lambda: async_task(
            "memories.tasks.ingest_upload",
            job.pk,
            task_name=f"ingest upload {job.pk}",
            timeout=settings.KYBERNESIS_UPLOAD_TASK_TIMEOUT,
        )
    )
    return job


def _staged(data) -> StoredOriginal | None:
    try:
        return StoredOriginal.from_dict(data) if isinstance(data, dict) else None
    except (KeyError, TypeError, ValueError):
        return None


def upload_job_run(*, job_id: int) -> UploadJob | None:
    """Ingest one queued upload, acting for the person who uploaded it. Safe to run twice: a job that
    is no longer pending is left alone."""
    with acting(lambda: uploader(job_id)):
        return _upload_job_run(job_id)


def uploader(job_id: int) -> Actor:
    """Who a worker acts for when it stores a queued upload: the account that uploaded it."""
    job = UploadJob.objects.filter(pk=job_id).select_related("owner").first()
    return SYSTEM if job is None else Actor.person(job.owner)


def _upload_job_run(job_id: int) -> UploadJob | None:
    with transaction.atomic():
        job = (
            UploadJob.objects.select_for_update(skip_locked=True)
            .filter(pk=job_id, status=UploadJob.Status.PENDING)
            .first()
        )
        if job is None:
            return None
        job.status = UploadJob.Status.PROCESSING
        job.save(update_fields=["status", "updated_at"])
    try:
        notices = job.metadata.get(NOTICES_KEY)
        memory = memory_create_many(
            owner=job.owner,
            items=[
                MemoryInput(
                    title=job.title,
                    content=job.text,
                    source=Source.UPLOAD,
                    metadata={k: v for k, v in job.metadata.items() if k not in _JOB_KEYS},
                    manual_tags=job.manual_tags,
                    original=_staged(job.metadata.get(ORIGINAL_KEY)),
                    notices=notices if isinstance(notices, list) else (),
                    title_chosen=job.metadata.get(TITLE_CHOSEN_KEY) is True,
                )
            ],
            unique=True,
        )[0]
    except Exception as exc:
        logger.exception("upload job %s failed", job.pk)
        job.status, job.error = UploadJob.Status.FAILED, str(exc) or type(exc).__name__
        job.save(update_fields=["status", "error", "updated_at"])
        return job
    job.status, job.memory, job.text = UploadJob.Status.DONE, memory, ""
    job.save(update_fields=["status", "memory", "text", "updated_at"])
    return job

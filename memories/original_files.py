"""The originals store: the bytes of uploaded and synced files, content-addressed under
KYBERNESIS_ORIGINALS_DIR as <owner id>/<sha256[:2]>/<sha256>, written atomically (temp + rename).

A file is referenced by the Original rows of its owner with that sha256 (memories.models.Original);
deleting the last such row removes it (memories.services.originals). A file that no row references,
left by a transaction that rolled back or by a worker that died between writing and committing, is
an orphan: `manage.py originals_collect` removes orphans older than a grace period.
"""

from __future__ import annotations

import hashlib
import mimetypes
import os
import re
import tempfile
import unicodedata
from collections.abc import Iterable
from dataclasses import dataclass
from pathlib import Path

from django.conf import settings
from django.db import connection

from core.formatting import megabytes

_SHA256 = re.compile(r"^[0-9a-f]{64}$")
# pg_advisory_xact_lock(namespace, hashtext('owner:sha256')): storing and removing one file take turns.
_LOCK_NAMESPACE = 7_413
TEMP_PREFIX = ".tmp-"
COPY_CHUNK = 1024 * 1024


class OriginalError(ValueError):
    """An original that cannot be kept: too large, damaged (sha256 mismatch) or a bad name."""


@dataclass(frozen=True)
class OriginalFile:
    """An original on its way in: its name with extension, media type, bytes and page count."""

    name: str
    media_type: str
    data: bytes
    page_count: int | None = None

    @property
    def size(self) -> int:
        return len(self.data)

    @property
    def sha256(self) -> str:
        return hashlib.sha256(self.data).hexdigest()


def keeping() -> bool:
    return bool(settings.KYBERNESIS_KEEP_ORIGINALS)


def max_bytes() -> int:
    return int(float(settings.KYBERNESIS_ORIGINALS_MAX_MB) * 1024 * 1024)


def root() -> Path:
    return Path(settings.KYBERNESIS_ORIGINALS_DIR)


def path_for(owner_id: int, sha256: str) -> Path:
    if not _SHA256.match(sha256 or ""):
        raise OriginalError(f"not a sha256 digest: {sha256!r}")
    return root() / str(int(owner_id)) / sha256[:2] / sha256


def safe_name(raw: str, *, fallback: str = "original") -> str:
    """A file name fit for a Content-Disposition header and a zip entry: no path, no control or
    format characters, no quotes, at most 255 characters (the extension kept)."""
    name = str(raw or "").replace("\\", "/").rsplit("/", 1)[-1]
    name = "".join(ch for ch in name if unicodedata.category(ch) not in ("Cc", "Cf", "Zl", "Zp") and ch not in '"')
    name = name.strip().strip(".") or fallback
    if len(name) > 255:
        stem, dot, ext = name.rpartition(".")
        name = (stem[: 254 - len(ext)] + dot + ext) if dot and len(ext) < 20 else name[:255]
    return name


def media_type_for(name: str, declared: str = "") -> str:
    guessed = mimetypes.guess_type(name)[0]
    return (declared or guessed or "application/octet-stream")[:150]


def lock(owner_id: int, sha256: str) -> None:
    """Serialise storing and removing one owner's file within the current transaction."""
    with connection.cursor() as cursor:
        cursor.execute("SELECT pg_advisory_xact_lock(%s, hashtext(%s))", [_LOCK_NAMESPACE, f"{owner_id}:{sha256}"])


def check_size(size: int) -> None:
    limit = max_bytes()
    if size > limit:
        raise OriginalError(f"the original is {megabytes(size)}; originals are kept up to {megabytes(limit)}")


def store(owner_id: int, chunks: Iterable[bytes], *, expected_sha256: str | None = None) -> tuple[str, int]:
    """Write the bytes under their sha256, never half: they go to a temp file in the same directory,
    are checked (size limit, expected digest) and only then renamed into place. Returns (sha256, size).
    Call it inside the transaction that stores the Original row."""
    limit = max_bytes()
    folder = root() / str(int(owner_id))
    folder.mkdir(parents=True, exist_ok=True)
    digest = hashlib.sha256()
    size = 0
    handle = tempfile.NamedTemporaryFile(dir=folder, prefix=TEMP_PREFIX, delete=False)  # noqa: SIM115 - renamed below
    temp = Path(handle.name)
    try:
        with handle:
            for chunk in chunks:
                size += len(chunk)
                if size > limit:
                    raise OriginalError(f"the original is over the limit of {megabytes(limit)}")
                digest.update(chunk)
                handle.write(chunk)
            handle.flush()
            os.fsync(handle.fileno())
        sha256 = digest.hexdigest()
        if expected_sha256 is not None and sha256 != expected_sha256:
            raise OriginalError(f"the original's sha256 is {sha256}, not {expected_sha256}: it is damaged")
        lock(owner_id, sha256)  # held to the end of the caller's transaction: a removal waits for it
        target = path_for(owner_id, sha256)
        target.parent.mkdir(parents=True, exist_ok=True)
        if target.exists() and target.stat().st_size == size:
            temp.unlink()
        else:
            os.replace(temp, target)
        return sha256, size
    except BaseException:
        temp.unlink(missing_ok=True)
        raise


def exists(owner_id: int, sha256: str) -> bool:
    try:
        return path_for(owner_id, sha256).is_file()
    except OriginalError:
        return False


def remove(owner_id: int, sha256: str) -> None:
    path_for(owner_id, sha256).unlink(missing_ok=True)


def iter_stored() -> Iterable[tuple[int, str, Path]]:
    """(owner id, sha256, path) of every stored file, and (owner id, "", path) for leftover temp files."""
    base = root()
    if not base.is_dir():
        return
    for owner_dir in base.iterdir():
        if not owner_dir.is_dir() or not owner_dir.name.isdigit():
            continue
        owner_id = int(owner_dir.name)
        for path in owner_dir.glob(f"{TEMP_PREFIX}*"):
            yield owner_id, "", path
        for path in owner_dir.glob("??/*"):
            if _SHA256.match(path.name):
                yield owner_id, path.name, path


# --- Serving -------------------------------------------------------------------------------------

# Shown inline as themselves; every other type opens as text/plain when it is text, else downloads.
# Never HTML, SVG or XML inline: the user's bytes would run as a page of this site.
INLINE_AS_IS = frozenset({"application/pdf", "image/png", "image/jpeg", "image/gif", "image/webp"})
_TEXT_TYPES = frozenset({"application/json", "application/yaml", "application/toml", "application/x-sh"})
_NEVER_TEXT = frozenset({"text/html", "text/xml", "image/svg+xml", "application/xhtml+xml", "application/xml"})
# The response is a document of its own, not part of the site: no scripts, no requests, no forms.
SANDBOX_CSP = "sandbox; default-src 'none'; img-src 'self' data:; style-src 'unsafe-inline'; frame-ancestors 'self'"
# Chromium's PDF viewer will not start in a sandboxed document, so a PDF gets the same policy
# without `sandbox`; pdfium runs the file's scripts (if any) in its own isolated process, not the page.
PDF_CSP = "default-src 'none'; img-src 'self' data:; style-src 'unsafe-inline'; frame-ancestors 'self'"


def inline_type(media_type: str) -> str | None:
    """The Content-Type to open an original with in the browser, or None: download it instead."""
    base = (media_type or "").split(";", 1)[0].strip().lower()
    if base in INLINE_AS_IS:
        return base
    if base in _NEVER_TEXT:
        return "text/plain; charset=utf-8"  # shown as its source, never rendered
    if base.startswith("text/") or base in _TEXT_TYPES:
        return "text/plain; charset=utf-8"
    return None


def response(original, *, inline: bool):
    """A streamed response with the original's bytes: inline (Open) when the type is safe to show,
    else as an attachment (Download), with nosniff and a sandboxing CSP either way."""
    from django.http import FileResponse, Http404

    path = path_for(original.owner_id, original.sha256)
    try:
        handle = open(path, "rb")  # noqa: SIM115 - FileResponse closes it
    except FileNotFoundError:
        raise Http404("The original file is missing from the store.") from None
    shown = inline_type(original.media_type) if inline else None
    name = safe_name(original.name)
    if shown is None:
        resp = FileResponse(handle, as_attachment=True, filename=name, content_type="application/octet-stream")
    else:
        resp = FileResponse(handle, as_attachment=False, filename=name, content_type=shown)
    resp["X-Content-Type-Options"] = "nosniff"
    resp["Content-Security-Policy"] = PDF_CSP if shown == "application/pdf" else SANDBOX_CSP
    resp["Cache-Control"] = "private, no-store"
    resp["Cross-Origin-Resource-Policy"] = "same-origin"
    return resp

"""Google Drive v3: a full files.list on the first sync, then changes.list from the stored page token."""

from __future__ import annotations

import re
import unicodedata
from datetime import datetime

from django.conf import settings
from pydantic import BaseModel, ConfigDict, Field

from connectors import oauth
from connectors.providers.client import ProviderClient
from connectors.providers.errors import ItemFailed, ItemSkipped, MalformedResponse, RemoteError, gone_on_404, parse
from connectors.providers.sync import Content, ProviderSync, RemoteDocument, Sink
from core.formatting import megabytes
from memories.parsers import SUPPORTED_EXTENSIONS, ExtractionError, extract, file_extension
from memories.services.originals import original_from_upload

FOLDER = "application/vnd.google-apps.folder"
# Google's own formats have no bytes of their own; they are exported to text.
EXPORTS = {
    "application/vnd.google-apps.document": ("text/plain", "txt"),
    "application/vnd.google-apps.spreadsheet": ("text/csv", "csv"),
    "application/vnd.google-apps.presentation": ("text/plain", "txt"),
}
# Stored files that memories.parsers reads, with the extension it knows them by.
DOWNLOAD_EXTENSIONS = {
    "application/pdf": "pdf",
    "application/vnd.openxmlformats-officedocument.wordprocessingml.document": "docx",
    "application/msword": "doc",
    "text/plain": "txt",
    "text/markdown": "md",
    "text/x-markdown": "md",
    "text/csv": "csv",
    "text/tab-separated-values": "tsv",
    "text/html": "html",
    "application/json": "json",
    "application/xml": "xml",
    "text/xml": "xml",
    "application/x-yaml": "yaml",
    "application/yaml": "yaml",
}
FILE_FIELDS = "id,name,mimeType,modifiedTime,size,webViewLink,trashed"
PAGE_SIZE = 100
RATE_LIMIT_REASONS = {"rateLimitExceeded", "userRateLimitExceeded"}


class DriveFile(BaseModel):
    model_config = ConfigDict(extra="ignore")

    id: str = Field(min_length=1, max_length=255)
    name: str
    mimeType: str = Field(min_length=1, max_length=255)
    modifiedTime: datetime
    size: int | None = Field(None, ge=0)
    webViewLink: str = ""
    trashed: bool = False


class FileList(BaseModel):
    model_config = ConfigDict(extra="ignore")

    files: list[dict]
    nextPageToken: str | None = None


class Change(BaseModel):
    model_config = ConfigDict(extra="ignore")

    changeType: str = "file"
    fileId: str | None = None
    removed: bool = False
    file: dict | None = None


class ChangeList(BaseModel):
    model_config = ConfigDict(extra="ignore")

    changes: list[dict]
    nextPageToken: str | None = None
    newStartPageToken: str | None = None


class StartPageToken(BaseModel):
    startPageToken: str = Field(min_length=1)


def supported(mime: str) -> bool:
    return mime in EXPORTS or mime in DOWNLOAD_EXTENSIONS or mime.startswith("text/")


def download_name(name: str, mime: str) -> str:
    """A plain file name for memories.parsers: Drive allows slashes and control characters in names,
    and many files have no extension."""
    safe = "".join("-" if ch in "/\\" or unicodedata.category(ch) in ("Cc", "Cf") else ch for ch in name)
    safe = re.sub(r"\.{2,}", ".", safe).strip().strip(".") or "file"
    if file_extension(safe) not in SUPPORTED_EXTENSIONS:
        safe = f"{safe[:240]}.{DOWNLOAD_EXTENSIONS.get(mime, 'txt')}"
    return safe[:255]


class GoogleDriveClient(ProviderClient):
    name = "Google Drive"
    social_provider = "google"

    def api(self, path: str) -> str:
        return settings.KYBERNESIS_GOOGLE_API_URL.rstrip("/") + "/drive/v3" + path

    # --- tokens ------------------------------------------------------------------------------------

    # invalid_grant: the refresh token was revoked, expired, or the client changed.
    refresh_refused_message = (
        "Google refused to renew access (the permission was revoked or has expired). "
        "Reconnect Google Drive to sync again."
    )

    def refresh_request(self, app, refresh_token: str) -> dict:
        return self.json(
            "POST",
            oauth.google_token_url(),
            authenticated=False,
            data={
                "grant_type": "refresh_token",
                "refresh_token": refresh_token,
                "client_id": app.client_id,
                "client_secret": app.secret,
            },
        )

    def revoke(self) -> None:
        token = self.social_token()
        self.request(
            "POST", oauth.google_revoke_url(), authenticated=False, data={"token": token.token_secret or token.token}
        )

    def error_message(self, response) -> str:
        try:
            error = response.json().get("error")
        except (ValueError, AttributeError):
            return super().error_message(response)
        if isinstance(error, dict):
            return str(error.get("message") or error.get("status") or error)[:200]
        if isinstance(error, str):  # the OAuth endpoints answer {"error": "invalid_grant", ...}
            return error
        return super().error_message(response)

    def is_retryable(self, response) -> bool:
        if super().is_retryable(response):
            return True
        if response.status_code != 403:
            return False
        # Drive reports per-user rate limits as 403 with a reason, not as 429.
        try:
            reasons = {e.get("reason") for e in response.json()["error"]["errors"]}
        except (ValueError, KeyError, TypeError, AttributeError):
            return False
        return bool(reasons & RATE_LIMIT_REASONS)

    # --- API calls ---------------------------------------------------------------------------------

    def start_page_token(self) -> str:
        return parse(
            StartPageToken,
            self.json("GET", self.api("/changes/startPageToken")),
            what="changes.getStartPageToken response",
        ).startPageToken

    def list_files(self, page_token: str | None) -> tuple[list[dict], str | None]:
        params = {
            "q": f"trashed = false and mimeType != '{FOLDER}'",
            "pageSize": PAGE_SIZE,
            "fields": f"nextPageToken,files({FILE_FIELDS})",
            "spaces": "drive",
        }
        if page_token:
            params["pageToken"] = page_token
        page = parse(FileList, self.json("GET", self.api("/files"), params=params), what="files.list response")
        return page.files, page.nextPageToken

    def list_changes(self, page_token: str) -> ChangeList:
        params = {
            "pageToken": page_token,
            "pageSize": PAGE_SIZE,
            "includeRemoved": "true",
            "spaces": "drive",
            "fields": f"nextPageToken,newStartPageToken,changes(changeType,fileId,removed,file({FILE_FIELDS}))",
        }
        data = parse(ChangeList, self.json("GET", self.api("/changes"), params=params), what="changes.list response")
        if not data.nextPageToken and not data.newStartPageToken:
            raise MalformedResponse(
                "malformed changes.list response from the API (neither nextPageToken nor newStartPageToken)"
            )
        return data

    def get_file(self, file_id: str) -> DriveFile:
        with gone_on_404(file_id):
            data = self.json("GET", self.api(f"/files/{file_id}"), params={"fields": FILE_FIELDS})
        return parse(DriveFile, data, what="files.get response")

    def content(self, file: DriveFile) -> Content:
        max_bytes = settings.KYBERNESIS_MAX_UPLOAD_BYTES
        with gone_on_404(file.id):
            try:
                if file.mimeType in EXPORTS:
                    export_mime, ext = EXPORTS[file.mimeType]
                    data = self.download(
                        self.api(f"/files/{file.id}/export"), params={"mimeType": export_mime}, max_bytes=max_bytes
                    )
                    extracted = extract(f"export.{ext}", data)
                    return Content(
                        text=extracted.text,
                        metadata={"exportedAs": export_mime},
                        title=extracted.title,
                        notices=extracted.notices,
                    )
                if file.size is not None and file.size > max_bytes:
                    raise ItemSkipped(f"the file is {megabytes(file.size)}; the limit is {megabytes(max_bytes)}")
                data = self.download(self.api(f"/files/{file.id}"), params={"alt": "media"}, max_bytes=max_bytes)
                name = download_name(file.name, file.mimeType)
                extracted = extract(name, data)
            except ExtractionError as exc:
                raise ItemFailed(str(exc)) from exc
            except RemoteError as exc:
                if exc.status == 403 and "export" in str(exc).lower():
                    raise ItemSkipped(f"Google refused to export it ({exc})") from exc
                raise
        metadata = {
            key: extracted.metadata[key]
            for key in ("filename", "extension", "size", "sha256", "pageCount")
            if key in extracted.metadata
        }
        # A file uploaded to Drive has bytes of its own, kept as its original; a Google Doc has none.
        original = original_from_upload(name=name, data=data, metadata={**extracted.metadata, "mime": file.mimeType})
        return Content(
            text=extracted.text,
            metadata=metadata,
            is_file=True,
            original=original,
            title=extracted.title,
            notices=extracted.notices,
        )


class GoogleDriveSync(ProviderSync):
    """Lists what changed in Drive and reports each file to the sink, checkpointing page by page."""

    client_class = GoogleDriveClient
    item_noun = "file"

    def sync(self, sink: Sink) -> None:
        if self.account.cursor:
            self._changes(sink)
        else:
            self._full_listing(sink)

    def fetch(self, external_id: str) -> DriveFile:
        return self.client.get_file(external_id)

    def _full_listing(self, sink: Sink) -> None:
        state = dict(self.account.sync_state or {})
        if not state.get("startPageToken"):
            # Taken before listing, so that changes made during a long first sync are not lost.
            state["startPageToken"] = self.client.start_page_token()
            sink.checkpoint(state=state)
        for files, next_token in self.client.paginate(self.client.list_files, state.get("listPageToken")):
            for raw in files:
                self.handle(sink, raw)
            if next_token:
                state["listPageToken"] = next_token
                sink.checkpoint(state=state)
            else:
                sink.checkpoint(cursor=state["startPageToken"], state={})

    def _changes(self, sink: Sink) -> None:
        token = self.account.cursor
        while True:
            page = self.client.list_changes(token)
            for raw in page.changes:
                change = parse(Change, raw, what="change")
                if change.changeType != "file" or not change.fileId:
                    continue
                if change.removed or change.file is None:
                    sink.removed(change.fileId)
                else:
                    self.handle(sink, change.file, external_id=change.fileId)
            if page.nextPageToken:
                token = page.nextPageToken
                sink.checkpoint(cursor=token)
            else:
                sink.checkpoint(cursor=page.newStartPageToken)
                return

    def parse_entry(self, raw: dict) -> DriveFile:
        return parse(DriveFile, raw, what="file entry")

    def report(self, sink: Sink, file: DriveFile, **context) -> None:
        if file.trashed:
            sink.removed(file.id)
            return
        if file.mimeType == FOLDER:
            return
        if not supported(file.mimeType):
            sink.skipped(
                external_id=file.id,
                title=file.name,
                mime=file.mimeType,
                url=file.webViewLink,
                modified_at=file.modifiedTime,
                reason=f"{file.mimeType} files are not synced (supported: Google Docs, Sheets and "
                "Slides, PDF, Word and text files)",
            )
            return
        sink.document(
            RemoteDocument(
                external_id=file.id,
                title=file.name,
                mime=file.mimeType,
                url=file.webViewLink,
                modified_at=file.modifiedTime,
                load=lambda: self.client.content(file),
            )
        )

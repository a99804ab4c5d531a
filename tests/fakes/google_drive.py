"""A fake Google: the OAuth endpoints (authorize, token, revoke, userinfo) and Drive v3 files.list,
files.get (metadata and alt=media), files.export, changes.getStartPageToken and changes.list, with
Google's error shape {"error": {"code", "message", "errors": [{"reason"}], "status"}}."""

from __future__ import annotations

import base64
import hashlib
import itertools
import secrets
import time
import uuid
from dataclasses import dataclass, field
from datetime import UTC, datetime, timedelta
from urllib.parse import urlencode

import jwt

from tests.fakes.base import FakeServer, Request, Response

FOLDER = "application/vnd.google-apps.folder"
DOC = "application/vnd.google-apps.document"
SHEET = "application/vnd.google-apps.spreadsheet"
SLIDES = "application/vnd.google-apps.presentation"
EXPORTABLE = {
    DOC: {"text/plain", "text/html", "application/pdf"},
    SHEET: {"text/csv", "application/pdf"},
    SLIDES: {"text/plain", "application/pdf"},
}
STATUS_NAMES = {
    400: "INVALID_ARGUMENT",
    401: "UNAUTHENTICATED",
    403: "PERMISSION_DENIED",
    404: "NOT_FOUND",
    429: "RESOURCE_EXHAUSTED",
    500: "INTERNAL",
    503: "UNAVAILABLE",
}


def drive_error(code: int, message: str, reason: str, headers: dict | None = None) -> Response:
    return Response.json(
        {
            "error": {
                "code": code,
                "message": message,
                "status": STATUS_NAMES.get(code, "UNKNOWN"),
                "errors": [{"domain": "global", "reason": reason, "message": message}],
            }
        },
        status=code,
        headers=headers,
    )


@dataclass
class DriveFile:
    id: str
    name: str
    mimeType: str
    content: bytes = b""
    exports: dict[str, bytes] = field(default_factory=dict)
    modifiedTime: str = ""
    trashed: bool = False
    declared_size: int | None = None

    def resource(self) -> dict:
        data = {
            "kind": "drive#file",
            "id": self.id,
            "name": self.name,
            "mimeType": self.mimeType,
            "modifiedTime": self.modifiedTime,
            "trashed": self.trashed,
            "webViewLink": f"https://drive.google.com/file/d/{self.id}/view",
        }
        if not self.mimeType.startswith("application/vnd.google-apps."):
            data["size"] = str(self.declared_size if self.declared_size is not None else len(self.content))
        return data


@dataclass
class Drive:
    """One Google account: its identity, files and change log."""

    sub: str
    email: str
    name: str
    files: dict[str, DriveFile] = field(default_factory=dict)
    changes: list[dict] = field(default_factory=list)


class FakeGoogle(FakeServer):
    def __init__(self, *, client_id: str = "google-client-id", client_secret: str = "google-client-secret"):
        super().__init__()
        self.client_id = client_id
        self.client_secret = client_secret
        self.drives: dict[str, Drive] = {}
        self.access_tokens: dict[str, tuple[str, float]] = {}  # token -> (drive sub, expiry epoch)
        self.refresh_tokens: dict[str, str] = {}
        self.codes: dict[str, dict] = {}
        self.revoked: list[str] = []
        self.authorize_as = "alice"
        self.page_size_cap = 1000
        self._clock = datetime(2025, 3, 1, 9, 0, tzinfo=UTC)
        self._ids = itertools.count(1)

    # --- test helpers -----------------------------------------------------------------------------

    def drive(self, who: str = "alice") -> Drive:
        if who not in self.drives:
            self.drives[who] = Drive(sub=str(100000 + len(self.drives)), email=f"{who}@example.org", name=who.title())
        return self.drives[who]

    def _tick(self) -> str:
        self._clock += timedelta(seconds=7)
        return self._clock.isoformat(timespec="milliseconds").replace("+00:00", "Z")

    def _log(self, drive: Drive, file_id: str, *, removed: bool = False) -> None:
        drive.changes.append({"fileId": file_id, "removed": removed, "time": self._tick()})

    def add_file(
        self,
        name: str,
        mime: str,
        content: bytes = b"",
        *,
        who: str = "alice",
        exports=None,
        declared_size: int | None = None,
    ) -> DriveFile:
        with self.lock:
            drive = self.drive(who)
            file = DriveFile(
                id=f"f{next(self._ids):04d}{secrets.token_hex(3)}",
                name=name,
                mimeType=mime,
                content=content,
                exports=dict(exports or {}),
                modifiedTime=self._tick(),
                declared_size=declared_size,
            )
            drive.files[file.id] = file
            self._log(drive, file.id)
            return file

    def edit_file(
        self, file_id: str, *, who: str = "alice", content: bytes | None = None, name: str | None = None, exports=None
    ) -> DriveFile:
        with self.lock:
            drive = self.drive(who)
            file = drive.files[file_id]
            if content is not None:
                file.content = content
            if exports is not None:
                file.exports = dict(exports)
            if name is not None:
                file.name = name
            file.modifiedTime = self._tick()
            self._log(drive, file_id)
            return file

    def trash_file(self, file_id: str, *, who: str = "alice") -> None:
        with self.lock:
            drive = self.drive(who)
            drive.files[file_id].trashed = True
            drive.files[file_id].modifiedTime = self._tick()
            self._log(drive, file_id)

    def delete_file(self, file_id: str, *, who: str = "alice") -> None:
        with self.lock:
            drive = self.drive(who)
            del drive.files[file_id]
            self._log(drive, file_id, removed=True)

    def issue_tokens(self, who: str = "alice", *, expires_in: int = 3600) -> dict:
        with self.lock:
            access, refresh = "ya29." + secrets.token_urlsafe(16), "1//" + secrets.token_urlsafe(16)
            self.access_tokens[access] = (self.drive(who).sub, time.time() + expires_in)
            self.refresh_tokens[refresh] = self.drive(who).sub
            return {"access_token": access, "refresh_token": refresh, "expires_in": expires_in}

    def expire_access_tokens(self) -> None:
        with self.lock:
            self.access_tokens = {t: (sub, 0.0) for t, (sub, _) in self.access_tokens.items()}

    def revoke_everything(self, who: str = "alice") -> None:
        """The user removed the app's access in their Google account settings."""
        with self.lock:
            sub = self.drive(who).sub
            self.access_tokens = {t: v for t, v in self.access_tokens.items() if v[0] != sub}
            self.refresh_tokens = {t: s for t, s in self.refresh_tokens.items() if s != sub}

    # --- routing ----------------------------------------------------------------------------------

    def route(self, request: Request) -> Response:
        path = request.path
        if path == "/o/oauth2/v2/auth":
            return self._authorize(request)
        if path == "/token" and request.method == "POST":
            return self._token(request)
        if path == "/revoke" and request.method == "POST":
            token = request.form().get("token", "")
            self.revoked.append(token)
            self.access_tokens.pop(token, None)
            sub = self.refresh_tokens.pop(token, None)
            if sub:  # revoking a refresh token also revokes the access tokens granted with it
                self.access_tokens = {t: v for t, v in self.access_tokens.items() if v[0] != sub}
            return Response.json({})
        drive = self._authenticated(request)
        if isinstance(drive, Response):
            return drive
        if path == "/oauth2/v2/userinfo":
            return Response.json({"id": drive.sub, "email": drive.email, "verified_email": True, "name": drive.name})
        if path == "/drive/v3/changes/startPageToken":
            return Response.json({"kind": "drive#startPageToken", "startPageToken": str(len(drive.changes) + 1)})
        if path == "/drive/v3/changes":
            return self._changes(request, drive)
        if path == "/drive/v3/files":
            return self._list(request, drive)
        if path.startswith("/drive/v3/files/"):
            rest = path[len("/drive/v3/files/") :]
            file_id, _, action = rest.partition("/")
            file = drive.files.get(file_id)
            if file is None:
                return drive_error(404, f"File not found: {file_id}.", "notFound")
            if action == "export":
                return self._export(request, file)
            if request.query.get("alt") == "media":
                if file.mimeType.startswith("application/vnd.google-apps."):
                    return drive_error(
                        403,
                        "Only files with binary content can be downloaded. Use Export with Docs Editors files.",
                        "fileNotDownloadable",
                    )
                return Response(200, file.content, {"Content-Type": file.mimeType})
            return Response.json(file.resource())
        return drive_error(404, "Not Found", "notFound")

    def _authenticated(self, request: Request) -> Drive | Response:
        header = request.headers.get("authorization", "")
        token = header.removeprefix("Bearer ").strip()
        entry = self.access_tokens.get(token)
        if not header.startswith("Bearer ") or entry is None or entry[1] < time.time():
            return drive_error(
                401,
                "Request had invalid authentication credentials. Expected OAuth 2 access "
                "token, login cookie or other valid authentication credential.",
                "authError",
                headers={"WWW-Authenticate": 'Bearer realm="https://accounts.google.com/"'},
            )
        return next(d for d in self.drives.values() if d.sub == entry[0])

    def _authorize(self, request: Request) -> Response:
        q = request.query
        if q.get("client_id") != self.client_id:
            return Response(400, b"Error 401: invalid_client", {"Content-Type": "text/plain"})
        code = secrets.token_urlsafe(12)
        self.codes[code] = {"who": self.authorize_as, "redirect_uri": q.get("redirect_uri"), "query": dict(q)}
        location = (
            q["redirect_uri"]
            + "?"
            + urlencode({"state": q.get("state", ""), "code": code, "scope": q.get("scope", "")})
        )
        return Response(302, b"", {"Location": location})

    def _token(self, request: Request) -> Response:
        form = request.form()
        if form.get("client_id") != self.client_id or form.get("client_secret") != self.client_secret:
            return Response.json({"error": "invalid_client", "error_description": "Unauthorized"}, status=401)
        if form.get("grant_type") == "authorization_code":
            grant = self.codes.pop(form.get("code", ""), None)
            if grant is None or grant["redirect_uri"] != form.get("redirect_uri"):
                return Response.json({"error": "invalid_grant", "error_description": "Bad Request"}, status=400)
            challenge = grant["query"].get("code_challenge")
            if challenge:
                verifier = form.get("code_verifier", "")
                digest = base64.urlsafe_b64encode(hashlib.sha256(verifier.encode()).digest()).rstrip(b"=").decode()
                if digest != challenge:
                    return Response.json(
                        {"error": "invalid_grant", "error_description": "Invalid code verifier."}, status=400
                    )
            drive = self.drive(grant["who"])
            tokens = self.issue_tokens(grant["who"], expires_in=3599)
            now = int(time.time())
            id_token = jwt.encode(
                {
                    "iss": "https://accounts.google.com",
                    "aud": self.client_id,
                    "sub": drive.sub,
                    "email": drive.email,
                    "email_verified": True,
                    "name": drive.name,
                    "iat": now,
                    "exp": now + 3600,
                    "jti": uuid.uuid4().hex,
                },
                "fake-google-signing-key-of-32-bytes-or-more",
                algorithm="HS256",
            )
            return Response.json(
                {**tokens, "scope": grant["query"].get("scope", ""), "token_type": "Bearer", "id_token": id_token}
            )
        if form.get("grant_type") == "refresh_token":
            sub = self.refresh_tokens.get(form.get("refresh_token", ""))
            if sub is None:
                return Response.json(
                    {"error": "invalid_grant", "error_description": "Token has been expired or revoked."}, status=400
                )
            access = "ya29." + secrets.token_urlsafe(16)
            self.access_tokens[access] = (sub, time.time() + 3599)
            return Response.json(
                {
                    "access_token": access,
                    "expires_in": 3599,
                    "token_type": "Bearer",
                    "scope": "https://www.googleapis.com/auth/drive.readonly",
                }
            )
        return Response.json({"error": "unsupported_grant_type"}, status=400)

    def _page_size(self, request: Request, default: int) -> int:
        return max(1, min(int(request.query.get("pageSize") or default), self.page_size_cap))

    def _list(self, request: Request, drive: Drive) -> Response:
        q = request.query.get("q", "")
        files = [
            f
            for f in drive.files.values()
            if not ("trashed = false" in q and f.trashed)
            and not (f"mimeType != '{FOLDER}'" in q and f.mimeType == FOLDER)
        ]
        start = int(request.query.get("pageToken", "0") or 0)
        size = self._page_size(request, 100)
        page = files[start : start + size]
        body = {"kind": "drive#fileList", "incompleteSearch": False, "files": [f.resource() for f in page]}
        if start + size < len(files):
            body["nextPageToken"] = str(start + size)
        return Response.json(body)

    def _changes(self, request: Request, drive: Drive) -> Response:
        token = request.query.get("pageToken", "")
        if not token.isdigit() or int(token) < 1 or int(token) > len(drive.changes) + 1:
            return drive_error(400, f"Invalid Value: {token}", "invalid")
        start = int(token) - 1
        size = self._page_size(request, 100)
        entries = drive.changes[start : start + size]
        changes = []
        for entry in entries:
            file = drive.files.get(entry["fileId"])
            change = {
                "kind": "drive#change",
                "changeType": "file",
                "fileId": entry["fileId"],
                "time": entry["time"],
                "removed": entry["removed"] or file is None,
            }
            if file is not None and not change["removed"]:
                change["file"] = file.resource()
            changes.append(change)
        body = {"kind": "drive#changeList", "changes": changes}
        if start + size < len(drive.changes):
            body["nextPageToken"] = str(start + size + 1)
        else:
            body["newStartPageToken"] = str(len(drive.changes) + 1)
        return Response.json(body)

    def _export(self, request: Request, file: DriveFile) -> Response:
        wanted = request.query.get("mimeType", "")
        if file.mimeType not in EXPORTABLE or wanted not in EXPORTABLE[file.mimeType]:
            return drive_error(400, "The requested conversion is not supported.", "badRequest")
        data = file.exports.get(wanted)
        if data is None:
            return drive_error(500, "Internal Error", "internalError")
        return Response(200, data, {"Content-Type": wanted})

"""Project middleware."""

from django.contrib.auth.middleware import LoginRequiredMiddleware as DjangoLoginRequiredMiddleware
from django.http import JsonResponse, multipartparser
from django.http.multipartparser import MultiPartParser
from django.utils.datastructures import ImmutableList
from django.utils.encoding import force_str


class LoginRequiredMiddleware(DjangoLoginRequiredMiddleware):
    """Every page needs a login, except the JSON API, which answers 401 through its own auth."""

    def process_view(self, request, view_func, view_args, view_kwargs):
        if request.path_info.startswith("/api/"):
            return None
        return super().process_view(request, view_func, view_args, view_kwargs)


# Django refuses a whole multipart body when one part's headers exceed 1 KiB, so one file with a long
# name (a ~5,000-character one) would lose every file beside it with a bare 400. The parts' headers may be
# up to 32 KiB instead; the long name then reaches the upload service, which refuses that file alone
# with its reason (parsers.clean_filename). Each part's header is still read in one bounded chunk.
multipartparser.MAX_TOTAL_HEADER_SIZE = max(multipartparser.MAX_TOTAL_HEADER_SIZE, 32 * 1024)


class _NameKeepingMultiPartParser(MultiPartParser):
    """Django strips paths and control characters from upload names, and silently drops files named
    '..'. Uploads would rather refuse such a file with a reason, so the name the client sent is kept
    on each file as `client_name` (the file's `name` stays Django's safe version)."""

    def sanitize_file_name(self, file_name):
        self._client_name = file_name
        return super().sanitize_file_name(file_name) or "unnamed"

    def handle_file_complete(self, old_field_name, counters):
        for i, handler in enumerate(self._upload_handlers):
            file_obj = handler.file_complete(counters[i])
            if file_obj:
                file_obj.client_name = getattr(self, "_client_name", file_obj.name)
                self._files.appendlist(force_str(old_field_name, self._encoding, errors="replace"), file_obj)
                break


class UploadClientNamesMiddleware:
    """Parse multipart bodies with _NameKeepingMultiPartParser."""

    def __init__(self, get_response):
        self.get_response = get_response

    def __call__(self, request):
        def parse_file_upload(META, post_data):
            request.upload_handlers = ImmutableList(
                request.upload_handlers, warning="Upload handlers are fixed once the upload is parsed."
            )
            return _NameKeepingMultiPartParser(META, post_data, request.upload_handlers, request.encoding).parse()

        request.parse_file_upload = parse_file_upload
        return self.get_response(request)


class ApiJsonErrorsMiddleware:
    """Every answer under /api/ is JSON, errors included. Django answers an unknown API path with the
    site's HTML 404 page and django-ninja a wrong method with a plain-text 405; an API client would
    then have to parse HTML. Such answers become `{"detail": ...}` with the same status (and the same
    Allow header); JSON answers pass untouched."""

    def __init__(self, get_response):
        self.get_response = get_response

    def __call__(self, request):
        response = self.get_response(request)
        if (
            request.path_info.startswith("/api/")
            and response.status_code >= 400
            and not response.get("Content-Type", "").startswith("application/json")
            and not getattr(response, "streaming", False)
        ):
            return self._as_json(request, response)
        return response

    @staticmethod
    def _as_json(request, response):
        status = response.status_code
        if status == 404:
            detail = f"Not found: there is no API route {request.method} {request.path_info}. See /api/v1/docs."
        elif status == 405:
            allowed = response.get("Allow", "")
            detail = f"Method {request.method} is not allowed on {request.path_info}" + (
                f"; allowed: {allowed}." if allowed else "."
            )
        else:
            detail = response.reason_phrase or "Error"
        converted = JsonResponse({"detail": detail}, status=status)
        for header in ("Allow", "Retry-After", "WWW-Authenticate"):
            if header in response:
                converted[header] = response[header]
        return converted

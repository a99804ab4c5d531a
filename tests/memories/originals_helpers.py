"""What the tests of originals share: uploaded files as the upload middleware hands them over."""

from django.core.files.uploadedfile import SimpleUploadedFile


def upload(name: str, data: bytes) -> SimpleUploadedFile:
    """An uploaded file with the client's own name, as kybernesis.middleware keeps it."""
    file = SimpleUploadedFile(name, data)
    file.client_name = name
    return file

"""Template context shared by every page."""

from django.conf import settings


def mail_delivery(request) -> dict:
    """Whether mail only goes to the server's console (the default), so pages that send mail can say so."""
    backend = settings.EMAIL_BACKEND
    return {"mail_to_console": backend.endswith(("console.EmailBackend", "locmem.EmailBackend"))}

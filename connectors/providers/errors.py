"""What can go wrong in a connector sync, as exceptions the sync service turns into statuses, and the
check of a remote JSON value against its documented shape."""

from __future__ import annotations

from contextlib import contextmanager

from pydantic import BaseModel, ValidationError


class ConnectorError(Exception):
    """A sync cannot go on; the message is shown to the person as is."""


class ReconnectNeeded(ConnectorError):
    """The stored token was refused or cannot be refreshed: only a new OAuth connect helps."""


class RemoteError(ConnectorError):
    """The remote service kept failing (after retries) or refused a request."""

    def __init__(self, message: str, *, status: int | None = None, transient: bool = False):
        super().__init__(message)
        self.status = status
        self.transient = transient


class MalformedResponse(ConnectorError):
    """The remote answered with something that is not the documented shape."""


class ItemSkipped(Exception):
    """This one remote item is deliberately not synced (unsupported type, too large...)."""


class ItemFailed(Exception):
    """This one remote item could not be turned into a memory (damaged file, malformed data...)."""


class ItemGone(Exception):
    """The remote item no longer exists (deleted, trashed, or access lost)."""


def parse(model: type[BaseModel], data, *, what: str):
    """Validate a remote JSON value against the documented shape, or say clearly what is wrong."""
    try:
        return model.model_validate(data)
    except ValidationError as exc:
        problems = "; ".join(
            f"{'.'.join(str(part) for part in error['loc']) or 'response'}: {error['msg'].lower()}"
            for error in exc.errors()[:3]
        )
        raise MalformedResponse(f"malformed {what} from the API ({problems})") from None


@contextmanager
def gone_on_404(external_id: str):
    """A 404 for one item means it was deleted or access to it was lost: the item is gone."""
    try:
        yield
    except RemoteError as exc:
        if exc.status == 404:
            raise ItemGone(external_id) from exc
        raise

"""django-q2 entry points for connectors: ids in, call a service."""

from connectors import services


def sync_account(account_id: int) -> None:
    services.connector_sync(account_id=account_id)


def sync_all() -> None:
    services.connector_sync_all()

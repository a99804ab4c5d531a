"""The shared sync: the shapes a provider hands to the sync service (remote documents, the sink it
reports to) and the flow every provider follows. A provider supplies only its hooks: how to list what
changed (`sync`), fetch one item (`fetch`), parse a listing entry (`parse_entry`) and report it (`report`)."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from datetime import datetime

from connectors.providers.client import ProviderClient
from connectors.providers.errors import ItemGone, MalformedResponse, RemoteError
from memories.original_files import OriginalFile


@dataclass
class Content:
    text: str
    metadata: dict = field(default_factory=dict)
    # Something worth telling the person that did not stop the sync (e.g. blocks left out).
    note: str = ""
    # Whether the item is a file whose bytes can be kept (a Drive upload: yes; a Google Doc's export or
    # a Notion page: no), and the original to keep (None when keeping is off or it is over the limit).
    is_file: bool = False
    original: OriginalFile | None = None
    # The title the document itself declares (a parser's; the memory's title when set), and what its
    # parser noticed while reading it (kept on the memory).
    title: str | None = None
    notices: list[str] = field(default_factory=list)


@dataclass
class RemoteDocument:
    """One remote item as listed; `load` fetches its text only when the item changed."""

    external_id: str
    title: str
    mime: str
    url: str
    modified_at: datetime | None
    load: Callable[[], Content]
    # Reload even when the modified time is unchanged (Notion's times are rounded to the minute).
    recheck: bool = False


class Sink:
    """What a provider's sync reports to; implemented by connectors.services."""

    def document(self, doc: RemoteDocument) -> None: ...

    def skipped(self, *, external_id: str, title: str, mime: str, url: str, modified_at, reason: str) -> None: ...

    def failed(self, *, external_id: str, title: str, reason: str) -> None: ...

    def removed(self, external_id: str) -> None: ...

    def checkpoint(self, *, cursor: str | None = None, state: dict | None = None) -> None: ...

    def retry_ids(self) -> list[str]: ...


class ProviderSync:
    """One provider's sync: first the items whose last attempt failed for a passing reason, then
    what changed remotely (`sync`), all reported to the sink.

    A listing entry goes through `handle`: without an id it is reported failed, an entry the
    provider does not list as an item is passed over, a malformed one fails on its own, and a
    well-formed one is reported by the provider's `report`. A retried item is fetched on its own
    (a 404 meaning it is gone) and reported the same way.
    """

    client_class: type[ProviderClient] = ProviderClient
    # What the provider calls an item, for messages ("Notion listed a page without an id").
    item_noun = "item"

    def __init__(self, *, account):
        self.account = account
        self.client = self.client_class(account=account)

    def run(self, sink: Sink) -> None:
        for external_id in sink.retry_ids():
            self.retry(sink, external_id)
        self.sync(sink)

    def retry(self, sink: Sink, external_id: str) -> None:
        try:
            item = self.fetch(external_id)
        except ItemGone:
            sink.removed(external_id)
            return
        except (MalformedResponse, RemoteError) as exc:
            sink.failed(external_id=external_id, title="", reason=str(exc))
            return
        self.report(sink, item)

    def handle(self, sink: Sink, raw, *, external_id: str | None = None, **context) -> None:
        """Report one listing entry to the sink."""
        external_id = external_id or (raw.get("id") if isinstance(raw, dict) else None)
        if not isinstance(external_id, str) or not external_id:
            sink.failed(
                external_id="",
                title="",
                reason=f"{self.client.name} listed a {self.item_noun} without an id; it was ignored",
            )
            return
        if not self.listed(raw):
            return
        try:
            item = self.parse_entry(raw)
        except MalformedResponse as exc:
            name = raw.get("name") if isinstance(raw, dict) and isinstance(raw.get("name"), str) else ""
            sink.failed(external_id=external_id, title=name, reason=str(exc))
            return
        self.report(sink, item, **context)

    # --- the provider's hooks ------------------------------------------------------------------

    def sync(self, sink: Sink) -> None:
        """List what changed since the stored cursor, `handle` each entry, checkpoint as it goes."""
        raise NotImplementedError

    def fetch(self, external_id: str):
        """One item, fetched on its own and parsed (ItemGone when the remote no longer has it)."""
        raise NotImplementedError

    def listed(self, raw: dict) -> bool:
        """Whether a listing entry is an item this provider syncs at all (others are passed over)."""
        return True

    def parse_entry(self, raw: dict):
        """A listing entry checked against its documented shape (MalformedResponse if it is not)."""
        raise NotImplementedError

    def report(self, sink: Sink, item, **context) -> None:
        """Tell the sink what became of one parsed item: a document, skipped, or removed."""
        raise NotImplementedError

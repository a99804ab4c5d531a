"""Mail as items: an .mbox (a Gmail Takeout, a Thunderbird folder) split as it is read, never whole in
memory, or one .eml; each message one record (memories.parsers.mail reads it), and each attachment of a
type uploads accept one record of its own, within the upload limits.

A record's metadata["mail"]["key"] is the message's identity for an import run again (its Message-ID, or
a hash of its headers and body when it has none; an attachment's, its bytes' sha256): the import skips
what the account already holds before anything is embedded, so a re-import, or a resumed one, adds none.
"""

from __future__ import annotations

import re
from collections.abc import Iterator
from pathlib import Path

from django.conf import settings

from core.formatting import megabytes
from memories.parsers import DecompressionBombError, ExtractionError, InflateBudget, extract
from memories.parsers.mail import (
    EMPTY_BODY,
    MailMessage,
    looks_like_mail,
    mail_fingerprint,
    mail_text,
    read_message,
    trim_notice,
)
from portability.sources import reading
from portability.sources.items import ImportSourceError, Item, Source

MBOX_SUFFIXES = (".mbox", ".mbx")
EML_SUFFIXES = (".eml",)
KEY_PATH = ("mail", "key")  # where a record carries its identity (see portability.services.import_)
MAX_MESSAGE_BYTES = reading.MAX_ENTRY_BYTES  # one message with its attachments, as the mbox holds it
MAX_LINE_BYTES = 1024 * 1024  # mail lines are short; a longer one is cut, never read whole
_HEADER_LINE = re.compile(rb"^[!-9;-~]+:")
_ESCAPED_FROM = re.compile(rb"^>+From ")
_RAW_MESSAGE_ID = re.compile(rb"^message-id:[ \t]*(?:\r?\n[ \t]+)?<([^<>\s]+)>", re.IGNORECASE | re.MULTILINE)


def looks_like_mbox(head: bytes) -> bool:
    """An mbox starts with its first message's "From " separator line and that message's headers."""
    lines = head.split(b"\n", 2)
    return len(lines) >= 2 and lines[0].startswith(b"From ") and bool(_HEADER_LINE.match(lines[1]))


class _Message:
    """The lines of the message being read, dropped (and only counted) once it is over the limit."""

    def __init__(self):
        self.parts: list[bytes] = []
        self.size = 0
        self.over = False

    def add(self, line: bytes) -> None:
        if _ESCAPED_FROM.match(line):
            line = line[1:]
        self.size += len(line)
        if self.over:
            return
        if self.size > MAX_MESSAGE_BYTES:
            self.over, self.parts = True, []
        else:
            self.parts.append(line)

    def take(self) -> bytes | None:
        data = None if self.over else b"".join(self.parts)
        self.parts, self.size, self.over = [], 0, False
        return data


def split_mbox(stream) -> Iterator[tuple[int, int, bytes | None]]:
    """(number, offset, message bytes) for each message, read line by line: a "From " line starts a
    message when it follows a blank line (or opens the file) and a header line follows it, so a body
    line that begins "From " (mboxo leaves it so) and a separator line that is malformed both do as
    mail readers do. A message over MAX_MESSAGE_BYTES is given as None, its bytes skipped unkept.
    mboxrd's ">From " escapes lose one ">". Text before the first separator is a message if it has
    a mail's headers (a file that begins with a mail), else it is left out."""
    number = start = offset = 0
    preamble = True
    message = _Message()
    previous_blank = True
    pending: bytes | None = None  # a "From " line that may start a message, decided by the next line
    pending_at = 0

    def emit():
        nonlocal number
        if not message.size:
            return
        data = message.take()
        if preamble and (data is None or not looks_like_mail(data)):
            return
        number += 1
        yield number, start, data

    for line in reading.lines_of(stream, MAX_LINE_BYTES):
        at = offset
        offset += len(line)
        if pending is not None:
            if _HEADER_LINE.match(line):
                yield from emit()
                start, preamble = pending_at, False
            else:
                message.add(pending)
            pending = None
        if previous_blank and line.startswith(b"From "):
            pending, pending_at = line, at
            previous_blank = False
            continue
        message.add(line)
        previous_blank = not line.strip()
    if pending is not None:
        message.add(pending)
    yield from emit()


def count_mbox(path: Path) -> int:
    """How many messages split_mbox finds (the same pass, keeping nothing), for the progress bar."""
    with open(path, "rb") as handle:
        return sum(1 for _ in split_mbox(handle))


def open_mbox(path: Path, name: str = "") -> Source:
    name = name or path.name
    with open(path, "rb") as handle:
        head = handle.read(65536)
    if not head.strip():
        raise ImportSourceError(f"{name} is empty")
    if not looks_like_mbox(head) and not looks_like_mail(head):
        raise ImportSourceError(
            f'{name} is not an mbox: it should begin with a line "From sender date" and the first message\'s headers'
        )

    def items():
        with open(path, "rb") as handle:
            for number, offset, data in split_mbox(handle):
                label = f"{name} message {number} (at byte {offset:,})"
                if data is None:
                    yield Item(label, error=f"refused: the message is over {megabytes(MAX_MESSAGE_BYTES)}")
                    continue
                key = raw_message_id(data)
                if key and source.is_known is not None and source.is_known(key):
                    yield Item(label, known=True)  # a re-import or a resumed one: not read again
                    continue
                yield from message_items(data, label=label, mailbox=name)

    source = Source(kind="mail", total=count_mbox(path), key_path=KEY_PATH)
    source.items = items()
    return source


def raw_message_id(data: bytes) -> str:
    """The Message-ID from the header block's bytes, without parsing the message ("" when none)."""
    ends = [at for at in (data.find(b"\n\n"), data.find(b"\r\n\r\n")) if at >= 0]
    head = data[: min(ends) + 1 if ends else 65536][:65536]
    found = _RAW_MESSAGE_ID.search(head)
    return found.group(1).decode("utf-8", "replace") if found else ""


def open_eml(path: Path, name: str = "") -> Source:
    name = name or path.name
    size = path.stat().st_size
    if size > MAX_MESSAGE_BYTES:
        raise ImportSourceError(f"{name} is {megabytes(size)}; a message can be at most {megabytes(MAX_MESSAGE_BYTES)}")
    data = path.read_bytes()
    if not data.strip():
        raise ImportSourceError(f"{name} is empty")
    if not looks_like_mail(data):
        raise ImportSourceError(
            f"{name} is not a mail message: it does not begin with a mail's headers (From, Date...)"
        )
    return Source(kind="mail", items=message_items(data, label=name, mailbox=""), total=1, key_path=KEY_PATH)


def _title(mail: MailMessage) -> str:
    if mail.subject:
        return mail.subject
    sender = mail.metadata.get("from", "").split("<", 1)[0].strip() or mail.metadata.get("from", "")
    when = mail.date.strftime("%Y-%m-%d") if mail.date else ""
    return "(no subject)" + (f" from {sender}" if sender else "") + (f", {when}" if when else "")


def message_items(data: bytes, *, label: str, mailbox: str) -> Iterator[Item]:
    """The message's record, then one record per attachment that can be read."""
    try:
        mail = read_message(data)
    except Exception as exc:  # noqa: BLE001 - the email package gives up on some damage: one message
        yield Item(label, error=f"the message cannot be read: {exc}")
        return
    meta = dict(mail.metadata)
    meta["key"] = meta.get("messageId") or "sha256:" + mail_fingerprint(mail)
    if mailbox:
        meta["mailbox"] = mailbox
    content = mail_text(mail)
    if not content.strip():
        yield Item(label, error="the message has no sender, no recipients, no date and no text")
        return
    notices = list(mail.notices)
    if mail.trimmed:
        notices.append(trim_notice(mail.trimmed))
    attachments, skipped = _attachment_records(mail, meta, label)
    kept = [record for record in attachments if isinstance(record, dict)]
    if kept:
        meta["attachments"] = [{"filename": r["metadata"]["filename"], "sha256": r["metadata"]["sha256"]} for r in kept]
    if skipped:
        notices.append("attachments not kept: " + "; ".join(skipped[:10]))
    record = {
        "title": _title(mail),
        "content": content,
        "source": "upload",
        "metadata": {"mail": meta},
        "notices": notices,
    }
    if mail.date is not None:
        record["createdAt"] = mail.date.isoformat()
    yield Item(label, record=record)
    for item in attachments:
        if isinstance(item, Item):
            item.attached = True
            yield item
        else:
            yield Item(f"{label}: {item['metadata']['filename']}", record=item, attached=True)


def _attachment_records(mail: MailMessage, meta: dict, label: str) -> tuple[list, list[str]]:
    """Each attachment as a record (a dict), or an Item with the error a reader should see (a bomb, one
    over the limit); and the ones left out as not a memory's matter (a type uploads do not read, an
    image, which would need OCR), each in a few words."""
    out: list = []
    skipped: list[str] = []
    limit = settings.KYBERNESIS_MAX_UPLOAD_BYTES
    budget = InflateBudget(settings.KYBERNESIS_MAX_REQUEST_INFLATED_BYTES)
    for attachment in mail.attachments:
        name = attachment.filename
        if attachment.content_type.startswith("image/"):
            skipped.append(f"{name} (an image)")
            continue
        if len(attachment.data) > limit:
            out.append(
                Item(
                    f"{label}: {name}",
                    error=f"refused: the attachment is {megabytes(len(attachment.data))}; the limit is {megabytes(limit)}",
                )
            )
            continue
        try:
            extracted = extract(
                name,
                attachment.data,
                budget=budget,
                max_inflated=settings.KYBERNESIS_MAX_INFLATED_BYTES,
                defer_ocr=True,
            )
        except DecompressionBombError as exc:  # refused, as an upload would be: the report says why
            out.append(Item(f"{label}: {name}", error=f"refused: {exc}"))
            continue
        except ExtractionError as exc:  # not a memory's matter: named on the message, with why
            reason = "not a supported type" if "not a supported file type" in str(exc) else str(exc)
            skipped.append(f"{name} ({reason[:200]})")
            continue
        except Exception as exc:  # noqa: BLE001 - a parser's failure on one attachment is that attachment's
            out.append(Item(f"{label}: {name}", error=f"the attachment cannot be read: {exc}"))
            continue
        if extracted.ocr_pages:
            skipped.append(f"{name} (scanned pages, which need OCR: upload it on its own)")
            continue
        sha = extracted.metadata["sha256"]
        record = {
            "title": extracted.title or name.rsplit(".", 1)[0] or name,
            "content": extracted.text,
            "source": "upload",
            "metadata": {
                **extracted.metadata,
                "mail": {
                    "key": f"sha256:{sha}",
                    "attachmentOf": meta["key"],
                    "threadId": meta.get("threadId", ""),
                    "subject": mail.subject or "",
                    "from": meta.get("from", ""),
                },
            },
            "notices": list(extracted.notices),
        }
        if mail.date is not None:
            record["createdAt"] = mail.date.isoformat()
        out.append(record)
    return out, skipped


__all__ = ["EML_SUFFIXES", "EMPTY_BODY", "KEY_PATH", "MBOX_SUFFIXES", "open_eml", "open_mbox", "split_mbox"]

"""Mail: one message's bytes (RFC 5322, an .eml) -> its subject, headers, readable body (the text part,
or the HTML as text; quoted replies and the signature trimmed) and its attachments, never failing on a
charset it does not know; and the .eml format of the upload registry."""

from __future__ import annotations

import codecs
import hashlib
import re
from dataclasses import dataclass, field
from datetime import UTC, datetime
from email import policy
from email.header import decode_header, make_header
from email.message import EmailMessage, Message
from email.parser import BytesParser
from email.utils import getaddresses, parsedate_to_datetime

from memories.parsers.budget import InflateBudget
from memories.parsers.errors import ExtractionError
from memories.parsers.format import Format, Parsed
from memories.parsers.html import html_text
from memories.parsers.text import decode, looks_like_text

# Headers that make the start of a file a mail's header block (see looks_like_mail).
_MAIL_HEADERS = frozenset(
    {"from", "to", "cc", "date", "subject", "message-id", "received", "return-path", "mime-version", "reply-to"}
)
_HEADER_LINE = re.compile(rb"^[!-9;-~]+:")
_CONTINUATION = re.compile(rb"^[ \t]")
_MESSAGE_ID = re.compile(r"<([^<>\s]+)>")
MAX_HEADER_CHARS = 2000  # one header kept in the metadata
MAX_REFERENCES = 50
_GUESS_MIN_BYTES = 256
EMPTY_BODY = "the message has no text: its body is empty, or only images or tracking pixels"

# What a reply quotes below the writer's own text: an attribution line before a quote, an Outlook
# block of the original's headers, or a forward's separator.
_ATTRIBUTION = re.compile(
    r"^\s*(On\s.{0,300}?\swrote|Am\s.{0,300}?\sschrieb|Le\s.{0,300}?\sa\s+écrit|El\s.{0,300}?\sescribió"
    r"|Op\s.{0,300}?\sschreef|Il\s.{0,300}?\sha\s+scritto|Em\s.{0,300}?\sescreveu"
    r"|.{1,200}\s(wrote|writes|schrieb|escribió|a écrit)|\d{4}[-/.]\d{1,2}[-/.]\d{1,2}.{0,200}<[^>]+>)\s*:\s*$",
    re.IGNORECASE,
)
_ORIGINAL_SEPARATOR = re.compile(
    r"^\s*(-{2,}\s*(Original Message|Ursprüngliche Nachricht|Message d'origine|Mensaje original|Oorspronkelijk bericht"
    r"|Forwarded message|Weitergeleitete Nachricht)\s*-{2,}|_{10,})\s*$",
    re.IGNORECASE,
)
_OUTLOOK_FROM = re.compile(r"^\s*\*?(From|Von|De|Van|Da)\s*:\*?\s+\S", re.IGNORECASE)
_OUTLOOK_NEXT = re.compile(
    r"^\s*\*?(Sent|Date|Gesendet|Datum|Envoyé|Enviado|Verzonden|Inviato|To|An)\s*:", re.IGNORECASE
)
_MOBILE_SIGNATURE = re.compile(
    r"^\s*(Sent from my \w[\w ]{0,40}|Von meinem \w[\w ]{0,40} gesendet|Get Outlook for \w+)\s*$"
)


# Parts that are not content but the mail's machinery: signatures, keys, delivery reports, Outlook's
# TNEF wrapper. They are left out without a word.
MACHINERY_TYPES = frozenset(
    {
        "application/pgp-signature",
        "application/pgp-keys",
        "application/pgp-encrypted",
        "application/pkcs7-signature",
        "application/x-pkcs7-signature",
        "application/ms-tnef",
        "application/vnd.ms-tnef",
        "message/delivery-status",
        "message/disposition-notification",
        "text/rfc822-headers",
    }
)


@dataclass
class Attachment:
    filename: str
    content_type: str
    data: bytes


@dataclass
class MailMessage:
    """What a mail says: `metadata` holds from, to, cc, date, messageId, inReplyTo, references and
    threadId (JSON-ready); `skipped` says why each part that is not text was not kept."""

    subject: str | None
    text: str
    metadata: dict
    date: datetime | None
    attachments: list[Attachment] = field(default_factory=list)
    notices: list[str] = field(default_factory=list)
    trimmed: str = ""  # what trim_reply left out


def looks_like_mail(data: bytes) -> bool:
    """Whether the bytes start with a mail's header block: header lines up to a blank line, with a From
    and at least two more of the headers every mail has (a note that begins "Subject: x" is a note)."""
    names = set()
    for number, line in enumerate(data[:65536].splitlines()):
        if not line.strip():
            break
        if number == 0 and line.startswith(b"From "):  # an mbox's separator line before the headers
            continue
        if _CONTINUATION.match(line):
            if not names:
                return False
            continue
        if not _HEADER_LINE.match(line):
            return False
        names.add(line.split(b":", 1)[0].decode("ascii").lower())
    else:
        return False
    return "from" in names and len(names & _MAIL_HEADERS) >= 3


def parse_message(data: bytes) -> EmailMessage:
    return BytesParser(policy=policy.default).parsebytes(data)  # type: ignore[return-value]


def read_message(data: bytes | Message, *, attachments: bool = True) -> MailMessage:
    """The message's subject, headers as metadata, body text and (when asked) its attachments. Never
    raises on what a mail holds: a charset nobody knows is read with a fallback, and says so."""
    message = parse_message(data) if isinstance(data, bytes) else data
    notices: list[str] = []
    subject = _header(message, "subject", notices)
    date = _date(message)
    metadata = _metadata(message, date, notices)
    text, found = _body(message, notices)
    text, trimmed = trim_reply(text)
    if attachments:  # messages forwarded as attachments, read into the text (once: not theirs in turn)
        for inner in _forwarded(message):
            forwarded = read_message(inner, attachments=False)
            notices.extend(forwarded.notices)
            title = f"Forwarded message: {forwarded.subject}" if forwarded.subject else "Forwarded message"
            text = f"{text}\n\n--- {title} ---\n{mail_text(forwarded)}".strip()
    kept: list[Attachment] = []
    if attachments:
        kept = list(_attachments(message, found, notices))
    return MailMessage(
        subject=subject or None,
        text=text,
        metadata=metadata,
        date=date,
        attachments=kept,
        notices=list(dict.fromkeys(notices)),
        trimmed=trimmed,
    )


def _header(message: Message, name: str, notices: list[str]) -> str:
    """A header as text, RFC 2047 words decoded; a word in an unknown charset read as best it can."""
    try:
        value = message.get(name)
        value = None if value is None else str(value)
    except (LookupError, ValueError, IndexError, TypeError, AttributeError):  # the header parser's own failures
        value = None
    if value is None or "=?" in value or "\ufffd" in value or _has_surrogates(value):
        raw = next((v for k, v in message.raw_items() if k.lower() == name), None)
        if raw is None:
            return ""
        value = _decode_words(str(raw), f"{name.title()} header", notices)
    return " ".join(value.split())[:MAX_HEADER_CHARS]


def _has_surrogates(value: str) -> bool:
    return any("\udc80" <= ch <= "\udcff" for ch in value)


def _decode_words(value: str, what: str, notices: list[str]) -> str:
    try:
        return str(make_header(decode_header(value)))
    except (LookupError, UnicodeDecodeError, ValueError, IndexError):
        pass
    parts = []
    for chunk, charset in decode_header(value):
        if isinstance(chunk, str):
            parts.append(chunk)
            continue
        text, fallback = _decode_bytes(chunk, charset)
        if fallback:
            notices.append(f"the {what} is in a charset that is not known ({charset}); it was read as {fallback}")
        parts.append(text)
    return "".join(parts)


# Charsets mail says it is in, read as their supersets, as browsers and mail readers do: the text a
# sender's program wrote "gb2312" was really GBK, "iso-8859-1" really Windows-1252, and so on.
_SUPERSETS = {
    "gb2312": "gb18030",
    "gbk": "gb18030",
    "x-gbk": "gb18030",
    "euc-cn": "gb18030",
    "iso-8859-1": "cp1252",
    "latin1": "cp1252",
    "us-ascii": "cp1252",
    "ascii": "cp1252",
    "iso-8859-9": "cp1254",
    "iso-8859-11": "cp874",
    "tis-620": "cp874",
    "ks_c_5601-1987": "cp949",
    "euc-kr": "cp949",
    "shift_jis": "cp932",
    "x-sjis": "cp932",
    "big5": "big5hkscs",
}
# A declared charset whose bytes hold at most this share of invalid ones is kept, the few replaced.
_MAX_INVALID_SHARE = 0.01


def _decode_bytes(data: bytes, charset: str | None) -> tuple[str, str]:
    """(text, "") in the declared charset, or (text, what it was read as) when that is unknown or wrong.
    Bytes that are not text at all give ("", "nothing: the part is not text")."""
    name = ""
    if charset:
        try:
            name = codecs.lookup(_SUPERSETS.get(charset.strip().lower(), charset.strip())).name
        except (LookupError, ValueError):
            name = ""
    if name:
        try:
            return data.decode(name), ""
        except UnicodeDecodeError:
            text = data.decode(name, errors="replace")
            if text.count("\ufffd") <= _MAX_INVALID_SHARE * max(len(text), 1):
                return text, f"{charset}, its few invalid bytes replaced"
    try:
        return data.decode("utf-8"), "UTF-8" if charset else ""
    except UnicodeDecodeError:
        pass
    if not looks_like_text(data):
        return "", "nothing: the part is not text"
    if len(data) >= _GUESS_MIN_BYTES:  # enough text for charset detection to tell code pages apart
        try:
            return decode(data), "the charset its bytes fit best"
        except ExtractionError:
            return "", "nothing: the part is not text"
    return data.decode("cp1252", errors="replace"), "Windows-1252"


def _date(message: Message) -> datetime | None:
    try:
        raw = message.get("date")
        value = getattr(raw, "datetime", None)
        if value is None and raw is not None:
            value = parsedate_to_datetime(str(raw))
    except (TypeError, ValueError, IndexError, LookupError, OverflowError):
        return None
    if value is None:
        return None
    if value.tzinfo is None:  # "-0000": the time in UTC, its zone not told
        value = value.replace(tzinfo=UTC)
    try:
        value = value.astimezone(UTC)
    except (OverflowError, ValueError):
        return None
    return value if 1970 <= value.year <= 9999 else None


def message_ids(value: str) -> list[str]:
    """The ids in a Message-ID, In-Reply-To or References header, without their angle brackets."""
    found = _MESSAGE_ID.findall(value)
    if not found and value.strip() and " " not in value.strip():
        found = [value.strip().strip("<>")]
    return list(dict.fromkeys(found))


def _addresses(message: Message, name: str, notices: list[str]) -> list[str]:
    value = _header(message, name, notices)
    if not value:
        return []
    out = []
    for display, address in getaddresses([value]):
        if not address and not display:
            continue
        out.append(f"{display} <{address}>" if display and address else address or display)
    return out[:200]


def _metadata(message: Message, date: datetime | None, notices: list[str]) -> dict:
    own = message_ids(_header(message, "message-id", notices))
    replied = message_ids(_header(message, "in-reply-to", notices))
    references = message_ids(_header(message, "references", notices))[-MAX_REFERENCES:]
    metadata: dict = {"from": ", ".join(_addresses(message, "from", notices))}
    for name in ("to", "cc"):
        if found := _addresses(message, name, notices):
            metadata[name] = found
    if date is not None:
        metadata["date"] = date.isoformat()
    if own:
        metadata["messageId"] = own[0]
    if replied:
        metadata["inReplyTo"] = replied[0]
    if references:
        metadata["references"] = references
    gmail = _header(message, "x-gm-thrid", notices)
    if gmail.isdigit():
        metadata["gmailThreadId"] = gmail
    if labels := _header(message, "x-gmail-labels", notices):
        metadata["labels"] = [label.strip() for label in labels.split(",") if label.strip()][:50]
    metadata["threadId"] = thread_id(metadata)
    return {key: value for key, value in metadata.items() if value not in ("", [], None)}


def thread_id(metadata: dict) -> str:
    """The thread a message belongs to: Gmail's own thread id, else the first message its References
    name (the thread's root), else the one it replies to, else its own id (a thread of one)."""
    if metadata.get("gmailThreadId"):
        return f"gmail:{metadata['gmailThreadId']}"
    for candidate in (*(metadata.get("references") or [])[:1], metadata.get("inReplyTo"), metadata.get("messageId")):
        if candidate:
            return candidate
    return ""


def _body(message: Message, notices: list[str]) -> tuple[str, set[int]]:
    """The readable body: the text/plain part, else the HTML as text. Also the ids of the parts used,
    so they are not taken for attachments."""
    plain, html = _body_parts(message)
    for part in (plain, html):
        if part is None:
            continue
        text = _part_text(part, notices)
        if part is html:
            text = html_text(text)
        text = text.replace("\r\n", "\n").replace("\r", "\n").replace("\x00", "").strip()
        if text:
            return text, {id(p) for p in (plain, html) if p is not None}
    if plain is not None or html is not None:
        notices.append(EMPTY_BODY)
    return "", {id(p) for p in (plain, html) if p is not None}


def _body_parts(message: Message) -> tuple[Message | None, Message | None]:
    if not isinstance(message, EmailMessage):
        return None, None
    try:
        plain = message.get_body(preferencelist=("plain",))
        html = message.get_body(preferencelist=("html",))
    except (KeyError, LookupError, ValueError, TypeError, IndexError):
        plain = html = None
    if plain is None and html is None and not message.is_multipart():
        kind = message.get_content_type()
        if kind == "text/html":
            html = message
        elif kind.startswith("text/") or message.get_content_maintype() not in (
            "image",
            "audio",
            "video",
            "application",
        ):
            plain = message
    return plain, html


def _part_text(part: Message, notices: list[str]) -> str:
    raw = part.get_payload(decode=True)
    if not isinstance(raw, bytes):
        payload = part.get_payload()
        return payload if isinstance(payload, str) else ""
    charset = part.get_content_charset()
    text, fallback = _decode_bytes(raw, charset)
    if fallback.startswith("nothing"):
        notices.append("the message's body is not text (binary data where its text should be), so it was left out")
    elif fallback and charset and fallback.startswith(charset):
        notices.append(f"a few bytes of the text are not valid {charset} and were replaced")
    elif fallback and charset:
        notices.append(
            f"the text says its charset is {charset!r}, which is not known or does not fit it; it was read as {fallback}"
        )
    return text


MAX_FORWARDED = 20


def _forwarded(message: Message):
    if not message.is_multipart():
        return
    found = 0
    for part in message.walk():
        if part.get_content_type() != "message/rfc822" or found >= MAX_FORWARDED:
            continue
        payload = part.get_payload()
        inner = payload[0] if isinstance(payload, list) and payload else None
        if isinstance(inner, Message):
            found += 1
            yield inner


def _attachments(message: Message, body: set[int], notices: list[str]):
    if not message.is_multipart():
        return
    for number, part in enumerate(message.walk(), start=1):
        if part.is_multipart() or id(part) in body:
            continue
        kind = part.get_content_type()
        name = _filename(part, notices)
        if (
            kind in MACHINERY_TYPES
            or kind == "message/rfc822"
            or (not name and kind.startswith(("text/", "multipart/")))
        ):
            continue  # a forwarded message is read into its parent's text; an unnamed text part is an alternative
        try:
            data = part.get_payload(decode=True)
        except (ValueError, TypeError, LookupError):
            data = None
        if not isinstance(data, bytes) or not data:
            continue
        yield Attachment(filename=name or f"attachment-{number}", content_type=kind, data=data)


def _filename(part: Message, notices: list[str]) -> str:
    try:
        name = part.get_filename() or ""
    except (LookupError, ValueError, TypeError, IndexError):
        name = ""
    if "=?" in name:
        name = _decode_words(name, "attachment's name", notices)
    return name.replace("/", "_").replace("\\", "_").replace("\x00", "").strip()[:255]


def trim_reply(text: str) -> tuple[str, str]:
    """The writer's own text, and what was left out ("" when nothing was): the quote of the message it
    answers when that comes below it (the attribution line, the quoted lines, Outlook's block of the
    original's headers, a forward's separator) and the signature below "-- ". Quotes between the
    writer's own lines stay: an answer given point by point reads only with them. When trimming would
    leave nothing, nothing is trimmed."""
    lines = text.split("\n")
    end = len(lines)
    signature = quote = False
    for number, line in enumerate(lines):
        if line.rstrip() == "--" and line.startswith("--") and number > 0:
            end, signature = number, True  # the delimiter "-- ", its space often lost on the way
            break
        if _ORIGINAL_SEPARATOR.match(line) or (
            _OUTLOOK_FROM.match(line) and any(_OUTLOOK_NEXT.match(n) for n in lines[number + 1 : number + 4])
        ):
            end, quote = number, True
            break
    quote = quote or any(line.lstrip().startswith(">") for line in lines[end:])
    kept = lines[:end]
    # A trailing quote: the quoted and blank lines at the end, with the attribution just above them.
    while kept and (not kept[-1].strip() or kept[-1].lstrip().startswith(">")):
        quote = quote or bool(kept[-1].strip())
        kept.pop()
    attribution = _attribution_at(kept)
    if attribution is not None:
        kept, quote = kept[:attribution], True
    while kept and (not kept[-1].strip() or _MOBILE_SIGNATURE.match(kept[-1])):
        signature = signature or bool(kept[-1].strip())
        kept.pop()
    result = "\n".join(kept).strip()
    if not result or not any(not line.lstrip().startswith(">") and line.strip() for line in kept):
        return text.strip(), ""
    if result == text.strip():
        return result, ""
    what = " and ".join(name for name, cut in (("the quoted message", quote), ("the signature", signature)) if cut)
    return result, what or "the quoted message"


def trim_notice(what: str) -> str:
    return f"{what} below the writer's text {'were' if ' and ' in what else 'was'} left out"


def _attribution_at(kept: list[str]) -> int | None:
    """Where the attribution line of a trailing quote begins (it may wrap onto two lines)."""
    for back in (1, 2):
        if len(kept) >= back:
            joined = " ".join(line.strip() for line in kept[-back:])
            if _ATTRIBUTION.match(joined):
                return len(kept) - back
    return None


def mail_fingerprint(mail: MailMessage) -> str:
    """A stable identity for a message without a Message-ID: its headers, body and attachments (spam
    sends one text with a different attachment each time)."""
    metadata, subject, text = mail.metadata, mail.subject, mail.text
    digest = hashlib.sha256()
    for value in (
        *sorted(f"{a.filename}:{hashlib.sha256(a.data).hexdigest()}" for a in mail.attachments),
        metadata.get("from", ""),
        ",".join(metadata.get("to", [])),
        ",".join(metadata.get("cc", [])),
        metadata.get("date", ""),
        subject or "",
        text,
    ):
        digest.update(value.encode("utf-8", "surrogatepass") + b"\x00")
    return digest.hexdigest()


def header_block(mail: MailMessage) -> str:
    """The lines a reader sees above the body (and search finds): who wrote to whom, and when. What
    a mail is about is read without them (without_mail_header: its vector, summary and auto tags)."""
    meta = mail.metadata
    lines = [f"From: {meta['from']}"] if meta.get("from") else []
    if meta.get("to"):
        lines.append("To: " + ", ".join(meta["to"]))
    if meta.get("cc"):
        lines.append("Cc: " + ", ".join(meta["cc"]))
    if mail.date is not None:
        lines.append("Date: " + mail.date.strftime("%Y-%m-%d %H:%M UTC"))
    return "\n".join(lines)


# The lines header_block writes at the top of a mail's memory, then a blank line.
_HEADER_BLOCK = re.compile(r"From: [^\n]*\n(?:(?:To|Cc|Date): [^\n]*\n)*\n")


def without_mail_header(text: str) -> str:
    """The text without the header lines a mail's memory opens with (header_block), when a body
    follows them."""
    header = _HEADER_BLOCK.match(text)
    return text[header.end() :] if header and text[header.end() :].strip() else text


def mail_text(mail: MailMessage) -> str:
    """The memory's content: the header lines, then the body."""
    head = header_block(mail)
    return f"{head}\n\n{mail.text}".strip() if mail.text else head


def parse(data: bytes, *, budget: InflateBudget, max_inflated: int) -> Parsed:
    mail = read_message(data)
    notices = list(mail.notices)
    if mail.attachments:
        names = ", ".join(a.filename for a in mail.attachments[:5])
        notices.append(
            f"its {len(mail.attachments)} attachment(s) ({names}) were not read here; import the .eml on the "
            "Export & import page to keep each one as a memory of its own"
        )
    if mail.trimmed:
        notices.append(trim_notice(mail.trimmed))
    metadata = {"mail": dict(mail.metadata)}
    return Parsed(text=mail_text(mail), title=mail.subject, notices=notices, metadata=metadata)


FORMAT = Format(
    extensions=frozenset({"eml"}),
    parse=parse,
    media_types={"eml": "message/rfc822"},
    sniff=looks_like_mail,
    name="mail (.eml)",
)

"""What the ChatGPT and Claude sources share: conversations.json read as a stream (one conversation in
memory at a time, each within a bound), the sniffing that tells the two apart by content (and names
what a file looks like when it is neither), the tally of what was left out, and one message as a record.
"""

from __future__ import annotations

import hashlib
import io
import re
from collections import Counter
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from datetime import UTC, datetime
from typing import Any, BinaryIO

import ijson

from portability.sources import reading
from portability.sources.items import ImportSourceError, Item, SessionRef, Source

CONVERSATIONS_FILE = "conversations.json"
HEAD_BYTES = 1024 * 1024  # enough to see the keys of a conversation before its messages
MAX_CONVERSATION_BYTES = reading.MAX_ENTRY_BYTES  # one conversation, as JSON text
TITLE_WORDS = 8
MAX_DEPTH = 64  # nesting of objects and lists; no export comes near it
_READ_CHUNK = 256 * 1024
_STARTS = ("start_map", "start_array")
_ENDS = ("end_map", "end_array")
_TARGET_DEPTH = {"": 0, "item": 1, "conversations.item": 2}


# --- Telling the formats apart ------------------------------------------------------------------


@dataclass(frozen=True)
class JsonShape:
    """A JSON file's first value, as far as its head shows it: `top` is "array" or "object" (or "" when
    it is not JSON), `keys` the keys of the first conversation-like object (the array's first item, or
    the object itself), `prefix` the ijson path its conversations stream from, `empty` an empty array."""

    top: str
    keys: frozenset[str]
    prefix: str
    empty: bool = False
    problem: str = ""  # why the head is not JSON at all


def json_shape(head: bytes) -> JsonShape:
    """The shape of a JSON head, read with the same parser as the import; a head cut short is normal.
    Numbers are read as floats: the C parser's conversion of a huge integer can crash the process."""
    state = _ShapeState()
    try:
        for event, value in ijson.basic_parse(io.BytesIO(head), use_float=True):
            if not state.top:
                if event not in _STARTS:
                    return JsonShape(top="", keys=frozenset(), prefix="", problem="it holds a single JSON value")
                state.top = "object" if event == "start_map" else "array"
            if state.step(event, value):
                break
    except ijson.JSONError as exc:
        # A head cut short is expected; JSON that breaks in the head is refused unless its start was
        # read already (the import then reports where it breaks).
        if "premature EOF" not in str(exc) and not (state.top_keys or state.item_keys):
            return JsonShape(top="", keys=frozenset(), prefix="", problem=_json_problem(exc))
    if not state.top:
        return JsonShape(top="", keys=frozenset(), prefix="", problem="it is empty")
    if state.top == "array":
        return JsonShape(top="array", keys=frozenset(state.item_keys), prefix="item", empty=state.empty)
    if "conversations" in state.top_keys and not {"mapping", "chat_messages"} & state.top_keys and state.item_keys:
        return JsonShape(top="object", keys=frozenset(state.item_keys), prefix="conversations.item")
    return JsonShape(top="object", keys=frozenset(state.top_keys), prefix="")


@dataclass
class _ShapeState:
    """Where json_shape is in the head: the open containers (no deeper than MAX_DEPTH, as a path of
    every key would cost memory by the square of the depth), and the keys it has seen."""

    top: str = ""
    stack: list[str] = field(default_factory=list)
    top_key: str | None = None
    top_keys: set[str] = field(default_factory=set)
    item_keys: set[str] = field(default_factory=set)
    seen_item: bool = False
    empty: bool = False

    def step(self, event: str, value) -> bool:
        """Take one event; True when the first conversation has been seen whole."""
        stack = self.stack
        if event == "map_key":
            if stack == ["map"]:
                self.top_keys.add(value)
                self.top_key = value
            elif stack == ["array", "map"] or (self.top_key == "conversations" and stack == ["map", "array", "map"]):
                self.item_keys.add(value)
            return False
        if self.top == "array" and len(stack) == 1 and event not in _ENDS:
            self.seen_item = True
        if event in _STARTS:
            if len(stack) >= MAX_DEPTH:
                return True
            stack.append("map" if event == "start_map" else "array")
        elif event in _ENDS:
            stack.pop()
            if not stack:
                self.empty = self.top == "array" and not self.seen_item
                return True
            if self.top == "array":
                return len(stack) == 1
            return self.top_key == "conversations" and len(stack) == 2 and bool(self.item_keys)
        return False


def _json_problem(exc: Exception) -> str:
    first = str(exc).strip().splitlines()[0] if str(exc).strip() else "not JSON"
    return f"it is not JSON ({first})"


def is_chatgpt(shape: JsonShape) -> bool:
    return "mapping" in shape.keys


def is_claude(shape: JsonShape) -> bool:
    return "chat_messages" in shape.keys


# Files that sit beside conversations.json in the two exports, or come from other assistants, by the
# keys of their first object: a person who picked the wrong file is told which one they picked.
_LOOKALIKES: list[tuple[Callable[[frozenset[str]], bool], str]] = [
    (lambda k: {"conversation", "responses"} <= k, "a Grok (xAI) export"),
    (lambda k: "email_address" in k or "verified_phone_number" in k, "the account file of an export (users.json)"),
    (lambda k: "prompt_template" in k or ("docs" in k and "is_private" in k), "Claude's projects.json"),
    (lambda k: "conversation_id" in k and "rating" in k, "ChatGPT's message_feedback.json"),
    (lambda k: "conversation_id" in k and "title" in k, "ChatGPT's shared_conversations.json"),
    (lambda k: {"header", "title", "time"} <= k, "a Google Takeout activity file (Gemini)"),
    (lambda k: "format" in k and "formatVersion" in k, "a Kybernesis export's manifest.json; import the whole zip"),
    (lambda k: {"role", "content"} <= k, "a list of chat messages (role and content), without their conversations"),
    (lambda k: "content" in k and ("contentHash" in k or "source" in k), "a Kybernesis memory record"),
]


def looks_like(head: bytes) -> str:
    """What a file that no reader takes looks like, for the message that refuses it."""
    stripped = head.lstrip()
    signatures = [
        (b"%PDF", "a PDF"),
        (b"PK\x03\x04", "a zip"),
        (b"\x89PNG", "a PNG image"),
        (b"\xff\xd8\xff", "a JPEG image"),
        (b"From ", "a mailbox (mbox)"),
        (b"{\\rtf", "an RTF document"),
        (b"MZ", "a Windows program"),
    ]
    for signature, name in signatures:
        if head.startswith(signature) or stripped.startswith(signature):
            return name
    lowered = stripped[:512].lower()
    if lowered.startswith((b"<!doctype html", b"<html")):
        return "an HTML page (ChatGPT's chat.html? import conversations.json or the whole zip)"
    if b"\x00" in head[:8192]:
        return "a binary file"
    shape = json_shape(head)
    if shape.top:
        if shape.empty:
            return "an empty JSON list (no conversations)"
        for test, name in _LOOKALIKES:
            if test(shape.keys):
                return name
        shown = ", ".join(sorted(shape.keys)[:8]) or "no keys"
        return f"JSON whose first object has {shown}"
    try:
        head.decode("utf-8")
    except UnicodeDecodeError as exc:
        if exc.start < len(head) - 4:  # a character cut at the end of the head is not a problem
            return "neither JSON nor UTF-8 text"
    return "plain text, not JSON"


# --- Streaming ----------------------------------------------------------------------------------


class _Metered:
    """A byte stream for ijson that counts what it hands over, so that one conversation bigger than
    MAX_CONVERSATION_BYTES stops the reading instead of filling memory."""

    def __init__(self, stream: BinaryIO, limit: int):
        self.stream, self.limit = stream, limit
        self.total = 0
        self.mark = 0  # where the current conversation began (roughly: ijson reads ahead)

    def read(self, size: int = -1) -> bytes:
        data = self.stream.read(_READ_CHUNK if size is None or size < 0 else size)
        self.total += len(data)
        if self.total - self.mark > self.limit + 2 * _READ_CHUNK:
            raise _TooLarge
        return data


class _TooLarge(Exception):
    pass


def stream_conversations(stream: BinaryIO, *, prefix: str, single: bool, what: str) -> Iterator[tuple[int, object]]:
    """(number, conversation) for each conversation of the file, numbered from 1. A file that breaks
    off or stops being JSON ends the stream with ImportSourceError, after every whole conversation
    before the break was given."""
    metered = _Metered(stream, MAX_CONVERSATION_BYTES)
    number = 0
    try:
        for value in _values(metered, prefix):
            number += 1
            metered.mark = metered.total
            yield number, value
            if single:
                return
    except _TooLarge:
        raise ImportSourceError(
            f"{what}: conversation {number + 1} is over {MAX_CONVERSATION_BYTES:,} bytes of JSON; the import "
            f"stopped there, after the {number:,} before it"
        ) from None
    except _TooDeep:
        raise ImportSourceError(
            f"{what}: conversation {number + 1} is nested more than {MAX_DEPTH} levels deep, which no export "
            f"is; the import stopped there, after the {number:,} before it"
        ) from None
    except ijson.JSONError as exc:
        if "premature EOF" in str(exc):
            raise ImportSourceError(
                f"{what} ends in the middle of conversation {number + 1} (cut short while downloading or "
                f"unzipping?); the {number:,} conversations before it were read"
            ) from None
        raise ImportSourceError(
            f"{what} stops being JSON near byte {metered.total:,}, in conversation {number + 1} "
            f"({_json_problem(exc).removeprefix('it is not JSON ').strip('()')}); the {number:,} before it were read"
        ) from None
    if number == 0 and not single:
        raise ImportSourceError(f"{what} holds no conversations")


class _TooDeep(Exception):
    pass


def _values(stream, prefix: str) -> Iterator[object]:
    """The values at `prefix` ("" the whole document, "item" each item of the top-level list,
    "conversations.item" each item of its "conversations" list), built one at a time from the parser's
    events, never deeper than MAX_DEPTH (ijson's own prefixes would cost memory by the square of it)."""
    target = _TARGET_DEPTH[prefix]
    depth = 0
    top_key = None
    builder: ijson.ObjectBuilder | None = None
    start_depth = 0
    for event, value in ijson.basic_parse(stream, use_float=True, buf_size=_READ_CHUNK):
        if builder is not None:
            builder.event(event, value)
            if event in _STARTS:
                depth += 1
                if depth > MAX_DEPTH:
                    raise _TooDeep
            elif event in _ENDS:
                depth -= 1
                if depth == start_depth:
                    yield builder.value
                    builder = None
            continue
        at_items = depth == target and (target != 2 or top_key == "conversations")
        if at_items and event not in _ENDS and event != "map_key":
            if event in _STARTS:
                builder = ijson.ObjectBuilder()
                builder.event(event, value)
                start_depth, depth = depth, depth + 1
            else:
                yield value  # a bare string or number where a conversation should be: the reader says so
            continue
        if event in _STARTS:
            depth += 1
        elif event in _ENDS:
            depth -= 1
        elif event == "map_key" and depth == 1:
            top_key = value


# --- What was left out --------------------------------------------------------------------------


@dataclass
class Tally:
    """Counts for the report's notices, kept while a source is read."""

    assistant: str  # "ChatGPT" or "Claude"
    conversations: int = 0
    messages: int = 0
    counts: Counter = field(default_factory=Counter)

    def notices(self) -> list[str]:
        c = self.counts
        out = [
            f"{self.assistant} export: {plural(self.conversations, 'conversation')} and "
            f"{plural(self.messages, 'message')} read."
        ]
        if c["branch"]:
            out.append(
                f"{plural(c['branch'], 'message')} on branches that were not current when the export was made (edited "
                f"messages and regenerated answers) were left out, in {plural(c['branched'], 'conversation')}; each "
                "conversation keeps the branch that was showing."
            )
        if c["noise"]:
            out.append(
                f"{plural(c['noise'], 'tool, system, reasoning or hidden message')} left out (what the assistant "
                "ran or thought, not what it said)."
            )
        if c["empty"]:
            out.append(f"{plural(c['empty'], 'message')} with no text (empty, or only an image or a file) left out.")
        if c["images"]:
            out.append(
                f"{plural(c['images'], 'image or file', 'images or files')} attached to messages not imported; the messages' text was."
            )
        if c["no_current"]:
            out.append(
                f"{plural(c['no_current'], 'conversation')} not saying which branch was current; their latest branch was kept."
            )
        if c["loop"]:
            out.append(
                f"{plural(c['loop'], 'conversation')} with a loop in their message tree; the messages before the loop "
                "were kept."
            )
        if c["no_id"]:
            out.append(
                f"{plural(c['no_id'], 'conversation')} without an id; they are recognised by their title and start time "
                "when imported again."
            )
        return out


def plural(count: int, word: str, words: str = "") -> str:
    return f"{count:,} {word if count == 1 else words or word + 's'}"


# --- Records --------------------------------------------------------------------------------------


def epoch_time(value) -> datetime | None:
    """ChatGPT's times: seconds since 1970 as a number; anything else (or out of range) is unknown."""
    if isinstance(value, bool) or not isinstance(value, (int, float)):
        return None
    try:
        return datetime.fromtimestamp(value, tz=UTC)
    except (OverflowError, OSError, ValueError):
        return None


def iso_time(value) -> datetime | None:
    """Claude's times: ISO 8601 text; anything else is unknown."""
    if not isinstance(value, str):
        return None
    try:
        parsed = datetime.fromisoformat(value.strip().replace("Z", "+00:00"))
    except ValueError:
        return None
    return parsed if parsed.tzinfo else parsed.replace(tzinfo=UTC)


def clean_id(value) -> str:
    """A source's id as text for a key, or "" when it has none usable."""
    if isinstance(value, float) and value.is_integer() and abs(value) < 2**53:
        value = int(value)  # numbers are read as floats (see json_shape)
    if isinstance(value, bool) or not isinstance(value, (str, int)):
        return ""
    text = str(value).strip()
    return text[:120] if text and not any(ch in text for ch in "\x00\r\n") else ""


def fallback_id(title: str, created: datetime | None) -> str:
    """An id for a conversation its export gives none: the same export gives the same one."""
    basis = f"{created.isoformat() if created else ''}\x1f{title}"
    return "t" + hashlib.sha256(basis.encode("utf-8", "surrogatepass")).hexdigest()[:24]


def conversation_title(value) -> str:
    title = value.strip() if isinstance(value, str) else ""
    return " ".join(title.split())[:200] or "Untitled conversation"


_FENCE = re.compile(r"^\s*(```|~~~)")


def message_title(text: str) -> str:
    """A chat message's title as chat gives one: its first words, from its first line of prose (an
    answer that opens with a code block is titled by the words after it, when there are any)."""
    lines = [line for line in text.splitlines() if line.strip()]
    prose, fenced = [], False
    for line in lines:
        if _FENCE.match(line):
            fenced = not fenced
            continue
        if not fenced:
            prose.append(line)
    words = " ".join(prose or lines).split()
    title = " ".join(words[:TITLE_WORDS]).lstrip("#>*-• ").strip()
    if len(title) > 80:
        title = title[:80].rsplit(" ", 1)[0] or title[:80]
    return title + ("…" if len(words) > TITLE_WORDS else "")


@dataclass
class Kept:
    """A message the reader keeps, before its conversation's session is known."""

    message_id: str
    role: str
    text: str
    when: datetime | None
    extra: dict = field(default_factory=dict)
    notices: list[str] = field(default_factory=list)


@dataclass
class Walked:
    """A conversation's messages along the branch that was showing, each with the name an error about
    it is given and the id it takes when it has none of its own, and how the branch was found."""

    messages: list[tuple[str, str, object]]
    how: str
    other_branches: int


@dataclass(frozen=True)
class ExportFormat:
    """What differs between assistants' exports: where a conversation keeps its title, ids, times and
    messages, how its current branch is walked, and which of its messages are kept."""

    assistant: str
    kind: str
    title_keys: tuple[str, ...]
    id_keys: tuple[str, ...]
    messages_key: str
    messages_type: type
    time: Callable[[object], datetime | None]
    created_key: str
    updated_key: str
    walk: Callable[[dict, Any], Walked]
    keep: Callable[[dict, str, Tally], Kept | None]


def open_export(
    export: ExportFormat, open_stream: Callable[[], BinaryIO], *, prefix: str, single: bool, what: str
) -> Source:
    """The export's conversations streamed from `open_stream()` (the file, or its entry in the zip)."""
    tally = Tally(export.assistant)

    def items() -> Iterator[Item]:
        with open_stream() as stream:
            for number, conversation in stream_conversations(stream, prefix=prefix, single=single, what=what):
                tally.conversations += 1
                yield from conversation_items(export, conversation, number, tally)

    return Source(kind=export.kind, items=items(), notices=tally.notices)


def conversation_items(export: ExportFormat, conversation, number: int, tally: Tally) -> Iterator[Item]:
    """One conversation's kept messages as items, and an error item for each part that is unreadable."""
    assistant = export.assistant
    if not isinstance(conversation, dict):
        yield Item(f"{assistant} conversation {number}", error="is not a JSON object; it was skipped")
        return
    title = conversation_title(next((v for k in export.title_keys if (v := conversation.get(k))), None))
    label = label_of(assistant, number, title)
    messages = conversation.get(export.messages_key)
    if not isinstance(messages, export.messages_type):
        shape = "a JSON object" if export.messages_type is dict else "a list"
        yield Item(label, error=f"its messages ({export.messages_key}) are missing or not {shape}; it was skipped")
        return
    created = export.time(conversation.get(export.created_key))
    conversation_id = next((i for k in export.id_keys if (i := clean_id(conversation.get(k)))), "")
    if not conversation_id:
        tally.counts["no_id"] += 1
        conversation_id = fallback_id(title, created)
    walked = export.walk(conversation, messages)
    count_branch(tally, walked.how, walked.other_branches)
    kept: list[Kept] = []
    for name, fallback, message in walked.messages:
        if not isinstance(message, dict):
            yield Item(f"{label} message {name}", error="the message is not a JSON object; skipped")
            continue
        if (one := export.keep(message, fallback, tally)) is not None:
            kept.append(one)
    yield from conversation_messages(
        assistant=assistant,
        label=label,
        conversation_id=conversation_id,
        title=title,
        created=created,
        updated=export.time(conversation.get(export.updated_key)),
        kept=kept,
        branched=bool(walked.other_branches),
        tally=tally,
    )


def count_branch(tally: Tally, how: str, other_branches: int) -> None:
    """The tally of how a conversation's branch was chosen, and of the messages on the others."""
    if how in ("loop", "latest"):
        tally.counts["loop" if how == "loop" else "no_current"] += 1
    if other_branches:
        tally.counts["branch"] += other_branches
        tally.counts["branched"] += 1


def conversation_messages(
    *,
    assistant: str,
    label: str,
    conversation_id: str,
    title: str,
    created: datetime | None,
    updated: datetime | None,
    kept: list[Kept],
    branched: bool,
    tally: Tally,
) -> Iterator[Item]:
    """The kept messages of one conversation as items of its session. A message without a time (some
    system-made ones) takes the time of the one before it, or the conversation's."""
    if not kept:
        return
    times = [k.when for k in kept if k.when is not None]
    start = created or (times[0] if times else datetime.now(UTC))
    end = updated or (max(times) if times else start)
    session = SessionRef(
        key=f"{assistant.lower()}:{conversation_id}", title=title, created_at=start, updated_at=max(end, start)
    )
    previous = start
    for index, k in enumerate(kept):
        previous = k.when or previous
        tally.messages += 1
        yield message_item(
            label=f"{label} message {k.message_id}",
            assistant=assistant,
            session=session,
            conversation_id=conversation_id,
            message_id=k.message_id,
            role=k.role,
            text=k.text,
            created=previous,
            index=index,
            extra={**k.extra, **({"branch": "current"} if branched else {})},
            notices=k.notices,
        )


def attached_notice(attached: int) -> list[str]:
    return (
        [f"{plural(attached, 'attached image or file', 'attached images or files')} not imported."] if attached else []
    )


def message_item(
    *,
    label: str,
    assistant: str,
    session: SessionRef,
    conversation_id: str,
    message_id: str,
    role: str,
    text: str,
    created: datetime,
    index: int,
    extra: dict | None = None,
    notices: list[str] | None = None,
) -> Item:
    """One kept message as an item: a chat memory in the export's record format, keyed by its ids."""
    metadata = {
        "role": role,
        "sessionTitle": session.title,
        "importedFrom": assistant.lower(),
        "conversationId": conversation_id,
        "messageId": message_id,
        "messageIndex": index,
        "timestamp": created.isoformat(),
        **(extra or {}),
    }
    record = {
        "title": message_title(text),
        "content": text,
        "source": "chat",
        "metadata": metadata,
        "notices": notices or [],
        "createdAt": created.isoformat(),
        "updatedAt": created.isoformat(),
    }
    return Item(label, record=record, key=f"{assistant.lower()}:{conversation_id}:{message_id}", session=session)


def label_of(assistant: str, number: int, title: str) -> str:
    short = title if len(title) <= 60 else title[:60].rsplit(" ", 1)[0] + "…"
    return f"{assistant} conversation {number} “{short}”"

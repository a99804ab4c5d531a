"""Chat: each message a person sends is stored as a memory with source=chat.

Whether a message asks something is decided where every chat memory is stored, whatever the door
(memories.services.kinds): search and the chat reply rank a question after the notes that answer it.
"""

from __future__ import annotations

from django.conf import settings
from django.db import transaction
from django.db.models import F
from django.utils import timezone

from core.text import strip_display_controls, text_problem
from memories.models import ChatSession, Memory, Source
from memories.services.memory import memory_create
from memories.services.validation import MemoryInputError, MemoryTooLargeError, clean_content

CHAT_TITLE_WORDS = 8


def _first_words(text: str, *, words: int = CHAT_TITLE_WORDS, max_chars: int = 80) -> str:
    parts = strip_display_controls(text).split()
    title = " ".join(parts[:words])
    if len(title) > max_chars:
        title = title[:max_chars].rsplit(" ", 1)[0] or title[:max_chars]
    return title + ("…" if len(parts) > words or len(" ".join(parts)) > len(title) else "")


def chat_message_send(*, owner, content, session: ChatSession | None = None) -> tuple[ChatSession, Memory]:
    """Store one chat message as a memory (source=chat), starting a session when none is given."""
    if not isinstance(content, str):
        raise MemoryInputError("the message must be text", field="content")
    if not content.strip():
        raise MemoryInputError("the message is empty", field="content")
    if problem := text_problem(content):
        raise MemoryInputError(f"the message {problem}", field="content")
    limit = settings.KYBERNESIS_MAX_CHAT_MESSAGE_CHARS
    if len(content) > limit:
        raise MemoryTooLargeError(
            f"the message is {len(content):,} characters; the limit is {limit:,}", field="content"
        )
    # Normalised here already, so the session's title reads the stored text.
    content = clean_content(content, index=None)
    with transaction.atomic():
        if session is None:
            session = ChatSession.objects.create(owner=owner, title=_first_words(content))
        session = ChatSession.objects.select_for_update().get(pk=session.pk, owner=owner)
        now = timezone.now()
        metadata = {
            "userId": owner.pk,
            "sessionId": session.pk,
            "messageIndex": session.message_count,
            "timestamp": now.isoformat(),
        }
        memory = memory_create(
            owner=owner,
            title=_first_words(content),
            content=content,
            source=Source.CHAT,
            metadata=metadata,
        )
        ChatSession.objects.filter(pk=session.pk).update(message_count=F("message_count") + 1, updated_at=now)
        session.refresh_from_db()
    return session, memory

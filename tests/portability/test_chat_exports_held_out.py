"""Exports nobody on the team wrote: polylogue's ChatGPT and Claude fixtures (MIT, committed under
tests/data/chat-exports) and, where the machine has it, a real Claude export from yaleman/anthropic-data's
tests (no licence, so it stays outside the repository in /work/corpus/chatexports). Each imports with no
message lost or doubled, roles, times and threads kept, and a second import adds nothing.

The expected messages come from a plain reading of each file with the standard json module, written
for this test: the branch to the current node, user and assistant turns that a person saw."""

from __future__ import annotations

import json
from datetime import UTC, datetime
from pathlib import Path

import pytest

from memories.models import ChatSession, Memory
from portability import services as portability

pytestmark = pytest.mark.django_db

DATA = Path(__file__).resolve().parents[1] / "data" / "chat-exports"
CORPUS = Path("/work/corpus/chatexports")
FILES = [
    DATA / "polylogue-chatgpt-native-conversation-v1.json",
    DATA / "polylogue-claude-ai-export.json",
    CORPUS / "claude-yaleman-conversations.json",
]


def expected_chatgpt(conversation: dict) -> list[tuple[str, str, datetime]]:
    mapping, node, path = conversation["mapping"], conversation["current_node"], []
    while node:
        path.append(mapping[node])
        node = mapping[node].get("parent")
    out = []
    for entry in reversed(path):
        message = entry.get("message")
        if not message or message["author"]["role"] not in ("user", "assistant"):
            continue
        content = message["content"]
        hidden = message.get("metadata", {}).get("is_visually_hidden_from_conversation")
        if (
            hidden
            or message.get("recipient", "all") != "all"
            or content["content_type"] not in ("text", "multimodal_text")
        ):
            continue
        text = "\n\n".join(p for p in content.get("parts", []) if isinstance(p, str) and p.strip())
        if text:
            out.append((message["author"]["role"], text, datetime.fromtimestamp(message["create_time"], tz=UTC)))
    return out


def expected_claude(conversation: dict) -> list[tuple[str, str, datetime]]:
    out = []
    for message in conversation["chat_messages"]:
        blocks = message.get("content") or []
        text = "\n\n".join(b["text"] for b in blocks if b.get("type") == "text") if blocks else message["text"]
        role = {"human": "user", "assistant": "assistant"}[message["sender"]]
        when = datetime.fromisoformat(message["created_at"].replace("Z", "+00:00"))
        out.append((role, text, when))
    return out


def conversations_of(path: Path) -> list[dict]:
    value = json.loads(path.read_text(encoding="utf-8"))
    return value if isinstance(value, list) else [value]


@pytest.mark.parametrize("path", FILES, ids=lambda p: p.name)
def test_an_export_made_by_someone_else_imports_whole_once(user, path):
    if not path.exists():
        pytest.skip(f"{path} is not on this machine (kept outside the repository: it has no licence)")
    conversations = conversations_of(path)
    chatgpt = "mapping" in conversations[0]
    expected = [m for c in conversations for m in (expected_chatgpt(c) if chatgpt else expected_claude(c))]

    report = portability.import_path(owner=user, path=path)
    assert (report.error, report.failed, report.created) == ("", 0, len(expected))
    stored = list(Memory.objects.filter(owner=user).order_by("created_at", "id"))
    assert [(m.metadata["role"], m.content, m.created_at) for m in stored] == expected
    assert len({m.import_key for m in stored}) == len(stored)  # none doubled

    sessions = list(ChatSession.objects.filter(owner=user))
    assert len(sessions) == len(conversations)
    for session in sessions:
        messages = [m for m in stored if m.metadata["sessionId"] == session.pk]
        assert session.message_count == len(messages)
        assert [m.metadata["messageIndex"] for m in messages] == list(range(len(messages)))
        assert {m.metadata["sessionTitle"] for m in messages} == {session.title}

    again = portability.import_path(owner=user, path=path)
    assert (again.created, again.duplicates, again.failed) == (0, len(expected), 0)
    assert ChatSession.objects.filter(owner=user).count() == len(conversations)

"""ChatGPT and Claude exports: each conversation a chat session, each message a chat memory with its role,
time and ids; the branch that was showing kept; tool, system and reasoning left out; idempotent by the
export's own ids."""

from __future__ import annotations

from datetime import UTC, datetime

import pytest

from memories.models import ChatSession, Memory
from portability import services as portability
from tests.portability.chat_exports import (
    T0,
    chatgpt_conversation,
    chatgpt_message,
    chatgpt_zip,
    claude_conversation,
    claude_zip,
    write_json,
)

pytestmark = pytest.mark.django_db


def chat_memories(user):
    return list(Memory.objects.filter(owner=user, source="chat").order_by("created_at", "id"))


def at(seconds: float) -> datetime:
    return datetime.fromtimestamp(T0 + seconds, tz=UTC)


PASTA = chatgpt_conversation(
    "conv-pasta",
    "Carbonara without cream",
    [
        ("u1", "user", "How do I make carbonara without cream?", 10),
        ("a1", "assistant", "Whisk yolks with pecorino, then toss with hot pasta off the heat.", 20),
        ("u2", "user", "ok", 30),
        ("a2", "assistant", "Add a splash of pasta water if it gets thick.", 40),
        ("u3", "user", "ok", 50),
    ],
)


def test_each_conversation_becomes_a_session_and_each_message_a_chat_memory(user, tmp_path):
    report = portability.import_path(owner=user, path=write_json(tmp_path / "conversations.json", [PASTA]))
    assert (report.kind, report.created, report.failed, report.error) == ("chatgpt", 5, 0, "")
    session = ChatSession.objects.get(owner=user)
    assert (session.title, session.message_count, session.import_key) == (
        "Carbonara without cream",
        5,
        "chatgpt:conv-pasta",
    )
    assert session.created_at == at(0)
    messages = chat_memories(user)
    assert [m.metadata["role"] for m in messages] == ["user", "assistant", "user", "assistant", "user"]
    assert [m.created_at for m in messages] == [at(10), at(20), at(30), at(40), at(50)]
    first = messages[0].metadata
    assert first["sessionId"] == session.pk and first["userId"] == user.pk
    assert first["sessionTitle"] == "Carbonara without cream" and first["importedFrom"] == "chatgpt"
    assert (first["conversationId"], first["messageId"], first["messageIndex"]) == ("conv-pasta", "u1", 0)
    assert messages[0].import_key == "chatgpt:conv-pasta:u1"
    assert messages[0].title == "How do I make carbonara without cream?"
    # Two "ok" messages are two messages: the export's ids decide, not the text.
    assert [m.content for m in messages].count("ok") == 2


def test_importing_the_same_export_again_adds_nothing_and_a_later_one_only_what_is_new(user, tmp_path):
    path = write_json(tmp_path / "conversations.json", [PASTA])
    portability.import_path(owner=user, path=path)
    again = portability.import_path(owner=user, path=path)
    assert (again.created, again.duplicates) == (0, 5)

    later = chatgpt_conversation(
        "conv-pasta",
        "Carbonara, renamed",
        [
            ("u1", "user", "How do I make carbonara without cream?", 10),
            ("a1", "assistant", "Whisk yolks with pecorino, then toss with hot pasta off the heat.", 20),
            ("u2", "user", "ok", 30),
            ("a2", "assistant", "Add a splash of pasta water if it gets thick.", 40),
            ("u3", "user", "ok", 50),
            ("u4", "user", "And guanciale or pancetta?", 60),
        ],
    )
    other = chatgpt_conversation("conv-bike", "Fixing a puncture", [("b1", "user", "ok", 5)], at=T0 + 86400)
    report = portability.import_path(owner=user, path=write_json(tmp_path / "later.json", [later, other]))
    assert (report.created, report.duplicates) == (2, 5)
    sessions = {s.import_key: s for s in ChatSession.objects.filter(owner=user)}
    assert set(sessions) == {"chatgpt:conv-pasta", "chatgpt:conv-bike"}
    assert sessions["chatgpt:conv-pasta"].message_count == 6
    assert sessions["chatgpt:conv-pasta"].title == "Carbonara, renamed"  # the newer export's title
    assert Memory.objects.filter(owner=user, content="ok").count() == 3


def test_an_edited_conversation_keeps_the_branch_that_was_showing_and_says_so(user, tmp_path):
    edited = chatgpt_conversation(
        "conv-edit",
        "Trip to Porto",
        [
            ("q1", "user", "Three days in Porto: what should I see?", 10),
            ("r1", "assistant", "Ribeira, the Livraria Lello and a port cellar in Gaia.", 20),
            ("q2", "user", "Make it two days", 30),
            ("r2-old", "assistant", "Day one Ribeira; day two Gaia.", 40),
            ("r2-new", "assistant", "Day one: Ribeira and the Clérigos tower. Day two: Gaia's cellars.", 50, "q2"),
        ],
        current="r2-new",
    )
    report = portability.import_path(owner=user, path=write_json(tmp_path / "c.json", [edited]))
    contents = [m.content for m in chat_memories(user)]
    assert contents[-1].startswith("Day one: Ribeira and the Clérigos") and "Day two: Gaia." not in contents
    assert report.created == 4
    assert all(m.metadata["branch"] == "current" for m in chat_memories(user))
    assert any("1 message on branches that were not current" in n for n in report.notices)


def test_tool_calls_reasoning_and_hidden_messages_are_left_out_and_counted(user, tmp_path):
    conversation = chatgpt_conversation(
        "conv-tools",
        "Weather",
        [
            ("ctx", "user", {"content_type": "user_editable_context", "user_profile": "I live in Oslo."}, 1),
            ("q", "user", "Will it rain in Oslo tomorrow?", 10),
            ("think", "assistant", {"content_type": "thoughts", "thoughts": [{"content": "check"}]}, 11),
            ("call", "assistant", "search('oslo weather')", 12),
            ("result", "tool", {"content_type": "tether_browsing_display", "result": "rain 80%"}, 13),
            ("a", "assistant", "Probably: the forecast gives rain an 80% chance.", 14),
        ],
    )
    conversation["mapping"]["call"]["message"]["recipient"] = "browser"
    report = portability.import_path(owner=user, path=write_json(tmp_path / "c.json", [conversation]))
    assert [m.content for m in chat_memories(user)] == [
        "Will it rain in Oslo tomorrow?",
        "Probably: the forecast gives rain an 80% chance.",
    ]
    # the hidden system node, the custom instructions, the reasoning, the call and the tool's result
    assert any(n.startswith("5 tool, system, reasoning or hidden messages left out") for n in report.notices)


def test_code_blocks_and_citations_stay_readable(user, tmp_path):
    answer = chatgpt_message(
        "a",
        "assistant",
        "Use `sorted`:\n\n```python\nsorted(xs, key=len)\n```\nIt is stable \ue200cite\ue202turn0search1\ue201.",
        at=T0 + 20,
        metadata={
            "content_references": [
                {
                    "matched_text": "\ue200cite\ue202turn0search1\ue201",
                    "type": "grouped_webpages",
                    "items": [{"title": "Sorting HOW TO", "url": "https://docs.python.org/3/howto/sorting.html"}],
                }
            ]
        },
    )
    old_style = chatgpt_message(
        "b",
        "assistant",
        "Timsort is adaptive【3†source】.",
        at=T0 + 30,
        metadata={
            "citations": [
                {
                    "start_ix": 19,
                    "end_ix": 29,
                    "metadata": {"title": "Timsort", "url": "https://en.wikipedia.org/wiki/Timsort"},
                }
            ]
        },
    )
    conversation = chatgpt_conversation("conv-code", "Sorting", [("q", "user", "How do I sort by length?", 10)])
    for message, parent in ((answer, "q"), (old_style, "a")):
        conversation["mapping"][message["id"]] = {
            "id": message["id"],
            "message": message,
            "parent": parent,
            "children": [],
        }
        conversation["mapping"][parent]["children"].append(message["id"])
    conversation["current_node"] = "b"
    portability.import_path(owner=user, path=write_json(tmp_path / "c.json", [conversation]))
    texts = [m.content for m in chat_memories(user)]
    assert "```python\nsorted(xs, key=len)\n```" in texts[1]
    assert "It is stable ([Sorting HOW TO](https://docs.python.org/3/howto/sorting.html))." in texts[1]
    assert texts[2] == "Timsort is adaptive ([Timsort](https://en.wikipedia.org/wiki/Timsort))."
    assert not any(ch in t for t in texts for ch in "\ue200\ue201\ue202【】")
    assert chat_memories(user)[1].title.startswith("Use `sorted`: It is stable")  # the prose, not the fence


def test_the_whole_chatgpt_zip_is_found_by_its_content_whatever_its_name(user, tmp_path):
    path = chatgpt_zip(tmp_path / "download.bin", [PASTA], folder="export-2025-01-01/")
    report = portability.import_path(owner=user, path=path)
    assert (report.kind, report.created, report.error) == ("chatgpt", 5, "")


def test_a_claude_export_keeps_what_was_said_and_leaves_out_the_thinking(user, tmp_path):
    conversation = claude_conversation(
        "c-1",
        "Dog saliva",
        [
            ("m1", "human", "Is dog saliva antibacterial?", 1),
            (
                "m2",
                "assistant",
                [
                    {"type": "thinking", "thinking": "The user asks about lysozyme."},
                    {
                        "type": "text",
                        "text": "A little: it holds lysozyme, but also many bacteria.",
                        "citations": [{"url": "https://example.org/saliva", "title": "Saliva study"}],
                    },
                    {"type": "tool_use", "name": "web_search", "input": {"q": "dog saliva"}},
                ],
                2,
            ),
        ],
    )
    conversation["chat_messages"][0]["attachments"] = [
        {"file_name": "notes.txt", "file_type": "text/plain", "extracted_content": "My vet said no."}
    ]
    report = portability.import_path(owner=user, path=claude_zip(tmp_path / "data.zip", [conversation]))
    assert (report.kind, report.created) == ("claude", 2)
    user_message, reply = chat_memories(user)
    assert user_message.content == "Is dog saliva antibacterial?\n\nAttached notes.txt:\n\nMy vet said no."
    assert user_message.metadata["attachments"] == ["notes.txt"] and user_message.metadata["role"] == "user"
    assert (
        reply.content
        == "A little: it holds lysozyme, but also many bacteria.\n\nSources: [Saliva study](https://example.org/saliva)"
    )
    assert "The user asks" not in reply.content and "web_search" not in reply.content
    assert reply.created_at == datetime(2025, 7, 6, 10, 2, tzinfo=UTC)
    session = ChatSession.objects.get(owner=user)
    assert (session.title, session.import_key, session.message_count) == ("Dog saliva", "claude:c-1", 2)


def test_a_claude_conversation_with_edits_keeps_the_current_leafs_branch(user, tmp_path):
    conversation = claude_conversation(
        "c-2",
        "Edited",
        [
            ("m1", "human", "Name a prime", 1, "00000000-0000-4000-8000-000000000000"),
            ("m2", "assistant", "Nine.", 2, "m1"),
            ("m3", "human", "Name a prime number", 3, "00000000-0000-4000-8000-000000000000"),
            ("m4", "assistant", "Seven.", 4, "m3"),
        ],
        leaf="m4",
    )
    report = portability.import_path(owner=user, path=write_json(tmp_path / "conversations.json", [conversation]))
    assert [m.content for m in chat_memories(user)] == ["Name a prime number", "Seven."]
    assert any("2 messages on branches" in n for n in report.notices)


def test_a_second_import_of_a_claude_export_adds_nothing(user, tmp_path):
    conversation = claude_conversation("c-3", "Twice", [("m1", "human", "ok", 1), ("m2", "assistant", "ok", 2)])
    path = write_json(tmp_path / "conversations.json", [conversation])
    first = portability.import_path(owner=user, path=path)
    second = portability.import_path(owner=user, path=path)
    assert (first.created, second.created, second.duplicates) == (2, 0, 2)
    assert ChatSession.objects.get(owner=user).message_count == 2


def test_imported_chats_survive_a_kybernesis_export_and_a_later_assistant_import_adds_nothing(
    user, other_user, tmp_path
):
    portability.import_path(owner=user, path=write_json(tmp_path / "conversations.json", [PASTA]))
    zipped = tmp_path / "kybernesis.zip"
    portability.export_to_file(owner=user, path=zipped)
    moved = portability.import_path(owner=other_user, path=zipped)
    assert moved.created == 5
    assert ChatSession.objects.get(owner=other_user).import_key == "chatgpt:conv-pasta"
    again = portability.import_path(owner=other_user, path=tmp_path / "conversations.json")
    assert (again.created, again.duplicates) == (0, 5)
    twice = portability.import_path(owner=other_user, path=zipped)  # the keys kept in the export count too
    assert (twice.created, twice.duplicates) == (0, 5)


def test_the_import_command_prints_the_notices_and_the_report(user, tmp_path, capsys):
    import json

    from django.core.management import call_command

    path = write_json(tmp_path / "conversations.json", [PASTA])
    call_command("import_memories", str(path), "--user", user.username)
    out, err = capsys.readouterr()
    assert json.loads(out.strip().splitlines()[-1])["created"] == 5
    assert "ChatGPT export: 1 conversation and 5 messages read." in err


def test_imported_messages_that_ask_something_are_questions_by_the_chat_rule(user, tmp_path):
    """The memory service marks them (memories.services.kinds), as for a message typed on the chat page."""
    portability.import_path(owner=user, path=write_json(tmp_path / "conversations.json", [PASTA]))
    kinds = {(m.metadata["messageId"], m.metadata.get("kind")) for m in chat_memories(user)}
    assert kinds == {("u1", "question"), ("a1", None), ("u2", None), ("a2", None), ("u3", None)}

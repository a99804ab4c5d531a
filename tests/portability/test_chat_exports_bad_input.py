"""ChatGPT and Claude exports that are broken, odd or not what they claim: each is reported by name and
reason, what can be read is read, nothing is half-written and the process never falls over."""

from __future__ import annotations

import io
import json
import tracemalloc
import zipfile

import pytest

from memories.models import ChatSession, Memory
from portability import services as portability
from portability.sources import ImportSourceError, open_source
from tests.portability.chat_exports import T0, chatgpt_conversation, claude_conversation, write_json

pytestmark = pytest.mark.django_db


def contents(user):
    return list(Memory.objects.filter(owner=user).order_by("created_at", "id").values_list("content", flat=True))


def errors_of(report) -> dict[str, str]:
    return {e["item"]: e["error"] for e in report.errors}


SIMPLE = chatgpt_conversation(
    "conv-ok", "Fine", [("u", "user", "What is a sourdough starter?", 1), ("a", "assistant", "Flour and water.", 2)]
)


def test_a_cycle_in_the_message_tree_keeps_the_messages_up_to_it_and_says_so(user, tmp_path):
    looped = chatgpt_conversation(
        "conv-loop", "Loop", [("u", "user", "First question here", 1), ("a", "assistant", "An answer.", 2)]
    )
    looped["mapping"]["conv-loop-sys"]["parent"] = "a"  # the root's child points back down to the answer
    looped["mapping"].pop("conv-loop-root")
    report = portability.import_path(owner=user, path=write_json(tmp_path / "c.json", [looped, SIMPLE]))
    assert report.error == "" and report.created == 4
    looped_session = ChatSession.objects.get(owner=user, import_key="chatgpt:conv-loop")
    assert [m.content for m in Memory.objects.filter(metadata__sessionId=looped_session.pk).order_by("created_at")] == [
        "First question here",
        "An answer.",
    ]
    assert any("1 conversation with a loop in their message tree" in n for n in report.notices)


def test_a_cycle_with_no_current_node_ends_where_it_closes(user, tmp_path):
    looped = chatgpt_conversation("conv-loop2", "Loop", [("u", "user", "Hello there", 1), ("a", "assistant", "Hi.", 2)])
    looped["current_node"] = None
    looped["mapping"]["a"]["children"] = ["u"]  # the answer's child is the question again
    report = portability.import_path(owner=user, path=write_json(tmp_path / "c.json", [looped]))
    assert contents(user) == ["Hello there", "Hi."] and report.error == ""


def test_messages_with_no_content_or_only_an_image_are_left_out_and_counted(user, tmp_path):
    conversation = chatgpt_conversation(
        "conv-img",
        "Pictures",
        [
            ("empty", "user", {"content_type": "text", "parts": [""]}, 1),
            ("none", "user", {"content_type": "text"}, 2),
            (
                "image",
                "user",
                {
                    "content_type": "multimodal_text",
                    "parts": [{"content_type": "image_asset_pointer", "size_bytes": 9}],
                },
                3,
            ),
            (
                "both",
                "user",
                {
                    "content_type": "multimodal_text",
                    "parts": [{"content_type": "image_asset_pointer"}, "What bird is this?"],
                },
                4,
            ),
        ],
    )
    conversation["mapping"]["none"]["message"]["content"] = None
    report = portability.import_path(owner=user, path=write_json(tmp_path / "c.json", [conversation]))
    memory = Memory.objects.get(owner=user)
    assert memory.content == "What bird is this?"
    assert memory.notices == ["1 attached image or file not imported."]
    assert report.created == 1 and report.failed == 0
    assert any(n.startswith("3 messages with no text") for n in report.notices)
    assert any(n.startswith("2 images or files attached") for n in report.notices)


@pytest.mark.parametrize(
    "content, looks_like",
    [
        (b"%PDF-1.7\n%\xe2\xe3\n1 0 obj", "a PDF"),
        (
            json.dumps({"conversations": [{"conversation": {"id": "x"}, "responses": []}]}).encode(),
            "a Grok (xAI) export",
        ),
        (json.dumps([{"uuid": "u", "full_name": "Me", "email_address": "me@x.org"}]).encode(), "users.json"),
        (json.dumps([{"id": "s", "conversation_id": "c", "title": "t"}]).encode(), "shared_conversations.json"),
        (json.dumps([{"role": "user", "content": "hi"}]).encode(), "a list of chat messages"),
        (b"[]", "an empty JSON list"),
        (b"<!DOCTYPE html><html><body>chats</body></html>", "chat.html"),
        (b"just some words", "plain text"),
        (b"\x00\x01\x02binary", "a binary file"),
    ],
)
def test_another_format_named_conversations_json_is_refused_naming_what_it_looks_like(
    user, tmp_path, content, looks_like
):
    path = tmp_path / "conversations.json"
    path.write_bytes(content)
    with pytest.raises(ImportSourceError, match="looks like") as refused:
        open_source(path)
    assert looks_like in str(refused.value) and "conversations.json" in str(refused.value)
    assert looks_like in portability.import_path(owner=user, path=path).error
    assert not Memory.objects.filter(owner=user).exists()


def test_a_zip_whose_conversations_json_is_something_else_says_so(user, tmp_path):
    path = tmp_path / "export.zip"
    with zipfile.ZipFile(path, "w") as archive:
        archive.writestr("conversations.json", json.dumps([{"header": "Gemini Apps", "title": "x", "time": "t"}]))
    error = portability.import_path(owner=user, path=path).error
    assert "its conversations.json looks like a Google Takeout activity file" in error


def test_a_truncated_file_keeps_the_conversations_before_the_break(user, tmp_path):
    whole = json.dumps([SIMPLE, chatgpt_conversation("conv-2", "Second", [("x", "user", "Never read", 1)])])
    path = tmp_path / "conversations.json"
    path.write_text(whole[: len(whole) - 40], encoding="utf-8")
    report = portability.import_path(owner=user, path=path)
    assert report.created == 2 and contents(user) == ["What is a sourdough starter?", "Flour and water."]
    assert "ends in the middle of conversation 2" in report.error and "cut short" in report.error


def test_json_that_breaks_mid_way_is_reported_where_it_breaks(user, tmp_path):
    path = tmp_path / "conversations.json"
    path.write_text(json.dumps([SIMPLE])[:-1] + ", {oops}]", encoding="utf-8")
    report = portability.import_path(owner=user, path=path)
    assert report.created == 2 and "stops being JSON near byte" in report.error and "conversation 2" in report.error


def test_values_of_the_wrong_type_are_errors_of_their_conversation_or_message(user, tmp_path):
    odd_types = chatgpt_conversation(
        "conv-types", 42, [("u", "user", "Still readable", 1), ("a", "assistant", "Yes.", 2)]
    )
    odd_types["create_time"] = "yesterday"
    odd_types["mapping"]["a"]["message"]["author"] = "assistant"  # not an object: not a visible role
    odd_types["mapping"]["u"]["message"]["create_time"] = "soon"
    broken_message = chatgpt_conversation("conv-msg", "Broken message", [("u", "user", "Kept", 1)])
    broken_message["mapping"]["u2"] = {"id": "u2", "message": "a string", "parent": "u", "children": []}
    broken_message["current_node"] = "u2"
    report = portability.import_path(
        owner=user,
        path=write_json(
            tmp_path / "c.json",
            [
                "not a conversation",
                {"title": "No mapping", "mapping": ["a", "list"]},
                odd_types,
                broken_message,
                {**SIMPLE, "mapping": {**SIMPLE["mapping"], "u": {**SIMPLE["mapping"]["u"], "children": "a"}}},
            ],
        ),
    )
    errors = errors_of(report)
    assert errors["ChatGPT conversation 1"] == "is not a JSON object; it was skipped"
    assert "mapping" in errors["ChatGPT conversation 2 “No mapping”"]
    assert "not a JSON object" in errors["ChatGPT conversation 4 “Broken message” message u2"]
    assert set(contents(user)) == {"Still readable", "Kept", "What is a sourdough starter?", "Flour and water."}
    untitled = Memory.objects.get(owner=user, content="Still readable")
    assert untitled.metadata["sessionTitle"] == "Untitled conversation"
    assert report.error == ""


def test_a_claude_export_with_wrong_types_is_read_as_far_as_it_can_be(user, tmp_path):
    fine = claude_conversation("c-ok", "Fine", [("m1", "human", "A question about bread?", 1)])
    odd = claude_conversation("c-odd", "Odd", [("m1", "human", "Kept despite the rest", 2)])
    odd["chat_messages"] += ["a string", {"uuid": "m9", "sender": "system", "text": "noise"}]
    odd["chat_messages"][0]["created_at"] = 12345
    report = portability.import_path(
        owner=user,
        path=write_json(
            tmp_path / "conversations.json", [fine, odd, {"uuid": "c-bad", "name": "Bad", "chat_messages": {"a": 1}}]
        ),
    )
    errors = errors_of(report)
    assert "not a JSON object" in errors["Claude conversation 2 “Odd” message 2"]
    assert "not a list" in errors["Claude conversation 3 “Bad”"]
    assert set(contents(user)) == {"A question about bread?", "Kept despite the rest"}


def test_nesting_deeper_than_any_export_stops_the_import_with_a_reason_not_a_crash(user, tmp_path):
    deep = {**SIMPLE, "id": "conv-deep", "conversation_id": "conv-deep", "extra": json.loads("[" * 60 + "]" * 60)}
    path = tmp_path / "conversations.json"
    text = json.dumps([SIMPLE, deep]).replace(
        '"extra": ' + "[" * 60 + "]" * 60, '"extra": ' + "[" * 100_000 + "]" * 100_000
    )
    path.write_text(text, encoding="utf-8")
    report = portability.import_path(owner=user, path=path)
    assert report.created == 2 and "nested more than 64 levels" in report.error


def test_a_huge_integer_is_an_error_not_a_crash(user, tmp_path):
    path = tmp_path / "conversations.json"
    path.write_text('[{"title": "x", "mapping": {}, "create_time": ' + "1" * 5000 + "}]", encoding="utf-8")
    report = portability.import_path(owner=user, path=path)
    assert report.created == 0 and "JSON" in report.error


@pytest.mark.django_db(transaction=True)
def test_two_imports_of_one_export_at_once_make_one_session_and_no_double(user, tmp_path):
    """The second finds the messages and session the first stored, by their ids."""
    from concurrent.futures import ThreadPoolExecutor

    from django.db import connection

    path = write_json(tmp_path / "conversations.json", [SIMPLE])

    def run():
        try:
            return portability.import_path(owner=user, path=path)
        finally:
            connection.close()

    with ThreadPoolExecutor(2) as pool:
        reports = list(pool.map(lambda _: run(), range(2)))
    assert sum(r.created for r in reports) == 2 and sum(r.duplicates for r in reports) == 2
    assert Memory.objects.filter(owner=user).count() == 2 and ChatSession.objects.filter(owner=user).count() == 1


@pytest.mark.slow
def test_a_large_conversations_json_is_streamed_not_read_whole(tmp_path):
    """About 40 MB of conversations: what the reader holds stays near one conversation's size."""
    path = tmp_path / "conversations.json"
    body = "A paragraph of an answer that goes on for a while about nothing in particular. " * 30
    with open(path, "w", encoding="utf-8") as out:
        out.write("[")
        for i in range(1500):
            turns = [(f"m{i}-{j}", "user" if j % 2 == 0 else "assistant", f"{j} {body}", j) for j in range(10)]
            out.write(("," if i else "") + json.dumps(chatgpt_conversation(f"c{i}", f"Chat {i}", turns, at=T0 + i)))
        out.write("]")
    assert path.stat().st_size > 35_000_000
    tracemalloc.start()
    count = sum(1 for item in open_source(path).items if item.record)
    _, peak = tracemalloc.get_traced_memory()
    tracemalloc.stop()
    assert count == 15_000
    assert peak < 20_000_000, f"peak {peak:,} bytes"


def test_the_reader_reads_a_stream_in_pieces(tmp_path):
    """A conversations.json is never read in one call: the reader asks for bounded pieces."""
    from portability.sources.conversations import stream_conversations

    sizes = []

    class Recording(io.BytesIO):
        def read(self, size=-1):
            sizes.append(size)
            return super().read(size)

    data = json.dumps([SIMPLE] * 50).encode()
    assert len(list(stream_conversations(Recording(data), prefix="item", single=False, what="c.json"))) == 50
    assert sizes and all(0 <= s <= 256 * 1024 for s in sizes)  # read(0) first: ijson asks for bytes or text

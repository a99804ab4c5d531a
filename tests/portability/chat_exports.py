"""ChatGPT and Claude exports for the tests, in the shape the two assistants write them."""

from __future__ import annotations

import json
import zipfile
from pathlib import Path

T0 = 1_700_000_000.0  # 2023-11-14T22:13:20Z


def chatgpt_message(mid: str, role: str, text, *, at: float | None, **extra) -> dict:
    content = text if isinstance(text, dict) else {"content_type": "text", "parts": [text]}
    return {
        "id": mid,
        "author": {"role": role, "name": None, "metadata": {}},
        "create_time": at,
        "update_time": None,
        "content": content,
        "status": "finished_successfully",
        "end_turn": True,
        "weight": 1.0,
        "metadata": extra.pop("metadata", {}),
        "recipient": extra.pop("recipient", "all"),
        **extra,
    }


def chatgpt_conversation(
    cid: str, title: str, turns: list[tuple], *, at: float = T0, current: str | None = None
) -> dict:
    """turns: (node id, role, text or content, seconds after `at`[, parent id]) in order; each turn's
    parent is the one before unless given. A ChatGPT-made root and system node come first."""
    mapping = {
        f"{cid}-root": {"id": f"{cid}-root", "message": None, "parent": None, "children": []},
        f"{cid}-sys": {
            "id": f"{cid}-sys",
            "message": chatgpt_message(
                f"{cid}-sys", "system", "", at=None, metadata={"is_visually_hidden_from_conversation": True}
            ),
            "parent": f"{cid}-root",
            "children": [],
        },
    }
    mapping[f"{cid}-root"]["children"].append(f"{cid}-sys")
    previous = f"{cid}-sys"
    for turn in turns:
        node_id, role, text, seconds = turn[:4]
        parent = turn[4] if len(turn) > 4 else previous
        message = chatgpt_message(node_id, role, text, at=None if seconds is None else at + seconds)
        mapping[node_id] = {"id": node_id, "message": message, "parent": parent, "children": []}
        mapping[parent]["children"].append(node_id)
        previous = node_id
    return {
        "title": title,
        "create_time": at,
        "update_time": at + 3600,
        "mapping": mapping,
        "moderation_results": [],
        "current_node": current or previous,
        "plugin_ids": None,
        "conversation_id": cid,
        "conversation_template_id": None,
        "gizmo_id": None,
        "is_archived": False,
        "safe_urls": [],
        "default_model_slug": "gpt-4o",
        "id": cid,
    }


def claude_conversation(uuid: str, name: str, messages: list[tuple], *, day: str = "2025-07-06", leaf=None) -> dict:
    """messages: (uuid, sender, content blocks or text, minute[, parent uuid])."""
    chat = []
    for m in messages:
        mid, sender, body, minute = m[:4]
        blocks = body if isinstance(body, list) else [{"type": "text", "text": body, "citations": []}]
        item = {
            "uuid": mid,
            "text": " ".join(b.get("text", b.get("thinking", "")) for b in blocks),
            "content": blocks,
            "sender": sender,
            "created_at": f"{day}T10:{minute:02d}:00.000000Z",
            "updated_at": f"{day}T10:{minute:02d}:00.000000Z",
            "attachments": [],
            "files": [],
        }
        if len(m) > 4:
            item["parent_message_uuid"] = m[4]
        chat.append(item)
    conversation = {
        "uuid": uuid,
        "name": name,
        "summary": "",
        "created_at": f"{day}T10:00:00.000000Z",
        "updated_at": f"{day}T11:00:00.000000Z",
        "account": {"uuid": "a55a05c0-0000-4000-8000-000000000000"},
        "chat_messages": chat,
    }
    if leaf:
        conversation["current_leaf_message_uuid"] = leaf
    return conversation


def write_json(path: Path, value) -> Path:
    path.write_text(json.dumps(value, ensure_ascii=False), encoding="utf-8")
    return path


def chatgpt_zip(path: Path, conversations: list[dict], *, folder: str = "") -> Path:
    """The export zip as ChatGPT mails it: conversations.json beside chat.html and the account files."""
    with zipfile.ZipFile(path, "w", zipfile.ZIP_DEFLATED) as archive:
        archive.writestr(f"{folder}chat.html", "<html><body>your chats</body></html>")
        archive.writestr(f"{folder}user.json", json.dumps({"id": "user-1", "email": "me@example.com"}))
        archive.writestr(f"{folder}message_feedback.json", "[]")
        archive.writestr(f"{folder}conversations.json", json.dumps(conversations))
        archive.writestr(f"{folder}file-abc.png", b"\x89PNG fake image")
    return path


def claude_zip(path: Path, conversations: list[dict]) -> Path:
    with zipfile.ZipFile(path, "w", zipfile.ZIP_DEFLATED) as archive:
        archive.writestr("users.json", json.dumps([{"uuid": "u", "full_name": "Me", "email_address": "me@x"}]))
        archive.writestr("projects.json", "[]")
        archive.writestr("conversations.json", json.dumps(conversations))
    return path

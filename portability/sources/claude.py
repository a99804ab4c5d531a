"""A Claude export as items: each conversation of its conversations.json (alone, or inside the export
zip), along the branch that was current when a conversation says which (edited messages are other
branches), each message a chat record with its role, time and ids; its text blocks with their cited
sources kept, text pasted as an attachment kept under the file's name, and thinking and tool use left out."""

from __future__ import annotations

from collections.abc import Callable
from typing import BinaryIO

from portability.sources.conversations import (
    ExportFormat,
    Kept,
    Tally,
    Walked,
    attached_notice,
    clean_id,
    iso_time,
    open_export,
)
from portability.sources.items import Source

ASSISTANT = "Claude"
ROLES = {"human": "user", "user": "user", "assistant": "assistant"}
NOISE_BLOCKS = frozenset({"thinking", "redacted_thinking", "tool_use", "tool_result", "token_budget"})
MEDIA_BLOCKS = frozenset({"image", "document", "file"})


def open_claude(open_stream: Callable[[], BinaryIO], *, prefix: str, single: bool, what: str) -> Source:
    """The export's conversations streamed from `open_stream()` (the file, or its entry in the zip)."""
    return open_export(CLAUDE, open_stream, prefix=prefix, single=single, what=what)


def current_branch(messages: list, leaf) -> tuple[list, str]:
    """The messages of the branch that was showing, oldest first, and how it was found. Exports that
    keep edits give each message its parent and the conversation its current leaf; older ones are one
    line of messages, kept whole ("linear")."""
    by_uuid = {m["uuid"]: m for m in messages if isinstance(m, dict) and isinstance(m.get("uuid"), str)}
    if not any(isinstance(m, dict) and m.get("parent_message_uuid") in by_uuid for m in messages):
        return messages, "linear"
    how = "current"
    if not (isinstance(leaf, str) and leaf in by_uuid):
        # No current leaf: the latest message that no other answers, as the page shows it.
        parents = {m.get("parent_message_uuid") for m in by_uuid.values()}
        leaves = [m for m in by_uuid.values() if m["uuid"] not in parents]
        leaf = max(leaves, key=lambda m: str(m.get("created_at") or ""))["uuid"] if leaves else next(iter(by_uuid))
        how = "latest"
    path, seen, at = [], set(), leaf
    while isinstance(at, str) and at in by_uuid:
        if at in seen:
            return path[::-1], "loop"
        seen.add(at)
        path.append(by_uuid[at])
        at = by_uuid[at].get("parent_message_uuid")
    return path[::-1], how


def _walk(conversation: dict, messages: list) -> Walked:
    """The messages on the branch that was showing, and how many a person saw on the others."""
    branch, how = current_branch(messages, conversation.get("current_leaf_message_uuid"))
    chosen = {id(m) for m in branch}
    other_branches = sum(
        1 for m in messages if id(m) not in chosen and isinstance(m, dict) and ROLES.get(m.get("sender"))
    )
    return Walked([(str(at + 1), f"n{at}", m) for at, m in enumerate(branch)], how, other_branches)


def _kept(message: dict, fallback_id: str, tally: Tally) -> Kept | None:
    role = ROLES.get(message.get("sender"))
    if role is None:
        tally.counts["noise"] += 1
        return None
    text, attached, names = message_text(message)
    tally.counts["images"] += attached
    if not text.strip():
        tally.counts["empty"] += 1
        return None
    return Kept(
        message_id=clean_id(message.get("uuid")) or fallback_id,
        role=role,
        text=text,
        when=iso_time(message.get("created_at")),
        extra={"attachments": names} if names else {},
        notices=attached_notice(attached),
    )


def message_text(message: dict) -> tuple[str, int, list[str]]:
    """The message's text (its text blocks, with their sources; the top-level `text` only when there
    are no blocks, as it also holds the thinking), how many images or files were left out, and the
    names of the files whose text was pasted in."""
    blocks = message.get("content")
    attached = 0
    parts: list[str] = []
    if isinstance(blocks, list) and blocks:
        for block in blocks:
            if not isinstance(block, dict):
                continue
            kind = block.get("type")
            if kind == "text" and isinstance(block.get("text"), str):
                parts.append(block["text"] + _sources(block.get("citations")))
            elif kind in MEDIA_BLOCKS:
                attached += 1
            # thinking, tool use and results, and anything unknown are not what was said
    elif isinstance(message.get("text"), str):
        parts.append(message["text"])
    names = []
    for attachment in message.get("attachments") or []:
        if not isinstance(attachment, dict):
            continue
        name = attachment.get("file_name") if isinstance(attachment.get("file_name"), str) else "attachment"
        pasted = attachment.get("extracted_content")
        if isinstance(pasted, str) and pasted.strip():
            names.append(name[:200])
            parts.append(f"Attached {name}:\n\n{pasted.strip()}")
        else:
            attached += 1
    files = message.get("files")
    if isinstance(files, list):
        attached += sum(1 for f in files if isinstance(f, dict))
    return "\n\n".join(p.strip("\n") for p in parts if p.strip()), attached, names


def _sources(citations) -> str:
    """A text block's cited sources as links after it (Claude's export keeps their spans, not markers)."""
    if not isinstance(citations, list):
        return ""
    links = []
    for c in citations:
        if not isinstance(c, dict):
            continue
        details = c.get("details") if isinstance(c.get("details"), dict) else {}
        url = c.get("url") or details.get("url")
        if isinstance(url, str) and url.startswith(("http://", "https://")):
            title = c.get("title") or details.get("title") or url
            links.append(f"[{' '.join(str(title).split())[:120]}]({url})")
    links = list(dict.fromkeys(links))
    return f"\n\nSources: {', '.join(links)}" if links else ""


CLAUDE = ExportFormat(
    assistant=ASSISTANT,
    kind="claude",
    title_keys=("name", "title"),
    id_keys=("uuid", "id"),
    messages_key="chat_messages",
    messages_type=list,
    time=iso_time,
    created_key="created_at",
    updated_key="updated_at",
    walk=_walk,
    keep=_kept,
)

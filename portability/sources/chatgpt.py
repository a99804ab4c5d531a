"""A ChatGPT data export as items: each conversation of conversations.json (alone, or inside the export
zip) along the branch that was current when the export was made, each message a chat record with its
role, time and ids, its text with code blocks and citations kept readable, and what is not the
conversation (tool calls and results, reasoning, system and hidden messages) left out and counted."""

from __future__ import annotations

import re
from collections.abc import Callable
from typing import BinaryIO

from portability.sources.conversations import (
    ExportFormat,
    Kept,
    Tally,
    Walked,
    attached_notice,
    clean_id,
    epoch_time,
    open_export,
)
from portability.sources.items import Source

ASSISTANT = "ChatGPT"
ROLES = {"user": "user", "assistant": "assistant"}
# Content that is the machinery, not the conversation: reasoning, browsing and tool output, the custom
# instructions ChatGPT sends itself, errors.
NOISE_TYPES = frozenset(
    {
        "thoughts",
        "reasoning_recap",
        "user_editable_context",
        "model_editable_context",
        "tether_browsing_display",
        "tether_quote",
        "system_error",
        "execution_output",
        "computer_output",
        "sonic_webpage",
        "app_pairing_content",
    }
)
_PRIVATE_USE_MARK = re.compile("\ue200[^\ue201]{0,400}\ue201")  # newer citation markers
_BRACKET_MARK = re.compile(r"【\d+(?::\d+)?†[^】]{0,200}】")  # older ones: 【12†source】
_PRIVATE_USE = re.compile("[\ue200-\ue2ff]")


def open_chatgpt(open_stream: Callable[[], BinaryIO], *, prefix: str, single: bool, what: str) -> Source:
    """The export's conversations streamed from `open_stream()` (the file, or its entry in the zip)."""
    return open_export(CHATGPT, open_stream, prefix=prefix, single=single, what=what)


def _visible_role(message) -> str | None:
    """user or assistant for a message a person saw in the conversation, else None."""
    if not isinstance(message, dict):
        return None
    author = message.get("author")
    role = ROLES.get(author.get("role")) if isinstance(author, dict) else None
    metadata = message.get("metadata") if isinstance(message.get("metadata"), dict) else {}
    if role is None or metadata.get("is_visually_hidden_from_conversation") or metadata.get("is_user_system_message"):
        return None
    if message.get("recipient") not in (None, "all"):  # a call the assistant made to a tool
        return None
    content = message.get("content")
    if isinstance(content, dict) and content.get("content_type") in NOISE_TYPES:
        return None
    return role


def current_path(mapping: dict, current) -> tuple[list[str], str]:
    """The node ids from the root to the current node, and how they were found: "current", "latest"
    (no usable current_node: the last child at each step, as ChatGPT shows an edited message), or
    "loop" (the parents lead round in a circle: the nodes up to where it closes)."""
    if isinstance(current, str) and current in mapping:
        path, seen, node_id = [], set(), current
        while isinstance(node_id, str) and node_id in mapping:
            if node_id in seen:
                return path[::-1], "loop"
            seen.add(node_id)
            path.append(node_id)
            node = mapping[node_id]
            node_id = node.get("parent") if isinstance(node, dict) else None
        return path[::-1], "current"
    roots = [
        key for key, node in mapping.items() if isinstance(node, dict) and node.get("parent") not in mapping
    ] or list(mapping)[:1]
    path, seen = [], set()
    node_id = roots[0] if roots else None
    while isinstance(node_id, str) and node_id in mapping:
        if node_id in seen:
            return path, "loop"
        seen.add(node_id)
        path.append(node_id)
        node = mapping[node_id]
        children = node.get("children") if isinstance(node, dict) else None
        known = [c for c in children if isinstance(c, str) and c in mapping] if isinstance(children, list) else []
        node_id = known[-1] if known else None
    return path, "latest"


def _walk(conversation: dict, mapping: dict) -> Walked:
    """The messages on the current path (the root and other nodes without one left out), and how many
    messages a person saw on the other branches."""
    path, how = current_path(mapping, conversation.get("current_node"))
    on_path = set(path)
    other_branches = sum(
        1
        for key, node in mapping.items()
        if key not in on_path and isinstance(node, dict) and _visible_role(node.get("message"))
    )
    messages = []
    for node_id in path:
        node = mapping[node_id]
        message = node.get("message") if isinstance(node, dict) else None
        if message is not None:
            messages.append((clean_id(node_id) or "?", clean_id(node_id), message))
    return Walked(messages, how, other_branches)


def _kept(message: dict, fallback_id: str, tally: Tally) -> Kept | None:
    role = _visible_role(message)
    if role is None:
        tally.counts["noise"] += 1
        return None
    text, attached = message_text(message)
    tally.counts["images"] += attached
    if not text.strip():
        tally.counts["empty"] += 1
        return None
    metadata = message.get("metadata") if isinstance(message.get("metadata"), dict) else {}
    extra: dict = {}
    if role == "assistant" and isinstance(metadata.get("model_slug"), str):
        extra["model"] = metadata["model_slug"][:100]
    if files := _attachment_names(metadata):
        extra["attachments"] = files
    return Kept(
        message_id=clean_id(message.get("id")) or fallback_id,
        role=role,
        text=text,
        when=epoch_time(message.get("create_time")),
        extra=extra,
        notices=attached_notice(attached),
    )


def _attachment_names(metadata: dict) -> list[str]:
    attachments = metadata.get("attachments")
    if not isinstance(attachments, list):
        return []
    names = [a.get("name") for a in attachments if isinstance(a, dict) and isinstance(a.get("name"), str)]
    return [n[:200] for n in names if n.strip()][:20]


def message_text(message: dict) -> tuple[str, int]:
    """The text a person read, and how many images or files in it were left out."""
    content = message.get("content")
    if not isinstance(content, dict):
        return "", 0
    kind = content.get("content_type")
    attached = 0
    if kind == "code":
        code = content.get("text")
        language = content.get("language") if isinstance(content.get("language"), str) else ""
        text = f"```{'' if language == 'unknown' else language}\n{code.rstrip()}\n```" if isinstance(code, str) else ""
    elif isinstance(content.get("parts"), list):
        texts = []
        for part in content["parts"]:
            if isinstance(part, str):
                texts.append(part)
            elif isinstance(part, dict):
                if isinstance(part.get("text"), str):  # an audio transcription, a text part as an object
                    texts.append(part["text"])
                else:  # an image, a file, audio
                    attached += 1
        text = "\n\n".join(t for t in texts if t.strip())
    elif isinstance(content.get("text"), str):
        text = content["text"]
    else:
        text = ""
    metadata = message.get("metadata") if isinstance(message.get("metadata"), dict) else {}
    return readable_citations(text, metadata), attached


def readable_citations(text: str, metadata: dict) -> str:
    """Citations as a reader can follow them: ChatGPT's markers (private-use characters, or
    【12†source】) replaced by the links the message's metadata gives for them, else removed."""
    if not text:
        return text
    citations = metadata.get("citations")
    if isinstance(citations, list):  # older: spans of the text, with the source in metadata
        spans = []
        for c in citations:
            if not isinstance(c, dict):
                continue
            start, end = c.get("start_ix"), c.get("end_ix")
            if isinstance(start, int) and isinstance(end, int) and 0 <= start < end <= len(text):
                spans.append((start, end, _link(c.get("metadata"))))
        for start, end, link in sorted(spans, reverse=True):
            text = _spliced(text, start, end, f" ({link})" if link else "")
    references = metadata.get("content_references")
    if isinstance(references, list):
        usable = [r for r in references if isinstance(r, dict) and isinstance(r.get("matched_text"), str)]
        for ref in sorted(usable, key=lambda r: -len(r["matched_text"])):
            if ref["matched_text"] and (at := text.find(ref["matched_text"])) >= 0:
                replacement = _reference_text(ref)
                while at >= 0:
                    text = _spliced(text, at, at + len(ref["matched_text"]), replacement)
                    at = text.find(ref["matched_text"], at + len(replacement))
    text = _PRIVATE_USE_MARK.sub("", text)
    text = _BRACKET_MARK.sub("", text)
    return _PRIVATE_USE.sub("", text)


def _spliced(text: str, start: int, end: int, replacement: str) -> str:
    """text[start:end] replaced, without doubling the space before it."""
    if start > 0 and text[start - 1].isspace():
        replacement = replacement.lstrip()
    return text[:start] + replacement + text[end:]


def _link(source) -> str:
    if not isinstance(source, dict):
        return ""
    url = source.get("url")
    if not isinstance(url, str) or not url.startswith(("http://", "https://")):
        return ""
    title = source.get("title") or source.get("attribution") or url
    return f"[{' '.join(str(title).split())[:120]}]({url})"


def _reference_text(ref: dict) -> str:
    alt = ref.get("alt")
    if isinstance(alt, str) and alt.strip() and not _PRIVATE_USE.search(alt):
        return alt  # ChatGPT's own readable form, e.g. " ([Wikipedia](https://...))"
    items = ref.get("items")
    links = [link for link in (_link(i) for i in items) if link] if isinstance(items, list) else []
    if not links and (link := _link(ref)):
        links = [link]
    return f" ({', '.join(dict.fromkeys(links))})" if links else ""


CHATGPT = ExportFormat(
    assistant=ASSISTANT,
    kind="chatgpt",
    title_keys=("title",),
    id_keys=("conversation_id", "id"),
    messages_key="mapping",
    messages_type=dict,
    time=epoch_time,
    created_key="create_time",
    updated_key="update_time",
    walk=_walk,
    keep=_kept,
)

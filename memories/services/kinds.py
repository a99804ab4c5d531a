"""What a chat memory is, a question or a note: the question rule (memories.search.questions) applied
at every create and update of a memory with source chat, whatever the door, and a person's choice
kept over it.

The answer is stored in `metadata.kind`: "question" for a message that asks something, "note" for
one a person marked as a note, absent for a note by the rule. Search ranks questions after the notes
(memories.search.scoring.order_results) and the chat never quotes one back as an answer.
`Memory.kind_chosen_at` records that a person (or the integration that stored it) chose the kind:
a later edit of the text then keeps it instead of asking the rule again.
"""

from __future__ import annotations

from dataclasses import dataclass

from memories.models import Source
from memories.search.questions import KINDS, NOTE, QUESTION, asks
from memories.services.validation import MemoryInputError

KIND_KEY = "kind"
KIND_REFUSAL = "kind must be 'question' or 'note' (or null to let the question rule decide)"


def clean_kind(kind, *, index: int | None, field: str = "kind") -> str | None:
    """The kind a caller gave, checked: "question", "note", or None for "let the rule decide"."""
    if kind is None:
        return None
    if not isinstance(kind, str) or kind not in KINDS:
        message = KIND_REFUSAL if field == "kind" else f"{field} of a chat message must be 'question' or 'note'"
        raise MemoryInputError(message, field=field, index=index)
    return kind


def rule_kind(content: str) -> str:
    return QUESTION if asks(content) else NOTE


@dataclass(frozen=True)
class Classified:
    metadata: dict
    chosen: bool  # the kind is the caller's choice, kept when the text changes later


def classify(*, source: str, content: str, metadata: dict, kind, index: int | None) -> Classified:
    """The metadata a new memory is stored with: a chat memory's kind is the caller's (`kind`, or
    `metadata.kind` when it differs from the rule's answer), else the rule's. Only a chat memory has
    a kind; another source keeps its metadata as it is and refuses `kind`."""
    given = clean_kind(kind, index=index)
    if source != Source.CHAT:
        if given is not None:
            raise MemoryInputError(_NOT_CHAT.format(source=source), field="kind", index=index)
        return Classified(metadata, chosen=False)
    ruled = rule_kind(content)
    if given is None and KIND_KEY in metadata:
        given = clean_kind(metadata[KIND_KEY], index=index, field="metadata.kind")
        chosen = _chosen(given, ruled)
    else:
        chosen = given is not None
    return Classified(_with_kind(metadata, given or ruled, chosen=chosen), chosen=chosen)


def reclassify(
    *,
    old_source: str,
    old_metadata: dict,
    old_chosen: bool,
    source: str,
    content: str,
    metadata: dict | None,
    kind,
) -> Classified:
    """The metadata after an update, and whether its kind is chosen. `metadata` is the new metadata
    when the update gives one (None: unchanged); `kind` is the kind it gives, None to hand it back to
    the rule, or UNSET. A chosen kind survives new text and new metadata that does not name one."""
    if source != Source.CHAT:
        if kind is not UNSET and kind is not None:
            raise MemoryInputError(_NOT_CHAT.format(source=source), field="kind", index=None)
        if old_source == Source.CHAT and metadata is None:
            # Leaving chat: the kind was the rule's or the chat's, and means nothing for a document.
            return Classified({k: v for k, v in old_metadata.items() if k != KIND_KEY}, chosen=False)
        return Classified(old_metadata if metadata is None else metadata, chosen=False)
    base = old_metadata if metadata is None else metadata
    ruled = rule_kind(content)
    if kind is not UNSET:
        given = clean_kind(kind, index=None)
        return Classified(_with_kind(base, given or ruled, chosen=given is not None), chosen=given is not None)
    if metadata is not None and KIND_KEY in metadata and metadata[KIND_KEY] != old_metadata.get(KIND_KEY):
        given = clean_kind(metadata[KIND_KEY], index=None, field="metadata.kind")
        chosen = _chosen(given, ruled)
        return Classified(_with_kind(base, given or ruled, chosen=chosen), chosen=chosen)
    if old_chosen and old_source == Source.CHAT:
        return Classified(_with_kind(base, old_metadata.get(KIND_KEY) or NOTE, chosen=True), chosen=True)
    return Classified(_with_kind(base, ruled, chosen=False), chosen=False)


class _Unset:
    def __repr__(self) -> str:
        return "UNSET"


UNSET = _Unset()
_NOT_CHAT = "only a chat message has a kind (question or note); this memory's source is {source}"


def _chosen(given: str | None, ruled: str) -> bool:
    """Whether a kind named in the metadata is a choice: a "note" always is (a person's "this is a
    note" wins); a "question" only where the rule says otherwise, since an export or a copy carries
    the rule's own questions; null is none."""
    return given is not None and (given == NOTE or given != ruled)


def _with_kind(metadata: dict, kind: str, *, chosen: bool) -> dict:
    """The metadata holding `kind`: "question" is stored, and so is a chosen "note"; a note by the rule
    is the absence of a kind, so the rule's notes cost nothing to store."""
    rest = {k: v for k, v in metadata.items() if k != KIND_KEY}
    return rest if kind == NOTE and not chosen else {**rest, KIND_KEY: kind}

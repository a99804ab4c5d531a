"""Links that mail carries: a message and the one it answers (its thread, kept by imports in
metadata["mail"]), and a message and each attachment it brought (by the attachment's sha256), found
again on every link refresh like the other evidence.

A reply is linked to the message it names in In-Reply-To, else to the latest one of its References the
account holds, else to the thread's first message (a Gmail thread says its id, not who answers whom), so
a thread is a chain of links from its first message down and never a web of every pair.
"""

from __future__ import annotations

from memories.models import Memory

MAIL_KEY = "mail"


def _thread_rows(owner_id: int, focus: set[int] | None) -> list[tuple[int, dict, object]]:
    messages = Memory.objects.filter(owner_id=owner_id, metadata__mail__has_key="threadId").exclude(
        metadata__mail__has_key="attachmentOf"
    )
    if focus is not None:
        threads = {
            t
            for t in messages.filter(pk__in=focus).values_list("metadata__mail__threadId", flat=True)
            if isinstance(t, str) and t
        }
        if not threads:
            return []
        messages = messages.filter(metadata__mail__threadId__in=list(threads))
    return list(messages.values_list("pk", "metadata__mail", "created_at"))


def thread_link_evidence(owner_id: int, focus: set[int] | None) -> dict[tuple[int, int], tuple[float, float]]:
    """(a, b) -> (1, 1) for each message and the one it answers (see the module doc); a pair counts when
    either side is in focus."""
    threads: dict[str, list[tuple[int, dict, object]]] = {}
    for pk, mail, created in _thread_rows(owner_id, focus):
        if isinstance(mail, dict) and isinstance(mail.get("threadId"), str) and mail["threadId"]:
            threads.setdefault(mail["threadId"], []).append((pk, mail, created))
    found = {}
    for rows in threads.values():
        if len(rows) < 2:
            continue
        by_id = {}
        for pk, mail, _ in sorted(rows, key=lambda row: (row[2], row[0])):
            if isinstance(mail.get("messageId"), str):
                by_id.setdefault(mail["messageId"], pk)
        first = min(rows, key=lambda row: (row[2], row[0]))[0]
        for pk, mail, _ in rows:
            parent = _parent(mail, by_id)
            if parent is None or parent == pk:
                parent = first if pk != first else None
            if parent is None or (focus is not None and pk not in focus and parent not in focus):
                continue
            found[(min(pk, parent), max(pk, parent))] = (1.0, 1.0)
    return found


def _parent(mail: dict, by_id: dict[str, int]) -> int | None:
    replied = mail.get("inReplyTo")
    if isinstance(replied, str) and replied in by_id:
        return by_id[replied]
    references = mail.get("references")
    for reference in reversed(references if isinstance(references, list) else []):
        if isinstance(reference, str) and reference in by_id:
            return by_id[reference]
    return None


def attachment_link_evidence(owner_id: int, focus: set[int] | None) -> dict[tuple[int, int], tuple[float, float]]:
    """(a, b) -> (1, 1) for each message and a memory that holds a file it had attached (an attachment an
    import kept, or the same file uploaded on its own: the sha256 of its bytes says so)."""
    messages = Memory.objects.filter(owner_id=owner_id, metadata__mail__has_key="attachments")
    files = Memory.objects.filter(owner_id=owner_id, metadata__has_key="sha256")
    if focus is not None:
        carried = _shas(messages.filter(pk__in=focus).values_list("metadata__mail__attachments", flat=True))
        focus_files = {
            sha for sha in files.filter(pk__in=focus).values_list("metadata__sha256", flat=True) if isinstance(sha, str)
        }
        wanted = carried | focus_files
        if not wanted:
            return {}
        files = files.filter(metadata__sha256__in=list(wanted))
    holders: dict[str, list[int]] = {}
    for pk, sha in files.values_list("pk", "metadata__sha256"):
        if isinstance(sha, str):
            holders.setdefault(sha, []).append(pk)
    if not holders:
        return {}
    found = {}
    for pk, attached in messages.values_list("pk", "metadata__mail__attachments"):
        for sha in _shas([attached]):
            for target in holders.get(sha, ()):
                if target == pk or (focus is not None and pk not in focus and target not in focus):
                    continue
                found[(min(pk, target), max(pk, target))] = (1.0, 1.0)
    return found


def _shas(values) -> set[str]:
    out = set()
    for attached in values:
        for entry in attached if isinstance(attached, list) else []:
            if isinstance(entry, dict) and isinstance(entry.get("sha256"), str):
                out.add(entry["sha256"])
    return out

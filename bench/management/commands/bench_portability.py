"""Benchmark: export speed at N memories, and an export -> import -> export round trip of a mixed account
with the differences counted; last line is JSON.

Export: a bench user with N memories (synthetic ~1.5 KB texts, 2 chunks each with random unit vectors,
inserted directly: the model is not needed) is built once and reused; the whole export, vectors
included, is written to a temporary file and timed, with the process's peak memory before and after.

Chat export: a ChatGPT conversations.json of C messages (synthetic prose, user turns of one to three
sentences, answers of three to twelve, conversations of 2 to 40 messages, one in five edited so that a
second branch is left out) imported into an empty account, embedding included, and then again (it
adds nothing); messages per second of each, the peak memory before and after, and the import's time
over the model alone embedding the same chunks in the import's batches (the overhead ratio: on a
shared machine the ratio holds where the absolute figures do not).

Round trip: a mixed account of M memories is made through the services (uploads with tags, priorities
and metadata, chat sessions, pinned and archived memories, accesses, summaries, repeated contents),
exported, imported into an empty account, and exported again; every field of every memory and chat
session is compared, ids aside. The import is timed twice, reusing the vectors and without them, and
the latter is set against the model alone embedding the same chunks the way the import does.

Mail (--mbox N): an mbox of N synthetic messages (threads of five, one message in twenty with a CSV
attachment) is written to a temporary file and imported with the real model: messages per second, the
process's peak RSS growth over the import (the mbox must stream: the target is <= 200 MB at 10,000), and
a second import, which must add 0. --mail-file PATH imports a real mbox the same way and counts what
came in against the messages in the file, the threads kept and the second import.
"""

from __future__ import annotations

import hashlib
import json
import random
import resource
import tempfile
import time
from collections import Counter
from datetime import UTC, datetime, timedelta
from email.message import EmailMessage
from email.utils import format_datetime
from pathlib import Path

import numpy as np
from django.contrib.auth import get_user_model
from django.core.management.base import BaseCommand
from django.db import connection, transaction
from django.utils import timezone

from bench.synthetic import document, sentence
from memories import embedding, services
from memories.models import ChatSession, Memory, MemoryChunk
from memories.search import lexical
from portability import services as portability

EXPORT_USER = "bench-portability-export"
CHAT_USER = "bench-portability-chat"
ROUNDTRIP_USERS = ("bench-portability-source", "bench-portability-target", "bench-portability-plain")
MAIL_USER = "bench-portability-mail"
MAIL_FILE_USER = "bench-portability-mail-file"


def _peak_mb() -> float:
    return round(resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024, 1)


def comparable_records(data: bytes) -> tuple[list[dict], list[dict]]:
    """The export's memories and chat sessions without the ids an importing account gives out."""
    import io
    import zipfile

    with zipfile.ZipFile(io.BytesIO(data)) as archive:
        memories = [json.loads(line) for line in archive.read("memories.jsonl").splitlines()]
        sessions = [json.loads(line) for line in archive.read("chat_sessions.jsonl").splitlines()]
    out = []
    for record in memories:
        record.pop("id")
        if record["source"] == "chat":
            record["metadata"] = {k: v for k, v in record["metadata"].items() if k not in ("sessionId", "userId")}
        out.append(record)
    for session in sessions:
        session.pop("id")

    def key(r):
        return (r["createdAt"], r["contentHash"], json.dumps(r, sort_keys=True))

    return sorted(out, key=key), sorted(sessions, key=lambda s: (s["createdAt"], s["title"]))


def count_differences(before: list[dict], after: list[dict]) -> tuple[int, list[str]]:
    """Differing (record, field) pairs, plus a missing or extra record counting once per field."""
    differences, examples = abs(len(before) - len(after)) * len(before[0] if before else {}), []
    for a, b in zip(before, after, strict=False):
        for name in sorted(a.keys() | b.keys()):
            if a.get(name) != b.get(name):
                differences += 1
                if len(examples) < 5:
                    examples.append(f"{a.get('title', '')[:40]!r}.{name}")
    return differences, examples


def write_chatgpt_export(path: Path, n: int, rng: random.Random) -> tuple[int, int]:
    """A conversations.json of n kept messages in ChatGPT's export shape; (conversations, messages on
    branches that are not current)."""
    conversations, written, branches, start = [], 0, 0, 1_700_000_000.0
    while written < n:
        length = min(rng.randint(2, 40), n - written)
        cid = f"bench-conv-{len(conversations)}"
        at = start + len(conversations) * 3600
        mapping = {"root": {"id": "root", "message": None, "parent": None, "children": []}}
        parent = "root"
        for j in range(length):
            role = "user" if j % 2 == 0 else "assistant"
            words = " ".join(sentence(rng) for _ in range(rng.randint(1, 3) if role == "user" else rng.randint(3, 12)))
            node = f"{cid}-{j}"
            mapping[node] = {
                "id": node,
                "parent": parent,
                "children": [],
                "message": {
                    "id": node,
                    "author": {"role": role, "name": None, "metadata": {}},
                    "create_time": at + 30 * j,
                    "content": {"content_type": "text", "parts": [words]},
                    "metadata": {"model_slug": "gpt-4o"} if role == "assistant" else {},
                    "recipient": "all",
                },
            }
            mapping[parent]["children"].append(node)
            if j == 1 and len(conversations) % 5 == 0:  # an answer regenerated: the first one is a branch
                old = f"{cid}-old"
                mapping[old] = {
                    **mapping[node],
                    "id": old,
                    "children": [],
                    "message": {**mapping[node]["message"], "id": old},
                }
                mapping[parent]["children"].insert(0, old)
                branches += 1
            parent = node
        conversations.append(
            {
                "id": cid,
                "title": sentence(rng)[:60],
                "create_time": at,
                "update_time": at + 30 * length,
                "mapping": mapping,
                "current_node": parent,
            }
        )
        written += length
    path.write_text(json.dumps(conversations), encoding="utf-8")
    return len(conversations), branches


class Command(BaseCommand):
    help = "Export time at N memories and a round trip of M mixed memories with its differences counted."

    def add_arguments(self, parser):
        parser.add_argument("--memories", type=int, default=10_000, help="Memories in the export timing.")
        parser.add_argument("--roundtrip", type=int, default=1_000, help="Memories in the round trip.")
        parser.add_argument("--chat", type=int, default=2_000, help="Messages in the ChatGPT export import.")
        parser.add_argument("--seed", type=int, default=19)
        parser.add_argument("--rebuild", action="store_true")
        parser.add_argument("--mbox", type=int, default=0, help="Messages in a synthetic mbox to import.")
        parser.add_argument("--mail-file", default="", help="A real mbox to import and check.")

    def handle(self, *args, memories: int, roundtrip: int, chat: int, seed: int, rebuild: bool, **options):
        rng = random.Random(seed)
        result = {"bench": "portability", "export_memories": memories, "roundtrip_memories": roundtrip}
        if memories:
            result.update(self._export(memories, rng, rebuild))
        if chat:
            result.update(self._chat_export(chat, rng))
        if roundtrip:
            result.update(self._roundtrip(roundtrip, rng))
        if options["mbox"]:
            result.update(self._mbox(options["mbox"], rng))
        if options["mail_file"]:
            result.update(self._mail_file(Path(options["mail_file"])))
        self.stdout.write(json.dumps(result))

    # --- mail -----------------------------------------------------------------------------------

    def _write_mbox(self, path: Path, n: int, rng: random.Random) -> None:
        start = datetime(2020, 1, 1, tzinfo=UTC)
        with open(path, "wb") as handle:
            for i in range(n):
                root = i - i % 5
                msg = EmailMessage()
                msg["From"] = f"Person {i % 37} <p{i % 37}@example.org>"
                msg["To"] = "team@example.org"
                msg["Subject"] = ("Re: " if i != root else "") + f"Thread {root}: {sentence(rng)[:60]}"
                msg["Date"] = format_datetime(start + timedelta(minutes=7 * i))
                msg["Message-ID"] = f"<bench-{i}@example.org>"
                if i != root:
                    msg["In-Reply-To"] = f"<bench-{i - 1}@example.org>"
                    msg["References"] = " ".join(f"<bench-{j}@example.org>" for j in range(root, i))
                msg.set_content(document(rng, target_chars=1200))
                if i % 20 == 7:
                    rows = "\n".join(f"{rng.choice(['north', 'south'])},{rng.randrange(1000)}" for _ in range(40))
                    msg.add_attachment(
                        f"region,amount\n{rows}\n".encode(), maintype="text", subtype="csv", filename=f"f{i}.csv"
                    )
                data = bytes(msg).replace(b"\nFrom ", b"\n>From ")
                handle.write(b"From bench@example.org Wed Jan  1 00:00:00 2020\n" + data + b"\n\n")

    def _mbox(self, n: int, rng: random.Random) -> dict:
        User = get_user_model()
        # A name of its own per run: a run stopped mid-way leaves thousands of memories, which are
        # not deleted before this one is measured.
        name = f"{MAIL_USER}-{timezone.now():%Y%m%d%H%M%S}"
        owner = User.objects.create(username=name, email=f"{name}@localhost")
        try:
            embedding.embed_texts(["warm-up sentence"] * 4)
            with tempfile.TemporaryDirectory() as tmp:
                path = Path(tmp) / "bench.mbox"
                self._write_mbox(path, n, rng)
                size = path.stat().st_size
                peak_before = _peak_mb()
                started = time.perf_counter()

                def progress(report):  # a line now and then, so a long run shows how it goes
                    if report.processed % 1000 < portability.IMPORT_BATCH:
                        self.stderr.write(
                            f"mbox: {report.processed:,} of {report.total:,} messages, "
                            f"{time.perf_counter() - started:.0f} s, peak RSS growth {_peak_mb() - peak_before:.1f} MB"
                        )

                report = portability.import_path(owner=owner, path=path, progress=progress)
                seconds = time.perf_counter() - started
                peak_after = _peak_mb()
                started = time.perf_counter()
                again = portability.import_path(owner=owner, path=path)
                again_s = time.perf_counter() - started
            result = {
                "mbox_messages": n,
                "mbox_mb": round(size / 2**20, 1),
                "mbox_created": report.created,
                "mbox_failed": report.failed,
                "mbox_total": report.total,
                "mbox_import_s": round(seconds, 2),
                "mbox_messages_per_s": round(n / seconds, 1),
                "mbox_peak_rss_mb_before": peak_before,
                "mbox_peak_rss_growth_mb": round(peak_after - peak_before, 1),
                "mbox_reimport_created": again.created,
                "mbox_reimport_duplicates": again.duplicates,
                "mbox_reimport_s": round(again_s, 2),
            }
            # Said before the bench user's thousands of memories are deleted, which takes a while.
            self.stderr.write(json.dumps(result))
            return result
        finally:
            User.objects.filter(username=name).delete()

    def _mail_file(self, path: Path) -> dict:
        from portability.sources.mail import count_mbox

        User = get_user_model()
        User.objects.filter(username=MAIL_FILE_USER).delete()
        owner = User.objects.create(username=MAIL_FILE_USER, email=f"{MAIL_FILE_USER}@localhost")
        try:
            in_file = count_mbox(path)
            report = portability.import_path(owner=owner, path=path)
            messages = Memory.objects.filter(owner=owner, metadata__mail__has_key="key").exclude(
                metadata__mail__has_key="attachmentOf"
            )
            keys = list(messages.values_list("metadata__mail__key", flat=True))
            threads = Counter(messages.values_list("metadata__mail__threadId", flat=True))
            dated = messages.filter(metadata__mail__has_key="date").count()
            again = portability.import_path(owner=owner, path=path)
            return {
                "mail_file": path.name,
                "mail_file_messages": in_file,
                "mail_file_created": report.created,
                "mail_file_message_memories": len(keys),
                "mail_file_distinct_keys": len(set(keys)),
                "mail_file_attachments": report.created - len(keys),
                "mail_file_failed": report.failed,
                "mail_file_errors": report.errors[:5],
                "mail_file_duplicates": report.duplicates,
                "mail_file_dated": dated,
                "mail_file_threads_of_two_or_more": sum(1 for c in threads.values() if c > 1),
                "mail_file_reimport_created": again.created,
            }
        finally:
            User.objects.filter(username=MAIL_FILE_USER).delete()

    # --- export ---------------------------------------------------------------------------------

    def _export(self, n: int, rng: random.Random, rebuild: bool) -> dict:
        User = get_user_model()
        owner, _ = User.objects.get_or_create(username=EXPORT_USER, defaults={"email": f"{EXPORT_USER}@localhost"})
        if rebuild or Memory.objects.filter(owner=owner).count() != n:
            Memory.objects.filter(owner=owner).delete()
            self._build(owner, n, rng)
        chunks = MemoryChunk.objects.filter(owner=owner).count()
        with tempfile.TemporaryDirectory() as tmp:
            path = Path(tmp) / "export.zip"
            peak_before = _peak_mb()
            started = time.perf_counter()
            size = portability.export_to_file(owner=owner, path=path)
            seconds = time.perf_counter() - started
        return {
            "export_seconds": round(seconds, 2),
            "export_chunks": chunks,
            "export_mb": round(size / 2**20, 1),
            "export_memories_per_s": round(n / seconds, 1),
            "peak_rss_mb_before_export": peak_before,
            "peak_rss_mb_after_export": _peak_mb(),
        }

    def _build(self, owner, n: int, rng: random.Random) -> None:
        np_rng = np.random.default_rng(rng.randrange(2**32))
        now = timezone.now()
        for start in range(0, n, 1000):
            count = min(1000, n - start)
            texts = [document(rng, target_chars=1500) for _ in range(count)]
            with transaction.atomic():
                rows = Memory.objects.bulk_create(
                    [
                        Memory(
                            owner=owner,
                            title=sentence(rng)[:80],
                            content=text,
                            content_hash=hashlib.sha256(text.encode()).hexdigest(),
                            manual_tags=["bench"],
                            auto_tags=[{"tag": "upload", "confidence": 1.0}],
                            tags=["bench", "upload"],
                            metadata={"n": start + i},
                            created_at=now,
                            updated_at=now,
                        )
                        for i, text in enumerate(texts)
                    ]
                )
                vectors = np_rng.normal(size=(2 * count, 384)).astype(np.float32)
                vectors /= np.linalg.norm(vectors, axis=1, keepdims=True)
                with (
                    connection.cursor() as cursor,
                    cursor.copy(
                        "COPY memories_memorychunk (owner_id, memory_id, position, text, char_start, char_end, "
                        "text_hash, embedding, tier) FROM STDIN"
                    ) as copy,
                ):
                    for i, (memory, text) in enumerate(zip(rows, texts, strict=True)):
                        half = len(text) // 2
                        for position, (a, b) in enumerate(((0, half), (half, len(text)))):
                            part = text[a:b]
                            copy.write_row(
                                (
                                    owner.pk,
                                    memory.pk,
                                    position,
                                    part,
                                    a,
                                    b,
                                    hashlib.sha256(part.encode()).hexdigest(),
                                    "[" + ",".join(f"{x:.6f}" for x in vectors[2 * i + position]) + "]",
                                    "hot",
                                )
                            )
                lexical.index_memories(owner_id=owner.pk, memory_ids=[m.pk for m in rows])
            self.stderr.write(f"\rbuilt {start + count}/{n} memories", ending="")
        self.stderr.write("")

    # --- chat export ------------------------------------------------------------------------------

    def _chat_export(self, n: int, rng: random.Random) -> dict:
        User = get_user_model()
        User.objects.filter(username=CHAT_USER).delete()
        owner = User.objects.create(username=CHAT_USER, email=f"{CHAT_USER}@localhost")
        try:
            embedding.embed_texts(["warm-up sentence"] * 4)
            with tempfile.TemporaryDirectory() as tmp:
                path = Path(tmp) / "conversations.json"
                conversations, branches = write_chatgpt_export(path, n, rng)
                size = path.stat().st_size
                peak_before = _peak_mb()
                started = time.perf_counter()
                report = portability.import_path(owner=owner, path=path)
                seconds = time.perf_counter() - started
                peak_after = _peak_mb()
                started = time.perf_counter()
                again = portability.import_path(owner=owner, path=path)
                again_s = time.perf_counter() - started
            encode_s = self._encode_like_import(owner)
            return {
                "chat_messages": n,
                "chat_conversations": conversations,
                "chat_branch_messages_left_out": branches,
                "chat_export_mb": round(size / 2**20, 2),
                "chat_import_created": report.created,
                "chat_import_failed": report.failed,
                "chat_import_s": round(seconds, 2),
                "chat_messages_per_s": round(report.created / seconds, 1) if seconds else None,
                "chat_reimport_created": again.created,
                "chat_reimport_s": round(again_s, 2),
                "chat_reimport_messages_per_s": round(n / again_s, 1) if again_s else None,
                "chat_encode_only_s": round(encode_s, 2),
                "chat_model_alone_messages_per_s": round(report.created / encode_s, 1) if encode_s else None,
                "chat_import_overhead_ratio": round(seconds / encode_s, 3) if encode_s else None,
                "peak_rss_mb_before_chat_import": peak_before,
                "peak_rss_mb_after_chat_import": peak_after,
            }
        finally:
            User.objects.filter(username=CHAT_USER).delete()

    # --- round trip -----------------------------------------------------------------------------

    def _roundtrip(self, n: int, rng: random.Random) -> dict:
        User = get_user_model()
        User.objects.filter(username__in=ROUNDTRIP_USERS).delete()
        source, target, plain = (
            User.objects.create(username=name, email=f"{name}@localhost") for name in ROUNDTRIP_USERS
        )
        try:
            embedding.embed_texts(["warm-up sentence"] * 4)
            self._mixed_account(source, n, rng)
            with tempfile.TemporaryDirectory() as tmp:
                first = Path(tmp) / "first.zip"
                portability.export_to_file(owner=source, path=first)
                started = time.perf_counter()
                report = portability.import_path(owner=target, path=first)
                import_s = time.perf_counter() - started
                second = Path(tmp) / "second.zip"
                portability.export_to_file(owner=target, path=second)
                before_memories, before_sessions = comparable_records(first.read_bytes())
                after_memories, after_sessions = comparable_records(second.read_bytes())
                again = portability.import_path(owner=target, path=first)

                bare = Path(tmp) / "bare.zip"
                portability.export_to_file(owner=source, path=bare, vectors=False)
                started = time.perf_counter()
                plain_report = portability.import_path(owner=plain, path=bare)
                plain_s = time.perf_counter() - started
            encode_s = self._encode_like_import(plain)
            memory_diffs, examples = count_differences(before_memories, after_memories)
            session_diffs, session_examples = count_differences(before_sessions, after_sessions)
            return {
                "roundtrip_created": report.created,
                "roundtrip_failed": report.failed,
                "roundtrip_differences": memory_diffs + session_diffs,
                "roundtrip_difference_examples": examples + session_examples,
                "roundtrip_fields_compared": len(before_memories[0]) if before_memories else 0,
                "reimport_created": again.created,
                "reimport_duplicates": again.duplicates,
                "import_reusing_vectors_s": round(import_s, 2),
                "import_embedding_s": round(plain_s, 2),
                "import_embedding_created": plain_report.created,
                "encode_only_s": round(encode_s, 2),
                "import_overhead_ratio": round(plain_s / encode_s, 3) if encode_s else None,
            }
        finally:
            User.objects.filter(username__in=ROUNDTRIP_USERS).delete()

    def _encode_like_import(self, owner) -> float:
        """The model alone on the imported chunks, as the import calls it: the configured backend
        (embedding.embed_texts), each chunk's text under its memory's title, in the import's batches of
        memories. (Not the torch model on the bare chunk texts: with the default onnx-int8 backend that
        is about three times slower than what the import runs, and the ratio would flatter the import.)"""
        per_memory: dict[int, list[str]] = {}
        for memory_id, title, text in (
            MemoryChunk.objects.filter(owner=owner)
            .order_by("memory_id", "position")
            .values_list("memory_id", "memory__title", "text")
        ):
            per_memory.setdefault(memory_id, []).append(embedding.chunk_embedding_text(title, text))
        groups = list(per_memory.values())
        started = time.perf_counter()
        for i in range(0, len(groups), portability.IMPORT_BATCH):
            embedding.embed_texts([t for group in groups[i : i + portability.IMPORT_BATCH] for t in group])
        return time.perf_counter() - started

    def _mixed_account(self, owner, n: int, rng: random.Random) -> None:
        chats = max(2, n // 10)
        uploads = n - chats
        tags = ["work", "home", "garden", "travel", "Reading List", "ideas"]
        items = []
        for i in range(uploads):
            text = document(rng, target_chars=rng.choice([200, 600, 1500, 3000]))
            if i % 97 == 5 and items:  # some contents repeat, as notes do
                text = items[-1].content
            items.append(
                services.MemoryInput(
                    title=sentence(rng)[:60] if i % 3 else "",
                    content=text,
                    priority=round(rng.random(), 3) if i % 4 == 0 else None,
                    metadata={"n": i, "origin": rng.choice(["desk", "phone"]), "nested": {"k": [i, "x"]}}
                    if i % 2
                    else {},
                    manual_tags=rng.sample(tags, rng.randint(0, 3)),
                )
            )
        created = []
        for start in range(0, len(items), 200):
            created += services.memory_create_many(owner=owner, items=items[start : start + 200])
        session = None
        for i in range(chats):
            if i % 5 == 0:
                session = None
            session, _ = services.chat_message_send(owner=owner, content=sentence(rng), session=session)
        for memory in created[::25]:
            services.memory_pin(memory=memory, pinned=True)
        for memory in created[7::40]:
            services.memory_archive(memory=memory, reason="deleted at the source")
        for m in [*created[::3], *created[::9]]:
            services.memory_open(memory=m)
        services.memory_summaries_save(
            summaries={m.pk: (f"Summary of {m.title}", m.title[:60], m.content_hash) for m in created[::11]}
        )
        self.stderr.write(
            f"mixed account: {Memory.objects.filter(owner=owner).count()} memories, "
            f"{ChatSession.objects.filter(owner=owner).count()} chat sessions"
        )

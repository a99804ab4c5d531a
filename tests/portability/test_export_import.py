"""Export and import: the zip's contents, an exact round trip, idempotence, vector reuse, Markdown notes,
and bad input reported item by item with nothing half-imported."""

from __future__ import annotations

import io
import json
import zipfile
from datetime import UTC, datetime

import pytest

from graph.models import MemoryLink
from memories import embedding, services
from memories.models import ChatSession, Memory, MemoryChunk, TierMove
from portability import services as portability
from portability.sources import ImportSourceError, open_source
from tests.factories import UserFactory, make_memory

pytestmark = pytest.mark.django_db


def export_bytes(owner, **kwargs) -> bytes:
    return b"".join(portability.export_zip_stream(owner=owner, **kwargs))


def unpack(data: bytes) -> dict:
    with zipfile.ZipFile(io.BytesIO(data)) as archive:
        files = {name: archive.read(name) for name in archive.namelist()}
    return {
        "manifest": json.loads(files["manifest.json"]),
        "memories": [json.loads(line) for line in files["memories.jsonl"].splitlines()],
        "sessions": [json.loads(line) for line in files["chat_sessions.jsonl"].splitlines()],
        "names": sorted(files),
    }


def comparable(unpacked: dict) -> dict:
    """What a round trip must keep: everything but the ids the importing account gives out."""
    memories = []
    for record in unpacked["memories"]:
        record = {k: v for k, v in record.items() if k != "id"}
        if record["source"] == "chat":
            record["metadata"] = {k: v for k, v in record["metadata"].items() if k not in ("sessionId", "userId")}
        memories.append(record)
    sessions = [{k: v for k, v in s.items() if k != "id"} for s in unpacked["sessions"]]
    return {
        "memories": sorted(memories, key=lambda r: (r["createdAt"], r["contentHash"])),
        "sessions": sorted(sessions, key=lambda s: s["createdAt"]),
    }


def import_bytes(owner, data: bytes, name: str, tmp_path) -> portability.ImportReport:
    path = tmp_path / name
    path.write_bytes(data)
    return portability.import_path(owner=owner, path=path)


@pytest.fixture
def mixed_account(user):
    """Uploads with tags, priority and metadata; a pinned one; an archived one with a tier history; chat
    messages in a session; accesses and a summary."""
    first = make_memory(
        user,
        "The harbour master logs every ship that enters after dusk.",
        title="Harbour",
        manual_tags=["sea", "logs"],
        priority=0.9,
        metadata={"shelf": 4, "nested": {"a": [1, 2]}},
    )
    pinned = make_memory(user, "Pinned: the spare key is under the blue flowerpot.")
    services.memory_pin(memory=pinned, pinned=True)
    gone = make_memory(user, "A design document that was removed from the shared drive. " * 40)
    services.memory_archive(memory=gone, reason="deleted at the source")
    session, _ = services.chat_message_send(owner=user, content="What did we decide about the launch date?")
    services.chat_message_send(owner=user, content="We moved it to the second week of March.", session=session)
    services.memory_open(memory=first)
    services.memory_open(memory=first)
    services.memory_summaries_save(
        summaries={first.pk: ("Ships after dusk are logged.", "Ships logged", first.content_hash)}
    )
    return user


def test_the_export_holds_a_manifest_memories_and_chat_sessions_with_every_field(mixed_account):
    unpacked = unpack(export_bytes(mixed_account))
    assert unpacked["names"] == ["chat_sessions.jsonl", "manifest.json", "memories.jsonl"]
    manifest = unpacked["manifest"]
    assert (manifest["format"], manifest["formatVersion"]) == ("kybernesis-export", 1)
    assert manifest["embeddingModel"] == embedding.backend_id()
    assert manifest["counts"]["memories"] == 5 and manifest["counts"]["chatSessions"] == 1
    harbour = next(r for r in unpacked["memories"] if r["title"] == "Harbour")
    assert {
        "title",
        "content",
        "source",
        "metadata",
        "manualTags",
        "autoTags",
        "priority",
        "pinned",
        "tier",
        "tierHistory",
        "createdAt",
        "updatedAt",
        "lastAccessedAt",
        "accessCount",
        "summary",
        "chunks",
    } <= harbour.keys()
    assert harbour["manualTags"] == ["sea", "logs"] and harbour["accessCount"] == 2
    assert all({"tag", "confidence"} == t.keys() for t in harbour["autoTags"])
    assert len(harbour["chunks"][0]["embedding"]) > 0
    archived = next(r for r in unpacked["memories"] if r["tier"] == "archive")
    assert archived["tierHistory"][0]["toTier"] == "archive"
    assert [s["messageCount"] for s in unpacked["sessions"]] == [2]


def test_export_then_import_into_an_empty_account_then_export_again_is_identical(mixed_account, tmp_path):
    first = unpack(export_bytes(mixed_account))
    newcomer = UserFactory()
    report = import_bytes(newcomer, export_bytes(mixed_account), "export.zip", tmp_path)
    assert (report.created, report.failed, report.duplicates, report.error) == (5, 0, 0, "")
    second = unpack(export_bytes(newcomer))
    assert comparable(second) == comparable(first)
    # The chat messages point at the new account's session.
    session = ChatSession.objects.get(owner=newcomer)
    chat = Memory.objects.filter(owner=newcomer, source="chat")
    assert {m.metadata["sessionId"] for m in chat} == {session.pk}
    assert TierMove.objects.filter(owner=newcomer).count() == TierMove.objects.filter(owner=mixed_account).count()


def test_importing_twice_creates_nothing_new(mixed_account, tmp_path):
    data = export_bytes(mixed_account)
    newcomer = UserFactory()
    import_bytes(newcomer, data, "export.zip", tmp_path)
    again = import_bytes(newcomer, data, "export.zip", tmp_path)
    assert (again.created, again.duplicates, again.failed) == (0, 5, 0)
    assert Memory.objects.filter(owner=newcomer).count() == 5
    assert ChatSession.objects.filter(owner=newcomer).count() == 1


def test_vectors_are_reused_when_the_model_matches_and_recomputed_without_them(user, tmp_path, monkeypatch):
    make_memory(user, "A note whose vectors travel with it.")
    with_vectors, without = export_bytes(user), export_bytes(user, vectors=False)
    calls = []
    real = embedding.embed_texts
    monkeypatch.setattr(embedding, "embed_texts", lambda texts, **kw: calls.append(len(texts)) or real(texts, **kw))
    import_bytes(UserFactory(), with_vectors, "a.zip", tmp_path)
    assert calls == []
    other = UserFactory()
    import_bytes(other, without, "b.zip", tmp_path)
    assert calls == [1]
    original = MemoryChunk.objects.get(owner=user).embedding
    assert MemoryChunk.objects.get(owner=other).embedding == pytest.approx(original, abs=1e-5)


def _count_embeds(monkeypatch) -> list[int]:
    calls: list[int] = []
    real = embedding.embed_texts
    monkeypatch.setattr(embedding, "embed_texts", lambda texts, **kw: calls.append(len(texts)) or real(texts, **kw))
    return calls


def test_a_different_embedding_model_means_vectors_are_recomputed(user, tmp_path, monkeypatch):
    make_memory(user, "Vectors from another model must not be mixed in.")
    data = export_bytes(user)
    monkeypatch.setattr(embedding, "backend_id", lambda: "some/other-model")  # the importing instance's model
    calls = _count_embeds(monkeypatch)
    import_bytes(UserFactory(), data, "a.zip", tmp_path)
    assert calls == [1]


def test_a_stale_vector_is_recomputed_even_when_the_manifest_names_this_model(user, tmp_path, monkeypatch):
    """A chunk still holding a vector of the backend used before a switch (reembed not yet run) is
    exported with the key it was made under; the import embeds it again instead of taking it as
    this instance's, while the chunk whose key matches is reused."""
    memory = make_memory(user, "First paragraph of a note.\n\n" + "Second paragraph, long enough. " * 60)
    stale = MemoryChunk.objects.filter(memory=memory).order_by("position").first()
    MemoryChunk.objects.filter(pk=stale.pk).update(embedding_key="0" * 64)
    chunks = MemoryChunk.objects.filter(memory=memory).count()
    assert chunks >= 2
    data = export_bytes(user)
    calls = _count_embeds(monkeypatch)
    other = UserFactory()
    import_bytes(other, data, "a.zip", tmp_path)
    assert calls == [1]
    first = MemoryChunk.objects.filter(owner=other).order_by("position").first()
    assert first.embedding_key == embedding.embedding_key(embedding.chunk_embedding_text(memory.title, first.text))


def test_an_export_without_chunk_keys_reuses_vectors_only_when_its_manifest_names_this_model(
    user, tmp_path, monkeypatch
):
    make_memory(user, "An export made before chunks carried their embedding key.")
    unpacked = unpack(export_bytes(user))
    for record in unpacked["memories"]:
        for chunk in record["chunks"]:
            del chunk["embeddingKey"]

    def rezip(manifest_model: str) -> bytes:
        buffer = io.BytesIO()
        with zipfile.ZipFile(buffer, "w") as archive:
            archive.writestr("manifest.json", json.dumps({**unpacked["manifest"], "embeddingModel": manifest_model}))
            archive.writestr("memories.jsonl", "".join(json.dumps(r) + "\n" for r in unpacked["memories"]))
            archive.writestr("chat_sessions.jsonl", "".join(json.dumps(r) + "\n" for r in unpacked["sessions"]))
        return buffer.getvalue()

    calls = _count_embeds(monkeypatch)
    import_bytes(UserFactory(), rezip(embedding.backend_id()), "same.zip", tmp_path)
    assert calls == []
    import_bytes(UserFactory(), rezip("some/other-model"), "other.zip", tmp_path)
    assert calls == [1]


def test_the_export_is_streamed_batch_by_batch(user):
    import random

    from bench.synthetic import document

    rng = random.Random(3)
    for _ in range(4):
        make_memory(user, document(rng, target_chars=8_000))
    stream = portability.export_zip_stream(owner=user, batch_size=1)
    first = next(stream)  # the first batch is on its way before the later ones are read
    assert first.startswith(b"PK\x03\x04")
    pieces = [first, *stream]
    assert len(pieces) >= 3
    assert len(unpack(b"".join(pieces))["memories"]) == 4


# --- Markdown notes ------------------------------------------------------------------------------


def vault_zip(notes: dict[str, bytes | str], when=(2021, 3, 4, 5, 6, 8)) -> bytes:
    buffer = io.BytesIO()
    with zipfile.ZipFile(buffer, "w", zipfile.ZIP_DEFLATED) as archive:
        for name, body in notes.items():
            info = zipfile.ZipInfo(name, date_time=when)
            info.compress_type = zipfile.ZIP_DEFLATED
            archive.writestr(info, body)
    return buffer.getvalue()


def test_an_obsidian_vault_becomes_memories_with_tags_links_and_file_times(
    user, tmp_path, django_capture_on_commit_callbacks
):
    data = vault_zip(
        {
            "Projects/Garden.md": "---\ntags: [outdoor, Spring Work]\nstatus: active\n---\nPlant the beans near "
            "the [[Fence]] and see [[Compost|the heap]].\n",
            "Fence.md": "---\ntags: '#diy, repairs'\n---\nThe fence needs new posts.",
            "Compost.md": "Turn the compost every week.",
            ".obsidian/workspace.md": "ignored",
        }
    )
    with django_capture_on_commit_callbacks(execute=True):  # the graph task links the notes
        report = import_bytes(user, data, "vault.zip", tmp_path)
    assert (report.created, report.failed, report.error) == (3, 0, "")
    garden = Memory.objects.get(owner=user, title="Garden")
    assert garden.manual_tags == ["outdoor", "spring-work"]
    assert garden.metadata["wikilinks"] == ["Fence", "Compost"]
    assert garden.metadata["frontMatter"] == {"status": "active"}
    assert garden.content.startswith("Plant the beans")
    assert garden.created_at == datetime(2021, 3, 4, 5, 6, 8, tzinfo=UTC) == garden.updated_at
    assert Memory.objects.get(owner=user, title="Fence").manual_tags == ["diy", "repairs"]
    linked = {
        (link.source.title, link.target.title)
        for link in MemoryLink.objects.filter(owner=user, reason="linked_in_note").select_related("source", "target")
    }
    assert {frozenset(pair) for pair in linked} == {frozenset({"Garden", "Fence"}), frozenset({"Garden", "Compost"})}


def test_a_vault_folder_keeps_the_file_times(user, tmp_path):
    import os

    vault = tmp_path / "vault"
    (vault / "sub").mkdir(parents=True)
    note = vault / "sub" / "Idea.md"
    note.write_text("---\ncreated: 2020-01-02\n---\nAn idea from long ago.", encoding="utf-8")
    stamp = datetime(2022, 6, 7, 8, 9, 10, tzinfo=UTC).timestamp()
    os.utime(note, (stamp, stamp))
    report = portability.import_path(owner=user, path=vault)
    assert report.created == 1
    memory = Memory.objects.get(owner=user)
    assert memory.created_at == datetime(2020, 1, 2, tzinfo=UTC)
    assert memory.updated_at == datetime(2022, 6, 7, 8, 9, 10, tzinfo=UTC)
    assert memory.metadata["path"] == "sub/Idea.md"


# --- Bad input -----------------------------------------------------------------------------------


def test_bad_notes_are_reported_one_by_one_and_the_good_ones_imported(user, tmp_path):
    buffer = io.BytesIO()
    with zipfile.ZipFile(buffer, "w", zipfile.ZIP_DEFLATED) as archive:
        archive.writestr("good.md", "A perfectly good note.")
        archive.writestr("../../escape.md", "Climbing out.")
        archive.writestr("/etc/absolute.md", "Absolute.")
        archive.writestr("latin1.md", "Caf\xe9 cr\xe8me".encode("latin-1"))
        archive.writestr("bad-yaml.md", "---\ntags: [unclosed\n---\nBody.")
        archive.writestr("list-yaml.md", "---\n- just\n- a list\n---\nBody.")
        archive.writestr("bomb.md", b"a" * (20 * 1024 * 1024))
    report = import_bytes(user, buffer.getvalue(), "notes.zip", tmp_path)
    errors = {e["item"]: e["error"] for e in report.errors}
    assert report.created == 1 and report.failed == 6
    assert "climbs out of the archive" in errors["../../escape.md"]
    assert "absolute path" in errors["/etc/absolute.md"]
    assert "not UTF-8" in errors["latin1.md"]
    assert "front matter is not YAML" in errors["bad-yaml.md"]
    assert "not a YAML mapping" in errors["list-yaml.md"]
    assert "zip bomb" in errors["bomb.md"]
    assert list(Memory.objects.filter(owner=user).values_list("title", flat=True)) == ["good"]


def test_an_entry_that_inflates_past_its_declared_size_is_stopped(user, tmp_path):
    buffer = io.BytesIO()
    with zipfile.ZipFile(buffer, "w", zipfile.ZIP_STORED) as archive:
        archive.writestr("note.md", b"x" * 5000)
    data = bytearray(buffer.getvalue())
    # Lie in the central directory: declare 100 bytes for an entry that holds 5,000.
    central = data.rfind(b"PK\x01\x02")
    data[central + 24 : central + 28] = (100).to_bytes(4, "little")
    report = import_bytes(user, bytes(data), "liar.zip", tmp_path)
    assert report.created == 0 and report.failed == 1
    assert Memory.objects.filter(owner=user).count() == 0


def test_an_unknown_manifest_version_is_refused_with_nothing_imported(mixed_account, tmp_path):
    data = export_bytes(mixed_account)
    buffer = io.BytesIO()
    with zipfile.ZipFile(io.BytesIO(data)) as source, zipfile.ZipFile(buffer, "w") as target:
        for name in source.namelist():
            body = source.read(name)
            if name == "manifest.json":
                body = json.dumps({**json.loads(body), "formatVersion": 99}).encode()
            target.writestr(name, body)
    newcomer = UserFactory()
    report = import_bytes(newcomer, buffer.getvalue(), "future.zip", tmp_path)
    assert "format version 99 is not supported" in report.error and report.created == 0
    assert Memory.objects.filter(owner=newcomer).count() == 0


def test_one_bad_jsonl_line_is_reported_and_the_other_lines_imported(user, tmp_path):
    lines = [
        json.dumps({"title": "One", "content": "The first good line."}),
        "{this is not json",
        json.dumps({"title": "Two", "content": "   "}),
        json.dumps({"title": "Three", "content": "A third, with a bad priority.", "priority": 3}),
        json.dumps(["not", "an", "object"]),
        json.dumps({"title": "Four", "content": "The last good line.", "manualTags": ["Kept Tag"]}),
    ]
    path = tmp_path / "memories.jsonl"
    path.write_text("\n".join(lines) + "\n", encoding="utf-8")
    report = portability.import_path(owner=user, path=path)
    errors = {e["item"]: e["error"] for e in report.errors}
    assert (report.created, report.failed) == (2, 4)
    assert errors["memories.jsonl line 2"].startswith("not valid JSON")
    assert errors["memories.jsonl line 3"] == "content: content is empty"
    assert errors["memories.jsonl line 4"] == "priority: priority must be from 0 to 1, got 3"
    assert "JSON object" in errors["memories.jsonl line 5"]
    assert set(Memory.objects.filter(owner=user).values_list("title", flat=True)) == {"One", "Four"}
    assert Memory.objects.get(owner=user, title="Four").manual_tags == ["kept-tag"]


def test_a_file_that_is_not_a_zip_is_refused_clearly(user, tmp_path):
    path = tmp_path / "fake.zip"
    path.write_bytes(b"this is not a zip")
    with pytest.raises(ImportSourceError, match="not a readable zip"):
        open_source(path)
    assert "not a readable zip" in portability.import_path(owner=user, path=path).error


def test_a_chat_message_without_its_session_does_not_claim_one_of_the_accounts_sessions(user, tmp_path):
    mine, _ = services.chat_message_send(owner=user, content="A message in my own session.")
    path = tmp_path / "memories.jsonl"
    path.write_text(
        json.dumps(
            {
                "title": "Stray",
                "content": "A chat line from elsewhere.",
                "source": "chat",
                "metadata": {"sessionId": mine.pk, "userId": 999, "messageIndex": 0},
            }
        )
        + "\n"
    )
    assert portability.import_path(owner=user, path=path).created == 1
    stray = Memory.objects.get(owner=user, title="Stray")
    assert stray.metadata == {"messageIndex": 0}
    assert [m.content for m in selectors_messages(mine)] == ["A message in my own session."]


def selectors_messages(session):
    from memories.selectors import chat_session_messages

    return chat_session_messages(session=session)


@pytest.mark.parametrize(
    "fields",
    [
        {"content": "   "},
        {"content": "Fine.", "priority": 1.5},
        {"content": "Fine.", "source": "fax"},
        {"content": "Fine.", "title": "t" * 501},
        {"content": "Fine.", "tags": ["x" * 65]},
        {"content": "Fine.", "metadata": [1, 2]},
    ],
)
def test_an_import_record_is_checked_by_the_same_code_and_messages_as_a_create(user, tmp_path, fields):
    with pytest.raises(services.MemoryInputError) as refused:
        services.memory_create(
            owner=user,
            title=fields.get("title"),
            content=fields["content"],
            source=fields.get("source", "upload"),
            priority=fields.get("priority"),
            metadata=fields.get("metadata"),
            manual_tags=fields.get("tags", ()),
        )
    record = {("manualTags" if k == "tags" else k): v for k, v in fields.items()}
    path = tmp_path / "memories.jsonl"
    path.write_text(json.dumps(record) + "\n", encoding="utf-8")
    report = portability.import_path(owner=user, path=path)
    assert report.errors == [{"item": "memories.jsonl line 1", "error": f"{refused.value.field}: {refused.value}"}]
    assert Memory.objects.filter(owner=user).count() == 0


def test_a_record_with_nan_in_its_metadata_is_one_error_not_a_database_failure(user, tmp_path):
    path = tmp_path / "memories.jsonl"
    path.write_text(
        '{"content": "Metadata that JSON cannot hold.", "metadata": {"score": NaN}}\n'
        + json.dumps({"content": "A good line after it."})
        + "\n",
        encoding="utf-8",
    )
    report = portability.import_path(owner=user, path=path)
    assert (report.created, report.failed) == (1, 1)
    assert "metadata.score" in report.errors[0]["error"] and "could not be stored" not in report.errors[0]["error"]
    assert list(Memory.objects.filter(owner=user).values_list("content", flat=True)) == ["A good line after it."]


def test_a_clean_text_refusal_names_its_field_once(user, tmp_path):
    path = tmp_path / "memories.jsonl"
    path.write_text(
        json.dumps({"content": "lone \ud800 surrogate"})
        + "\n"
        + json.dumps({"content": "x", "metadata": {"a": "\x00"}}),
        encoding="utf-8",
    )
    report = portability.import_path(owner=user, path=path)
    assert [e["error"] for e in report.errors] == [
        "content: contains a lone surrogate (\\ud800-\\udfff), which is not valid Unicode",
        "metadata.a: contains a NUL byte (\\u0000), which text cannot hold",
    ]


def test_an_export_stopped_part_way_leaves_no_half_written_archive_behind(user, monkeypatch):
    """An export that fails part-way (or whose download is cancelled) leaves its archive nothing to
    write: left open and collected after its sink, it would try to finish itself there and log
    "Exception ignored in: ZipFile.__del__ ... I/O operation on closed file"."""
    import zipfile as zipfile_module

    from portability.services import export

    for i in range(3):
        make_memory(user, f"Memory number {i} of an export that fails.")
    real, calls, archives = export._chunk_vectors, [], []

    def failing(ids):
        calls.append(ids)
        if len(calls) == 2:
            raise RuntimeError("the database went away")
        return real(ids)

    class Recorded(zipfile_module.ZipFile):
        def __init__(self, *args, **kwargs):
            super().__init__(*args, **kwargs)
            archives.append(self)

    monkeypatch.setattr(export, "_chunk_vectors", failing)
    monkeypatch.setattr(export.zipfile, "ZipFile", Recorded)
    with pytest.raises(RuntimeError):
        b"".join(portability.export_zip_stream(owner=user, batch_size=1))
    stream = portability.export_zip_stream(owner=user, batch_size=1)
    next(stream)
    stream.close()  # a cancelled download
    assert len(archives) == 2 and all(a.fp is None for a in archives)  # nothing left for __del__ to write

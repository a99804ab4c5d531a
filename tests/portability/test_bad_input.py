"""Import input beyond the obvious bad cases: every one is an error of its own item in the report, never
"the import stopped", nothing of a refused item is left behind, and the account stays readable."""

from __future__ import annotations

import io
import json
import struct
import zipfile
from datetime import UTC, datetime

import pytest

from memories.models import ChatSession, Memory
from portability import services as portability
from portability import sources
from tests.factories import UserFactory

pytestmark = pytest.mark.django_db

MANIFEST = {
    "format": "kybernesis-export",
    "formatVersion": 1,
    "embeddingModel": "some/model",
    "embeddingDimensions": 384,
    "includesVectors": False,
    "counts": {"memories": 2},
}


def export_zip(tmp_path, memories: list[str], *, sessions: str | None = None, manifest=None):
    path = tmp_path / "export.zip"
    with zipfile.ZipFile(path, "w", zipfile.ZIP_DEFLATED) as archive:
        archive.writestr("manifest.json", json.dumps(manifest or MANIFEST))
        archive.writestr("memories.jsonl", "\n".join(memories) + "\n")
        if sessions is not None:
            archive.writestr("chat_sessions.jsonl", sessions)
    return path


def jsonl_or_export(tmp_path, lines: list[str], *, in_zip: bool):
    """The lines as a bare memories.jsonl, or as the memories.jsonl of an export zip."""
    if in_zip:
        return export_zip(tmp_path, lines)
    path = tmp_path / "memories.jsonl"
    path.write_text("\n".join(lines) + "\n", encoding="utf-8")
    return path


def errors_of(report) -> dict[str, str]:
    return {e["item"]: e["error"] for e in report.errors}


def test_a_jsonl_file_is_reported_under_the_name_it_was_uploaded_with(user, tmp_path):
    """The worker reads the upload from a file named after a random id, a name that means nothing to
    the person who sent it."""
    kept = tmp_path / "3e1eb6daa9ea4b0cad943684d878839c-.jsonl"
    kept.write_text(json.dumps({"content": "Fine."}) + "\n{broken\n", encoding="utf-8")
    report = portability.import_path(owner=user, path=kept, name="my-notes.jsonl")
    assert list(errors_of(report)) == ["my-notes.jsonl line 2"]


@pytest.mark.parametrize("in_zip", [False, True], ids=["jsonl", "export-zip"])
def test_a_line_over_the_limit_is_one_error_and_the_lines_after_it_keep_their_numbers(
    user, tmp_path, monkeypatch, in_zip
):
    monkeypatch.setattr(sources.reading, "MAX_ENTRY_BYTES", 1000)
    lines = [
        json.dumps({"content": "Before the long line."}),
        json.dumps({"content": "y" * 5000}),  # five times the limit: read a limit at a time, then skipped
        json.dumps({"content": "After the long line."}),
    ]
    report = portability.import_path(owner=user, path=jsonl_or_export(tmp_path, lines, in_zip=in_zip))
    assert errors_of(report) == {"memories.jsonl line 2": "the line is over 1,000 bytes"}
    assert (report.created, report.failed, report.error) == (2, 1, "")


def test_lines_of_never_holds_more_than_the_limit_of_a_line():
    stream = io.BytesIO(b"short\n" + b"z" * 10_000 + b"\nlast")
    lines = list(sources.lines_of(stream, limit=100))
    assert lines[0] == b"short\n" and len(lines[1]) == 101 and lines[2] == b"last" and len(lines) == 3


@pytest.mark.parametrize("counts", [[2], {"memories": "many"}, {"memories": -1}, "two"])
def test_manifest_counts_that_are_not_whole_numbers_leave_only_the_total_unknown(user, tmp_path, counts):
    """Read blindly, they would stop the import ("'list' object has no attribute 'get'", "Field 'total'
    expected a number")."""
    path = export_zip(tmp_path, [json.dumps({"content": "A memory."})], manifest={**MANIFEST, "counts": counts})
    report = portability.import_path(owner=user, path=path)
    assert (report.created, report.error, report.total) == (1, "", None)


@pytest.mark.parametrize(
    "line, error",
    [
        ("{broken", "not valid JSON"),
        (json.dumps({"id": 1, "title": "S", "messageCount": "many"}), "messageCount must be a whole number"),
        (json.dumps({"id": 1, "title": "S", "messageCount": 10**12}), "the largest that can be stored"),
        (json.dumps({"id": 1, "title": "S", "createdAt": 5}), "createdAt is not an ISO 8601 date and time"),
        (json.dumps({"id": 1, "title": "a\u0000b"}), "title: contains a NUL byte"),
        (json.dumps({"title": "no id"}), "id is missing"),
    ],
)
def test_a_bad_chat_session_line_is_one_error_and_its_messages_come_in_without_it(user, tmp_path, line, error):
    """Read blindly, each of these would stop the whole import, some after creating an empty session."""
    good = json.dumps({"id": 2, "title": "Kept", "messageCount": 1, "createdAt": "2024-01-02T03:04:05+00:00"})
    memories = [
        json.dumps({"content": "A message of the bad session.", "source": "chat", "metadata": {"sessionId": 1}}),
        json.dumps({"content": "A message of the good one.", "source": "chat", "metadata": {"sessionId": 2}}),
    ]
    report = portability.import_path(owner=user, path=export_zip(tmp_path, memories, sessions=f"{line}\n{good}\n"))
    assert report.error == "" and report.created == 2
    assert error in errors_of(report)["chat_sessions.jsonl line 1"]
    kept = ChatSession.objects.get(owner=user)
    assert (kept.title, ChatSession.objects.filter(owner=user).count()) == ("Kept", 1)
    by_content = {m.content: m.metadata for m in Memory.objects.filter(owner=user)}
    assert by_content["A message of the good one."]["sessionId"] == kept.pk
    assert "sessionId" not in by_content["A message of the bad session."]


@pytest.mark.parametrize(
    "record, error",
    [
        ({"summary": "a\u0000b"}, "summary: contains a NUL byte"),
        ({"tier": "hot", "tierReason": "\u0000"}, "tierReason: contains a NUL byte"),
        ({"autoTags": [{"tag": "a\u0000", "confidence": 1}]}, "autoTags: a tag contains a NUL byte"),
        ({"autoTags": [{"tag": "a", "confidence": True}]}, "autoTags must be a list"),
        ({"autoTags": [{"tag": "a", "confidence": 7}]}, "must be from 0 to 1, got 7"),
        ({"accessCount": 10**30}, "accessCount is 1,000,000,000,000,000,000,000,000,000,000; the largest"),
        ({"createdAt": "2020-13-45T00:00:00"}, "createdAt is not an ISO 8601 date and time"),
        ({"createdAt": "9999-12-31T23:00:00-05:00"}, "createdAt is outside the years 1 to 9999 in UTC"),
        ({"lastAccessedAt": "0001-01-01T00:00:00+05:00"}, "lastAccessedAt is outside the years"),
        ({"original": {"path": "originals/x", "name": "n", "sha256": "c" * 64, "pageCount": 2**40}}, "pageCount is"),
    ],
)
def test_stored_state_that_its_column_cannot_hold_is_refused_by_field(user, tmp_path, record, error):
    """Unchecked, these would be "could not be stored: <PostgreSQL's words>", or stop the import (a
    date that is no day), or be stored and break every later list and export of the account (year
    10000)."""
    path = tmp_path / "memories.jsonl"
    path.write_text(
        json.dumps({"content": "The record under test.", **record}) + "\n" + json.dumps({"content": "Fine."}) + "\n",
        encoding="utf-8",
    )
    report = portability.import_path(owner=user, path=path)
    assert report.error == "" and report.created == 1
    assert error in errors_of(report)["memories.jsonl line 1"], report.errors
    assert [m.content for m in Memory.objects.filter(owner=user)] == ["Fine."]
    assert b"".join(portability.export_zip_stream(owner=user))  # the account still exports


def test_an_auto_tag_confidence_of_nan_is_refused_not_stored_in_jsonb(tmp_path):
    owner = UserFactory()
    path = tmp_path / "memories.jsonl"
    path.write_text('{"content": "x", "autoTags": [{"tag": "a", "confidence": NaN}]}\n', encoding="utf-8")
    report = portability.import_path(owner=owner, path=path)
    assert "must be from 0 to 1, got nan" in report.errors[0]["error"]
    assert not Memory.objects.filter(owner=owner).exists()


# --- Zip times -------------------------------------------------------------------------------------


def _note_zip(extra: bytes, local=(2024, 4, 15, 8, 0, 0)) -> bytes:
    """A note zipped on a machine four hours behind UTC: the zip's own time field says 08:00 local."""
    buffer = io.BytesIO()
    with zipfile.ZipFile(buffer, "w") as archive:
        info = zipfile.ZipInfo("Roadmap.md", date_time=local)
        info.extra = extra
        archive.writestr(info, "The roadmap.")
    return buffer.getvalue()


EXACT = datetime(2024, 4, 15, 12, 0, 0, tzinfo=UTC)


@pytest.mark.parametrize(
    "extra",
    [
        # Info-ZIP's extended timestamp (macOS, Linux zip): flags (bit 0: mtime), then seconds since 1970.
        struct.pack("<HHBI", 0x5455, 5, 1, int(EXACT.timestamp())),
        # The NTFS field (Windows tools): 4 reserved bytes, attribute 1 of 24 bytes: mtime, atime, ctime.
        struct.pack(
            "<HHIHHQQQ",
            0x000A,
            32,
            0,
            1,
            24,
            *[int((EXACT - datetime(1601, 1, 1, tzinfo=UTC)).total_seconds() * 10_000_000)] * 3,
        ),
    ],
    ids=["extended-timestamp", "ntfs"],
)
def test_a_note_keeps_its_exact_file_time_from_the_zips_timestamp_field(user, tmp_path, extra):
    """The zip's own field has no time zone: read as UTC, it would be four hours off for this note."""
    path = tmp_path / "vault.zip"
    path.write_bytes(_note_zip(extra))
    assert portability.import_path(owner=user, path=path).created == 1
    assert Memory.objects.get(owner=user).updated_at == EXACT


def test_a_zip_without_a_timestamp_field_reads_its_local_time_as_utc(user, tmp_path):
    path = tmp_path / "vault.zip"
    path.write_bytes(_note_zip(b""))
    portability.import_path(owner=user, path=path)
    assert Memory.objects.get(owner=user).updated_at == datetime(2024, 4, 15, 8, 0, 0, tzinfo=UTC)


@pytest.mark.parametrize("tags", ["[a, {nested: map}]", "[a, [b, c]]", "{one: two}"])
def test_front_matter_tags_holding_a_mapping_are_an_error_not_a_strange_tag(user, tmp_path, tags):
    """Taken as text, they would become tags like "{'nested':-'map'}"."""
    path = tmp_path / "note.md"
    path.write_text(f"---\ntags: {tags}\n---\nA note.\n", encoding="utf-8")
    report = portability.import_path(owner=user, path=path)
    assert report.created == 0 and "tags" in report.errors[0]["error"]


DEEP = "[" * 100_000 + "]" * 100_000  # deeper than Python's parsers recurse
LONG_NUMBER = "1" * 5000  # more digits than Python converts to an int


@pytest.mark.parametrize(
    "line, error",
    [
        (f'{{"content": "x", "metadata": {{"a": {DEEP}}}}}', "nested more than"),
        (f'{{"content": "x", "priority": {LONG_NUMBER}}}', "Exceeds the limit"),
    ],
    ids=["deep", "long-integer"],
)
@pytest.mark.parametrize("in_zip", [False, True], ids=["jsonl", "export-zip"])
def test_a_line_python_cannot_parse_is_one_error_not_a_stopped_import(user, tmp_path, monkeypatch, line, error, in_zip):
    """Unguarded, both would stop the import with a RecursionError or a ValueError from json."""
    monkeypatch.setattr(sources.reading, "MAX_ENTRY_BYTES", 1_000_000)
    lines = [line, json.dumps({"content": "After the bad line."})]
    report = portability.import_path(owner=user, path=jsonl_or_export(tmp_path, lines, in_zip=in_zip))
    assert report.error == "" and (report.created, report.failed) == (1, 1)
    assert error in errors_of(report)["memories.jsonl line 1"]


def test_a_manifest_nested_too_deeply_is_a_refused_import(user, tmp_path):
    path = tmp_path / "export.zip"
    with zipfile.ZipFile(path, "w", zipfile.ZIP_DEFLATED) as archive:
        archive.writestr("manifest.json", DEEP)
        archive.writestr("memories.jsonl", json.dumps({"content": "A memory."}) + "\n")
    report = portability.import_path(owner=user, path=path)
    assert "manifest.json is not valid JSON here: it is nested" in report.error and report.created == 0


def test_front_matter_nested_too_deeply_is_an_error_of_that_note(user, tmp_path):
    path = tmp_path / "note.md"
    path.write_text("---\ntags: " + "[" * 20_000 + "]" * 20_000 + "\n---\nA note.\n", encoding="utf-8")
    report = portability.import_path(owner=user, path=path)
    assert report.created == 0 and "nested too deeply" in report.errors[0]["error"]

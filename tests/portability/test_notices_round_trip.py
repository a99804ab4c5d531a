"""Export and import keep a memory's notices and a title the person chose; an import normalises the
text like every other door, and accepts an export made before normalisation."""

from __future__ import annotations

import json

import pytest

from memories import services
from memories.models import Memory, content_hash
from portability import services as portability
from tests.factories import UserFactory
from tests.portability.test_export_import import export_bytes, import_bytes, unpack

pytestmark = pytest.mark.django_db

SCAN_NOTICE = "pages 1–3: no text layer, read by OCR"


def test_export_writes_the_notices_and_import_reads_them_back(user, tmp_path):
    memory = services.memory_create(owner=user, title="Scan", content="Page four.", notices=[SCAN_NOTICE])
    services.memory_update(memory=memory, title="My scan")
    [record] = unpack(export_bytes(user))["memories"]
    assert record["notices"] == [SCAN_NOTICE] and record["titleEditedAt"]

    newcomer = UserFactory()
    report = import_bytes(newcomer, export_bytes(user), "export.zip", tmp_path)

    assert (report.created, report.failed) == (1, 0)
    imported = Memory.objects.get(owner=newcomer)
    assert imported.notices == [SCAN_NOTICE]
    assert imported.title == "My scan" and imported.title_edited_at is not None
    [again] = unpack(export_bytes(newcomer))["memories"]
    assert again["notices"] == record["notices"] and again["titleEditedAt"] == record["titleEditedAt"]


def test_an_import_normalises_the_text_and_adds_the_notices_of_what_it_dropped(user, tmp_path):
    raw = "The conﬁguration.\n(cid:1)(cid:2)"
    line = {"title": "Old", "content": raw, "contentHash": content_hash(raw), "notices": [SCAN_NOTICE]}
    path = tmp_path / "memories.jsonl"
    path.write_text(json.dumps(line) + "\n", encoding="utf-8")

    report = portability.import_path(owner=user, path=path)

    assert (report.created, report.failed) == (1, 0), report.errors
    memory = Memory.objects.get(owner=user)
    assert memory.content == "The configuration.\n"
    assert memory.content_hash == content_hash("The configuration.\n")
    assert memory.notices == [SCAN_NOTICE, "Dropped 14 characters that were not text: (cid:…) codes from a PDF (14)."]


def test_a_content_hash_that_matches_neither_text_is_still_refused(user, tmp_path):
    line = {"title": "Edited", "content": "The conﬁguration.", "contentHash": content_hash("something else")}
    path = tmp_path / "memories.jsonl"
    path.write_text(json.dumps(line) + "\n", encoding="utf-8")
    report = portability.import_path(owner=user, path=path)
    assert report.failed == 1 and "contentHash does not match" in report.errors[0]["error"]


@pytest.mark.parametrize("notices", ["one string", [1], {"a": "b"}])
def test_notices_that_are_not_a_list_of_strings_are_one_error(user, tmp_path, notices):
    path = tmp_path / "memories.jsonl"
    path.write_text(json.dumps({"title": "x", "content": "Body.", "notices": notices}) + "\n", encoding="utf-8")
    report = portability.import_path(owner=user, path=path)
    assert (report.created, report.failed) == (0, 1)
    assert report.errors[0]["error"] == "notices must be a list of strings"

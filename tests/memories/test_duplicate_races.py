"""Duplicate detection under concurrency, in real threads against the real database: of identical
uploads or creates sent at the same time, exactly one stores a memory and the rest point at it."""

from __future__ import annotations

import threading

import pytest
from django.db import connection
from django.test.client import MULTIPART_CONTENT

from core.auth import api_token_create
from memories.models import Memory
from tests.conftest import ApiClient

pytestmark = pytest.mark.django_db(transaction=True)

CLIENTS = 10


def _concurrently(call) -> list:
    barrier = threading.Barrier(CLIENTS)
    out: list = [None] * CLIENTS

    def run(i: int):
        try:
            barrier.wait(timeout=60)
            out[i] = call()
        except Exception as exc:
            out[i] = exc
        finally:
            connection.close()

    threads = [threading.Thread(target=run, args=(i,)) for i in range(CLIENTS)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join(timeout=300)
    return out


def test_ten_concurrent_uploads_of_identical_bytes_create_exactly_one(user):
    from django.core.files.uploadedfile import SimpleUploadedFile

    _, key = api_token_create(user=user)
    data = b"Quarterly budget review: Alice Smith presents the numbers to the board in Paris."

    def send():
        client = ApiClient(token=key)
        response = client.post(
            "/api/v1/uploads", {"files": [SimpleUploadedFile("same.txt", data)]}, content_type=MULTIPART_CONTENT
        )
        return response.status_code, response.json()["results"][0]

    results = _concurrently(send)

    assert all(not isinstance(r, Exception) for r in results), results
    assert {status for status, _ in results} == {200}
    statuses = sorted(item["status"] for _, item in results)
    assert statuses == ["created"] + ["duplicate"] * (CLIENTS - 1)
    assert Memory.objects.filter(owner=user).count() == 1
    memory = Memory.objects.get(owner=user)
    assert all(item["memory"]["id"] == memory.pk for _, item in results)


def test_ten_concurrent_api_creates_of_identical_content_create_exactly_one(user):
    _, key = api_token_create(user=user)

    def send():
        response = ApiClient(token=key).post("/api/v1/memories", {"content": "The same note, sent ten times."})
        return response.status_code, response.json()["id"]

    results = _concurrently(send)

    assert all(not isinstance(r, Exception) for r in results), results
    assert sorted(status for status, _ in results) == [200] * (CLIENTS - 1) + [201]
    assert len({memory_id for _, memory_id in results}) == 1
    assert Memory.objects.filter(owner=user).count() == 1


def test_a_repeated_api_create_returns_the_existing_memory_with_200(api, user):
    first = api.post("/api/v1/memories", {"content": "Written once."})
    again = api.post("/api/v1/memories", {"title": "Another title", "content": "Written once."})
    assert (first.status_code, again.status_code) == (201, 200)
    assert again.json()["id"] == first.json()["id"]
    assert Memory.objects.filter(owner=user).count() == 1


def test_imports_of_one_export_run_at_once_store_each_memory_and_session_once(user, tmp_path):
    """A double-clicked Import queues two jobs that two workers run at the same time: each may look for
    the contents before either stored any, and without the content lock the account would end with
    every memory twice."""
    from memories import services
    from memories.models import ChatSession
    from portability import services as portability
    from tests.factories import UserFactory, make_memory

    for i in range(6):
        make_memory(user, f"Memory {i} of an account that is imported twice at once.")
    make_memory(user, "Memory 0 of an account that is imported twice at once.")  # a content held twice
    services.chat_message_send(owner=user, content="A chat line that comes along.")
    path = tmp_path / "export.zip"
    portability.export_to_file(owner=user, path=path)
    newcomer = UserFactory()

    reports = _concurrently(lambda: portability.import_path(owner=newcomer, path=path))

    assert all(not isinstance(r, Exception) for r in reports), reports
    assert sum(r.created for r in reports) == Memory.objects.filter(owner=user).count() == 8
    assert sum(r.created + r.duplicates for r in reports) == 8 * CLIENTS
    assert Memory.objects.filter(owner=newcomer).count() == 8
    assert ChatSession.objects.filter(owner=newcomer).count() == 1

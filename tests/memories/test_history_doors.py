"""Each door that is not a request names itself in versions and activity: the sleep agent, a connector
sync, an import, a queued upload; and the actors a request sets (a person, an API token, MCP, admin)."""

from __future__ import annotations

import json

import pytest

from core.actors import Actor, acting
from memories import services
from memories.models import Activity, MemoryVersion, UploadJob
from portability import services as portability
from sleep import pipeline
from sleep.models import SleepRun
from tests.factories import ApiTokenFactory, make_memory

pytestmark = pytest.mark.django_db


def labels(memory) -> list[str]:
    return [
        (v.pgh_context or {}).get("label")
        for v in MemoryVersion.objects.filter(pgh_obj_id=memory.pk).order_by("version")
    ]


def trail(memory) -> list[tuple[str, str]]:
    return [(a.kind, a.actor_label) for a in Activity.objects.filter(memory=memory).order_by("created_at", "id")]


def test_the_sleep_agent_names_itself_on_the_summaries_it_writes(user):
    memory = make_memory(
        user,
        "Alice works with the Product Team in San Francisco. The team ships the onboarding redesign in March. "
        "Alice reviews every release with the designers before launch.",
    )
    run, _ = pipeline.sleep_run_request(trigger=SleepRun.Trigger.MANUAL, owner=user)
    pipeline.sleep_run_execute(run_id=run.pk)
    memory.refresh_from_db()
    assert memory.summary
    assert labels(memory)[-1] == "sleep agent"
    assert ("summarised", "sleep agent") in trail(memory)


def test_an_import_names_the_file_it_came_from(user, tmp_path):
    path = tmp_path / "notes.jsonl"
    path.write_text(json.dumps({"content": "Imported note about tides."}) + "\n", encoding="utf-8")
    report = portability.import_path(owner=user, path=path, name="my-notes.jsonl")
    assert report.created == 1
    memory = user.memories.get()
    assert labels(memory) == ["import of my-notes.jsonl"]
    assert trail(memory) == [("imported", "import of my-notes.jsonl")]


def test_a_queued_upload_is_stored_for_the_person_who_uploaded_it(user):
    job = UploadJob.objects.create(owner=user, filename="big.txt", title="big", text="A long text about harbours.")
    services.upload_job_run(job_id=job.pk)
    job.refresh_from_db()
    assert labels(job.memory) == [user.username]
    assert trail(job.memory) == [("created", user.username)]


@pytest.mark.parametrize(
    ("make_actor", "label"),
    [
        (lambda user, token: Actor.person(user), "{user}"),
        (lambda user, token: Actor.api_token(token), "API token 'laptop'"),
        (lambda user, token: Actor.api_token(token, via_mcp=True), "MCP with token 'laptop'"),
        (lambda user, token: Actor.admin(user), "admin {user}"),
    ],
    ids=["person", "token", "mcp", "admin"],
)
def test_the_actor_a_request_sets_is_on_its_version_and_activity(user, make_actor, label):
    token = ApiTokenFactory(user=user, name="laptop")
    memory = make_memory(user, "The tide tables for May.")
    with acting(make_actor(user, token)):
        services.memory_update(memory=memory, title="Tides")
        services.memory_tags_add(memory=memory, tags=["sea"])
    expected = label.format(user=user.username)
    assert labels(memory)[1:] == [expected, expected]
    assert trail(memory)[1:] == [("edited", expected), ("tagged", expected)]
    entry = Activity.objects.filter(memory=memory, kind="tagged").get()
    assert entry.actor_user_id == user.pk
    assert entry.detail == {"added": ["sea"], "removed": []}

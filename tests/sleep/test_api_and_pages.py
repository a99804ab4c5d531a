"""Sleep runs through the API and the pages: manual trigger, history, detail, and who sees what."""

from __future__ import annotations

import pytest

from sleep import pipeline
from sleep.models import SleepRun
from tests.factories import make_memory


@pytest.fixture
def run_now(django_capture_on_commit_callbacks):
    """Execute the queued cycle the way the worker would, right after the request commits."""

    def call(fn, *args, **kwargs):
        with django_capture_on_commit_callbacks(execute=True):
            return fn(*args, **kwargs)

    return call


def test_api_starts_a_cycle_over_my_memories_and_reports_its_steps(api, user, run_now):
    make_memory(user, content="Alice works with the Product Team in San Francisco.")
    response = run_now(api.post, "/api/v1/sleep/runs")
    assert response.status_code == 202
    run_id = response.json()["id"]
    body = api.get(f"/api/v1/sleep/runs/{run_id}").json()
    assert (body["status"], body["trigger"], body["scope"]) == ("completed", "manual", "mine")
    assert [s["step"] for s in body["steps"]] == ["tag", "link", "tier", "summarize"]
    assert body["steps"][2]["metrics"]["processed"] == 1 and body["durationSeconds"] >= 0
    listed = api.get("/api/v1/sleep/runs").json()
    assert listed["count"] == 1 and listed["items"][0]["id"] == run_id


def test_api_returns_the_active_run_instead_of_a_new_one(api, user, monkeypatch):
    monkeypatch.setattr("django_q.tasks.async_task", lambda *a, **k: None)
    first = api.post("/api/v1/sleep/runs")
    second = api.post("/api/v1/sleep/runs")
    assert (first.status_code, second.status_code) == (202, 200)
    assert first.json()["id"] == second.json()["id"] and second.json()["status"] == "queued"


def test_other_users_runs_are_invisible_and_global_runs_show_only_counts(api, user, other_user, monkeypatch):
    monkeypatch.setattr("django_q.tasks.async_task", lambda *a, **k: None)
    theirs, _ = pipeline.sleep_run_request(trigger="manual", owner=other_user)
    pipeline.sleep_run_execute(run_id=theirs.pk)
    assert api.get(f"/api/v1/sleep/runs/{theirs.pk}").status_code == 404
    assert api.get("/api/v1/sleep/runs").json()["count"] == 0

    make_memory(other_user, content="Private note of someone else.")
    global_run, _ = pipeline.sleep_run_request(trigger="scheduled", owner=None)
    pipeline.sleep_run_execute(run_id=global_run.pk)
    step = global_run.steps.get(step="summarize")
    step.errors = [{"memoryId": 1, "message": "secret", "traceback": ""}]
    step.save()
    body = api.get(f"/api/v1/sleep/runs/{global_run.pk}").json()
    assert body["scope"] == "all users" and body["tasksCompleted"] > 0
    assert all(s["errors"] == [] and s["checkpoint"] == 0 for s in body["steps"]) and body["errorLog"] == ""


@pytest.mark.parametrize("path", ["/api/v1/sleep/runs/999999", "/api/v1/sleep/runs/abc"])
def test_api_bad_run_ids(api, path):
    assert api.get(path).status_code in (404, 422)


def test_api_refuses_bad_paging(api):
    assert api.get("/api/v1/sleep/runs", {"limit": 0}).status_code == 422
    assert api.get("/api/v1/sleep/runs", {"offset": -1}).status_code == 422


def test_run_now_button_starts_a_cycle_and_shows_its_detail(logged_in_client, user, run_now):
    make_memory(user, content="A note for the sleep agent to summarize. It has two sentences.")
    response = run_now(logged_in_client.post, "/sleep/run/")
    assert response.status_code == 302
    run = SleepRun.objects.get()
    assert response["Location"] == f"/sleep/{run.pk}/"
    html = logged_in_client.get(response["Location"]).content.decode()
    for text in (
        "Sleep run #",
        "Tag",
        "Link",
        "Tier",
        "Summarize",
        "Memory-steps done",
        "processed",
        "ms",
        "Summarize: 1 memory checked, 1 summary rewritten.",
        "Tier: 1 memory evaluated",
        "Link: 1 memory checked",
    ):
        assert text in html
    listing = logged_in_client.get("/sleep/").content.decode()
    assert f"#{run.pk}" in listing and "Manual" in listing and "your memories" in listing


def test_a_running_cycle_polls_for_progress(logged_in_client, user, monkeypatch):
    monkeypatch.setattr("django_q.tasks.async_task", lambda *a, **k: None)
    run, _ = pipeline.sleep_run_request(trigger="manual", owner=user)
    SleepRun.objects.filter(pk=run.pk).update(status="running", current_step="link")
    html = logged_in_client.get(f"/sleep/{run.pk}/").content.decode()
    assert 'hx-trigger="every 1s"' in html and "Running <b>link</b>" in html
    fragment = logged_in_client.get(f"/sleep/{run.pk}/", HTTP_HX_REQUEST="true").content.decode()
    assert fragment.lstrip().startswith('<div id="progress"')
    assert 'hx-trigger="every 2s"' in logged_in_client.get("/sleep/").content.decode()


def test_another_users_run_page_is_404(logged_in_client, other_user, monkeypatch):
    monkeypatch.setattr("django_q.tasks.async_task", lambda *a, **k: None)
    theirs, _ = pipeline.sleep_run_request(trigger="manual", owner=other_user)
    assert logged_in_client.get(f"/sleep/{theirs.pk}/").status_code == 404


def test_sleep_command_runs_a_cycle_and_prints_json(user, capsys):
    import json

    from django.core.management import call_command

    make_memory(user, content="Command line cycle.")
    call_command("sleep", "--user", user.username, "--wait")
    body = json.loads(capsys.readouterr().out.strip().splitlines()[-1])
    assert body["status"] == "completed" and list(body["steps"]) == ["tag", "link", "tier", "summarize"]

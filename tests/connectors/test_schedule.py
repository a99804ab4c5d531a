"""The hourly schedule: created idempotently, and it syncs every account that can sync."""

from __future__ import annotations

from django_q.models import Schedule

from connectors import services
from connectors.models import ConnectorAccount
from memories.models import Memory


def test_migrate_leaves_one_schedule_that_syncs_every_sixty_minutes(db):
    (schedule,) = Schedule.objects.filter(name=services.SCHEDULE_NAME)
    assert schedule.func == "connectors.tasks.sync_all"
    assert schedule.schedule_type == Schedule.MINUTES and schedule.minutes == 60 and schedule.repeats == -1


def test_ensuring_the_schedule_again_changes_nothing_but_follows_the_setting(db, settings):
    services.connector_schedule_ensure()
    services.connector_schedule_ensure()
    assert Schedule.objects.filter(name=services.SCHEDULE_NAME).count() == 1

    settings.KYBERNESIS_CONNECTOR_SYNC_MINUTES = 15
    services.connector_schedule_ensure()

    assert Schedule.objects.get(name=services.SCHEDULE_NAME).minutes == 15


def test_the_scheduled_task_syncs_connected_accounts_and_skips_those_needing_a_reconnect(
    drive_account, notion_account, fake_google, fake_notion
):
    from connectors.tasks import sync_all

    fake_google.add_file("a.txt", "text/plain", b"Alpha")
    ConnectorAccount.objects.filter(pk=notion_account.pk).update(status=ConnectorAccount.Status.RECONNECT)

    sync_all()

    drive_account.refresh_from_db()
    assert drive_account.status == ConnectorAccount.Status.SYNCED and Memory.objects.count() == 1
    assert fake_notion.calls("/v1/search") == []


def test_a_sync_already_running_is_not_started_twice(drive_account, fake_google):
    from django.utils import timezone

    ConnectorAccount.objects.filter(pk=drive_account.pk).update(
        status=ConnectorAccount.Status.SYNCING, sync_started_at=timezone.now()
    )

    assert services.connector_sync(account_id=drive_account.pk) is None
    assert fake_google.requests == []


def test_a_sync_left_syncing_by_a_dead_worker_is_taken_over(drive_account, fake_google, settings):
    from datetime import timedelta

    from django.utils import timezone

    ConnectorAccount.objects.filter(pk=drive_account.pk).update(
        status=ConnectorAccount.Status.SYNCING,
        sync_started_at=timezone.now() - timedelta(seconds=settings.Q_CLUSTER["timeout"] + 60),
    )

    account = services.connector_sync(account_id=drive_account.pk)

    assert account.status == ConnectorAccount.Status.SYNCED

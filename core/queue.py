"""The task queue's database broker, with a claim that lasts as long as the task it holds may run.

django-q2's ORM broker locks a task it hands to a worker for the cluster's `retry` seconds, one value
for every task, which must exceed the longest task's timeout: a worker killed while extracting a
graph left that task claimed for 31 minutes. Here each claim lasts the task's own timeout (the
`timeout` given to async_task, else the cluster's) plus a grace period, so a short task of a dead
worker is handed out again within minutes, while a long one is never handed out twice while it runs.
"""

from __future__ import annotations

from datetime import timedelta

from django.utils import timezone
from django_q.brokers.orm import ORM
from django_q.conf import Conf
from django_q.signing import BadSignature, SignedPackage

# Seconds past a task's timeout before its claim lapses: the worker guard kills an overdue task a few
# seconds after its timeout, and a queued task can wait its turn behind the running ones.
CLAIM_GRACE_S = 120


def claim_seconds(payload: str) -> int:
    """How long a dequeued task stays claimed: its timeout plus the grace, at most the cluster's retry."""
    try:
        timeout = SignedPackage.loads(payload).get("timeout")
    except (BadSignature, ValueError, TypeError, AttributeError):
        timeout = None
    if not timeout or timeout <= 0:
        return Conf.RETRY
    return min(Conf.RETRY, int(timeout) + CLAIM_GRACE_S)


class TimedORM(ORM):
    def timeout(self, task):
        return timezone.now() + timedelta(seconds=claim_seconds(task.payload))

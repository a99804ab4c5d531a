"""The task queue's brokers (the database, or Redis), with a claim that lasts as long as the task it holds may run.

django-q2's ORM broker locks a task it hands to a worker for the cluster's `retry` seconds, one value
for every task, which must exceed the longest task's timeout: a worker killed while extracting a
graph left that task claimed for 31 minutes. Here each claim lasts the task's own timeout (the
`timeout` given to async_task, else the cluster's) plus a grace period, so a short task of a dead
worker is handed out again within minutes, while a long one is never handed out twice while it runs.
"""

from __future__ import annotations

import time
from datetime import timedelta

import redis
from django.conf import settings
from django.utils import timezone
from django_q.brokers import Broker
from django_q.brokers.orm import ORM
from django_q.conf import Conf
from django_q.signing import BadSignature, SignedPackage

# Seconds past a task's timeout before its claim lapses: the worker guard kills an overdue task a few
# seconds after its timeout, and a queued task can wait its turn behind the running ones.
CLAIM_GRACE_S = 120


def claim_grace() -> int:
    return getattr(settings, "KYBERNESIS_Q_CLAIM_GRACE", CLAIM_GRACE_S)


def claim_seconds(payload: str) -> int:
    """How long a dequeued task stays claimed: its timeout plus the grace, at most the cluster's retry."""
    try:
        timeout = SignedPackage.loads(payload).get("timeout")
    except (BadSignature, ValueError, TypeError, AttributeError):
        timeout = None
    if not timeout or timeout <= 0:
        return Conf.RETRY
    return min(Conf.RETRY, int(timeout) + claim_grace())


class TimedORM(ORM):
    def timeout(self, task):
        return timezone.now() + timedelta(seconds=claim_seconds(task.payload))


# Redis keeps three keys per cluster: the list of waiting tasks (the key django-q2's own Redis broker
# uses), a sorted set of claimed task ids scored by the claim's deadline (Redis server time, so the
# clocks of several machines never disagree), and a hash from claimed id to the task itself.
_CLAIM_SCRIPT = """
local now = tonumber(redis.call('TIME')[1])
local expired = redis.call('ZRANGEBYSCORE', KEYS[2], '-inf', now)
for i = #expired, 1, -1 do
  local payload = redis.call('HGET', KEYS[3], expired[i])
  if payload then redis.call('LPUSH', KEYS[1], payload) end
  redis.call('HDEL', KEYS[3], expired[i])
  redis.call('ZREM', KEYS[2], expired[i])
end
local payload = redis.call('LPOP', KEYS[1])
if not payload then return false end
local id = tostring(redis.call('INCR', KEYS[4]))
redis.call('HSET', KEYS[3], id, payload)
redis.call('ZADD', KEYS[2], now + tonumber(ARGV[1]), id)
return {id, payload}
"""
# Narrows a claim to the task's own timeout, only while the claim is still held.
_NARROW_SCRIPT = """
local now = tonumber(redis.call('TIME')[1])
if redis.call('ZSCORE', KEYS[1], ARGV[1]) then
  redis.call('ZADD', KEYS[1], 'XX', now + tonumber(ARGV[2]), ARGV[1])
end
return 1
"""


class ReliableRedis(Broker):
    """A Redis broker that loses no task when a worker dies.

    django-q2's own Redis broker pops a task with BLPOP and never hears back: a cluster killed while
    a task runs, or while tasks wait in its in-memory queue, loses them. Here a dequeue moves the task
    into a claimed set in one atomic step; the monitor's acknowledge (after the result is saved)
    removes it; a claim that outlives its task's timeout plus the grace (as with TimedORM) is put
    back at the head of the queue by the next dequeue of any cluster."""

    def __init__(self, list_key: str | None = None):
        super().__init__(list_key=f"django_q:{list_key or Conf.CLUSTER_NAME}:q")
        self.claimed_key = f"{self.list_key}:claimed"
        self.payloads_key = f"{self.list_key}:payloads"
        self.ids_key = f"{self.list_key}:ids"
        self._claim = self.connection.register_script(_CLAIM_SCRIPT)
        self._narrow = self.connection.register_script(_NARROW_SCRIPT)

    @staticmethod
    def get_connection(list_key: str | None = None):
        return redis.from_url(Conf.REDIS) if isinstance(Conf.REDIS, str) else redis.StrictRedis(**Conf.REDIS)

    def enqueue(self, task):
        return self.connection.rpush(self.list_key, task)

    def dequeue(self):
        claimed = self._claim(
            keys=[self.list_key, self.claimed_key, self.payloads_key, self.ids_key], args=[Conf.RETRY]
        )
        if not claimed:
            time.sleep(Conf.POLL)
            return None
        claim_id, payload = claimed[0].decode(), claimed[1]
        seconds = claim_seconds(payload.decode() if isinstance(payload, bytes) else payload)
        if seconds < Conf.RETRY:
            self._narrow(keys=[self.claimed_key], args=[claim_id, seconds])
        return [(claim_id, payload)]

    def acknowledge(self, task_id):
        return self._release(task_id)

    def fail(self, task_id):
        return self._release(task_id)

    def delete(self, task_id):
        return self._release(task_id)

    def _release(self, task_id):
        pipe = self.connection.pipeline()
        pipe.zrem(self.claimed_key, task_id)
        pipe.hdel(self.payloads_key, task_id)
        return pipe.execute()

    def queue_size(self) -> int:
        return self.connection.llen(self.list_key)

    def lock_size(self) -> int:
        return self.connection.zcard(self.claimed_key)

    def purge_queue(self):
        return self.connection.ltrim(self.list_key, 1, 0)

    def delete_queue(self):
        return self.connection.delete(self.list_key, self.claimed_key, self.payloads_key, self.ids_key)

    def ping(self) -> bool:
        return self.connection.ping()

    def info(self) -> str:
        if not self._info:
            self._info = f"Redis {self.connection.info('server')['redis_version']} (claims with acknowledgement)"
        return self._info

    def set_stat(self, key: str, value: str, timeout: int):
        self.connection.set(key, value, timeout)

    def get_stat(self, key: str):
        return self.connection.get(key)

    def get_stats(self, pattern: str):
        keys = list(self.connection.scan_iter(match=pattern))
        return self.connection.mget(keys) if keys else None

"""The task queue's brokers (the database, or Redis), with a claim that lasts as long as the task it holds may run.

django-q2's ORM broker locks a task it hands to a worker for the cluster's `retry` seconds, one value
for every task, which must exceed the longest task's timeout: a short task of a worker killed
mid-run would stay claimed as long as the longest task may run. Here each claim lasts the task's own
timeout (the `timeout` given to async_task, else the cluster's) plus a grace period, so a short task
of a dead worker is handed out again within minutes, while a long one is never handed out twice while
it runs (docs/decisions/0008-task-claims.md).
"""

from __future__ import annotations

import os
import socket
import time
from datetime import timedelta

import redis
from django.conf import settings
from django.utils import timezone
from django_q.brokers import Broker, get_broker
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


# Redis keeps, per queue: the list of waiting tasks (the key django-q2's own Redis broker uses); a
# sorted set of claimed ids scored by the claim's deadline (Redis server time, so the clocks of several
# machines never disagree); a hash from claimed id to the task itself; and which cluster holds each
# claim, with a count per cluster.
_HOLDER_RELEASE = """
local function unhold(id)
  local holder = redis.call('HGET', KEYS[5], id)
  if holder then
    redis.call('HDEL', KEYS[5], id)
    if redis.call('HINCRBY', KEYS[6], holder, -1) <= 0 then redis.call('HDEL', KEYS[6], holder) end
  end
end
"""
_CLAIM_SCRIPT = (
    _HOLDER_RELEASE
    + """
local now = tonumber(redis.call('TIME')[1])
local expired = redis.call('ZRANGEBYSCORE', KEYS[2], '-inf', now)
for i = #expired, 1, -1 do
  local payload = redis.call('HGET', KEYS[3], expired[i])
  if payload then redis.call('LPUSH', KEYS[1], payload) end
  redis.call('HDEL', KEYS[3], expired[i])
  redis.call('ZREM', KEYS[2], expired[i])
  unhold(expired[i])
end
local limit = tonumber(ARGV[3])
if limit > 0 and tonumber(redis.call('HGET', KEYS[6], ARGV[2]) or '0') >= limit then return false end
local payload = redis.call('LPOP', KEYS[1])
if not payload then return false end
local id = tostring(redis.call('INCR', KEYS[4]))
redis.call('HSET', KEYS[3], id, payload)
redis.call('ZADD', KEYS[2], now + tonumber(ARGV[1]), id)
redis.call('HSET', KEYS[5], id, ARGV[2])
redis.call('HINCRBY', KEYS[6], ARGV[2], 1)
return {id, payload}
"""
)
# Ends a claim (the task is done, or dropped): ARGV[1] is the claim id.
_RELEASE_SCRIPT = (
    _HOLDER_RELEASE
    + """
redis.call('ZREM', KEYS[2], ARGV[1])
redis.call('HDEL', KEYS[3], ARGV[1])
unhold(ARGV[1])
return 1
"""
)
# The cluster is done with a task that failed: it no longer counts against the cluster, but the
# claim stays, so the task is handed out again (another attempt) when the claim lapses.
_UNHOLD_SCRIPT = _HOLDER_RELEASE + "unhold(ARGV[1])\nreturn 1\n"
# Narrows a claim to the task's own timeout, only while the claim is still held.
_NARROW_SCRIPT = """
local now = tonumber(redis.call('TIME')[1])
if redis.call('ZSCORE', KEYS[1], ARGV[1]) then
  redis.call('ZADD', KEYS[1], 'XX', now + tonumber(ARGV[2]), ARGV[1])
end
return 1
"""


def cluster_holder() -> str:
    """Who holds a claim: the machine and the qcluster. Its pusher (which claims) and its monitor
    (which acknowledges) are both children of the cluster's sentinel process."""
    return f"{socket.gethostname()}:{os.getppid()}"


class ReliableRedis(Broker):
    """A Redis broker that loses no task when a worker dies, and lets no busy worker hoard tasks.

    django-q2's own Redis broker pops a task with BLPOP and never hears back: a cluster killed while
    a task runs, or while tasks wait in its in-memory queue, loses them. Here a dequeue moves the task
    into a claimed set in one atomic step; the monitor's acknowledge (after the result is saved)
    removes it; a claim that outlives its task's timeout plus the grace (as with TimedORM) is put
    back at the head of the queue by the next dequeue of any cluster.

    A cluster also claims no more tasks than it has worker processes (django-q2's pusher otherwise
    takes the next task while every worker is busy, so a cluster stuck in an hour-long cycle would
    sit on a task an idle cluster could run now)."""

    _info: str | None  # Broker.__init__ sets it to None; info() fills it once

    def __init__(self, list_key: str | None = None, *, holder: str | None = None, limit: int | None = None):
        super().__init__(list_key=f"django_q:{list_key or Conf.CLUSTER_NAME}:q")
        self.holder = holder or cluster_holder()
        self.limit = Conf.WORKERS if limit is None else limit
        base = self.list_key
        self.claimed_key, self.payloads_key, self.ids_key = f"{base}:claimed", f"{base}:payloads", f"{base}:ids"
        self.holders_key, self.held_key = f"{base}:holders", f"{base}:held"
        self._keys = [base, self.claimed_key, self.payloads_key, self.ids_key, self.holders_key, self.held_key]
        self._claim = self.connection.register_script(_CLAIM_SCRIPT)
        self._release_script = self.connection.register_script(_RELEASE_SCRIPT)
        self._unhold = self.connection.register_script(_UNHOLD_SCRIPT)
        self._narrow = self.connection.register_script(_NARROW_SCRIPT)

    @staticmethod
    def get_connection(list_key: str | None = None):
        return redis.from_url(Conf.REDIS) if isinstance(Conf.REDIS, str) else redis.StrictRedis(**Conf.REDIS)

    def enqueue(self, task):
        return self.connection.rpush(self.list_key, task)

    def dequeue(self):
        claimed = self._claim(keys=self._keys, args=[Conf.RETRY, self.holder, self.limit])
        if not claimed:
            time.sleep(Conf.POLL)
            return None
        claim_id, payload = claimed[0].decode(), claimed[1]
        text = payload.decode() if isinstance(payload, bytes) else payload
        seconds = claim_seconds(text)
        if seconds < Conf.RETRY:
            self._narrow(keys=[self.claimed_key], args=[claim_id, seconds])
        task_id = _task_id(text)
        if task_id:
            # The monitor learns a task failed by its id, not its claim (see task_failed).
            self.connection.set(f"{self.list_key}:task:{task_id}", claim_id, ex=seconds)
        return [(claim_id, payload)]

    def acknowledge(self, task_id):
        return self._release(task_id)

    def fail(self, task_id):
        return self._release(task_id)

    def delete(self, task_id):
        return self._release(task_id)

    def _release(self, claim_id):
        return self._release_script(keys=self._keys, args=[claim_id])

    def task_failed(self, task_id: str) -> None:
        """A task failed and was not acknowledged: free its cluster's slot, keep the claim."""
        claim_id = self.connection.getdel(f"{self.list_key}:task:{task_id}")
        if claim_id:
            self._unhold(keys=self._keys, args=[claim_id.decode()])

    def held(self) -> dict[str, int]:
        """Claims held per cluster (host:sentinel pid)."""
        return {k.decode(): int(v) for k, v in self.connection.hgetall(self.held_key).items()}

    def queue_size(self) -> int:
        return self.connection.llen(self.list_key)

    def lock_size(self) -> int:
        return self.connection.zcard(self.claimed_key)

    def purge_queue(self):
        return self.connection.ltrim(self.list_key, 1, 0)

    def delete_queue(self):
        return self.connection.delete(*self._keys)

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


def _task_id(payload: str) -> str | None:
    try:
        return SignedPackage.loads(payload).get("id")
    except (BadSignature, ValueError, TypeError, AttributeError):
        return None


def release_failed_task(sender, task=None, **kwargs) -> None:
    """post_execute (in the cluster's monitor): a failed task that will be tried again no longer takes
    one of its cluster's slots while its claim waits to lapse."""
    if task is None or task.get("success") or not task.get("id"):
        return
    broker = _monitor_broker()
    if isinstance(broker, ReliableRedis):
        broker.task_failed(task["id"])


_brokers: dict[int, Broker] = {}


def _monitor_broker() -> Broker:
    # One broker (one Redis connection) per process, made in the process that uses it.
    if os.getpid() not in _brokers:
        _brokers[os.getpid()] = get_broker()
    return _brokers[os.getpid()]

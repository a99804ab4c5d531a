"""Rate limits shared by every web process: API and MCP requests per account and per client address,
and failed bearer tokens per address (token guessing).

Counts live in one UNLOGGED table (`core.RateCounter`, a row per key): a request costs one
statement that counts it against every limit it falls under (`INSERT … ON CONFLICT DO UPDATE`,
atomic across processes, and without WAL, so no commit waits for the disk; a crash forgets the
counts, which is harmless). Each limit is a sliding window, estimated from the current and the
previous fixed slot: count + previous × (share of the slot still to come), the approximation
Cloudflare and others use. A refused request is taken back out of the counts, so a client that
waits as Retry-After says gets through.

The rates are settings ("600/m", "300/s", "5000/h", "20/5m"; empty turns a limit off), read on
every request, so tests and operators can change them without restarting the router wiring.
"""

from __future__ import annotations

import math
import random
import re
import threading
import time
from collections.abc import Sequence
from dataclasses import dataclass

from django.conf import settings
from django.db import connection
from django.http import HttpRequest
from ninja.throttling import BaseThrottle

_PERIODS = {"s": 1, "sec": 1, "m": 60, "min": 60, "h": 3600, "hour": 3600, "d": 86400, "day": 86400}
_RATE = re.compile(r"^\s*(\d+)\s*/\s*(\d*)\s*([a-z]+)\s*$")
# One statement in this many also deletes counts whose slots are over.
_CLEANUP_EVERY = 500


@dataclass(frozen=True)
class Rate:
    requests: int
    seconds: int


def parse_rate(text: str | None) -> Rate | None:
    """ "600/m" -> Rate(600, 60); "20/5m" -> Rate(20, 300); empty -> None (no limit)."""
    if not text or not text.strip():
        return None
    match = _RATE.match(text.lower())
    if match is None or match.group(3) not in _PERIODS:
        raise ValueError(f"a rate looks like 600/m, 300/s or 20/5m; got {text!r}")
    requests, multiple, unit = int(match.group(1)), int(match.group(2) or 1), match.group(3)
    return Rate(requests=requests, seconds=max(1, multiple) * _PERIODS[unit])


@dataclass(frozen=True)
class Limit:
    key: str
    rate: Rate | None  # None: this limit is off


def estimate(*, count: int, previous: int, elapsed: float, seconds: int) -> float:
    """Requests in the sliding window ending now: this slot's, plus the previous slot's in the part
    of the window that still overlaps it."""
    return count + previous * max(0.0, 1.0 - elapsed / seconds)


def retry_after(*, count: int, previous: int, elapsed: float, rate: Rate) -> int:
    """Whole seconds until one more request fits, if no other arrives meanwhile (at least 1)."""
    seconds, room = rate.seconds, rate.requests - 1
    if count <= room:
        # The previous slot's share has to shrink: previous × (1 − t / seconds) ≤ room − count.
        t = seconds * (1.0 - (room - count) / previous) if previous else 0.0
        wait = t - elapsed
    else:
        # Only the next slot has room: there this slot is the previous one, count × (1 − t / seconds) ≤ room.
        wait = (seconds - elapsed) + seconds * (1.0 - room / count)
    return max(1, math.ceil(wait))


_HIT_SQL = """
    INSERT INTO core_ratecounter AS c (key, slot, count, previous, expires_at)
    SELECT k, s, 1, 0, e FROM unnest(%(keys)s::text[], %(slots)s::bigint[], %(expires)s::bigint[]) AS t(k, s, e)
    ON CONFLICT (key) DO UPDATE SET
        previous = CASE WHEN c.slot = EXCLUDED.slot THEN c.previous
                        WHEN c.slot = EXCLUDED.slot - 1 THEN c.count ELSE 0 END,
        count = CASE WHEN c.slot = EXCLUDED.slot THEN c.count + 1 ELSE 1 END,
        slot = EXCLUDED.slot,
        expires_at = EXCLUDED.expires_at
    RETURNING key, count, previous
"""
_TAKE_BACK_SQL = """
    UPDATE core_ratecounter c SET count = greatest(c.count - 1, 0)
    FROM unnest(%(keys)s::text[], %(slots)s::bigint[]) AS t(k, s) WHERE c.key = t.k AND c.slot = t.s
"""


def hit(limits: Sequence[Limit], *, now: float | None = None, take_back: bool = True) -> int | None:
    """Count one request against each limit. None when it fits all of them; otherwise the seconds
    to wait (Retry-After), and, with `take_back`, the request is not counted."""
    active = sorted(((limit.key, limit.rate) for limit in limits if limit.rate is not None), key=lambda pair: pair[0])
    if not active:
        return None
    now = time.time() if now is None else now
    slots = [int(now // rate.seconds) for _, rate in active]
    params: dict[str, list[str] | list[int]] = {
        "keys": [key for key, _ in active],  # sorted: concurrent statements lock rows in one order
        "slots": slots,
        "expires": [(slot + 2) * rate.seconds for slot, (_, rate) in zip(slots, active, strict=True)],
    }
    with connection.cursor() as cursor:
        cursor.execute(_HIT_SQL, params)
        counts = {key: (count, previous) for key, count, previous in cursor.fetchall()}
        waits = []
        for key, rate in active:
            count, previous = counts[key]
            elapsed = now % rate.seconds
            if estimate(count=count, previous=previous, elapsed=elapsed, seconds=rate.seconds) > rate.requests:
                waits.append(retry_after(count=count - 1, previous=previous, elapsed=elapsed, rate=rate))
        if waits and take_back:
            cursor.execute(_TAKE_BACK_SQL, {"keys": params["keys"], "slots": slots})
        if random.randrange(_CLEANUP_EVERY) == 0:
            cursor.execute("DELETE FROM core_ratecounter WHERE expires_at < %s", [int(now)])
    return max(waits) if waits else None


def refusal(wait: int | None) -> str:
    """What a client over its rate is told."""
    return "Too many requests for this account or address" + (f"; try again in {wait} s" if wait else "")


def client_address(request: HttpRequest) -> str:
    """The client's address: the connection's, or taken from X-Forwarded-For when
    KYBERNESIS_NUM_PROXIES proxies in front append to it (never chosen by the client itself)."""
    return BaseThrottle().get_ident(request) or "unknown"


def request_limits(request: HttpRequest, user) -> list[Limit]:
    """The per-account and per-address limits a signed-in request counts against."""
    address = client_address(request)
    return [
        Limit(f"account:{user.pk}", parse_rate(settings.KYBERNESIS_API_RATE)),
        Limit(f"address:{address}", parse_rate(settings.KYBERNESIS_API_ADDRESS_RATE)),
    ]


def auth_failure_key(request: HttpRequest) -> str | None:
    """The counter of wrong tokens from this request's address; None while that limit is off."""
    if parse_rate(settings.KYBERNESIS_API_AUTH_FAILURE_RATE) is None:
        return None
    return f"auth-failure:{client_address(request)}"


_UNREAD = object()


def auth_failure_wait(request: HttpRequest | None, *, counts=_UNREAD) -> int | None:
    """Seconds this address must wait before it may present another token, after too many wrong
    ones within KYBERNESIS_API_AUTH_FAILURE_RATE; None when it may try now. Does not count.

    `counts` is the address's counter row (slot, count, previous), or None when it has none, for a
    caller that read it with a statement of its own (the token lookup does); otherwise it is read here."""
    rate = parse_rate(settings.KYBERNESIS_API_AUTH_FAILURE_RATE)
    if rate is None:
        return None
    if counts is _UNREAD:
        with connection.cursor() as cursor:
            key = f"auth-failure:{client_address(request)}"  # type: ignore[arg-type]
            cursor.execute("SELECT slot, count, previous FROM core_ratecounter WHERE key = %s", [key])
            counts = cursor.fetchone()
    if counts is None or counts[0] is None:
        return None
    slot, count, previous = counts
    now = time.time()
    current = int(now // rate.seconds)
    if slot != current:  # the stored slot is over: it is now the previous one, or older
        count, previous = 0, count if slot == current - 1 else 0
    elapsed = now % rate.seconds
    if estimate(count=count, previous=previous, elapsed=elapsed, seconds=rate.seconds) < rate.requests:
        return None
    return retry_after(count=count, previous=previous, elapsed=elapsed, rate=rate)


def auth_failure_record(request: HttpRequest) -> None:
    """Count a wrong token presented by this address."""
    rate = parse_rate(settings.KYBERNESIS_API_AUTH_FAILURE_RATE)
    if rate is not None:
        hit([Limit(f"auth-failure:{client_address(request)}", rate)], take_back=False)


class ApiRateThrottle(BaseThrottle):
    """django-ninja's throttle hook over `hit`: a signed-in request over its account's or its
    address's rate is answered 429 with Retry-After. One instance serves every request thread, so
    the wait found by allow_request is kept per thread until ninja asks for it."""

    def __init__(self):
        self._local = threading.local()

    def allow_request(self, request: HttpRequest) -> bool:
        user = getattr(request, "auth", None)
        self._local.wait = None if getattr(user, "pk", None) is None else hit(request_limits(request, user))
        return self._local.wait is None

    def wait(self) -> float | None:
        return getattr(self._local, "wait", None)


def api_throttles() -> list[BaseThrottle]:
    return [ApiRateThrottle()]

"""Each failure group's failures per minute over the last day, kept in Redis.

Counted from the failed jobs Redis holds whenever a queue's failure groups are read: each trend
remembers the newest failure time it has counted (``upto``), and a read counts the failures
newer than that. So failures that leave the failed set later (retried, removed, trimmed by
``removeOnFail``) stay in the trend, and a job that fails again after a retry counts again.
Failures that come and go between two reads of the groups, or more than the groups' scan budget
between two reads, are not seen.

One hash per queue and signature, ``<LIVE_KEY_PREFIX>:trends:<queue>:<signature digest>``:
fields ``m<minute>`` (minutes since the epoch) with counts, ``since`` (the first failure seen,
in ms) and ``upto``. Each write drops minutes older than a day and sets the key to expire a day
after it; at most ``MAX_TRENDS`` groups a queue are kept. So a queue costs at most
``MAX_TRENDS`` times 1,443 fields, and a signature that stops failing is gone a day later.
"""

from __future__ import annotations

import hashlib
import logging
from collections import Counter
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from redis.exceptions import ResponseError

from queues.reads.keys import QueueRef
from queues.redis import fastpipe
from queues.redis.clients import get_client
from queues.redis.connections import own_key_prefix

log = logging.getLogger("bullpen.triage")

DAY_MINUTES = 24 * 60
MAX_TRENDS = 50
# A signature first seen this recently is "new" (as the new-failure-signature alert counts).
NEW_WITHIN_MS = 60 * 60 * 1000
# The sparkline's points: the day in quarters of an hour.
BUCKET_MINUTES = 15

# KEYS[1]: the trend. ARGV: oldest minute kept, the key's lifetime (s), the ``upto`` the caller
# read ('' for none), the new ``upto``, the first failure seen (ms), then minute/count pairs of
# the failures newer than the ``upto`` read. Another reader that counted them first moved
# ``upto``: then nothing is added twice. Drops minutes older than a day; answers the hash.
_MERGE = """
local oldest = tonumber(ARGV[1])
local upto = redis.call('HGET', KEYS[1], 'upto') or ''
if upto == ARGV[3] then
  for i = 6, #ARGV, 2 do
    redis.call('HINCRBY', KEYS[1], 'm' .. ARGV[i], ARGV[i + 1])
  end
  redis.call('HSET', KEYS[1], 'upto', ARGV[4])
  local since = tonumber(redis.call('HGET', KEYS[1], 'since'))
  if (not since) or tonumber(ARGV[5]) < since then redis.call('HSET', KEYS[1], 'since', ARGV[5]) end
end
local all = redis.call('HGETALL', KEYS[1])
for i = 1, #all, 2 do
  local name = all[i]
  if string.sub(name, 1, 1) == 'm' and tonumber(string.sub(name, 2)) < oldest then
    redis.call('HDEL', KEYS[1], name)
  end
end
redis.call('EXPIRE', KEYS[1], ARGV[2])
return redis.call('HGETALL', KEYS[1])
"""


@dataclass(frozen=True)
class Trend:
    """One group's last day: failures per minute (sparse), and when it first failed."""

    per_minute: dict[int, int]
    since_ms: int
    now_minute: int

    def is_new(self) -> bool:
        return self.now_minute * 60_000 - self.since_ms < NEW_WITHIN_MS

    @property
    def total(self) -> int:
        return sum(self.per_minute.values())

    def buckets(self) -> list[int]:
        """The day in ``BUCKET_MINUTES`` steps, oldest first (the sparkline's points)."""
        count = DAY_MINUTES // BUCKET_MINUTES
        first = self.now_minute - count * BUCKET_MINUTES + 1
        points = [0] * count
        for minute, failures in self.per_minute.items():
            index = (minute - first) // BUCKET_MINUTES
            if 0 <= index < count:
                points[index] += failures
        return points

    def as_json(self) -> dict[str, Any]:
        return {
            "since": self.since_ms,
            "new": self.is_new(),
            "lastDay": [[minute * 60_000, n] for minute, n in sorted(self.per_minute.items())],
        }


def trend_key(ref: QueueRef, signature: str) -> str:
    digest = hashlib.sha1(signature.encode(), usedforsecurity=False).hexdigest()[:16]
    return f"{own_key_prefix(ref.connection)}:trends:{ref.qualified_name}:{digest}"


def minutes_of(finished_ms: Sequence[int], now_minute: int) -> Counter[int]:
    """Failures per minute of the last day, from failure times in ms."""
    oldest = now_minute - DAY_MINUTES + 1
    return Counter(m for m in (int(ms) // 60_000 for ms in finished_ms) if m >= oldest)


def parse_trend(flat: Any, now_minute: int) -> Trend:
    pairs = flat if flat and isinstance(flat[0], list) else zip(flat[::2], flat[1::2], strict=True)
    per_minute: dict[int, int] = {}
    since = now_minute * 60_000
    oldest = now_minute - DAY_MINUTES + 1
    for name, value in pairs:
        field = name.decode() if isinstance(name, bytes) else str(name)
        if field == "since":
            since = int(value)
        elif field.startswith("m") and int(field[1:]) >= oldest:
            per_minute[int(field[1:])] = int(value)
    return Trend(per_minute, since, now_minute)


async def record_and_read(
    ref: QueueRef, seen: Sequence[tuple[str, Sequence[int]]], now_ms: int
) -> dict[str, Trend]:
    """Count into the stored trends the failures one read of the failed set saw (per
    signature, its failures' times in ms) that they have not counted yet, and answer them: two
    round trips for all groups. A Redis that refuses the writes (maxmemory, a read-only
    replica) leaves the groups without trends."""
    now_minute = now_ms // 60_000
    kept = [(signature, times) for signature, times in seen if times][:MAX_TRENDS]
    if not kept:
        return {}
    keys = [trend_key(ref, signature) for signature, _ in kept]
    redis = get_client(ref.connection)
    counted = await fastpipe.execute(redis, [("HGET", key, "upto") for key in keys])
    lifetime = DAY_MINUTES * 60 + 3600
    commands: list[fastpipe.Command] = []
    for key, (_signature, times), upto in zip(keys, kept, counted, strict=True):
        read = "" if upto is None or isinstance(upto, Exception) else _text(upto)
        newer = [t for t in times if not read or t > int(read)]
        args: list[Any] = [now_minute - DAY_MINUTES + 1, lifetime, read]
        args += [max(times, default=0) if not read else max(int(read), *times), min(times)]
        for minute, count in sorted(minutes_of(newer, now_minute).items()):
            args += [minute, count]
        commands.append(("EVAL", _MERGE, 1, key, *args))
    replies = await fastpipe.execute(redis, commands)
    trends: dict[str, Trend] = {}
    for (signature, _times), reply in zip(kept, replies, strict=True):
        if isinstance(reply, ResponseError):
            log.warning("failure trends not kept for %s: %s", ref.slug, reply)
            continue
        trends[signature] = parse_trend(reply, now_minute)
    return trends


def _text(value: Any) -> str:
    return value.decode() if isinstance(value, bytes) else str(value)

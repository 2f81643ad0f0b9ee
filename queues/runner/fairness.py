"""Per-tenant fairness: each tenant of a queue gets at most its own rate, whatever the others do.

The open-source BullMQ has no groups, so the runner does it itself, before a job's handler
runs: a small Lua script (below) keeps, per tenant, the time its next job may start (GCRA, the
"generic cell rate algorithm": a token bucket stored as one timestamp). A job of a tenant that
is within its rate runs at once. A job of a tenant that is over it is *not* run: the script
reserves the tenant's next free slot for that job id, and the worker moves the job to
``delayed`` until that slot (without spending an attempt) and takes the next job of the queue.

So a tenant that floods the queue with 10,000 jobs gets them run at its rate, spread evenly in
``delayed``, while the other tenants' jobs keep running as they arrive; reserved slots mean a
deferred job runs when it comes back, instead of all deferred jobs racing for the next token.
The state lives in Redis, so it holds across every worker process of the queue.
"""

from __future__ import annotations

import time
from dataclasses import dataclass
from typing import Any

import redis.asyncio as aioredis

from queues.reads.keys import QueueRef
from queues.runner.errors import RunnerConfigError

# KEYS[1]: the tenant's next conforming time ("tat", ms); KEYS[2]: its reservations
# (hash job id -> slot ms). ARGV: now ms, interval ms, burst, job id.
# Returns 0 (run now) or the milliseconds to wait for the job's reserved slot.
_SLOT_SCRIPT = """
local now = tonumber(ARGV[1])
local interval = tonumber(ARGV[2])
local burst = tonumber(ARGV[3])
local held = redis.call('HGET', KEYS[2], ARGV[4])
if held then
  held = tonumber(held)
  if held <= now then
    redis.call('HDEL', KEYS[2], ARGV[4])
    return 0
  end
  return held - now
end
local tat = tonumber(redis.call('GET', KEYS[1]) or '0')
if tat < now then tat = now end
local earliest = tat - (burst - 1) * interval
redis.call('SET', KEYS[1], tat + interval, 'PX', math.ceil(tat + interval - now) + 1000)
if earliest <= now then
  return 0
end
redis.call('HSET', KEYS[2], ARGV[4], earliest)
redis.call('PEXPIRE', KEYS[2], math.ceil(earliest - now) + 86400000)
return math.ceil(earliest - now)
"""


@dataclass(frozen=True)
class TenantLimit:
    """At most ``max`` jobs per ``duration_ms`` for each value of payload field ``field``."""

    max: int
    duration_ms: int
    field: str = "tenant"
    burst: int | None = None  # jobs a quiet tenant may start at once (default: ``max``)

    def __post_init__(self) -> None:
        for name in ("max", "duration_ms"):
            value = getattr(self, name)
            if isinstance(value, bool) or not isinstance(value, int) or value < 1:
                raise RunnerConfigError(f"TenantLimit {name} must be a whole number from 1 up")
        if self.burst is not None and self.burst < 1:
            raise RunnerConfigError("TenantLimit burst must be at least 1")

    @property
    def interval_ms(self) -> float:
        return self.duration_ms / self.max

    @classmethod
    def from_mapping(cls, value: Any) -> TenantLimit:
        if isinstance(value, TenantLimit):
            return value
        if not isinstance(value, dict):
            raise RunnerConfigError(f"per_tenant is a mapping, not {value!r}")
        mapping: dict[str, Any] = value
        duration = mapping["duration"] if "duration" in mapping else mapping.get("duration_ms", 0)
        burst = mapping.get("burst")
        return cls(
            int(mapping["max"]),
            int(duration),
            str(mapping.get("field", "tenant")),
            int(burst) if burst is not None else None,
        )


class TenantGate:
    """The per-tenant check of one queue."""

    def __init__(
        self, client: aioredis.Redis, ref: QueueRef, limit: TenantLimit, key_prefix: str
    ) -> None:
        self.limit = limit
        self._base = f"{key_prefix}:fair:{ref.prefix}:{ref.name}:"
        self._script = client.register_script(_SLOT_SCRIPT)

    def tenant_of(self, data: Any) -> str | None:
        if isinstance(data, dict):
            value = data.get(self.limit.field)
            if value is not None:
                return str(value)
        return None  # no tenant: not limited

    async def wait_ms(self, tenant: str, job_id: str) -> int:
        """0 when the job may run now, else how long until its reserved slot."""
        now = int(time.time() * 1000)
        burst = self.limit.burst or self.limit.max
        keys = [f"{self._base}{tenant}:tat", f"{self._base}{tenant}:held"]
        wait = await self._script(keys=keys, args=[now, self.limit.interval_ms, burst, job_id])
        return int(wait)

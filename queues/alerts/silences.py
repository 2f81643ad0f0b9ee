"""Silenced and acknowledged alerts, per queue and rule.

A silence stops every notice of that rule on that queue until it ends; an acknowledgement
stops a firing rule's repeated notices (``RENOTIFY``) until it resolves, and then ends. Both are
kept in one Redis hash under Bullpen's own key prefix (``<LIVE_KEY_PREFIX>:alerts:holds``,
field ``<queue>\\0<rule>``), so that they outlive restarts and lease takeovers.
"""

from __future__ import annotations

import json
import time
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from typing import Any

from queues.actions.result import ActionResult
from queues.redis import connections
from queues.redis.clients import get_client
from queues.redis.connections import own_key_prefix
from queues.redis.errors import translate_redis_errors

Key = tuple[str, str]  # (queue slug, rule)
MOST_MINUTES = 10_080  # a week


@dataclass(frozen=True)
class Hold:
    silenced_until: float | None = None  # wall-clock seconds
    silenced_by: str = ""
    acknowledged_by: str = ""
    acknowledged_at: float | None = None  # wall-clock seconds

    def silenced(self, now: float) -> bool:
        return self.silenced_until is not None and self.silenced_until > now

    def as_json(self) -> dict[str, Any]:
        return {
            "silencedUntil": self.silenced_until,
            "silencedBy": self.silenced_by or None,
            "acknowledgedBy": self.acknowledged_by or None,
            "acknowledgedAt": self.acknowledged_at if self.acknowledged_by else None,
        }

    @classmethod
    def from_json(cls, data: Mapping[str, Any]) -> Hold:
        until, at = data.get("silencedUntil"), data.get("acknowledgedAt")
        return cls(
            None if until is None else float(until),
            str(data.get("silencedBy") or ""),
            str(data.get("acknowledgedBy") or ""),
            None if at is None else float(at),
        )


def holds_key() -> str:
    return f"{own_key_prefix()}:alerts:holds"


def _field(queue: str, rule: str) -> str:
    return f"{queue}\x00{rule}"


async def read_holds(now: float | None = None) -> dict[Key, Hold]:
    """Every silence still running and every acknowledgement (unreadable entries skipped)."""
    at = time.time() if now is None else now
    if not connections.state_on_redis():
        return {}  # alerts are off without a Redis, where holds are kept
    async with translate_redis_errors():
        stored = await get_client().hgetall(holds_key())
    found: dict[Key, Hold] = {}
    for field, raw in stored.items():
        queue, sep, rule = str(field).rpartition("\x00")
        try:
            hold = Hold.from_json(json.loads(raw))
        except (AttributeError, TypeError, ValueError):
            continue
        if sep and (hold.silenced(at) or hold.acknowledged_by):
            found[(queue, rule)] = hold
    return found


async def _write(queue: str, rule: str, hold: Hold) -> None:
    redis = get_client()
    async with translate_redis_errors():
        if hold.silenced_until is None and not hold.acknowledged_by:
            await redis.hdel(holds_key(), _field(queue, rule))
        else:
            await redis.hset(holds_key(), _field(queue, rule), json.dumps(hold.as_json()))


async def _current(queue: str, rule: str) -> Hold:
    return (await read_holds()).get((queue, rule), Hold())


async def silence(queue: str, rule: str, minutes: int, by: str) -> ActionResult:
    until = time.time() + minutes * 60
    hold = await _current(queue, rule)
    await _write(queue, rule, Hold(until, by, hold.acknowledged_by, hold.acknowledged_at))
    detail = {"rule": rule, "minutes": minutes, "silencedUntil": until, "silencedBy": by}
    return ActionResult("silence-alert", queue, count=1, detail=detail)


async def unsilence(queue: str, rule: str) -> ActionResult:
    hold = await _current(queue, rule)
    await _write(queue, rule, Hold(None, "", hold.acknowledged_by, hold.acknowledged_at))
    return ActionResult("unsilence-alert", queue, count=1, detail={"rule": rule})


async def acknowledge(queue: str, rule: str, by: str) -> ActionResult:
    hold = await _current(queue, rule)
    at = time.time()
    await _write(queue, rule, Hold(hold.silenced_until, hold.silenced_by, by, at))
    detail = {"rule": rule, "acknowledgedBy": by, "acknowledgedAt": at}
    return ActionResult("acknowledge-alert", queue, count=1, detail=detail)


async def end_acknowledgements(keys: Iterable[Key]) -> None:
    """Acknowledgements of alerts that resolved end with them."""
    for queue, rule in keys:
        hold = await _current(queue, rule)
        await _write(queue, rule, Hold(hold.silenced_until, hold.silenced_by, ""))

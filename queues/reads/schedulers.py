"""Where job schedulers (repeatable jobs) are read: a queue's schedulers as JSON-ready dicts.

BullMQ keeps them in the sorted set ``<prefix>:<queue>:repeat`` (member: the scheduler id,
score: its next run in ms) plus one hash per scheduler, ``<prefix>:<queue>:repeat:<id>``
(``name``, ``pattern`` or ``every``, ``tz``, ``ic`` the iteration count, ``data``, ``opts``...).
Two round trips whatever the count; the next to run first. Members without a hash are legacy
repeatable jobs (``name:id:endDate:tz:pattern`` keys of BullMQ < 5.16), decoded from the key.

A scheduler's next run moves on only when a worker takes its job: one whose next run has passed
is ``due``, its job waiting for a worker (its "next run" is not in the past).
"""

from __future__ import annotations

import time
from typing import Any

from bullmq.job import optsFromJSON

from queues.config.redact_setting import configured_rules
from queues.reads.jsontext import loads_shown
from queues.reads.keys import QueueRef
from queues.reads.redaction import redact_job
from queues.reads.store import other_store
from queues.redis.clients import get_client
from queues.redis.errors import translate_redis_errors

MAX_SCHEDULERS = 1000


def _int(value: str | None) -> int | None:
    try:
        return int(value) if value not in (None, "") else None
    except ValueError:
        return None


def _json(value: str | None) -> Any:
    if value is None:
        return None
    try:
        return loads_shown(value)
    except ValueError:  # not JSON, or too deep to show: shown raw rather than failing the list
        return value


def _template_opts(value: str | None) -> Any:
    """BullMQ stores options under short names (``kl`` for ``keepLogs``): their own names."""
    opts = _json(value)
    return optsFromJSON(opts) if isinstance(opts, dict) else opts


def scheduler_entry(
    member: str, score: float, fields: dict[str, str], now_ms: int
) -> dict[str, Any]:
    """One scheduler from its member, score and hash (empty: a legacy repeatable)."""
    base: dict[str, Any] = {"id": member, "next": int(score), "due": int(score) <= now_ms}
    if fields:
        template = {"data": _json(fields.get("data")), "opts": _template_opts(fields.get("opts"))}
        # The data every run starts from: masked as a job's data is.
        rules = configured_rules()
        if rules is not None:
            redact_job(template, rules)
        return {
            **base,
            "name": fields.get("name"),
            "pattern": fields.get("pattern") or None,
            "every": _int(fields.get("every")),
            "tz": fields.get("tz") or None,
            "iterationCount": _int(fields.get("ic")),
            "limit": _int(fields.get("limit")),
            "startDate": _int(fields.get("startDate")),
            "endDate": _int(fields.get("endDate")),
            "offset": _int(fields.get("offset")),
            "template": template,
            "legacy": False,
        }
    parts = member.split(":")
    return {
        **base,
        "name": parts[0] or None,
        "pattern": ":".join(parts[4:]) or None,
        "every": None,
        "tz": parts[3] if len(parts) > 3 and parts[3] else None,
        "iterationCount": None,
        "limit": None,
        "startDate": None,
        "endDate": _int(parts[2]) if len(parts) > 2 else None,
        "offset": None,
        "template": {"data": None, "opts": None},
        "legacy": True,
    }


async def list_schedulers(ref: QueueRef, limit: int = MAX_SCHEDULERS) -> list[dict[str, Any]]:
    """The queue's schedulers, next to run first (at most ``limit``)."""
    store = other_store(ref.connection)
    if store is not None:
        now_ms = int(time.time() * 1000)
        return [
            scheduler_entry(str(key), float(next_ms or 0), fields or {}, now_ms)
            for key, fields, next_ms in await store.schedulers(ref, limit)
        ]
    redis = get_client(ref.connection)
    repeat = ref.key("repeat")
    async with translate_redis_errors():
        entries: list[Any] = list(await redis.zrange(repeat, 0, limit - 1, withscores=True))
        if not entries:
            return []
        async with redis.pipeline(transaction=False) as pipe:
            for member, _score in entries:
                pipe.hgetall(f"{repeat}:{member}")
            hashes = await pipe.execute()
    now_ms = int(time.time() * 1000)
    return [
        scheduler_entry(str(member), float(score), fields or {}, now_ms)
        for (member, score), fields in zip(entries, hashes, strict=True)
    ]

"""A queue's hygiene figures, read in one pipelined round trip.

BullMQ's meta hash (``<prefix>:<queue>:meta``) holds ``version`` (``bullmq:6.7.0``),
``opts.maxLenEvents`` (the events stream's cap, written by every Queue instance from its
``streams.events.maxLen``), ``paused`` and the global concurrency and rate limit. A queue's
``defaultJobOptions`` live only in the producers' Queue instances: BullMQ does not store them
in Redis, so they are reported as unknown (None). Whether jobs are removed when they finish
(``removeOnComplete``, ``removeOnFail``) is a per-job option with no trace once a job is gone:
what is kept is counted instead.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from queues.hygiene.warnings import (
    DEFAULT_MAX_LEN_EVENTS,
    Figures,
    HygieneWarning,
    warnings_for,
)
from queues.reads.keys import QueueRef
from queues.reads.scripts import per_key
from queues.reads.store import other_store
from queues.redis.clients import get_client
from queues.redis.errors import translate_redis_errors

# Repeat-set members looked at for legacy repeatable jobs (a bound on the script's cost).
LEGACY_LOOKED_AT = 1000
_KNOWN_META = ("version", "opts.maxLenEvents", "paused", "concurrency", "max", "duration")


@dataclass(frozen=True)
class QueueInfo:
    meta: dict[str, str]  # the meta hash as stored
    figures: Figures
    warnings: list[HygieneWarning]

    def as_json(self) -> dict[str, Any]:
        meta = self.meta
        max_jobs, duration = _int(meta.get("max")), _int(meta.get("duration"))
        shown: dict[str, Any] = {
            "version": meta.get("version"),
            "maxLenEvents": self.figures.max_len_events,
            "paused": meta.get("paused") not in (None, "", "0"),
            "globalConcurrency": _int(meta.get("concurrency")),
            "rateLimit": {"max": max_jobs, "duration": duration} if max_jobs and duration else None,
        }
        # Fields other BullMQ versions may add, as stored.
        shown.update({name: value for name, value in meta.items() if name not in _KNOWN_META})
        return {
            "meta": shown,
            "defaultJobOptions": None,
            "eventsLength": self.figures.events_length,
            "completedKept": self.figures.completed_kept,
            "failedKept": self.figures.failed_kept,
            "metricsRecorded": self.figures.metrics_keys > 0,
            "legacyRepeatables": self.figures.legacy_repeatables,
            "warnings": [warning.as_json() for warning in self.warnings],
        }


def _int(value: str | None) -> int | None:
    try:
        return int(value) if value not in (None, "") else None
    except ValueError:
        return None


async def queue_info(ref: QueueRef) -> QueueInfo:
    """The queue's meta hash, its events stream's length, its kept finished jobs, whether
    metrics are recorded and its legacy repeatable jobs, with the warnings they call for."""
    store = other_store(ref.connection)
    if store is not None:
        stored, kept = await store.hygiene(ref)
        cap = _int(stored.get("opts.maxLenEvents"))
        figures = Figures(
            completed_kept=kept["completed"],
            failed_kept=kept["failed"],
            events_length=kept["events"],
            max_len_events=cap if cap is not None else DEFAULT_MAX_LEN_EVENTS,
            metrics_keys=kept["metrics"],
            legacy_repeatables=0,
        )
        return QueueInfo(stored, figures, warnings_for(figures))
    redis = get_client(ref.connection)
    also = [
        ("HGETALL", ref.key("meta")),
        ("XLEN", ref.key("events")),
        ("ZCARD", ref.key("completed")),
        ("ZCARD", ref.key("failed")),
        ("EXISTS", ref.key("metrics:completed"), ref.key("metrics:failed")),
    ]
    async with translate_redis_errors():
        # The script's EVALSHA and the reads in one round trip (redis-py's own pipeline would
        # first ask SCRIPT EXISTS in another).
        [legacy], replies = await per_key(
            redis, "count_legacy_repeat", [ref.key("repeat")], [LEGACY_LOOKED_AT], also
        )
        for reply in replies:
            if isinstance(reply, Exception):
                raise reply
    meta, events, completed, failed, metrics = replies
    stored = _as_dict(meta)
    cap = _int(stored.get("opts.maxLenEvents"))
    figures = Figures(
        completed_kept=int(completed),
        failed_kept=int(failed),
        events_length=int(events),
        max_len_events=cap if cap is not None else DEFAULT_MAX_LEN_EVENTS,
        metrics_keys=int(metrics),
        legacy_repeatables=int(legacy),
    )
    return QueueInfo(stored, figures, warnings_for(figures))


def _as_dict(reply: Any) -> dict[str, str]:
    """HGETALL's reply: field, value, field, value... (a dict from a cluster's pipeline)."""
    if isinstance(reply, dict):
        return {str(name): str(value) for name, value in reply.items()}
    pairs = list(reply or [])
    return {str(pairs[i]): str(pairs[i + 1]) for i in range(0, len(pairs) - 1, 2)}

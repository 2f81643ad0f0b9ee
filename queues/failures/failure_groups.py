"""Failed jobs grouped by what went wrong: the failed reason with ids, numbers and hex made
generic, plus the innermost application frame of the last attempt (stack_frames.py).

Reads the newest ``budget`` failed jobs (default 10,000), 500 per Redis call so that no call
blocks Redis for long. Inside Redis, reasons are cut to a kilobyte and only a few pieces of the
last attempt's stack trace are sent (lua/read_failures.lua), however many attempts and however
long the trace: a job's group does not change when it is retried.
"""

from __future__ import annotations

import asyncio
import re
import time
from dataclasses import dataclass, field
from functools import lru_cache
from typing import Any

from queues.config.settings import get_config
from queues.errors import BadParameter, QueueNotFound
from queues.failures.stack_frames import innermost, last_attempt, unescape
from queues.failures.trends import Trend, record_and_read
from queues.reads.discovery import known
from queues.reads.keys import QueueRef
from queues.reads.scripts import per_key
from queues.reads.store import on_redis
from queues.redis import fastpipe
from queues.redis.clients import get_client
from queues.redis.errors import translate_redis_errors

_CHUNK = 500
# A caller's own budget: up to this many failed jobs read (about 1 KB each).
MAX_BUDGET = 100_000
# Per job: its failed reason up to this many bytes, pieces of its last attempt's stack trace
# up to PIECE bytes each, the last attempt looked for within REACH bytes of the trace's end.
REASON_CAP = 1024
PIECE = 4096
REACH = 256 * 1024
# The most a job's read sends back (its reason and three pieces), however long its fields.
MOST_READ = REASON_CAP + 3 * PIECE
_UUID = re.compile(r"\b[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}\b", re.I)
_HEX = re.compile(r"\b(?:0x)?[0-9a-f]*\d[0-9a-f]*[a-f][0-9a-f]*\b|\b0x[0-9a-f]+\b", re.I)
_IP = re.compile(r"\b\d{1,3}(?:\.\d{1,3}){3}\b")
_NUMBER = re.compile(r"\d+(?:\.\d+)?")
_QUOTED = re.compile(r"(['\"]).{0,200}?\1")


def normalise(text: str) -> str:
    text = _UUID.sub("<uuid>", text)
    text = _HEX.sub("<hex>", text)
    text = _IP.sub("<ip>", text)
    text = _NUMBER.sub("<n>", text)
    return _QUOTED.sub(r"\1…\1", text).strip()


def top_frame(stacktrace_text: str | None) -> str:
    """The frame a whole ``stacktrace`` field is named after (see :func:`frame_of`)."""
    return frame_of([last_attempt(stacktrace_text)])


def frame_of(pieces: list[str]) -> str:
    """The innermost application frame of the last attempt whose text is ``pieces``, made
    generic."""
    frame, node = innermost(pieces)
    return _generic_frame(frame) if node else frame


@lru_cache(maxsize=4096)
def _generic_frame(frame: str) -> str:
    # Many failures fail at the same few lines: a cold alert read names tens of thousands.
    return normalise(frame)


def signature(reason: str | None, stacktrace_text: str | None) -> str:
    """The signature of a failure whose whole ``stacktrace`` field is at hand."""
    return signature_of(reason, [last_attempt(stacktrace_text)])


def signature_of(reason: str | None, pieces: list[str]) -> str:
    head = normalise(reason or "(no failed reason)")[:300]
    frame = frame_of(pieces)
    return f"{head} @ {frame}" if frame else head


async def read_failures(
    redis: Any, keys: list[str], per_call: int | None = None
) -> list[tuple[str | None, list[str]] | None]:
    """Per job hash key: (its failed reason, the decoded pieces of its last attempt's stack
    trace), or None for a job that is gone. One round trip, bounded in Redis and on the wire:
    at most ``per_call`` jobs a script call (scripts.per_key), each call's reply at most
    ``per_call`` times :data:`MOST_READ`."""
    args = [REASON_CAP, PIECE, REACH]
    rows, _ = await per_key(redis, "read_failures", keys, args, per_call=per_call)
    read: list[tuple[str | None, list[str]] | None] = []
    for row in rows:
        if not row:
            read.append(None)
            continue
        reason, *pieces = row
        read.append((reason, [unescape(piece) for piece in pieces if piece]))
    return read


@dataclass
class FailureGroup:
    signature: str
    reason: str
    frame: str
    count: int = 0
    first_seen: int = 0
    last_seen: int = 0
    example_id: str = ""
    example_reason: str = ""
    job_ids: list[str] = field(default_factory=list)
    failed_at: list[int] = field(default_factory=list)  # ms, one per job

    def as_json(self, with_ids: bool = False) -> dict[str, Any]:
        body = {
            "signature": self.signature,
            "reason": self.reason,
            "frame": self.frame,
            "count": self.count,
            "firstSeen": self.first_seen,
            "lastSeen": self.last_seen,
            "exampleId": self.example_id,
            "exampleReason": self.example_reason,
        }
        if with_ids:
            body["jobIds"] = self.job_ids
        return body


@dataclass
class GroupReport:
    groups: list[FailureGroup]
    scanned: int
    total_failed: int
    # By signature: the group's last day (failure_trends.py), for the groups that have one.
    trends: dict[str, Trend] = field(default_factory=dict)

    def rows(self) -> list[tuple[FailureGroup, Trend | None]]:
        """Each group with its trend (the page's rows)."""
        return [(group, self.trends.get(group.signature)) for group in self.groups]

    def as_json(self) -> dict[str, Any]:
        groups = []
        for group in self.groups:
            body = group.as_json()
            trend = self.trends.get(group.signature)
            if trend is not None:
                body["trend"] = trend.as_json()
            groups.append(body)
        return {
            "groups": groups,
            "scanned": self.scanned,
            "totalFailed": self.total_failed,
            "complete": self.scanned >= self.total_failed,
        }


async def failure_groups(ref: QueueRef, budget: int | None = None) -> GroupReport:
    if budget is None:
        budget = int(get_config().get("FAILURE_GROUP_BUDGET", 10_000))
    elif not 1 <= budget <= MAX_BUDGET:
        raise BadParameter(f"budget must be between 1 and {MAX_BUDGET}")
    redis = get_client(ref.connection)
    async with translate_redis_errors():
        if not await known(ref):
            raise QueueNotFound(f"Unknown queue {ref.slug!r}")
        flat, total = await fastpipe.execute(
            redis,
            [
                ("ZREVRANGE", ref.key("failed"), 0, budget - 1, "WITHSCORES"),
                ("ZCARD", ref.key("failed")),
            ],
        )
        # RESP3 answers [member, score] pairs, RESP2 a flat list.
        pairs = (
            flat if flat and isinstance(flat[0], list) else zip(flat[::2], flat[1::2], strict=True)
        )
        scored = [(str(member), float(score)) for member, score in pairs]
        groups: dict[str, FailureGroup] = {}
        for start in range(0, len(scored), _CHUNK):
            chunk = scored[start : start + _CHUNK]
            keys = [ref.job_key(job_id) for job_id, _ in chunk]
            read = await read_failures(redis, keys)
            for (job_id, finished), failure in zip(chunk, read, strict=True):
                if failure is None:
                    continue  # removed since its id was read
                reason, pieces = failure
                key = signature_of(reason, pieces)
                group = groups.get(key)
                if group is None:
                    head, _, frame = key.partition(" @ ")
                    group = groups[key] = FailureGroup(key, head, frame, first_seen=int(finished))
                group.count += 1
                finished_ms = int(finished)
                group.first_seen = min(group.first_seen, finished_ms)
                if finished_ms >= group.last_seen:
                    group.last_seen = finished_ms
                    group.example_id = job_id
                    group.example_reason = (reason or "")[:500]
                group.job_ids.append(job_id)
                group.failed_at.append(finished_ms)
    ordered = sorted(groups.values(), key=lambda g: (-g.count, -g.last_seen))
    return GroupReport(ordered, len(scored), int(total))


async def with_trends(ref: QueueRef, report: GroupReport) -> GroupReport:
    """``report`` with each group's last day, the failures it saw merged into the stored
    trends first (failure_trends.py)."""
    seen = [(group.signature, group.failed_at) for group in report.groups]
    async with translate_redis_errors():
        report.trends = await record_and_read(ref, seen, int(time.time() * 1000))
    return report


async def _groups_for_pages(ref: QueueRef, failed: int) -> GroupReport:
    report = await with_trends(ref, await failure_groups(ref))
    # Shared before the scan counts as done: a page that asks between the scan's end and its
    # first waiter's resuming finds the report, not a scan to start again.
    _shared[ref] = (time.monotonic(), failed, report)
    return report


# Reports shared between pages: a failure in a queue makes every page open on its failed tab
# ask again, and a burst of such asks must cost one scan, not one per page. A report is shared
# while the failed count is the one it was made for, for at most SHARED_FOR seconds.
SHARED_FOR = 5.0
_shared: dict[QueueRef, tuple[float, int, GroupReport]] = {}  # made at, failed count, report
_scanning: dict[tuple[asyncio.AbstractEventLoop, QueueRef, int], asyncio.Task[GroupReport]] = {}


async def shared_failure_groups(ref: QueueRef) -> GroupReport:
    """:func:`failure_groups` (default budget) for pages: one scan at a time per queue and
    failed count, and its report reused for a few seconds. Actions take a fresh report (their
    ids must be current)."""
    if not on_redis([ref]):
        return GroupReport([], 0, 0)  # read from Redis' failed sets: none on another store
    async with translate_redis_errors():
        failed = int(await get_client(ref.connection).zcard(ref.key("failed")))
    hit = _shared.get(ref)
    if hit is not None and hit[1] == failed and time.monotonic() - hit[0] < SHARED_FOR:
        return hit[2]
    loop = asyncio.get_running_loop()
    flight = (loop, ref, failed)
    task = _scanning.get(flight)
    if task is None:
        task = _scanning[flight] = loop.create_task(_groups_for_pages(ref, failed))
        task.add_done_callback(lambda _: _scanning.pop(flight, None))
    return await asyncio.shield(task)


def forget_shared(slug: str) -> None:
    """After an action on a queue: its next report is read afresh."""
    for ref in [ref for ref in _shared if ref.slug == slug]:
        _shared.pop(ref, None)


def reset_shared() -> None:
    """Forget every shared report (tests: each starts with an empty Redis)."""
    _shared.clear()

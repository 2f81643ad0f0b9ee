"""Reading history: a queue's series over a range, its per-name table, the oldest waiting
job's age. Plain values (model.py) for the API, the pages and the metrics."""

from __future__ import annotations

import asyncio
import time

from queues.history.model import (
    RANGE_STEPS,
    HistoryPoint,
    HistorySeries,
    HistoryTotals,
    NameRow,
    NamesTable,
    SlowJob,
)
from queues.history.record import NameRecord
from queues.history.spans import read_cover_names, read_cover_totals
from queues.history.storage import FOLDED_NAME, TIER_OF_STEP, TIERS
from queues.history.summary import (
    NO_COUNTS,
    Counts,
    Summary,
    percentiles,
    read_summaries,
    read_summaries_of,
)
from queues.reads.keys import QueueRef
from queues.reads.store import on_redis
from queues.redis import per_connection
from queues.redis.clients import get_client
from queues.redis.cluster import is_cluster
from queues.redis.errors import translate_redis_errors
from queues.redis.fastpipe import Command

RANGE_SECONDS: dict[str, int] = {
    "1h": 3600,
    "6h": 6 * 3600,
    "24h": 86400,
    "7d": 7 * 86400,
    "30d": 30 * 86400,
    "90d": 90 * 86400,
}

# The oldest waiting job: the tail of the wait list (BullMQ pushes on the left, workers take
# from the right), and when it was due (its timestamp plus its delay).
_OLDEST = """
local id = redis.call('LINDEX', KEYS[1], -1)
if not id then return false end
return redis.call('HMGET', ARGV[1] .. id, 'timestamp', 'delay')
"""


# Queues read by one script at most: it holds Redis for two commands each (a few µs).
OLDEST_BATCH = 500
_OLDEST_OF_MANY = """
local found = {}
local count = #KEYS
for i = 1, count do
  local id = redis.call('LINDEX', KEYS[i], -1)
  if id then
    found[i] = redis.call('HMGET', ARGV[i] .. id, 'timestamp', 'delay')
  else
    found[i] = false
  end
end
return found
"""


def _now(now_ms: int | None) -> int:
    return int(time.time() * 1000) if now_ms is None else now_ms


def _starts(range_name: str, now_ms: int) -> tuple[str, list[int]]:
    """The tier read for ``range_name`` and its spans' starts, oldest first, the open one last."""
    if range_name not in RANGE_STEPS:
        raise ValueError(f"unknown range {range_name!r}")
    step_s = RANGE_STEPS[range_name]
    tier = TIER_OF_STEP[step_s]
    size = TIERS[tier][0]
    count = RANGE_SECONDS[range_name] // step_s
    last = now_ms - now_ms % size
    return tier, [last - (count - 1 - index) * size for index in range(count)]


def failure_rate(completed: int, failed: int) -> float | None:
    finished = completed + failed
    return None if finished == 0 else failed / finished


async def _summaries(
    ref: QueueRef, range_name: str, now_ms: int, names: bool
) -> list[tuple[int, Summary]]:
    """Each step's summary, oldest first (empty where nothing was recorded)."""
    tier, starts = _starts(range_name, now_ms)
    async with translate_redis_errors():
        found = await read_summaries(ref, tier, starts, now_ms, names)
    empty = Summary()
    return [(start, found.get(start) or empty) for start in starts]


def _added(counts: list[Counts]) -> Counts:
    if not counts:
        return NO_COUNTS
    a, b, c, d, e, f = (sum(column) for column in zip(*counts, strict=True))
    return (a, b, c, d, e, f)


async def _sketches(ref: QueueRef, range_name: str, now_ms: int) -> NameRecord:
    """The queue's record over the range: its sketches merged (spans.cover)."""
    tier, starts = _starts(range_name, now_ms)
    async with translate_redis_errors():
        found = await read_cover_totals([ref], starts[0], starts[-1] + TIERS[tier][0], now_ms)
    record = found[ref]
    if isinstance(record, BaseException):
        raise record
    return record


def _point(start: int, summary: Summary) -> HistoryPoint:
    completed, failed, retried, stalled = summary.counts[:4]
    return HistoryPoint(
        t=start,
        completed=completed,
        failed=failed,
        retried=retried,
        stalled=stalled,
        wait_ms=summary.wait,
        run_ms=summary.run,
    )


def _totals(counts: list[Counts], sketches: NameRecord) -> HistoryTotals:
    """A range's totals: its steps' counts added, percentiles from its merged sketches."""
    completed, failed, retried, stalled, _, _ = _added(counts)
    return HistoryTotals(
        completed=completed,
        failed=failed,
        retried=retried,
        stalled=stalled,
        failure_rate=failure_rate(completed, failed),
        wait_ms=percentiles(sketches.wait),
        run_ms=percentiles(sketches.run),
    )


async def read_history(ref: QueueRef, range_name: str, now_ms: int | None = None) -> HistorySeries:
    """Every step of ``range_name`` up to now (the open one last), all names together: the
    points and the counts from the steps' summaries, the totals' percentiles from the range's
    sketches (spans.cover)."""
    now = _now(now_ms)
    # Three reads at once: one round trip's wait, not three in a row.
    summaries, sketches, oldest_of = await asyncio.gather(
        _summaries(ref, range_name, now, names=False),
        _sketches(ref, range_name, now),
        oldest_waiting_ms([ref], now),
    )
    oldest = oldest_of[ref]
    return HistorySeries(
        queue=ref.slug,
        range=range_name,
        step_s=RANGE_STEPS[range_name],
        points=[_point(start, summary) for start, summary in summaries],
        totals=_totals([s.counts for _, s in summaries], sketches),
        oldest_waiting_ms=oldest,
    )


async def read_totals(
    refs: list[QueueRef], range_name: str, now_ms: int | None = None
) -> dict[QueueRef, HistoryTotals]:
    """The totals :func:`read_history` gives of each queue over ``range_name``, without its
    points: every queue's summaries and sketches in one round trip per connection (and one more
    for what is made from finer spans). A queue whose read failed is left out."""
    now = _now(now_ms)
    tier, starts = _starts(range_name, now)
    async with translate_redis_errors():
        steps, covers = await asyncio.gather(
            read_summaries_of(refs, tier, starts, now, names=False),
            read_cover_totals(refs, starts[0], starts[-1] + TIERS[tier][0], now),
        )
    found: dict[QueueRef, HistoryTotals] = {}
    for ref in refs:
        summaries, sketches = steps[ref], covers[ref]
        if isinstance(summaries, BaseException) or isinstance(sketches, BaseException):
            continue
        found[ref] = _totals([s.counts for s in summaries.values()], sketches)
    return found


async def read_names(ref: QueueRef, range_name: str, now_ms: int | None = None) -> NamesTable:
    """One row per job name over ``range_name``, the busiest first; names past the cap are
    one row, ``FOLDED_NAME``. Counts and slowest runs from the steps' summaries, percentiles
    from the range's sketches."""
    now = _now(now_ms)
    tier, starts = _starts(range_name, now)
    async with translate_redis_errors():
        # Both reads at once: one round trip's wait, not two in a row.
        steps, sketches = await asyncio.gather(
            _summaries(ref, range_name, now, names=True),
            read_cover_names(ref, starts[0], starts[-1] + TIERS[tier][0], now),
        )
    counts: dict[str, list[Counts]] = {}
    runs: dict[str, list[tuple[str, float]]] = {}
    for _, summary in steps:
        for name, (step_counts, step_runs) in summary.names.items():
            counts.setdefault(name, []).append(step_counts)
            runs.setdefault(name, []).extend(step_runs)
    rows = []
    for name, name_counts in counts.items():
        completed, failed, retried, stalled, _, _ = _added(name_counts)
        sketch = sketches.get(name) or NameRecord()
        slowest = NameRecord()
        slowest.keep_slowest(runs[name])
        rows.append(
            NameRow(
                name=name,
                completed=completed,
                failed=failed,
                retried=retried,
                stalled=stalled,
                failure_rate=failure_rate(completed, failed),
                wait_ms=percentiles(sketch.wait),
                run_ms=percentiles(sketch.run),
                slowest=[SlowJob(job_id, run) for job_id, run in slowest.slowest],
            )
        )
    rows.sort(key=lambda row: (-(row.completed + row.failed), row.name))
    return NamesTable(
        queue=ref.slug, range=range_name, names=rows, folded_names=FOLDED_NAME in counts
    )


async def oldest_waiting_ms(
    refs: list[QueueRef], now_ms: int | None = None
) -> dict[QueueRef, int | None]:
    """How long each queue's oldest waiting job has waited since it was due (None: none
    waits), in one round trip per connection: on one Redis, one script for up to
    ``OLDEST_BATCH`` queues (two commands a queue, not three); on a Redis Cluster, whose
    queues' keys share no slot, one a queue."""
    if not refs:
        return {}
    now = _now(now_ms)
    batches: list[list[QueueRef]] = []
    open_batch: dict[str, list[QueueRef]] = {}
    for ref in on_redis(refs):  # BullMQ on PostgreSQL: not read here (None)
        batch = open_batch.get(ref.connection)
        if batch is None or len(batch) >= OLDEST_BATCH:
            batch = []
            batches.append(batch)
            if not is_cluster(get_client(ref.connection)):
                open_batch[ref.connection] = batch
        batch.append(ref)
    commands: list[Command] = [
        ("EVAL", _OLDEST, 1, batch[0].key("wait"), batch[0].key(""))
        if len(batch) == 1
        else (
            "EVAL",
            _OLDEST_OF_MANY,
            len(batch),
            *(ref.key("wait") for ref in batch),
            *(ref.key("") for ref in batch),
        )
        for batch in batches
    ]
    async with translate_redis_errors():
        replies = await per_connection.execute([b[0].connection for b in batches], commands)
    ages: dict[QueueRef, int | None] = dict.fromkeys(refs)
    for batch, reply in zip(batches, replies, strict=True):
        if len(batch) == 1:
            ages[batch[0]] = _age(reply, now)
        elif isinstance(reply, list):
            for ref, each in zip(batch, reply, strict=True):
                ages[ref] = _age(each, now)
    return ages


def _age(reply: object, now_ms: int) -> int | None:
    if not isinstance(reply, list) or not reply or reply[0] is None:
        return None
    try:
        due = int(reply[0]) + int(reply[1] or 0)
    except (TypeError, ValueError):
        return None
    return max(0, now_ms - due)

"""Counts moved by BullMQ's own events (written by the Node peer) agree with an exact read."""

from __future__ import annotations

import asyncio
import json
from typing import Any

from queues.live.count_estimate import CountEstimates, Effect
from queues.live.events import parse_entry
from queues.reads.counts import read_summaries
from queues.reads.keys import QueueRef
from tests.support.peer import Peer

MAIL = QueueRef("bull", "mail")


async def exact(ref: QueueRef) -> tuple[dict[str, int], bool]:
    (summary,) = await read_summaries([ref])
    return summary.counts, summary.paused


def tail(redis_client: Any, ref: QueueRef) -> str:
    last = redis_client.xrevrange(ref.key("events"), count=1)
    return str(last[0][0]) if last else "0-0"


def follow(redis_client: Any, ref: QueueRef, estimates: CountEstimates, after: str) -> list[Effect]:
    """Apply every event after ``after`` to the estimates, as the follower does."""
    entries = redis_client.xrange(ref.key("events"), min=f"({after}", max="+")
    return [estimates.apply(ref, parse_entry(entry_id, fields)) for entry_id, fields in entries]


async def add(peer: Peer, *, name: str, opts: dict[str, Any] | None = None) -> None:
    args = ["add", "--queue", "mail", "--name", name, "--data", "{}"]
    if opts is not None:
        args += ["--opts", json.dumps(opts)]
    await asyncio.to_thread(peer, *args)


async def test_events_move_counts_to_what_redis_holds(peer: Peer, redis_client: Any) -> None:
    await add(peer, name="seed")
    estimates = CountEstimates()
    counts, paused = await exact(MAIL)
    estimates.set_exact(MAIL, counts, paused, legacy_paused=False)
    start = tail(redis_client, MAIL)

    for n in range(3):
        await add(peer, name=f"plain-{n}")
    await asyncio.to_thread(peer, "work", "--queue", "mail", "--count", "4")
    retry = {"attempts": 2, "backoff": {"type": "fixed", "delay": 50}}
    for n in range(2):
        await add(peer, name=f"flaky-{n}", opts=retry)
    # Both flaky jobs fail, wait out their backoff in delayed, come back and fail for good.
    await asyncio.to_thread(peer, "work", "--queue", "mail", "--count", "2", "--fail")
    await add(peer, name="later", opts={"delay": 60_000})

    effects = follow(redis_client, MAIL, estimates, start)
    assert Effect.MOVED in effects
    assert Effect.UNCERTAIN not in effects
    truth, _ = await exact(MAIL)
    assert (truth["completed"], truth["failed"], truth["delayed"]) == (4, 2, 1), truth
    assert estimates.counts(MAIL) == truth


async def test_retention_is_learned_from_one_exact_read(peer: Peer, redis_client: Any) -> None:
    await add(peer, name="seed", opts={"removeOnComplete": True})
    await asyncio.to_thread(peer, "work", "--queue", "mail", "--count", "1")
    estimates = CountEstimates()
    counts, paused = await exact(MAIL)
    estimates.set_exact(MAIL, counts, paused, legacy_paused=False)

    async def run_batch(size: int) -> None:
        start = tail(redis_client, MAIL)
        for n in range(size):
            await add(peer, name=f"gone-{n}", opts={"removeOnComplete": True})
        await asyncio.to_thread(peer, "work", "--queue", "mail", "--count", str(size))
        follow(redis_client, MAIL, estimates, start)

    await run_batch(3)
    # Completed jobs vanish without an event: the estimate overshoots once...
    assert estimates.counts(MAIL)["completed"] == 3
    truth, paused = await exact(MAIL)
    assert truth["completed"] == 0
    estimates.set_exact(MAIL, truth, paused, legacy_paused=False)
    # ...and, having learned it, no longer grows completed for this queue.
    await run_batch(2)
    truth, _ = await exact(MAIL)
    assert estimates.counts(MAIL) == truth


async def test_prioritized_jobs_are_corrected_by_the_next_exact_read(
    peer: Peer, redis_client: Any
) -> None:
    await add(peer, name="seed")
    estimates = CountEstimates()
    counts, paused = await exact(MAIL)
    estimates.set_exact(MAIL, counts, paused, legacy_paused=False)
    start = tail(redis_client, MAIL)
    await add(peer, name="urgent", opts={"priority": 3})
    follow(redis_client, MAIL, estimates, start)
    # BullMQ reports a prioritized job as "waiting": the total is right, the split is not...
    truth, paused = await exact(MAIL)
    assert truth["prioritized"] == 1 and truth["waiting"] == 1
    guess = estimates.counts(MAIL)
    assert guess["waiting"] + guess["prioritized"] == 2
    # ...until the exact read the follower schedules after every change.
    estimates.set_exact(MAIL, truth, paused, legacy_paused=False)
    assert estimates.counts(MAIL) == truth


async def test_events_it_cannot_follow_ask_for_a_read(peer: Peer, redis_client: Any) -> None:
    estimates = CountEstimates()
    await add(peer, name="seed")
    start = tail(redis_client, MAIL)
    # A queue never read exactly cannot be estimated.
    assert follow(redis_client, MAIL, estimates, "0-0")[-1] is Effect.UNCERTAIN
    counts, paused = await exact(MAIL)
    estimates.set_exact(MAIL, counts, paused, legacy_paused=False)
    redis_client.xadd(MAIL.key("events"), {"event": "cleaned", "count": "5"})
    assert follow(redis_client, MAIL, estimates, start) == [Effect.UNCERTAIN]

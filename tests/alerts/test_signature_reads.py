"""The new-signature alert reads failed jobs' hashes several script calls a round trip and
several round trips at once: the signatures it finds are those read one job at a time, each
job on its own queue, also for a malformed job hash and an id whose job is gone, and also when
a read learns more signatures than are remembered; on a cluster, each job's read stays in its
place when the calls are split by slot."""

from __future__ import annotations

import asyncio
import json
import math
import time
from collections.abc import AsyncIterator, Callable
from typing import Any, NoReturn

import pytest
import pytest_asyncio
import redis.asyncio as aioredis
from bullmq import Queue, Worker

from queues.alerts import signatures
from queues.failures.failure_groups import read_failures, signature_of
from queues.reads.keys import QueueRef
from queues.redis.clients import get_client
from tests.redis.test_cluster import TENANTS, ClusterPeer, cluster_peer, on_cluster
from tests.support.servers.cluster_topology import ClusterTopology
from tests.support.servers.redis_server import RedisServer

__all__ = ["cluster_peer", "on_cluster"]  # the fixtures, used by name

HOLDER = "a-test-worker"  # the lock token the jobs are taken with
# Every queue has jobs 1, 2, 3...: replies put on the wrong queue give the wrong signature.
QUEUES = ("alpha", "bravo", "charlie", "delta")
BEFORE_JOBS = 25
RECENT_JOBS = 45


def _refused(text: str) -> NoReturn:
    raise ConnectionRefusedError(text)


def _timed_out(text: str) -> NoReturn:
    raise TimeoutError(text)


def _went_away(text: str) -> NoReturn:
    raise ConnectionResetError(text)


def _rate_limited(text: str) -> NoReturn:
    raise PermissionError(text)


def _garbage(text: str) -> NoReturn:
    raise ValueError(text)


KINDS: tuple[tuple[str, Callable[[str], NoReturn]], ...] = (
    ("refused", _refused),
    ("timed out", _timed_out),
    ("went away", _went_away),
    ("was rate limited", _rate_limited),
    ("sent garbage", _garbage),
)


async def fail_jobs(connection: aioredis.Redis, name: str, kinds: list[int]) -> None:
    """One job of queue ``name`` per kind, taken and failed as a worker fails it (BullMQ's
    scripts), with a traceback raised from that kind's function."""
    queue = Queue(name, {"connection": connection})
    worker = Worker(
        name, lambda job, token: asyncio.sleep(0), {"connection": connection, "autorun": False}
    )
    try:
        await queue.addBulk([{"name": "send", "data": {"kind": kind}} for kind in kinds])
        for kind in kinds:
            job = await worker.getNextJob(HOLDER)
            assert job is not None
            label, raise_it = KINDS[kind]
            try:
                raise_it(f"{name} {label}")
            except (OSError, ValueError) as error:
                await job.moveToFailed(error, HOLDER)  # its traceback: the one being handled
    finally:
        await worker.close()
        await queue.close()


@pytest_asyncio.fixture
async def redis(redis_server: RedisServer) -> AsyncIterator[aioredis.Redis]:
    connection = aioredis.Redis.from_url(redis_server.url, decode_responses=True)
    yield connection
    await connection.aclose()


async def seeded(redis: aioredis.Redis) -> int:
    """Failures of two kinds, then 2.5 s later failures of five kinds, in every queue; in
    alpha, a job hash that is not BullMQ's and an id whose job is gone; in bravo, a job key
    that is not a hash. Answers the window (seconds) that holds the later failures only."""
    for index, name in enumerate(QUEUES):
        await fail_jobs(redis, name, [(index + i) % 2 for i in range(BEFORE_JOBS)])
    before_ended = time.time()
    await asyncio.sleep(2.5)
    later = time.time()
    for index, name in enumerate(QUEUES):
        await fail_jobs(redis, name, [(index * 3 + i) % 5 for i in range(RECENT_JOBS)])
    # What BullMQ never writes, written by hand: damage the reads must step over.
    at = int(later * 1000)
    await redis.hset("bull:alpha:odd", mapping={"failedReason": "alpha odd", "stacktrace": "[x"})
    await redis.zadd("bull:alpha:failed", {"odd": at, "gone": at})
    await redis.set("bull:bravo:text", "not a hash")
    await redis.zadd("bull:bravo:failed", {"text": at})
    # A whole number of seconds ending now that starts 0.5-1.5 s before the later failures
    # (and at least a second after the earlier ones).
    window = math.ceil(time.time() - later + 0.5)
    assert time.time() - window > before_ended + 0.5
    return window


async def newest(
    redis: aioredis.Redis, key: str, high: Any, low: Any, most: int
) -> list[tuple[str, int]]:
    """(job id, failure time in ms) of a failed set's newest ``most`` in the range."""
    found: Any = await redis.zrevrangebyscore(key, high, low, start=0, num=most, withscores=True)
    return [(str(job_id), int(at)) for job_id, at in found]


async def one_at_a_time(
    redis: aioredis.Redis, ref: QueueRef, since: int
) -> tuple[list[str], dict[tuple[str, int], str | None]]:
    """A queue's new signatures worked out from its jobs read one by one; with the signature
    read for each failure, by job id and failure time (None: nothing to read)."""
    key = ref.key("failed")
    recent = await newest(redis, key, "+inf", since, signatures.RECENT)
    before = await newest(redis, key, f"({since}", "-inf", signatures.BEFORE)
    read: dict[tuple[str, int], str | None] = {}
    for job_id, at in (*recent, *before):
        (failure,) = await read_failures(redis, [ref.job_key(job_id)])
        read[(job_id, at)] = None if failure is None else signature_of(*failure)
    assert recent and before
    older = {read[(job_id, at)] for job_id, at in before}
    new: dict[str, None] = {}
    for job_id, at in recent:
        found = read[(job_id, at)]
        if found is not None and found not in older:
            new[found] = None
    return list(new), read


@pytest.mark.parametrize(
    ("chunk", "calls", "trips", "remembered"),
    [(7, 3, 2, 100_000), (500, 4, 2, 100_000), (11, 2, 3, 60)],
    ids=["many-trips", "one-trip", "fewer-remembered-than-read"],
)
async def test_signatures_read_in_batches_are_those_read_one_job_at_a_time(
    redis: aioredis.Redis,
    monkeypatch: pytest.MonkeyPatch,
    chunk: int,
    calls: int,
    trips: int,
    remembered: int,
) -> None:
    window = await seeded(redis)
    monkeypatch.setattr(signatures, "_CHUNK", chunk)
    monkeypatch.setattr(signatures, "_CALLS", calls)
    monkeypatch.setattr(signatures, "_TRIPS", trips)
    monkeypatch.setattr(signatures, "_REMEMBERED", remembered)
    refs = [QueueRef("bull", name) for name in QUEUES]
    since = int(time.time() * 1000) - window * 1000
    found = await signatures.new_signatures({ref: 1 for ref in refs}, window)

    expected: dict[QueueRef, list[str]] = {}
    for ref in refs:
        expected[ref], read = await one_at_a_time(redis, ref, since)
        # What each job read gave: remembered under its own queue, job and failure time.
        learned = {
            (job_id, at): sig for (of, job_id, at), sig in signatures._known.items() if of == ref
        }
        if remembered >= 2 * len(QUEUES) * (BEFORE_JOBS + RECENT_JOBS):
            assert learned == {failure: sig for failure, sig in read.items() if sig is not None}
        else:
            assert all(read.get(failure) == sig for failure, sig in learned.items())
    assert found == expected
    assert len(signatures._known) <= remembered
    # Each queue's own failures, the earlier kinds not new: three kinds new, and alpha's odd one.
    for ref in refs:
        assert len(found[ref]) == 3 + (ref.name == "alpha")
        assert all(sig.startswith(f"{ref.name} ") for sig in found[ref])
    assert "alpha odd" in found[QueueRef("bull", "alpha")]
    assert any(sig.endswith("test_signature_reads.py in _garbage") for sig in found[refs[0]])


async def test_a_read_split_into_calls_on_a_cluster_keeps_each_job_in_its_place(
    cluster_topology: ClusterTopology, cluster_peer: ClusterPeer, on_cluster: dict[str, Any]
) -> None:
    # Queues on every master, failed by Node BullMQ: a script call may name one slot's keys.
    for queue in TENANTS:
        data = json.dumps({"error": f"{queue} refused"})
        await asyncio.to_thread(
            cluster_peer,
            "add-bulk",
            "--queue",
            queue,
            "--name",
            "w",
            "--count",
            "5",
            "--data",
            data,
        )
        await asyncio.to_thread(cluster_peer, "work", "--queue", queue, "--fail", "--count", "5")
    keys = [f"bull:{queue}:{job}" for job in range(1, 6) for queue in TENANTS]
    keys.insert(7, f"bull:{TENANTS[0]}:gone")
    redis = get_client("default")
    split = await read_failures(redis, keys, per_call=2)
    alone = [(await read_failures(redis, [key]))[0] for key in keys]
    assert split == alone
    assert split[7] is None
    assert [row[0] if row else None for row in split] == [
        f"{key.split(':')[1]} refused" if not key.endswith("gone") else None for key in keys
    ]

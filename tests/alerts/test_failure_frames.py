"""Failure groups are named after the last attempt's innermost application frame, however long
the stack trace and however many attempts: jobs of Bullpen's Python runner and of Node BullMQ
keep one group across retries, and the new-signature alert does not fire again for it."""

from __future__ import annotations

import asyncio
import json
import time
from typing import Any

import pytest
from django.test import AsyncClient

from queues.alerts.signatures import new_signatures
from queues.reads.keys import QueueRef
from queues.runner import Producer, QueueOptions, Registry
from tests.support.peer import Peer
from tests.support.worker_fixtures import Runners, wait_for

pytestmark = pytest.mark.django_db(transaction=True)

RETRIED = QueueOptions(attempts=2, backoff_ms=10)
DECLINED = "the issuer refused the charge; " * 3


def _lookup(depth: int) -> None:
    if depth:
        _lookup(depth - 1)
    raise LookupError("row " + "x" * 5000 + " missing")


def _charge(payload: dict[str, Any]) -> None:
    """Fails with a traceback of several kilobytes: a long chain under the error raised here."""
    try:
        _lookup(40)
    except LookupError as error:
        raise ValueError(f"card declined for order {payload['order']}") from error


async def _failed(client: Any, queue: str, count: int) -> bool:
    return int(client.zcard(f"bull:{queue}:failed")) >= count


async def _groups(client: AsyncClient, queue: str) -> list[dict[str, Any]]:
    body = (await client.get(f"/queues/api/queues/{queue}/failure-groups/")).json()
    groups: list[dict[str, Any]] = body["groups"]
    return groups


async def test_a_python_job_retried_with_a_long_traceback_stays_in_its_group(
    client: AsyncClient, runners: Runners, redis_client: Any
) -> None:
    registry = Registry()

    @registry.handler("payments", RETRIED)
    async def charge(payload: dict[str, Any]) -> None:
        _charge(payload)

    async with Producer(registry) as producer:
        once = await producer.add("payments", "charge", {"order": 1}, attempts=1)
        await producer.add("payments", "charge", {"order": 2})
    await runners.start(registry)
    await wait_for("two failed charges", lambda: _failed(redis_client, "payments", 2))
    traces = {
        job_id: json.loads(redis_client.hget(f"bull:payments:{job_id}", "stacktrace"))
        for job_id in redis_client.zrange("bull:payments:failed", 0, -1)
    }
    assert sorted(len(trace) for trace in traces.values()) == [1, 2]
    assert all(len(trace[-1]) > 4096 for trace in traces.values())
    assert "worker.py" in traces[once][0]

    (group,) = await _groups(client, "payments")
    assert group["count"] == 2
    assert group["frame"] == "test_failure_frames.py in _charge"
    assert group["reason"] == "card declined for order <n>"


async def test_a_retried_failure_is_not_a_new_signature(
    runners: Runners, redis_client: Any
) -> None:
    registry = Registry()

    @registry.handler("invoices", RETRIED)
    async def charge(payload: dict[str, Any]) -> None:
        # A long message: each attempt's trace is most of a kilobyte.
        raise ValueError(f"card declined for order {payload['order']}: {DECLINED}")

    async with Producer(registry) as producer:
        first = await producer.add("invoices", "charge", {"order": 1}, attempts=1)
    runner = await runners.start(registry)
    await wait_for("the first failure", lambda: _failed(redis_client, "invoices", 1))
    # It failed an hour ago, before the alert's window (BullMQ stamps the time it happened).
    an_hour_ago = int(time.time() * 1000) - 3_600_000
    redis_client.zadd("bull:invoices:failed", {first: an_hour_ago}, xx=True)
    async with Producer(registry) as producer:
        await producer.add("invoices", "charge", {"order": 2})  # two attempts
    await wait_for("the retried failure", lambda: _failed(redis_client, "invoices", 2))
    await runners.stop(runner)
    traces = [
        redis_client.hget(f"bull:invoices:{job_id}", "stacktrace")
        for job_id in redis_client.zrange("bull:invoices:failed", 0, -1)
    ]
    # One trace for the first job, one per attempt for the retried one.
    assert [len(json.loads(trace)) for trace in traces] == [1, 2]

    ref = QueueRef("bull", "invoices")
    assert await new_signatures({ref: 2}, 600) == {ref: []}
    # Both in the window: the one signature is new (counts that differ: not the answer above).
    assert await new_signatures({ref: (2, "both")}, 7200) == {
        ref: [f"card declined for order <n>: {DECLINED.strip()} @ test_failure_frames.py in charge"]
    }


async def test_node_stack_traces_name_the_handler_frame_after_a_long_message(
    client: AsyncClient, peer: Peer
) -> None:
    error = json.dumps({"error": "upstream said: " + "no " * 700})
    for attempts in (1, 2):
        opts = json.dumps({"attempts": attempts, "backoff": {"type": "fixed", "delay": 0}})
        await asyncio.to_thread(
            peer, "add", "--queue", "mail", "--name", "send", "--data", error, "--opts", opts
        )
    await asyncio.to_thread(peer, "work", "--queue", "mail", "--fail", "--count", "2")

    (group,) = await _groups(client, "mail")
    assert group["count"] == 2
    assert "peer.mjs" in group["frame"] and "bullmq" not in group["frame"]

"""Node and Python on the same queues: jobs a Node producer adds are run by the Python runner,
and jobs the runner's producer adds are run by a Node BullMQ worker."""

from __future__ import annotations

import asyncio
import json
from typing import Any

from queues.runner import JobContext, Producer, QueueOptions, Registry, business_job_id
from tests.support.peer import Peer
from tests.support.worker_fixtures import Runners, wait_for


async def test_node_produced_jobs_run_in_the_python_runner(
    runners: Runners, peer: Peer, redis_client: Any
) -> None:
    ok = await asyncio.to_thread(
        peer,
        "add",
        "--queue",
        "from-node",
        "--name",
        "resize",
        "--data",
        json.dumps({"image": "a.png", "widths": [64, 128]}),
        "--opts",
        json.dumps({"jobId": "img-a", "attempts": 2, "removeOnComplete": False}),
    )
    bad = await asyncio.to_thread(
        peer, "add", "--queue", "from-node", "--name", "resize", "--data", json.dumps({})
    )
    registry = Registry()

    @registry.handler("from-node", QueueOptions(attempts=2, backoff_ms=5))
    async def resize(payload: dict[str, Any], ctx: JobContext) -> dict[str, Any]:
        await ctx.progress({"pct": 100})
        await ctx.log(f"resized {payload['image']}")
        return {"sizes": payload["widths"]}

    await runners.start(registry)

    async def both_done() -> bool:
        return (
            int(redis_client.zcard("bull:from-node:completed")) == 1
            and int(redis_client.zcard("bull:from-node:failed")) == 1
        )

    await wait_for("both Node jobs", both_done)
    await runners.stop_all()

    # Read back through Node BullMQ itself.
    seen = await asyncio.to_thread(
        peer, "inspect", "--queue", "from-node", "--ids", f"{ok['id']},{bad['id']}"
    )
    done = seen["details"][ok["id"]]
    assert done["state"] == "completed"
    assert done["returnvalue"] == {"sizes": [64, 128]}
    assert done["progress"] == {"pct": 100}
    assert done["logs"] == ["resized a.png"]
    assert done["attemptsMade"] == 1
    failed = seen["details"][bad["id"]]
    assert failed["state"] == "failed"
    # The Node job had no attempts: the queue's default (2) applied, then the dead letter.
    assert failed["attemptsMade"] == 2
    assert "KeyError" in failed["stacktrace"][-1]
    assert redis_client.exists(f"bull:dead-letter:from-node.{bad['id']}") == 1


async def test_runner_produced_jobs_run_in_a_node_worker(peer: Peer, redis_client: Any) -> None:
    registry = Registry()
    registry.register("to-node", _unused, QueueOptions(attempts=3, backoff_ms=5))
    async with Producer(registry) as producer:
        ids = [
            await producer.add(
                "to-node", "send", {"user": n}, job_id=business_job_id("email", n, "weekly")
            )
            for n in range(5)
        ]
        # The same business key again: a no-op, so Node sees 5 jobs, not 6.
        await producer.add(
            "to-node", "send", {"user": 0}, job_id=business_job_id("email", 0, "weekly")
        )
    result = await asyncio.to_thread(
        peer, "work", "--queue", "to-node", "--count", "5", "--concurrency", "2", "--progress"
    )
    assert result == {"processed": 5, "completed": 5, "failed": 0}
    seen = await asyncio.to_thread(peer, "inspect", "--queue", "to-node", "--ids", ",".join(ids))
    for job_id in ids:
        job = seen["details"][job_id]
        assert job["state"] == "completed"
        assert job["returnvalue"] == {"ok": True, "id": job_id}
        assert job["opts"]["attempts"] == 3
        assert job["opts"]["backoff"] == {"type": "exponential", "delay": 5}
    assert seen["counts"]["waiting"] == 0


async def test_a_node_worker_retries_runner_jobs_with_their_backoff(peer: Peer) -> None:
    registry = Registry()
    registry.register("node-fails", _unused, QueueOptions(attempts=3, backoff_ms=5))
    async with Producer(registry) as producer:
        job_id = await producer.add("node-fails", "send", {})
    result = await asyncio.to_thread(
        peer, "work", "--queue", "node-fails", "--count", "1", "--fail"
    )
    assert result == {"processed": 1, "completed": 0, "failed": 1}
    seen = await asyncio.to_thread(peer, "inspect", "--queue", "node-fails", "--ids", job_id)
    assert seen["details"][job_id]["attemptsMade"] == 3


async def _unused(payload: Any) -> None:  # these queues are worked by Node
    return None

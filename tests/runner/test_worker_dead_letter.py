"""Replaying a dead letter to its original queue (the queue-layer function the dashboard's
"replay" action calls)."""

from __future__ import annotations

import json
from typing import Any

import pytest

from queues.errors import Conflict, JobNotFound
from queues.reads.keys import QueueRef
from queues.runner import Producer, QueueOptions, Registry, replay_dead_letter
from tests.support.worker_fixtures import Runners, job_hash, wait_for


def _registry(outcomes: dict[str, bool]) -> Registry:
    """Fails a job while ``outcomes[id]`` is False."""
    registry = Registry()

    async def deliver(payload: Any, ctx: Any) -> str:
        if not outcomes.get(ctx.job_id, False):
            raise RuntimeError("endpoint down")
        return "delivered"

    registry.register("hooks", deliver, QueueOptions(attempts=2, backoff_ms=5))
    return registry


async def _dead(client: Any, dead_id: str) -> bool:
    return bool(client.exists(f"bull:dead-letter:{dead_id}"))


async def test_replay_retries_the_failed_original(runners: Runners, redis_client: Any) -> None:
    outcomes: dict[str, bool] = {}
    registry = _registry(outcomes)
    async with Producer(registry) as producer:
        job_id = await producer.add("hooks", "post", {"url": "https://a.example"}, job_id="hook-1")
    await runners.start(registry)
    await wait_for("the dead letter", lambda: _dead(redis_client, "hooks.hook-1"))

    outcomes[job_id] = True  # the endpoint is back
    replayed = await replay_dead_letter("hooks.hook-1")
    assert replayed.as_json() == {
        "queue": "hooks",
        "jobId": "hook-1",
        "deadLetterId": "hooks.hook-1",
        "how": "retried",
    }

    async def delivered() -> bool:
        return bool(redis_client.zscore("bull:hooks:completed", "hook-1") is not None)

    await wait_for("the replayed job", delivered)
    assert redis_client.exists("bull:dead-letter:hooks.hook-1") == 0
    fields = job_hash(redis_client, "hooks", "hook-1")
    assert json.loads(fields["returnvalue"]) == "delivered"
    assert fields["atm"] == "1"  # attempts were reset by the replay


async def test_replay_re_adds_a_removed_original(runners: Runners, redis_client: Any) -> None:
    registry = _registry({})
    async with Producer(registry) as producer:
        await producer.add("hooks", "post", {"n": 7})
    runner = await runners.start(registry)
    await wait_for("the dead letter", lambda: _dead(redis_client, "hooks.1"))
    await runners.stop(runner)
    # The failed job was cleaned away since.
    async with Producer(registry) as producer:
        await producer.queue("hooks").remove("1")

    replayed = await replay_dead_letter("hooks.1")
    assert replayed.how == "re-added"
    assert replayed.job_id != "1"  # numeric ids are the queue's to give
    fields = job_hash(redis_client, "hooks", replayed.job_id)
    assert fields["name"] == "post"
    assert json.loads(fields["data"]) == {"n": 7}
    assert json.loads(fields["opts"])["attempts"] == 2
    assert redis_client.lrange("bull:hooks:wait", 0, -1) == [replayed.job_id]
    assert redis_client.exists("bull:dead-letter:hooks.1") == 0


async def test_replay_refuses_what_is_not_dead(runners: Runners, redis_client: Any) -> None:
    registry = _registry({})
    async with Producer(registry) as producer:
        await producer.add("hooks", "post", {}, job_id="hook-2")
    runner = await runners.start(registry)
    await wait_for("the dead letter", lambda: _dead(redis_client, "hooks.hook-2"))
    await runners.stop(runner)
    async with Producer(registry) as producer:
        await producer.queue("hooks").retryJobs({"state": "failed"})  # retried by hand meanwhile

    with pytest.raises(Conflict, match="is waiting, not failed"):
        await replay_dead_letter("hooks.hook-2")
    assert redis_client.exists("bull:dead-letter:hooks.hook-2") == 1
    with pytest.raises(JobNotFound):
        await replay_dead_letter("hooks.nope")
    with pytest.raises(JobNotFound):
        await replay_dead_letter("hooks.hook-2", dead_letters=QueueRef("bull", "other-dlq"))

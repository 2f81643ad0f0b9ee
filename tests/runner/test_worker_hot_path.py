"""The worker's per-job shortcuts do what bullmq does: jobs built by jobs.py are bullmq's
``Job.fromJSON`` jobs, finish.py's script call is bullmq's ``moveToCompleted``."""

from __future__ import annotations

import json
from collections.abc import AsyncIterator
from concurrent.futures import ThreadPoolExecutor
from typing import Any

import pytest
from bullmq import Job

from queues.runner import Producer, QueueOptions, Registry
from queues.runner.clients.redis_clients import runner_client
from queues.runner.dispatch import Dispatcher
from queues.runner.jobs import job_from_raw
from queues.runner.worker import RunnerWorker
from tests.support.worker_fixtures import Runners, wait_for

OPTS = {
    "attempts": 3,
    "backoff": {"type": "exponential", "delay": 1000},
    "removeOnComplete": {"count": 10},
}
BASE = {
    "name": "send",
    "data": '{"to":"a@example.com","n":[1,2.5,null,true]}',
    "opts": json.dumps(OPTS),
    "timestamp": "1700000000000",
    "delay": "0",
    "priority": "0",
    "processedOn": "1700000000001",
    "ats": "1",
}
# Job hashes as Redis may hold them: bullmq's, Node's, hand-written, odd.
RAWS: list[dict[str, Any]] = [
    BASE,
    {**BASE, "opts": "{}"},
    {**BASE, "opts": '{"kl":5,"backoff":3,"jobId":"custom","lifo":true}'},
    {**BASE, "opts": '{"backoff":{"type":"fixed","delay":10},"removeOnFail":true}'},
    {
        **BASE,
        "progress": '{"pct":55}',
        "stacktrace": '["Error: a","Error: b"]',
        "returnvalue": '{"x":1}',
        "finishedOn": "1700000000009",
        "failedReason": "boom",
        "atm": "2",
        "stc": "1",
        "defa": "bad input",
        "rjk": "every-minute",
        "parentKey": "bull:parents:1",
        "parent": '{"id":"1","queueKey":"bull:parents"}',
    },
    {**BASE, "returnvalue": "not json", "attemptsMade": "3", "ats": "", "priority": "7"},
    {**BASE, "data": '{"big":123456789012345678901234567890,"nan":NaN}'},
    {**BASE, "data": '"\\ud800 lone surrogate"', "progress": "0", "stacktrace": "[]"},
    {**BASE, "data": '{"text":"caf\\u00e9 \\u2603","emoji":"\\ud83d\\ude00"}'},
    {**BASE, "opts": '{"fpof":true,"parent":{"id":"1","queue":"bull:parents"}}'},
    {**BASE, "opts": '{"de":{"id":"once"}}'},
    {**BASE, "opts": '{"removeDependencyOnFailure":true}'},
    {"name": "bare", "timestamp": "5"},
]


@pytest.fixture
async def worker() -> AsyncIterator[RunnerWorker]:
    registry = Registry()

    async def noop(payload: Any) -> None:
        return None

    registry.register("hot", noop, QueueOptions(attempts=2, remove_on_complete=7))
    spec = registry.get("hot")
    made = RunnerWorker(
        spec,
        Dispatcher(spec, ThreadPoolExecutor(1)),
        connection=runner_client(blocking=True),
        prefix="bull",
        name="hot-test",
        dead_letters=None,
    )
    yield made
    await made.close()


def _state(job: Job) -> dict[str, Any]:
    return {key: repr(value) for key, value in vars(job).items()}


@pytest.mark.parametrize("raw", RAWS, ids=range(len(RAWS)))
async def test_jobs_are_built_as_bullmq_builds_them(worker: RunnerWorker, raw: Any) -> None:
    ours = job_from_raw(worker, raw, "42")
    assert _state(ours) == _state(Job.fromJSON(worker, raw, "42"))


async def test_jobs_from_redis_are_built_as_bullmq_builds_them(
    worker: RunnerWorker, redis_client: Any
) -> None:
    registry = Registry()
    registry.register("hot", lambda payload: None, QueueOptions(attempts=2))
    async with Producer(registry) as producer:
        ids = [
            await producer.add("hot", "plain", {"n": 1}),
            await producer.add("hot", "delayed", [1, "two"], delay=60_000),
            await producer.add("hot", "custom", "text", job_id="order-7", priority=3),
        ]
    for job_id in ids:
        raw = redis_client.hgetall(f"bull:hot:{job_id}")
        built = job_from_raw(worker, raw, job_id)
        assert _state(built) == _state(Job.fromJSON(worker, raw, job_id))


@pytest.mark.parametrize("remove", [7, {"count": 3, "age": 60}, True, False, None])
@pytest.mark.parametrize("fetch_next", [True, False])
async def test_completing_sends_what_bullmq_sends(
    worker: RunnerWorker, remove: Any, fetch_next: bool
) -> None:
    job = job_from_raw(worker, {**BASE, "opts": '{"attempts":4,"fpof":false}'}, "9")
    for value in (None, {"sent": True, "at": [1, 2.5]}, "done", 0):
        ours = worker.completer.args(job, value, remove, "token:1", fetch_next)
        theirs = worker.scripts.moveToCompletedArgs(job, value, remove, "token:1", fetch_next)
        # The finished-on timestamps are each call's clock.
        assert abs(ours[1][1] - theirs[1][1]) < 1000
        ours[1][1] = theirs[1][1] = 0
        assert ours == (theirs[0], theirs[1])


async def test_jobs_complete_after_redis_forgets_the_script(
    runners: Runners, redis_client: Any
) -> None:
    registry = Registry()

    async def echo(payload: Any) -> Any:
        return payload

    registry.register("echo", echo, QueueOptions(attempts=1))
    async with Producer(registry) as producer:
        first = await producer.add("echo", "echo", {"n": 1})
        await runners.start(registry)

        async def done(count: int) -> bool:
            return bool(redis_client.zcard("bull:echo:completed") == count)

        await wait_for("the first job", lambda: done(1))
        redis_client.script_flush()  # as after a Redis restart: EVALSHA answers NOSCRIPT
        second = await producer.add("echo", "echo", {"n": 2})
        await wait_for("the second job", lambda: done(2))
    await runners.stop_all()
    for job_id, n in ((first, 1), (second, 2)):
        job = redis_client.hgetall(f"bull:echo:{job_id}")
        assert json.loads(job["returnvalue"]) == {"n": n}
        assert int(job["finishedOn"]) >= int(job["processedOn"])

"""``manage.py runqueueworker`` as a process: SIGTERM drains (none lost, none run twice),
``kill -9`` mid-job is recovered by another worker, and 2,000 jobs with random failures and a
crashed worker all end completed or dead-lettered."""

from __future__ import annotations

import json
import signal
import subprocess
import sys
from collections.abc import Callable
from typing import Any

from queues.runner import Producer, default_registry
from tests.support.worker_fixtures import ROOT, RUNS_KEY, WorkerProcess, chaos_fails, wait_for

Start = Callable[..., WorkerProcess]


# BullMQ's sorted sets among the keys counted here (the others are lists): chosen by name, as
# a key that does not exist yet may be created between asking its type and counting it.
_SORTED = ("completed", "failed", "delayed")


async def _count(client: Any, key: str, at_least: int) -> bool:
    size = client.zcard(key) if key.rsplit(":", 1)[-1] in _SORTED else client.llen(key)
    return int(size) >= at_least


async def test_sigterm_drains_in_flight_jobs(worker_processes: Start, redis_client: Any) -> None:
    async with Producer(default_registry) as producer:
        ids = [await producer.add("proc-slow", "nap", {"sleep": 1.0}) for _ in range(10)]
    worker = worker_processes("proc-slow")
    await worker.wait_started()
    await wait_for("5 active jobs", lambda: _count(redis_client, "bull:proc-slow:active", 5))

    worker.signal(signal.SIGTERM)
    assert worker.wait() == 0
    # The five it held finished; the five it had not taken are still waiting.
    assert redis_client.zcard("bull:proc-slow:completed") == 5
    assert redis_client.llen("bull:proc-slow:wait") == 5
    assert redis_client.llen("bull:proc-slow:active") == 0
    events = [line["event"] for line in worker.events()]
    assert events.index("stop") < events.index("draining") < events.index("stopped")
    assert worker.events("stopped")[0]["abandoned"] == 0

    second = worker_processes("proc-slow")
    await second.wait_started()
    await wait_for("all 10", lambda: _count(redis_client, "bull:proc-slow:completed", 10))
    second.signal(signal.SIGINT)
    assert second.wait() == 0
    runs = redis_client.hgetall(RUNS_KEY)
    assert sorted(runs) == sorted(ids)
    assert set(runs.values()) == {"1"}  # none run twice


async def test_a_killed_workers_job_is_recovered_as_stalled(
    worker_processes: Start, redis_client: Any
) -> None:
    async with Producer(default_registry) as producer:
        job_id = await producer.add("proc-slow", "nap", {"sleep": 1.5})
    doomed = worker_processes("proc-slow")
    await doomed.wait_started()

    async def started() -> bool:
        return bool(redis_client.hget(RUNS_KEY, job_id))

    await wait_for("the handler to start", started)
    doomed.process.kill()  # kill -9: no drain, the lock stays until it expires
    doomed.wait()
    assert redis_client.lrange("bull:proc-slow:active", 0, -1) == [job_id]

    rescuer = worker_processes("proc-slow")
    await rescuer.wait_started()
    await wait_for(
        "the stalled job to complete elsewhere",
        lambda: _count(redis_client, "bull:proc-slow:completed", 1),
    )
    fields = redis_client.hgetall(f"bull:proc-slow:{job_id}")
    assert fields["stc"] == "1"  # stalled once
    assert json.loads(fields["returnvalue"]) == {"slept": 1.5}
    assert redis_client.hget(RUNS_KEY, job_id) == "2"  # started by both workers
    assert any(line["job_id"] == job_id for line in rescuer.events("stalled"))


async def test_2000_jobs_random_failures_and_a_crash_lose_nothing(
    worker_processes: Start, redis_client: Any
) -> None:
    total = 2000
    async with Producer(default_registry) as producer:
        queue = producer.queue("proc-chaos")
        opts = producer.job_options("proc-chaos")
        for start in range(0, total, 500):
            batch = [
                {"name": "chaos", "data": {"n": n}, "opts": opts} for n in range(start, start + 500)
            ]
            await queue.addBulk(batch)
    ids = {str(n) for n in range(1, total + 1)}
    doomed = worker_processes("proc-chaos")
    survivor = worker_processes("proc-chaos")
    await doomed.wait_started()
    await survivor.wait_started()
    await wait_for("a quarter done", lambda: _count(redis_client, "bull:proc-chaos:completed", 500))
    doomed.process.kill()
    doomed.wait()

    async def all_finished() -> bool:
        done = redis_client.zcard("bull:proc-chaos:completed")
        dead = redis_client.zcard("bull:proc-chaos:failed")
        return int(done) + int(dead) >= total

    await wait_for("every job to finish", all_finished, limit_s=90)
    completed = set(redis_client.zrange("bull:proc-chaos:completed", 0, -1))
    failed = set(redis_client.zrange("bull:proc-chaos:failed", 0, -1))
    dead_letters = {
        letter.split(".", 1)[1]
        for letter in redis_client.lrange("bull:dead-letter:wait", 0, -1)
        if letter.startswith("proc-chaos.")
    }
    assert completed | failed == ids  # none lost
    assert not completed & failed
    assert dead_letters == failed  # every final failure, and only those, dead-lettered
    for state in ("wait", "active"):
        assert redis_client.llen(f"bull:proc-chaos:{state}") == 0
    assert redis_client.zcard("bull:proc-chaos:delayed") == 0
    # The chaos is deterministic per (job, attempt) and a crash costs no attempt: exactly the
    # jobs whose three attempts all fail are dead.
    assert failed == {i for i in ids if all(chaos_fails(i, attempt) for attempt in (1, 2, 3))}
    # The crash did strike jobs in flight, and they came back.
    stalled = [i for i in completed | failed if redis_client.hget(f"bull:proc-chaos:{i}", "stc")]
    assert stalled
    runs = redis_client.hgetall(RUNS_KEY)
    assert set(runs) == ids


def test_the_command_refuses_an_unknown_queue(redis_server: Any) -> None:
    result = subprocess.run(
        [
            sys.executable,
            "manage.py",
            "runqueueworker",
            "--module",
            "tests.support.worker_fixtures",
            "nope",
        ],
        cwd=ROOT,
        env={
            "DJANGO_SETTINGS_MODULE": "tests.settings",
            "BULLPEN_TEST_REDIS_URL": redis_server.url,
            "PATH": "/usr/bin:/bin",
        },
        capture_output=True,
        text=True,
        timeout=60,
        check=False,
    )
    assert result.returncode != 0
    assert "No handler registered for queue 'nope'" in result.stderr

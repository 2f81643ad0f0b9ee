"""Demo traffic: producers and simple Python BullMQ workers that keep the dashboard busy.

Four queues (documents, newsletter, images, webhooks) receive a steady trickle of jobs; the
workers report progress, write log lines, and fail now and then so that retries and failed jobs
show up. Deterministic per job id, so a demo run looks the same each time.
"""

from __future__ import annotations

import asyncio
import logging
import random
import time
from typing import Any

from bullmq import Job, Queue, Worker

from queues.conf import default_prefix
from queues.connection import new_client

log = logging.getLogger("bullpen.demo")

DEMO_QUEUES = ("documents", "newsletter", "images", "webhooks")
RETRY = {"attempts": 3, "backoff": {"type": "exponential", "delay": 1000}}
KEEP = {"removeOnComplete": {"count": 1000}, "removeOnFail": {"count": 5000}}


def _job_for(queue: str, n: int) -> tuple[str, dict[str, Any], dict[str, Any]]:
    rng = random.Random(f"{queue}:{n}")
    opts: dict[str, Any] = {**RETRY, **KEEP}
    if n % 11 == 0:
        opts["delay"] = rng.randint(30_000, 600_000)
    elif n % 7 == 0:
        opts["priority"] = rng.randint(1, 10)
    if n % 13 == 0:
        # A poison job: fails on every attempt and ends in the failed set.
        return "import", {"source": f"upload-{n}.csv", "poison": True}, opts
    if queue == "documents":
        return "analyze", {"document": f"contract-{n}.pdf", "pages": rng.randint(1, 40)}, opts
    if queue == "newsletter":
        user = rng.randint(1, 500)
        opts["jobId"] = f"email:{user}:weekly:{n // 50}"
        return "send", {"user": user, "template": "weekly", "to": f"user{user}@example.com"}, opts
    if queue == "images":
        return "resize", {"image": f"photo-{n}.jpg", "widths": [320, 640, 1280]}, opts
    return (
        "deliver",
        {"tenant": f"tenant-{n % 5}", "url": "https://hooks.example.com/in", "event": n},
        opts,
    )


async def _process(job: Job, token: str) -> Any:
    rng = random.Random(f"{job.name}:{job.id}:{job.attemptsMade}")
    if job.data.get("poison"):
        await job.log("parsing upload")
        raise ValueError(f"cannot parse {job.data['source']}: unexpected end of file at line 1")
    steps = rng.randint(2, 5)
    await job.log(f"attempt {job.attemptsMade + 1}: starting {job.name}")
    for step in range(1, steps + 1):
        await asyncio.sleep(rng.uniform(0.2, 1.2))
        await job.updateProgress({"percentage": round(step * 100 / steps), "step": step})
        await job.log(f"step {step}/{steps} done")
    if rng.random() < 0.18:
        raise RuntimeError(f"upstream answered 503 for {job.name} {job.id}")
    return {"ok": True, "steps": steps, "at": int(time.time() * 1000)}


async def run_demo(rate_per_second: float = 2.0) -> None:
    prefix = default_prefix()
    producers = {
        name: Queue(name, {"connection": new_client(), "prefix": prefix}) for name in DEMO_QUEUES
    }
    workers = [
        Worker(
            name,
            _process,
            {
                "connection": new_client(blocking=True),
                "prefix": prefix,
                "concurrency": 3,
                "drainDelay": 2,
            },
        )
        for name in DEMO_QUEUES
    ]
    n = 0
    try:
        # A first batch fills every state at once; then a steady trickle.
        for _ in range(40):
            n += 1
            for name, queue in producers.items():
                job_name, data, opts = _job_for(name, n)
                await queue.add(job_name, data, opts)
        while True:
            n += 1
            name = DEMO_QUEUES[n % len(DEMO_QUEUES)]
            job_name, data, opts = _job_for(name, n)
            await producers[name].add(job_name, data, opts)
            await asyncio.sleep(1 / rate_per_second)
    finally:
        for worker in workers:
            await worker.close()
        for queue in producers.values():
            await queue.close()

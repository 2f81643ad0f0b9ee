"""Demo traffic for the four demo queues, added the runner's way (queues/runner/producer.py).

A first batch fills every state at once, then a steady trickle. The mix is realistic: most jobs
succeed, some fail and are retried (a busy upstream, a flaky endpoint), some reach the
dead-letter queue (unreadable files, a missing mailbox, an endpoint that stays down), some are
delayed or prioritised, one webhook tenant floods its queue so that per-tenant fairness has
something to do, and now and then a bundle of documents comes as a flow (children analysed,
then the parent sums them up), so that a job page has a flow tree to show. Deterministic per
job number, so every demo run looks the same.

The jobs are run by ``manage.py runqueueworker --module bullpen_site.demo_handlers`` (the demo
starts both; bullpen_site/demo.py).
"""

from __future__ import annotations

import asyncio
import random
from dataclasses import dataclass, field
from datetime import UTC, datetime
from typing import Any

from redis.exceptions import RedisError

import bullpen_site.demo_handlers  # noqa: F401 - registers the demo queues' options
from bullpen_site.demo_handlers.newsletter import newsletter_job_id
from queues.cancelling import raise_if_cancelled
from queues.runner import Producer

DEMO_QUEUES = ("documents", "newsletter", "images", "webhooks")
TENANTS = ("tenant-0", "tenant-1", "tenant-2", "tenant-3", "tenant-4")
# tenant-0 floods; tenant-3's endpoint is down (retries, then dead letters); tenant-4's is flaky.
ENDPOINTS = {
    "tenant-0": "https://hooks.tenant-0.example/in",
    "tenant-1": "https://hooks.tenant-1.example/in",
    "tenant-2": "https://hooks.tenant-2.example/in",
    "tenant-3": "https://down.tenant-3.example/in",
    "tenant-4": "https://flaky.tenant-4.example/in",
}


@dataclass
class DemoJob:
    queue: str
    name: str
    data: dict[str, Any]
    job_id: str | None = None
    opts: dict[str, Any] = field(default_factory=dict)


def demo_job(queue: str, n: int) -> DemoJob:
    rng = random.Random(f"{queue}:{n}")
    opts: dict[str, Any] = {}
    if n % 11 == 0:
        opts["delay_ms"] = rng.randint(30_000, 600_000)
    elif n % 7 == 0:
        opts["priority"] = rng.randint(1, 10)
    poison = n % 13 == 0  # fails for good: the dead-letter queue
    if queue == "documents":
        document = f"contract-{n}.{'corrupt' if poison else 'pdf'}"
        return DemoJob(
            queue, "analyze", {"document": document, "pages": rng.randint(1, 40)}, None, opts
        )
    if queue == "newsletter":
        user = rng.randint(1, 500)
        to = f"user{user}@{'bounce.invalid' if poison else 'example.com'}"
        day = datetime.now(UTC).date()
        data = {"user": user, "to": to, "template": "weekly", "name": f"User {user}"}
        return DemoJob(queue, "send", data, newsletter_job_id(user, "weekly", day), opts)
    if queue == "images":
        image = f"photo-{n}.{'corrupt' if poison else 'jpg'}"
        return DemoJob(queue, "resize", {"image": image, "widths": [320, 640, 1280]}, None, opts)
    # Half of all webhooks are tenant-0's: a flood.
    tenant = "tenant-0" if n % 2 else TENANTS[(n // 2) % len(TENANTS)]
    data = {"tenant": tenant, "url": ENDPOINTS[tenant], "event": "order.paid", "data": {"order": n}}
    return DemoJob(queue, "deliver", data, None, {})


async def add(producer: Producer, job: DemoJob) -> str:
    opts = dict(job.opts)
    return await producer.add(
        job.queue,
        job.name,
        job.data,
        job_id=job.job_id,
        delay_ms=int(opts.pop("delay_ms", 0)),
        priority=int(opts.pop("priority", 0)),
    )


# While Redis is away, the producer tries again this often.
AWAY_RETRY_S = 1.0

# Every this many jobs, a bundle of documents comes in: a flow, whose tree a job page shows.
FLOW_EVERY = 40
BUNDLE_SIZE = 3


def demo_flow(n: int) -> dict[str, Any]:
    """A contract bundle: each document analysed (the children), then the bundle summed up
    (the parent, run by BullMQ once its children have completed)."""
    rng = random.Random(f"bundle:{n}")
    bundle = f"bundle-{n}"
    children = [
        {
            "name": "analyze",
            "queueName": "documents",
            "data": {"document": f"{bundle}-part-{i}.pdf", "pages": rng.randint(1, 12)},
        }
        for i in range(1, BUNDLE_SIZE + 1)
    ]
    return {
        "name": "summarize",
        "queueName": "documents",
        "data": {"bundle": bundle},
        "children": children,
    }


async def seed(producer: Producer, per_queue: int = 40) -> int:
    """The first batch: ``per_queue`` jobs on each demo queue and a bundle (a flow). Returns
    the last job number."""
    for n in range(1, per_queue + 1):
        for queue in DEMO_QUEUES:
            await add(producer, demo_job(queue, n))
    await producer.add_flow(demo_flow(per_queue))
    return per_queue


async def run_demo(rate_per_second: float = 2.0, per_queue: int = 40) -> None:
    """Seed, then add ``rate_per_second`` jobs a second until cancelled. While Redis is away
    the producer waits for it and goes on, as the worker and the dashboard do: a demo of what
    Redis going away looks like must not end with it."""
    async with Producer() as producer:
        n = await seed(producer, per_queue)
        away = False
        while True:
            raise_if_cancelled()
            try:
                await add(producer, demo_job(DEMO_QUEUES[(n + 1) % len(DEMO_QUEUES)], n + 1))
                if (n + 1) % FLOW_EVERY == 0:
                    await producer.add_flow(demo_flow(n + 1))
            except (RedisError, OSError) as error:
                if not away:
                    print(f"demo jobs: Redis is away, waiting for it: {error}", flush=True)
                away = True
                await asyncio.sleep(AWAY_RETRY_S)
                continue
            if away:
                print("demo jobs: Redis is back, adding jobs again", flush=True)
                away = False
            n += 1
            await asyncio.sleep(1 / rate_per_second)

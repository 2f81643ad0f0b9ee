"""History benchmark's producer, run in its own process: what BullMQ writes when a worker
finishes a job, for ``rate`` jobs a second over the bench's queues, written directly."""

from __future__ import annotations

import random
import time

QUEUES = 100
NAMES = ("send", "resize", "render", "sync", "notify")
PRODUCER_COMMANDS_PER_JOB = 4  # HSET, XADD active, XADD completed, ZADD completed
PRODUCER_COMMANDS_PER_BATCH = 1  # INCRBY of the jobs produced, every 50 jobs


def produce(url: str, rate: int, seconds: float) -> None:
    import redis

    client = redis.Redis.from_url(url)
    rand = random.Random(1)
    job = 0
    started = time.monotonic()
    tick = 0.05
    per_tick = int(rate * tick)
    while time.monotonic() - started < seconds:
        due = started + (job // per_tick + 1) * tick
        pipe = client.pipeline(transaction=False)
        now = int(time.time() * 1000)
        for _ in range(per_tick):
            job += 1
            queue = f"bull:h{job % QUEUES:03d}"
            run = int(rand.lognormvariate(3.5, 0.8))
            wait = int(rand.lognormvariate(4.5, 1.2))
            processed = now - run
            pipe.hset(
                f"{queue}:{job}",
                mapping={
                    "name": NAMES[job % len(NAMES)],
                    "data": f'{{"id":{job}}}',
                    "opts": '{"attempts":1}',
                    "timestamp": processed - wait,
                    "delay": 0,
                    "processedOn": processed,
                    "finishedOn": now,
                    "atm": 1,
                    "returnvalue": "null",
                },
            )
            pipe.xadd(
                f"{queue}:events",
                {"event": "active", "jobId": job, "prev": "waiting"},
                maxlen=10000,
            )
            pipe.xadd(
                f"{queue}:events",
                {"event": "completed", "jobId": job, "returnvalue": "null", "prev": "active"},
                maxlen=10000,
            )
            pipe.zadd(f"{queue}:completed", {str(job): now})
        pipe.incrby("bench:produced", per_tick)
        pipe.execute()
        delay = due - time.monotonic()
        if delay > 0:
            time.sleep(delay)

"""New log lines of watched jobs: each job's log length is noted, and what it grew by is sent."""

from __future__ import annotations

import redis.asyncio as aioredis

from queues.live import protocol
from queues.live.interest import JobKey
from queues.live.outbox import Outbox
from queues.live.watching import Watching
from queues.reads.keys import QueueRef


class LogTails:
    def __init__(self, outbox: Outbox, watching: Watching) -> None:
        self.outbox = outbox
        self.watching = watching
        self.lengths: dict[JobKey, int] = {}  # watched job → its log's length when last read

    async def flush(self, redis: aioredis.Redis) -> None:
        refs = {}
        for slug, job_id in sorted(self.watching.jobs):
            try:
                refs[(slug, job_id)] = QueueRef.from_slug(slug)
            except Exception:  # noqa: S112 - a page asked for a queue that does not exist
                continue
        keys = list(refs)
        async with redis.pipeline(transaction=False) as pipe:
            for key in keys:
                pipe.llen(refs[key].job_key(key[1]) + ":logs")
            lengths = await pipe.execute(raise_on_error=False)
        grown = []
        for key, length in zip(keys, lengths, strict=True):
            if not isinstance(length, int):
                continue
            known = self.lengths.get(key)
            self.lengths[key] = length
            if known is not None and length > known:
                grown.append((key, known, length))
        for key in set(self.lengths) - set(keys):
            del self.lengths[key]
        if not grown:
            return
        async with redis.pipeline(transaction=False) as pipe:
            for key, known, length in grown:
                pipe.lrange(refs[key].job_key(key[1]) + ":logs", known, length - 1)
            chunks = await pipe.execute(raise_on_error=False)
        for (key, known, _), lines in zip(grown, chunks, strict=True):
            if isinstance(lines, list):
                self.outbox.emit(("job", *key), protocol.logs_message(key[0], key[1], known, lines))

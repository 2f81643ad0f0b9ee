"""bullmq ``Queue`` objects on a client that someone else owns.

A bullmq Queue closes its client when closed; the runner shares one client between its
producers, dead-letter queue and schedulers and closes it itself, last.
"""

from __future__ import annotations

import redis.asyncio as aioredis
from bullmq import Queue

from queues.reads.keys import QueueRef
from queues.redis.restricted import without_info


def bullmq_queue(client: aioredis.Redis, ref: QueueRef) -> Queue:
    queue = without_info(Queue(ref.name, {"connection": client, "prefix": ref.prefix}))
    queue.backend.owns_connection = False
    return queue

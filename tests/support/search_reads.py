"""Helpers that several test modules share.

Moved here from ``tests.search.test_search``, ``tests.search.test_search_all``.
"""

from __future__ import annotations

import json
from typing import Any

import redis.asyncio as aioredis
from bullmq import Queue
from django.test import AsyncClient


async def stream(
    client: AsyncClient, path: str, headers: dict[str, str] | None = None
) -> list[dict[str, Any]]:
    response = await client.get(path, headers=headers)
    assert response.status_code == 200, response.content[:300] if not response.streaming else ""
    lines = []
    buffer = b""
    async for chunk in response.streaming_content:
        buffer += chunk
        *complete, buffer = buffer.split(b"\n")
        lines += [json.loads(line) for line in complete if line]
    return lines


async def add_jobs(url: str, queue: str, jobs: list[dict[str, Any]]) -> list[str]:
    """Jobs added by BullMQ (``name``, ``data``, ``opts`` each); their ids."""
    connection = aioredis.Redis.from_url(url, decode_responses=True)
    bull = Queue(queue, {"connection": connection})
    try:
        added = await bull.addBulk(jobs)
        return [str(job.id) for job in added]
    finally:
        await bull.close()
        await connection.aclose()

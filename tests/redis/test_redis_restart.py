"""The dashboard through Redis restarts (a real daphne, a real redis-server that keeps its
data): no 503 once Redis answers again, for concurrent reads and for the first action; and a
write whose connection breaks after it was sent is reported as of unknown outcome, never sent
again behind the caller's back."""

from __future__ import annotations

import asyncio
import base64
from pathlib import Path
from typing import Any
from urllib.parse import urlsplit

import pytest
from bullmq import Queue
from django.test import AsyncClient

from dashboard.models import AuditEntry
from queues.redis.write_once import CLIENT_NAME
from tests.support.servers.live_server import start_bullpen, stop_bullpen
from tests.support.servers.redis_server import RedisServer
from tests.support.worker_fixtures import wait_for

AUTH = {"Authorization": "Basic " + base64.b64encode(b"operator:s3cret-pass").decode()}
# Reads of every kind: the fast JSON path, Django's API views, a page.
READS = (
    "/queues/api/queues/",
    "/queues/api/queues/mail/jobs/?state=waiting",
    "/queues/api/queues/mail/jobs/1/",
    "/queues/api/queues/mail/failure-groups/",
    "/queues/q/mail/",
)


async def _seed(url: str, count: int = 3) -> None:
    queue = Queue("mail", {"connection": url})
    try:
        for n in range(count):
            await queue.add("welcome", {"n": n})
    finally:
        await queue.close()


async def _request(
    url: str, method: str = "GET", headers: dict[str, str] | None = None
) -> tuple[int, bytes]:
    """One HTTP/1.1 request on a connection of its own (so that many run at once)."""
    parts = urlsplit(url)
    reader, writer = await asyncio.open_connection(parts.hostname, parts.port)
    target = parts.path + (f"?{parts.query}" if parts.query else "")
    head = [
        f"{method} {target} HTTP/1.1",
        f"Host: {parts.hostname}",
        "Connection: close",
        "Content-Length: 0",
        *(f"{name}: {value}" for name, value in (headers or {}).items()),
    ]
    writer.write(("\r\n".join(head) + "\r\n\r\n").encode())
    await writer.drain()
    data = await reader.read()
    writer.close()
    await writer.wait_closed()
    return int(data.split(b" ", 2)[1]), data.partition(b"\r\n\r\n")[2]


async def _burst(base: str, count: int = 20) -> list[tuple[int, bytes]]:
    return await asyncio.gather(*(_request(base + READS[n % len(READS)]) for n in range(count)))


def _restart(server: RedisServer) -> None:
    server.stop()
    server.start()


async def test_no_503_once_redis_is_back(durable_redis: RedisServer, tmp_path: Path) -> None:
    await _seed(durable_redis.url)
    server = start_bullpen(durable_redis.url, tmp_path / "daphne.log")
    check = durable_redis.client()
    try:
        # Many reads at once: the server's pool now holds many connections.
        assert [status for status, _ in await _burst(server.url)] == [200] * 20
        _restart(durable_redis)
        await asyncio.sleep(1.0)  # Redis has answered again for a while: every pooled one is dead
        after = await _burst(server.url)
        assert [(status, body[:300]) for status, body in after if status != 200] == []

        _restart(durable_redis)
        status, body = await _request(f"{server.url}/queues/api/queues/mail/pause/", "POST", AUTH)
        assert status == 200, body[:300]
        assert check.hget("bull:mail:meta", "paused") == "1"
    finally:
        stop_bullpen(server)
        check.close()


@pytest.mark.django_db(transaction=True)
async def test_a_write_cut_off_after_it_was_sent_has_an_unknown_outcome(
    client: AsyncClient, redis_client: Any, bullpen_settings: dict[str, Any]
) -> None:
    await _seed(bullpen_settings["REDIS_URL"])

    async def write_held() -> bool:
        # The action's connection sent its script; Redis holds it while writes are paused.
        return any(
            c["name"] == CLIENT_NAME and "evalsha" in c["cmd"] for c in redis_client.client_list()
        )

    redis_client.execute_command("CLIENT", "PAUSE", 10_000, "WRITE")
    try:
        sent = asyncio.ensure_future(
            client.post("/queues/api/queues/mail/add/", {"name": "late"}, headers=AUTH)
        )
        await wait_for("the add to be sent", write_held, limit_s=5)
        for connection in redis_client.client_list():
            if connection["name"] == CLIENT_NAME:
                redis_client.client_kill_filter(_id=connection["id"])
        response = await sent
    finally:
        redis_client.execute_command("CLIENT", "UNPAUSE")
    assert response.status_code == 503
    error = response.json()["error"]
    assert error.startswith("The outcome of add is unknown: "), error
    assert error.endswith("Check the queue before trying again."), error
    # Not sent again behind the caller's back: the three seeded jobs only.
    await asyncio.sleep(0.3)
    assert redis_client.llen("bull:mail:wait") == 3
    entry = await AuditEntry.objects.aget(action="add")
    assert (entry.status, entry.error) == (503, error)

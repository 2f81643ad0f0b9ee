"""Search: by name, text, failed reason and JSON field, streamed from a bounded scan."""

from __future__ import annotations

import asyncio
import json
import time
from typing import Any

from django.test import AsyncClient

from tests.support.peer import Peer
from tests.support.search_reads import stream


async def test_search_kinds(client: AsyncClient, peer: Peer) -> None:
    for index, (name, data) in enumerate(
        [
            ("send-email", {"userId": 42, "to": "a@example.com"}),
            ("send-email", {"userId": 7, "to": "needle@example.com"}),
            ("resize", {"userId": 42, "image": "x.png"}),
        ]
    ):
        peer(
            "add",
            "--queue",
            "find",
            "--name",
            name,
            "--data",
            json.dumps(data),
            "--opts",
            json.dumps({"jobId": f"job-{index}"}),
        )

    async def ids(query: str) -> list[str]:
        from urllib.parse import quote

        lines = await stream(
            client, f"/queues/api/queues/find/search/?state=waiting&q={quote(query)}"
        )
        assert lines[-1]["type"] == "progress" and lines[-1]["done"] is True
        return sorted(line["job"]["id"] for line in lines if line["type"] == "job")

    assert await ids("data.userId = 42") == ["job-0", "job-2"]
    assert await ids("name:resize") == ["job-2"]
    assert await ids("NEEDLE") == ["job-1"]
    assert await ids("data.missing = 1") == []
    bad = await client.get("/queues/api/queues/find/search/?state=waiting&q=")
    assert bad.status_code == 400


async def test_search_over_100k_jobs_streams_while_other_requests_answer(
    client: AsyncClient, peer: Peer
) -> None:
    # BullMQ's addBulk in the Node peer: 4 CPU-seconds there, 6 in this process (load 13).
    peer(
        "add-bulk",
        "--queue",
        "big",
        "--name",
        "sync",
        "--count",
        "100000",
        "--cycle",
        "userId=500",
        "--deadline-ms",
        "300000",
        timeout=300,
    )

    progress: list[dict[str, Any]] = []
    matches: list[str] = []
    others_during_search = 0
    search_done = asyncio.Event()

    async def run_search() -> None:
        response = await client.get(
            "/queues/api/queues/big/search/?state=waiting&q=data.userId%20%3D%2042&budget=100000"
        )
        buffer = b""
        async for chunk in response.streaming_content:
            buffer += chunk
            *complete, buffer = buffer.split(b"\n")
            for line in complete:
                item = json.loads(line)
                if item["type"] == "job":
                    matches.append(item["job"]["id"])
                else:
                    progress.append(item)
        search_done.set()

    async def other_requests() -> None:
        nonlocal others_during_search
        while not search_done.is_set():
            response = await client.get("/queues/api/queues/")
            assert response.status_code == 200
            if not search_done.is_set():
                others_during_search += 1
            await asyncio.sleep(0.05)

    started = time.monotonic()
    await asyncio.gather(run_search(), other_requests())
    print(
        f"100,000 jobs searched in {time.monotonic() - started:.1f} s, "
        f"{others_during_search} other requests answered meanwhile"
    )
    assert len(matches) == 200  # every 500th job has userId 42
    assert progress[-1] == {
        "type": "progress",
        "scanned": 100_000,
        "total": 100_000,
        "matched": 200,
        "done": True,
    }
    assert len(progress) > 50  # progress came in many steps, not at the end
    assert others_during_search > 0  # the overview answered while the scan ran

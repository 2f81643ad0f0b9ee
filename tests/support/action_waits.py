"""Following a bulk action to its end, as an API client does: its status URL."""

from __future__ import annotations

import asyncio
import json
import time
from typing import Any

from django.test import AsyncClient

from tests.support.servers.live_server import http_get


def accepted(response: Any) -> dict[str, Any]:
    """A 202 answer: the action's id, state and status URL."""
    assert response.status_code == 202, response.content[:500]
    body: dict[str, Any] = response.json()
    assert body["ok"] is True and body["id"] and body["statusUrl"] == response["Location"]
    return body


async def finished(client: AsyncClient, body: dict[str, Any], within: float = 20) -> dict[str, Any]:
    """The action's status once it has ended and been audited (in-process: the runner shares
    the test's loop)."""
    deadline = time.monotonic() + within
    while True:
        status: dict[str, Any] = (await client.get(body["statusUrl"])).json()
        if status["finished"]:
            return status
        assert time.monotonic() < deadline, f"action still {status['state']}: {status}"
        await asyncio.sleep(0.05)


def status_of(base_url: str, action_id: str) -> dict[str, Any]:
    """An action's status from a live server."""
    code, text = http_get(f"{base_url}/queues/api/actions/{action_id}/")
    assert code == 200, text[:500]
    body: dict[str, Any] = json.loads(text)
    return body


def wait_on_server(base_url: str, action_id: str, timeout: float = 25) -> dict[str, Any]:
    deadline = time.monotonic() + timeout
    while True:
        status = status_of(base_url, action_id)
        if status["finished"]:
            return status
        assert time.monotonic() < deadline, f"action still {status['state']}: {status}"
        time.sleep(0.1)

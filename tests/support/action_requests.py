"""Helpers that several test modules share.

Moved here from ``tests.actions.test_actions``.
"""

from __future__ import annotations

import asyncio
import base64
from typing import Any

from django.test import AsyncClient

from tests.support.peer import Peer

AUTH = {"Authorization": "Basic " + base64.b64encode(b"operator:s3cret-pass").decode()}


async def post(client: AsyncClient, path: str, data: Any = None, **headers: str) -> Any:
    response = await client.post(
        f"/queues/api/{path}", data=data or {}, headers={**AUTH, **headers}
    )
    return response


async def ok(client: AsyncClient, path: str, data: Any = None) -> dict[str, Any]:
    response = await post(client, path, data)
    assert response.status_code == 200, response.content[:500]
    body: dict[str, Any] = response.json()
    assert body["ok"] is True
    return body


async def node(peer: Peer, *args: str) -> Any:
    return await asyncio.to_thread(peer, *args)

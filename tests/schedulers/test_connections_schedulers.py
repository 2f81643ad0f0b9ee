"""The schedulers of every queue over two Redis servers: each row names its connection, and with
one server stopped the other's schedulers are still listed, the stopped one named."""

from __future__ import annotations

import asyncio

import pytest
from django.test import AsyncClient

from tests.redis.test_connections import AUTH, two_connections, us_server
from tests.support.peer import Peer
from tests.support.servers.redis_server import RedisServer

__all__ = ["two_connections", "us_server"]  # the fixtures, used by name

pytestmark = pytest.mark.django_db(transaction=True)


async def test_schedulers_on_two_servers_and_one_stopped(
    two_connections: dict[str, Peer], us_server: RedisServer, client: AsyncClient
) -> None:
    for where, peer in two_connections.items():
        await asyncio.to_thread(
            peer,
            "upsert-scheduler",
            "--queue",
            "mail",
            "--id",
            f"{where}-digest",
            "--every",
            "60000",
        )
    rows = (await client.get("/queues/api/schedulers/", headers=AUTH)).json()["schedulers"]
    assert sorted((row["queue"], row["connection"], row["id"]) for row in rows) == [
        ("mail@eu", "eu", "eu-digest"),
        ("mail@us", "us", "us-digest"),
    ]
    us_server.stop()
    try:
        answer = (await client.get("/queues/api/schedulers/", headers=AUTH)).json()
        assert [row["id"] for row in answer["schedulers"]] == ["eu-digest"]
        assert [entry["connection"] for entry in answer["unreadable"]] == ["us"]
        assert answer["unreadable"][0]["error"]
        page = (await client.get("/queues/schedulers/", headers=AUTH)).content.decode()
        assert 'data-testid="unreadable" data-connection="us"' in page
        assert 'data-scheduler-id="eu-digest"' in page
    finally:
        us_server.start()

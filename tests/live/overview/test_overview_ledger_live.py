"""The overview's kept list, fed by a live reader that follows every queue, answers what a
fresh read of every queue gives (``list_queues`` over rows made afresh from Redis): after jobs
move (Node BullMQ workers), a queue appears, queues pause and resume, and a queue is removed;
for orders with ties, a filter and groups."""

from __future__ import annotations

import asyncio
import base64
import time
from typing import Any

import pytest
from channels.testing import WebsocketCommunicator
from django.test import AsyncClient

from dashboard.live import channel_groups
from dashboard.pages.overview_ledger import ViewFacts
from dashboard.pages.overview_list import Listing, ListQuery, list_queues
from dashboard.pages.overview_page import read_listing
from queues.reads.counts import summaries
from queues.reads.workers import list_workers
from tests.live.test_pages_from_reader import connect, many_queues, sockets  # noqa: F401
from tests.support.live_reads import run_peer
from tests.support.peer import Peer
from tests.unit.pages.test_overview_ledger import rows_afresh, shape

pytestmark = pytest.mark.django_db(transaction=True)

AUTH = {"Authorization": "Basic " + base64.b64encode(b"operator:s3cret-pass").decode()}
API = "/queues/api/queues/"
QUERIES = (
    ListQuery(),
    ListQuery(sort="-waiting", per_page=7),  # many queues tie at 0 to 3 waiting jobs
    ListQuery(sort="waiting", per_page=7, page=3),
    ListQuery(sort="-completed", per_page=10),
    ListQuery(sort="-name", per_page=10, page=2),
    ListQuery(text="T00", sort="-failed", per_page=5),
    ListQuery(text="mail", sort="-waiting", per_page=25),
    ListQuery(group="head", sort="-waiting", per_page=10),
    ListQuery(group="tail", within="mail", sort="-waiting", per_page=10),
)


async def afresh(query: ListQuery) -> Listing:
    """The list from every queue read from Redis now, its rows made one by one."""
    found = await summaries()
    workers = None
    if query.group:  # counted for the groups' problems, as a view counts them
        workers = {}
        for connection in await list_workers([summary.ref for summary in found]):
            workers[connection.queue] = workers.get(connection.queue, 0) + 1
    return list_queues(rows_afresh(found, ViewFacts(workers=workers)), query)


async def agree(total: int, within: float = 30) -> dict[str, Any]:
    """Wait until every query's view, taken from the reader's counts (it vouched for every
    queue: the listing has its version), lists what a fresh read lists; the default view."""
    deadline = time.monotonic() + within
    while True:
        differ, live, first = [], True, None
        for query in QUERIES:
            kept = await read_listing(query, page=False)
            live = live and bool(kept.live_version)
            first = first or shape(kept)
            fresh = await afresh(query)
            if shape(kept) != shape(fresh):
                differ.append((query, shape(kept), shape(fresh)))
        assert first is not None
        if not differ and live and first["total"] == total:
            return first
        if time.monotonic() > deadline:
            raise AssertionError(f"no agreement (live: {live}): {differ!r:.3000}")
        await asyncio.sleep(0.2)


async def act(client: AsyncClient, path: str, data: dict[str, str] | None = None) -> None:
    response = await client.post(f"{API}{path}", data or {}, headers=AUTH)
    assert response.status_code == 200, response.content


async def test_the_kept_list_answers_as_a_fresh_read_while_queues_change(
    many_queues: None,  # noqa: F811
    sockets: list[WebsocketCommunicator],  # noqa: F811
    client: AsyncClient,
    peer: Peer,
) -> None:
    watcher = await connect(sockets)
    await watcher.send_json_to({"watch": "overview"})
    channel_groups.ensure_started()
    first = await agree(total=200)
    assert [q["name"] for q in first["queues"][:3]] == ["t001-billing", "t001-mail", "t002-billing"]

    # Jobs move: completed and failed by Node workers, more added.
    await run_peer(peer, "work", "--queue", "t003-mail", "--count", "3")
    await run_peer(peer, "work", "--queue", "t007-billing", "--count", "2", "--fail")
    await run_peer(peer, "add-bulk", "--queue", "t002-mail", "--name", "more", "--count", "9")
    moved = await agree(total=200)
    assert moved["totals"]["completed"] == first["totals"]["completed"] + 3
    # At least the two it counted: a worker may take a third job before it closes.
    assert moved["totals"]["failed"] >= first["totals"]["failed"] + 2

    # A queue appears; queues pause and resume.
    await run_peer(peer, "add", "--queue", "aaa-new", "--name", "job", "--data", "{}")
    await act(client, "t010-mail/pause/")
    await act(client, "t050-mail/resume/")  # paused by the seed (every 50th tenant)
    appeared = await agree(total=201)
    assert appeared["queues"][0]["name"] == "aaa-new"

    # A queue is removed (the one paused above: obliterate asks for a paused queue).
    await act(client, "t010-mail/obliterate/", {"confirm": "t010-mail"})
    gone = await agree(total=200)
    assert "t010-mail" not in {q["name"] for q in gone["queues"]}

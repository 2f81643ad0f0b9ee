"""Live updates over the websocket: counts, rows, progress, logs, and Redis going away."""

from __future__ import annotations

import asyncio
import re
import time
from collections.abc import Iterator
from typing import Any

import pytest
from channels.sessions import SessionMiddlewareStack
from channels.testing import WebsocketCommunicator
from django.test import override_settings

from dashboard.live import channel_groups
from dashboard.live.session_send import beneath_sessions
from tests.support.live_reads import (
    Message,
    counts_of,
    follower_tails_log,
    run_peer,
    until,
    wait_for,
)
from tests.support.peer import Peer
from tests.support.servers.redis_server import RedisServer

# Channels closes stale database connections around each websocket event.
pytestmark = pytest.mark.django_db(transaction=True)


async def test_counts_follow_node_adding_processing_and_failing(
    socket: WebsocketCommunicator, peer: Peer
) -> None:
    await run_peer(peer, "add", "--queue", "mail", "--name", "welcome", "--data", "{}")
    first, _ = await wait_for(socket, lambda m: m["type"] == "status")
    assert first["redis"] == "ok"
    await socket.send_json_to({"watch": "overview"})
    await wait_for(socket, lambda m: (counts_of(m, "mail") or {}).get("waiting") == 1)

    for i in range(3):
        await run_peer(peer, "add", "--queue", "mail", "--name", f"n{i}", "--data", "{}")
    await wait_for(socket, lambda m: (counts_of(m, "mail") or {}).get("waiting") == 4)

    await run_peer(peer, "work", "--queue", "mail", "--count", "4", "--concurrency", "2")
    done, _ = await wait_for(socket, lambda m: (counts_of(m, "mail") or {}).get("completed") == 4)
    assert counts_of(done, "mail") == {
        "waiting": 0,
        "active": 0,
        "prioritized": 0,
        "delayed": 0,
        "waiting-children": 0,
        "paused": 0,
        "completed": 4,
        "failed": 0,
    }

    await run_peer(peer, "add", "--queue", "mail", "--name", "doomed", "--data", "{}")
    await run_peer(peer, "work", "--queue", "mail", "--count", "1", "--fail")
    await wait_for(socket, lambda m: (counts_of(m, "mail") or {}).get("failed") == 1)


@pytest.fixture
def rows_read_without_budget(bullpen_settings: dict[str, Any]) -> Iterator[None]:
    """Every changed row read in full: a burst of a fast worker's events would otherwise
    spend the row-read budget and send some rows state-only (a budget tested elsewhere)."""
    live = {"row_reads_per_second": 10_000}
    with override_settings(BULLPEN={**bullpen_settings, "LIVE": live}):
        yield


async def test_queue_watch_gets_rows_and_progress(
    rows_read_without_budget: None, socket: WebsocketCommunicator, peer: Peer
) -> None:
    await run_peer(peer, "add", "--queue", "img", "--name", "first", "--data", "{}")
    await socket.send_json_to({"watch": "queue", "queue": "img"})
    await wait_for(socket, lambda m: (counts_of(m, "img") or {}).get("waiting") == 1)
    # Rows come from the event stream: wait until the follower follows this new queue's.
    follower = channel_groups.ensure_started()
    for _ in range(100):
        if any(ref.name == "img" for ref in follower.streams.refs.values()):
            break
        await asyncio.sleep(0.1)
    added = await run_peer(
        peer, "add", "--queue", "img", "--name", "resize", "--data", '{"w": 640}'
    )
    row_msg, _ = await wait_for(
        socket, lambda m: m["type"] == "rows" and any(r["id"] == added["id"] for r in m["rows"])
    )
    row = next(r for r in row_msg["rows"] if r["id"] == added["id"])
    # The row comes rendered by the list's own partial: a checkbox-less row for a visitor.
    assert row["state"] == "waiting" and f'data-job-id="{added["id"]}"' in row["html"]
    assert '<td class="job-name">resize</td>' in row["html"]
    assert "{&quot;w&quot;:640}" in row["html"]
    assert "job-select" not in row["html"]

    await run_peer(peer, "work", "--queue", "img", "--count", "2", "--progress")
    progress, _ = await wait_for(socket, lambda m: m["type"] == "progress")
    assert progress["queue"] == "img" and progress["updates"]
    assert all(u["at"] > 0 for u in progress["updates"])
    # Each distinct cell is sent once; every update points at one of them.
    assert len(set(progress["cells"])) == len(progress["cells"])
    assert all("<progress" in progress["cells"][u["cell"]] for u in progress["updates"])
    finished, _ = await wait_for(
        socket,
        lambda m: (
            m["type"] == "rows"
            and any(r["id"] == added["id"] and r["state"] == "completed" for r in m["rows"])
        ),
    )
    done_row = next(r for r in finished["rows"] if r["id"] == added["id"])
    assert '<td class="num attempts">1</td>' in done_row["html"]  # attempts made
    assert done_row["html"].count("<time ") == 3  # added, processed, finished


async def test_job_watch_gets_state_and_new_log_lines(
    socket: WebsocketCommunicator, peer: Peer, redis_client: Any
) -> None:
    added = await run_peer(peer, "add", "--queue", "docs", "--name", "analyze", "--data", "{}")
    job_id = added["id"]
    await wait_for(socket, lambda m: m["type"] == "status")
    await socket.send_json_to({"watch": "job", "queue": "docs", "id": job_id})
    await follower_tails_log(job_id)
    await run_peer(peer, "work", "--queue", "docs", "--count", "1", "--progress")
    state, before = await wait_for(
        socket, lambda m: m["type"] == "job" and m["state"] == "completed", timeout=20
    )
    assert state["id"] == job_id
    # The job page's live parts, each with the id the page swaps, rendered for a visitor.
    for part in ("job-state", "job-actions", "job-facts", "job-progress", "job-failure"):
        assert f'id="{part}"' in state["html"]
    assert "Sign in to act" in state["html"] and "<button" not in state["html"]
    # The log lines come in a message of their own, before the job's end or after it: a busy
    # pass can read the log's growth ahead of the end's event.
    logs = next((m for m in before if m["type"] == "logs"), None)
    if logs is None:
        logs, _ = await wait_for(socket, lambda m: m["type"] == "logs")
    assert logs["id"] == job_id and logs["start"] == 0 and logs["count"]
    lines = redis_client.lrange(f"bull:docs:{job_id}:logs", 0, logs["count"] - 1)
    assert logs["html"].strip() == "".join(f"<li>{line}</li>" for line in lines)


async def test_redis_restart_under_an_open_socket(
    socket: WebsocketCommunicator, peer: Peer, redis_server: RedisServer
) -> None:
    await run_peer(peer, "add", "--queue", "ops", "--name", "a", "--data", "{}")
    await socket.send_json_to({"watch": "overview"})
    await wait_for(socket, lambda m: (counts_of(m, "ops") or {}).get("waiting") == 1)

    redis_server.stop()
    down, _ = await wait_for(
        socket, lambda m: m["type"] == "status" and m["redis"] == "down", timeout=15
    )
    assert down["detail"]  # says why

    redis_server.start()  # same port, empty: the job is gone
    await run_peer(peer, "add", "--queue", "ops", "--name", "b", "--data", "{}")
    await run_peer(peer, "add", "--queue", "ops", "--name", "c", "--data", "{}")
    back_at = time.monotonic()
    up, _ = await wait_for(socket, lambda m: m["type"] == "status", timeout=15)
    assert up["redis"] == "ok"  # the first status after the outage says it is over
    await wait_for(socket, lambda m: (counts_of(m, "ops") or {}).get("waiting") == 2, timeout=10)
    assert time.monotonic() - back_at < 5


async def test_bad_watch_messages_get_errors(socket: WebsocketCommunicator) -> None:
    await wait_for(socket, lambda m: m["type"] == "status")
    await socket.send_json_to(["not", "an", "object"])
    error, _ = await wait_for(socket, lambda m: m["type"] == "error")
    assert "JSON object" in error["error"]
    await socket.send_json_to({"watch": "everything"})
    error, _ = await wait_for(socket, lambda m: m["type"] == "error")
    assert error["error"] == "watch must be one of: overview, queue, job"


async def test_frames_that_are_not_json_get_errors_and_the_socket_stays(
    socket: WebsocketCommunicator,
) -> None:
    await wait_for(socket, lambda m: m["type"] == "status")
    for frame, said in [
        ({"text_data": "{not json"}, "does not parse"),
        ({"text_data": "[" * 100_000}, "does not parse"),
        ({"text_data": " "}, "does not parse"),
        ({"bytes_data": b"\x00\xff"}, "not binary"),
    ]:
        await socket.send_to(**frame)
        error, _ = await wait_for(socket, lambda m: m["type"] == "error")
        assert said in error["error"]
    # Still open, still serving.
    await socket.send_json_to({"watch": "overview"})
    await wait_for(socket, lambda m: m["type"] == "counts")


async def test_live_messages_go_out_beneath_the_session_middleware() -> None:
    # The stack every host wraps the route in (AuthMiddlewareStack includes it) hands the
    # consumer a send that inspects the session on every message; live messages skip it.
    async def transport_send(message: Message) -> None:
        raise AssertionError("not called")

    async def receive() -> Message:
        return {"type": "websocket.connect"}

    handed: dict[str, Any] = {}

    async def consumer(scope: Message, receive: Any, send: Any) -> None:
        handed["send"] = send

    scope = {"type": "websocket", "path": "/ws/bullpen/", "headers": [(b"cookie", b"a=b")]}
    await SessionMiddlewareStack(consumer)(scope, receive, transport_send)
    assert handed["send"] is not transport_send
    assert beneath_sessions(handed["send"]) is transport_send
    assert beneath_sessions(transport_send) is transport_send


async def test_the_first_job_message_matches_the_page_part_for_part(
    socket: WebsocketCommunicator, peer: Peer, async_client: Any
) -> None:
    """A job page's socket is sent the job right after it subscribes; while the job has not
    changed, every part carries the digest the page shows, so the page swaps none of them."""
    scenario = await run_peer(peer, "scenario", "--queue", "shop")
    for state in ("failed", "completed", "delayed"):
        job_id = scenario["ids"][state][0]
        page = (await async_client.get(f"/queues/q/shop/jobs/{job_id}/")).content.decode()
        shown = _digests(page)
        await wait_for(socket, lambda m: m["type"] == "status")
        await socket.send_json_to({"watch": "job", "queue": "shop", "id": job_id})
        message, _ = await wait_for(socket, lambda m, j=job_id: m["type"] == "job" and m["id"] == j)
        sent = _digests(message["html"])
        assert set(sent) >= {"job-state", "job-actions", "job-facts", "job-progress"}, state
        assert {part: shown.get(part) for part in sent} == sent, state


async def test_a_page_is_told_when_its_queue_is_followed_from_then_on(
    socket: WebsocketCommunicator, peer: Peer
) -> None:
    """A queue created after the reader started is followed from its stream's end once a page
    watches it: what happened before is in no event, so the page is told to read again."""
    await wait_for(socket, lambda m: m["type"] == "status")
    follower = channel_groups.ensure_started()
    # The reader's first pass has looked for queues, and it looks for none again in this test:
    # a queue it found on its own before the page watched it would be followed before the
    # page read its list (nothing to tell then).
    await until("the first look for queues", lambda: follower.chores.full_refresh.ran)
    follower.chores.full_refresh.postpone(3600)
    follower.chores.discover.postpone(3600)
    await asyncio.sleep(0.5)  # the pass that looked ends (one SCAN of an almost empty Redis)
    await run_peer(peer, "add", "--queue", "late", "--name", "a", "--data", "{}")
    await socket.send_json_to({"watch": "queue", "queue": "late"})
    told, _ = await wait_for(socket, lambda m: m["type"] == "followed")
    assert told == {"type": "followed", "queue": "late"}
    assert any(ref.name == "late" for ref in follower.streams.refs.values())


async def test_a_grouped_overview_gets_each_queue_s_group_with_its_counts(
    socket: WebsocketCommunicator, peer: Peer
) -> None:
    """The server decides which group a queue is in, as it renders the list; the page only adds
    up. Another grouping, sent again, is used from then on."""
    await run_peer(peer, "add", "--queue", "eu-mail", "--name", "a", "--data", "{}")
    await run_peer(peer, "add", "--queue", "us-mail", "--name", "a", "--data", "{}")
    await wait_for(socket, lambda m: m["type"] == "status")

    def groups(message: Message) -> dict[str, str]:
        if message["type"] != "counts":
            return {}
        return {entry["slug"]: entry.get("group") for entry in message["queues"]}

    await socket.send_json_to({"watch": "overview", "group": "head", "delimiter": "-"})
    found, _ = await wait_for(socket, lambda m: "us-mail" in groups(m) and "eu-mail" in groups(m))
    assert groups(found) == {"eu-mail": "eu", "us-mail": "us"}
    await socket.send_json_to({"watch": "overview", "group": "tail", "delimiter": "-"})
    found, _ = await wait_for(socket, lambda m: groups(m).get("eu-mail") == "mail")
    assert groups(found)["us-mail"] == "mail"
    await socket.send_json_to({"watch": "overview"})  # not grouped: no group is sent
    # A live message rendered for the grouping before may still be on its way: the answer to
    # this watch follows it.
    found, _ = await wait_for(socket, lambda m: "eu-mail" in groups(m) and not groups(m)["eu-mail"])
    assert groups(found) == {"eu-mail": None, "us-mail": None}
    await socket.send_json_to({"watch": "overview", "group": "sideways"})
    refused, _ = await wait_for(socket, lambda m: m["type"] == "error")
    assert "group must be one of" in refused["error"]


def _digests(html: str) -> dict[str, str]:
    """Each live part's id and digest."""
    pairs = re.findall(r'<\w+ data-digest="(\w+)"[^>]*? id="([\w-]+)"', html)
    return {part: digest for digest, part in pairs}

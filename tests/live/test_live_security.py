"""The live websocket against a hostile or departed client, on real Redis: watches name queues
that exist and stay bounded, a client's sockets are bounded, a socket closes once its user may no
longer read (sign-out, deactivation, a basic-auth user removed), and the origin is checked with
its port through the route the sites use."""

from __future__ import annotations

import asyncio
import base64
import json
import time
from collections.abc import AsyncIterator, Callable
from typing import Any

import pytest
from bullmq import Queue
from channels.auth import AuthMiddlewareStack
from channels.routing import URLRouter
from channels.testing import WebsocketCommunicator
from django.contrib.auth.models import User
from django.test import AsyncClient, override_settings

from dashboard.auth.principal import Principal
from dashboard.live import channel_groups as live
from dashboard.live import socket_auth, ws_ticket
from dashboard.live.consumers import TOO_MANY_SOCKETS, LiveConsumer
from dashboard.routing import websocket_route
from queues.live import interest
from queues.redis.clients import get_client

# Channels closes stale database connections around each websocket event.
pytestmark = pytest.mark.django_db(transaction=True)

Message = dict[str, Any]
BASIC = b"Basic " + base64.b64encode(b"operator:s3cret-pass")


@pytest.fixture(autouse=True)
async def stop_live() -> AsyncIterator[None]:
    yield
    await live.stop()


@pytest.fixture
async def img(bullpen_settings: dict[str, Any]) -> str:
    """A queue with one job, made by a producer (the bullmq package)."""
    queue = Queue("img", {"connection": bullpen_settings["REDIS_URL"], "prefix": "bull"})
    job = await queue.add("resize", {"w": 10})
    await queue.close()
    return str(job.id)


def signed_in_reads(config: dict[str, Any], **live: Any) -> dict[str, Any]:
    """The settings with the default read check (staff with bullpen.view, basic-auth users)."""
    config = {key: value for key, value in config.items() if key != "READ_ACCESS"}
    return {**config, "LIVE": live}


async def opened(
    app: Any = None, headers: list[tuple[bytes, bytes]] | None = None
) -> WebsocketCommunicator:
    socket = WebsocketCommunicator(app or LiveConsumer.as_asgi(), "/ws/bullpen/", headers)
    connected, _ = await socket.connect(timeout=10)
    assert connected
    return socket


async def until(
    socket: WebsocketCommunicator,
    matches: Callable[[Message], bool],
    within: float = 10,
) -> Message:
    """The first output that matches: a sent message (parsed, batches taken apart) or the
    close."""
    seen: list[Message] = []
    deadline = time.monotonic() + within
    while time.monotonic() < deadline:
        try:
            output = await socket.receive_output(timeout=max(0.05, deadline - time.monotonic()))
        except TimeoutError:
            break
        found = [output]
        if output["type"] == "websocket.send":
            message = json.loads(output["text"])
            found = message["messages"] if message.get("type") == "batch" else [message]
        for each in found:
            if matches(each):
                return each
            seen.append(each)
    raise AssertionError(f"nothing matched within {within}s; got {seen!r:.1500}")


def kind(name: str) -> Callable[[Message], bool]:
    return lambda message: message.get("type") == name


async def test_watches_name_known_queues_and_ids_of_bounded_length(img: str) -> None:
    socket = await opened()
    await until(socket, kind("status"))
    registry = live.interest()
    for watch, said in [
        ({"watch": "queue", "queue": "no-such-queue"}, "no such queue"),
        ({"watch": "job", "queue": "no-such-queue", "id": "1"}, "no such queue"),
        ({"watch": "queue", "queue": "elsewhere:img"}, "no such queue"),  # not a prefix here
        ({"watch": "job", "queue": "img", "id": "x" * 1025}, "id is too long"),
        ({"watch": "queue", "queue": "q" * 1_000_000}, "queue is too long"),
    ]:
        await socket.send_json_to(watch)
        error = await until(socket, kind("error"))
        assert said in error["error"], (watch, error)
    assert registry.empty  # nothing refused reached what this process publishes
    # The socket stays, and serves a queue that exists.
    await socket.send_json_to({"watch": "job", "queue": "img", "id": img})
    job = await until(socket, kind("job"))
    assert job["queue"] == "img" and job["id"] == img
    assert registry.jobs == {("img", img): 1}
    await socket.disconnect()


async def test_one_socket_holds_a_bounded_number_of_watches(
    img: str, bullpen_settings: dict[str, Any]
) -> None:
    with override_settings(BULLPEN={**bullpen_settings, "LIVE": {"max_watches": 3}}):
        socket = await opened()
        await until(socket, kind("status"))
        for job_id in ("a", "b", "c"):
            await socket.send_json_to({"watch": "job", "queue": "img", "id": job_id})
        await socket.send_json_to({"watch": "job", "queue": "img", "id": "d"})
        error = await until(socket, kind("error"))
        assert error["error"] == "too many watches on one socket (at most 3)"
        assert len(live.interest().jobs) == 3
        # Still open: a page that resets its watches is served again.
        await socket.send_json_to({"reset": True, "watch": "queue", "queue": "img"})
        await until(socket, kind("list"))
        assert live.interest().queues == {"img": 1} and not live.interest().jobs
        await socket.disconnect()


async def test_one_client_keeps_a_bounded_number_of_sockets(
    bullpen_settings: dict[str, Any],
) -> None:
    with override_settings(BULLPEN={**bullpen_settings, "LIVE": {"max_sockets_per_client": 2}}):
        first, second = await opened(), await opened()
        third = WebsocketCommunicator(LiveConsumer.as_asgi(), "/ws/bullpen/")
        assert await third.connect(timeout=10) == (False, TOO_MANY_SOCKETS)
        await first.disconnect()
        again = await opened()  # a closed socket gives its place back
        await second.disconnect()
        await again.disconnect()


async def test_the_reader_takes_a_bounded_interest_from_each_process(redis_client: Any) -> None:
    at = int(time.time() * 1000)
    many = [f"q{n}" for n in range(interest.MAX_ENTRIES + 10)]
    entry = {
        "queues": ["x" * (interest.MAX_NAME + 1), *many],
        "jobs": [["mail", "y" * (interest.MAX_NAME + 1)], ["mail", "7"]],
        "overview": False,
        "shown": many,
        "at": at,
    }
    redis_client.hset("bullpen:live:interest", "other-process", json.dumps(entry))
    everyone = await interest.read_all(get_client(), "bullpen:live:interest")
    assert len(everyone.queues) == interest.MAX_ENTRIES - 1  # the oversized one took a place
    assert all(len(name) <= interest.MAX_NAME for name in everyone.queues)
    assert everyone.jobs == {("mail", "7")} and not everyone.overview
    assert len(everyone.shown) == interest.MAX_ENTRIES


async def test_a_sign_out_closes_the_sessions_sockets_at_once(
    bullpen_settings: dict[str, Any],
) -> None:
    admin = await User.objects.acreate_superuser("admin", "admin@example.com", "pw")
    client = AsyncClient()
    await client.aforce_login(admin, backend="django.contrib.auth.backends.ModelBackend")
    cookie = [(b"cookie", f"sessionid={client.cookies['sessionid'].value}".encode())]
    stack = AuthMiddlewareStack(URLRouter([websocket_route()]))
    # No re-check within the test: only the sign-out itself can close the socket.
    config = signed_in_reads(bullpen_settings, auth_recheck_interval=3600)
    with override_settings(BULLPEN=config):
        socket = await opened(stack, cookie)
        await until(socket, kind("status"))
        assert (await client.post("/admin/logout/", {"next": "/queues/"})).status_code == 302
        said = await until(socket, kind("signed-out"))
        assert said["text"] == "signed out: sign in again for live updates"
        closed = await until(socket, kind("websocket.close"))
        assert closed["code"] == socket_auth.SIGNED_OUT
        # The same cookie opens nothing now.
        refused = WebsocketCommunicator(stack, "/ws/bullpen/", cookie)
        assert await refused.connect(timeout=10) == (False, socket_auth.SIGNED_OUT)
        await socket.disconnect()


async def test_a_deactivated_user_s_socket_closes_at_the_next_check(
    bullpen_settings: dict[str, Any],
) -> None:
    admin = await User.objects.acreate_superuser("admin", "admin@example.com", "pw")
    client = AsyncClient()
    await client.aforce_login(admin, backend="django.contrib.auth.backends.ModelBackend")
    cookie = [(b"cookie", f"sessionid={client.cookies['sessionid'].value}".encode())]
    stack = AuthMiddlewareStack(URLRouter([websocket_route()]))
    config = signed_in_reads(bullpen_settings, auth_recheck_interval=0.2)
    with override_settings(BULLPEN=config):
        socket = await opened(stack, cookie)
        await until(socket, kind("status"))
        await socket.send_json_to({"watch": "overview"})
        await until(socket, kind("counts"))
        admin.is_active = False
        await admin.asave()
        await until(socket, kind("signed-out"), within=5)
        closed = await until(socket, kind("websocket.close"), within=5)
        assert closed["code"] == socket_auth.SIGNED_OUT
        assert live.interest().empty
        await socket.disconnect()


async def test_a_removed_basic_auth_user_s_socket_closes(bullpen_settings: dict[str, Any]) -> None:
    config = signed_in_reads(bullpen_settings, auth_recheck_interval=0.2)
    with override_settings(BULLPEN=config):
        socket = await opened(headers=[(b"authorization", BASIC)])
        await until(socket, kind("status"))
        await socket.send_json_to({"watch": "overview"})
        await until(socket, kind("counts"))
        # Checked again and again while the user is configured: the socket stays and answers.
        await asyncio.sleep(0.7)
        await socket.send_json_to({"watch": "queue", "queue": "no-such-queue"})
        assert (await until(socket, kind("error")))["error"] == "no such queue"
        with override_settings(BULLPEN={**config, "BASIC_AUTH_PLAIN": {}}):
            await until(socket, kind("signed-out"), within=5)
            closed = await until(socket, kind("websocket.close"), within=5)
        assert closed["code"] == socket_auth.SIGNED_OUT
        await socket.disconnect()


async def test_a_ticketed_socket_closes_once_its_user_s_password_changes(
    bullpen_settings: dict[str, Any],
) -> None:
    # A basic-auth reader's page opens its socket with the page's ticket (Chromium sends no
    # credentials with a handshake); the ticket was issued under the password of that time.
    config = signed_in_reads(bullpen_settings, auth_recheck_interval=0.2)
    with override_settings(BULLPEN=config):
        ticket = ws_ticket.issue(Principal("operator", "basic"))
        socket = WebsocketCommunicator(LiveConsumer.as_asgi(), f"/ws/bullpen/?ticket={ticket}", [])
        assert (await socket.connect(timeout=10))[0]
        await until(socket, kind("status"))
        changed = {**config, "BASIC_AUTH_PLAIN": {"operator": "a-new-pass-1"}}
        with override_settings(BULLPEN=changed):
            await until(socket, kind("signed-out"), within=5)
            closed = await until(socket, kind("websocket.close"), within=5)
        assert closed["code"] == socket_auth.SIGNED_OUT
        await socket.disconnect()


async def test_the_origin_is_checked_with_its_port_on_the_sites_stack() -> None:
    # The standalone site's own ASGI application: Channels' host check, then Bullpen's route.
    from bullpen_site.asgi import application

    def handshake(origin: bytes) -> WebsocketCommunicator:
        headers = [(b"host", b"localhost:8000"), (b"origin", origin)]
        return WebsocketCommunicator(application, "/ws/bullpen/", headers)

    assert (await handshake(b"http://localhost:9999").connect(timeout=10))[0] is False
    assert (await handshake(b"https://localhost:8000").connect(timeout=10))[0] is False
    own = handshake(b"http://localhost:8000")
    assert (await own.connect(timeout=10))[0] is True
    await own.disconnect()

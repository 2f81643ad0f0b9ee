"""A refused websocket handshake leaves the server's access lines (and a wrong password's
failure), not a traceback: refusals come by the thousand from a page left open after its user
signed out, or from a scanner, and a log full of tracebacks hides the one that matters."""

from __future__ import annotations

import asyncio
import re
from collections.abc import Iterator
from pathlib import Path

import pytest
import websockets
from websockets.exceptions import InvalidStatus

from tests.auth.test_standalone_access import AUTH
from tests.support.servers.live_server import LiveServer, http_get, stop_bullpen
from tests.support.servers.redis_server import RedisServer
from tests.support.standalone import CREDENTIALS, start_standalone


@pytest.fixture
def closed_site(redis_server: RedisServer, tmp_path: Path) -> Iterator[LiveServer]:
    server = start_standalone(redis_server.url, tmp_path, **CREDENTIALS)
    yield server
    stop_bullpen(server)


async def refused(server: LiveServer, origin: str, headers: dict[str, str]) -> int:
    url = server.url.replace("http://", "ws://") + "/ws/bullpen/"
    try:
        async with websockets.connect(url, origin=origin, additional_headers=headers):  # type: ignore[arg-type]
            pass
    except InvalidStatus as refusal:
        return refusal.response.status_code
    raise AssertionError("the handshake was accepted")


def test_a_refused_handshake_logs_no_traceback(closed_site: LiveServer) -> None:
    log = closed_site.log
    # The site loads its apps on its first request: done before the handshakes, which daphne
    # gives a limited time (a loaded machine can take that long to start the site).
    assert http_get(closed_site.url + "/queues/", headers={"Authorization": AUTH})[0] == 200
    before = log.read_text()
    statuses = [
        asyncio.run(refused(closed_site, closed_site.url, {})),  # no credentials
        asyncio.run(refused(closed_site, closed_site.url, {"Authorization": "Basic eDp5"})),
        asyncio.run(refused(closed_site, "http://elsewhere.example", {"Authorization": AUTH})),
    ]
    assert statuses == [403, 403, 403]
    # A request after them: everything the handshakes logged is in the file by now.
    assert http_get(closed_site.url + "/queues/", headers={"Authorization": AUTH})[0] == 200
    written = log.read_text()[len(before) :]
    assert "Traceback" not in written and "Exception inside application" not in written
    # Daphne's access lines (connecting, rejected, gone) and, for the wrong password, its
    # failure as django-axes and Bullpen log it: nothing else.
    access = re.compile(r'^\S+ - - \[[^]]+\] "(WSCONNECTING|WSREJECT|WSDISCONNECT|GET) ')
    others = [line for line in written.splitlines() if line and not access.match(line)]
    assert len(others) <= 2, written
    assert all("login failure" in line or "sign-in failed" in line for line in others), others

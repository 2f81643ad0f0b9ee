"""Faults during a bulk action, with real processes: daphne killed with SIGKILL mid retry-all,
and clients that close their socket. Nothing is lost, every job is counted once, and the
audit log says how each action started and ended."""

from __future__ import annotations

import base64
import json
import socket
import sqlite3
import struct
import time
import urllib.error
import urllib.request
from pathlib import Path
from typing import Any
from urllib.parse import urlsplit

import pytest

from tests.support.action_waits import status_of, wait_on_server
from tests.support.peer import Peer
from tests.support.servers.live_server import LiveServer, http_get, start_bullpen, stop_bullpen
from tests.support.servers.redis_server import RedisServer

AUTH = {"Authorization": "Basic " + base64.b64encode(b"operator:s3cret-pass").decode()}
JOBS = 10_000


def seed_failed(peer: Peer, queue: str, count: int) -> None:
    peer("add-bulk", "--queue", queue, "--name", "n", "--count", str(count), timeout=120)
    peer(
        "work",
        "--queue",
        queue,
        "--count",
        str(count),
        "--fail",
        "--concurrency",
        "500",
        "--timeout-ms",
        "90000",
        timeout=120,
    )


def server_with(redis_server: RedisServer, log: Path, **actions: Any) -> LiveServer:
    """A daphne server whose bulk actions move small batches slowly enough to interrupt."""
    env = {"BULLPEN_TEST_ACTIONS": json.dumps(actions)}
    return start_bullpen(redis_server.url, log, extra_env=env)


def post(server: LiveServer, path: str) -> tuple[int, dict[str, Any]]:
    request = urllib.request.Request(  # noqa: S310 - local test server
        f"{server.url}{path}", data=b"", method="POST", headers=AUTH
    )
    try:
        with urllib.request.urlopen(request, timeout=30) as response:  # noqa: S310
            return response.status, json.loads(response.read())
    except urllib.error.HTTPError as error:
        return error.code, json.loads(error.read())


def audit_rows(server: LiveServer, action_id: str) -> list[tuple[str, int, int, str, str]]:
    """(phase, status, count, result, error) of the action's rows, oldest first."""
    with sqlite3.connect(server.log.with_suffix(".sqlite3")) as db:
        rows = db.execute(
            "select detail, status, count, result, error from bullpen_auditentry order by id"
        ).fetchall()
    found = []
    for detail, status, count, result, error in rows:
        fields = json.loads(detail)
        if fields.get("actionId") == action_id:
            found.append((fields["phase"], status, count, result, error))
    return found


def wait_for_count(server: LiveServer, action_id: str, at_least: int) -> None:
    deadline = time.monotonic() + 20
    while status_of(server.url, action_id)["count"] < at_least:
        assert time.monotonic() < deadline, "the action made no progress"
        time.sleep(0.05)


@pytest.mark.parametrize(
    ("resume_within_s", "ending"),
    [(3600, "done"), (0.5, "interrupted")],
    ids=["resumed", "too-late-to-resume"],
)
def test_kill_9_mid_retry_all(
    peer: Peer,
    redis_server: RedisServer,
    redis_client: Any,
    tmp_path: Path,
    resume_within_s: float,
    ending: str,
) -> None:
    seed_failed(peer, "big", JOBS)
    assert redis_client.zcard("bull:big:failed") == JOBS
    actions = {"batch_size": 250, "pause_ms": 100, "lease_ttl_ms": 2000}
    # Both servers write the same audit database (named after the log).
    log = tmp_path / "daphne.log"
    first = server_with(redis_server, log, **actions)
    try:
        code, body = post(first, "/queues/api/queues/big/retry/?state=failed")
        assert code == 202 and body["total"] == JOBS
        wait_for_count(first, body["id"], 2000)
        first.process.kill()  # SIGKILL: no cleanup of any kind
        first.process.wait(10)
    finally:
        stop_bullpen(first)
    moved = redis_client.llen("bull:big:wait")
    assert 2000 <= moved < JOBS, "the kill came too late to test anything"
    assert redis_client.zcard("bull:big:failed") == JOBS - moved

    second = server_with(redis_server, log, **actions, resume_within_s=resume_within_s)
    try:
        # The new process's runner starts with it, not with a request: nobody asks about the
        # action until Redis says it has ended (once the dead one's lease has expired).
        settled_in_redis(redis_client, body["id"])
        end = wait_on_server(second.url, body["id"])
        rows = audit_rows(second, body["id"])
    finally:
        stop_bullpen(second)
    waiting = redis_client.llen("bull:big:wait")
    # Nothing lost: every job is failed or waiting, and the count is exactly what moved.
    assert redis_client.zcard("bull:big:failed") + waiting == JOBS
    assert end["state"] == ending and end["count"] == waiting
    assert end["resumes"] == 1
    if ending == "done":
        assert waiting == JOBS and end["error"] == ""
        assert rows == [("started", 202, 0, "ok", ""), ("done", 200, JOBS, "ok", "")]
    else:
        assert waiting == moved, "an interrupted action moved nothing after the kill"
        assert "not resumed" in end["error"]
        assert rows == [
            ("started", 202, 0, "ok", ""),
            ("interrupted", 500, moved, "failed", end["error"]),
        ]


def settled_in_redis(redis_client: Any, action_id: str, within: float = 30) -> None:
    """Wait, reading Redis alone (no request to any server), until the action has ended and
    its end has been audited."""
    deadline = time.monotonic() + within
    while redis_client.hget(f"bullpen:action:{action_id}", "settled") != "1":
        state = redis_client.hget(f"bullpen:action:{action_id}", "state")
        assert time.monotonic() < deadline, f"the action is still {state!r}, with nobody asking"
        time.sleep(0.1)


def raw_post(server: LiveServer, path: str) -> socket.socket:
    """A POST written on a socket that the caller closes without reading the answer."""
    address = urlsplit(server.url)
    sock = socket.create_connection((address.hostname or "127.0.0.1", address.port or 80))
    sock.sendall(
        (
            f"POST {path} HTTP/1.1\r\nHost: {address.netloc}\r\n"
            f"Authorization: {AUTH['Authorization']}\r\nContent-Length: 0\r\n\r\n"
        ).encode()
    )
    return sock


def listed_actions(server: LiveServer, queue: str) -> list[dict[str, Any]]:
    code, text = http_get(f"{server.url}/queues/api/actions/?queue={queue}")
    assert code == 200, text[:500]
    actions: list[dict[str, Any]] = json.loads(text)["actions"]
    return actions


def slam(sock: socket.socket) -> None:
    """Close with a reset, as a killed tab or a proxy giving up does."""
    sock.setsockopt(socket.SOL_SOCKET, socket.SO_LINGER, struct.pack("ii", 1, 0))
    sock.close()


def test_clients_that_go_away_do_not_stop_a_retry_all(
    peer: Peer, redis_server: RedisServer, redis_client: Any, tmp_path: Path
) -> None:
    jobs = 5000
    seed_failed(peer, "gone", jobs)
    server = server_with(redis_server, tmp_path / "daphne.log", batch_size=250, pause_ms=100)
    try:
        # One client gives up at once, maybe before the server read its request.
        slam(raw_post(server, "/queues/api/queues/gone/retry/?state=failed"))
        # Another one stays until an action is under way, then goes without reading a byte.
        waiting = raw_post(server, "/queues/api/queues/gone/retry/?state=failed")
        deadline = time.monotonic() + 10
        while not any(action["count"] > 0 for action in listed_actions(server, "gone")):
            assert time.monotonic() < deadline, "no action started"
            time.sleep(0.05)
        slam(waiting)
        time.sleep(0.5)  # whatever reached the server has been recorded by now
        listed = listed_actions(server, "gone")
        ends = [wait_on_server(server.url, action["id"]) for action in listed]
        rows = {action["id"]: audit_rows(server, action["id"]) for action in listed}
    finally:
        stop_bullpen(server)
    # Each action that was asked for ran to its end; together they retried every job once.
    assert all(end["state"] == "done" for end in ends)
    assert sum(end["count"] for end in ends) == jobs
    assert redis_client.zcard("bull:gone:failed") == 0
    assert redis_client.llen("bull:gone:wait") == jobs
    for end in ends:
        assert rows[end["id"]] == [
            ("started", 202, 0, "ok", ""),
            ("done", 200, end["count"], "ok", ""),
        ]

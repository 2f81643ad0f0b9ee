"""The runner's connections: an ACL user with a password, and TLS (``rediss://``)."""

from __future__ import annotations

import asyncio
import shutil
import subprocess
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
import redis
from django.test import override_settings
from redis._parsers.resp3 import _AsyncRESP3Parser

from queues.runner import Producer, QueueOptions, Registry
from queues.runner.clients.multiplex import MultiplexedRedis
from queues.runner.clients.redis_clients import (
    HiredisConnection,
    HiredisSSLConnection,
    runner_client,
)
from tests.support.servers.redis_server import RedisServer, free_port
from tests.support.worker_fixtures import Runners, wait_for


def _registry() -> Registry:
    registry = Registry()

    async def echo(payload: Any) -> Any:
        return payload

    registry.register("secure", echo, QueueOptions(attempts=1))
    return registry


async def _run_one_job(runners: Runners, check: redis.Redis) -> None:
    registry = _registry()
    async with Producer(registry) as producer:
        await producer.add("secure", "echo", {"n": 1})
    runner = await runners.start(registry)

    async def done() -> bool:
        return bool(check.zcard("bull:secure:completed") == 1)

    await wait_for("the job", done)
    await runners.stop(runner)


async def test_an_acl_user_with_a_password(
    runners: Runners,
    redis_server: RedisServer,
    redis_client: Any,
    bullpen_settings: dict[str, Any],
) -> None:
    redis_client.execute_command(
        "ACL", "SETUSER", "runner", "on", ">runner-pass", "~*", "&*", "+@all"
    )
    try:
        url = f"redis://runner:runner-pass@127.0.0.1:{redis_server.port}/0"
        with override_settings(BULLPEN={**bullpen_settings, "REDIS_URL": url}):
            client = runner_client(blocking=True)
            assert client.connection_pool.connection_class is HiredisConnection
            assert await client.execute_command("ACL", "WHOAMI") == "runner"
            await client.aclose()
            await _run_one_job(runners, redis_client)
    finally:
        redis_client.execute_command("ACL", "DELUSER", "runner")


@pytest.fixture
def tls_redis(tmp_path: Path) -> Iterator[tuple[str, redis.Redis]]:
    if shutil.which("openssl") is None:
        pytest.fail("openssl is needed to make a test certificate: apt-get install openssl")
    cert, key = tmp_path / "cert.pem", tmp_path / "key.pem"
    make_cert = [
        *("openssl", "req", "-x509", "-newkey", "rsa:2048", "-nodes", "-days", "1"),
        *("-keyout", str(key), "-out", str(cert), "-subj", "/CN=127.0.0.1"),
        *("-addext", "subjectAltName=IP:127.0.0.1"),
    ]
    subprocess.run(
        make_cert,
        check=True,
        capture_output=True,
    )
    port = free_port()
    command = [
        *(RedisServer().binary, "--port", "0", "--tls-port", str(port), "--bind", "127.0.0.1"),
        *("--tls-cert-file", str(cert), "--tls-key-file", str(key)),
        *("--tls-ca-cert-file", str(cert), "--tls-auth-clients", "no"),
        *("--save", "", "--appendonly", "no", "--dir", str(tmp_path)),
    ]
    server = subprocess.Popen(
        command,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
    )
    check = redis.Redis(
        host="127.0.0.1",
        port=port,
        ssl=True,
        ssl_ca_certs=str(cert),
        decode_responses=True,
        socket_connect_timeout=1,
    )
    try:
        for _ in range(200):
            try:
                check.ping()
                break
            except redis.ConnectionError:
                time.sleep(0.05)
        yield f"rediss://127.0.0.1:{port}/0?ssl_ca_certs={cert}", check
    finally:
        check.close()
        server.terminate()
        server.wait(10)


async def test_tls(
    runners: Runners,
    tls_redis: tuple[str, redis.Redis],
    bullpen_settings: dict[str, Any],
) -> None:
    url, check = tls_redis
    with override_settings(BULLPEN={**bullpen_settings, "REDIS_URL": url}):
        client = runner_client(blocking=False)
        assert client.connection_pool.connection_class is HiredisSSLConnection
        await client.aclose()
        await _run_one_job(runners, check)
    assert check.hget("bull:secure:1", "returnvalue") == '{"n":1}'


@pytest.fixture(params=["as-they-arrive", "reader-task"])
def mux_client(request: pytest.FixtureRequest) -> MultiplexedRedis:
    """The runner's client, reading replies in its data_received (hiredis, as deployed) or,
    with redis-py's pure-Python parser, in a reader task."""
    client = runner_client(blocking=False)
    if request.param == "reader-task":
        client.connection_pool.connection_kwargs["parser_class"] = _AsyncRESP3Parser
    return client


async def test_one_connection_carries_many_callers(
    redis_client: Any, mux_client: MultiplexedRedis
) -> None:
    client = mux_client
    try:
        await client.client_setname("bullpen-mux-test")
        # 200 callers at once: one connection, replies in order, each to its caller.
        counts = await asyncio.gather(*(client.incr("n") for _ in range(200)))
        assert counts == list(range(1, 201))
        names = [c["name"] for c in redis_client.client_list()]
        assert names.count("bullpen-mux-test") == 1

        # An error reply fails its own command only.
        await client.set("text", "x")
        wrong, right = await asyncio.gather(
            client.lpush("text", 1), client.hgetall("nothing"), return_exceptions=True
        )
        assert isinstance(wrong, redis.ResponseError) and "WRONGTYPE" in str(wrong)
        assert right == {}

        # Scripts survive SCRIPT FLUSH (NOSCRIPT is an error reply, then the script is loaded).
        echo = client.register_script("return ARGV[1]")
        assert await echo(args=["hi"]) == "hi"
        await client.script_flush()
        assert await echo(args=["again"]) == "again"

        # Replies of every shape: integers, nil, maps, sets, floats, nested arrays.
        await client.hset("h", mapping={"a": "1"})
        await client.sadd("s", "x")
        await client.zadd("z", {"m": 1.5})
        assert await client.hgetall("h") == {"a": "1"}
        assert await client.smembers("s") == {"x"}
        assert await client.zrange("z", 0, -1, withscores=True) == [("m", 1.5)]
        assert await client.get("missing") is None
        assert await client.eval("return {1, {'a', false}}", 0) == [1, ["a", None]]
        # Read as they arrive unless the connection has no hiredis parser.
        python_parser = client.connection_pool.connection_kwargs.get("parser_class")
        assert (client._replies is None) is (python_parser is _AsyncRESP3Parser)

        # A killed connection fails what was in flight; the next commands reconnect.
        redis_client.client_kill_filter(_type="normal", skipme=True)
        for _ in range(3):
            try:
                assert await client.get("text") == "x"
                break
            except redis.ConnectionError:
                continue
        else:
            pytest.fail("the client did not reconnect")
    finally:
        await client.aclose()


async def test_a_silent_server_times_commands_out(redis_client: Any) -> None:
    url = redis_client_url(redis_client)
    client = MultiplexedRedis.from_url(url, decode_responses=True, socket_timeout=0.3)
    try:
        assert await client.ping() is True
        redis_client.execute_command("CLIENT", "PAUSE", 1000, "ALL")
        started = time.monotonic()
        with pytest.raises(redis.TimeoutError):
            await client.get("anything")
        assert 0.25 < time.monotonic() - started < 0.9
        # A slow reply within the timeout is fine, and the client reconnects after a timeout
        # (a short pause: the reconnection's own round trips share the 0.3 s on a loaded machine).
        await asyncio.sleep(1.0)
        redis_client.execute_command("CLIENT", "PAUSE", 50, "ALL")
        assert await client.set("k", "v") is True
        assert await client.get("k") == "v"
    finally:
        redis_client.execute_command("CLIENT", "UNPAUSE")
        await client.aclose()


def redis_client_url(redis_client: Any) -> str:
    kwargs = redis_client.connection_pool.connection_kwargs
    return f"redis://{kwargs.get('host', '127.0.0.1')}:{kwargs['port']}/0"

"""A pipeline that parses every reply in one pass: the hot read paths' round trip.

redis-py's asyncio pipeline spends ~15 µs of Python per reply (a timeout context, callbacks,
layers of parsing); the overview's 160 replies cost it ~3 ms. Here the commands are packed and
sent by redis-py on one of its pooled connections (so TLS, ACL auth and the database are its
business), and the replies are read in bulk by a hiredis Reader: ~0.4 ms for the same work.
Replies that are errors come back as exception objects in the list, like
``pipeline.execute(raise_on_error=False)``.

Only for reads, so that a batch may be sent again: the connection is checked before it is used
(connection_check.py), and a batch whose connection broke is sent again on a fresh one, with
the client's retry policy (backoff, a bounded wait). A batch that timed out is not: Redis had
its chance.
"""

from __future__ import annotations

import asyncio
from collections.abc import Sequence
from functools import lru_cache
from typing import Any, cast

import hiredis
import redis.asyncio as aioredis
import redis.exceptions
from redis.crc import key_slot

from queues.config.settings import get_config
from queues.errors import NodeUnreachable, RedisUnavailable
from queues.redis.cluster import is_cluster, node_client, node_down, note_node_down, note_node_up
from queues.redis.errors import reason
from queues.redis.pool_check import make_usable
from queues.redis.unreachable import UNREACHABLE

Command = Sequence[Any]
_READ_SIZE = 1 << 16
_CACHED_UP_TO = 256


async def execute(
    client: aioredis.Redis, commands: Sequence[Command], packed: bytes | None = None
) -> list[Any]:
    """The replies to ``commands``. ``packed``: their RESP, when the caller keeps it ready
    (the overview's thousands of commands are packed once per queue, not once per read)."""
    if not commands:
        return []
    if is_cluster(client):
        return await _on_cluster(client, commands)
    data = packed if packed is not None else _packed(commands)
    retry = client.get_retry()
    if retry is None:
        return await _once(client, commands, data)
    return list(await retry.call_with_retry(lambda: _once(client, commands, data), _nothing))


def _packed(commands: Sequence[Command]) -> bytes:
    # Small batches repeat (the same page read again): those are cached whole. A large one
    # would cost more to hash as a key than to pack, and hold megabytes in the cache.
    if len(commands) <= _CACHED_UP_TO:
        return pack(tuple(map(tuple, commands)))
    return pack_uncached(commands)


async def _once(client: aioredis.Redis, commands: Sequence[Command], data: bytes) -> list[Any]:
    pool = client.connection_pool
    connection = await pool.get_connection()  # type: ignore[no-untyped-call]
    try:
        await make_usable(connection)
        stream = getattr(connection, "_reader", None)
        if stream is None:  # a connection type without a stream: take the ordinary path
            return await _ordinary(client, commands)
        await connection.send_packed_command(data, check_health=False)
        timeout = float(get_config()["REDIS_TIMEOUT"])
        parser = _parser()
        replies: list[Any] = []
        while len(replies) < len(commands):
            try:
                # asyncio.timeout, not wait_for, which can swallow a cancel on Python 3.11.
                async with asyncio.timeout(timeout):
                    await _read_replies(stream, len(commands), parser, replies)
            except TimeoutError:
                # An answer waiting unread came while this process's loop was busy elsewhere
                # (another task's long step): only Redis's silence is its timeout.
                if not getattr(stream, "_buffer", None):
                    raise redis.exceptions.TimeoutError(
                        f"no answer from Redis in {timeout:g} s"
                    ) from None
        # It answered: no health check needed for a while (as redis-py's own reads record).
        connection.next_health_check = (
            asyncio.get_running_loop().time() + connection.health_check_interval
        )
        return replies
    except BaseException:
        # A half-read connection must never be reused: its replies would answer someone else.
        await connection.disconnect()
        raise
    finally:
        await pool.release(connection)


async def _nothing(error: Exception) -> None:
    return None  # the connection was closed where it broke


def _bulk(arg: Any) -> bytes:
    if isinstance(arg, bytes):
        data = arg
    elif isinstance(arg, str):
        data = arg.encode()
    elif isinstance(arg, (int, float)) and not isinstance(arg, bool):
        data = repr(arg).encode()
    else:
        raise TypeError(f"cannot send {type(arg).__name__} to Redis")
    return b"$%d\r\n%s\r\n" % (len(data), data)


@lru_cache(maxsize=256)
def pack(commands: tuple[tuple[Any, ...], ...]) -> bytes:
    """RESP for the commands. Cached: pages send the same commands on every request."""
    return pack_uncached(commands)


def pack_uncached(commands: Sequence[Command]) -> bytes:
    return b"".join(
        b"*%d\r\n" % len(command) + b"".join(_bulk(arg) for arg in command) for command in commands
    )


def _parser() -> hiredis.Reader:
    return hiredis.Reader(
        encoding="utf-8",
        errors="replace",
        replyError=redis.exceptions.ResponseError,
        protocolError=redis.exceptions.InvalidResponse,
    )


async def _read_replies(
    stream: asyncio.StreamReader, count: int, parser: hiredis.Reader, replies: list[Any]
) -> None:
    """Reads until ``replies`` holds ``count``; a read cut short leaves what it parsed there
    and the rest in ``parser`` and ``stream``, to go on from."""
    while len(replies) < count:
        reply = parser.gets()
        if reply is not False:
            replies.append(reply)
            continue
        data = await stream.read(_READ_SIZE)
        if not data:
            raise redis.exceptions.ConnectionError("Redis closed the connection")
        parser.feed(data)


async def _ordinary(client: aioredis.Redis, commands: Sequence[Command]) -> list[Any]:
    async with client.pipeline(transaction=False) as pipe:
        for command in commands:
            pipe.execute_command(*command)
        return list(await pipe.execute(raise_on_error=False))


# Scripts by digest (queues/reads/scripts.py registers them), for pipelines that cannot send
# EVALSHA.
_scripts: dict[str, str] = {}


def remember_script(sha: str, source: str) -> None:
    _scripts[sha] = source


def _as_eval(command: Command) -> Command:
    if str(command[0]).upper() == "EVALSHA" and str(command[1]) in _scripts:
        return ("EVAL", _scripts[str(command[1])], *command[2:])
    return command


# ---- Redis Cluster ----------------------------------------------------------------------------
# The same one-pass reading, per master: the commands are split by the master that holds each
# one's key (the client's slot map) and sent to each on a plain client of that node, all at
# once. Where the map was stale (a MOVED or ASK answer, a slot being migrated) the whole batch
# goes again through redis-py's cluster pipeline, which follows the redirections and reloads
# the map: these are reads, safe to send twice.
# A master that cannot be reached answers its share with the error (NodeUnreachable), in place
# (as an error reply would be), so that the others' replies are still used. When none of the
# masters asked answers, that error is raised; when no master of the cluster answers, Redis is
# unreachable.
_REDIRECTED = ("MOVED ", "ASK ", "TRYAGAIN", "CLUSTERDOWN")


async def _on_cluster(client: Any, commands: Sequence[Command]) -> list[Any]:
    await client.initialize()  # the slot map, loaded once
    by_node: dict[str, list[int]] = {}
    nodes: dict[str, Any] = {}
    for index, command in enumerate(commands):
        key = _key_of(command)
        if key is None:
            return await _through_cluster_pipeline(client, commands)
        node = client.nodes_manager.get_node_from_slot(key_slot(_encoded(key)))
        by_node.setdefault(node.name, []).append(index)
        nodes[node.name] = node
    batches = [(indexes, [commands[i] for i in indexes]) for indexes in by_node.values()]
    answers = await asyncio.gather(
        *(_on_reachable_node(client, nodes[name], batch) for name, (_, batch) in
          zip(by_node, batches, strict=True))
    )  # fmt: skip
    if all(isinstance(answer, BaseException) for answer in answers):
        if all(node_down(client, node.name) for node in client.get_primaries()):
            # Every master is away: Redis is, not a part of it.
            detail = reason(cast(BaseException, answers[0]))
            raise RedisUnavailable(f"Redis is unreachable: {detail}")
        raise cast(BaseException, answers[0])
    replies: list[Any] = [None] * len(commands)
    for (indexes, _batch), answer in zip(batches, answers, strict=True):
        if isinstance(answer, BaseException):
            for index in indexes:
                replies[index] = answer
            continue
        for index, reply in zip(indexes, answer, strict=True):
            if isinstance(reply, redis.exceptions.ResponseError) and str(reply).startswith(
                _REDIRECTED
            ):
                return await _through_cluster_pipeline(client, commands)
            replies[index] = reply
    return replies


async def _on_reachable_node(
    client: Any, node: Any, batch: list[Command]
) -> list[Any] | BaseException:
    """One master's share, or why that master cannot be read (it is skipped for a while)."""
    known_down = node_down(client, node.name)
    if known_down is not None:
        return NodeUnreachable(node.name, known_down)
    try:
        answer = await _on_node(node_client(client, node), batch)
    except UNREACHABLE as error:
        note_node_down(client, node.name, reason(error))
        return NodeUnreachable(node.name, reason(error))
    note_node_up(client, node.name)
    return answer


async def _on_node(node: aioredis.Redis, batch: list[Command]) -> list[Any]:
    """One master's share; scripts it does not know yet are loaded there and the share read
    again (a read: nothing ran)."""
    answer = await execute(node, batch)
    missing = {
        str(command[1])
        for command, reply in zip(batch, answer, strict=True)
        if str(command[0]).upper() == "EVALSHA"
        and isinstance(reply, redis.exceptions.ResponseError)
        and "NOSCRIPT" in str(reply)
        and str(command[1]) in _scripts
    }
    if not missing:
        return answer
    for sha in missing:
        await node.script_load(_scripts[sha])
    return await execute(node, batch)


async def _through_cluster_pipeline(client: Any, commands: Sequence[Command]) -> list[Any]:
    # redis-py's cluster pipeline refuses EVALSHA: a known script goes by its text.
    return await _ordinary(client, [_as_eval(command) for command in commands])


def _key_of(command: Command) -> Any:
    """The key that places ``command`` (its first), or None for a command without one."""
    name = str(command[0]).upper()
    if name in ("EVAL", "EVALSHA"):
        return command[3] if len(command) > 3 and int(command[2]) > 0 else None
    if name == "XREAD":
        words = [str(word).upper() for word in command]
        at = words.index("STREAMS") + 1 if "STREAMS" in words else len(command)
        return command[at] if at < len(command) else None
    return command[1] if len(command) > 1 else None


def _encoded(key: Any) -> bytes:
    return key if isinstance(key, bytes) else str(key).encode()

"""A redis-py asyncio client that carries all its non-blocking commands on one connection.

A worker running 10 or 50 jobs at once finishes them in waves, one Lua call each. With plain
redis-py every call takes a pooled connection, goes through the client's retry and metrics
machinery, and makes its own write and read. This client does what a Node (ioredis) client
does instead: each command is packed and written to the one connection as it is issued, and
the replies are taken off that connection in order, each handed to its caller (or its error).
Redis starts on a command while this process works on its other jobs, and the worker's CPU per
job drops by about a third.

Replies are parsed as they arrive, in the connection's ``data_received`` (with hiredis, i.e.
as deployed): redis-py sets the connection up (TLS, AUTH, SELECT, CLIENT SETNAME),
then :class:`_Replies` takes over its transport and feeds the connection's own hiredis reader.
A reply wakes its caller directly, with no reader task and no stream buffer in between: at
concurrency 1 that is an event-loop turn and a task step less per command. Without hiredis, a
task reads the replies through redis-py's ``read_response``.

Commands that block (the worker's wait for jobs), and the rare ones with special decoding
options, take a pooled connection as usual; so do pipelines and transactions. Replies follow
the order of the commands, as on any single Redis connection. The client's socket timeout bounds
the wait for each reply, as redis-py's does.

Connections heal. The connection's protocol learns at once when Redis closes it (a restart),
and the next command reconnects. A command that could not be written (Redis still away) is
tried again with the client's retry policy: nothing was sent. A command in flight when the
connection broke is tried again only if it changes nothing (queues/redis/write_once.py says which);
a write fails with ``WriteOutcomeUnknown``, since Redis may have run it: the worker decides,
knowing what the write was (BullMQ's finishing scripts check the job's lock, so the worker
can repeat them).
"""

from __future__ import annotations

import asyncio
import inspect
from collections import deque
from typing import Any

import redis.asyncio as aioredis
from redis._parsers.hiredis import NOT_ENOUGH_DATA, _AsyncHiredisParser
from redis.asyncio.connection import AbstractConnection
from redis.asyncio.sentinel import SentinelManagedConnection
from redis.client import EMPTY_RESPONSE, NEVER_DECODE
from redis.exceptions import BusyLoadingError, InvalidResponse, ResponseError
from redis.exceptions import ConnectionError as RedisConnectionError
from redis.exceptions import TimeoutError as RedisTimeoutError

from queues.redis.clients import read_retry
from queues.redis.write_once import WriteOutcomeUnknown, is_safe

# Commands that may hold the connection: they get a pooled one of their own.
BLOCKING = frozenset(
    {
        "BLMOVE",
        "BLMPOP",
        "BLPOP",
        "BRPOP",
        "BRPOPLPUSH",
        "BZMPOP",
        "BZPOPMAX",
        "BZPOPMIN",
        "MONITOR",
        "PSUBSCRIBE",
        "SUBSCRIBE",
        "WAIT",
        "WAITAOF",
        "XREAD",
        "XREADGROUP",
    }
)

_CLOSED = "Connection closed by server."


def _broken_reply(reply: Any) -> BaseException | None:
    """An error reply that means the connection is unusable (redis-py raises these)."""
    if isinstance(reply, RedisConnectionError):
        return reply
    if isinstance(reply, list) and reply and isinstance(reply[0], RedisConnectionError):
        return reply[0]
    return None


class _Replies(asyncio.Protocol):
    """The connection's protocol once set up: parses replies as they arrive."""

    def __init__(
        self,
        client: MultiplexedRedis,
        conn: AbstractConnection,
        transport: Any,
        parser: _AsyncHiredisParser,
    ) -> None:
        self.client = client
        self.conn = conn
        self.transport = transport
        self.parser = parser
        self.reader: Any = parser._reader  # the connection's hiredis.Reader
        self.push_type = parser._hiredis_PushNotificationType  # RESP3 out-of-band messages
        self.pushes: set[asyncio.Task[Any]] = set()
        self.pending: deque[asyncio.Future[Any]] = deque()
        self.lost = False
        # redis-py's own protocol still learns of the close: its writer's wait_closed() waits
        # for that.
        self.stream_protocol = transport.get_protocol()
        self.replied_at = 0.0  # loop time of the last reply (or of the wait's start)
        self.watchdog: asyncio.TimerHandle | None = None

    def data_received(self, data: bytes) -> None:
        reader = self.reader
        pending = self.pending
        reader.feed(data)
        if self.client._timeout is not None:
            self.replied_at = asyncio.get_running_loop().time()
        while True:
            try:
                reply = reader.gets()
            except Exception as error:  # not RESP: the stream cannot be trusted any more
                self.fail(error)
                return
            if reply is NOT_ENOUGH_DATA:
                return
            if self.push_type is not None and isinstance(reply, self.push_type):
                self.push(reply)
                continue
            broken = _broken_reply(reply)
            if broken is not None or not pending:
                self.fail(broken or InvalidResponse("A reply to no command"))
                return
            future = pending.popleft()
            if future.done():  # the caller was cancelled meanwhile
                continue
            if isinstance(reply, ResponseError):
                future.set_exception(reply)
            else:
                future.set_result(reply)

    def push(self, message: Any) -> None:
        # Not a reply: redis-py's handlers take it (invalidations, maintenance notices).
        task = asyncio.ensure_future(self.parser.handle_push_response(message))  # type: ignore[no-untyped-call]
        self.pushes.add(task)
        task.add_done_callback(self.pushes.discard)

    def fail(self, error: BaseException) -> None:
        """Fail what is in flight and close the connection."""
        self.lost = True
        _fail(self.pending, error)
        self.transport.close()

    def connection_lost(self, exc: Exception | None) -> None:
        self.lost = True
        if self.watchdog is not None:
            self.watchdog.cancel()
            self.watchdog = None
        error = RedisConnectionError(f"{_CLOSED} {exc}" if exc else _CLOSED)
        _fail(self.pending, error)
        self.stream_protocol.connection_lost(exc)

    def pause_writing(self) -> None:
        self.stream_protocol.pause_writing()

    def resume_writing(self) -> None:
        self.stream_protocol.resume_writing()

    # The socket timeout: a reply (or the first of a batch) must come within it.

    def arm(self, timeout: float) -> None:
        loop = asyncio.get_running_loop()
        if not self.pending:
            self.replied_at = loop.time()  # the wait starts now
        if self.watchdog is None:
            self.watchdog = loop.call_at(self.replied_at + timeout, self._check, timeout)

    def _check(self, timeout: float) -> None:
        self.watchdog = None
        if not self.pending or self.lost:
            return
        loop = asyncio.get_running_loop()
        deadline = self.replied_at + timeout
        if loop.time() < deadline:
            self.watchdog = loop.call_at(deadline, self._check, timeout)
            return
        host = getattr(self.conn, "host", "") or "Redis"
        self.fail(RedisTimeoutError(f"Timeout reading from {host}"))


def _retryable(error: Exception) -> bool:
    return not isinstance(error, WriteOutcomeUnknown)


async def _nothing(error: Exception) -> None:
    return None  # the next attempt reconnects


def _fail(pending: deque[asyncio.Future[Any]], error: BaseException) -> None:
    while pending:
        future = pending.popleft()
        if future.done():
            continue
        if isinstance(error, asyncio.CancelledError):
            future.cancel()
        else:
            future.set_exception(error)


class MultiplexedRedis(aioredis.Redis):
    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self._conn: AbstractConnection | None = None
        self._replies: _Replies | None = None  # when replies are parsed as they arrive
        self._connecting: asyncio.Future[AbstractConnection] | None = None
        self._pending: deque[asyncio.Future[Any]] = deque()  # for the reader task
        self._reader: asyncio.Task[None] | None = None
        timeout = self.connection_pool.connection_kwargs.get("socket_timeout")
        self._timeout: float | None = float(timeout) if timeout else None
        self._heal = read_retry()

    async def execute_command(self, *args: Any, **options: Any) -> Any:
        name = args[0]
        if (
            not isinstance(name, str)
            or name.upper() in BLOCKING
            or NEVER_DECODE in options
            or EMPTY_RESPONSE in options
        ):
            return await super().execute_command(*args, **options)  # type: ignore[no-untyped-call]
        try:
            return await self._multiplexed(args, options)
        except WriteOutcomeUnknown:
            raise
        except RedisConnectionError:
            # Not sent, or safe to send again: the rest of the attempts, with backoff.
            return await self._heal.call_with_retry(
                lambda: self._multiplexed(args, options), _nothing, is_retryable=_retryable
            )

    async def _multiplexed(self, args: tuple[Any, ...], options: dict[str, Any]) -> Any:
        name = args[0]
        replies = self._replies
        if replies is None or replies.lost:
            conn = self._conn
            if conn is None or not conn.is_connected or replies is not None:
                await self._connect()
            replies = self._replies
        future: asyncio.Future[Any] = asyncio.get_running_loop().create_future()
        if replies is not None:
            if replies.lost:  # lost again while connecting
                raise RedisConnectionError(_CLOSED)
            # Written at once, as Node's client does (Redis starts on it while this process
            # works on its other jobs), and queued with no await between: replies match.
            replies.transport.writelines(replies.conn.pack_command(*args))
            if self._timeout is not None:
                replies.arm(self._timeout)
            replies.pending.append(future)
        else:
            conn = self._conn
            writer = conn._writer if conn is not None else None
            if conn is None or writer is None:
                raise RedisConnectionError("Redis connection closed")
            writer.writelines(conn.pack_command(*args))
            self._pending.append(future)
            if self._reader is None:
                self._reader = asyncio.ensure_future(self._read(conn))
        try:
            reply = await future
        except BusyLoadingError:
            raise  # refused while Redis loads its data: not run
        except (RedisConnectionError, RedisTimeoutError) as error:
            if is_safe(args):
                raise
            raise WriteOutcomeUnknown(
                f"the connection to Redis broke after {name} was sent ({error})"
            ) from error
        callback = self.response_callbacks.get(name)
        if callback is not None:
            options.pop("keys", None)
            reply = callback(reply, **options)
            if inspect.isawaitable(reply):
                reply = await reply
        return reply

    async def _connect(self) -> AbstractConnection:
        if self._connecting is None:
            self._connecting = asyncio.ensure_future(self._open())
        try:
            return await asyncio.shield(self._connecting)
        finally:
            if self._connecting is not None and self._connecting.done():
                self._connecting = None

    async def _open(self) -> AbstractConnection:
        old, self._conn, self._replies = self._conn, None, None
        if old is not None:
            await old.disconnect(nowait=True)
        conn: AbstractConnection = self.connection_pool.make_connection()  # type: ignore[no-untyped-call]
        # AUTH, SELECT, CLIENT SETNAME; one attempt: execute_command retries with backoff.
        if isinstance(conn, SentinelManagedConnection):
            # To the master the sentinels name now (a failover moves it).
            address = await conn.connection_pool.get_master_address()
            await conn.connect_to(address)  # type: ignore[no-untyped-call]
        else:
            await conn.connect_check_health(check_health=True, retry_socket_connect=False)
        parser = conn._parser
        writer = conn._writer
        if (
            isinstance(parser, _AsyncHiredisParser)
            and parser._reader is not None
            and writer is not None
        ):
            transport = writer.transport
            replies = _Replies(self, conn, transport, parser)
            transport.set_protocol(replies)
            self._replies = replies
        self._conn = conn
        return conn

    async def _read(self, conn: AbstractConnection) -> None:
        try:
            while self._pending:
                try:
                    reply: Any = await conn.read_response()
                except ResponseError as error:
                    reply = error
                future = self._pending.popleft()
                if future.done():  # the caller was cancelled meanwhile
                    continue
                if isinstance(reply, ResponseError):
                    future.set_exception(reply)
                else:
                    future.set_result(reply)
        except BaseException as error:  # connection lost, client closed, cancelled
            pending, self._pending = self._pending, deque()
            _fail(pending, error)
            await conn.disconnect(nowait=True)
            if self._conn is conn:
                self._conn = None
            if not isinstance(error, Exception):
                raise
        finally:
            self._reader = None

    async def aclose(self, close_connection_pool: bool | None = None) -> None:
        conn, self._conn = self._conn, None
        replies, self._replies = self._replies, None
        if replies is not None:
            _fail(replies.pending, asyncio.CancelledError())
        if self._reader is not None:
            self._reader.cancel()
        if conn is not None:
            await conn.disconnect()
        await super().aclose(close_connection_pool)

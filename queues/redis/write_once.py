"""A Redis client for state changes: every write is sent at most once.

A write sent again after its connection broke may be applied twice (a job added twice, a
retry counted twice); not knowing is better than guessing. So this client

- makes sure of its connection *before* sending (connection_check.py), and retries that part
  with backoff: nothing has been sent yet, so nothing can be applied twice;
- sends a write once, and when the connection breaks after that, raises
  :class:`WriteOutcomeUnknown`: Redis may or may not have applied it, and only a look at the
  job or queue can tell;
- retries reads, and the bullmq package's read-only scripts, like the shared client does.

Its connections carry no retry policy of their own, so pipelines and transactions on it are
sent once too (a broken one raises redis-py's ``ConnectionError``).
"""

from __future__ import annotations

import hashlib
from collections.abc import Sequence
from functools import cache
from typing import Any

import redis.asyncio as aioredis
from bullmq.redis_connection import SCRIPT_DEFINITIONS, loadScript
from redis.asyncio.connection import AbstractConnection
from redis.asyncio.retry import Retry
from redis.backoff import NoBackoff
from redis.commands import READ_COMMANDS
from redis.exceptions import BusyLoadingError, NoPermissionError
from redis.exceptions import ConnectionError as RedisConnectionError
from redis.exceptions import TimeoutError as RedisTimeoutError

from queues.redis.clients import client_options, open_client, read_retry
from queues.redis.cluster import BullpenCluster
from queues.redis.pool_check import make_usable

# Commands that change nothing, so that sending them twice is harmless.
SAFE_COMMANDS = READ_COMMANDS | {
    "CLIENT GETNAME",
    "CLIENT LIST",
    "CLIENT SETNAME",
    "ECHO",
    "INFO",
    "PING",
    "SCRIPT EXISTS",
    "SCRIPT LOAD",
    "TIME",
}
# The bullmq package's scripts that only read.
READ_ONLY_SCRIPTS = (
    "getCounts",
    "getCountsPerPriority",
    "getJobs",
    "getJobScheduler",
    "getRanges",
    "getState",
    "getStateV2",
    "isJobInList",
)


class WriteOutcomeUnknown(RedisConnectionError):
    """The connection broke after a write was sent: Redis may or may not have applied it."""


@cache
def read_only_script_shas() -> frozenset[str]:
    return frozenset(
        hashlib.sha1(loadScript(SCRIPT_DEFINITIONS[name]).encode()).hexdigest()  # noqa: S324 - Redis names scripts by SHA-1
        for name in READ_ONLY_SCRIPTS
        if name in SCRIPT_DEFINITIONS
    )


def is_safe(args: Sequence[Any]) -> bool:
    """Whether the command may be sent again after its connection broke."""
    name = str(args[0]).upper()
    if name == "EVALSHA":
        return len(args) > 1 and str(args[1]) in read_only_script_shas()
    return name in SAFE_COMMANDS


class WriteOnceRedis(aioredis.Redis):
    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self.heal = read_retry()

    async def execute_command(self, *args: Any, **options: Any) -> Any:
        safe = is_safe(args)
        return await self.heal.call_with_retry(
            lambda: self._send_once(args, dict(options), safe),  # parsing pops options
            _nothing,
            is_retryable=lambda error: not isinstance(error, WriteOutcomeUnknown),
        )

    async def _send_once(self, args: Sequence[Any], options: dict[str, Any], safe: bool) -> Any:
        pool = self.connection_pool
        connection = await pool.get_connection()  # type: ignore[no-untyped-call]
        try:
            await make_usable(connection)
            try:
                await connection.send_packed_command(
                    connection.pack_command(*args), check_health=False
                )
                return await self.parse_response(connection, args[0], **options)
            except BusyLoadingError:
                raise  # Redis refused it while loading its data: nothing was applied
            except (RedisConnectionError, RedisTimeoutError) as error:
                await connection.disconnect(nowait=True)
                if safe:
                    raise
                raise WriteOutcomeUnknown(
                    f"the connection to Redis broke after the change was sent ({error})"
                ) from error
        finally:
            await pool.release(connection)


class WriteOnceCluster(BullpenCluster):
    """The same promise on a Redis Cluster: no command is sent again (the client's retry
    policy is none), and a change whose connection broke is reported as of unknown outcome.
    MOVED and ASK answers are followed: Redis refused those commands without applying them."""

    async def execute_command(self, *args: Any, **kwargs: Any) -> Any:
        try:
            return await super().execute_command(*args, **kwargs)
        except BusyLoadingError:
            raise
        except (RedisConnectionError, RedisTimeoutError) as error:
            if is_safe(args):
                raise
            if never_sent(error):
                raise RedisConnectionError(f"the change was not sent ({error})") from error
            raise WriteOutcomeUnknown(
                f"the connection to Redis broke after the change was sent ({error})"
            ) from error


def never_sent(error: BaseException) -> bool:
    """Whether ``error`` came from opening the connection, before any command was written to
    it: the node refused the connection (a master that is down), or did not answer the
    connect. redis-py raises those as ConnectionError / TimeoutError "… connecting to …"."""
    seen: BaseException | None = error
    while seen is not None:
        if isinstance(seen, ConnectionRefusedError):
            return True
        seen = seen.__cause__ or seen.__context__
    return "connecting to" in str(error)


async def _nothing(error: Exception) -> None:
    return None  # the connection was closed where it broke


# The name of its connections in ``CLIENT LIST``.
CLIENT_NAME = "bullpen-actions"


async def _set_up_named_if_allowed(connection: AbstractConnection) -> None:
    """redis-py's setup of a new connection (AUTH, SELECT, ...), named ``CLIENT_NAME`` unless
    the Redis user may not name connections (hosted Redis without CLIENT): then unnamed."""
    try:
        await connection.on_connect()  # type: ignore[no-untyped-call]
    except NoPermissionError:
        if not connection.client_name:
            raise
        connection.client_name = None
        await connection.on_connect()  # type: ignore[no-untyped-call]


def write_once_client(connection: str | None = None) -> WriteOnceRedis:
    """A client of ``connection``'s Redis (None: the default one) whose writes are sent at
    most once."""
    options = {
        **client_options(),
        "retry": Retry(NoBackoff(), 0),
        "client_name": CLIENT_NAME,
        "redis_connect_func": _set_up_named_if_allowed,
    }
    return open_client(WriteOnceRedis, options, WriteOnceCluster, connection)

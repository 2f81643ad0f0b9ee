"""Making a pooled connection fit to send on, before anything is sent on it.

After a Redis restart every pooled connection is dead, though nothing says so until it is used:
a command written to it is lost, and its caller cannot tell whether Redis ran it. So a
connection is checked when it is taken: one that Redis closed while it sat in the pool (its
stream saw the end) is reconnected, and one idle for a while is pinged (redis-py's health
check). A failure here means nothing was sent, so the caller may safely try again.
"""

from __future__ import annotations

from redis.asyncio.connection import AbstractConnection
from redis.exceptions import ConnectionError as RedisConnectionError


async def make_usable(connection: AbstractConnection) -> None:
    """Reconnect ``connection`` if Redis closed it, ping it if it has been idle.

    Raises redis-py's ``ConnectionError`` (or ``TimeoutError``) when Redis cannot be reached.
    """
    if connection.is_connected:
        try:
            # True at the end of the stream, or with bytes nobody asked for: unusable either way.
            stale = await connection.can_read()
        except (RedisConnectionError, OSError):
            stale = True
        if stale:
            await connection.disconnect(nowait=True)
    if not connection.is_connected:
        await connection.connect()  # type: ignore[no-untyped-call]
    await connection.check_health()  # type: ignore[no-untyped-call]

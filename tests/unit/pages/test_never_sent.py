"""A change is "not sent" only when its connection could not be opened."""

from __future__ import annotations

from redis.exceptions import ConnectionError as RedisConnectionError
from redis.exceptions import TimeoutError as RedisTimeoutError

from queues.redis.write_once import never_sent


def refused() -> RedisConnectionError:
    try:
        try:
            raise ConnectionRefusedError(111, "Connect call failed ('127.0.0.1', 1)")
        except OSError as error:
            raise RedisConnectionError("Error 111 connecting to 127.0.0.1:1.") from error
    except RedisConnectionError as wrapped:
        return wrapped


def test_a_refused_or_unanswered_connect_sent_nothing() -> None:
    assert never_sent(refused())
    assert never_sent(RedisTimeoutError("Timeout connecting to server"))


def test_a_connection_lost_after_sending_is_not_said_unsent() -> None:
    assert not never_sent(RedisConnectionError("Connection closed by server."))
    assert not never_sent(RedisTimeoutError("Timeout reading from 127.0.0.1:6379"))

"""Recording a finished job once Redis is back, instead of running it a second time.

A handler that finished while Redis was away has done its work (a webhook sent, an e-mail out).
If the call recording that (complete, fail, defer) fails, the job stays active until its lock
expires, and another worker then runs it again. So the call is retried with backoff for as long
as the job's lock lasts. Sending it again is safe: BullMQ's finishing scripts check the job's
lock token, so a call arriving after an earlier one landed finds the lock gone and is refused;
no job is finished twice.

A refusal after a failed attempt may mean that attempt did land (its reply was lost): the job's
state tells, and :class:`LandedEarlier` says so.
"""

from __future__ import annotations

import asyncio
from collections.abc import Awaitable, Callable, Container
from typing import TypeVar

from redis.backoff import ExponentialBackoff
from redis.exceptions import ConnectionError as RedisConnectionError
from redis.exceptions import TimeoutError as RedisTimeoutError

T = TypeVar("T")

# Redis being away: worth another attempt. (WriteOutcomeUnknown is a ConnectionError.)
AWAY = (RedisConnectionError, RedisTimeoutError, OSError)
BACKOFF = ExponentialBackoff(cap=2.0, base=0.05)


class LandedEarlier(Exception):
    """An earlier attempt of the call landed, though its answer was lost."""

    def __init__(self, state: str) -> None:
        super().__init__(f"an earlier attempt landed; the job is {state}")
        self.state = state


async def until_recorded(
    call: Callable[[], Awaitable[T]],
    lock_until: Callable[[], float],
    state: Callable[[], Awaitable[str]] | None = None,
    landed_states: Container[str] = (),
    *,
    failed: Exception | None = None,
) -> T:
    """``call()``, retried while Redis is away until ``lock_until()`` (loop time); ``failed``
    is the error of an attempt made already.

    If an attempt after a failed one is refused, ``state()`` is read: when it is one of
    ``landed_states``, :class:`LandedEarlier` is raised instead of the refusal.
    """
    loop = asyncio.get_running_loop()
    away = failed
    failures = 0 if failed is None else 1
    while True:
        if away is not None:
            wait = BACKOFF.compute(failures)
            if loop.time() + wait >= lock_until():
                raise away
            await asyncio.sleep(wait)
        try:
            return await call()
        except AWAY as error:
            away = error
            failures += 1
        except Exception:
            if failures and state is not None:
                found = await _state_or_none(state)
                if found is not None and found in landed_states:
                    raise LandedEarlier(found) from None
            raise


async def _state_or_none(state: Callable[[], Awaitable[str]]) -> str | None:
    try:
        return str(await state())
    except AWAY:
        return None

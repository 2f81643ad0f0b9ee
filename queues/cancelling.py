"""Cancelling a task so that it really ends.

On Python 3.11, ``asyncio.wait_for`` returns the inner result instead of raising when a cancel
lands just as the inner operation finishes (CPython gh-86296, fixed in 3.12). redis-py sends
every command through ``wait_for`` when the client has a socket timeout, so a task cancelled
while it talks to Redis can swallow the cancel and run on, and whoever awaits it waits
forever. Long-running loops therefore check for a cancel they never saw
(:func:`raise_if_cancelled`), and stoppers cancel again until the task has ended
(:func:`cancel_and_wait`).
"""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Coroutine
from typing import Any

log = logging.getLogger("bullpen")

# How long a stopper waits before cancelling again a task that swallowed the cancel.
RECANCEL_AFTER = 0.2


def raise_if_cancelled() -> None:
    """At the top of a long-running loop: end the task if a cancel was requested but
    swallowed on the way (the task is still marked as cancelling)."""
    task = asyncio.current_task()
    if task is not None and task.cancelling():
        raise asyncio.CancelledError


async def cancel_and_wait(*tasks: asyncio.Future[Any] | None) -> None:
    """Cancel ``tasks`` and wait until every one has ended, cancelling again any that ran on.

    An error a task ended with is logged, not raised: the caller is stopping it.
    """
    pending = {task for task in tasks if task is not None and not task.done()}
    ended = {task for task in tasks if task is not None and task.done()}
    while pending:
        for task in pending:
            task.cancel()
        done, pending = await asyncio.wait(pending, timeout=RECANCEL_AFTER)
        ended |= done
    for task in ended:
        if not task.cancelled() and task.exception() is not None:
            log.warning("a stopped task had failed", exc_info=task.exception())


# How long a stopped task's clean-up may take before it is given up (a Redis that stopped
# answering must not hold a stopper forever).
CLEANUP_MOST = 10.0


async def finish_despite_cancel(
    cleanup: Coroutine[Any, Any, None], most: float = CLEANUP_MOST
) -> None:
    """Run a stopping task's ``cleanup`` to its end although its stopper cancels it again
    meanwhile (:func:`cancel_and_wait` does, every ``RECANCEL_AFTER``): a clean-up cut short
    leaves its Redis connections open. At most ``most`` seconds; a cancel that came meanwhile
    is raised once it is done."""

    async def bounded() -> None:
        async with asyncio.timeout(most):
            await cleanup

    task = asyncio.ensure_future(bounded())
    cancelled = False
    while not task.done():
        try:
            await asyncio.shield(task)
        except asyncio.CancelledError:
            cancelled = True
    if cancelled:
        raise asyncio.CancelledError
    task.result()

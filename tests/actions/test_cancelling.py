"""Stopping tasks on a Python whose asyncio.wait_for can swallow a cancel (3.11, gh-86296).

redis-py sends commands through wait_for; a live follower stopped at that moment ran on, and
live.stop() (server shutdown, every test's teardown) waited for it forever.
"""

from __future__ import annotations

import asyncio
import sys
from typing import Any

import pytest

from dashboard.live import channel_groups
from dashboard.services import registry
from queues.cancelling import (
    RECANCEL_AFTER,
    cancel_and_wait,
    finish_despite_cancel,
    raise_if_cancelled,
)
from queues.live import follower as follower_module

SWALLOWS = sys.version_info < (3, 12)


async def swallowing_wait_for() -> int:
    """What redis-py's send does when a cancel lands as the write completes: the inner future
    finishes and the task is cancelled in the same loop pass, and wait_for returns 1."""
    loop = asyncio.get_running_loop()
    inner = loop.create_future()
    me = asyncio.current_task()
    assert me is not None

    def finish_and_cancel() -> None:
        inner.set_result(1)
        me.cancel()

    loop.call_soon(finish_and_cancel)
    return await asyncio.wait_for(inner, timeout=10)


@pytest.mark.skipif(not SWALLOWS, reason="wait_for keeps cancels from Python 3.12 on")
async def test_this_python_swallows_the_cancel() -> None:
    # The premise: without the guards below, such a task runs on after being cancelled.
    async def body() -> str:
        await swallowing_wait_for()
        await asyncio.sleep(0)
        return "ran on"

    task = asyncio.ensure_future(body())
    assert await task == "ran on"


async def test_a_loop_that_checks_ends_after_a_swallowed_cancel() -> None:
    passes = 0

    async def loop_forever() -> None:
        nonlocal passes
        while True:
            raise_if_cancelled()
            passes += 1
            if passes == 3:
                await swallowing_wait_for()
            await asyncio.sleep(0.01)

    task = asyncio.ensure_future(loop_forever())
    async with asyncio.timeout(5):
        with pytest.raises(asyncio.CancelledError):
            await task
    assert passes == 3


async def test_cancel_and_wait_cancels_again_until_the_task_ends() -> None:
    swallowed = 0

    async def stubborn() -> None:
        nonlocal swallowed
        while True:
            try:
                await asyncio.sleep(10)
            except asyncio.CancelledError:
                swallowed += 1
                if swallowed == 3:
                    raise

    task = asyncio.ensure_future(stubborn())
    await asyncio.sleep(0)
    async with asyncio.timeout(5):
        await cancel_and_wait(task, None)
    assert task.cancelled() and swallowed == 3


async def test_a_clean_up_runs_to_its_end_while_its_stopper_cancels_again() -> None:
    # A task whose clean-up outlasts the stopper's re-cancels (every RECANCEL_AFTER) still
    # closes what it opened, and ends cancelled.
    closed: list[str] = []

    async def slow_close(name: str) -> None:
        await asyncio.sleep(RECANCEL_AFTER * 1.5)
        closed.append(name)

    async def clean_up() -> None:
        await slow_close("reader")
        await slow_close("probe")

    async def runs() -> None:
        try:
            await asyncio.sleep(10)
        finally:
            await finish_despite_cancel(clean_up())

    task = asyncio.ensure_future(runs())
    await asyncio.sleep(0)
    async with asyncio.timeout(5):
        await cancel_and_wait(task)
    assert task.cancelled() and closed == ["reader", "probe"]


async def test_a_clean_up_that_hangs_is_given_up_after_its_bound() -> None:
    async def hangs() -> None:
        await asyncio.sleep(10)

    with pytest.raises(TimeoutError):
        await finish_despite_cancel(hangs(), most=0.05)


async def test_cancel_and_wait_reports_a_failed_task_without_raising(
    caplog: pytest.LogCaptureFixture,
) -> None:
    async def fails() -> None:
        raise ValueError("broken")

    task = asyncio.ensure_future(fails())
    await asyncio.sleep(0)
    await cancel_and_wait(task)
    assert "a stopped task had failed" in caplog.text and "broken" in caplog.text


async def test_live_stop_ends_a_follower_that_swallows_the_stop(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    # The follower is inside a wait_for (as in redis-py's send) whose inner operation finishes
    # in the same loop pass as stop()'s cancel: wait_for returns and the cancel is lost.
    inside = asyncio.Event()
    send_done = asyncio.get_running_loop().create_future()
    original = follower_module.Follower._housekeep

    async def housekeep_and_send(self: Any) -> None:
        await original(self)
        if not send_done.done():
            inside.set()
            await asyncio.wait_for(send_done, timeout=10)

    monkeypatch.setattr(follower_module.Follower, "_housekeep", housekeep_and_send)
    channel_groups.ensure_started()
    follower_task = registry.task_of(channel_groups.LIVE_READER)
    async with asyncio.timeout(10):
        await inside.wait()
    send_done.set_result(None)
    stopping = asyncio.ensure_future(channel_groups.stop())
    done, _ = await asyncio.wait({stopping}, timeout=5)
    assert stopping in done and follower_task.done(), "live.stop() still waits for the follower"
    stopping.result()

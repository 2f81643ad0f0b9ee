"""Which coroutines hold the event loop, and for how long, while something is timed.

``LoopHogs.install()`` wraps ``asyncio.Handle._run`` (every callback the loop runs: a task's
step between two awaits, a timer, a reader's callback) and, while ``recording``, adds up each
step's time by the coroutine it ran, keeping the longest. A view that waits behind another
task's long step shows it here; a view that is slow on its own shows its own coroutine.
For benches only: the wrapper costs a ``perf_counter`` pair a step.
"""

from __future__ import annotations

import asyncio
import time
from collections.abc import Callable
from typing import Any

_run: Callable[[asyncio.Handle], None] = asyncio.Handle._run  # type: ignore[attr-defined]


def _name_of(handle: asyncio.Handle) -> str:
    callback = getattr(handle, "_callback", None)
    task = getattr(callback, "__self__", None)
    if isinstance(task, asyncio.Task):
        # The task's outer coroutines (whose work it is) and the innermost one awaited.
        coro: Any = task.get_coro()
        chain = [getattr(coro, "__qualname__", repr(coro))]
        while getattr(coro, "cr_await", None) is not None and hasattr(coro.cr_await, "cr_code"):
            coro = coro.cr_await
            chain.append(coro.__qualname__)
        return " > ".join(chain[:3] + (["…", chain[-1]] if len(chain) > 3 else []))
    return getattr(callback, "__qualname__", repr(callback))


class LoopHogs:
    recording = False
    total: dict[str, float] = {}
    longest: dict[str, float] = {}
    steps = 0

    @classmethod
    def install(cls) -> None:
        def timed(handle: asyncio.Handle) -> None:
            if not cls.recording:
                _run(handle)
                return
            name = _name_of(handle)  # before the step: where it resumes
            began = time.perf_counter()
            try:
                _run(handle)
            finally:
                spent = time.perf_counter() - began
                cls.steps += 1
                cls.total[name] = cls.total.get(name, 0.0) + spent
                cls.longest[name] = max(cls.longest.get(name, 0.0), spent)

        asyncio.Handle._run = timed  # type: ignore[method-assign]

    @classmethod
    def start(cls) -> None:
        cls.total, cls.longest, cls.steps = {}, {}, 0
        cls.recording = True

    @classmethod
    def report(cls, top: int = 5) -> str:
        """The ``top`` coroutines by time held, with their longest step (ms)."""
        cls.recording = False
        ranked = sorted(cls.total.items(), key=lambda kv: -kv[1])[:top]
        return "; ".join(
            f"{name} {spent * 1000:,.0f} ms (longest {cls.longest[name] * 1000:,.0f})"
            for name, spent in ranked
        )

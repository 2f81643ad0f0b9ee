"""Graceful shutdown on SIGTERM / SIGINT.

The first signal drains: workers stop taking jobs, in-flight jobs run to their end for up to
``BULLPEN["WORKER"]["shutdown_timeout"]`` seconds (30), then the workers, the queues and the
connection close, in that order. Jobs still running at the deadline are abandoned: they stay
active in Redis and another worker recovers them as stalled once their lock expires. A second
signal abandons at once.
"""

from __future__ import annotations

import asyncio
import signal
from collections.abc import Iterable

from queues.runner.json_logs import log_event
from queues.runner.worker import RunnerWorker

SIGNALS = (signal.SIGTERM, signal.SIGINT)


class StopSignals:
    def __init__(self) -> None:
        self.stop = asyncio.Event()
        self.force = asyncio.Event()
        self._loop: asyncio.AbstractEventLoop | None = None

    def install(self) -> None:
        self._loop = asyncio.get_running_loop()
        for sig in SIGNALS:
            self._loop.add_signal_handler(sig, self._received, sig)

    def uninstall(self) -> None:
        if self._loop is not None:
            for sig in SIGNALS:
                self._loop.remove_signal_handler(sig)

    def _received(self, sig: signal.Signals) -> None:
        if self.stop.is_set():
            log_event("force-stop", signal=sig.name)
            self.force.set()
        else:
            log_event("stop", signal=sig.name)
            self.stop.set()


async def drain_workers(
    workers: Iterable[RunnerWorker], grace_s: float, force: asyncio.Event | None = None
) -> list[str]:
    """Drain every worker against one deadline; returns the abandoned job ids."""
    deadline = asyncio.get_running_loop().time() + grace_s
    results = await asyncio.gather(*(worker.drain(deadline, force) for worker in workers))
    return [job_id for abandoned in results for job_id in abandoned]


async def close_workers(workers: Iterable[RunnerWorker]) -> None:
    await asyncio.gather(*(worker.shut() for worker in workers))

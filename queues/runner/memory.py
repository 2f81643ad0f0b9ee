"""Recycling a worker process whose memory only grows (a leaking handler or library).

With ``max_memory_mb`` set, the runner reads its process's resident memory (RSS) every
``CHECK_EVERY_S`` seconds; once it exceeds the ceiling the runner stops taking jobs, drains
as on SIGTERM (in-flight jobs run to their end, within ``shutdown_timeout``) and
``manage.py runqueueworker`` exits with ``EXIT_OVER_MEMORY``, for a supervisor to start a
fresh process. Linux's current RSS is read from ``/proc``; elsewhere the process's peak RSS
stands in for it (a recycle may then follow a spike that has passed).
"""

from __future__ import annotations

import asyncio
import os
import resource
import sys

from queues.runner.json_logs import log_event

# sysexits.h's EX_TEMPFAIL: "try again later", distinct from a crash (1) and a clean stop (0).
EXIT_OVER_MEMORY = 75
CHECK_EVERY_S = 1.0


def rss_mb() -> float:
    """This process's resident memory in MiB."""
    try:
        with open("/proc/self/statm", encoding="ascii") as statm:
            pages = int(statm.read().split()[1])
        return pages * os.sysconf("SC_PAGE_SIZE") / 2**20
    except (OSError, ValueError, IndexError):
        peak = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
        return peak / 2**20 if sys.platform == "darwin" else peak / 2**10  # bytes or KiB


async def watch(max_mb: float, over: asyncio.Event, every_s: float = CHECK_EVERY_S) -> None:
    """Set ``over`` once the process's memory exceeds ``max_mb``."""
    while True:
        used = rss_mb()
        if used > max_mb:
            log_event("over-memory", rss_mb=round(used, 1), max_memory_mb=max_mb)
            over.set()
            return
        await asyncio.sleep(every_s)

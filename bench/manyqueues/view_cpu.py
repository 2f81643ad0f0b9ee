#!/usr/bin/env python3
"""The Python of one ``api/queues/`` view over many queues, with every count known in advance.

Run from the repository root (or another checkout's, to compare) with the project's virtualenv,
against a Redis seeded by ``bench/node/seed_many.mjs`` (only its queue list is read, once)::

    REDIS_URL=redis://127.0.0.1:6961/0 ./.venv/bin/python bench/manyqueues/view_cpu.py

Each queue's summary is made once and handed to every view as the live reader hands them (the
same objects while counts stay), so what is timed is a view's own work: taking the summaries,
the queues' JSON, filter, order, totals and the page. ``--changes N``: before each view, N
queues' summaries are made anew with other counts, as the reader hands them when jobs move.
Prints the CPU time (``process_time``) and wall time of each view and their median.
"""

from __future__ import annotations

import argparse
import asyncio
import os
import random
import statistics
import sys
import time
from typing import Any

sys.path.insert(0, os.getcwd())
os.environ.setdefault("DJANGO_SETTINGS_MODULE", "bullpen_site.settings")

import django

django.setup()

from dashboard.api.reads import queues_body  # noqa: E402
from dashboard.pages import overview_page  # noqa: E402
from queues.reads.counts import QueueSummary  # noqa: E402
from queues.reads.discovery import discovered  # noqa: E402
from queues.reads.keys import STATES, QueueRef  # noqa: E402


class Known:
    """Stands for the reader's counts: every queue's summary, the same objects each view."""

    made: dict[QueueRef, QueueSummary] = {}

    def __call__(self, refs: list[QueueRef]) -> dict[QueueRef, QueueSummary]:
        made = self.made
        return {ref: made[ref] for ref in refs if ref in made}

    def still(self, ref: QueueRef) -> None:
        return None

    version = "bench:1"


async def main() -> int:
    ap = argparse.ArgumentParser(description=(__doc__ or "").split("\n\n")[0])
    ap.add_argument("--views", type=int, default=5)
    ap.add_argument("--query", default="", help="the API's query string, e.g. sort=-failed")
    ap.add_argument("--changes", type=int, default=0, help="queues whose counts move each view")
    args = ap.parse_args()
    refs = list((await discovered()).queues)
    for n, ref in enumerate(refs):
        counts = {state: (n * 7 + i) % 5 for i, state in enumerate(STATES)}
        Known.made[ref] = QueueSummary(ref, counts, n % 200 == 0, None, None, "bullmq:6")
    overview_page.ReaderCounts = Known  # type: ignore[misc,assignment]
    query: dict[str, Any] = dict(
        pair.split("=", 1) for pair in args.query.split("&") if "=" in pair
    )
    cpu, wall = [], []
    rng = random.Random(1)
    for view in range(args.views):
        for ref in rng.sample(refs, min(args.changes, len(refs))):
            counts = {state: (view + n) % 7 for n, state in enumerate(STATES)}
            Known.made[ref] = QueueSummary(ref, counts, False, None, None, "bullmq:6")
        c0, w0 = time.process_time(), time.perf_counter()
        body = await queues_body(query)
        cpu.append((time.process_time() - c0) * 1000)
        wall.append((time.perf_counter() - w0) * 1000)
        print(
            f"view: {len(body['queues'])} rows of {body['total']:,} queues, "
            f"CPU {cpu[-1]:,.0f} ms, wall {wall[-1]:,.0f} ms",
            flush=True,
        )
    print(
        f"median of {args.views}: CPU {statistics.median(cpu):,.0f} ms, "
        f"wall {statistics.median(wall):,.0f} ms ({len(refs):,} queues)"
    )
    return 0


if __name__ == "__main__":
    sys.exit(asyncio.run(main()))

#!/usr/bin/env python3
"""The steps of one ``api/queues/`` view served from a live reader in the same process.

Run from the repository root (or another checkout's, to compare) with the project's virtualenv,
against a Redis seeded by ``bench/node/seed_many.mjs``::

    REDIS_URL=redis://127.0.0.1:6961/0 ./.venv/bin/python bench/manyqueues/view_steps.py

Starts the reader with an overview watched and waits until it vouches for every queue's
counts, then ``--views`` times, a second apart, takes a view's steps one by one and prints the
CPU time (``process_time``) of each: the queue list (discovery), the reader's hand-over of
every queue's summary, whether it came in the list's order (a view then takes it without a
look-up a queue), the summaries as a view takes them (the hand-over again, and the reads of
the queues it did not vouch for), the kept list's update and the page. The steps without an
await (the hand-over, the order, the kept list, the page) are the view's own; the others may
include the reader's work done meanwhile.
"""

from __future__ import annotations

import argparse
import asyncio
import os
import sys
import time

sys.path.insert(0, os.getcwd())
os.environ.setdefault("DJANGO_SETTINGS_MODULE", "bullpen_site.settings")

import django

django.setup()

from reader_views import reader_vouching  # noqa: E402

from dashboard.live import channel_groups  # noqa: E402
from dashboard.live.reader_counts import ReaderCounts  # noqa: E402
from dashboard.pages import overview_page  # noqa: E402
from dashboard.pages.overview_ledger import ViewFacts  # noqa: E402
from dashboard.pages.overview_list import ListQuery  # noqa: E402
from queues.reads.counts import summaries  # noqa: E402
from queues.reads.discovery import discovered  # noqa: E402


async def run(args: argparse.Namespace) -> None:
    await reader_vouching(args.wait)
    for _ in range(args.views):
        steps: list[tuple[str, float]] = [("", time.process_time())]

        def step(label: str, into: list[tuple[str, float]] = steps) -> None:
            into.append((label, time.process_time()))

        every = list((await discovered()).queues)
        step("queue list")
        have = ReaderCounts()(every)
        step(f"hand-over ({len(have):,})")
        in_order = len(have) == len(every) and all(a is b for a, b in zip(have, every, strict=True))
        step(f"in order: {in_order}")
        found = await summaries(known=ReaderCounts())
        step("summaries")
        overview_page._ledger.update(found)
        step("kept list")
        overview_page._ledger.listing(ListQuery(), ViewFacts())
        step("page")
        print(" | ".join(f"{label} {(at - steps[n][1]) * 1000:,.0f} ms"
                         for n, (label, at) in enumerate(steps[1:])), flush=True)  # fmt: skip
        await asyncio.sleep(1)
    await channel_groups.stop()


def main() -> int:
    ap = argparse.ArgumentParser(description=(__doc__ or "").split("\n\n")[0])
    ap.add_argument("--views", type=int, default=6, help="views taken apart (default 6)")
    ap.add_argument("--wait", type=float, default=900, help="seconds to wait for the reader")
    asyncio.run(run(ap.parse_args()))
    return 0


if __name__ == "__main__":
    sys.exit(main())

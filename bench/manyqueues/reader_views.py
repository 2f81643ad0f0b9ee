#!/usr/bin/env python3
"""Views of the overview served from a live reader in the same process, over many queues.

Run from the repository root with the project's virtualenv, against a Redis seeded by
``bench/node/seed_many.mjs``::

    REDIS_URL=redis://127.0.0.1:6961/0 ./.venv/bin/python bench/manyqueues/reader_views.py
    REDIS_URL=... ./.venv/bin/python bench/manyqueues/reader_views.py --read-share 2000

Starts the reader with an overview watched, waits until it vouches for every queue's counts,
then times ``--views`` views each of ``api/queues/`` (100 a page, ``sort=-failed``,
``problems=1``, then 500 a page) and of the page's listing (``read_listing`` with alerts,
workers, stuck jobs and sparklines, not rendered): wall time, the process's CPU time (the
reader's included) and whether the reader vouched. ``--idle S``: first, Redis's commands a
minute over S seconds with nothing happening (the reader's own cost). ``--hogs N``: after
each view, the N coroutines that held the event loop longest meanwhile (loop_hogs.py). Then
samples the reader's stream rounds once a second.
"""

from __future__ import annotations

import argparse
import asyncio
import os
import sys
import time
from collections.abc import Awaitable, Callable
from typing import Any

sys.path.insert(0, os.getcwd())
os.environ.setdefault("DJANGO_SETTINGS_MODULE", "bullpen_site.settings")

import django

django.setup()

from django.conf import settings  # noqa: E402
from django.test import override_settings  # noqa: E402

from dashboard.api.reads import queues_body  # noqa: E402
from dashboard.live import channel_groups  # noqa: E402
from dashboard.pages.overview_list import ListQuery  # noqa: E402
from dashboard.pages.overview_page import read_listing  # noqa: E402
from queues.reads.discovery import discovered  # noqa: E402
from queues.redis.clients import get_client  # noqa: E402

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from loop_hogs import LoopHogs  # noqa: E402


async def reader_vouching(wait: float) -> tuple[Any, list[Any]]:
    """The in-process reader, started watching the overview, and every queue, once it vouches
    for all of them (or after ``wait`` s); says how long that took."""
    channel_groups.interest().watch_overview()
    follower = channel_groups.ensure_started()
    refs = list((await discovered()).queues)
    began = time.monotonic()
    while time.monotonic() - began < wait:
        known, version = follower.known_summaries(refs)
        if version is not None and len(known) == len(refs):
            break
        await asyncio.sleep(1)
    print(f"the reader vouches for {len(known):,} of {len(refs):,} queues after "
          f"{time.monotonic() - began:.0f} s", flush=True)  # fmt: skip
    return follower, refs


async def run(args: argparse.Namespace) -> None:
    follower, refs = await reader_vouching(args.wait)
    if args.idle:
        client = get_client()

        async def calls() -> int:
            stats = await client.info("commandstats")
            return sum(int(v["calls"]) for k, v in stats.items() if k != "cmdstat_info")

        before = await calls()
        await asyncio.sleep(args.idle)
        per_minute = (await calls() - before) * 60 / args.idle
        print(f"Redis commands while nothing happens: {per_minute:,.0f} a minute", flush=True)
    views: list[tuple[str, Callable[[], Awaitable[Any]]]] = [
        ("api/queues/", lambda: queues_body({})),
        ("api/queues/?sort=-failed", lambda: queues_body({"sort": "-failed"})),
        ("api/queues/?problems=1", lambda: queues_body({"problems": "1"})),
        ("api/queues/?per_page=500", lambda: queues_body({"per_page": "500"})),
        ("the page's listing, 500 rows", lambda: read_listing(ListQuery(per_page=500))),
    ]
    if args.api_only:
        views = views[:3]  # api/queues/ at 100 a page: by name, by failed, problems only
    for label, view in views:
        for _ in range(args.views):
            vouched = follower.known_summaries(refs[:1])[1] is not None
            LoopHogs.start()
            cpu, wall = time.process_time(), time.perf_counter()
            await view()
            cpu, wall = time.process_time() - cpu, time.perf_counter() - wall
            hogs = LoopHogs.report(args.hogs)
            print(f"{label}: wall {wall * 1000:,.0f} ms, CPU {cpu * 1000:,.0f} ms, "
                  f"reader vouched: {vouched}", flush=True)  # fmt: skip
            if args.hogs:
                print(f"  the loop held by: {hogs}", flush=True)
            await asyncio.sleep(1)
    rounds, current = [], 0
    for _ in range(args.samples):
        await asyncio.sleep(1)
        rounds.append(follower.streams.read_time)
        current += follower.current
    rounds.sort()
    print(f"stream rounds ({follower.streams.shares} shares), sampled {len(rounds)} times: "
          f"{rounds[0]:.2f}-{rounds[-1]:.2f} s, median {rounds[len(rounds) // 2]:.2f} s; "
          f"current {current} of {len(rounds)}", flush=True)  # fmt: skip
    await channel_groups.stop()


def main() -> int:
    ap = argparse.ArgumentParser(description=(__doc__ or "").split("\n\n")[0])
    ap.add_argument("--views", type=int, default=4, help="views of each kind (default 4)")
    ap.add_argument("--read-share", type=int, help="LIVE read_share (default: the setting's)")
    ap.add_argument("--wait", type=float, default=600, help="seconds to wait for the reader")
    ap.add_argument("--samples", type=int, default=10, help="stream rounds sampled")
    ap.add_argument(
        "--api-only", action="store_true", help="only api/queues/ at 100 a page (3 orders)"
    )
    ap.add_argument("--idle", type=float, default=0, help="seconds Redis's commands are counted")
    ap.add_argument("--hogs", type=int, default=0, help="coroutines that held the loop, shown")
    args = ap.parse_args()
    bullpen = dict(getattr(settings, "BULLPEN", {}) or {})
    if args.read_share:
        bullpen["LIVE"] = {**bullpen.get("LIVE", {}), "read_share": args.read_share}
    if args.hogs:
        LoopHogs.install()
    with override_settings(BULLPEN=bullpen):
        asyncio.run(run(args))
    return 0


if __name__ == "__main__":
    sys.exit(main())

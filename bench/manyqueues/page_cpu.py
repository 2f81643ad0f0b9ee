#!/usr/bin/env python3
"""Where the server's time goes in one ``GET /queues/`` (the whole HTML page) served from a live
reader in the same process, over many queues.

Run from the repository root (or another checkout's, to compare) with the project's virtualenv,
against a Redis seeded by ``bench/node/seed_many.mjs``::

    REDIS_URL=redis://127.0.0.1:6961/0 ./.venv/bin/python bench/manyqueues/page_cpu.py
    REDIS_URL=... ./.venv/bin/python bench/manyqueues/page_cpu.py --profile 25

Starts the reader with an overview watched and waits until it vouches for every queue's counts,
as a served page finds it; then requests the page ``--views`` times through Django's whole
handler (middleware, view, templates) and prints each request's CPU time (``process_time``, the
reader's work meanwhile included), wall time and HTML bytes, then their medians.

``--renders N``: the last page's templates rendered N times more from its context, their
CPU alone. ``--hogs N``: after each request, the N coroutines that held the event loop longest
meanwhile (loop_hogs.py): the request's own steps and the reader's. ``--profile N``: one more
request under cProfile, its N costliest functions by their own time and by cumulative time
(``--stats FILE``: the whole profile, for ``pstats``). ``--html FILE``: the last page's HTML
(to compare two trees' pages for one Redis state).
"""

from __future__ import annotations

import argparse
import asyncio
import cProfile
import io
import os
import pstats
import statistics
import sys
import time
from pathlib import Path
from typing import Any

sys.path.insert(0, os.getcwd())
os.environ.setdefault("DJANGO_SETTINGS_MODULE", "bullpen_site.settings")
# Django's test client names its host "testserver".
os.environ["ALLOWED_HOSTS"] = "testserver"

import django

django.setup()

from django.test import AsyncClient  # noqa: E402
from django.utils import translation  # noqa: E402

from dashboard.live import channel_groups  # noqa: E402
from dashboard.pages import views  # noqa: E402
from queues.reads.discovery import discovered  # noqa: E402

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from loop_hogs import LoopHogs  # noqa: E402

# The last page's render (request, template, context), made again by ``--renders``.
rendered: list[Any] = []
_render = views.render


def _kept_render(request: Any, template: str, context: Any, *rest: Any, **kw: Any) -> Any:
    rendered[:] = [request, template, context]
    return _render(request, template, context, *rest, **kw)


def renders(times: int) -> None:
    """The last page's templates rendered again ``times`` times, from its own context: their
    CPU alone (the reader cannot run during a render, which never awaits)."""
    request, template, context = rendered
    cpu = []
    for _ in range(times):
        c0 = time.process_time()
        _render(request, template, context)
        cpu.append((time.process_time() - c0) * 1000)
    print(f"the page's render, {times} times: CPU min {min(cpu):,.1f} ms, median "
          f"{statistics.median(cpu):,.1f} ms", flush=True)  # fmt: skip


async def run(args: argparse.Namespace) -> bytes:
    channel_groups.interest().watch_overview()
    follower = channel_groups.ensure_started()
    refs = list((await discovered()).queues)
    began = time.monotonic()
    known: dict[object, object] = {}
    while time.monotonic() - began < args.wait:
        known, version = follower.known_summaries(refs)  # type: ignore[assignment]
        if version is not None and len(known) == len(refs):
            break
        await asyncio.sleep(1)
    print(f"the reader vouches for {len(known):,} of {len(refs):,} queues after "
          f"{time.monotonic() - began:.0f} s", flush=True)  # fmt: skip
    await asyncio.sleep(args.settle)
    client = AsyncClient()
    cpu, wall = [], []
    html = b""
    for _ in range(args.views):
        vouched = follower.known_summaries(refs[:1])[1] is not None
        LoopHogs.start()
        c0, w0 = time.process_time(), time.perf_counter()
        answer = await client.get(args.path)
        cpu.append((time.process_time() - c0) * 1000)
        wall.append((time.perf_counter() - w0) * 1000)
        hogs = LoopHogs.report(args.hogs)
        html = answer.content
        print(f"GET {args.path}: {answer.status_code}, CPU {cpu[-1]:,.0f} ms, wall "
              f"{wall[-1]:,.0f} ms, {len(html):,} bytes, reader vouched: {vouched}",
              flush=True)  # fmt: skip
        if args.hogs:
            print(f"  the loop held by: {hogs}", flush=True)
        await asyncio.sleep(args.pause)
    print(f"median of {args.views}: CPU {statistics.median(cpu):,.0f} ms, wall "
          f"{statistics.median(wall):,.0f} ms ({len(refs):,} queues)", flush=True)  # fmt: skip
    if args.renders:
        with translation.override(answer.headers.get("Content-Language", "en")):
            renders(args.renders)
    if args.profile:
        profile = cProfile.Profile()
        profile.enable()
        await client.get(args.path)
        profile.disable()
        if args.stats:
            profile.dump_stats(args.stats)
        for order in ("tottime", "cumulative"):
            out = io.StringIO()
            pstats.Stats(profile, stream=out).sort_stats(order).print_stats(args.profile)
            print(out.getvalue(), flush=True)
    await channel_groups.stop()
    return html


def main() -> int:
    ap = argparse.ArgumentParser(description=(__doc__ or "").split("\n\n")[0])
    ap.add_argument("--path", default="/queues/", help="the page requested (default /queues/)")
    ap.add_argument("--views", type=int, default=5, help="requests timed (default 5)")
    ap.add_argument("--wait", type=float, default=600, help="seconds to wait for the reader")
    ap.add_argument("--settle", type=float, default=5, help="seconds after it vouches")
    ap.add_argument("--pause", type=float, default=1, help="seconds between requests")
    ap.add_argument("--profile", type=int, default=0, help="functions shown of a profiled one")
    ap.add_argument("--renders", type=int, default=0, help="times the last page is rendered")
    ap.add_argument("--hogs", type=int, default=0, help="coroutines that held the loop, shown")
    ap.add_argument("--stats", help="write the profiled request's statistics to this file")
    ap.add_argument("--html", help="write the last page's HTML to this file")
    args = ap.parse_args()
    if args.hogs:
        LoopHogs.install()
    views.render = _kept_render  # type: ignore[assignment]
    html = asyncio.run(run(args))
    if args.html:
        Path(args.html).write_bytes(html)
    return 0


if __name__ == "__main__":
    sys.exit(main())

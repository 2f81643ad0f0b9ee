#!/usr/bin/env python3
"""What a failed tab's failure groups cost with many failed jobs, and what the page waits.

Run from the repository root with the project's virtualenv::

    ./.venv/bin/python bench/triage/groups_bench.py                  # 10,000 failed jobs
    ./.venv/bin/python bench/triage/groups_bench.py --failed 50000   # past the scan's budget

Starts a throw-away ``redis-server``, fills one queue's failed set with Node BullMQ
(``bench/node/seed_failed.mjs``: every job fails from its worker, with a real stacktrace), then
measures in this process, as a server runs them:

* a scan (``failure_groups``, ``FAILURE_GROUP_BUDGET`` newest failed jobs) and the report the
  pages share (the scan plus its trends, ``shared_failure_groups``) when none is cached;
* the shared report when cached (one ``ZCARD``): what most page loads pay;
* rendering the groups' partial (``_groups.html``);
* what the queue page's failed tab waits for them (``groups_in_time``), with nothing cached
  (bounded by ``FAILURE_GROUPS_WAIT``) and with the report cached.

Each figure is the median and the slowest of its runs, in milliseconds.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import statistics
import subprocess
import sys
import tempfile
import time
from collections.abc import Awaitable, Callable
from pathlib import Path
from typing import Any

import django
from django.conf import settings

ROOT = Path(__file__).resolve().parent.parent.parent
sys.path.insert(0, str(ROOT))  # run as a script: the repository's packages
from bench.support import start_redis  # noqa: E402

NODE_DIR = ROOT / "bench" / "node"
QUEUE = "bench-groups"


def _urls() -> list[Any]:
    from django.urls import include, path

    return [path("queues/", include("dashboard.urls"))]


def __getattr__(name: str) -> Any:
    # Django asks this module for its routes once settings are made (ROOT_URLCONF).
    if name == "urlpatterns":
        return _urls()
    raise AttributeError(name)


def seed(url: str, failed: int) -> dict[str, Any]:
    if not (NODE_DIR / "node_modules" / "bullmq").exists():
        subprocess.run(["npm", "ci", "--no-audit", "--no-fund"], cwd=NODE_DIR, check=True)
    out = subprocess.run(
        ["node", "seed_failed.mjs", "--redis", url, "--queue", QUEUE, "--count", str(failed)],
        cwd=NODE_DIR,
        check=True,
        capture_output=True,
        text=True,
    )
    summary: dict[str, Any] = json.loads(out.stdout)
    return summary


async def timed(runs: int, step: Callable[[], Awaitable[Any]]) -> tuple[float, float]:
    """Median and slowest of ``runs`` runs of ``step``, in ms."""
    took = []
    for _ in range(runs):
        began = time.perf_counter()
        await step()
        took.append((time.perf_counter() - began) * 1000)
    return statistics.median(took), max(took)


async def measure(runs: int) -> list[tuple[str, float, float, str]]:
    from django.template.loader import render_to_string

    from dashboard.pages.triage import groups_in_time
    from queues.failures import failure_groups as groups
    from queues.reads.keys import QueueRef
    from queues.redis.clients import close_current

    ref = QueueRef("bull", QUEUE)
    rows: list[tuple[str, float, float, str]] = []
    try:
        report = await groups.shared_failure_groups(ref)
        note = f"{len(report.groups)} groups of {report.scanned:,} scanned"
        rows.append(("scan", *await timed(runs, lambda: groups.failure_groups(ref)), note))

        async def uncached() -> Any:
            groups.reset_shared()
            return await groups.shared_failure_groups(ref)

        rows.append(
            ("shared report, none cached (scan + trends)", *await timed(runs, uncached), "")
        )
        await groups.shared_failure_groups(ref)
        cached = await timed(runs * 10, lambda: groups.shared_failure_groups(ref))
        rows.append(("shared report, cached", *cached, "one ZCARD"))

        async def render() -> str:
            context = {"report": report, "queue": {"slug": ref.slug}, "can_act": True}
            return render_to_string("bullpen/_groups.html", context)

        rows.append(("render _groups.html", *await timed(runs * 4, render), ""))

        cold_waits = []
        in_time = 0
        for _ in range(runs):
            groups.reset_shared()
            start = time.perf_counter()
            shown = await groups_in_time(ref)
            cold_waits.append((time.perf_counter() - start) * 1000)
            in_time += shown is not None
            await groups.shared_failure_groups(ref)  # the fold's request: the scan ends
        wait_s = settings.BULLPEN["FAILURE_GROUPS_WAIT"]
        rows.append(
            (
                f"page waits, none cached (FAILURE_GROUPS_WAIT {wait_s} s)",
                statistics.median(cold_waits),
                max(cold_waits),
                f"with the page {in_time} of {runs} times",
            )
        )
        await groups.shared_failure_groups(ref)
        came: list[bool] = []

        async def cached_wait() -> None:
            came.append(await groups_in_time(ref) is not None)

        warm = await timed(runs * 10, cached_wait)
        rows.append(
            ("page waits, cached", *warm, f"with the page {sum(came)} of {len(came)} times")
        )
    finally:
        await close_current()
    return rows


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--failed", type=int, default=10_000, help="failed jobs in the queue")
    parser.add_argument("--runs", type=int, default=5)
    parser.add_argument("--wait", type=float, default=0.25, help="FAILURE_GROUPS_WAIT, seconds")
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        proc, url = start_redis(Path(tmp))
        try:
            seeded = seed(url, args.failed)
            print(f"Seeded {args.failed:,} failed jobs: {json.dumps(seeded.get('counts', {}))}")
            settings.configure(
                INSTALLED_APPS=[
                    "django.contrib.contenttypes",
                    "django.contrib.auth",
                    "queues",
                    "dashboard",
                ],
                TEMPLATES=[
                    {
                        "BACKEND": "django.template.backends.django.DjangoTemplates",
                        "DIRS": [ROOT / "templates"],
                        "APP_DIRS": True,
                    }
                ],
                USE_TZ=True,
                ROOT_URLCONF=__name__,  # urlpatterns below: the links the partial names
                SECRET_KEY="bench",  # noqa: S106 - a throw-away process
                BULLPEN={
                    "REDIS_URL": url,
                    "DISCOVERY_INTERVAL": 3600,
                    "FAILURE_GROUPS_WAIT": args.wait,
                },
            )
            django.setup()
            rows = asyncio.run(measure(args.runs))
        finally:
            proc.terminate()
            proc.wait(10)
    print(f"\n{args.failed:,} failed jobs, {args.runs} runs each; {os.cpu_count()} CPUs\n")
    print("| step | median ms | slowest ms | |")
    print("|---|---:|---:|---|")
    for label, median, slowest, note in rows:
        print(f"| {label} | {median:.1f} | {slowest:.1f} | {note} |")


if __name__ == "__main__":
    main()

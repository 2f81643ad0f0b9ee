#!/usr/bin/env python3
"""The CPU of making the overview's kept list whole (dashboard/pages/overview_ledger.py), as
the first view after the live reader vouches makes it when nothing made it before.

Run from the repository root (or another checkout's, to compare) with the project's
virtualenv; no Redis::

    ./.venv/bin/python bench/manyqueues/remake_cost.py --queues 50000

Makes ``--queues`` summaries shaped as ``bench/node/seed_many.mjs`` seeds them (five services a
tenant, a few jobs in most states), then ``--times`` times: the kept list made from them with
no queue seen before (``cold``: each queue's words made too), and made again from new summary
objects of the same queues (``again``: a view after the reader handed every queue anew). Prints
each one's CPU time (``process_time``), with the garbage collector on as a server runs it.
"""

from __future__ import annotations

import argparse
import dataclasses
import os
import sys
import time

sys.path.insert(0, os.getcwd())
os.environ.setdefault("DJANGO_SETTINGS_MODULE", "bullpen_site.settings")

import django

django.setup()

from dashboard.pages.overview_ledger import OverviewLedger  # noqa: E402
from queues.reads.counts import QueueSummary  # noqa: E402
from queues.reads.keys import STATES, QueueRef  # noqa: E402

SERVICES = ("mail", "billing", "reports", "webhooks", "sync")


def seeded(queues: int) -> list[QueueSummary]:
    made = []
    for n in range(queues):
        ref = QueueRef("bull", f"t{n // len(SERVICES) + 1:05d}-{SERVICES[n % len(SERVICES)]}")
        counts = dict.fromkeys(STATES, 0) | {"waiting": n % 5, "completed": n % 4}
        counts["failed"] = 3 if n % 10 == 0 else 0
        counts["delayed"] = 1 if n % 7 == 0 else 0
        made.append(QueueSummary(ref, counts, n % 200 == 0, None, None, "bullmq:5"))
    return made


def main() -> int:
    ap = argparse.ArgumentParser(description=(__doc__ or "").split("\n\n")[0])
    ap.add_argument("--queues", type=int, default=50_000, help="queues (default 50,000)")
    ap.add_argument("--times", type=int, default=3, help="measurements of each (default 3)")
    args = ap.parse_args()
    found = seeded(args.queues)
    cold, again = [], []
    for _ in range(args.times):
        ledger = OverviewLedger()
        began = time.process_time()
        ledger.update(found)
        cold.append(time.process_time() - began)
        anew = [dataclasses.replace(summary) for summary in found]
        began = time.process_time()
        ledger.update(anew)
        again.append(time.process_time() - began)
    for label, taken in (("cold", cold), ("again", again)):
        print(f"{args.queues:,} queues, {label}: " + ", ".join(f"{t * 1000:,.0f}" for t in taken)
              + " ms CPU", flush=True)  # fmt: skip
    print(f"load average {os.getloadavg()[0]:.1f}", flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())

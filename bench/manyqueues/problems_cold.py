#!/usr/bin/env python3
"""Where the first ``api/queues/?problems=1`` view's alert reads go, nothing kept yet.

Run from the repository root with the project's virtualenv, against a Redis seeded by
``bench/node/seed_many.mjs`` within the last hour (its failures must still be in the
failed_last_hour window)::

    REDIS_URL=redis://127.0.0.1:6961/0 ./.venv/bin/python bench/manyqueues/problems_cold.py
    REDIS_URL=... ./.venv/bin/python bench/manyqueues/problems_cold.py --calls 1 --trips 1

Reads every queue's counts, then times the alert reads a cold view makes for the queues that
keep failed jobs: the last hour's failures (``failed_last``) and the new failure signatures
(``read_signatures``), the latter split into the job hashes read and the signatures worked
out; then the same read twice more: with the answers kept, and with the answers forgotten but
the signatures remembered. Prints wall and CPU time of each, and the memory the remembered
signatures hold.
"""

from __future__ import annotations

import argparse
import asyncio
import os
import sys
import time
from typing import Any

sys.path.insert(0, os.getcwd())
os.environ.setdefault("DJANGO_SETTINGS_MODULE", "bullpen_site.settings")

import django

django.setup()

from queues.alerts import signatures  # noqa: E402
from queues.alerts.failed_kept import failed_last  # noqa: E402
from queues.alerts.thresholds import LAST_HOUR_S, read_signatures  # noqa: E402
from queues.reads.counts import summaries  # noqa: E402


def clock() -> tuple[float, float]:
    return time.process_time(), time.perf_counter()


def took(label: str, start: tuple[float, float]) -> None:
    cpu, wall = clock()
    print(f"{label}: wall {(wall - start[1]) * 1000:,.0f} ms, "
          f"CPU {(cpu - start[0]) * 1000:,.0f} ms", flush=True)  # fmt: skip


def remembered_bytes() -> int:
    """The memory the remembered signatures hold: the ordered dict, each key (its tuple, job
    id and time) and each signature string once (the queues are the discovery's anyway)."""
    seen: set[int] = set()
    total = sys.getsizeof(signatures._known)
    for key, found in signatures._known.items():
        for part in (key, key[1], key[2], found):
            if id(part) not in seen:
                seen.add(id(part))
                total += sys.getsizeof(part)
    return total


async def main() -> int:
    ap = argparse.ArgumentParser(description=(__doc__ or "").split("\n\n")[0])
    ap.add_argument("--chunk", type=int, default=signatures._CHUNK, help="job hashes a call")
    ap.add_argument("--calls", type=int, default=signatures._CALLS, help="calls a round trip")
    ap.add_argument("--trips", type=int, default=signatures._TRIPS, help="round trips at once")
    args = ap.parse_args()
    signatures._CHUNK, signatures._CALLS, signatures._TRIPS = args.chunk, args.calls, args.trips
    start = clock()
    found = await summaries()
    took(f"counts of {len(found):,} queues", start)
    failing = [s for s in found if s.counts["failed"]]
    start = clock()
    recent = await failed_last([s.ref for s in failing], LAST_HOUR_S, None)
    took(f"failed_last of the {len(failing):,} queues keeping failed jobs", start)
    failures = sum(v["failed"] for v in recent.values())
    print(f"{sum(1 for v in recent.values() if v['failed']):,} queues failed "
          f"{failures:,} jobs in the last hour", flush=True)  # fmt: skip
    learn, signature_of = signatures._learn, signatures.signature_of
    worked: list[float] = []

    def timed_signature(*args: Any) -> str:
        cpu = time.process_time()
        made = signature_of(*args)
        worked.append(time.process_time() - cpu)
        return made

    async def timed_learn(unknown: list[tuple[Any, str, int]]) -> Any:
        start = clock()
        learned = await learn(unknown)
        took(
            f"  job hashes read: {len(unknown):,} in chunks of {signatures._CHUNK}, "
            f"{signatures._CALLS} a round trip, {signatures._TRIPS} round trips at once",
            start,
        )
        return learned

    signatures.signature_of = timed_signature  # type: ignore[assignment]
    signatures._learn = timed_learn  # type: ignore[assignment]
    for label in ("read_signatures, cold", "again, the answers kept", "the answers forgotten"):
        if label == "the answers forgotten":
            signatures._answers.clear()
        worked.clear()
        start = clock()
        await read_signatures(failing, recent)
        took(label, start)
        print(f"  signatures worked out: {len(worked):,}, CPU {sum(worked) * 1000:,.0f} ms; "
              f"remembered {len(signatures._known):,} "
              f"({remembered_bytes() / 1e6:,.1f} MB)", flush=True)  # fmt: skip
    return 0


if __name__ == "__main__":
    sys.exit(asyncio.run(main()))

#!/usr/bin/env python3
"""What REDACT costs where every shown job is decoded (``queues.job_fields.job_from_hash``).

Run from the repository root with the project's virtualenv::

    ./.venv/bin/python bench/redaction_bench.py

Decodes one list-row-sized job hash (data with a card, a password and ten line items, options,
a return value) many times, with REDACT empty and with paths set, and prints the best CPU time
per job of several rounds (CPU time, not wall time: the machine is shared). No Redis: the
Redis side of a page does not change with REDACT.
"""

from __future__ import annotations

import argparse
import json
import sys
import time
import timeit
from pathlib import Path

import django
from django.conf import settings

# Run as a script: the repository's packages are beside this folder.
sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

SETTINGS: dict[str, list[str]] = {
    "REDACT empty": [],
    "4 paths": ["data.password", "data.card.number", "data.items.*.token", "returnvalue.apiKey"],
    "data.**.token": ["data.**.token"],
}
DATA = {
    "user": "ada",
    "password": "pw",
    "card": {"number": "4111", "exp": "12/30"},
    "items": [{"sku": i, "qty": 2, "token": "t"} for i in range(10)],
    "note": "x" * 300,
}
RAW = {
    "name": "charge",
    "data": json.dumps(DATA),
    "opts": json.dumps({"attempts": 3, "backoff": {"type": "exponential", "delay": 1000}}),
    "timestamp": "1700000000000",
    "processedOn": "1700000000100",
    "finishedOn": "1700000000350",
    "delay": "0",
    "priority": "0",
    "atm": "1",
    "ats": "1",
    "returnvalue": json.dumps({"ok": True, "apiKey": "k"}),
    "progress": "0",
}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--number", type=int, default=20_000, help="jobs decoded per round")
    parser.add_argument("--rounds", type=int, default=15)
    args = parser.parse_args()
    settings.configure(INSTALLED_APPS=["queues"], BULLPEN={})
    django.setup()
    from django.test import override_settings

    from queues.reads.job_fields import job_from_hash

    print("| REDACT | CPU µs per job (best round) |\n|---|---:|")
    for label, paths in SETTINGS.items():
        with override_settings(BULLPEN={"REDACT": paths}):
            job_from_hash("1", RAW)
            rounds = timeit.repeat(
                lambda: job_from_hash("1", RAW),
                number=args.number,
                repeat=args.rounds,
                timer=time.process_time,
            )
        print(f"| {label} | {min(rounds) / args.number * 1e6:.1f} |")


if __name__ == "__main__":
    main()

"""``manage.py bullpen_demo``: add demo jobs (bullpen_site/demo_jobs.py) until interrupted.

The jobs are run by ``manage.py runqueueworker --module bullpen_site.demo_handlers``.
"""

from __future__ import annotations

import asyncio
from typing import Any

from django.core.management.base import BaseCommand

from bullpen_site.demo_jobs import run_demo


class Command(BaseCommand):
    help = "Add demo jobs to the four demo queues until interrupted (runqueueworker runs them)."

    def add_arguments(self, parser: Any) -> None:
        parser.add_argument("--rate", type=float, default=2.0, help="new jobs per second")
        parser.add_argument("--seed", type=int, default=40, help="first batch, per queue")

    def handle(self, *args: Any, **options: Any) -> None:
        try:
            asyncio.run(run_demo(options["rate"], options["seed"]))
        except KeyboardInterrupt:
            pass

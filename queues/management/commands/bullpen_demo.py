from __future__ import annotations

import asyncio
from typing import Any

from django.core.management.base import BaseCommand

from queues.demo import run_demo


class Command(BaseCommand):
    help = "Produce and process demo jobs on four queues until interrupted."

    def add_arguments(self, parser: Any) -> None:
        parser.add_argument("--rate", type=float, default=2.0, help="new jobs per second")

    def handle(self, *args: Any, **options: Any) -> None:
        try:
            asyncio.run(run_demo(options["rate"]))
        except KeyboardInterrupt:
            pass

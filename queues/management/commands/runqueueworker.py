"""``manage.py runqueueworker [queue ...]``: run the registered job handlers until SIGTERM/SIGINT,
and the tasks of the site's BullMQ Tasks backends (queues/tasks/).

Named so as not to clash with Channels' ``runworker``. See queues/runner/.
"""

from __future__ import annotations

import asyncio
import logging
import os
import sys
from typing import Any

from django.core.management.base import BaseCommand, CommandError

from queues.errors import StoreUnavailable
from queues.postgres.urls import PostgresUrlError
from queues.redis import connections
from queues.runner.errors import RunnerConfigError
from queues.runner.json_logs import configure_json_logs
from queues.runner.memory import EXIT_OVER_MEMORY
from queues.runner.postgres.supervisor import PostgresWorkerRunner
from queues.runner.registry import default_registry, load_handlers
from queues.runner.supervisor import WorkerRunner
from queues.tasks.runner import register_task_queues


class Command(BaseCommand):
    help = (
        "Run Python BullMQ workers for the registered job handlers (all queues, or those "
        "named). SIGTERM/SIGINT drain in-flight jobs; a second signal abandons them."
    )

    def add_arguments(self, parser: Any) -> None:
        parser.add_argument("queues", nargs="*", help="queues to work (default: all registered)")
        parser.add_argument(
            "--module",
            action="append",
            default=[],
            help="a module whose @job_handler functions to register (repeatable)",
        )
        parser.add_argument(
            "--shutdown-timeout",
            type=float,
            default=None,
            help="seconds to wait for in-flight jobs (default: the shutdown_timeout setting)",
        )
        parser.add_argument(
            "--max-memory-mb",
            type=float,
            default=None,
            help=(
                "resident memory (MiB) past which the worker stops taking jobs, drains and "
                f"exits with status {EXIT_OVER_MEMORY} to be restarted (default: the "
                "max_memory_mb setting; none)"
            ),
        )
        parser.add_argument("--log-level", default="info", choices=["debug", "info", "warning"])
        parser.add_argument(
            "--connection",
            default=None,
            help=(
                'the BULLPEN["CONNECTIONS"] entry whose queues to work, Redis or a PostgreSQL '
                "store (default: the first)"
            ),
        )

    def handle(self, *args: Any, **options: Any) -> None:
        configure_json_logs(level=getattr(logging, options["log_level"].upper()))
        try:
            registry = load_handlers(default_registry, options["module"])
            # Django tasks (queues/tasks/): their queues run the tasks of the modules above.
            register_task_queues(registry)
            connection = options["connection"]
            if connection is not None and connection not in connections.names():
                raise RunnerConfigError(
                    f"No connection named {connection!r}: BULLPEN['CONNECTIONS'] names "
                    + ", ".join(connections.names())
                )
            kind: type[WorkerRunner] = WorkerRunner
            if connection is not None and connections.is_postgres(connection):
                kind = PostgresWorkerRunner
            runner = kind(
                registry,
                options["queues"],
                shutdown_timeout=options["shutdown_timeout"],
                connection=connection,
                max_memory_mb=options["max_memory_mb"],
            )
        except (RunnerConfigError, PostgresUrlError) as error:
            raise CommandError(str(error)) from error
        try:
            abandoned = asyncio.run(runner.run_until_signalled())
        except StoreUnavailable as error:  # unreachable, refused, or not BullMQ's schema
            raise CommandError(str(error)) from error
        if runner.over_memory:
            # For the supervisor to start a fresh process (and not to take it for a crash).
            sys.stderr.flush()
            sys.stdout.flush()
            os._exit(EXIT_OVER_MEMORY)
        if abandoned:
            # A plain-function handler may still be running in a thread, which would keep the
            # process alive: the jobs are left for stall recovery, so leave now.
            sys.stderr.flush()
            sys.stdout.flush()
            os._exit(1)

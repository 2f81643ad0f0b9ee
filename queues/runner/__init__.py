"""The reference worker runner: production-safe Python BullMQ workers from a handler registry.

Where things are:

- ``registry.py``: how a job handler gets registered (``@job_handler``, settings);
- ``options.py``: per-queue options and their safe defaults; ``limiter.py``: the rate limiter;
  ``fairness.py``: per-tenant fairness; ``schedules.py``: repeatable jobs;
- ``worker.py`` + ``job_loop/``: the worker's job loop; ``dispatch.py``: running one handler;
  ``context.py``: what a handler may do (progress, log lines); ``jobs.py`` + ``finish.py``:
  a fetched job's ``Job``, and its completion, with less Python per job;
- ``dead_letter.py``: the dead-letter queue (replay: queues/actions/dead_letter_replay.py);
  ``job_ids.py``: idempotent job ids; ``producer.py``: adding jobs;
- ``supervisor.py`` + ``shutdown.py``: starting and stopping; ``memory.py``: the memory ceiling
  that recycles a worker process; ``redis_client.py`` +
  ``multiplex.py``: connections; ``queue_handles.py``: bullmq Queues on shared clients;
  ``json_logs.py``: JSON-lines logs;
- ``postgres/``: the same runner on BullMQ's Postgres store (``--connection pg``).
"""

from __future__ import annotations

from queues.actions.dead_letter_replay import Replayed, replay_dead_letter
from queues.runner.context import JobContext, SyncJobContext
from queues.runner.errors import RunnerConfigError
from queues.runner.fairness import TenantLimit
from queues.runner.job_ids import business_job_id, utc_day
from queues.runner.limiter import Limiter
from queues.runner.options import QueueOptions
from queues.runner.producer import Producer
from queues.runner.registry import Registry, default_registry, job_handler
from queues.runner.schedules import Schedule

__all__ = [
    "JobContext",
    "Limiter",
    "Producer",
    "QueueOptions",
    "Registry",
    "Replayed",
    "RunnerConfigError",
    "Schedule",
    "SyncJobContext",
    "TenantLimit",
    "business_job_id",
    "default_registry",
    "job_handler",
    "replay_dead_letter",
    "utc_day",
]

"""What the fork server imports of Bullpen before any fork: the modules of ``queues`` that a
daphne server and ``manage.py runqueueworker`` import (each pulls in its part of the package):
imported again in each fork, they were about half of a server's CPU to its first page.

They read neither the environment nor Django's settings when imported, so each fork still
sets itself up from its own environment; ``dashboard`` and ``queues.models`` need the
settings and are left to the forks. Were any of them to read the settings, the fork server
would have configured them from the test process's environment for every fork: it stops at
once instead.
"""

from __future__ import annotations

import importlib

from django.conf import settings

# Where the server's and the worker's imports of queues begin (the rest are theirs).
ROOTS = (
    "queues.config.problems",
    "queues.alerts.state",
    "queues.alerts.watch",
    "queues.alerts.shown",
    "queues.bulk.record",
    "queues.bulk.executor",
    "queues.bulk.submit",
    "queues.postgres.store_actions",
    "queues.reads.deduplication",
    "queues.reads.listing",
    "queues.reads.flow",
    "queues.tasks.mapping",
    "queues.live.protocol",
    "queues.live.follower",
    "queues.actions.sweeps",
    "queues.actions.cancel_requests",
    "queues.actions.dead_letter_replay",
    "queues.tasks.runner",
    "queues.management.commands.runqueueworker",
)

for name in ROOTS:
    importlib.import_module(name)

if settings.configured:
    raise RuntimeError(
        "a module preloaded for the forked servers read Django's settings at import: each "
        "fork would run with the test process's settings, not its own"
    )

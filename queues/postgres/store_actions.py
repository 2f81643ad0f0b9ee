"""What a queue on a PostgreSQL store can be asked: what BullMQ's Postgres backend does for
Bullpen today (queues/postgres/). The one place that says it: the guard that answers 400 for
the rest (dashboard/auth/mutation_steps.py) and the pages, which show no button for them, both
read it."""

from __future__ import annotations

from queues.reads.keys import QueueRef
from queues.redis import connections

POSTGRES_ACTIONS = frozenset(
    {
        "retry",
        "remove",
        "promote",
        "pause",
        "resume",
        "add",
        "update-data",
        "duplicate",
        "priority",
        "bulk",
        "retry-all",
        "promote-all",
        "clean",
        "empty",
        "obliterate",
        "upsert-scheduler",
        "remove-scheduler",
        "run-scheduler",
        "cancel",
    }
)


class Supported:
    """The actions a queue's store does, asked as a template asks: ``"cancel" in supports``."""

    def __init__(self, only: frozenset[str] | None) -> None:
        self.only = only  # None: every action

    def __contains__(self, action: object) -> bool:
        return self.only is None or action in self.only


EVERY_ACTION = Supported(None)
ON_POSTGRES = Supported(POSTGRES_ACTIONS)


def supported(ref: QueueRef) -> Supported:
    return ON_POSTGRES if connections.is_postgres(ref.connection) else EVERY_ACTION

"""What each Redis health warning says, with what to change, in the reader's language."""

from __future__ import annotations

from django.utils.functional import Promise
from django.utils.translation import gettext_lazy

from queues.redis.health_warnings import (
    COMMANDS_REFUSED,
    EVICTION_POLICY,
    MEMORY_HIGH,
    PERSISTENCE_OFF,
    HealthWarning,
)

TEXTS: dict[str, Promise] = {
    EVICTION_POLICY: gettext_lazy(
        "maxmemory-policy is %(policy)s: Redis may evict BullMQ's keys, and jobs are lost. "
        "Set maxmemory-policy to noeviction."
    ),
    MEMORY_HIGH: gettext_lazy(
        "Memory is at %(percent)s%% of maxmemory: raise maxmemory, or keep fewer finished "
        "jobs (BullMQ's removeOnComplete and removeOnFail)."
    ),
    PERSISTENCE_OFF: gettext_lazy(
        "Persistence is off (no RDB snapshots, no AOF) on a server with replicas: restarted, "
        "it comes back empty and its replicas copy that. Set appendonly yes or a save "
        "schedule."
    ),
    COMMANDS_REFUSED: gettext_lazy(
        "The Redis user Bullpen connects as may not run %(commands)s: the figures that need "
        "them are missing. Grant it +info and +config|get to see them."
    ),
}


def warning_text(warning: HealthWarning) -> str:
    """The sentence of ``warning`` (its code alone for a code this version does not know)."""
    text = TEXTS.get(warning.code)
    if text is None:
        return warning.code
    return str(text) % dict(warning.params)

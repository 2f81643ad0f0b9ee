"""Recording a new bulk action: validated by its kind, then written to Redis for the runner."""

from __future__ import annotations

from typing import Any

from queues.bulk.kinds import KINDS
from queues.bulk.record import ActionRecord, RequestedBy, new_id, now_ms
from queues.bulk.settings import BulkSettings
from queues.bulk.store import id_suffix, store_for
from queues.errors import BadParameter, Conflict
from queues.reads.keys import QueueRef
from queues.redis.errors import translate_redis_errors


async def submit(
    kind_name: str, ref: QueueRef, params: dict[str, Any], requested_by: RequestedBy
) -> ActionRecord:
    kind = KINDS.get(kind_name)
    if kind is None:
        raise BadParameter(f"Unknown kind of action {kind_name!r}")
    anchor = now_ms()
    prepared = await kind.prepare(ref, dict(params), anchor)
    record = ActionRecord(
        id=new_id() + id_suffix(ref.connection),
        kind=kind_name,
        prefix=ref.prefix,
        queue=ref.name,
        connection=ref.connection,
        params=prepared.params,
        requested_by=requested_by,
        anchor_ms=anchor,
        total=prepared.total,
        created_ms=anchor,
    )
    async with translate_redis_errors():
        first = await store_for(ref.connection).create(
            record,
            prepared.job_ids,
            BulkSettings.from_config().keep_recent,
            same_work=(lambda other: _same_sweep(record, other)) if kind_name in SWEEPS else None,
            even_when_full=kind_name in FREES_MEMORY,
        )
    if first is not None:
        raise AlreadyRunning(first)
    return record


# Kinds that only remove jobs: they run at maxmemory too, since removing is how an operator frees
# memory. The others are refused then ("Redis is full").
FREES_MEMORY = frozenset({"clean", "remove-group", "remove-matches"})

# Kinds that sweep a whole state: a second one of a queue's state while the first runs would
# find nothing the first does not move, and only confuse the counts shown.
SWEEPS = frozenset({"retry-all", "promote-all", "clean"})


def _same_sweep(asked: ActionRecord, other: ActionRecord) -> bool:
    return (
        other.kind == asked.kind
        and (other.prefix, other.queue) == (asked.prefix, asked.queue)
        and other.params.get("state") == asked.params.get("state")
    )


class AlreadyRunning(Conflict):
    """The same sweep of the same queue is asked for while one has not ended."""

    def __init__(self, first: ActionRecord) -> None:
        self.first = first
        state = first.params.get("state")
        what = f"{first.kind} of {state} jobs" if state else first.kind
        super().__init__(
            f"A {what} of {first.ref.slug!r} is already {first.state} (action {first.id}, "
            f"asked for by {first.requested_by.username or 'someone'}): wait for it to end "
            "or cancel it"
        )

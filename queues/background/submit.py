"""Recording a new bulk action: validated by its kind, then written to Redis for the runner."""

from __future__ import annotations

from typing import Any

from queues.background.kinds import KINDS
from queues.background.record import ActionRecord, RequestedBy, new_id, now_ms
from queues.background.settings import BackgroundSettings
from queues.background.store import id_suffix, store_for
from queues.errors import BadParameter
from queues.keys import QueueRef
from queues.redis_errors import translate_redis_errors


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
        await store_for(ref.connection).create(
            record, prepared.job_ids, BackgroundSettings.from_config().keep_recent
        )
    return record

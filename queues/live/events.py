"""BullMQ's per-queue event stream (``<prefix>:<queue>:events``): what each entry means to us."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from queues.reads.jsontext import loads_shown

# Events after which a job sits in a different state (a retry shows up as ``waiting``).
STATE_OF_EVENT: dict[str, str] = {
    "added": "waiting",
    "waiting": "waiting",
    "active": "active",
    "delayed": "delayed",
    "waiting-children": "waiting-children",
    "completed": "completed",
    "failed": "failed",
    "stalled": "waiting",
    "prioritized": "prioritized",
}


@dataclass(frozen=True)
class QueueEvent:
    stream_id: str
    event: str
    job_id: str | None
    fields: dict[str, str]

    @property
    def at_ms(self) -> int:
        """When Redis stored the event: the first half of the stream id."""
        try:
            return int(self.stream_id.split("-", 1)[0])
        except ValueError:
            return 0

    @property
    def new_state(self) -> str | None:
        return STATE_OF_EVENT.get(self.event)

    def progress(self) -> Any:
        raw = self.fields.get("data")
        if raw is None:
            return None
        try:
            return loads_shown(raw)
        except ValueError:
            return raw


def parse_entry(stream_id: str, fields: dict[str, str]) -> QueueEvent:
    return QueueEvent(
        stream_id=stream_id,
        event=fields.get("event", ""),
        job_id=fields.get("jobId"),
        fields=fields,
    )

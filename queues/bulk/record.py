"""One bulk action as Redis keeps it: what was asked, by whom, and how far it got.

The record is a Redis hash of strings. ``count`` is only ever changed inside Redis, in the
transaction that moves the jobs it counts, so a crash can never separate the two.
"""

from __future__ import annotations

import json
import secrets
import time
from dataclasses import dataclass, field
from typing import Any

from queues.reads.keys import QueueRef

QUEUED = "queued"
RUNNING = "running"
DONE = "done"
CANCELLED = "cancelled"
INTERRUPTED = "interrupted"
FAILED = "failed"
FINISHED = frozenset({DONE, CANCELLED, INTERRUPTED, FAILED})


def now_ms() -> int:
    return int(time.time() * 1000)


def new_id() -> str:
    """Sortable by creation time (hex milliseconds), unguessable in the rest."""
    return f"{now_ms():012x}{secrets.token_hex(6)}"


@dataclass(frozen=True)
class RequestedBy:
    """Who asked, as the audit log names them."""

    username: str
    via: str
    remote_addr: str = ""
    forwarded_for: str = ""


@dataclass
class ActionRecord:
    id: str
    kind: str
    prefix: str
    queue: str  # the queue's name under ``prefix``
    params: dict[str, Any]
    requested_by: RequestedBy
    # When it was asked for: "every failed job" means every job that had failed by then.
    anchor_ms: int
    state: str = QUEUED
    count: int = 0  # jobs this action moved or removed, and no others
    total: int = 0  # jobs there were to act on when it was asked for (for progress only)
    refused: int = 0  # jobs of a list that could not be acted on (gone, active...)
    next: int = 0  # list kinds: index of the next job to act on
    created_ms: int = 0
    started_ms: int = 0
    finished_ms: int = 0
    updated_ms: int = 0  # the last sign of progress
    owner: str = ""  # the runner executing it (its lease token)
    cancel_by: str = ""  # who asked to cancel it
    error: str = ""
    detail: dict[str, Any] = field(default_factory=dict)
    resumes: int = 0  # times another runner took it over after its own stopped
    settled: bool = False  # finished and audited: nothing left to do
    # The Redis the queue is on (queues/redis/connections.py); empty: the default one. The record
    # is kept there too, beside the queue's jobs.
    connection: str = ""

    @property
    def ref(self) -> QueueRef:
        if self.connection:
            return QueueRef(self.prefix, self.queue, self.connection)
        return QueueRef(self.prefix, self.queue)

    @property
    def finished(self) -> bool:
        return self.state in FINISHED

    @property
    def last_sign_ms(self) -> int:
        return max(self.updated_ms, self.started_ms, self.created_ms)

    def to_fields(self) -> dict[str, str]:
        return {
            "id": self.id,
            "kind": self.kind,
            "prefix": self.prefix,
            "queue": self.queue,
            "params": json.dumps(self.params),
            "user": self.requested_by.username,
            "via": self.requested_by.via,
            "remote": self.requested_by.remote_addr,
            "forwarded": self.requested_by.forwarded_for,
            "anchor": str(self.anchor_ms),
            "state": self.state,
            "count": str(self.count),
            "total": str(self.total),
            "refused": str(self.refused),
            "next": str(self.next),
            "created": str(self.created_ms),
            "started": str(self.started_ms),
            "finished": str(self.finished_ms),
            "updated": str(self.updated_ms),
            "owner": self.owner,
            "cancel": self.cancel_by,
            "error": self.error,
            "detail": json.dumps(self.detail),
            "resumes": str(self.resumes),
            "settled": "1" if self.settled else "",
            "connection": self.connection,
        }

    @classmethod
    def from_fields(cls, fields: dict[str, str]) -> ActionRecord:
        def number(name: str) -> int:
            try:
                return int(fields.get(name) or 0)
            except ValueError:
                return 0

        def mapping(name: str) -> dict[str, Any]:
            try:
                value = json.loads(fields.get(name) or "{}")
            except ValueError:
                return {}
            return value if isinstance(value, dict) else {}

        return cls(
            id=fields.get("id", ""),
            kind=fields.get("kind", ""),
            prefix=fields.get("prefix", ""),
            queue=fields.get("queue", ""),
            connection=fields.get("connection", ""),
            params=mapping("params"),
            requested_by=RequestedBy(
                fields.get("user", ""),
                fields.get("via", ""),
                fields.get("remote", ""),
                fields.get("forwarded", ""),
            ),
            anchor_ms=number("anchor"),
            state=fields.get("state", QUEUED),
            count=number("count"),
            total=number("total"),
            refused=number("refused"),
            next=number("next"),
            created_ms=number("created"),
            started_ms=number("started"),
            finished_ms=number("finished"),
            updated_ms=number("updated"),
            owner=fields.get("owner", ""),
            cancel_by=fields.get("cancel", ""),
            error=fields.get("error", ""),
            detail=mapping("detail"),
            resumes=number("resumes"),
            settled=fields.get("settled") == "1",
        )

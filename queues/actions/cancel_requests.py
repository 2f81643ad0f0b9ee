"""A request to cancel a running job, as the dashboard publishes it and workers read it.

BullMQ cancels a job only inside the process that runs it (``worker.cancelJob(id, reason)``
aborts the signal its processor was given); nothing in Redis asks a worker elsewhere to do so.
Bullpen therefore publishes one request on a Redis pub/sub channel of the job's queue,
``<prefix>:<queue>:bullpen:cancel`` (a channel, not a key: nothing is stored), whose message is
JSON::

    {"jobId": "42", "by": "alice", "reason": "Cancelled by alice", "retry": false,
     "until": 1767225600000}

Every worker of the queue hears it; the one that runs the job cancels it with ``reason``, and
the job ends failed through BullMQ's own scripts: for good, or, with ``retry``, as a failed
attempt that the job's attempts and backoff may retry. A request heard after ``until`` (epoch
milliseconds) is ignored: by then the dashboard has answered that nobody cancelled the job.

On a PostgreSQL store the same request goes out as ``NOTIFY bullpen_cancel`` in the store's
database (one channel for every queue: a channel's name is limited to 63 bytes), the payload
naming the queue and BullMQ's schema besides::

    {"queue": "mail", "schema": "bullmq", "jobId": "42", "by": "alice", ...}
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from typing import Any

from queues.reads.keys import QueueRef

CHANNEL_SUFFIX = "bullpen:cancel"
POSTGRES_CHANNEL = "bullpen_cancel"
MAX_REASON = 500  # characters of the operator's own words kept in the reason


def channel(ref: QueueRef) -> str:
    """The pub/sub channel on which the workers of ``ref`` hear cancel requests."""
    return ref.key(CHANNEL_SUFFIX)


def reason_for(by: str, note: str = "") -> str:
    """The failed reason a cancelled job ends with: who cancelled it, and why if they said."""
    note = " ".join(note.split())[:MAX_REASON]
    return f"Cancelled by {by} from Bullpen" + (f": {note}" if note else "")


@dataclass(frozen=True)
class CancelRequest:
    job_id: str
    by: str
    reason: str
    retry: bool
    until_ms: int

    def encode(self) -> str:
        return json.dumps(
            {
                "jobId": self.job_id,
                "by": self.by,
                "reason": self.reason,
                "retry": self.retry,
                "until": self.until_ms,
            }
        )

    def encode_for_store(self, queue: str, schema: str) -> str:
        """The request as a PostgreSQL store's notification carries it (see the module)."""
        return json.dumps({"queue": queue, "schema": schema, **json.loads(self.encode())})

    def expired(self, now_ms: int) -> bool:
        return now_ms > self.until_ms


def decode(message: str | bytes) -> CancelRequest | None:
    """The request a message carries, or None for a message that is not one (anyone may
    publish on a channel: a stray message must not stop a worker)."""
    try:
        doc: Any = json.loads(message)
    except (ValueError, UnicodeDecodeError):
        return None
    if not isinstance(doc, dict):
        return None
    job_id, by, reason = doc.get("jobId"), doc.get("by"), doc.get("reason")
    until, retry = doc.get("until"), doc.get("retry", False)
    if not (isinstance(job_id, str) and job_id and isinstance(by, str)):
        return None
    if not isinstance(until, int) or isinstance(until, bool) or not isinstance(retry, bool):
        return None
    if not isinstance(reason, str) or not reason:
        reason = reason_for(by)
    return CancelRequest(job_id, by, reason, retry, until)


def decode_for_store(message: str) -> tuple[str, str, CancelRequest] | None:
    """The queue, schema and request a store's notification carries, or None (a stray one)."""
    request = decode(message)
    if request is None:
        return None
    doc = json.loads(message)
    queue, schema = doc.get("queue"), doc.get("schema", "bullmq")
    if not (isinstance(queue, str) and queue and isinstance(schema, str) and schema):
        return None
    return queue, schema, request

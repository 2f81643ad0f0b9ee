"""Errors the queue layer raises; the dashboard maps each to an HTTP status."""

from __future__ import annotations


class BullpenError(Exception):
    """Base class: ``str(error)`` is safe to show to the user."""


class BadParameter(BullpenError):
    """A parameter (state, page size, order...) is not acceptable."""


class QueueNotFound(BullpenError):
    """No queue of that name under any configured prefix."""


class JobNotFound(BullpenError):
    """No job of that id in the queue."""


class JobGone(JobNotFound):
    """The queue has no hash for that id: the job was removed, cleaned, or never was."""


class ActionNotFound(BullpenError):
    """No bulk action of that id (or its record has expired)."""


class Conflict(BullpenError):
    """The job or queue is not in a state that allows the action (e.g. removing an active job)."""


class QueueDataError(BullpenError):
    """A key of the queue holds something BullMQ would not have written there."""


class RedisUnavailable(BullpenError):
    """Redis could not be reached or answered with an error."""


class StoreUnavailable(RedisUnavailable):
    """A PostgreSQL store could not be read: unreachable, refused, or its BullMQ schema is
    missing or of a version Bullpen does not understand (the message says which)."""


class NodeUnreachable(RedisUnavailable):
    """One master of a Redis Cluster could not be reached (the others may be)."""

    def __init__(self, node: str, detail: str) -> None:
        super().__init__(f"Redis Cluster node {node} is unreachable: {detail}")
        self.node = node


class RedisFull(RedisUnavailable):
    """Redis reached its ``maxmemory`` (with a no-eviction policy) and refused a write that
    needs memory."""

    def __init__(self) -> None:
        super().__init__(
            "Redis is full: it has reached its maxmemory and refuses changes that need memory. "
            "Removing jobs (clean, remove, empty, obliterate) still works and frees memory."
        )


class OutcomeUnknown(RedisUnavailable):
    """The connection to Redis broke after a change was sent: it may or may not have been
    applied. Never retried blindly: whoever asked must look before asking again."""

    def describe(self, action: str, job_id: str | None = None) -> str:
        what = f"{action} of job {job_id}" if job_id else action
        look = "the job" if job_id else "the queue"
        return f"The outcome of {what} is unknown: {self}. Check {look} before trying again."

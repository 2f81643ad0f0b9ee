"""Where BullMQ keeps things: queue references, state keys and job keys."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Literal

from queues.config.settings import default_prefix, get_config
from queues.errors import QueueNotFound
from queues.redis import connections

StateKind = Literal["list", "zset"]

# Every state a job can be in, in the order pages show them, with the key and type holding it.
# ``paused`` is the list BullMQ 5 moved jobs to while a queue was paused; BullMQ 6 keeps them
# in ``wait`` and only flags the queue as paused in its meta hash.
STATES: dict[str, tuple[str, StateKind]] = {
    "waiting": ("wait", "list"),
    "active": ("active", "list"),
    "prioritized": ("prioritized", "zset"),
    "delayed": ("delayed", "zset"),
    "waiting-children": ("waiting-children", "zset"),
    "paused": ("paused", "list"),
    "completed": ("completed", "zset"),
    "failed": ("failed", "zset"),
}


@dataclass(frozen=True, order=True)
class QueueRef:
    """One queue: its key prefix, its name, and the connection (Redis) that holds it."""

    prefix: str
    name: str
    connection: str = field(default_factory=connections.default_name)
    # Worked out once: a view of 50,000 queues looks each up in several dicts, and the
    # dataclass's own hash would build a tuple of the fields every time.
    _hash: int = field(init=False, repr=False, compare=False, default=0)

    def __post_init__(self) -> None:
        object.__setattr__(self, "_hash", hash((self.prefix, self.name, self.connection)))

    def __hash__(self) -> int:
        return self._hash

    def __reduce__(self) -> tuple[type[QueueRef], tuple[str, str, str]]:
        # Made again where unpickled: another process hashes strings differently.
        return (QueueRef, (self.prefix, self.name, self.connection))

    def key(self, suffix: str) -> str:
        return f"{self.prefix}:{self.name}:{suffix}"

    def job_key(self, job_id: str) -> str:
        return f"{self.prefix}:{self.name}:{job_id}"

    @property
    def qualified_name(self) -> str:
        """``<prefix>:<name>``, what BullMQ calls the queue's qualified name."""
        return f"{self.prefix}:{self.name}"

    @property
    def slug(self) -> str:
        """How URLs name the queue: the bare name under the default prefix, and with several
        connections its connection after an ``@`` (queues/redis/connections.py)."""
        within = self.name if self.prefix == default_prefix() else f"{self.prefix}:{self.name}"
        if connections.several():
            return f"{within}{connections.SLUG_SEPARATOR}{self.connection}"
        return within

    @property
    def slug_on_connection(self) -> str:
        """The slug without its connection: the bare name under the default prefix, else
        ``<prefix>:<name>``."""
        return self.name if self.prefix == default_prefix() else f"{self.prefix}:{self.name}"

    @classmethod
    def from_slug(cls, slug: str) -> QueueRef:
        """Parse a URL's queue segment. BullMQ refuses ``:`` in queue names, so the last
        ``:`` separates a non-default prefix (which may itself hold ``:``) from the name."""
        connection, within = connections.split_slug(slug)
        prefix, sep, name = within.rpartition(":")
        if not sep:
            return cls(default_prefix(), within, connection)
        if prefix not in get_config()["PREFIXES"] or not name:
            raise QueueNotFound(f"Unknown queue {slug!r}")
        return cls(prefix, name, connection)

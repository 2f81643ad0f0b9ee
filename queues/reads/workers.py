"""Who is processing: the Redis connections BullMQ workers name after their queue.

Python workers name theirs ``<prefix>:<queue>[:w:<worker name>]``, Node workers
``<prefix>:<base64 of queue>[:w:<worker name>]``; each library lists only its own, so both forms
are read here from one ``CLIENT LIST``. A worker process opens several connections under one
name (a blocking one for waiting on jobs, a normal one): ``by_process`` folds them into one.

Hosted Redis services often give a user without ``CLIENT``; then no workers can be listed, and
:class:`ClientListRefused` says so (the rest of Bullpen does not need the command).
"""

from __future__ import annotations

import base64
from dataclasses import dataclass
from typing import Any

from redis.exceptions import NoPermissionError, ResponseError

from queues.errors import BullpenError
from queues.reads.keys import QueueRef
from queues.reads.store import other_store
from queues.redis.clients import get_client
from queues.redis.cluster import is_cluster, masters
from queues.redis.errors import translate_redis_errors
from queues.redis.per_connection import by_connection


class ClientListRefused(BullpenError):
    """Redis refuses ``CLIENT LIST`` to this user: workers cannot be listed."""

    def __init__(self) -> None:
        super().__init__(
            "The Redis user Bullpen connects as may not list clients (CLIENT LIST is refused, "
            "as on many hosted Redis services), so workers cannot be shown."
        )


def _refused(error: ResponseError) -> bool:
    """A permission error, or a service that renamed or removed the command."""
    return isinstance(error, NoPermissionError) or "unknown command" in str(error).lower()


@dataclass(frozen=True)
class WorkerConnection:
    queue: str  # slug
    worker_name: str
    library: str  # "node" or "python"
    addr: str
    age_s: int
    idle_s: int
    client_name: str

    def as_json(self) -> dict[str, Any]:
        return {
            "queue": self.queue,
            "name": self.worker_name,
            "library": self.library,
            "addr": self.addr,
            "ageSeconds": self.age_s,
            "idleSeconds": self.idle_s,
            "clientName": self.client_name,
        }


@dataclass(frozen=True)
class WorkerProcess:
    """The connections of one queue's worker name from one host: one worker process, as far as
    Redis can tell (unnamed workers on one host share a name, so they share a row)."""

    queue: str  # slug
    worker_name: str
    library: str
    host: str
    connections: int
    age_s: int  # of the oldest connection: how long the worker has been up
    idle_s: int  # of the busiest connection: how recently it talked to Redis
    client_name: str

    def as_json(self) -> dict[str, Any]:
        return {
            "queue": self.queue,
            "name": self.worker_name,
            "library": self.library,
            "host": self.host,
            "connections": self.connections,
            "ageSeconds": self.age_s,
            "idleSeconds": self.idle_s,
            "clientName": self.client_name,
        }


def host_of(addr: str) -> str:
    """``127.0.0.1:6379`` → ``127.0.0.1``; ``[::1]:6379`` → ``[::1]``."""
    host, sep, _port = addr.rpartition(":")
    return host if sep else addr


def by_process(connections: list[WorkerConnection]) -> list[WorkerProcess]:
    groups: dict[tuple[str, str, str], list[WorkerConnection]] = {}
    for connection in connections:
        key = (connection.queue, connection.client_name, host_of(connection.addr))
        groups.setdefault(key, []).append(connection)
    processes = [
        WorkerProcess(
            queue=queue,
            worker_name=members[0].worker_name,
            library=members[0].library,
            host=host,
            connections=len(members),
            age_s=max(m.age_s for m in members),
            idle_s=min(m.idle_s for m in members),
            client_name=client_name,
        )
        for (queue, client_name, host), members in groups.items()
    ]
    return sorted(processes, key=lambda p: (p.queue, p.library, p.worker_name, p.host))


def parse_client_list(text: str) -> list[dict[str, str]]:
    clients = []
    for line in text.splitlines():
        fields: dict[str, str] = {}
        for pair in line.split(" "):
            key, sep, value = pair.partition("=")
            if sep:
                fields[key] = value
        if fields:
            clients.append(fields)
    return clients


def _names(ref: QueueRef) -> dict[str, str]:
    encoded = base64.b64encode(ref.name.encode()).decode()
    return {f"{ref.prefix}:{ref.name}": "python", f"{ref.prefix}:{encoded}": "node"}


# The last queue list's client names → (queue, library): an overview of 50,000 queues asks
# for the same list at every view, and making it is a base64 and two entries a queue.
_owners: tuple[list[QueueRef], dict[str, tuple[QueueRef, str]]] = ([], {})


def _owners_of(refs: list[QueueRef]) -> dict[str, tuple[QueueRef, str]]:
    global _owners
    if _owners[0] == refs:  # the same queues, mostly the same objects: compared by identity
        return _owners[1]
    owners: dict[str, tuple[QueueRef, str]] = {}
    for ref in refs:
        for base, library in _names(ref).items():
            owners[base] = (ref, library)
    _owners = (list(refs), owners)
    return owners


def match_workers(clients: list[dict[str, str]], refs: list[QueueRef]) -> list[WorkerConnection]:
    owners = _owners_of(refs)
    found = []
    for client in clients:
        name = client.get("name", "")
        # "<base>" is an unnamed worker, "<base>:w:<name>" a named one; "<base>:qe" (a
        # QueueEvents listener) and everything else is not a worker.
        base, _, worker_name = name.partition(":w:")
        owner = owners.get(base)
        if owner is None:
            continue
        ref, library = owner
        found.append(
            WorkerConnection(
                queue=ref.slug,
                worker_name=worker_name,
                library=library,
                addr=client.get("addr", ""),
                age_s=int(client.get("age", "0") or 0),
                idle_s=int(client.get("idle", "0") or 0),
                client_name=name,
            )
        )
    return found


async def list_workers(refs: list[QueueRef]) -> list[WorkerConnection]:
    """The worker connections of ``refs`` (one CLIENT LIST per connection they are on);
    :class:`ClientListRefused` when Redis will not say."""
    found: list[WorkerConnection] = []
    for connection, share in by_connection(refs).items():
        store = other_store(connection)
        if store is not None:
            found += await store.workers(connection, share)
            continue
        async with translate_redis_errors():
            try:
                text = await _client_list(get_client(connection))
            except ResponseError as error:
                if _refused(error):
                    raise ClientListRefused from error
                raise
        found += match_workers(parse_client_list(text), share)
    return found


async def _client_list(client: Any) -> str:
    """``CLIENT LIST`` of the server, or of every master of a cluster (a worker connects to
    the ones that hold its queue's keys)."""
    if is_cluster(client):
        replies = await client.execute_command("CLIENT", "LIST", target_nodes=await masters(client))
        texts = replies.values() if isinstance(replies, dict) else [replies]
    else:
        texts = [await client.execute_command("CLIENT", "LIST")]
    return "\n".join(
        t.decode("utf-8", "replace") if isinstance(t, bytes) else str(t) for t in texts
    )

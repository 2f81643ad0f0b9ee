"""Who is processing: the Redis connections BullMQ workers name after their queue.

Python workers name theirs ``<prefix>:<queue>[:w:<worker name>]``, Node workers
``<prefix>:<base64 of queue>[:w:<worker name>]``; each library lists only its own, so both forms
are read here from one ``CLIENT LIST``.
"""

from __future__ import annotations

import base64
from dataclasses import dataclass
from typing import Any

from queues.connection import get_client
from queues.keys import QueueRef
from queues.redis_errors import translate_redis_errors


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


def match_workers(clients: list[dict[str, str]], refs: list[QueueRef]) -> list[WorkerConnection]:
    owners: dict[str, tuple[QueueRef, str]] = {}
    for ref in refs:
        for base, library in _names(ref).items():
            owners[base] = (ref, library)
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
    async with translate_redis_errors():
        text = await get_client().execute_command("CLIENT", "LIST")  # type: ignore[no-untyped-call]
    if isinstance(text, bytes):
        text = text.decode("utf-8", "replace")
    return match_workers(parse_client_list(str(text)), refs)

"""Django's Tasks API on BullMQ: ``TASKS = {"default": {"BACKEND": "queues.tasks.BullMQBackend",
...}}`` (see ``backend.py``).

- ``backend.py``: the backend (enqueue, results); ``mapping.py``: a task and its result as a
  BullMQ job, and back; ``loop.py``: the event loop and Redis clients it uses;
- ``resolve.py``: a task found by its path, never importing anything; ``runner.py``: how
  ``runqueueworker`` runs task jobs; ``api.py``: ``django.tasks`` or its backport.
"""

from __future__ import annotations

from typing import Any

__all__ = ["BullMQBackend"]


def __getattr__(name: str) -> Any:
    # The backend is imported when Django asks for it by its path, not with the package: the
    # dashboard reads a task job (mapping.py) without loading the backend's Redis clients.
    if name == "BullMQBackend":
        from queues.tasks.backend import BullMQBackend

        return BullMQBackend
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")

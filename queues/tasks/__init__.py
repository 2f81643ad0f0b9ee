"""Django's Tasks API on BullMQ: ``TASKS = {"default": {"BACKEND": "queues.tasks.BullMQBackend",
...}}`` (see ``backend.py``).

- ``backend.py``: the backend (enqueue, results); ``mapping.py``: a task and its result as a
  BullMQ job, and back; ``loop.py``: the event loop and Redis clients it uses;
- ``resolve.py``: a task found by its path, never importing anything; ``runner.py``: how
  ``runqueueworker`` runs task jobs; ``api.py``: ``django.tasks`` or its backport.
"""

from __future__ import annotations

from queues.tasks.backend import BullMQBackend

__all__ = ["BullMQBackend"]

"""A task found by its dotted path (a job's name), among modules already imported only.

Job names come from Redis, which anyone who may add a job writes: a name must never make a
process import a module or call something that is not a task. So the path's module has to be
imported already (the worker imports those listed in ``WORKER["modules"]`` or ``--module``;
a web process, those of its own code), and what the path names has to be a task whose own path
it is.
"""

from __future__ import annotations

import sys
from typing import Any

from queues.tasks.api import Task


def resolve_task(path: str) -> Task[Any, Any] | None:
    module_name, _, attribute = path.rpartition(".")
    module = sys.modules.get(module_name) if module_name else None
    if module is None or not attribute.isidentifier():
        return None
    found = vars(module).get(attribute)
    if not isinstance(found, Task) or found.module_path != path:
        return None
    return found

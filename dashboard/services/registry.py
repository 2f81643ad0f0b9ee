"""What each event loop runs in the background, and what it keeps for its pages: one registry,
keyed by event loop and then by slot.

A server process runs one event loop; tests run one per test, and each test's services, hub and
shared reads must be its loop's alone. A service's module names its slot (``Slot("live-reader")``)
and asks here for its running value; ``lifecycle.py`` decides when services start and stop. This
module imports nothing of Bullpen's but the cancelling helper, so that every service's module can
use it without importing the others.
"""

from __future__ import annotations

import asyncio
import contextvars
from collections.abc import Callable, Coroutine
from dataclasses import dataclass, field
from typing import Any, Generic, TypeVar, cast

from queues.cancelling import cancel_and_wait

T = TypeVar("T")


@dataclass(frozen=True)
class Slot(Generic[T]):
    """A place in each loop's registry: ``kind`` names the service (``"bulk-actions"``), ``key``
    one of its instances (a connection's name)."""

    kind: str
    key: str = ""

    @property
    def name(self) -> str:
        return f"bullpen-{self.kind}-{self.key}" if self.key else f"bullpen-{self.kind}"


@dataclass
class _Entry:
    value: Any
    task: asyncio.Task[None] | None = None


@dataclass
class _Loop:
    entries: dict[Slot[Any], _Entry] = field(default_factory=dict)


_loops: dict[asyncio.AbstractEventLoop, _Loop] = {}


def _here() -> _Loop:
    loop = asyncio.get_running_loop()
    found = _loops.get(loop)
    if found is None:
        # Loops closed without stopping their services (a test's) are dropped here.
        for closed in [other for other in _loops if other.is_closed()]:
            del _loops[closed]
        found = _loops[loop] = _Loop()
    return found


def kept(slot: Slot[T], make: Callable[[], T]) -> T:
    """This loop's one value of ``slot``, made at its first use (no task of its own)."""
    entries = _here().entries
    entry = entries.get(slot)
    if entry is None:
        entry = entries[slot] = _Entry(make())
    return cast(T, entry.value)


def ensure(slot: Slot[T], make: Callable[[T | None], tuple[T, Coroutine[Any, Any, None]]]) -> T:
    """``slot``'s value in this loop, its task running: started when it is not, or again when
    it ended (``make`` gets the value the ended one left, or None the first time).

    The task runs in a context of its own: it outlives the request or socket starting it,
    whose context carries the thread Django runs its database calls in, which ends with it.
    """
    entries = _here().entries
    entry = entries.get(slot)
    if entry is not None and entry.task is not None and not entry.task.done():
        return cast(T, entry.value)
    value, work = make(None if entry is None else cast(T, entry.value))
    loop = asyncio.get_running_loop()
    task = loop.create_task(work, name=slot.name, context=contextvars.Context())
    entries[slot] = _Entry(value, task)
    return value


def running(slot: Slot[T]) -> T | None:
    """``slot``'s value while its task runs in this loop, else None."""
    entry = _here().entries.get(slot)
    if entry is None or entry.task is None or entry.task.done():
        return None
    return cast(T, entry.value)


def running_in(loop: asyncio.AbstractEventLoop, slot: Slot[T]) -> T | None:
    """:func:`running` for ``loop``, asked from outside it."""
    found = _loops.get(loop)
    entry = None if found is None else found.entries.get(slot)
    if entry is None or entry.task is None or entry.task.done():
        return None
    return cast(T, entry.value)


def task_of(slot: Slot[Any]) -> asyncio.Task[None] | None:
    entry = _here().entries.get(slot)
    return None if entry is None else entry.task


def tasks(kind: str | None = None) -> list[asyncio.Task[None]]:
    """This loop's service tasks (of ``kind`` alone, when given), in the order they started."""
    entries = _here().entries
    return [e.task for s, e in entries.items() if e.task and kind in (None, s.kind)]


def slots(kind: str) -> list[Slot[Any]]:
    return [slot for slot in _here().entries if slot.kind == kind]


def running_anywhere(slot: Slot[Any]) -> bool:
    """Whether any loop of this process runs ``slot``'s task (asked from any thread)."""
    return any(running_in(loop, slot) is not None for loop in list(_loops))


async def stop(*chosen: Slot[Any]) -> list[Any]:
    """Stop the tasks of ``chosen`` (every slot of this loop when none is given, the last
    started first) and forget them; their values, for whatever else they hold to close."""
    entries = _here().entries
    order = list(chosen) if chosen else list(reversed(entries))
    values: list[Any] = []
    for slot in order:
        entry = entries.pop(slot, None)
        if entry is not None:
            await cancel_and_wait(entry.task)
            values.append(entry.value)
    if not entries:
        _loops.pop(asyncio.get_running_loop(), None)
    return values

"""The oldest waiting job of each queue, kept between alert passes while nothing happened to
the queue.

Reading it costs two commands a queue with jobs waiting (its id at the wait list's end, then
its hash), most of an alert pass's reads at thousands of queues. Every change of a wait list
writes an event to the queue's stream, which the live reader counts: while a queue's count of
events taken is the same as at the last pass (in the same era of the reader's counts), its
oldest waiting job is the same, and so is the time it became due. A kept job is read again
after ``KEPT_FOR_S`` seconds whatever the events say (a change no event told of).
"""

from __future__ import annotations

import time
from collections.abc import Callable, Hashable

from queues.reads.keys import QueueRef

# A queue's token from the live reader: equal between two passes while no event came (None:
# the reader cannot say).
Still = Callable[[QueueRef], Hashable | None]

KEPT_FOR_S = 300.0
_MOST = 100_000  # queues kept at most (forgotten whole when full)

# Queue → (the reader's token, when the oldest waiting job became due (ms), when it was read).
_kept: dict[QueueRef, tuple[Hashable, int, float]] = {}


def known_age(ref: QueueRef, token: Hashable | None, now_ms: int) -> int | None:
    """How long ``ref``'s oldest waiting job has waited, from what was kept, when ``token``
    says nothing happened to the queue since it was read (None: read it)."""
    kept = _kept.get(ref)
    if token is None or kept is None or kept[0] != token:
        return None
    if time.monotonic() - kept[2] > KEPT_FOR_S:
        return None
    return max(0, now_ms - kept[1])


def keep(ref: QueueRef, token: Hashable | None, age_ms: int | None, now_ms: int) -> None:
    """Keep what a read found, under the reader's token for the queue now. A read without a
    token (a page's) leaves what is kept alone: kept under a token, it holds while the token
    does."""
    if token is None:
        return
    if age_ms is None:
        _kept.pop(ref, None)
        return
    if len(_kept) >= _MOST:
        _kept.clear()
    _kept[ref] = (token, now_ms - age_ms, time.monotonic())


def forget() -> None:
    """Another process read the queues meanwhile (a lease taken over): read them all again."""
    _kept.clear()

"""The lists a view of every queue keeps, made before the first view asks.

A view of every queue takes the readers' summaries through their kept hand-over
(queues/handover/summaries.py) and lists them from the overview's kept list
(dashboard/pages/overview_ledger.py). Each is made whole when first asked for, when the
reader's era, the queues it follows or the queue list changed, and (the kept list) when a view
read the queues from Redis instead: at 50,000 queues that took the first view after the readers
vouched about a second of CPU, in one step of the event loop that serves the websockets. Here
both are made in the background once the readers are current (the kept list once they vouch
for three queues in four: until a view reads the others, they stand as the list had them),
``SLICE`` queues a step of the loop, so that the first view finds them made and changes only
the queues changed since. They answer as when a view makes them: the same functions make
them, and a view that comes first makes them itself. The alerts every page reads are read
then too (their reads kept: each failed job's signature, the last hour's failures).
"""

from __future__ import annotations

import asyncio
import logging
from dataclasses import dataclass

from redis.exceptions import RedisError

from dashboard.live.reader_counts import ReaderCounts
from dashboard.pages import overview_page
from queues.config.settings import get_config
from queues.errors import BullpenError
from queues.live.follower import VIEW_LAG
from queues.reads.discovery import discovered
from queues.reads.keys import QueueRef
from queues.redis.connections import several
from queues.redis.per_connection import by_connection

log = logging.getLogger("bullpen.live")

EVERY = 1.0  # seconds between two looks at whether the lists need making


@dataclass(frozen=True)
class _Made:
    """What the lists were last made from: the queue list (the same object while no queue came
    or went), each reader's era and count of changes to the queues it follows, the settings
    and the kept list's count of remakes."""

    queues: tuple[QueueRef, ...]
    eras: tuple[tuple[str, int], ...]
    config: object
    remakes: int

    def same(self, other: _Made | None) -> bool:
        return (
            other is not None
            and self.queues is other.queues
            and self.eras == other.eras
            and self.config is other.config
            and self.remakes == other.remakes
        )


async def keep_ready() -> None:
    """Looks every ``EVERY`` s, for as long as the readers run."""
    made: _Made | None = None
    while True:
        await asyncio.sleep(EVERY)
        try:
            made = await make_ready(made)
        except (BullpenError, RedisError, OSError) as error:
            log.debug("live updates: the kept lists were not made: %s", error)  # views say so
        except Exception:  # the readers go on; a view makes the lists itself
            log.exception("live updates: the kept lists were not made")


async def make_ready(made: _Made | None = None) -> _Made | None:
    """Makes the kept hand-overs and the kept list whole where a view would; what they were
    made from (``made`` when nothing needed making, None while the readers do not vouch for
    every queue: a view then reads the others from Redis and makes its own list)."""
    known = ReaderCounts()
    queues = (await discovered()).queues
    eras = tuple(
        (follower.counts.era, follower.streams.followed_changes)
        for follower in known.followers.values()
    )
    now = _Made(queues, eras, get_config(), overview_page.listing_remakes())
    if now.same(made) or not known.followers or not queues:
        return made
    every = list(queues)
    shares = {every[0].connection: every} if not several() else by_connection(every)
    for name, share in shares.items():
        follower = known.followers.get(name)
        if follower is None or not follower.current_within(VIEW_LAG):
            return None
        for _ in follower.handover.preparing(share):
            await asyncio.sleep(0)
    have = known(every)
    remakes = await overview_page.prepare_listing(every, have)
    if not known.complete or len(have) != len(every):
        return None  # looked at again: a view reads the others from Redis meanwhile
    await overview_page.prepare_alerts(list(have.values()), known.still)
    return _Made(queues, eras, now.config, remakes)

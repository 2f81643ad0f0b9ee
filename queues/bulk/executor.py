"""The one runner of bulk actions per deployment and connection.

Every server process may start one per connection (queues/redis/connections.py); only the holder of
that connection's lease in Redis executes its actions, so an action runs once however many
processes serve the dashboard, and on the Redis its queue is on. An action is independent of
the request that asked for it: a closed tab changes nothing. If the holder dies, another
process (or the same one, restarted) takes the lease within its time to live and resumes
every unfinished action from its progress in Redis, or marks it interrupted when its last
progress is too old to go on without surprising anyone. When an action ends, the hooks tell
the pages and write the audit row; only then does it leave the work list, so an end is never
lost to a crash either.
"""

from __future__ import annotations

import asyncio
import logging
import time
from typing import Protocol

import redis.exceptions

from queues.bulk.counted import CancelRequested, LostAction
from queues.bulk.kind import Work
from queues.bulk.kinds import KINDS
from queues.bulk.record import CANCELLED, DONE, FAILED, INTERRUPTED, RUNNING, ActionRecord, now_ms
from queues.bulk.settings import BulkSettings
from queues.bulk.store import store_for
from queues.cancelling import cancel_and_wait, finish_despite_cancel, raise_if_cancelled
from queues.errors import BullpenError, RedisUnavailable
from queues.live.lease import Lease

log = logging.getLogger("bullpen.actions")

# Redis away or refusing writes: the action waits and goes on from its progress.
TRANSIENT = (redis.exceptions.RedisError, OSError, RedisUnavailable)
# Consecutive transient failures (backing off up to 30 s) before an action is marked failed.
MAX_FAILURES = 20


class Hooks(Protocol):
    async def progress(self, record: ActionRecord) -> None:
        """Tell the pages how far it got."""
        ...

    async def finished(self, record: ActionRecord) -> None:
        """Audit the end and tell the pages; may run again for the same end after a crash."""
        ...


class Runner:
    def __init__(
        self,
        hooks: Hooks,
        settings: BulkSettings | None = None,
        connection: str | None = None,
    ) -> None:
        self.hooks = hooks
        self.settings = settings or BulkSettings.from_config()
        self.store = store_for(connection)
        self.connection = self.store.connection
        self.lease = Lease(self.store.redis, self.store.lease_key, self.settings.lease_ttl_ms)
        self._wake = asyncio.Event()
        self._tasks: dict[str, asyncio.Task[None]] = {}
        self._failures: dict[str, int] = {}
        self._not_before: dict[str, float] = {}
        self._renewed_at = 0.0
        self._troubled = False  # Redis trouble already logged: one line per outage, not per pass

    def poke(self) -> None:
        """An action was just submitted here: look now rather than at the next poll."""
        self._wake.set()

    async def run(self) -> None:
        renew_every = self.settings.lease_ttl_ms / 3000
        try:
            while True:
                raise_if_cancelled()
                await self._pass()
                wait = min(renew_every, self.settings.poll_interval)
                try:
                    await asyncio.wait_for(self._wake.wait(), wait)
                except TimeoutError:
                    pass
                self._wake.clear()
        finally:
            # To its end although the stopper cancels again meanwhile (every RECANCEL_AFTER):
            # an action still ending when it does would run on past the stop, on Redis.
            await finish_despite_cancel(self._stopped())

    async def _stopped(self) -> None:
        await cancel_and_wait(*self._tasks.values())
        try:
            await self.lease.release()
        except TRANSIENT:
            pass  # it expires by itself

    async def _pass(self) -> None:
        self._tasks = {k: task for k, task in self._tasks.items() if not task.done()}
        try:
            held = await self.lease.acquire_or_renew()
            if held:
                self._renewed_at = time.monotonic()
                await self._start_pending()
        except TRANSIENT as error:
            # Without a renewal another process may take over: stop before the lease can expire.
            if time.monotonic() - self._renewed_at > self.settings.lease_ttl_ms / 2000:
                await self._stop_all()
            if not self._troubled:
                log.warning(
                    "bulk actions on %s: Redis trouble, waiting for it: %s", self.connection, error
                )
            self._troubled = True
            return
        if self._troubled:
            log.info("bulk actions on %s: Redis answers again", self.connection)
            self._troubled = False
        if not held:
            await self._stop_all()

    async def _stop_all(self) -> None:
        # Their progress is in Redis: the lease's new holder goes on from there.
        await cancel_and_wait(*self._tasks.values())
        self._tasks.clear()

    async def _start_pending(self) -> None:
        room = self.settings.max_running - len(self._tasks)
        if room <= 0:
            return
        now = time.monotonic()
        for action_id in await self.store.pending_ids(self.settings.max_running * 4 + 20):
            if room <= 0:
                return
            if action_id in self._tasks or self._not_before.get(action_id, 0.0) > now:
                continue
            self._tasks[action_id] = asyncio.get_running_loop().create_task(
                self._execute(action_id), name=f"bullpen-action-{action_id}"
            )
            room -= 1

    async def _execute(self, action_id: str) -> None:
        try:
            await self._execute_one(action_id)
        except LostAction:
            return  # another runner holds it now
        except Exception as error:
            failures = self._failures.get(action_id, 0) + 1
            self._failures[action_id] = failures
            delay = min(30.0, 0.5 * 2**failures)
            self._not_before[action_id] = time.monotonic() + delay
            if isinstance(error, TRANSIENT):
                log.warning("bulk action %s paused (%s); again in %.1f s", action_id, error, delay)
            else:  # e.g. the audit log's database: its end is written again later
                log.exception("bulk action %s: cannot go on; again in %.1f s", action_id, delay)
            if failures >= MAX_FAILURES:
                await self._give_up(action_id, f"It kept failing: {error}")
            return
        finally:
            self._wake.set()  # a slot is free
        self._failures.pop(action_id, None)
        self._not_before.pop(action_id, None)

    async def _execute_one(self, action_id: str) -> None:
        record = await self.store.load(action_id)
        if record is None:
            await self.store.forget(action_id)
            return
        if record.finished:
            await self._settle(record)
            return
        owner = self.lease.owner
        resumed = record.state == RUNNING
        age_s = (now_ms() - record.last_sign_ms) / 1000
        too_old = resumed and record.owner != owner and age_s > self.settings.resume_within_s
        if await self.store.claim(action_id, owner) != 1:
            await self._settle_if_finished(action_id)
            return
        record = await self.store.load(action_id) or record
        kind = KINDS.get(record.kind)
        if kind is None:
            await self._end(record, INTERRUPTED, f"This version of Bullpen has no {record.kind!r}")
            return
        if too_old:
            await self._end(
                record,
                INTERRUPTED,
                f"Its server stopped after {record.count} of {record.total} jobs; not resumed: "
                f"its last progress was {age_s:.0f} s ago, more than the "
                f"{self.settings.resume_within_s:g} s allowed (ACTIONS resume_within_s)",
            )
            return
        work = Work(record, self.store, owner, self.settings, self.hooks.progress)
        work.resumed = resumed
        await work.progress(force=True)
        try:
            await kind.run(work)
        except CancelRequested:
            fresh = await self.store.load(action_id)
            who = fresh.cancel_by if fresh else ""
            await self._end(work.record, CANCELLED, f"Cancelled by {who}" if who else "Cancelled")
            return
        except (LostAction, *TRANSIENT):
            raise
        except BullpenError as error:  # the queue refused (e.g. it is gone)
            await self._end(work.record, FAILED, str(error))
            return
        except Exception:
            log.exception("bulk action %s: unexpected error", action_id)
            await self._end(work.record, FAILED, "Unexpected error (see the server's log)")
            return
        await self._end(work.record, DONE, "")

    async def _end(self, record: ActionRecord, state: str, error: str) -> None:
        await self.store.finish(record.id, self.lease.owner, state, error, record.detail)
        await self._settle_if_finished(record.id)

    async def _settle_if_finished(self, action_id: str) -> None:
        fresh = await self.store.load(action_id)
        if fresh is not None and fresh.finished:
            await self._settle(fresh)

    async def _settle(self, record: ActionRecord) -> None:
        if not record.settled:
            await self.hooks.finished(record)
            await self.store.settle(record.id, self.settings.keep_s)

    async def _give_up(self, action_id: str, reason: str) -> None:
        try:
            record = await self.store.load(action_id)
            if record is not None and not record.finished:
                await self.store.claim(action_id, self.lease.owner)
                await self.store.finish(action_id, self.lease.owner, FAILED, reason, record.detail)
        except TRANSIENT as error:
            log.warning("bulk action %s: cannot mark it failed yet: %s", action_id, error)

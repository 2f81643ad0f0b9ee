"""Kinds that sweep a whole state of a queue in batches, inside Redis, through BullMQ's own
scripts: retry-all and promote-all (``moveJobsToWait``), clean (``cleanJobsInSet``).

Nothing is loaded into this process, and a resumed action goes on from where Redis is: its
count is in the record, and what it already moved is no longer in the state it sweeps.
"""

from __future__ import annotations

from typing import Any

from redis.asyncio.client import Pipeline

from queues.actions.handles import queue_for_actions
from queues.bulk.counted import COUNT_BEFORE_MOVE, COUNT_CLEANED, count_keys
from queues.bulk.kind import Prepared, Work
from queues.bulk.record import now_ms
from queues.errors import BadParameter
from queues.reads.keys import QueueRef
from queues.reads.scripts import queue_script
from queues.redis.clients import get_client
from queues.redis.errors import translate_redis_errors

# BullMQ's promoteJobs passes this as the highest score: every delayed job.
EVERY_SCORE = 1.7976931348623157e308
CLEANABLE = ("completed", "failed", "delayed", "wait", "waiting", "prioritized", "paused")
# The states whose score is the time a job finished: there BullMQ's clean removes every job it
# reads, so a batch short of its size means nothing is left. Elsewhere it reads a window and
# removes only the old enough, so the user's limit goes to BullMQ in one call, as it always did.
_BATCHED_CLEAN = ("completed", "failed")
# Removed job ids kept for the audit log.
_ID_SAMPLE = 1000


class RetryAll:
    """Every failed (or completed) job that had finished when the action was asked for goes
    back to wait: jobs that fail meanwhile are not swept in."""

    name = "retry-all"

    async def prepare(self, ref: QueueRef, params: dict[str, Any], anchor_ms: int) -> Prepared:
        state = str(params.get("state") or "failed")
        if state not in ("failed", "completed"):
            raise BadParameter("state must be 'failed' or 'completed'")
        async with translate_redis_errors():
            total = int(await get_client(ref.connection).zcount(ref.key(state), 0, anchor_ms))
        return Prepared({"state": state}, total)

    async def run(self, work: Work) -> None:
        state = str(work.record.params.get("state") or "failed")
        await _move_all(work, state, work.record.anchor_ms)


class PromoteAll:
    name = "promote-all"

    async def prepare(self, ref: QueueRef, params: dict[str, Any], anchor_ms: int) -> Prepared:
        async with translate_redis_errors():
            total = int(await get_client(ref.connection).zcard(ref.key("delayed")))
        return Prepared({}, total)

    async def run(self, work: Work) -> None:
        await _move_all(work, "delayed", EVERY_SCORE)


async def _move_all(work: Work, state: str, max_score: float) -> None:
    scripts = queue_for_actions(work.ref).scripts
    move = scripts.commands["moveJobsToWait"]
    redis = work.store.redis
    count_before = redis.register_script(COUNT_BEFORE_MOVE)
    size = work.settings.batch_size
    await work.check()
    while True:
        keys, args = scripts.moveJobsToWaitArgs(state, size, max_score)

        async def build(pipe: Pipeline, keys: list[str] = keys, args: list[Any] = args) -> None:
            # keys[2] is the state's set, args[1] the highest score the script moves.
            counted = count_keys(redis, work.record_key, keys[2])
            await queue_script(redis, pipe, count_before, counted, [args[1], size, now_ms()])
            await queue_script(redis, pipe, move, keys, args)

        moved, more = await work.counted(build, count_at=0)
        work.record.count += int(moved)
        await work.progress()
        if not int(more):  # the script says 1 while a full batch was moved
            return
        await work.between_batches()


class Clean:
    """Remove the jobs of a state older than a grace period (at most ``limit``, 0: all)."""

    name = "clean"

    async def prepare(self, ref: QueueRef, params: dict[str, Any], anchor_ms: int) -> Prepared:
        state = str(params.get("state") or "")
        if state not in CLEANABLE:
            raise BadParameter(f"state must be one of: {', '.join(CLEANABLE)}")
        grace_ms, limit = params.get("grace_ms"), params.get("limit")
        if not isinstance(grace_ms, int) or not isinstance(limit, int) or grace_ms < 0 or limit < 0:
            raise BadParameter("grace_ms and limit must be 0 or more")
        bull_state = _bull_state(state)
        client = get_client(ref.connection)
        async with translate_redis_errors():
            if bull_state in _BATCHED_CLEAN:
                total = int(await client.zcount(ref.key(bull_state), 0, anchor_ms - grace_ms))
            elif bull_state in ("wait", "paused"):
                total = int(await client.llen(ref.key(bull_state)))
            else:
                total = int(await client.zcard(ref.key(bull_state)))
        return Prepared(
            {"state": state, "grace_ms": grace_ms, "limit": limit},
            min(total, limit) if limit else total,
        )

    async def run(self, work: Work) -> None:
        params = work.record.params
        bull_state = _bull_state(str(params["state"]))
        limit = int(params["limit"])
        # Fixed when it was asked for: a resumed clean removes no younger jobs.
        cutoff = work.record.anchor_ms - int(params["grace_ms"])
        batched = bull_state in _BATCHED_CLEAN
        if not batched and work.record.updated_ms:
            return  # its one call to BullMQ was made, and counted, before a restart
        scripts = queue_for_actions(work.ref).scripts
        clean = scripts.commands["cleanJobsInSet"]
        redis = work.store.redis
        count_cleaned = redis.register_script(COUNT_CLEANED)
        sample = [str(i) for i in work.record.detail.get("jobIds") or []]
        await work.check()
        while not limit or work.record.count < limit:
            if batched and not await redis.zcount(work.ref.key(bull_state), 0, cutoff):
                # Nothing left to remove: BullMQ's clean would only write its event, a write
                # Redis refuses at maxmemory, when a clean must work.
                return
            size = limit - work.record.count if limit else 0
            if batched:
                size = min(size, work.settings.batch_size) if size else work.settings.batch_size
            keys, args = scripts.cleanJobsInSetArgs(bull_state, 0, size)
            args[1] = cutoff  # the script's "older than" timestamp
            # keys[1] is the queue's event stream.
            newest = await redis.xrevrange(keys[1], count=1)
            before = str(newest[0][0]) if newest else ""

            async def build(
                pipe: Pipeline, keys: list[str] = keys, args: list[Any] = args, before: str = before
            ) -> None:
                await queue_script(redis, pipe, clean, keys, args)
                counted = count_keys(redis, work.record_key, keys[1])
                await queue_script(redis, pipe, count_cleaned, counted, [now_ms(), before])

            removed, cleaned = await work.counted(build, count_at=1)
            work.record.count += int(cleaned)
            if len(sample) < _ID_SAMPLE and removed:
                sample += [str(i) for i in removed][: _ID_SAMPLE - len(sample)]
                work.record.detail["jobIds"] = sample
                await work.store.save_detail(work.record.id, work.record.detail)
            await work.progress()
            if not batched or int(cleaned) < size:
                return
            await work.between_batches()


async def older_than(ref: QueueRef, state: str, grace_ms: int, now: int) -> int | None:
    """How many of the state's jobs a clean with this grace would find now, where that is known
    without reading the jobs: completed and failed jobs are kept by the time they finished.
    Elsewhere (None) BullMQ's clean reads each job's own time."""
    bull_state = _bull_state(state)
    if bull_state not in _BATCHED_CLEAN:
        return None
    async with translate_redis_errors():
        return int(await get_client(ref.connection).zcount(ref.key(bull_state), 0, now - grace_ms))


def _bull_state(state: str) -> str:
    return "wait" if state == "waiting" else state

"""Which queue holds dead letters, and how to read one: the dashboard reads them, the worker
runner (queues/runner/dead_letter.py) writes them, queues/actions/dead_letter_replay.py sends
them back, queues/actions/dead_letter_drop.py drops those whose original completed since.

A dead letter stays while its original job moves on (replayed, or retried by hand in its own
queue, it may complete): each dead letter is shown with its original's current state.

A dead letter's data is an envelope around the job that failed for good: ``{"queue",
"prefix", "jobId", "name", "failedReason", "attemptsMade", "failedAt", "worker",
"stacktrace", "opts", "data"}``.
"""

from __future__ import annotations

import json
from collections.abc import Collection, Sequence
from dataclasses import dataclass
from typing import Any

from queues.config.settings import DEFAULTS, default_prefix, get_config
from queues.errors import QueueNotFound
from queues.reads.discovery import known
from queues.reads.keys import QueueRef
from queues.redis import connections, fastpipe
from queues.redis.clients import get_client
from queues.redis.errors import translate_redis_errors

_DECODER = json.JSONDecoder()
_SPACE = " \t\n\r"
# The longest escape a cut can split (``\uXXXX``): how far back a cut string is retried.
_LONGEST_ESCAPE = 6


def dead_letter_name() -> str:
    given = get_config().get("WORKER") or {}
    return str(given.get("dead_letter_queue") or DEFAULTS["WORKER"]["dead_letter_queue"])


def dead_letter_ref(connection: str | None = None) -> QueueRef:
    """The dead-letter queue on ``connection`` (None: the default one)."""
    return QueueRef(default_prefix(), dead_letter_name(), connection or connections.default_name())


def is_dead_letter_queue(slug: Any) -> bool:
    """Whether ``slug`` names the dead-letter queue of any connection."""
    # A slug holds its queue's name: most are told apart without parsing (thousands a view).
    if not isinstance(slug, str) or dead_letter_name() not in slug:
        return False
    try:
        ref = QueueRef.from_slug(slug)
    except QueueNotFound:
        return False
    return ref.slug == slug and ref == dead_letter_ref(ref.connection)


def _skip_space(text: str, index: int) -> int:
    while index < len(text) and text[index] in _SPACE:
        index += 1
    return index


def _cut_string(text: str, start: int) -> str | None:
    """A string value that the cut ended inside: what came before the cut."""
    if start >= len(text) or text[start] != '"':
        return None
    for end in range(len(text), max(start, len(text) - _LONGEST_ESCAPE), -1):
        try:
            value, _ = _DECODER.raw_decode(text[start:end] + '"')
        except ValueError:
            continue
        return value if isinstance(value, str) else None
    return None


def leading_fields(text: str, partial: Collection[str] = ()) -> dict[str, Any]:
    """The top-level fields of a JSON object cut short (a list row's capped data) that come
    whole before the cut; for a key in ``partial``, also the start of a string value the cut
    ended inside, marked with "…"."""
    fields: dict[str, Any] = {}
    index = _skip_space(text, 0)
    if not text.startswith("{", index):
        return fields
    index += 1
    while True:
        index = _skip_space(text, index)
        try:
            key, index = _DECODER.raw_decode(text, index)
        except ValueError:
            return fields
        index = _skip_space(text, index)
        if not isinstance(key, str) or not text.startswith(":", index):
            return fields
        index = _skip_space(text, index + 1)
        try:
            value, index = _DECODER.raw_decode(text, index)
        except ValueError:
            start = _cut_string(text, index) if key in partial else None
            if start is not None:
                fields[key] = start + "…"
            return fields
        fields[key] = value
        index = _skip_space(text, index)
        if not text.startswith(",", index):
            return fields
        index += 1


def read_envelope(data: Any) -> dict[str, Any] | None:
    """A dead letter's envelope from its job's data (decoded, or text cut by the list cap);
    None when the data is not one."""
    fields: dict[str, Any] = {}
    if isinstance(data, dict):
        fields = data
    elif isinstance(data, str):
        fields = leading_fields(data, partial=("failedReason",))
    if not isinstance(fields.get("queue"), str) or fields.get("jobId") in (None, ""):
        return None
    return fields


@dataclass(frozen=True)
class Original:
    """Where a dead letter came from, and whether it is still there."""

    queue: str
    job_id: str
    slug: str | None  # None: not a queue this dashboard reads (another prefix)
    queue_exists: bool
    job_exists: bool
    # The original job's state now ("completed", "failed", ..., "removed"); None: not read.
    state: str | None = None


def original_ref(envelope: dict[str, Any], connection: str | None = None) -> QueueRef | None:
    """The original job's queue (on the dead-letter queue's ``connection``); None when it is
    under a prefix this dashboard does not read."""
    prefix = envelope.get("prefix") or default_prefix()
    ref = QueueRef(str(prefix), str(envelope["queue"]), connection or connections.default_name())
    try:
        QueueRef.from_slug(ref.slug)
    except QueueNotFound:
        return None
    return ref if ref.name else None


# The sorted sets a job's state is read from, in BullMQ's getState order; then the lists.
_ZSET_STATES = ("completed", "failed", "delayed", "prioritized", "waiting-children")
_LIST_STATES = (("active", "active"), ("wait", "waiting"), ("paused", "waiting"))


async def original_states(
    dead_letters: QueueRef, envelopes: Sequence[dict[str, Any] | None]
) -> list[str | None]:
    """The current state of each envelope's original job (None: no envelope, or a queue this
    dashboard does not read), read on the dead-letter queue's connection in one round trip
    (and one more for originals in no sorted set, which are looked for in the lists)."""
    refs = [
        original_ref(envelope, dead_letters.connection) if envelope else None
        for envelope in envelopes
    ]
    asked = [
        (index, ref, str(envelope["jobId"]))
        for index, (ref, envelope) in enumerate(zip(refs, envelopes, strict=True))
        if ref is not None and envelope is not None
    ]
    states: list[str | None] = [None] * len(envelopes)
    if not asked:
        return states
    per = 1 + len(_ZSET_STATES)
    commands: list[fastpipe.Command] = []
    for _, ref, job_id in asked:
        commands.append(("EXISTS", ref.job_key(job_id)))
        commands.extend(("ZSCORE", ref.key(state), job_id) for state in _ZSET_STATES)
    redis = get_client(dead_letters.connection)
    async with translate_redis_errors():
        replies = await fastpipe.execute(redis, commands)
        in_lists = []
        for number, (index, ref, job_id) in enumerate(asked):
            exists, *scores = replies[number * per : (number + 1) * per]
            if exists != 1:
                states[index] = "removed"
                continue
            found = next(
                (state for state, score in zip(_ZSET_STATES, scores, strict=True) if _is(score)),
                None,
            )
            if found is None:
                in_lists.append((index, ref, job_id))
            states[index] = found
        if in_lists:
            positions = await fastpipe.execute(
                redis,
                [
                    ("LPOS", ref.key(suffix), job_id)
                    for _, ref, job_id in in_lists
                    for suffix, _ in _LIST_STATES
                ],
            )
            width = len(_LIST_STATES)
            for number, (index, _, _) in enumerate(in_lists):
                row = positions[number * width : (number + 1) * width]
                states[index] = next(
                    (name for (_, name), pos in zip(_LIST_STATES, row, strict=True) if _is(pos)),
                    "unknown",
                )
    return states


def _is(reply: Any) -> bool:
    return reply is not None and not isinstance(reply, Exception)


async def original_of(envelope: dict[str, Any], connection: str | None = None) -> Original:
    """``connection``: the dead-letter queue's, where the runner that wrote it works (None:
    the default one)."""
    queue = str(envelope["queue"])
    job_id = str(envelope["jobId"])
    ref = original_ref(envelope, connection)
    if ref is None:
        return Original(queue, job_id, None, False, False)
    async with translate_redis_errors():
        queue_exists = await known(ref)
    if not queue_exists:
        return Original(queue, job_id, ref.slug, False, False, "removed")
    (state,) = await original_states(dead_letter_ref(ref.connection), [envelope])
    return Original(queue, job_id, ref.slug, True, state != "removed", state)

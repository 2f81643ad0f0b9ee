"""Which queue holds dead letters, and how to read one: the dashboard reads them, the worker
runner (queues/runner/dead_letter.py) writes them, queues/actions/dead_letter_replay.py sends
them back.

A dead letter's data is an envelope around the job that failed for good: ``{"queue",
"prefix", "jobId", "name", "failedReason", "attemptsMade", "failedAt", "worker",
"stacktrace", "opts", "data"}``.
"""

from __future__ import annotations

import json
from collections.abc import Collection
from dataclasses import dataclass
from typing import Any

from queues import connections
from queues.conf import DEFAULTS, default_prefix, get_config
from queues.connection import get_client
from queues.discovery import known
from queues.errors import QueueNotFound
from queues.keys import QueueRef
from queues.redis_errors import translate_redis_errors

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
    if not isinstance(slug, str):
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


async def original_of(envelope: dict[str, Any], connection: str | None = None) -> Original:
    """``connection``: the dead-letter queue's, where the runner that wrote it works (None:
    the default one)."""
    queue = str(envelope["queue"])
    job_id = str(envelope["jobId"])
    prefix = envelope.get("prefix") or default_prefix()
    ref = QueueRef(str(prefix), queue, connection or connections.default_name())
    slug: str | None = ref.slug
    try:
        QueueRef.from_slug(ref.slug)
    except QueueNotFound:  # under a prefix this dashboard does not read
        slug = None
    if slug is None or not queue:
        return Original(queue, job_id, None, False, False)
    async with translate_redis_errors():
        queue_exists = await known(ref)
        job_exists = queue_exists and bool(
            await get_client(ref.connection).exists(ref.job_key(job_id))
        )
    return Original(queue, job_id, slug, queue_exists, job_exists)

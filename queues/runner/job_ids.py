"""Idempotent producers: job ids derived from business keys.

BullMQ ignores an add whose job id already exists (it answers with the existing id), so a job
id built from what makes the job unique (``email.42.weekly.2026-11-30``) turns a second enqueue
of the same work into a no-op. This holds while the first job is kept: ``removeOnComplete`` /
``removeOnFail`` (1,000 / 5,000 jobs by default) decide for how long.

Parts are joined with ``.``: Node BullMQ refuses custom ids holding ``:`` (and ids made only of
digits, which two or more joined parts never are). ``:``, ``.`` and ``%`` inside a part are
percent-encoded so that different keys never give the same id.
"""

from __future__ import annotations

from datetime import UTC, date, datetime

_ESCAPES = str.maketrans({"%": "%25", ".": "%2E", ":": "%3A"})


def _part(value: object) -> str:
    if isinstance(value, datetime):
        text = value.astimezone(UTC).isoformat(timespec="seconds")
    elif isinstance(value, date):
        text = value.isoformat()
    else:
        text = str(value)
    if not text:
        raise ValueError("A job id part cannot be empty")
    return text.translate(_ESCAPES)


def business_job_id(kind: str, *keys: object) -> str:
    """``business_job_id("email", 42, "weekly", day)`` → ``"email.42.weekly.2026-11-30"``."""
    if not keys:
        raise ValueError("A business job id needs at least one key after its kind")
    return ".".join(_part(part) for part in (kind, *keys))


def split_job_id(job_id: str) -> list[str]:
    """The parts of an id made by :func:`business_job_id`, decoded."""
    return [
        part.replace("%3A", ":").replace("%2E", ".").replace("%25", "%")
        for part in job_id.split(".")
    ]


def utc_day(moment: datetime | None = None) -> date:
    """The UTC day of ``moment`` (default: now): a common idempotency window."""
    return (moment or datetime.now(UTC)).astimezone(UTC).date()

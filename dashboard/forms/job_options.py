"""The options a job added from the dashboard may carry, and their bounds: BullMQ would store
anything, and a worker would then fail on it."""

from __future__ import annotations

from typing import Any

from django.core.exceptions import ValidationError

ADD_OPTIONS = {
    "delay",
    "priority",
    "attempts",
    "backoff",
    "jobId",
    "lifo",
    "removeOnComplete",
    "removeOnFail",
    "keepLogs",
}
_WHOLE_OPTIONS = {
    "delay": (0, 10 * 365 * 86_400_000),
    "priority": (0, 2_097_152),
    "attempts": (1, 1_000_000),
    "keepLogs": (0, 1_000_000_000),
}
_LONGEST_MS = 10**12


def _whole(value: Any, low: int, high: int) -> bool:
    return isinstance(value, int) and not isinstance(value, bool) and low <= value <= high


def _keep_setting(keep: Any) -> bool:
    """``removeOnComplete`` / ``removeOnFail``: true, false, a count or ``{"count", "age"}``."""
    return (
        isinstance(keep, bool)
        or _whole(keep, 0, _LONGEST_MS)
        or (
            isinstance(keep, dict)
            and set(keep) <= {"count", "age"}
            and all(_whole(v, 0, _LONGEST_MS) for v in keep.values())
        )
    )


def _backoff(backoff: Any) -> bool:
    return _whole(backoff, 0, _LONGEST_MS) or (
        isinstance(backoff, dict)
        and isinstance(backoff.get("type"), str)
        and _whole(backoff.get("delay", 0), 0, _LONGEST_MS)
    )


def check_add_options(opts: Any) -> None:
    """Raises ``ValidationError`` naming the first option BullMQ's workers could not use."""
    if not isinstance(opts, dict):
        raise ValidationError("%(name)s must be a JSON object")
    unknown = set(opts) - ADD_OPTIONS
    if unknown:
        raise ValidationError(
            "Unsupported options: %(unknown)s", params={"unknown": ", ".join(sorted(unknown))}
        )
    if "jobId" in opts and (
        not isinstance(opts["jobId"], str) or ":" in opts["jobId"] or opts["jobId"].isdigit()
    ):
        raise ValidationError("jobId must be a string that is not a number and has no ':'")
    for key, (low, high) in _WHOLE_OPTIONS.items():
        if key in opts and not _whole(opts[key], low, high):
            raise ValidationError(f"{key} must be a whole number between {low} and {high}")
    if "lifo" in opts and not isinstance(opts["lifo"], bool):
        raise ValidationError("lifo must be true or false")
    if opts.get("backoff") is not None and not _backoff(opts["backoff"]):
        raise ValidationError('backoff must be a delay in ms or {"type": ..., "delay": ms}')
    for key in ("removeOnComplete", "removeOnFail"):
        if opts.get(key) is not None and not _keep_setting(opts[key]):
            raise ValidationError(f'{key} must be true, false, a count or {{"count", "age"}}')

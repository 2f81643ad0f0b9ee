"""Structured logs: one JSON object per line on stderr, with the job id on every job event.

``{"ts": "2026-11-30T09:00:00.123Z", "level": "info", "event": "completed", "queue": "email",
"job_id": "42", "name": "send", "attempt": 1, "duration_ms": 12.5}``

Events: ``added``, ``active``, ``completed``, ``failed`` (``final`` says whether it was the last
attempt, ``retry_in_ms`` when it was not), ``dead-lettered``, ``deferred`` (per-tenant limit),
``stalled``, ``abandoned`` (left active at shutdown: ``why`` says whether it was still running
at the deadline or its end could not be recorded), ``error``, and the
runner's own ``started`` / ``stop`` / ``draining`` / ``stopped``.

Embedded in a site, events go through the ``bullpen.worker`` logger like any other log.
``runqueueworker`` instead writes the lines straight to stderr (:func:`configure_json_logs`):
a busy worker logs thousands of events a second, and a ``LogRecord`` each cost a quarter of
its throughput.
"""

from __future__ import annotations

import json
import logging
import sys
import time
from typing import IO, Any

try:
    import orjson
except ImportError:  # pragma: no cover - orjson is in requirements.txt
    orjson = None  # type: ignore[assignment]

LOGGER = logging.getLogger("bullpen.worker")
_LEVELS = {logging.DEBUG: "debug", logging.INFO: "info", logging.WARNING: "warning"}


def _dumps(doc: dict[str, Any]) -> str:
    if orjson is not None:
        return orjson.dumps(doc, default=str).decode()
    return json.dumps(doc, default=str, separators=(",", ":"))


class _Clock:
    """``2026-11-30T09:00:00.123Z``; the part up to the second is formatted once a second."""

    second = -1
    prefix = ""


def _stamp(created: float) -> str:
    second = int(created)
    if second != _Clock.second:
        _Clock.prefix = time.strftime("%Y-%m-%dT%H:%M:%S", time.gmtime(second))
        _Clock.second = second
    return f"{_Clock.prefix}.{int(created * 1000) % 1000:03d}Z"


def json_line(event: str, level: int, fields: dict[str, Any], created: float) -> str:
    level_name = _LEVELS.get(level) or logging.getLevelName(level).lower()
    return _dumps({"ts": _stamp(created), "level": level_name, "event": event, **fields})


class _Sink:
    """Where ``runqueueworker`` writes its lines (None: use the logging module)."""

    stream: IO[str] | None = None
    level = logging.INFO


def log_event(event: str, level: int = logging.INFO, **fields: Any) -> None:
    stream = _Sink.stream
    if stream is not None:
        if level >= _Sink.level:
            stream.write(json_line(event, level, fields, time.time()) + "\n")
    elif LOGGER.isEnabledFor(level):
        LOGGER.log(level, event, extra={"event": event, "fields": fields})


def configure_json_logs(stream: IO[str] | None = None, level: int = logging.INFO) -> None:
    """Write the runner's events to ``stream`` (default stderr) as JSON lines."""
    _Sink.stream = stream or sys.stderr
    _Sink.level = level


def reset_json_logs() -> None:
    """Back to the ``bullpen.worker`` logger (tests)."""
    _Sink.stream = None

"""Which queue holds dead letters: the dashboard reads it, the worker runner writes it."""

from __future__ import annotations

from queues.conf import DEFAULTS, default_prefix, get_config
from queues.keys import QueueRef


def dead_letter_name() -> str:
    given = get_config().get("WORKER") or {}
    return str(given.get("dead_letter_queue") or DEFAULTS["WORKER"]["dead_letter_queue"])


def dead_letter_ref() -> QueueRef:
    return QueueRef(default_prefix(), dead_letter_name())

"""The runner's part of ``settings.BULLPEN``: ``BULLPEN["WORKER"]`` merged over its defaults
(``queues.conf.DEFAULTS["WORKER"]``), so a site sets only what it changes."""

from __future__ import annotations

from typing import Any

from queues.config.settings import DEFAULTS, get_config


def worker_config() -> dict[str, Any]:
    given = get_config().get("WORKER") or {}
    return {**DEFAULTS["WORKER"], **given}

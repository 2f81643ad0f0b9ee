"""``BULLPEN["REDACT"]`` compiled once: the rules every decoded job goes through, or None
when nothing is redacted (the hot paths then skip redaction altogether)."""

from __future__ import annotations

from functools import cache

from queues.config.settings import get_config, on_change
from queues.reads.redaction import Rules, compile_paths


@cache
def configured_rules() -> Rules | None:
    """The configured rules. A path that cannot be used raises (``bullpen.E016`` says which):
    a job is never shown unmasked because its setting is wrong."""
    paths = get_config()["REDACT"]
    if isinstance(paths, str):
        paths = paths.split()
    return compile_paths(paths) if paths else None


on_change(configured_rules.cache_clear)

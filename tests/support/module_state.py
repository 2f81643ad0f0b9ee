"""Per-process state that Bullpen's modules keep between requests, cleared between tests.

Clients and the settings cache are reset by ``override_settings`` (through ``setting_changed``);
what is listed here outlives a settings change on purpose in production, but one test's queues,
credentials and timers must not leak into the next test.
"""

from __future__ import annotations

from dashboard.auth import basic_sign_in
from dashboard.live import socket_limits
from queues.alerts import signatures, thresholds
from queues.failures import failure_groups
from queues.reads import discovery
from queues.redis import reachability
from queues.runner import json_logs


def reset() -> None:
    failure_groups.reset_shared()
    signatures.reset()
    discovery.reset()
    reachability.forget()
    thresholds._at_limit_since.clear()
    basic_sign_in.forget()
    json_logs.reset_json_logs()
    socket_limits.reset()

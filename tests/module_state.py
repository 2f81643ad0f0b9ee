"""Per-process state that Bullpen's modules keep between requests, cleared between tests.

Clients and the settings cache are reset by ``override_settings`` (through ``setting_changed``);
what is listed here outlives a settings change on purpose in production, but one test's queues,
credentials and timers must not leak into the next test.
"""

from __future__ import annotations

from dashboard import basic_sign_in, socket_limits
from queues import alert_signatures, alerts, discovery, failure_groups, reachability
from queues.runner import logs


def reset() -> None:
    failure_groups.reset_shared()
    alert_signatures.reset()
    discovery.reset()
    reachability.forget()
    alerts._at_limit_since.clear()
    basic_sign_in.forget()
    logs.reset_json_logs()
    socket_limits.reset()

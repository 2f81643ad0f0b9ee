"""How many live websockets each client keeps open in this process.

Each socket costs the process memory and a share of every live message's fan-out, so one client
may hold at most ``LIVE["max_sockets_per_client"]``; a browser needs one per tab. A signed-in
client is its user; anyone else is its address (the proxy's, unless the server is told to read
``X-Forwarded-For``, as daphne's ``--proxy-headers`` does).
"""

from __future__ import annotations

from collections import Counter
from typing import Any

from dashboard.auth.principal import Principal

_open: Counter[str] = Counter()


def client_of(principal: Principal, scope: dict[str, Any]) -> str:
    if principal.authenticated:
        return f"{principal.via}:{principal.username}"
    address = (scope.get("client") or ("",))[0]
    return f"address:{address}"


def enter(client: str, most: int) -> bool:
    """Count one more socket of ``client``; False (nothing counted) past ``most``."""
    if _open[client] >= most:
        return False
    _open[client] += 1
    return True


def leave(client: str) -> None:
    _open[client] -= 1
    if _open[client] <= 0:
        del _open[client]


def reset() -> None:
    """Forget every count (tests: one test's sockets are not the next one's)."""
    _open.clear()

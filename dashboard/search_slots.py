"""How many searches over every queue one client runs at once in this server process.

A search holds a slot from its request until its stream ends (finished, or cancelled when the
client went away); a client asking for more than ``MAX_PER_CLIENT`` at once is told to wait
(429) rather than given another scan of every queue.
"""

from __future__ import annotations

from collections import Counter

from django.http import HttpRequest

MAX_PER_CLIENT = 2

_running: Counter[str] = Counter()


def client_key(request: HttpRequest) -> str:
    """A signed-in user by name (every tab and address alike), anyone else by address."""
    principal = getattr(request, "bullpen_principal", None)
    username = getattr(principal, "username", "") if principal is not None else ""
    if username:
        return f"user:{username}"
    return f"addr:{request.META.get('REMOTE_ADDR', '')}"


class Slot:
    """One running search's place; ``release`` is safe to call more than once."""

    def __init__(self, key: str) -> None:
        self.key = key
        self._held = True
        _running[key] += 1

    def release(self) -> None:
        if self._held:
            self._held = False
            _running[self.key] -= 1
            if _running[self.key] <= 0:
                del _running[self.key]


def take(key: str) -> Slot | None:
    """A slot for ``key``, or None when it already runs as many searches as it may."""
    if _running[key] >= MAX_PER_CLIENT:
        return None
    return Slot(key)


def running(key: str) -> int:
    return _running[key]

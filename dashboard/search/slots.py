"""How many searches one client runs at once in this server process.

A search holds a slot from its request until its stream ends (finished, or cancelled when the
client went away); a client asking for more than its limit at once is told to wait (429)
rather than given another scan: ``MAX_PER_CLIENT`` searches over every queue, and apart from
them ``MAX_QUEUE_SEARCHES_PER_CLIENT`` searches of one queue (a queue page starts a new one
as its query changes, while the last may not have noticed its reader left).
"""

from __future__ import annotations

from collections import Counter

from django.http import HttpRequest, JsonResponse

MAX_PER_CLIENT = 2
MAX_QUEUE_SEARCHES_PER_CLIENT = 4

_running: Counter[str] = Counter()


def client_key(request: HttpRequest) -> str:
    """A signed-in user by name (every tab and address alike), anyone else by address."""
    # Whoever the request's guard found; open reads check no credentials, and go by address.
    principal = getattr(request, "bullpen_principal", None) or getattr(
        request, "_bullpen_principal", None
    )
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


def take(key: str, limit: int = MAX_PER_CLIENT) -> Slot | None:
    """A slot for ``key``, or None when it already runs ``limit`` searches."""
    if _running[key] >= limit:
        return None
    return Slot(key)


def too_many(limit: int) -> JsonResponse:
    response = JsonResponse(
        {"error": f"At most {limit} searches at once: wait for one to end"}, status=429
    )
    response["Retry-After"] = "1"
    return response


def running(key: str) -> int:
    return _running[key]

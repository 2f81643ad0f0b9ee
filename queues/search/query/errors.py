"""A query that cannot be read: where, and what was expected there."""

from __future__ import annotations

from queues.errors import BadParameter


class QuerySyntaxError(BadParameter):
    """``position``: the character (from 0) where reading stopped; ``expected``: what would have
    been read there. ``str()`` says both, for the box and the API's 400."""

    def __init__(self, position: int, expected: str, problem: str = "") -> None:
        self.position = position
        self.expected = expected
        found = f"{problem}: " if problem else ""
        super().__init__(f"{found}expected {expected} at character {position + 1}")

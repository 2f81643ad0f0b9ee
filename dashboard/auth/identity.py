"""Who a request or websocket is, as a value: the user's name and how they were let in.

A leaf: it imports nothing of Bullpen's, so the modules that only pass a principal around (the
audit log, websocket tickets) need none of the sign-in machinery that finds it (principal.py).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Literal

# "mcp": the MCP server's configured identity (dashboard/mcp/), with no request behind it.
Via = Literal["basic", "session", "anonymous", "mcp"]


@dataclass(frozen=True)
class Principal:
    username: str
    via: Via
    user: Any = None  # the Django user, when logged in through the site
    bad_credentials: bool = False  # basic credentials were sent and were wrong
    locked_out: bool = False  # ... and too many failures locked them out (answer 429)

    @property
    def authenticated(self) -> bool:
        return self.via != "anonymous"


ANONYMOUS = Principal("", "anonymous")

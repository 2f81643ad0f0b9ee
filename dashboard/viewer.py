"""What a viewer may do on a page: act (buttons, checkboxes) or only read, and why.

Pages and live updates render the same partials from the same answer, so that a row pushed over
the websocket has exactly the cells of a row in a page load. Viewers of one kind see the same
markup: live updates are rendered once per kind, never per socket.
"""

from __future__ import annotations

from typing import Literal

from dashboard.access import allows, is_read_only, write_check
from dashboard.principal import Principal

# operator: may act; reader: signed in without the permission to act; anonymous: not signed in.
ViewerKind = Literal["operator", "reader", "anonymous"]
VIEWER_KINDS: tuple[ViewerKind, ...] = ("operator", "reader", "anonymous")


async def viewer_kind(principal: Principal) -> ViewerKind:
    if not principal.authenticated:
        return "anonymous"
    return "operator" if await allows(write_check(), principal) else "reader"


def can_act_on(kind: ViewerKind, queue_slug: str) -> bool:
    """An operator may act on this queue unless it (or the whole dashboard) is read-only."""
    return kind == "operator" and not is_read_only(queue_slug)

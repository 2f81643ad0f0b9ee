"""What a viewer may do on a page: act (buttons, checkboxes) or only read, and why.

Pages and live updates render the same partials from the same answer, so that a row pushed over
the websocket has exactly the cells of a row in a page load. Viewers of one kind see the same
markup: live updates are rendered once per kind, never per socket.
"""

from __future__ import annotations

from typing import Literal

from django.core import signing
from django.http import HttpRequest

from dashboard.auth.access import allows, is_read_only, write_check
from dashboard.auth.principal import Principal, from_request
from dashboard.auth.queue_access import for_request

# operator: may act; reader: signed in without the permission to act; anonymous: not signed in.
ViewerKind = Literal["operator", "reader", "anonymous"]
VIEWER_KINDS: tuple[ViewerKind, ...] = ("operator", "reader", "anonymous")


async def viewer_kind(principal: Principal) -> ViewerKind:
    if not principal.authenticated:
        return "anonymous"
    return "operator" if await allows(write_check(), principal) else "reader"


async def kind_on_queue(request: HttpRequest, queue_slug: str) -> ViewerKind:
    """The viewer's kind on one queue's pages: an operator who may only view this queue
    (QUEUE_ACCESS) sees it as a reader does."""
    kind = await viewer_kind(await from_request(request))
    if kind == "operator" and not (await for_request(request)).may_operate(queue_slug):
        return "reader"
    return kind


def can_act_on(kind: ViewerKind, queue_slug: str) -> bool:
    """An operator may act on this queue unless it (or the whole dashboard) is read-only."""
    return kind == "operator" and not is_read_only(queue_slug)


# A page tells its websocket which kind of viewer it was rendered for: browsers do not always
# send basic credentials with the websocket handshake, and the live parts must match the page.
# The value is signed, so it cannot be raised; it only chooses markup, never what may be done
# (every action checks its caller again).
_SALT = "bullpen.viewer-kind"
_MAX_AGE = 7 * 24 * 3600


def sign_kind(kind: ViewerKind) -> str:
    return signing.dumps(kind, salt=_SALT, compress=False)


def verified_kind(token: object) -> ViewerKind | None:
    if not isinstance(token, str) or len(token) > 200:
        return None
    try:
        kind = signing.loads(token, salt=_SALT, max_age=_MAX_AGE)
    except signing.BadSignature:
        return None
    return kind if kind in VIEWER_KINDS else None

"""A page's pass for its own websocket when its reader signed in with basic credentials.

Browsers do not always send basic credentials with a websocket handshake (Chromium does not),
so where reads need them the live updates would be refused. The page that was served to a
basic-auth user carries a signed ticket naming that user in its websocket URL; the socket is
then let in as that user for as long as the ticket is fresh and the user is still configured
with the password it had: the ticket carries a mark of that password (``basic_auth.
credential_mark``), so changing it voids every ticket issued before. Session users need none:
their cookie goes with the handshake, and Django's session hash does the same for them.
"""

from __future__ import annotations

from django.core import signing
from django.utils.crypto import constant_time_compare

from dashboard.auth import basic_auth
from dashboard.auth.identity import Principal

_SALT = "bullpen.websocket-ticket"
MAX_AGE = 24 * 3600  # a page open longer reconnects once reloaded
_LONGEST = 500  # characters of a ticket worth checking


def issue(principal: Principal) -> str:
    """A ticket for ``principal``'s pages, or "" when its socket needs none."""
    if principal.via != "basic":
        return ""
    mark = basic_auth.credential_mark(principal.username)
    if mark is None:
        return ""
    return signing.dumps([principal.username, mark], salt=_SALT, compress=False)


def redeem(ticket: str, *, fresh: bool = True) -> Principal | None:
    """The basic-auth user a fresh (``fresh``: issued within ``MAX_AGE``), genuine ticket
    names, while that user is configured with the password it had when the ticket was
    issued."""
    if not ticket or len(ticket) > _LONGEST:
        return None
    try:
        named = signing.loads(ticket, salt=_SALT, max_age=MAX_AGE if fresh else None)
    except signing.BadSignature:
        return None
    if not (isinstance(named, list) and len(named) == 2 and all(isinstance(n, str) for n in named)):
        return None  # not a ticket of this shape (one issued before tickets carried a mark)
    username, mark = named
    current = basic_auth.credential_mark(username)
    if current is None or not constant_time_compare(mark, current):
        return None
    return Principal(username, "basic")

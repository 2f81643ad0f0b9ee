"""A page's pass for its own websocket when its reader signed in with basic credentials.

Browsers do not always send basic credentials with a websocket handshake (Chromium does not),
so where reads need them the live updates would be refused. The page that was served to a
basic-auth user carries a signed ticket naming that user in its websocket URL; the socket is
then let in as that user for as long as the ticket is fresh and the user is still configured.
Session users need none: their cookie goes with the handshake.
"""

from __future__ import annotations

from django.core import signing

from dashboard.principal import Principal, basic_user_configured

_SALT = "bullpen.websocket-ticket"
MAX_AGE = 24 * 3600  # a page open longer reconnects once reloaded
_LONGEST = 500  # characters of a ticket worth checking


def issue(principal: Principal) -> str:
    """A ticket for ``principal``'s pages, or "" when its socket needs none."""
    if principal.via != "basic":
        return ""
    return signing.dumps(principal.username, salt=_SALT, compress=False)


def redeem(ticket: str) -> Principal | None:
    """The basic-auth user a fresh, genuine ticket names, while that user is configured."""
    if not ticket or len(ticket) > _LONGEST:
        return None
    try:
        username = signing.loads(ticket, salt=_SALT, max_age=MAX_AGE)
    except signing.BadSignature:
        return None
    if not isinstance(username, str) or not basic_user_configured(username):
        return None
    return Principal(username, "basic")

"""A live websocket's user, checked again while the socket is open.

A socket is let in once, at its handshake; without more, it would stream job data for as long
as the tab stays open, after its user signed out or was deactivated. So a session's sign-out
closes its sockets at once (every process's, through the channel layer), and each socket checks
its user again every ``LIVE["auth_recheck_interval"]`` seconds (principal.refreshed). A socket
whose user may no longer read is closed with ``SIGNED_OUT`` and its page says to sign in.
"""

from __future__ import annotations

import hashlib
import logging
from typing import Any

from channels.layers import get_channel_layer
from django.contrib.auth.signals import user_logged_out
from django.dispatch import receiver

from dashboard.auth.access import allows, read_check
from dashboard.auth.principal import Principal, refreshed

log = logging.getLogger("bullpen.live")

# The close code of a socket whose user may no longer read (an application code, as 4000-4999
# are: the page does not reconnect, it asks for a sign-in).
SIGNED_OUT = 4403
SIGNED_OUT_TEXT = "signed out: sign in again for live updates"
# The channel-layer message that closes the sockets of a session (handled by the consumer's
# ``bullpen_signed_out``).
SIGNED_OUT_MESSAGE = {"type": "bullpen.signed_out"}


def session_group(session_key: str) -> str:
    """The channel-layer group of one session's sockets (group names allow few characters, and
    the session key is a secret: it is hashed)."""
    return "bullpen.session." + hashlib.sha256(session_key.encode()).hexdigest()[:40]


async def may_still_read(principal: Principal, scope: dict[str, Any]) -> bool:
    """Whether the socket's user may still read: still signed in (if it was) and allowed."""
    now = await refreshed(principal, scope)
    if principal.authenticated and not now.authenticated:
        return False
    return await allows(read_check(), now)


@receiver(user_logged_out)
async def close_signed_out_sockets(sender: Any, request: Any = None, **kwargs: Any) -> None:
    """The signed-out session's sockets close now, in every server process."""
    session = getattr(request, "session", None)
    key = getattr(session, "session_key", None)
    layer = get_channel_layer()
    if not key or layer is None:
        return
    try:
        await layer.group_send(session_group(key), SIGNED_OUT_MESSAGE)
    except Exception:  # the layer is away: the sign-out stands, the re-check closes them
        log.warning("live updates: could not close a signed-out session's sockets", exc_info=True)

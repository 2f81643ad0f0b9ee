"""Live messages framed once and written to every socket as the same bytes.

A message goes to every page of a kind and language as the same text (fanout.py). Handed to
each socket through Channels' ``send`` and daphne, it was framed again for every socket, the
larger part of a send's cost with hundreds of pages open. Under daphne, a socket's ASGI
``send`` is the server's ``handle_reply`` bound to the socket's own Autobahn protocol: the hub
frames the text once (Autobahn's ``PreparedMessage``) and writes those bytes to the transport
of each protocol that is open. Any other server (or a test's communicator) goes through
``send`` as before.
"""

from __future__ import annotations

import functools
from collections.abc import Callable
from typing import Any

# (group, framed message) → whether it was written (False: the socket is not open; send it
# the usual way, which notices a closed socket).
FrameWriter = Callable[[str, Any], bool]
# What a writer of framed messages uses of daphne's Autobahn protocol.
_PROTOCOL_PARTS = ("sendPreparedMessage", "send_queue", "transport", "state", "STATE_OPEN")


def frame(text: str) -> Any:
    """``text`` framed as a server's websocket text message, once for every socket."""
    from autobahn.websocket.protocol import PreparedMessage

    # A server's frames are not masked; daphne negotiates no compression.
    return PreparedMessage(text.encode("utf-8"), False, False, True)


def protocol_beneath(send: Any) -> Any:
    """Daphne's protocol of the socket whose ASGI ``send`` this is, or None under any other
    server."""
    if not isinstance(send, functools.partial) or not send.args:
        return None
    protocol = send.args[0]
    owner = getattr(send.func, "__self__", None)
    if type(owner).__module__ != "daphne.server":
        return None
    if not all(hasattr(protocol, name) for name in _PROTOCOL_PARTS):
        return None  # an Autobahn without what writes_frames uses: Channels' send it is
    return protocol


def writes_frames(protocol: Any, count: Callable[[str], None]) -> FrameWriter:
    """A writer of framed messages to ``protocol`` while it is open; ``count`` is told of each
    message written (the page's tally of what reached it)."""

    def write(group: str, framed: Any) -> bool:
        if protocol.state != protocol.STATE_OPEN:
            return False
        count(group)
        if protocol.send_queue or getattr(protocol, "_perMessageCompress", None) is not None:
            protocol.sendPreparedMessage(framed)  # queued writes first, or a compressed socket
        else:
            # Straight to the socket's transport: Autobahn's own path (sendData) formats the
            # arguments of its debug line on every call, logging on or off, which cost more
            # than the write itself with hundreds of sockets.
            protocol.transport.write(framed.payloadHybi)
        return True

    return write

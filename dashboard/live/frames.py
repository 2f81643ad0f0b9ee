"""Live messages framed once and written to every socket as the same bytes.

A message goes to every page of a kind and language as the same text (fanout.py). Handed to
each socket through Channels' ``send`` and daphne, it was framed again for every socket, the
larger part of a send's cost with hundreds of pages open. Under daphne, a socket's ASGI
``send`` is the server's ``handle_reply`` bound to the socket's own Autobahn protocol: the hub
frames the text once (Autobahn's ``PreparedMessage``) and writes those bytes to the socket of
each protocol that is open, at once where nothing waits before them (:func:`send_now`). Any
other server (or a test's communicator) goes through ``send`` as before.
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
# What send_now uses of a Twisted TCP transport.
_TCP_PARTS = (
    "socket",
    "connected",
    "disconnecting",
    "_writeDisconnected",
    "dataBuffer",
    "_tempDataBuffer",
    "write",
)


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
    transport = protocol.transport
    plain_tcp = type(transport).__module__ == "twisted.internet.tcp" and all(
        hasattr(transport, name) for name in _TCP_PARTS
    )

    def write(group: str, framed: Any) -> bool:
        if protocol.state != protocol.STATE_OPEN:
            return False
        count(group)
        if protocol.send_queue or getattr(protocol, "_perMessageCompress", None) is not None:
            protocol.sendPreparedMessage(framed)  # queued writes first, or a compressed socket
        elif plain_tcp:
            send_now(transport, framed.payloadHybi)
        else:
            # Past Autobahn's sendData, which formats the arguments of its debug line on every
            # call, logging on or off.
            transport.write(framed.payloadHybi)
        return True

    return write


def send_now(transport: Any, data: bytes) -> None:
    """``data`` to a Twisted TCP transport's socket at once when nothing waits before it.

    Twisted's ``write`` buffers and has the reactor watch the socket until the next turn of
    the loop, then sends and stops watching: with hundreds of sockets that took most of a
    message's fan-out (55 to 83 µs a socket against 6 to 12 µs for sending at once, 2 cores at load
    2.5: bench/live/socket_write_bench.py). What the socket does not take now goes through
    ``write``, in order.
    """
    sent = 0
    if (
        transport.connected
        and not transport.disconnecting
        and not transport._writeDisconnected
        and not transport.dataBuffer
        and not transport._tempDataBuffer
    ):
        try:
            sent = transport.socket.send(data)
        except OSError:  # full, or the peer went: the transport's own write deals with it
            sent = 0
    if sent < len(data):
        transport.write(data[sent:])

"""A framed message sent at once to a Twisted socket: what the socket does not take now
follows through Twisted's own write, in order, whole."""

from __future__ import annotations

import json
import subprocess
import sys

from tests.support.paths import ROOT

# Runs in a process of its own: a Twisted reactor is installed once per process.
SCRIPT = r"""
import asyncio, json, socket
from twisted.internet import asyncioreactor
loop = asyncio.new_event_loop()
asyncio.set_event_loop(loop)
asyncioreactor.install(loop)
from twisted.internet import protocol, reactor
from dashboard.live.frames import send_now

accepted = []
class Kept(protocol.Protocol):
    def connectionMade(self):
        accepted.append(self)

port = reactor.listenTCP(0, protocol.Factory.forProtocol(Kept), interface="127.0.0.1")

async def main():
    client = socket.socket()
    client.setsockopt(socket.SOL_SOCKET, socket.SO_RCVBUF, 4096)
    client.setblocking(False)
    await loop.sock_connect(client, ("127.0.0.1", port.getHost().port))
    while not accepted:
        await asyncio.sleep(0.01)
    transport = accepted[0].transport
    transport.socket.setsockopt(socket.SOL_SOCKET, socket.SO_SNDBUF, 4096)
    # Distinct messages of 50 kB, far more than both buffers hold: the client reads nothing
    # until every one was handed over.
    messages = [bytes([65 + i % 26]) * 50_000 + str(i).encode() for i in range(40)]
    waited = 0
    for message in messages:
        send_now(transport, message)
        waited += bool(transport.dataBuffer or transport._tempDataBuffer)
    got = bytearray()
    want = b"".join(messages)
    while len(got) < len(want):
        got += await asyncio.wait_for(loop.sock_recv(client, 1 << 16), 10)
    print(json.dumps({"whole": bytes(got) == want, "waited": waited, "sent": len(want)}))

loop.run_until_complete(main())
"""


def test_what_the_socket_does_not_take_follows_in_order() -> None:
    done = subprocess.run(
        [sys.executable, "-c", SCRIPT], cwd=ROOT, capture_output=True, text=True, timeout=60
    )
    assert done.returncode == 0, done.stderr
    found = json.loads(done.stdout.strip().splitlines()[-1])
    # Most messages met a full socket and went through Twisted's buffer after the first.
    assert found["waited"] >= 30, found
    assert found["whole"], "the bytes arrived out of order, doubled or short"

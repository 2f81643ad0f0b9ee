#!/usr/bin/env python3
"""What writing one message to many sockets costs under Twisted, as daphne serves them.

Run from the repository root with the project's virtualenv::

    ./.venv/bin/python bench/live/socket_write_bench.py --sockets 500 --rounds 40

A Twisted server (the asyncio reactor, as daphne runs it) accepts ``--sockets`` loopback
connections; each round writes one ``--size``-byte message to every one, then lets the loop
run until nothing is left to send, and the client sockets are drained between rounds. Two
ways, alternated: Twisted's ``transport.write`` (it buffers, has the reactor watch the socket,
sends on the loop's next turn and stops watching) and ``dashboard/live/frames.send_now``
(the socket's ``send`` at once when nothing waits before it). Prints µs a socket: the write
calls alone, and until every byte is handed to the kernel.
"""

from __future__ import annotations

import argparse
import asyncio
import os
import socket
import sys
import time
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parents[2]))


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--sockets", type=int, default=500)
    ap.add_argument("--rounds", type=int, default=40)
    ap.add_argument("--size", type=int, default=500, help="bytes a message (default 500)")
    ap.add_argument("--passes", type=int, default=3, help="passes of each way, alternated")
    args = ap.parse_args()

    from twisted.internet import asyncioreactor

    loop = asyncio.new_event_loop()
    asyncio.set_event_loop(loop)
    asyncioreactor.install(loop)
    from twisted.internet import protocol, reactor

    from dashboard.live.frames import send_now

    accepted: list[Any] = []

    class Kept(protocol.Protocol):
        def connectionMade(self) -> None:
            accepted.append(self)

    listening = reactor.listenTCP(  # type: ignore[attr-defined]
        0, protocol.Factory.forProtocol(Kept), interface="127.0.0.1"
    )
    clients: list[socket.socket] = []

    async def run() -> None:
        for _ in range(args.sockets):
            client = socket.socket()
            client.setblocking(False)
            await loop.sock_connect(client, ("127.0.0.1", listening.getHost().port))
            clients.append(client)
        while len(accepted) < args.sockets:  # noqa: ASYNC110 - Twisted's callbacks set no Event
            await asyncio.sleep(0.01)
        data = b"x" * args.size
        print(f"{args.sockets} sockets, {args.size}-byte messages, {args.rounds} rounds a pass")
        print(f"load average {os.getloadavg()[0]:.2f} at the start")
        for _ in range(args.passes):
            for way in ("twisted write", "send_now"):
                calls = flushed = 0.0
                for _ in range(args.rounds):
                    t0 = time.perf_counter()
                    for kept in accepted:
                        if way == "send_now":
                            send_now(kept.transport, data)
                        else:
                            kept.transport.write(data)
                    t1 = time.perf_counter()
                    # One turn of the loop at a time until the reactor watches no socket.
                    while reactor._writers:  # type: ignore[attr-defined]  # noqa: ASYNC110
                        await asyncio.sleep(0)
                    t2 = time.perf_counter()
                    calls += t1 - t0
                    flushed += t2 - t0
                    for client in clients:
                        try:
                            while client.recv(1 << 16):
                                pass
                        except BlockingIOError:
                            pass
                per = args.rounds * args.sockets
                print(
                    f"{way:>14}: calls {calls / per * 1e6:6.1f} µs a socket, "
                    f"until sent {flushed / per * 1e6:6.1f} µs a socket"
                )
        print(f"load average {os.getloadavg()[0]:.2f} at the end")
        for client in clients:
            client.close()

    loop.run_until_complete(run())


if __name__ == "__main__":
    main()
